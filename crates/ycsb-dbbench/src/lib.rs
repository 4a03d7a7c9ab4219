//! db_bench's benchmarks on any store: `fillseq`, `readrandom` and the
//! rest of RocksDB's and LevelDB's micro-benchmark vocabulary, run through
//! the [`Store`]/[`StoreThread`] traits and reported in db_bench's format,
//! and db_bench's command line ([`Args`]), which `ycsb bench` takes.
//!
//! The crate depends on the store contract alone: the benchmarks need no
//! part of the YCSB workload engine. It never prints: results, help and
//! warnings are values for the caller to show.
//!
//! Faithful to db_bench:
//! - keys are key numbers as zero-padded decimal of `key_size` digits
//!   (LevelDB's `%016d`); random keys are `rand % num`;
//! - values come from db_bench's [`ValueGenerator`] (its Park–Miller
//!   `Random(301)`, 100-byte pieces compressible to `compression_ratio`);
//! - every thread performs the whole operation count (`num`, `reads`,
//!   `deletes`), as db_bench does, and the result line
//!   ([`BenchReport::line`]) is db_bench's: `micros/op` is the summed
//!   thread time per operation, `ops/sec` the operations over the wall time
//!   from the first thread's start to the last thread's end;
//! - `--histogram` latencies are the time between consecutive finished
//!   operations of a thread, in RocksDB's buckets ([`Histogram`]).
//!
//! Where the store contract differs from a LevelDB/RocksDB handle, the
//! emulation is stated rather than hidden:
//! - a value is a record with one field named [`VALUE_FIELD`], which an
//!   embedded engine stores with 3 bytes of field framing unless its store
//!   has a bare-value layout (which [`Args::store_properties`] turns on
//!   through the descriptor's `dbbench_properties`);
//! - `batch_size` groups that many writes into one timed operation, but
//!   the trait has no atomic batch: they are separate writes;
//! - `readseq` reads with scans of [`SCAN_CHUNK`] rows, `readreverse` walks
//!   the key numbers downwards in chunks of forward scans (the trait has no
//!   reverse iterator), `seekrandom` is a scan of `1 + seek_nexts` rows;
//!   their histograms have one sample per scan;
//! - with several threads, the `(N of M found)` counts sum all threads
//!   (db_bench shows only the first thread's).

#![deny(missing_docs)]
// Only the programs print or exit; a library reports through its return
// values, and a bug is a typed error, not a panic (tests may do both).
#![cfg_attr(
    not(test),
    deny(
        clippy::print_stdout,
        clippy::print_stderr,
        clippy::exit,
        clippy::unwrap_used
    )
)]

mod args;
mod histogram;
mod keys;
mod mixgraph;
mod pacing;
mod random;

pub use args::{
    check_existing_db, fresh_properties, help_text, Args, ArgsError, PropertySource, Warning,
};
pub use histogram::Histogram;
pub use mixgraph::{MixGraphSettings, Pareto};
pub use random::ValueGenerator;

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use ycsb_db::{
    Batch, Fields, ReadOp, Record, ScanOp, ScanResult, Status, Store, StoreError, StoreThread,
    ThreadContext,
};

use crate::keys::make_key;
use crate::mixgraph::{KeyRanges, Query, QueryDecider};
use crate::pacing::{Budget, RateLimiter};
use crate::random::Mt64;

/// The name of the one field that holds a benchmark value.
pub const VALUE_FIELD: &str = "v";

/// Rows per scan of `readseq` and `readreverse`.
pub const SCAN_CHUNK: u64 = 1000;

/// Writes per batch of `fillbatch`, whatever `--batch_size` says (db_bench
/// sets its `entries_per_batch_` so).
pub const FILLBATCH_SIZE: u64 = 1000;

/// `total / count` as C's `printf("%.1f")` prints it: mixgraph divides by
/// zero when it made no put (or no seek), which glibc prints as `-nan` on
/// x86-64 (0.0/0.0 is the negative default NaN there).
fn c_average(total: f64, count: u64) -> String {
    if count == 0 {
        "-nan".to_string()
    } else {
        format!("{:.1}", total / count as f64)
    }
}

/// One of db_bench's benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BenchmarkKind {
    /// Write `num` values in key order into a fresh database.
    FillSeq,
    /// Write `writes` (default `num`) values in key order into a fresh
    /// database, 1000 per batch.
    FillBatch,
    /// Write `num` values in random key order into a fresh database.
    FillRandom,
    /// Overwrite `num` values in random key order.
    Overwrite,
    /// Write `num / 1000` values of 100 KB in random order into a fresh
    /// database.
    Fill100K,
    /// Read `reads` random keys.
    ReadRandom,
    /// Read `reads` keys that do not exist (one digit longer).
    ReadMissing,
    /// Read `reads` records in key order.
    ReadSeq,
    /// Read `reads` records in reverse key order.
    ReadReverse,
    /// `readrandom` on `threads` threads while one more thread overwrites
    /// random keys until the readers finish.
    ReadWhileWriting,
    /// Seek to `reads` random keys and read `seek_nexts` more records.
    SeekRandom,
    /// Read or write random keys, `readwritepercent` reads in each 100.
    ReadRandomWriteRandom,
    /// Read a random key, then write it (read-modify-write).
    UpdateRandom,
    /// db_bench's social-graph model: gets, puts and seeks on keys, value
    /// sizes and scan lengths from the `--mix_*`, `--keyrange_*`,
    /// `--key_dist_*`, `--value_*`, `--iter_*` and `--sine_*` flags.
    MixGraph,
    /// Delete `deletes` keys in key order.
    DeleteSeq,
    /// Delete `deletes` random keys.
    DeleteRandom,
    /// Print the store's statistics (engine reports and gauges).
    Stats,
    /// Print the files (and, where the engine tells, megabytes) per LSM
    /// level, as db_bench's `levelstats`.
    LevelStats,
}

const NAMES: &[(&str, BenchmarkKind)] = &[
    ("fillseq", BenchmarkKind::FillSeq),
    ("fillbatch", BenchmarkKind::FillBatch),
    ("fillrandom", BenchmarkKind::FillRandom),
    ("overwrite", BenchmarkKind::Overwrite),
    ("fill100K", BenchmarkKind::Fill100K),
    ("readrandom", BenchmarkKind::ReadRandom),
    ("readmissing", BenchmarkKind::ReadMissing),
    ("readseq", BenchmarkKind::ReadSeq),
    ("readreverse", BenchmarkKind::ReadReverse),
    ("readwhilewriting", BenchmarkKind::ReadWhileWriting),
    ("seekrandom", BenchmarkKind::SeekRandom),
    (
        "readrandomwriterandom",
        BenchmarkKind::ReadRandomWriteRandom,
    ),
    ("updaterandom", BenchmarkKind::UpdateRandom),
    ("mixgraph", BenchmarkKind::MixGraph),
    ("deleteseq", BenchmarkKind::DeleteSeq),
    ("deleterandom", BenchmarkKind::DeleteRandom),
    ("stats", BenchmarkKind::Stats),
    ("levelstats", BenchmarkKind::LevelStats),
];

