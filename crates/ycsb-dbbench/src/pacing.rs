//! How long a benchmark thread runs and how fast it may write: db_bench's
//! `Duration` (an operation count, or `--duration` seconds checked every
//! 1000 operations) and its `GenericRateLimiter` (bytes per second,
//! refilled every 100 ms).

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Operations between clock checks of `--duration`: db_bench's
/// `--ops_between_duration_checks` default.
pub(crate) const OPS_BETWEEN_DURATION_CHECKS: u64 = 1000;

/// db_bench's `Duration`: done after `max_ops` operations, or, when a time
/// is given, once the whole seconds since the start reach it (the count is
/// then ignored); the clock is read only when the count crosses a multiple
/// of [`OPS_BETWEEN_DURATION_CHECKS`].
#[derive(Debug)]
pub(crate) struct Budget {
    max_ops: u64,
    max_seconds: Option<u64>,
    ops: u64,
    start: Instant,
}

impl Budget {
    pub(crate) fn new(max_ops: u64, max_time: Option<Duration>) -> Self {
        Self {
            max_ops,
            max_seconds: max_time.map(|d| d.as_secs()).filter(|s| *s > 0),
            ops: 0,
            start: Instant::now(),
        }
    }

    /// Counts `increment` more operations (at least one) about to run and
    /// says whether the benchmark is over instead (db_bench's `Done`,
    /// called before each operation or batch: with a count, a batch that
    /// would pass it does not run).
    pub(crate) fn done(&mut self, increment: u64) -> bool {
        let increment = increment.max(1);
        let before = self.ops;
        self.ops += increment;
        match self.max_seconds {
            Some(limit) => {
                before / OPS_BETWEEN_DURATION_CHECKS != self.ops / OPS_BETWEEN_DURATION_CHECKS
                    && self.start.elapsed().as_secs() >= limit
            }
            None => self.ops > self.max_ops,
        }
    }
}

/// The refill period of db_bench's rate limiters.
const REFILL_PERIOD: Duration = Duration::from_millis(100);

#[derive(Debug)]
struct Bucket {
    bytes_per_period: u64,
    available: u64,
    next_refill: Instant,
}

/// RocksDB's `GenericRateLimiter` as db_bench makes it
/// (`NewGenericRateLimiter(rate)`): every 100 ms the bucket is set to a
/// tenth of the rate (what was left is not carried over); a request takes
/// what is there and waits for the next refills for the rest, so that a
/// request larger than one refill is granted over several periods. Shared
/// by the threads of a benchmark.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    bucket: Mutex<Bucket>,
    refilled: Condvar,
}

impl RateLimiter {
    /// A limiter of `bytes_per_sec` (at least 1).
    pub(crate) fn new(bytes_per_sec: u64) -> Self {
        let per_period = Self::per_period(bytes_per_sec);
        Self {
            bucket: Mutex::new(Bucket {
                bytes_per_period: per_period,
                available: per_period,
                next_refill: Instant::now() + REFILL_PERIOD,
            }),
            refilled: Condvar::new(),
        }
    }

    fn per_period(bytes_per_sec: u64) -> u64 {
        (bytes_per_sec.max(1) as u128 * REFILL_PERIOD.as_micros() / 1_000_000).max(1) as u64
    }

    /// Changes the rate (db_bench's `SetBytesPerSecond`), from the next
    /// refill on.
    pub(crate) fn set_bytes_per_second(&self, bytes_per_sec: u64) {
        let mut b = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        b.bytes_per_period = Self::per_period(bytes_per_sec);
    }

    /// Waits until `bytes` have been granted.
    pub(crate) fn request(&self, bytes: u64) {
        let mut left = bytes;
        let mut b = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            if now >= b.next_refill {
                b.available = b.bytes_per_period;
                b.next_refill = now + REFILL_PERIOD;
                self.refilled.notify_all();
            }
            let granted = left.min(b.available);
            b.available -= granted;
            left -= granted;
            if left == 0 {
                return;
            }
            let wait = b.next_refill.saturating_duration_since(now);
            b = self
                .refilled
                .wait_timeout(b, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_budget_runs_exactly_the_count_of_whole_batches() {
        let mut b = Budget::new(3, None);
        assert!(!b.done(1) && !b.done(1) && !b.done(1));
        assert!(b.done(1));
        // Batches of 1000 against 2500: two run, the third would pass it.
        let mut b = Budget::new(2500, None);
        assert!(!b.done(1000) && !b.done(1000));
        assert!(b.done(1000));
    }

    #[test]
    fn a_time_budget_ignores_the_count_and_checks_every_thousand() {
        let mut b = Budget::new(1, Some(Duration::from_secs(1)));
        b.start -= Duration::from_secs(2);
        // Past the count, and past the time, but the clock is only read
        // when the count crosses a multiple of 1000.
        for _ in 0..998 {
            assert!(!b.done(1));
        }
        assert!(!b.done(1), "999 ops: no check yet");
        assert!(b.done(1), "1000 ops: checked, over");
        let mut b = Budget::new(1, Some(Duration::from_secs(60)));
        for _ in 0..5000 {
            assert!(!b.done(1));
        }
    }

    #[test]
    fn the_limiter_holds_the_rate() {
        // 20,000 bytes/s: 2,000 per refill. 6,000 bytes beyond the first
        // refill take three more refills, 300 ms; the bound leaves room
        // for a loaded machine above, none below (the limiter never grants
        // early).
        let limiter = RateLimiter::new(20_000);
        let start = Instant::now();
        limiter.request(2_000);
        for _ in 0..6 {
            limiter.request(1_000);
        }
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(290), "{took:?}");
        assert!(took < Duration::from_secs(3), "{took:?}");
        // A rate change applies from the next refill.
        limiter.set_bytes_per_second(1_000_000_000);
        let start = Instant::now();
        limiter.request(1_000_000);
        assert!(start.elapsed() < Duration::from_secs(3));
    }
}
