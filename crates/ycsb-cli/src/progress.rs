//! A one-line progress bar on standard error, redrawn from the status
//! thread (never from the operation loop).

use std::io::Write;
use std::time::Duration;

/// Width of the bar itself, in characters.
const BAR: usize = 30;

/// The figures one redraw shows.
pub(crate) struct ProgressState {
    pub phase: &'static str,
    pub elapsed: Duration,
    pub operations: u64,
    /// 0 when the phase has no operation count.
    pub total: u64,
    /// Operations per second over the latest interval.
    pub throughput: f64,
    /// The phase's time limit, if any.
    pub time_limit: Option<Duration>,
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// The text of the bar, without the leading carriage return.
pub(crate) fn render(p: &ProgressState) -> String {
    // The fraction done by operations, or by time under a time limit,
    // whichever is further along (the phase ends at the first).
    let by_ops = (p.total > 0).then(|| p.operations as f64 / p.total as f64);
    let by_time = p
        .time_limit
        .filter(|l| !l.is_zero())
        .map(|l| p.elapsed.as_secs_f64() / l.as_secs_f64());
    let fraction = match (by_ops, by_time) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
    .map(|f| f.clamp(0.0, 1.0));
    let eta = match (by_ops, by_time) {
        (_, Some(_)) if by_time >= by_ops => p.time_limit.map(|l| l.saturating_sub(p.elapsed)),
        (Some(_), _) if p.throughput > 0.0 => Some(Duration::from_secs_f64(
            p.total.saturating_sub(p.operations) as f64 / p.throughput,
        )),
        _ => None,
    };
    let bar = match fraction {
        Some(f) => {
            let filled = (f * BAR as f64).round() as usize;
            format!(
                "[{}{}] {:>3}%",
                "#".repeat(filled),
                "-".repeat(BAR - filled),
                (f * 100.0).floor() as u32
            )
        }
        None => String::from("[running]"),
    };
    let count = if p.total > 0 {
        format!("{}/{} ops", p.operations, p.total)
    } else {
        format!("{} ops", p.operations)
    };
    let eta = eta.map_or_else(|| "ETA --:--".to_string(), |d| format!("ETA {}", clock(d)));
    format!(
        "{} {bar} {count} {:.0} ops/s elapsed {} {eta}",
        p.phase,
        p.throughput,
        clock(p.elapsed)
    )
}

/// The bar: draws over the same line of standard error.
pub(crate) struct ProgressBar {
    drawn: bool,
}

impl ProgressBar {
    pub(crate) fn new() -> Self {
        Self { drawn: false }
    }

    pub(crate) fn draw(&mut self, state: &ProgressState) {
        let mut err = std::io::stderr().lock();
        // \x1b[2K clears the line, so a shorter text leaves no remains.
        let _ = write!(err, "\r\x1b[2K{}", render(state));
        let _ = err.flush();
        self.drawn = true;
    }

    /// Removes the bar, so the next output starts on a clean line.
    pub(crate) fn clear(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

impl Drop for ProgressBar {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_with_an_operation_count() {
        let text = render(&ProgressState {
            phase: "run",
            elapsed: Duration::from_secs(10),
            operations: 250,
            total: 1000,
            throughput: 25.0,
            time_limit: None,
        });
        assert!(
            text.starts_with("run [########----------------------]  25%"),
            "{text}"
        );
        assert!(text.contains("250/1000 ops 25 ops/s"), "{text}");
        assert!(text.ends_with("elapsed 0:10 ETA 0:30"), "{text}");
    }

    #[test]
    fn bar_with_a_time_limit_and_no_count() {
        let text = render(&ProgressState {
            phase: "run",
            elapsed: Duration::from_secs(30),
            operations: 5,
            total: 0,
            throughput: 0.0,
            time_limit: Some(Duration::from_secs(3600 + 30)),
        });
        assert!(text.contains("5 ops 0 ops/s"), "{text}");
        assert!(text.ends_with("ETA 1:00:00"), "{text}");
        let text = render(&ProgressState {
            phase: "load",
            elapsed: Duration::from_secs(1),
            operations: 5,
            total: 0,
            throughput: 5.0,
            time_limit: None,
        });
        assert!(
            text.contains("[running]") && text.ends_with("ETA --:--"),
            "{text}"
        );
    }
}