impl BenchmarkKind {
    /// Every benchmark name, in db_bench's spelling.
    pub fn names() -> impl Iterator<Item = &'static str> {
        NAMES.iter().map(|(n, _)| *n)
    }

    /// The benchmark called `name` (db_bench's spelling, exactly).
    pub fn from_name(name: &str) -> Option<Self> {
        NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }

    /// The name db_bench prints.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("?", |(n, _)| n)
    }

    /// Whether db_bench runs it on a freshly destroyed database.
    pub fn needs_fresh_db(self) -> bool {
        matches!(
            self,
            BenchmarkKind::FillSeq
                | BenchmarkKind::FillBatch
                | BenchmarkKind::FillRandom
                | BenchmarkKind::Fill100K
        )
    }

    /// Whether it runs operations and reports a result line (`stats` and
    /// `levelstats` print text).
    pub fn measures(self) -> bool {
        !matches!(self, BenchmarkKind::Stats | BenchmarkKind::LevelStats)
    }

    /// Whether it writes values (readwhilewriting's writer does).
    fn writes(self) -> bool {
        matches!(
            self,
            BenchmarkKind::FillSeq
                | BenchmarkKind::FillBatch
                | BenchmarkKind::FillRandom
                | BenchmarkKind::Overwrite
                | BenchmarkKind::Fill100K
                | BenchmarkKind::ReadWhileWriting
                | BenchmarkKind::ReadRandomWriteRandom
                | BenchmarkKind::UpdateRandom
                | BenchmarkKind::MixGraph
        )
    }

    /// The operation its histogram counts when it does one kind.
    fn operation(self) -> Operation {
        match self {
            BenchmarkKind::FillSeq
            | BenchmarkKind::FillBatch
            | BenchmarkKind::FillRandom
            | BenchmarkKind::Overwrite
            | BenchmarkKind::Fill100K => Operation::Write,
            BenchmarkKind::SeekRandom => Operation::Seek,
            BenchmarkKind::DeleteSeq | BenchmarkKind::DeleteRandom => Operation::Delete,
            BenchmarkKind::UpdateRandom => Operation::Update,
            _ => Operation::Read,
        }
    }
}

/// The kinds of operation db_bench keeps a histogram for, in its order
/// (`OperationType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// A get.
    Read,
    /// A put (a batch of them with `--batch_size`).
    Write,
    /// A delete.
    Delete,
    /// A seek and its scan.
    Seek,
    /// A read-modify-write.
    Update,
}

impl Operation {
    /// db_bench's word, as in `Microseconds per write:`.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Read => "read",
            Operation::Write => "write",
            Operation::Delete => "delete",
            Operation::Seek => "seek",
            Operation::Update => "update",
        }
    }
}

/// Parses db_bench's `--benchmarks` list (comma-separated, empty items
/// skipped).
///
/// # Errors
///
/// [`BenchError::UnknownBenchmark`] naming the first unknown name.
pub fn parse_benchmarks(list: &str) -> Result<Vec<BenchmarkKind>, BenchError> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|name| {
            BenchmarkKind::from_name(name).ok_or_else(|| BenchError::UnknownBenchmark {
                name: name.to_string(),
                nearest: ycsb_db::nearest_name(name, BenchmarkKind::names()).map(str::to_string),
                known: BenchmarkKind::names().collect::<Vec<_>>().join(", "),
            })
        })
        .collect()
}

/// What a benchmark run does: db_bench's flags, with its defaults.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// `--num`: keys in the database (1000000).
    pub num: u64,
    /// `--reads`: reads per thread; `None` (db_bench's -1) means `num`.
    pub reads: Option<u64>,
    /// `--writes`: writes per thread of `overwrite` and the fills; `None`
    /// means `num`.
    pub writes: Option<u64>,
    /// `--deletes`: deletes per thread; `None` means `num`.
    pub deletes: Option<u64>,
    /// `--threads` (1); `readwhilewriting` adds one writer thread.
    pub threads: usize,
    /// `--key_size` (16): digits of a zero-padded key number.
    pub key_size: usize,
    /// `--value_size` (100).
    pub value_size: usize,
    /// `--compression_ratio` (0.5).
    pub compression_ratio: f64,
    /// `--batch_size` (1): writes per timed operation of the fills,
    /// `overwrite` and the deletes (`fillbatch` always 1000).
    pub batch_size: u64,
    /// `--duration`: run the random benchmarks this long instead of their
    /// operation count (whole seconds; checked every 1000 operations);
    /// `None` (db_bench's 0) for the count.
    pub duration: Option<Duration>,
    /// `--benchmark_write_rate_limit`: bytes per second of key and value
    /// for all writing threads of a benchmark together; 0 for none.
    pub write_rate_limit: u64,
    /// `--readwritepercent` (90): reads in each 100 operations of
    /// `readrandomwriterandom`.
    pub readwritepercent: u32,
    /// mixgraph's flags and the sine rate model.
    pub mixgraph: MixGraphSettings,
    /// `--seek_nexts` (0): records read after each seek of `seekrandom`.
    pub seek_nexts: u64,
    /// `--histogram`: record latencies.
    pub histogram: bool,
    /// `--stats_interval_seconds`: report each thread's progress this
    /// often; `None` for never.
    pub stats_interval: Option<Duration>,
    /// `--report_interval_seconds`: whether the threads tell
    /// [`Progress::ops_finished`] their finished operations, for a report
    /// of the run's throughput every so often (db_bench's `--report_file`
    /// CSV); `None` for never.
    pub report_interval: Option<Duration>,
    /// `--seed`: base seed; thread `i` draws its keys from db_bench's
    /// `Random64` (`std::mt19937_64`) seeded with `seed + first_stream +
    /// i + 1`, as db_bench seeds its `ThreadState`s, so that the same
    /// flags give db_bench's key sequence.
    pub seed: u64,
    /// The random stream of thread 0. db_bench numbers threads across the
    /// benchmarks of a run, so that `overwrite` after `fillrandom` draws
    /// other keys: a caller running several benchmarks adds each one's
    /// thread count (see [`thread_streams`]).
    pub first_stream: u64,
    /// The table name passed to the store.
    pub table: String,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            num: 1_000_000,
            reads: None,
            writes: None,
            deletes: None,
            threads: 1,
            key_size: 16,
            value_size: 100,
            compression_ratio: 0.5,
            batch_size: 1,
            duration: None,
            write_rate_limit: 0,
            readwritepercent: 90,
            mixgraph: MixGraphSettings::default(),
            seek_nexts: 0,
            histogram: false,
            stats_interval: None,
            report_interval: None,
            seed: 0,
            first_stream: 0,
            table: "usertable".to_string(),
        }
    }
}

/// The largest value size accepted: db_bench's values must fit its
/// generator buffer, and a gigabyte per value is no micro-benchmark.
pub const MAX_VALUE_SIZE: usize = 1 << 30;

