//! Observability of a running benchmark: a per-interval time series per
//! operation, the client's (and optionally a server's) CPU, memory and
//! I/O, the store's engine gauges, the DB directory's size, throughput
//! stability with steady-state detection, a warm-up excluded from the final
//! figures, and space and write amplification.
//!
//! # Where the work happens
//!
//! Nothing here runs per operation. The runner's status thread ticks every
//! `timeseries.granularity` (milliseconds, Java's unit; 1000 by default, independent of
//! `status.interval`): it merges the workers' published histograms into
//! one [`runner::Tick`](crate::runner::Tick) per interval and hands it to
//! the [`Observer`](crate::runner::Observer). A `Collector` (owned by the
//! observer, so again on the status thread) turns each tick into a
//! [`SeriesRow`](ycsb_results::SeriesRow): it samples `/proc/self/{stat,status,io}` (and those of
//! `monitor.pid`), walks the DB directory (`monitor.dir`) for its size on
//! disk, appends the row to `timeseries.file` and keeps it for the report.
//! At the end of a phase `Collector::finish_phase` computes the
//! [`Stability`](ycsb_results::Stability) and [`Amplification`](ycsb_results::Amplification) figures and returns the
//! [`PhaseObservation`](ycsb_results::PhaseObservation) that the JSON export carries in
//! [`PhaseReport::observation`](ycsb_results::PhaseReport::observation).
//!
//! # The JSON shape
//!
//! In the `exporter=json` document, each phase gets an `observation` key
//! (absent when `timeseries.granularity=0`):
//!
//! ```json
//! "observation": {
//!   "granularity_s": 1.0,
//!   "start_unix_ms": 1795993319000,
//!   "warmup": { "end_s": 5.0, "operations": 51234 },          // or null
//!   "series": [
//!     { "time_s": 1.0, "unix_ms": 1795993320000, "interval_s": 1.0,
//!       "warmup": true,
//!       "operations": 10250, "throughput": 10250.0, "errors": 0,
//!       "sections": [
//!         { "name": "READ", "operation": "READ", "intended": false,
//!           "operations": 5120, "throughput": 5120.0, "errors": 0,
//!           "avg_us": 12.5, "min_us": 3, "p50_us": 11, "p99_us": 40,
//!           "p999_us": 80, "max_us": 310 } ],
//!       "client": { "cpu_user_pct": 93.0, "cpu_system_pct": 6.0,
//!                   "rss_bytes": 12345678, "peak_rss_bytes": 13000000,
//!                   "read_bytes": 0, "write_bytes": 4096,
//!                   "read_bytes_per_s": 0.0, "write_bytes_per_s": 4096.0,
//!                   "voluntary_ctxt_switches": 12,
//!                   "involuntary_ctxt_switches": 3 },      // or null
//!       "monitor": { ...same fields, for monitor.pid... },  // or null
//!       "db_size_bytes": 1048576,                           // or null
//!       "gauges": { "leveldb.num-files-at-level0": 2.0 } } ],
//!   "stability": {
//!     "intervals": 55, "mean_throughput": 10100.0, "stddev_throughput": 120.0,
//!     "cv": 0.0119,
//!     "slowest": { "time_s": 12.0, "throughput": 9800.0 },
//!     "fastest": { "time_s": 40.0, "throughput": 10400.0 },
//!     "p99_us": [ { "section": "READ", "min": 35, "median": 40, "max": 90,
//!                   "cv": 0.2 } ],
//!     "steady_state": { "time_s": 3.0, "interval": 2 }    // or null
//!   },                                                     // or null
//!   "amplification": {
//!     "user_bytes": 1.1e9, "write_bytes": 3300000000, "write_amplification": 3.0,
//!     "data_bytes": 1.1e9, "db_size_bytes": 1200000000,
//!     "space_amplification": 1.09 }                        // or null
//! }
//! ```
//!
//! `time_s` is the end of the interval in seconds since the phase started;
//! per-interval counts cover `(time_s - interval_s, time_s]`. `read_bytes`
//! and `write_bytes` are the bytes the process caused to be fetched from or
//! sent to the storage layer in the interval (`/proc/<pid>/io`, as
//! `pidstat -d`); CPU percentages are of one core, so they can exceed 100
//! with several threads (as `pidstat -u` without `-I`). Latencies are in
//! whole microseconds, as in Java's status line.
//!
//! `timeseries.file` receives the same rows while the phase runs: as JSON
//! lines (one [`SeriesRow`](ycsb_results::SeriesRow) object per line with an added `"phase"` key)
//! unless the name ends in `.csv`, then as CSV with a fixed header (see
//! `CsvWriter`). Each row is written and flushed when its interval ends,
//! so a crash leaves every earlier row intact.
//!
//! # Warm-up
//!
//! `measurement.warmup` (`30s`, `30`, or `100000ops`) applies to the run
//! phase: when the time or the operation count is reached, the status
//! thread closes a series interval there and discards the cumulative
//! figures gathered so far. The final report then covers only what came
//! after (its runtime, operation count, throughput and latencies), while
//! the series keeps the warm-up rows (`"warmup": true`). Workers publish
//! every 100 ms at most, so an operation within that much of the boundary
//! may fall on either side of it. A phase that ends during its warm-up
//! reports no operations.
//!
//! # Steady state
//!
//! See `steady_state`: the first interval from which a window of
//! `steadystate.window` intervals all lie within `steadystate.tolerance`
//! of the mean throughput of everything from that interval to the end.
//!
//! # Amplification
//!
//! Computed only when a DB directory (`monitor.dir` or the store's own
//! directory property) or `monitor.pid` is known: otherwise the client's
//! own writes say nothing about the store. Write amplification is the bytes
//! written to the storage layer during
//! the phase (`write_bytes` of `/proc/self/io`, plus `monitor.pid`'s) per
//! user byte written; space amplification is the DB directory's size at the
//! end of the phase per user byte of the data set. User bytes are
//! estimated from the operation counts and the workload's mean record size
//! (key, field names and mean field length, see `UserBytes`), not counted
//! per operation, to keep the operation path untouched.

mod amplification;
mod collector;
mod resources;
mod settings;
mod stability;
mod timeseries;

pub(crate) use collector::Collector;
pub(crate) use settings::{granularity, granularity_ms};
pub use settings::{LiveSettings, ObserveError, Warmup, LIVE_ADDRESS, LIVE_LINGER, LIVE_PORT};
pub(crate) use settings::{ObserveSettings, GRANULARITY, PROPERTIES, TIMESERIES_FILE, WARMUP};
