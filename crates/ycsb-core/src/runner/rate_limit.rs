//! YCSB-cpp's rate limit of the run phase: `limit.ops` operations per
//! second over all threads, changed over time by the `<seconds> <ops/s>`
//! lines of `limit.file`, enforced by a token bucket in each client thread.
//!
//! YCSB-cpp (`utils/rate_limit.h`, `RateLimitThread` in `ycsbc.cc`) gives
//! each of the n threads a bucket filled at rate/n tokens a second (its
//! integer division), starting empty; an operation takes a token, and a
//! thread in debt sleeps until it is repaid. A rate of 0 is no limit. A
//! separate thread reads the file and, at each line's second (counted from
//! the transaction phase's start), sets every bucket's rate to the line's
//! rate divided by n. The load phase is never limited.
//!
//! Here the schedule is read and checked before anything runs, and each
//! thread looks up the rate in force itself (no thread, no shared state on
//! the operations' path). Where we differ, on purpose (README): rates are
//! divided exactly (YCSB-cpp's `limit.ops=1000` on 3 threads is 999 ops/s,
//! and below one operation per thread it is no limit at all); a bucket
//! holds one second of the rate in force, at least one token (YCSB-cpp
//! keeps `limit.ops`'s second for every rate of the file, and no token at
//! all with `limit.file` alone, which loses the oversleep of each wait); a
//! line at second 0 sets the rate from the start (YCSB-cpp stops reading
//! the file there); a malformed file is refused before the run (YCSB-cpp's
//! rate thread throws into a future nobody reads, and the run goes on at
//! the rate it had).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ycsb_db::{Properties, Property, PropertyError, MAX_SECONDS};

/// `limit.ops` (YCSB-cpp).
pub const LIMIT_OPS: Property<u64> = Property::new(
    "limit.ops",
    "0",
    "YCSB-cpp's rate limit of the run phase: operations per second over all threads (each thread \
     a token bucket of rate/threadcount tokens a second, holding one second's worth); 0 means no \
     limit. The load phase is not limited, as in YCSB-cpp. Latency is the service time only (no \
     Intended- sections: use target for an open-loop schedule); target cannot be set with it.",
)
.range(0, 1_000_000_000_000);

/// `limit.file` (YCSB-cpp).
pub const LIMIT_FILE: Property<PathBuf> = Property::optional(
    "limit.file",
    "YCSB-cpp's rate schedule of the run phase: a file of `<seconds> <ops/s>` lines (whole \
     numbers, seconds counted from the run phase's start and strictly increasing); from each \
     line's second on, the run is limited to its rate over all threads (0: no limit), as \
     limit.ops is before the first line. Checked before the run: a malformed line is refused \
     with its file:line.",
);

/// Rates above this many operations per second are refused in a file, as
/// `limit.ops`'s range refuses them: beyond any store's reach, and a typo
/// more likely than a wish.
const MAX_RATE: u64 = 1_000_000_000_000;

/// The run phase's rate over all threads and its changes over time.
#[derive(Clone, Debug, PartialEq)]
pub struct RateLimit {
    /// From each step's time (since the run phase's start) on, the rate
    /// over all threads in operations per second, 0 meaning no limit; the
    /// first step is at 0 (`limit.ops`), times strictly increase.
    steps: Vec<RateStep>,
}

/// A rate in force from a moment of the run phase on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateStep {
    /// Time since the run phase started.
    pub at: Duration,
    /// Operations per second over all threads; 0: no limit.
    pub ops_per_second: u64,
}

/// A `limit.file` that cannot be used.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum RateFileError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file as named.
        path: PathBuf,
        /// Why.
        #[source]
        source: ycsb_db::InputError,
    },
    /// A line is not `<seconds> <ops/s>`, or its time does not follow the
    /// line before.
    #[error("{}:{line}: {problem}", path.display())]
    Line {
        /// The file as named.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong with it.
        problem: String,
    },
    /// The file has no line.
    #[error("{}: no `<seconds> <ops/s>` line", path.display())]
    Empty {
        /// The file as named.
        path: PathBuf,
    },
}