impl Settings {
    /// Checks the settings.
    ///
    /// # Errors
    ///
    /// [`BenchError::Invalid`] naming the flag that is out of range.
    pub fn validate(&self) -> Result<(), BenchError> {
        let invalid = |setting: &'static str, reason: &str| {
            Err(BenchError::Invalid {
                setting,
                reason: reason.to_string(),
            })
        };
        if self.num == 0 {
            return invalid("--num", "must be at least 1");
        }
        if self.threads == 0 {
            return invalid("--threads", "must be at least 1");
        }
        if self.threads > ycsb_db::MAX_CLIENT_THREADS {
            // The same cap as threadcount.
            return invalid(
                "--threads",
                &format!("must be at most {}", ycsb_db::MAX_CLIENT_THREADS),
            );
        }
        if self.key_size == 0 || self.key_size > 1024 {
            return invalid("--key_size", "must be 1..=1024");
        }
        if self.value_size > MAX_VALUE_SIZE {
            return invalid("--value_size", "must be at most 1073741824");
        }
        if !(self.compression_ratio > 0.0 && self.compression_ratio <= 1.0) {
            return invalid("--compression_ratio", "must be above 0 and at most 1");
        }
        if self.batch_size == 0 {
            return invalid("--batch_size", "must be at least 1");
        }
        if self
            .duration
            .is_some_and(|d| d.as_secs() > ycsb_db::MAX_SECONDS)
        {
            return invalid(
                "--duration",
                &format!("must be at most {}", ycsb_db::MAX_SECONDS),
            );
        }
        if self.readwritepercent > 100 {
            return invalid("--readwritepercent", "must be 0..=100");
        }
        self.validate_mixgraph()?;
        if self.stats_interval == Some(Duration::ZERO) {
            return invalid("--stats_interval_seconds", "must be above 0");
        }
        if self
            .stats_interval
            .is_some_and(|d| d.as_secs() > ycsb_db::MAX_SECONDS)
        {
            return invalid(
                "--stats_interval_seconds",
                &format!("must be at most {}", ycsb_db::MAX_SECONDS),
            );
        }
        Ok(())
    }

    fn validate_mixgraph(&self) -> Result<(), BenchError> {
        let invalid = |setting: &'static str, reason: &str| {
            Err(BenchError::Invalid {
                setting,
                reason: reason.to_string(),
            })
        };
        let m = &self.mixgraph;
        for (flag, ratio) in [
            ("--mix_get_ratio", m.get_ratio),
            ("--mix_put_ratio", m.put_ratio),
            ("--mix_seek_ratio", m.seek_ratio),
        ] {
            if !(ratio >= 0.0 && ratio.is_finite()) {
                return invalid(flag, "must be a finite number of at least 0");
            }
        }
        if QueryDecider::new([m.get_ratio, m.put_ratio, m.seek_ratio]).is_none() {
            return invalid(
                "--mix_get_ratio",
                "--mix_get_ratio, --mix_put_ratio and --mix_seek_ratio must not all be 0",
            );
        }
        if m.max_scan_len == 0 {
            return invalid("--mix_max_scan_len", "must be at least 1");
        }
        if m.max_value_size == 0 {
            return invalid("--mix_max_value_size", "must be at least 1");
        }
        if m.keyrange_num == 0 {
            return invalid("--keyrange_num", "must be at least 1");
        }
        if m.keyrange_dist.iter().any(|x| *x != 0.0) {
            if m.keyrange_num > self.num {
                return invalid("--keyrange_num", "must be at most --num");
            }
            if !KeyRanges::new(self.num, m.keyrange_num, m.keyrange_dist).usable() {
                return invalid(
                    "--keyrange_dist_a",
                    "--keyrange_dist_a/b/c/d give no key range a probability above 1e-16",
                );
            }
        }
        if !(0.0..=1.0).contains(&m.sine_mix_rate_noise) {
            return invalid("--sine_mix_rate_noise", "must be 0..=1");
        }
        for (flag, ms) in [
            (
                "--sine_mix_rate_interval_milliseconds",
                m.sine_mix_rate_interval_ms,
            ),
            (
                "--sine_write_rate_interval_milliseconds",
                m.sine_write_rate_interval_ms,
            ),
        ] {
            if ms / 1000 > ycsb_db::MAX_SECONDS {
                return invalid(
                    flag,
                    &format!("must be at most {}000", ycsb_db::MAX_SECONDS),
                );
            }
        }
        Ok(())
    }

    /// db_bench's `readwrites_`: the larger of `--reads` and `--writes`,
    /// `num` when neither is given.
    fn readwrites(&self) -> u64 {
        match (self.reads, self.writes) {
            (None, None) => self.num,
            (r, w) => r.unwrap_or(0).max(w.unwrap_or(0)),
        }
    }

    /// The write rate limit in force: `--benchmark_write_rate_limit`, or
    /// with `--sine_write_rate` the sine at 0 seconds (db_bench replaces
    /// the flag with it when it opens the database).
    fn effective_write_rate_limit(&self) -> u64 {
        if self.mixgraph.sine_write_rate {
            let rate = self.mixgraph.sine_rate(0.0);
            if rate > 0.0 {
                rate as u64
            } else {
                0
            }
        } else {
            self.write_rate_limit
        }
    }
}

/// An error running a benchmark.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A name in `--benchmarks` that is not a benchmark.
    #[error(
        "--benchmarks: unknown benchmark '{name}'{} (known: {known})",
        .nearest.as_ref().map(|n| format!("; did you mean '{n}'?")).unwrap_or_default()
    )]
    UnknownBenchmark {
        /// The name given.
        name: String,
        /// The benchmark nearest to it, if any is near enough to be a
        /// misspelling ([`ycsb_db::nearest_name`]).
        nearest: Option<String>,
        /// The known names.
        known: String,
    },
    /// A setting out of range.
    #[error("{setting}: {reason}")]
    Invalid {
        /// The flag, for example `--num`.
        setting: &'static str,
        /// What is allowed.
        reason: String,
    },
    /// A store thread could not be opened.
    #[error("{benchmark}: thread {thread}: {source}")]
    Thread {
        /// The benchmark.
        benchmark: &'static str,
        /// The thread number.
        thread: usize,
        /// The store's error (boxed: it is large and rare).
        #[source]
        source: Box<StoreError>,
    },
    /// An operation failed (db_bench stops on the first failed write or
    /// failed read).
    #[error("{benchmark}: {operation} of key '{key}' returned {status}")]
    Operation {
        /// The benchmark.
        benchmark: &'static str,
        /// `insert`, `read`, `scan` or `delete`.
        operation: &'static str,
        /// The key.
        key: String,
        /// The status the store returned.
        status: Status,
    },
    /// A benchmark thread panicked (a bug in a store binding).
    #[error("{benchmark}: a benchmark thread panicked")]
    Panicked {
        /// The benchmark.
        benchmark: &'static str,
    },
}

/// One thread's progress at a `--stats_interval_seconds` boundary.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct IntervalReport {
    /// The thread.
    pub thread: usize,
    /// Operations in this interval.
    pub interval_ops: u64,
    /// Operations since the benchmark started.
    pub total_ops: u64,
    /// The interval's length.
    pub interval: Duration,
    /// Time since the benchmark started.
    pub total: Duration,
    /// When the report was made.
    pub at: chrono::DateTime<chrono::Local>,
}

/// db_bench's interval line: `2026/11/29-22:53:25 ... thread 0:
/// (1000,5000) ops and (1000.0,1000.0) ops/second in (1.000000,5.000000)
/// seconds`.
impl fmt::Display for IntervalReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = |ops: u64, d: Duration| {
            let s = d.as_secs_f64();
            if s > 0.0 {
                ops as f64 / s
            } else {
                0.0
            }
        };
        write!(
            f,
            "{} ... thread {}: ({},{}) ops and ({:.1},{:.1}) ops/second in ({:.6},{:.6}) seconds",
            self.at.format("%Y/%m/%d-%H:%M:%S"),
            self.thread,
            self.interval_ops,
            self.total_ops,
            rate(self.interval_ops, self.interval),
            rate(self.total_ops, self.total),
            self.interval.as_secs_f64(),
            self.total.as_secs_f64(),
        )
    }
}

/// Receives interval reports, called from the benchmark threads.
pub trait Progress: Sync {
    /// One thread reached an interval boundary.
    fn interval(&self, report: &IntervalReport);

    /// With [`Settings::report_interval`]: thread `thread` finished `ops`
    /// more operations. Called every few hundred operations per thread
    /// (never per operation) and once as the thread ends, so that the
    /// counts add up to every operation. Default: ignored.
    fn ops_finished(&self, thread: usize, ops: u64) {
        let _ = (thread, ops);
    }
}

/// A [`Progress`] that ignores every report.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn interval(&self, _: &IntervalReport) {}
}

