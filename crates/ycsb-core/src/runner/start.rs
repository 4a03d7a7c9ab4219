//! `start.at`: a wall-clock moment that the first phase waits for, so that
//! clients launched one by one (by a scheduler, over SSH) start their
//! measurements together.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ycsb_db::Property;

/// `start.at`.
pub const START_AT: Property<String> = Property::optional(
    "start.at",
    "Wall-clock time at which the phases may start, as Unix seconds (1767225600 or 1767225600.5) or RFC 3339 (2026-01-01T00:00:00Z, 2026-01-01T01:00:00+01:00): the session holds its first phase until then, so that clients launched one after another start together; a second phase (-load -run) follows the first at once. The wait is not part of any phase (RunTime, maxexecutiontime and the time series begin after it); Ctrl-C ends it. A time already past starts at once with a warning; one more than 24 hours ahead is refused (most likely milliseconds given for seconds). Unset: start at once.",
);

/// How far ahead `start.at` may be: a synchronised start is seconds or
/// minutes away, and a value days ahead is a mistake (milliseconds for
/// seconds) that would otherwise hang the client silently.
pub const MAX_START_DELAY: Duration = Duration::from_secs(24 * 3600);

/// Parses a `start.at` value relative to `now`.
///
/// # Errors
///
/// What was expected, as a phrase, when `raw` is neither Unix seconds nor
/// RFC 3339, or lies more than [`MAX_START_DELAY`] after `now`.
pub fn parse_start_at(raw: &str, now: SystemTime) -> Result<SystemTime, String> {
    let raw = raw.trim();
    let at = if raw.bytes().all(|b| b.is_ascii_digit() || b == b'.') && !raw.is_empty() {
        let seconds: f64 = raw
            .parse()
            .map_err(|_| format!("expected Unix seconds or an RFC 3339 time, not '{raw}'"))?;
        Duration::try_from_secs_f64(seconds)
            .ok()
            .and_then(|d| UNIX_EPOCH.checked_add(d))
            .ok_or_else(|| format!("'{raw}' is not a representable time"))?
    } else {
        let parsed = chrono::DateTime::parse_from_rfc3339(raw).map_err(|e| {
            format!("expected Unix seconds or an RFC 3339 time such as 2026-01-01T12:00:00Z ({e})")
        })?;
        let seconds = u64::try_from(parsed.timestamp())
            .map_err(|_| "expected a time after 1970-01-01T00:00:00Z".to_string())?;
        UNIX_EPOCH + Duration::new(seconds, parsed.timestamp_subsec_nanos())
    };
    if at
        .duration_since(now)
        .is_ok_and(|ahead| ahead > MAX_START_DELAY)
    {
        return Err(format!(
            "more than {} hours from now (Unix seconds are expected, not milliseconds)",
            MAX_START_DELAY.as_secs() / 3600
        ));
    }
    Ok(at)
}

/// What holding for `start.at` found when the first phase was due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartHold {
    /// The session waits `wait` until `at`.
    Waiting {
        /// The start time.
        at: SystemTime,
        /// How long until then.
        wait: Duration,
    },
    /// `at` had passed `late` ago: the phase starts at once.
    Passed {
        /// The start time.
        at: SystemTime,
        /// How long ago it was.
        late: Duration,
    },
}

impl StartHold {
    /// The hold for `at` as seen at `now`.
    pub fn new(at: SystemTime, now: SystemTime) -> Self {
        match at.duration_since(now) {
            Ok(wait) => StartHold::Waiting { at, wait },
            Err(e) => StartHold::Passed {
                at,
                late: e.duration(),
            },
        }
    }
}

/// Sleeps until `at` on the wall clock, in short steps so that `stop`
/// (Ctrl-C) ends the wait promptly and a clock step (NTP) is noticed.
/// Returns whether the time was reached (`false`: stopped).
pub(crate) fn wait_until(at: SystemTime, stop: &super::StopSignal) -> bool {
    const STEP: Duration = Duration::from_millis(50);
    loop {
        if stop.is_stopped() {
            return false;
        }
        match at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(STEP)),
            _ => return true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn unix_seconds_and_rfc3339_name_the_same_moment() {
        let now = at(1_767_225_000);
        let expected = at(1_767_225_600);
        for raw in [
            "1767225600",
            " 1767225600 ",
            "1767225600.0",
            "2026-01-01T00:00:00Z",
            "2026-01-01T01:00:00+01:00",
            "2025-12-31T19:00:00-05:00",
        ] {
            assert_eq!(parse_start_at(raw, now), Ok(expected), "{raw}");
        }
        assert_eq!(
            parse_start_at("1767225600.25", now),
            Ok(expected + Duration::from_millis(250))
        );
        assert_eq!(
            parse_start_at("2026-01-01T00:00:00.5Z", now),
            Ok(expected + Duration::from_millis(500))
        );
    }

    #[test]
    fn malformed_and_far_future_values_are_refused() {
        let now = at(1_767_225_000);
        for raw in [
            "",
            "soon",
            "1.2.3",
            "2026-01-01",
            "2026-01-01 00:00:00",
            "-5",
            "1969-12-31T23:59:59Z",
        ] {
            let e = parse_start_at(raw, now).unwrap_err();
            assert!(!e.is_empty(), "{raw}");
        }
        // Milliseconds given for seconds: far in the future.
        let e = parse_start_at("1767225600000", now).unwrap_err();
        assert!(e.contains("not milliseconds"), "{e}");
        // 24 hours ahead is the limit, inclusive.
        assert!(parse_start_at("1767311400", now).is_ok());
        assert!(parse_start_at("1767311401", now).is_err());
    }

    #[test]
    fn a_past_time_is_accepted_and_reported_late() {
        let now = at(1_767_225_600);
        let past = parse_start_at("1767225590", now).unwrap();
        assert_eq!(
            StartHold::new(past, now),
            StartHold::Passed {
                at: past,
                late: Duration::from_secs(10)
            }
        );
        assert_eq!(
            StartHold::new(at(1_767_225_603), now),
            StartHold::Waiting {
                at: at(1_767_225_603),
                wait: Duration::from_secs(3)
            }
        );
    }

    #[test]
    fn a_stop_ends_the_wait() {
        let stop = super::super::StopSignal::new();
        stop.stop();
        let an_hour = SystemTime::now() + Duration::from_secs(3600);
        assert!(!wait_until(an_hour, &stop));
        assert!(wait_until(
            SystemTime::now(),
            &super::super::StopSignal::new()
        ));
    }
}