impl RateLimit {
    /// The limit `limit.ops` and `limit.file` set; `None` when neither
    /// limits anything (no file and `limit.ops=0`).
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] for a value that does not parse, or naming
    /// `limit.file` with the file's [`RateFileError`] (its `file:line` for a
    /// malformed line).
    pub fn from_properties(props: &Properties) -> Result<Option<Self>, PropertyError> {
        let ops = props.get(&LIMIT_OPS)?;
        let first = RateStep {
            at: Duration::ZERO,
            ops_per_second: ops,
        };
        // YCSB-cpp reads an empty limit.file as none.
        let empty = props
            .raw(LIMIT_FILE.decl())
            .is_some_and(|raw| raw.value.trim().is_empty());
        let path = if empty {
            None
        } else {
            props.get_opt(&LIMIT_FILE)?
        };
        let Some(path) = path else {
            return Ok((ops > 0).then(|| Self { steps: vec![first] }));
        };
        let text = ycsb_db::read_input_to_string(&path, ycsb_db::CONFIG_FILE_LIMIT)
            .map_err(|source| RateFileError::Read {
                path: path.clone(),
                source,
            })
            .map_err(|e| props.invalid(LIMIT_FILE.decl(), e.to_string()))?;
        let changes = parse_rate_file(&path, &text)
            .map_err(|e| props.invalid(LIMIT_FILE.decl(), e.to_string()))?;
        let mut steps = vec![first];
        // A line at second 0 replaces limit.ops from the start.
        if changes.first().is_some_and(|c| c.at.is_zero()) {
            steps.clear();
        }
        steps.extend(changes);
        Ok(Some(Self { steps }))
    }

    /// A limit from its steps, the first at 0, times strictly increasing.
    ///
    /// # Errors
    ///
    /// A message when the steps are empty, do not start at 0 or their
    /// times do not increase.
    pub fn from_steps(steps: Vec<RateStep>) -> Result<Self, String> {
        if steps.first().is_none_or(|s| !s.at.is_zero()) {
            return Err("the first step must be at 0".into());
        }
        if steps.windows(2).any(|w| w[1].at <= w[0].at) {
            return Err("the steps' times must increase".into());
        }
        Ok(Self { steps })
    }

    /// The steps: the rate over all threads from each time on.
    pub fn steps(&self) -> &[RateStep] {
        &self.steps
    }

    /// The rate over all threads in force `elapsed` after the run phase
    /// started (0: no limit).
    pub fn rate_at(&self, elapsed: Duration) -> u64 {
        self.steps
            .iter()
            .take_while(|s| s.at <= elapsed)
            .last()
            .map_or(0, |s| s.ops_per_second)
    }
}