/// What one benchmark measured, merged over its threads.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BenchReport {
    /// The benchmark.
    pub benchmark: BenchmarkKind,
    /// Operations over all threads (a batch counts its writes).
    pub operations: u64,
    /// Wall time from the first thread's start to the last one's end.
    pub elapsed: Duration,
    /// The threads' times added up.
    pub thread_time: Duration,
    /// Key and value bytes written or read.
    pub bytes: u64,
    /// Reads that found their key and reads attempted, for the benchmarks
    /// that report `(N of M found)`.
    pub found: Option<(u64, u64)>,
    /// The latencies per kind of operation, in db_bench's order, with
    /// `--histogram`.
    pub histograms: Vec<(Operation, Histogram)>,
    /// db_bench's message after the figures (`( reads:9 writes:1 total:10
    /// found:9)`): the first measured thread's, as db_bench keeps one.
    pub message: Option<String>,
}

impl BenchReport {
    /// db_bench's result line, for example `fillseq      :       3.622
    /// micros/op 276122 ops/sec 1.811 seconds 500000 operations;   30.5
    /// MB/s`.
    pub fn line(&self) -> String {
        // db_bench divides by at least one operation and reports the wall
        // time with microsecond resolution.
        let done = self.operations.max(1);
        let elapsed = self.elapsed.as_secs_f64().max(1e-6);
        let mut extra = String::new();
        if self.bytes > 0 {
            let _ = write!(
                extra,
                "{:6.1} MB/s",
                self.bytes as f64 / 1_048_576.0 / elapsed
            );
        }
        if let Some((found, of)) = self.found {
            if !extra.is_empty() {
                extra.push(' ');
            }
            let _ = write!(extra, "({found} of {of} found)");
        }
        if let Some(message) = &self.message {
            if !extra.is_empty() {
                extra.push(' ');
            }
            extra.push_str(message);
        }
        format!(
            "{:<12} : {:11.3} micros/op {} ops/sec {:.3} seconds {} operations;{}{}",
            self.benchmark.name(),
            self.thread_time.as_secs_f64() * 1e6 / done as f64,
            (done as f64 / elapsed) as i64,
            elapsed,
            done,
            if extra.is_empty() { "" } else { " " },
            extra
        )
    }

    /// db_bench's histogram blocks (`Microseconds per read:` and the
    /// histogram, for each kind of operation), with `--histogram`.
    pub fn histogram_text(&self) -> Option<String> {
        if self.histograms.is_empty() {
            return None;
        }
        let blocks: Vec<String> = self
            .histograms
            .iter()
            .map(|(op, h)| format!("Microseconds per {}:\n{h}", op.name()))
            .collect();
        Some(blocks.join("\n"))
    }

    /// Operations per second of wall time.
    pub fn ops_per_sec(&self) -> f64 {
        self.operations as f64 / self.elapsed.as_secs_f64().max(1e-6)
    }
}

/// The seed of thread `id`'s key stream: db_bench's `seed_base +
/// total_thread_count_`, where the count numbers every thread of the run
/// from 1 across the benchmarks (`Settings::first_stream` is the count
/// before this benchmark). readwhilewriting's writer is db_bench's thread
/// 0, before the readers; here it is the last thread.
fn thread_seed(kind: BenchmarkKind, settings: &Settings, id: usize) -> u64 {
    let stream = if kind == BenchmarkKind::ReadWhileWriting {
        if id == settings.threads {
            0
        } else {
            id as u64 + 1
        }
    } else {
        id as u64
    };
    settings
        .seed
        .wrapping_add(settings.first_stream)
        .wrapping_add(stream)
        .wrapping_add(1)
}

/// How many random streams (threads) `kind` uses with `settings`: what to
/// add to [`Settings::first_stream`] before the next benchmark.
pub fn thread_streams(kind: BenchmarkKind, settings: &Settings) -> u64 {
    let writer = u64::from(kind == BenchmarkKind::ReadWhileWriting);
    settings.threads as u64 + writer
}

/// The result of one benchmark.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum BenchOutcome {
    /// A measured benchmark.
    Measured(BenchReport),
    /// `stats`: the store's reports and gauges as text.
    Stats(String),
}

/// Runs `kind` on `store` with `settings`, reporting intervals to
/// `progress`.
///
/// The store must already hold what the benchmark reads (db_bench's
/// `fillseq,readrandom` order); destroying the database before a
/// fresh-database benchmark ([`BenchmarkKind::needs_fresh_db`]) is the
/// caller's job, because only it knows how to reopen the store.
///
/// # Errors
///
/// [`BenchError::Invalid`] for invalid settings, [`BenchError::Thread`]
/// when a store thread cannot start, [`BenchError::Operation`] on the
/// first write, delete or scan that fails or read that returns an error
/// other than not-found.
pub fn run(
    store: &dyn Store,
    kind: BenchmarkKind,
    settings: &Settings,
    progress: &dyn Progress,
) -> Result<BenchOutcome, BenchError> {
    settings.validate()?;
    if kind == BenchmarkKind::Stats {
        return Ok(BenchOutcome::Stats(stats_text(store)));
    }
    if kind == BenchmarkKind::LevelStats {
        return Ok(BenchOutcome::Stats(level_stats_text(store)));
    }
    let readers = settings.threads;
    let writer = kind == BenchmarkKind::ReadWhileWriting;
    let total = readers + usize::from(writer);
    let barrier = Barrier::new(total);
    let readers_left = AtomicUsize::new(readers);
    let limiters = Limiters::new(kind, settings);
    let limiters = &limiters;
    let results: Vec<Result<ThreadStats, BenchError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..total)
            .map(|id| {
                let barrier = &barrier;
                let readers_left = &readers_left;
                scope.spawn(move || {
                    let role = if id < readers {
                        Role::Measured
                    } else {
                        Role::BackgroundWriter
                    };
                    let worker = Worker::open(store, kind, settings, id, total, progress, limiters);
                    barrier.wait();
                    match role {
                        Role::Measured => {
                            // Counted down however the reader ends (even by
                            // a panic), so that readwhilewriting's writer
                            // stops.
                            let _done = CountDown(readers_left);
                            worker.and_then(|mut w| {
                                w.run(kind)?;
                                Ok(w.stats)
                            })
                        }
                        Role::BackgroundWriter => worker.and_then(|mut w| {
                            w.background_writes(readers_left)?;
                            Ok(w.stats)
                        }),
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or(Err(BenchError::Panicked {
                    benchmark: kind.name(),
                }))
            })
            .collect()
    });
    let mut merged: Option<ThreadStats> = None;
    for (id, result) in results.into_iter().enumerate() {
        let stats = result?;
        if id >= readers {
            continue;
        }
        match &mut merged {
            None => merged = Some(stats),
            Some(m) => m.merge(&stats),
        }
    }
    // `threads` is at least 1, so there is one measured thread.
    let m = merged.ok_or(BenchError::Panicked {
        benchmark: kind.name(),
    })?;
    let reports_found = matches!(
        kind,
        BenchmarkKind::ReadRandom
            | BenchmarkKind::ReadMissing
            | BenchmarkKind::ReadWhileWriting
            | BenchmarkKind::SeekRandom
    );
    Ok(BenchOutcome::Measured(BenchReport {
        benchmark: kind,
        operations: m.done,
        elapsed: m.finish.saturating_duration_since(m.start),
        thread_time: m.thread_time,
        bytes: m.bytes,
        found: reports_found.then_some((m.found, m.done)),
        histograms: m.histograms.unwrap_or_default(),
        message: m.message,
    }))
}

/// The rate limiters of one benchmark, shared by its threads (db_bench's
/// `SharedState`): the write limiter of `--benchmark_write_rate_limit`
/// (or `--sine_write_rate`), and mixgraph's read and write limiters of
/// `--sine_mix_rate`, which replace it there.
struct Limiters {
    write: Option<RateLimiter>,
    read: Option<RateLimiter>,
}

