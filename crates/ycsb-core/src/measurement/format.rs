//! Java's number formats and the status line.

use std::fmt::Write as _;
use std::time::Duration;

use chrono::NaiveDateTime;

use super::IntervalSnapshot;

/// A double as Java's report prints it, without exponent: the shortest
/// decimal that reads back to the same value, with at least one fractional
/// digit (`1000.0`, `47865.21156423511`, `NaN`, `Infinity`).
///
/// Java's `Double.toString` writes `1.0E7` from 10^7 up and `1.0E-4`
/// below 10^-3; we write plain decimals there (`10000000.0`), which every
/// parser reads.
pub fn java_double(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let mut text = value.to_string();
    if !text.contains('.') {
        text.push_str(".0");
    }
    text
}

/// A number as Java's `new DecimalFormat("#.##")` prints it: at most two
/// fractional digits, rounded half-even on the exact binary value, no
/// trailing zeros (`0.5` gives `0.5`, `0.59` gives `0.59`, `0` gives `0`).
///
/// DecimalFormat reads a pattern of `#` only before the point as one
/// integer digit at least, so a number below 1 keeps its `0`; only a
/// pattern with a `0` after the point (`#.00`) prints `.5`.
pub fn java_decimal(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "∞" } else { "-∞" }.to_string();
    }
    // Rust's fixed-precision formatting rounds the exact binary value,
    // ties to even, as DecimalFormat's default HALF_EVEN does.
    let fixed = format!("{value:.2}");
    fixed
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_string()
}

/// A percentile as Java names it in `<ordinal>PercentileLatency(us)`:
/// an ordinal for whole numbers (`50th`, `1st`, `22nd`, `13th`) and the
/// number itself otherwise (`99.9`, giving `99.9PercentileLatency(us)`).
pub fn java_ordinal(percentile: f64) -> String {
    if percentile.fract() == 0.0 && percentile.abs() < 1e15 {
        let n = percentile as i64;
        let suffix = match (n % 100, n % 10) {
            (11..=13, _) => "th",
            (_, 1) => "st",
            (_, 2) => "nd",
            (_, 3) => "rd",
            _ => "th",
        };
        format!("{n}{suffix}")
    } else {
        java_double(percentile)
    }
}

/// Java's RemainingFormatter: `2 days 3 hours `, `1 hour 5 minutes `,
/// `1 minute `, `42 seconds `, `3 second ` (with its trailing space).
///
/// As Java, minutes are left out from a day up and seconds are shown only
/// under a minute. The unit of seconds is Java's too: it tests the length
/// of the text written so far (`time.length() == 1`), so one digit reads
/// `second` (`0 second`, `3 second`) and two read `seconds`.
pub fn remaining_text(seconds: u64) -> String {
    let mut text = String::new();
    let days = seconds / 86_400;
    let mut rest = seconds % 86_400;
    if days > 0 {
        let _ = write!(text, "{days} {} ", if days == 1 { "day" } else { "days" });
    }
    let hours = rest / 3_600;
    rest %= 3_600;
    if hours > 0 {
        let _ = write!(
            text,
            "{hours} {} ",
            if hours == 1 { "hour" } else { "hours" }
        );
    }
    if days == 0 {
        let minutes = rest / 60;
        if minutes > 0 {
            let _ = write!(
                text,
                "{minutes} {} ",
                if minutes == 1 { "minute" } else { "minutes" }
            );
        }
    }
    if text.is_empty() {
        let unit = if seconds < 10 { "second" } else { "seconds" };
        let _ = write!(text, "{seconds} {unit} ");
    }
    text
}

/// What a status line says besides the interval's latency figures.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusLine<'a> {
    /// Java's `-l` label, printed right before the time stamp.
    pub label: &'a str,
    /// The local wall-clock time of the line.
    pub now: NaiveDateTime,
    /// Time since the phase started.
    pub elapsed: Duration,
    /// Operations completed since the phase started.
    pub total_operations: u64,
    /// Operations completed in this interval.
    pub interval_operations: u64,
    /// The length of this interval.
    pub interval: Duration,
    /// Operations still to do (0 when unknown or unlimited: no estimate).
    pub remaining_operations: u64,
}

/// Java's status line, without the trailing space Java leaves:
///
/// `2021-04-24 11:57:04:722 10 sec: 297225 operations; 29719.53 current
/// ops/sec; est completion in 1 minute [INSERT: Count=297276, Max=75647,
/// Min=85, Avg=244.15, 50=201, 90=310, 99=508, 99.9=1792, 99.99=18335]`
///
/// (Java master's `OneMeasurementHdrHistogram`, which added `50=` in 2025.)
///
/// The interval throughput is left out while no operation has completed
/// (as Java), and so is the completion estimate (Java then prints an
/// absurd one); the estimate divides the remaining operations by the
/// throughput since the start, as Java.
pub fn format_status_line(line: &StatusLine<'_>, snapshot: &IntervalSnapshot) -> String {
    let mut text = String::with_capacity(256);
    let _ = write!(
        text,
        "{}{} {} sec: {} operations; ",
        line.label,
        line.now.format("%Y-%m-%d %H:%M:%S:%3f"),
        line.elapsed.as_secs(),
        line.total_operations
    );
    if line.total_operations != 0 {
        let interval = line.interval.as_secs_f64();
        let current = if interval > 0.0 {
            line.interval_operations as f64 / interval
        } else {
            0.0
        };
        let _ = write!(text, "{} current ops/sec; ", java_decimal(current));
        let elapsed = line.elapsed.as_secs_f64();
        if line.remaining_operations != 0 && elapsed > 0.0 {
            let throughput = line.total_operations as f64 / elapsed;
            // `as` saturates, as Java's (long) cast of a huge double does.
            let seconds = (line.remaining_operations as f64 / throughput).ceil() as u64;
            let _ = write!(text, "est completion in {}", remaining_text(seconds));
        }
    }
    for s in &snapshot.sections {
        let _ = write!(
            text,
            "[{}: Count={}, Max={}, Min={}, Avg={}, 50={}, 90={}, 99={}, 99.9={}, 99.99={}] ",
            s.name,
            s.count,
            s.max_us,
            s.min_us,
            java_decimal(s.mean_us),
            s.p50_us,
            s.p90_us,
            s.p99_us,
            s.p999_us,
            s.p9999_us
        );
    }
    let end = text.trim_end().len();
    text.truncate(end);
    text
}