/// Reads the lines of a `limit.file`: `<seconds> <ops/s>`, two whole
/// numbers separated by blanks, seconds strictly increasing (YCSB-cpp
/// refuses a time that is not after the one before, the first included
/// against 0; here a first line may be at 0). Blank lines are skipped.
///
/// # Errors
///
/// [`RateFileError::Line`] naming the first malformed line,
/// [`RateFileError::Empty`] for a file with no line.
pub(crate) fn parse_rate_file(path: &Path, text: &str) -> Result<Vec<RateStep>, RateFileError> {
    let mut steps: Vec<RateStep> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let problem = |problem: String| RateFileError::Line {
            path: path.to_path_buf(),
            line: index + 1,
            problem,
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        let [seconds, rate] = words[..] else {
            if words.is_empty() {
                continue;
            }
            return Err(problem(format!(
                "expected `<seconds> <ops/s>` (two whole numbers), found '{}'",
                line.trim()
            )));
        };
        let seconds: u64 = seconds.parse().map_err(|_| {
            problem(format!(
                "'{seconds}' is not a whole number of seconds since the run phase's start"
            ))
        })?;
        if seconds > MAX_SECONDS {
            return Err(problem(format!(
                "{seconds} seconds: expected at most {MAX_SECONDS}"
            )));
        }
        let ops_per_second: u64 = rate.parse().map_err(|_| {
            problem(format!(
                "'{rate}' is not a whole number of operations per second (0: no limit)"
            ))
        })?;
        if ops_per_second > MAX_RATE {
            return Err(problem(format!(
                "{ops_per_second} operations per second: expected at most {MAX_RATE}"
            )));
        }
        let at = Duration::from_secs(seconds);
        if let Some(before) = steps.last() {
            if at <= before.at {
                return Err(problem(format!(
                    "second {seconds} does not come after second {} of the line before",
                    before.at.as_secs()
                )));
            }
        }
        steps.push(RateStep { at, ops_per_second });
    }
    if steps.is_empty() {
        return Err(RateFileError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(steps)
}

/// One client thread's token bucket: filled at its share of the rate in
/// force, holding one second's worth (at least one token); each operation
/// takes a token, and a thread in debt waits until it is repaid.
#[derive(Debug)]
pub(crate) struct TokenBucket<'a> {
    steps: &'a [RateStep],
    /// The next step to apply.
    next: usize,
    threads: f64,
    /// This thread's tokens a second; 0: no limit.
    rate: f64,
    tokens: f64,
    /// Until when the tokens are counted.
    filled_to: Instant,
    start: Instant,
}

impl<'a> TokenBucket<'a> {
    /// An empty bucket for one of `threads` threads of a run phase that
    /// started at `start`.
    pub(crate) fn new(limit: &'a RateLimit, threads: usize, start: Instant) -> Self {
        Self {
            steps: &limit.steps,
            next: 0,
            threads: threads.max(1) as f64,
            rate: 0.0,
            tokens: 0.0,
            filled_to: start,
            start,
        }
    }

    /// Counts the tokens up to `now`, switching rates at the steps passed.
    fn fill(&mut self, now: Instant) {
        while let Some(step) = self.steps.get(self.next) {
            let at = self.start + step.at;
            if at > now {
                break;
            }
            self.fill_at_current_rate(at);
            self.rate = step.ops_per_second as f64 / self.threads;
            if self.rate > 0.0 {
                self.tokens = self.tokens.min(self.capacity());
            } else {
                // No limit: a debt is forgotten, not paid after the
                // limit comes back.
                self.tokens = self.tokens.max(0.0);
            }
            self.next += 1;
        }
        self.fill_at_current_rate(now);
    }

    fn fill_at_current_rate(&mut self, until: Instant) {
        if until <= self.filled_to {
            return;
        }
        if self.rate > 0.0 {
            let seconds = (until - self.filled_to).as_secs_f64();
            self.tokens = (self.tokens + seconds * self.rate).min(self.capacity());
        }
        self.filled_to = until;
    }

    fn capacity(&self) -> f64 {
        self.rate.max(1.0)
    }

    /// Takes one operation's token at `now`; returns how long the thread
    /// must wait before the operation (zero when it may go at once).
    /// Calling it again at `now` plus that wait (or any later time) with
    /// [`Self::repaid`] tells whether the debt is paid.
    pub(crate) fn take(&mut self, now: Instant) -> Duration {
        self.fill(now);
        if self.rate <= 0.0 {
            return Duration::ZERO;
        }
        self.tokens -= 1.0;
        self.wait(now)
    }

    /// How long, from `now`, until the debt is paid at the rate in force,
    /// but no later than the next step, whose rate may differ; zero when
    /// there is no debt (or no limit).
    pub(crate) fn wait(&mut self, now: Instant) -> Duration {
        self.fill(now);
        if self.rate <= 0.0 || self.tokens >= 0.0 {
            return Duration::ZERO;
        }
        let mut wait = Duration::from_secs_f64(-self.tokens / self.rate);
        if let Some(step) = self.steps.get(self.next) {
            wait = wait.min((self.start + step.at).saturating_duration_since(now));
        }
        // A debt of a fraction of a nanosecond would never round up to a
        // wait that repays it.
        wait.max(Duration::from_nanos(1))
    }

    /// Waits until this thread may perform its next operation, or until
    /// the phase is asked to stop.
    pub(crate) fn acquire(&mut self) {
        let mut wait = self.take(Instant::now());
        while !wait.is_zero() {
            super::interrupt::pause(wait);
            if super::interrupt::stopped() {
                return;
            }
            wait = self.wait(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(at: u64, ops_per_second: u64) -> RateStep {
        RateStep {
            at: Duration::from_secs(at),
            ops_per_second,
        }
    }

    /// The moments `operations` operations of one thread start when each
    /// waits exactly as long as the bucket says (a perfect sleeper), each
    /// operation taking no time.
    fn starts(bucket: &mut TokenBucket<'_>, from: Instant, operations: usize) -> Vec<Duration> {
        let mut now = from;
        let mut out = Vec::with_capacity(operations);
        for _ in 0..operations {
            let mut wait = bucket.take(now);
            while !wait.is_zero() {
                now += wait;
                wait = bucket.wait(now);
            }
            out.push(now - bucket.start);
        }
        out
    }

    #[test]
    fn a_file_s_lines_are_steps_and_bad_lines_are_named_with_their_number() {
        let path = Path::new("rates.txt");
        assert_eq!(
            parse_rate_file(path, "1 100\n\n  3\t2000 \n10 0\n").unwrap(),
            vec![step(1, 100), step(3, 2000), step(10, 0)]
        );
        for (text, line, needle) in [
            ("1 100\n2\n", 2, "expected `<seconds> <ops/s>`"),
            ("1 100 5\n", 1, "found '1 100 5'"),
            ("x 100\n", 1, "'x' is not a whole number of seconds"),
            ("1.5 100\n", 1, "'1.5'"),
            ("1 -5\n", 1, "'-5' is not a whole number of operations"),
            ("1 10\n\n1 20\n", 3, "second 1 does not come after second 1"),
            ("5 10\n4 20\n", 2, "second 4 does not come after second 5"),
            ("1 2000000000000\n", 1, "expected at most"),
        ] {
            let err = parse_rate_file(path, text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("rates.txt:{line}: ")) && err.contains(needle),
                "{text:?}: {err}"
            );
        }
        assert_eq!(
            parse_rate_file(path, "\n \n").unwrap_err().to_string(),
            "rates.txt: no `<seconds> <ops/s>` line"
        );
    }

    #[test]
    fn the_rate_in_force_is_limit_ops_until_the_file_s_first_line() {
        let mut props = Properties::new().with("limit.ops", 50);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rates");
        std::fs::write(&file, "2 300\n5 0\n").unwrap();
        props = props.with("limit.file", file.display());
        let limit = RateLimit::from_properties(&props).unwrap().unwrap();
        let at = |ms: u64| limit.rate_at(Duration::from_millis(ms));
        assert_eq!(
            (at(0), at(1999), at(2000), at(4999), at(5000), at(99_000)),
            (50, 50, 300, 300, 0, 0)
        );
        // A line at second 0 replaces limit.ops; without limit.ops the run
        // is unlimited until the first line; without either, no limit.
        std::fs::write(&file, "0 7\n").unwrap();
        assert_eq!(
            RateLimit::from_properties(&props).unwrap().unwrap().steps(),
            [step(0, 7)]
        );
        let file_only = Properties::new().with("limit.file", file.display());
        std::fs::write(&file, "3 7\n").unwrap();
        let limit = RateLimit::from_properties(&file_only).unwrap().unwrap();
        assert_eq!(
            (
                limit.rate_at(Duration::ZERO),
                limit.rate_at(Duration::from_secs(3))
            ),
            (0, 7)
        );
        assert_eq!(
            RateLimit::from_properties(&Properties::new()).unwrap(),
            None
        );
        assert_eq!(
            RateLimit::from_properties(&Properties::new().with("limit.ops", 0)).unwrap(),
            None
        );
    }

    #[test]
    fn a_bad_file_is_refused_naming_the_property_and_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rates");
        std::fs::write(&file, "1 10\nsoon 20\n").unwrap();
        let props = Properties::new().with("limit.file", file.display());
        let err = RateLimit::from_properties(&props).unwrap_err().to_string();
        assert!(err.starts_with("limit.file: invalid value"), "{err}");
        assert!(
            err.contains(&format!("{}:2: 'soon'", file.display())),
            "{err}"
        );
        let missing = Properties::new().with("limit.file", dir.path().join("none").display());
        let err = RateLimit::from_properties(&missing)
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot read"), "{err}");
    }

    #[test]
    fn a_thread_s_operations_follow_its_share_of_the_rate() {
        // 400 ops/s over 4 threads: this thread's operations 10 ms apart,
        // the first after 10 ms (the bucket starts empty, as YCSB-cpp's).
        let limit = RateLimit::from_steps(vec![step(0, 400)]).unwrap();
        let start = Instant::now();
        let mut bucket = TokenBucket::new(&limit, 4, start);
        let times = starts(&mut bucket, start, 100);
        for (k, t) in times.iter().enumerate() {
            let expected = (k + 1) as f64 * 0.010;
            assert!((t.as_secs_f64() - expected).abs() < 1e-6, "op {k} at {t:?}");
        }
    }

    #[test]
    fn a_rate_change_applies_from_its_second() {
        // 10 ops/s, then from second 1 on 100 ops/s, then no limit from 2.
        let limit = RateLimit::from_steps(vec![step(0, 10), step(1, 100), step(2, 0)]).unwrap();
        let start = Instant::now();
        let mut bucket = TokenBucket::new(&limit, 1, start);
        let times = starts(&mut bucket, start, 200);
        let in_second = |s: u64| {
            times
                .iter()
                .filter(|t| t.as_secs() == s || (s == 2 && t.as_secs() >= 2))
                .count()
        };
        // Operations 0.1 s apart up to 1 s (the one due at 1 s falls on
        // either side in floating point), then 0.01 s apart, then the rest
        // at once at 2 s.
        assert!((9..=10).contains(&in_second(0)), "{times:?}");
        assert!((99..=101).contains(&in_second(1)), "{times:?}");
        assert!((89..=92).contains(&in_second(2)), "{times:?}");
        assert!(
            times
                .iter()
                .filter(|t| t.as_secs() >= 2)
                .all(|t| *t == Duration::from_secs(2)),
            "{times:?}"
        );
    }

    #[test]
    fn a_wait_ends_at_a_rate_change_to_recompute() {
        // 1 op/s over 2 threads: the first operation owes 2 s at this
        // thread's 0.5 tokens a second, but the rate turns to 1000 ops/s
        // at 1 s, so the wait ends there to be recomputed.
        let limit = RateLimit::from_steps(vec![step(0, 1), step(1, 1000)]).unwrap();
        let start = Instant::now();
        let mut bucket = TokenBucket::new(&limit, 2, start);
        assert_eq!(
            bucket.take(start),
            Duration::from_secs(1),
            "stops at the change"
        );
        // At the change, half a token was earned; the rest is paid at 500/s.
        let left = bucket.wait(start + Duration::from_secs(1));
        assert!((left.as_secs_f64() - 0.001).abs() < 1e-9, "{left:?}");
    }

    #[test]
    fn an_idle_thread_saves_at_most_one_second_of_tokens() {
        let limit = RateLimit::from_steps(vec![step(0, 50)]).unwrap();
        let start = Instant::now();
        let mut bucket = TokenBucket::new(&limit, 1, start);
        let later = start + Duration::from_secs(60);
        let at_once = (0..200)
            .take_while(|_| bucket.take(later).is_zero())
            .count();
        assert_eq!(at_once, 50);
        // Below one operation a second per thread, one token still fits.
        let slow = RateLimit::from_steps(vec![step(0, 1)]).unwrap();
        let mut bucket = TokenBucket::new(&slow, 4, start);
        assert!(bucket.take(later).is_zero());
        assert!(!bucket.take(later).is_zero());
    }

    #[test]
    fn no_limit_takes_no_token_and_forgets_a_debt() {
        let limit = RateLimit::from_steps(vec![step(0, 1), step(1, 0), step(2, 1)]).unwrap();
        let start = Instant::now();
        let mut bucket = TokenBucket::new(&limit, 1, start);
        // Five seconds in debt at second 0, four still owed at second 1...
        for _ in 0..5 {
            bucket.take(start);
        }
        let free = start + Duration::from_secs(1);
        assert!((0..1000).all(|_| bucket.take(free).is_zero()));
        // ...are not owed when the limit comes back: one operation's second.
        let back = start + Duration::from_secs(2);
        assert_eq!(bucket.take(back), Duration::from_secs(1));
    }

    #[test]
    fn steps_must_start_at_zero_and_increase() {
        assert!(RateLimit::from_steps(vec![]).is_err());
        assert!(RateLimit::from_steps(vec![step(1, 5)]).is_err());
        assert!(RateLimit::from_steps(vec![step(0, 5), step(0, 6)]).is_err());
    }
}