/// mixgraph's limiters start at 1,000,000 queries per second (a byte per
/// query) until the sine sets them.
const MIXGRAPH_INITIAL_RATE: u64 = 1_000_000;

impl Limiters {
    fn new(kind: BenchmarkKind, settings: &Settings) -> Self {
        if kind == BenchmarkKind::MixGraph && settings.mixgraph.sine_mix_rate {
            return Self {
                write: Some(RateLimiter::new(MIXGRAPH_INITIAL_RATE)),
                read: Some(RateLimiter::new(MIXGRAPH_INITIAL_RATE)),
            };
        }
        let rate = settings.effective_write_rate_limit();
        Self {
            write: (rate > 0).then(|| RateLimiter::new(rate)),
            read: None,
        }
    }
}

/// The `stats` benchmark's text: the store's engine, its gauges and its
/// reports (RocksDB's statistics dump).
fn stats_text(store: &dyn Store) -> String {
    let mut text = String::new();
    let info = store.engine_info();
    if !info.name.is_empty() {
        let _ = writeln!(text, "Engine: {} {}", info.name, info.version);
        let _ = writeln!(text, "Build: {}", store.engine_build());
    }
    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    for g in &gauges {
        let _ = writeln!(text, "{}: {}", g.name, g.value);
    }
    for report in store.final_reports() {
        let _ = writeln!(text, "** {} **\n{}", report.name, report.text.trim_end());
    }
    text
}

/// The `levelstats` benchmark's text, RocksDB's `rocksdb.levelstats`
/// table from the store's gauges: files per level
/// (`...num-files-at-levelN`) and megabytes (`...mb-at-levelN`, where the
/// engine has them; `-` otherwise). A store without levels says so.
fn level_stats_text(store: &dyn Store) -> String {
    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    let level = |name: &str, marker: &str| -> Option<usize> {
        name.rsplit_once(marker).and_then(|(_, n)| n.parse().ok())
    };
    let mut rows: Vec<(usize, f64, Option<f64>)> = Vec::new();
    for g in &gauges {
        if let Some(n) = level(&g.name, "num-files-at-level") {
            rows.push((n, g.value, None));
        }
    }
    if rows.is_empty() {
        return "levelstats: the store reports no files per level\n".to_string();
    }
    for g in &gauges {
        if let Some(n) = level(&g.name, "mb-at-level") {
            if let Some(row) = rows.iter_mut().find(|r| r.0 == n) {
                row.2 = Some(g.value);
            }
        }
    }
    rows.sort_by_key(|r| r.0);
    let mut text = String::from("Level Files Size(MB)\n--------------------\n");
    for (n, files, mb) in rows {
        let size = mb.map_or_else(|| "-".to_string(), |mb| format!("{mb:.0}"));
        let _ = writeln!(text, "{n:>3} {files:>8} {size:>8}");
    }
    text
}

/// Decrements the count of running readers when dropped.
struct CountDown<'a>(&'a AtomicUsize);

impl Drop for CountDown<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Measured,
    BackgroundWriter,
}

/// One thread's counters (db_bench's `Stats`).
struct ThreadStats {
    id: usize,
    done: u64,
    bytes: u64,
    found: u64,
    start: Instant,
    finish: Instant,
    thread_time: Duration,
    last_op: Instant,
    /// With `--histogram`: one per kind of operation seen, in db_bench's
    /// order.
    histograms: Option<Vec<(Operation, Histogram)>>,
    /// The kind of operation of [`finished`](Self::finished).
    operation: Operation,
    message: Option<String>,
    interval: Option<Duration>,
    next_check: u64,
    last_report: Instant,
    last_report_done: u64,
    /// Whether finished operations go to `Progress::ops_finished`.
    count_ops: bool,
    /// Operations already told to `Progress::ops_finished`.
    counted_done: u64,
}

/// Operations between clock checks for interval reports: rare enough to
/// cost nothing, frequent enough for any store slower than 10 M ops/s.
const REPORT_CHECK_EVERY: u64 = 256;

impl ThreadStats {
    fn new(id: usize, settings: &Settings, operation: Operation) -> Self {
        let now = Instant::now();
        Self {
            id,
            done: 0,
            bytes: 0,
            found: 0,
            start: now,
            finish: now,
            thread_time: Duration::ZERO,
            last_op: now,
            histograms: settings.histogram.then(Vec::new),
            operation,
            message: None,
            interval: settings.stats_interval,
            next_check: REPORT_CHECK_EVERY,
            last_report: now,
            last_report_done: 0,
            count_ops: settings.report_interval.is_some(),
            counted_done: 0,
        }
    }

    fn begin(&mut self) {
        let now = Instant::now();
        self.start = now;
        self.last_op = now;
        self.last_report = now;
    }

    fn end(&mut self, progress: &dyn Progress) {
        self.finish = Instant::now();
        self.thread_time = self.finish.saturating_duration_since(self.start);
        self.count_finished(progress);
    }

    /// Tells `progress` the operations finished since the last call.
    fn count_finished(&mut self, progress: &dyn Progress) {
        if self.count_ops && self.done > self.counted_done {
            progress.ops_finished(self.id, self.done - self.counted_done);
            self.counted_done = self.done;
        }
    }

    /// db_bench's `ResetLastOpTime`: the time a rate limiter made the
    /// thread wait is not an operation's latency.
    fn reset_last_op_time(&mut self) {
        self.last_op = Instant::now();
    }

    /// db_bench's `FinishedOps` of the benchmark's one kind of operation.
    fn finished(&mut self, ops: u64, progress: &dyn Progress) {
        self.finished_as(self.operation, ops, progress);
    }

    /// db_bench's `FinishedOps`: one histogram sample per call, in the
    /// histogram of `operation`.
    fn finished_as(&mut self, operation: Operation, ops: u64, progress: &dyn Progress) {
        self.done += ops;
        if let Some(histograms) = &mut self.histograms {
            let now = Instant::now();
            let micros = now.saturating_duration_since(self.last_op).as_micros() as u64;
            self.last_op = now;
            match histograms.iter_mut().find(|(op, _)| *op == operation) {
                Some((_, h)) => h.add(micros),
                None => {
                    let mut h = Histogram::new();
                    h.add(micros);
                    histograms.push((operation, h));
                    histograms.sort_by_key(|(op, _)| *op);
                }
            }
        }
        if self.done < self.next_check {
            return;
        }
        self.next_check = self.done + REPORT_CHECK_EVERY;
        self.count_finished(progress);
        if let Some(interval) = self.interval {
            let now = Instant::now();
            let since = now.saturating_duration_since(self.last_report);
            if since >= interval {
                progress.interval(&IntervalReport {
                    thread: self.id,
                    interval_ops: self.done - self.last_report_done,
                    total_ops: self.done,
                    interval: since,
                    total: now.saturating_duration_since(self.start),
                    at: chrono::Local::now(),
                });
                self.last_report = now;
                self.last_report_done = self.done;
            }
        }
    }

    fn merge(&mut self, other: &ThreadStats) {
        self.done += other.done;
        self.bytes += other.bytes;
        self.found += other.found;
        self.start = self.start.min(other.start);
        self.finish = self.finish.max(other.finish);
        self.thread_time += other.thread_time;
        if let (Some(ours), Some(theirs)) = (&mut self.histograms, &other.histograms) {
            for (op, h) in theirs {
                match ours.iter_mut().find(|(o, _)| o == op) {
                    Some((_, mine)) => mine.merge(h),
                    None => ours.push((*op, h.clone())),
                }
            }
            ours.sort_by_key(|(op, _)| *op);
        }
        // db_bench keeps one thread's message.
        if self.message.is_none() {
            self.message.clone_from(&other.message);
        }
    }
}

/// One benchmark thread: its store thread, generators and buffers.
struct Worker<'a> {
    thread: Box<dyn StoreThread + 'a>,
    settings: &'a Settings,
    progress: &'a dyn Progress,
    limiters: &'a Limiters,
    kind: BenchmarkKind,
    key: String,
    scan_start: String,
    record: Record,
    out: Record,
    scan: ScanResult,
    /// The entries of a `--batch_size` write batch, reused batch to batch.
    batch: Batch,
    /// Each batched write's status.
    statuses: Vec<Status>,
    values: ValueGenerator,
    value_size: usize,
    key_size: usize,
    rng: Mt64,
    stats: ThreadStats,
}

/// mixgraph's largest value: db_bench's 1 MiB buffer, or less with
/// `--mix_max_value_size`.
fn mixgraph_value_max(settings: &Settings) -> usize {
    usize::try_from(settings.mixgraph.max_value_size)
        .unwrap_or(usize::MAX)
        .min(1 << 20)
}

impl<'a> Worker<'a> {
    fn open(
        store: &'a dyn Store,
        kind: BenchmarkKind,
        settings: &'a Settings,
        id: usize,
        total: usize,
        progress: &'a dyn Progress,
        limiters: &'a Limiters,
    ) -> Result<Self, BenchError> {
        let thread = store
            .thread(ThreadContext::new(id, total))
            .map_err(|source| BenchError::Thread {
                benchmark: kind.name(),
                thread: id,
                source: Box::new(source),
            })?;
        let value_size = match kind {
            BenchmarkKind::Fill100K => 100_000,
            BenchmarkKind::MixGraph => mixgraph_value_max(settings).max(settings.value_size),
            _ => settings.value_size,
        };
        let key_size = if kind == BenchmarkKind::ReadMissing {
            settings.key_size + 1
        } else {
            settings.key_size
        };
        // A thread holds about three values' worth of buffers: a value size
        // near --value_size's limit, times --threads, can be more than the
        // process may allocate, which is bad input, not an abort.
        let too_large = |e: std::collections::TryReserveError| BenchError::Invalid {
            setting: "--value_size",
            reason: format!(
                "{value_size}: thread {id} cannot allocate its value buffers ({e}); \
                 lower --value_size or --threads"
            ),
        };
        Ok(Self {
            thread,
            settings,
            progress,
            limiters,
            kind,
            key: String::with_capacity(key_size.max(24)),
            scan_start: String::with_capacity(key_size + 1),
            record: Record::try_with_capacity(1, value_size).map_err(too_large)?,
            out: Record::try_with_capacity(1, value_size + 16).map_err(too_large)?,
            scan: ScanResult::new(),
            batch: Batch::new(),
            statuses: Vec::new(),
            // Building the 1 MiB of values costs about 18 M instructions:
            // only the benchmarks that write pay it (db_bench builds its
            // generator in the write loops too).
            values: if kind.writes() {
                ValueGenerator::try_new(settings.compression_ratio, value_size)
                    .map_err(too_large)?
            } else {
                ValueGenerator::unused()
            },
            value_size,
            key_size,
            rng: Mt64::new(thread_seed(kind, settings, id)),
            stats: ThreadStats::new(id, settings, kind.operation()),
        })
    }

    fn fail(&self, operation: &'static str, status: Status) -> BenchError {
        BenchError::Operation {
            benchmark: self.kind.name(),
            operation,
            key: self.key.clone(),
            status,
        }
    }

    fn random_key_number(&mut self) -> u64 {
        self.rng.next_u64() % self.settings.num
    }

    /// The draw db_bench makes before each random write batch, random
    /// read and random delete batch to choose among its databases
    /// (`SelectDBWithCfh(thread->rand.Next())`, with one database always
    /// the same one): drawn and dropped, so that the keys after it are
    /// db_bench's.
    fn skip_database_choice(&mut self) {
        self.rng.next_u64();
    }

    /// The budget of a benchmark that `--duration` limits.
    fn budget(&self, count: u64) -> Budget {
        Budget::new(count, self.settings.duration)
    }

    fn run(&mut self, kind: BenchmarkKind) -> Result<(), BenchError> {
        let s = self.settings;
        // db_bench's writes_: --writes, with 0 (as a negative) meaning num.
        let writes = s.writes.filter(|w| *w > 0).unwrap_or(s.num);
        let reads = s.reads.unwrap_or(s.num);
        self.stats.begin();
        let result = match kind {
            // db_bench runs its sequential fills by count only.
            BenchmarkKind::FillSeq => self.writes(Budget::new(writes, None), s.batch_size, true),
            BenchmarkKind::FillBatch => {
                self.writes(Budget::new(writes, None), FILLBATCH_SIZE, true)
            }
            BenchmarkKind::FillRandom | BenchmarkKind::Overwrite => {
                self.writes(self.budget(writes), s.batch_size, false)
            }
            BenchmarkKind::Fill100K => self.writes(self.budget(writes / 1000), s.batch_size, false),
            BenchmarkKind::ReadRandom
            | BenchmarkKind::ReadMissing
            | BenchmarkKind::ReadWhileWriting => self.random_reads(self.budget(reads)),
            BenchmarkKind::ReadSeq => self.read_seq(reads),
            BenchmarkKind::ReadReverse => self.read_reverse(reads),
            BenchmarkKind::SeekRandom => self.seek_random(self.budget(reads)),
            BenchmarkKind::ReadRandomWriteRandom => {
                self.read_random_write_random(self.budget(s.readwrites()))
            }
            BenchmarkKind::UpdateRandom => self.update_random(self.budget(s.readwrites())),
            BenchmarkKind::MixGraph => self.mix_graph(self.budget(reads)),
            BenchmarkKind::DeleteSeq => self.deletes(s.deletes.unwrap_or(s.num), true),
            BenchmarkKind::DeleteRandom => self.deletes(s.deletes.unwrap_or(s.num), false),
            BenchmarkKind::Stats | BenchmarkKind::LevelStats => Ok(()),
        };
        self.stats.end(self.progress);
        result
    }

    /// Writes a value of `len` bytes at key number `n`; returns the key
    /// and value bytes.
    fn put(&mut self, n: u64, len: usize) -> Result<u64, BenchError> {
        make_key(&mut self.key, n, self.key_size);
        self.record.clear();
        self.record.push(VALUE_FIELD, self.values.generate(len));
        match self
            .thread
            .insert(&self.settings.table, &self.key, &self.record)
        {
            Status::Ok => Ok((self.key.len() + len) as u64),
            status => Err(self.fail("insert", status)),
        }
    }

    /// Writes the entries of `self.batch` in one store call.
    fn write_batch(&mut self) -> Result<(), BenchError> {
        self.statuses.clear();
        self.statuses.resize(self.batch.len(), Status::Error);
        match self
            .thread
            .insert_batch(&self.settings.table, &self.batch, &mut self.statuses)
        {
            Status::Ok => Ok(()),
            status => Err(self.fail("insert", status)),
        }
    }

    fn write_one(&mut self, n: u64) -> Result<(), BenchError> {
        let bytes = self.put(n, self.value_size)?;
        self.stats.bytes += bytes;
        Ok(())
    }

    /// Reads key number `n` in place; returns the value's bytes when found.
    fn get(&mut self, n: u64) -> Result<Option<usize>, BenchError> {
        make_key(&mut self.key, n, self.key_size);
        self.out.clear();
        // db_bench reads into a pinned slice and counts its size; the
        // value is looked at in place here too.
        let mut value_bytes = 0;
        match self.thread.read_in_place(
            &ReadOp {
                table: &self.settings.table,
                key: &self.key,
                fields: Fields::All,
            },
            &mut self.out,
            &mut |record| value_bytes = record.value_bytes(),
        ) {
            Status::Ok => Ok(Some(value_bytes)),
            Status::NotFound => Ok(None),
            status => Err(self.fail("read", status)),
        }
    }

    /// db_bench's `DoWrite`: batches of `batch` writes while the budget
    /// lasts, each batch's bytes asked of the write rate limiter first
    /// (and that wait kept out of the histogram); with `--sine_write_rate`
    /// the limiter's rate follows the sine, recomputed every
    /// `--sine_write_rate_interval_milliseconds`.
    fn writes(
        &mut self,
        mut budget: Budget,
        batch: u64,
        sequential: bool,
    ) -> Result<(), BenchError> {
        let sine = &self.settings.mixgraph;
        let sine_interval = Duration::from_millis(sine.sine_write_rate_interval_ms);
        let mut last_sine = Instant::now();
        let mut next = 0;
        while !budget.done(batch) {
            if !sequential {
                self.skip_database_choice();
            }
            if let Some(limiter) = &self.limiters.write {
                limiter.request(batch * (self.key_size + self.value_size) as u64);
                self.stats.reset_last_op_time();
            }
            if batch == 1 {
                let key = if sequential {
                    next
                } else {
                    self.random_key_number()
                };
                next += 1;
                self.write_one(key)?;
            } else {
                // db_bench's WriteBatch: the batch's puts in one store
                // call (a write batch or one transaction where the store
                // has one; its descriptor's `batching` says).
                self.batch.clear();
                for _ in 0..batch {
                    let key = if sequential {
                        next
                    } else {
                        self.random_key_number()
                    };
                    next += 1;
                    make_key(&mut self.key, key, self.key_size);
                    let value = self.values.generate(self.value_size);
                    self.batch.push(&self.key).push(VALUE_FIELD, value);
                    self.stats.bytes += (self.key.len() + self.value_size) as u64;
                }
                self.write_batch()?;
            }
            self.stats.finished(batch, self.progress);
            if sine.sine_write_rate && last_sine.elapsed() > sine_interval {
                last_sine = Instant::now();
                let seconds = last_sine.saturating_duration_since(self.stats.start);
                let rate = sine.sine_rate(seconds.as_secs_f64());
                if let (Some(limiter), true) = (&self.limiters.write, rate >= 1.0) {
                    limiter.set_bytes_per_second(rate as u64);
                }
            }
        }
        Ok(())
    }

    /// db_bench's `DoDelete`: whole batches while they fit in the count;
    /// `--duration` for `deleterandom` only.
    fn deletes(&mut self, count: u64, sequential: bool) -> Result<(), BenchError> {
        let batch = self.settings.batch_size;
        let mut budget = if sequential {
            Budget::new(count, None)
        } else {
            self.budget(count)
        };
        let mut i = 0;
        while !budget.done(batch) {
            let n = batch;
            // db_bench chooses the database per batch, sequential or not.
            self.skip_database_choice();
            self.batch.clear();
            for j in 0..n {
                let key = if sequential {
                    i + j
                } else {
                    self.random_key_number()
                };
                make_key(&mut self.key, key, self.key_size);
                self.batch.push(&self.key);
            }
            // One key: the single delete; more: db_bench's WriteBatch of
            // deletes, one store call.
            let status = if n == 1 {
                self.thread.delete(&self.settings.table, self.batch.key(0))
            } else {
                self.statuses.clear();
                self.statuses.resize(self.batch.len(), Status::Error);
                self.thread
                    .delete_batch(&self.settings.table, &self.batch, &mut self.statuses);
                // Deleting a missing key succeeds in LevelDB and RocksDB;
                // stores that say so are not failing.
                self.statuses
                    .iter()
                    .copied()
                    .find(|s| !matches!(s, Status::Ok | Status::NotFound))
                    .unwrap_or(Status::Ok)
            };
            match status {
                Status::Ok | Status::NotFound => {}
                status => return Err(self.fail("delete", status)),
            }
            i += n;
            self.stats.finished(n, self.progress);
        }
        Ok(())
    }

    fn random_reads(&mut self, mut budget: Budget) -> Result<(), BenchError> {
        while !budget.done(1) {
            self.skip_database_choice();
            let n = self.random_key_number();
            if let Some(value_bytes) = self.get(n)? {
                self.stats.found += 1;
                self.stats.bytes += (self.key.len() + value_bytes) as u64;
            }
            self.stats.finished(1, self.progress);
        }
        Ok(())
    }

    /// db_bench's `ReadRandomWriteRandom`: in each round of 100,
    /// `readwritepercent` gets first, then the puts; no bytes counted.
    fn read_random_write_random(&mut self, mut budget: Budget) -> Result<(), BenchError> {
        let (mut get_weight, mut put_weight) = (0u32, 0u32);
        let (mut reads, mut writes, mut found) = (0u64, 0u64, 0u64);
        while !budget.done(1) {
            self.skip_database_choice();
            let n = self.random_key_number();
            if get_weight == 0 && put_weight == 0 {
                get_weight = self.settings.readwritepercent;
                put_weight = 100 - get_weight;
            }
            if get_weight > 0 {
                if self.get(n)?.is_some() {
                    found += 1;
                }
                get_weight -= 1;
                reads += 1;
                self.stats.finished_as(Operation::Read, 1, self.progress);
            } else if put_weight > 0 {
                self.put(n, self.value_size)?;
                put_weight -= 1;
                writes += 1;
                self.stats.finished_as(Operation::Write, 1, self.progress);
            }
        }
        self.stats.message = Some(format!(
            "( reads:{reads} writes:{writes} total:{} found:{found})",
            self.settings.readwrites()
        ));
        Ok(())
    }

    /// db_bench's `UpdateRandom`: get a random key, ask the write limiter
    /// for the bytes read, put a new value.
    fn update_random(&mut self, mut budget: Budget) -> Result<(), BenchError> {
        let mut found = 0u64;
        while !budget.done(1) {
            self.skip_database_choice();
            let n = self.random_key_number();
            let read = self.get(n)?;
            if let Some(value_bytes) = read {
                found += 1;
                self.stats.bytes += (self.key.len() + value_bytes) as u64;
            }
            if let Some(limiter) = &self.limiters.write {
                limiter.request((self.key.len() + read.unwrap_or(0)) as u64);
            }
            self.stats.bytes += self.put(n, self.value_size)?;
            self.stats.finished(1, self.progress);
        }
        self.stats.message = Some(format!(
            "( updates:{} found:{found})",
            self.settings.readwrites()
        ));
        Ok(())
    }

    /// db_bench's `MixGraph`.
    fn mix_graph(&mut self, mut budget: Budget) -> Result<(), BenchError> {
        let s = self.settings;
        let m = &s.mixgraph;
        let value_max = mixgraph_value_max(s) as i64;
        let scan_len_max = i64::try_from(m.max_scan_len).unwrap_or(i64::MAX);
        let queries = QueryDecider::new([m.get_ratio, m.put_ratio, m.seek_ratio]).ok_or(
            BenchError::Invalid {
                setting: "--mix_get_ratio",
                reason: "the mix ratios must not all be 0".into(),
            },
        )?;
        let ranges = m
            .keyrange_dist
            .iter()
            .any(|x| *x != 0.0)
            .then(|| KeyRanges::new(s.num, m.keyrange_num, m.keyrange_dist));
        let num = s.num as i64;
        // The noise of --sine_mix_rate_noise: C's rand() in db_bench, a
        // generator of ours here, seeded from the thread's seed.
        let mut noise = Mt64::new(thread_seed(self.kind, s, self.stats.id) ^ 0x5eed);
        let sine_interval = Duration::from_millis(m.sine_mix_rate_interval_ms);
        let mut last_sine = Instant::now();
        let (mut gets, mut puts, mut seeks) = (0u64, 0u64, 0u64);
        let (mut get_found, mut seek_found) = (0u64, 0u64);
        let (mut total_value_size, mut total_scan_length) = (0.0f64, 0.0f64);
        while !budget.done(1) {
            self.skip_database_choice();
            let ini_rand = self.random_key_number() as i64;
            let rand_v = ini_rand % num;
            let u = rand_v as f64 / num as f64;
            let key = mixgraph::key_number(ini_rand, s.num, m.key_dist, ranges.as_ref());
            let query = queries.query(rand_v);
            if m.sine_mix_rate && last_sine.elapsed() > sine_interval {
                last_sine = Instant::now();
                let seconds = last_sine.saturating_duration_since(self.stats.start);
                let mut rate = m.sine_rate(seconds.as_secs_f64());
                let band = m.sine[0] as i64;
                if m.sine_mix_rate_noise > 0.0 && band > 0 {
                    let delta = ((noise.next_u64() % band as u64) as i64 - band / 2) as f64
                        * m.sine_mix_rate_noise;
                    if rate + delta >= 0.0 {
                        rate += delta;
                    }
                }
                let read_rate = rate * (queries.ratios[0] + queries.ratios[2]);
                let write_rate = rate * queries.ratios[1];
                if let (Some(limiter), true) = (&self.limiters.read, read_rate >= 1.0) {
                    limiter.set_bytes_per_second(read_rate as u64);
                }
                if let (Some(limiter), true) = (&self.limiters.write, write_rate >= 1.0) {
                    limiter.set_bytes_per_second(write_rate as u64);
                }
            }
            match query {
                Query::Get => {
                    gets += 1;
                    if let Some(value_bytes) = self.get(key)? {
                        get_found += 1;
                        self.stats.bytes += (self.key.len() + value_bytes) as u64;
                    }
                    // A byte per query, asked every 100 reads.
                    if let (Some(limiter), 0) = (&self.limiters.read, (gets + seeks) % 100) {
                        limiter.request(100);
                    }
                    self.stats.finished_as(Operation::Read, 1, self.progress);
                }
                Query::Put => {
                    puts += 1;
                    let mut size = m.value_pareto.inverse(u);
                    if size < 10 {
                        size = 10;
                    } else if size > value_max {
                        size %= value_max;
                    }
                    total_value_size += size as f64;
                    self.stats.bytes += self.put(key, size as usize)?;
                    if let (Some(limiter), 0) = (&self.limiters.write, puts % 100) {
                        limiter.request(100);
                    }
                    self.stats.finished_as(Operation::Write, 1, self.progress);
                }
                Query::Seek => {
                    seeks += 1;
                    let length = (m.iter_pareto.inverse(u) % scan_len_max).max(0) as u64;
                    make_key(&mut self.key, key, self.key_size);
                    // One row at least, to see whether the seek landed on
                    // the key; only `length` of them are read.
                    self.scan_rows(length.max(1))?;
                    let mut first = true;
                    for (row, (k, record)) in self.scan.iter().enumerate() {
                        if first && k == self.key {
                            seek_found += 1;
                        }
                        first = false;
                        if (row as u64) < length {
                            self.stats.bytes += (k.len() + record.value_bytes()) as u64;
                            total_scan_length += 1.0;
                        }
                    }
                    self.stats.finished_as(Operation::Seek, 1, self.progress);
                }
            }
        }
        self.stats.message = Some(format!(
            "( Gets:{gets} Puts:{puts} Seek:{seeks}, reads {} in {} found, avg size: {} value, {} scan)\n",
            get_found + seek_found,
            gets + seeks,
            c_average(total_value_size, puts),
            c_average(total_scan_length, seeks),
        ));
        Ok(())
    }

    /// Scans `count` rows from `start`, adding the rows' bytes; returns
    /// the number of rows and leaves the last row's key in `scan_start`.
    fn scan_rows(&mut self, count: u64) -> Result<u64, BenchError> {
        self.scan.clear();
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        match self.thread.scan(
            &ScanOp {
                table: &self.settings.table,
                start_key: &self.key,
                count,
                fields: Fields::All,
            },
            &mut self.scan,
        ) {
            Status::Ok => {}
            status => return Err(self.fail("scan", status)),
        }
        Ok(self.scan.len() as u64)
    }

    fn read_seq(&mut self, count: u64) -> Result<(), BenchError> {
        self.key.clear();
        let mut done = 0;
        while done < count {
            let want = SCAN_CHUNK.min(count - done);
            let rows = self.scan_rows(want)?;
            for (key, record) in self.scan.iter() {
                self.stats.bytes += (key.len() + record.value_bytes()) as u64;
            }
            let last = self.scan.iter().last().map(|(k, _)| k);
            if let Some(last) = last {
                self.scan_start.clear();
                self.scan_start.push_str(last);
            }
            done += rows;
            if rows > 0 {
                self.stats.finished(rows, self.progress);
            }
            if rows < want {
                break;
            }
            // The smallest string above the last key: the next scan starts
            // right after it.
            self.key.clear();
            self.key.push_str(&self.scan_start);
            self.key.push('\0');
        }
        Ok(())
    }

    fn read_reverse(&mut self, count: u64) -> Result<(), BenchError> {
        let mut done = 0;
        let mut high = self.settings.num - 1;
        while done < count {
            let low = high.saturating_sub(SCAN_CHUNK - 1);
            make_key(&mut self.scan_start, high, self.key_size);
            make_key(&mut self.key, low, self.key_size);
            self.scan_rows(high - low + 1)?;
            let mut rows = 0;
            // Rows past `high` belong to the chunk above (keys are missing
            // in this one) and were read already.
            for (key, record) in self.scan.iter() {
                if key > self.scan_start.as_str() || done + rows >= count {
                    continue;
                }
                self.stats.bytes += (key.len() + record.value_bytes()) as u64;
                rows += 1;
            }
            done += rows;
            if rows > 0 {
                self.stats.finished(rows, self.progress);
            }
            if low == 0 {
                break;
            }
            high = low - 1;
        }
        Ok(())
    }

    fn seek_random(&mut self, mut budget: Budget) -> Result<(), BenchError> {
        let rows = 1 + self.settings.seek_nexts;
        while !budget.done(1) {
            let n = self.random_key_number();
            make_key(&mut self.key, n, self.key_size);
            self.scan_rows(rows)?;
            let mut first = true;
            for (key, record) in self.scan.iter() {
                if first && key == self.key {
                    self.stats.found += 1;
                }
                first = false;
                self.stats.bytes += (key.len() + record.value_bytes()) as u64;
            }
            self.stats.finished(1, self.progress);
        }
        Ok(())
    }

    /// readwhilewriting's extra thread (db_bench's `BGWriter`): random
    /// overwrites until every reader has finished, with a rate limiter of
    /// its own for `--benchmark_write_rate_limit`, asked after each write;
    /// not part of the reported figures.
    fn background_writes(&mut self, readers_left: &AtomicUsize) -> Result<(), BenchError> {
        let rate = self.settings.effective_write_rate_limit();
        let limiter = (rate > 0).then(|| RateLimiter::new(rate));
        self.stats.begin();
        while readers_left.load(Ordering::Acquire) > 0 {
            self.skip_database_choice();
            let n = self.random_key_number();
            self.write_one(n)?;
            if let Some(limiter) = &limiter {
                limiter.request((self.key.len() + self.value_size) as u64);
            }
        }
        self.stats.end(self.progress);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
