//! What a phase's observation holds: the time series (per interval: the
//! sections' throughput and latency, the client's and a monitored
//! process's resources, the database directory's size, the engine's
//! gauges), throughput stability and amplification.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::gauge::GaugeKind;
use crate::number::{f64_or_nan, gauges};

/// One section's figures in one interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesSection {
    /// Java's section name (`READ`, `Intended-READ`).
    pub name: String,
    /// The operation's name (`READ`).
    pub operation: String,
    /// Whether this is latency from the intended start (with a target).
    pub intended: bool,
    /// Operations that completed in the interval.
    pub operations: u64,
    /// `operations` per second of the interval.
    #[serde(deserialize_with = "f64_or_nan")]
    pub throughput: f64,
    /// Operations that returned a status other than OK.
    pub errors: u64,
    /// The mean latency, microseconds (0 when no operation).
    #[serde(deserialize_with = "f64_or_nan")]
    pub avg_us: f64,
    /// The smallest latency, whole microseconds.
    pub min_us: u64,
    /// The median latency.
    pub p50_us: u64,
    /// The 99th percentile.
    pub p99_us: u64,
    /// The 99.9th percentile.
    pub p999_us: u64,
    /// The largest latency.
    pub max_us: u64,
}

/// One interval of a phase: what the operations did, the client's (and a
/// monitored process's) resources, the DB directory's size and the
/// engine's gauges.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesRow {
    /// The end of the interval, seconds since the phase started.
    #[serde(deserialize_with = "f64_or_nan")]
    pub time_s: f64,
    /// The end of the interval, milliseconds since the Unix epoch (to
    /// line up the series of several clients).
    pub unix_ms: u64,
    /// The interval's length, seconds (the last one of a phase is usually
    /// shorter).
    #[serde(deserialize_with = "f64_or_nan")]
    pub interval_s: f64,
    /// Whether the interval belongs to the warm-up, excluded from the
    /// final figures.
    pub warmup: bool,
    /// Workload operations completed in the interval (`CLEANUP` excluded).
    pub operations: u64,
    /// `operations` per second.
    #[serde(deserialize_with = "f64_or_nan")]
    pub throughput: f64,
    /// Of those, the ones that did not return OK.
    pub errors: u64,
    /// Every section seen so far in the phase (with zero figures when idle
    /// in this interval).
    pub sections: Vec<SeriesSection>,
    /// The client process's resources over the interval (None where
    /// `/proc` is not available).
    pub client: Option<ResourceUsage>,
    /// `monitor.pid`'s resources over the interval.
    pub monitor: Option<ResourceUsage>,
    /// The DB directory's size on disk at the end of the interval.
    pub db_size_bytes: Option<u64>,
    /// The store's engine gauges at the end of the interval.
    #[serde(deserialize_with = "gauges")]
    pub gauges: BTreeMap<String, f64>,
}

impl SeriesRow {
    /// A row with no operations, resources or gauges.
    pub fn empty(time_s: f64, interval_s: f64, warmup: bool) -> Self {
        Self {
            time_s,
            unix_ms: 0,
            interval_s,
            warmup,
            operations: 0,
            throughput: 0.0,
            errors: 0,
            sections: Vec::new(),
            client: None,
            monitor: None,
            db_size_bytes: None,
            gauges: BTreeMap::new(),
        }
    }
}

/// Where the warm-up ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WarmupSummary {
    /// Its end, seconds since the phase started.
    #[serde(deserialize_with = "f64_or_nan")]
    pub end_s: f64,
    /// Operations completed during it, left out of the final figures.
    pub operations: u64,
}

/// Everything observed during a phase, carried by its report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseObservation {
    /// The nominal interval length, seconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub granularity_s: f64,
    /// When the phase started, milliseconds since the Unix epoch.
    pub start_unix_ms: u64,
    /// The warm-up, if one was set and reached.
    pub warmup: Option<WarmupSummary>,
    /// One row per interval.
    pub series: Vec<SeriesRow>,
    /// Throughput stability; None when no interval was measured.
    pub stability: Option<Stability>,
    /// Space and write amplification, for phases that wrote.
    pub amplification: Option<Amplification>,
    /// The kind of each engine gauge in the rows, as the store declared
    /// it; empty in exports written before kinds were recorded (see
    /// [`PhaseObservation::gauge_kind`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub gauge_kinds: BTreeMap<String, GaugeKind>,
}

impl PhaseObservation {
    /// The kind of the gauge called `name`: as declared, or for an export
    /// written before kinds were recorded, as
    /// [`crate::migrate::inferred_gauge_kind`] infers it.
    pub fn gauge_kind(&self, name: &str) -> GaugeKind {
        self.gauge_kinds
            .get(name)
            .copied()
            .unwrap_or_else(|| crate::migrate::inferred_gauge_kind(name))
    }

    /// The names of the gauges any row reports, sorted.
    pub fn gauge_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .series
            .iter()
            .flat_map(|r| r.gauges.keys().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// One interval, by its end time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalPoint {
    /// The end of the interval, seconds since the phase started.
    #[serde(deserialize_with = "f64_or_nan")]
    pub time_s: f64,
    /// Its throughput, operations per second.
    #[serde(deserialize_with = "f64_or_nan")]
    pub throughput: f64,
}

/// How much one section's per-interval 99th percentile varied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct P99Spread {
    /// The section (`READ`, `Intended-UPDATE`).
    pub section: String,
    /// The lowest per-interval p99, microseconds.
    pub min: u64,
    /// The median per-interval p99 (the lower middle value).
    pub median: u64,
    /// The highest per-interval p99.
    pub max: u64,
    /// Coefficient of variation of the per-interval p99s.
    #[serde(deserialize_with = "f64_or_nan")]
    pub cv: f64,
}

/// When throughput settled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// The index of the first settled interval in the phase's series.
    pub interval: usize,
    /// Its start, seconds since the phase started.
    #[serde(deserialize_with = "f64_or_nan")]
    pub time_s: f64,
}

/// The stability figures of a phase, over its measured intervals: those
/// after the warm-up, without a last interval shorter than half the
/// granularity (a tail that short has too few operations to compare).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stability {
    /// Intervals the figures cover.
    pub intervals: usize,
    /// Mean of the per-interval throughputs.
    #[serde(deserialize_with = "f64_or_nan")]
    pub mean_throughput: f64,
    /// Their sample standard deviation (n − 1; 0 for one interval).
    #[serde(deserialize_with = "f64_or_nan")]
    pub stddev_throughput: f64,
    /// Coefficient of variation: standard deviation over mean (0 when the
    /// mean is 0).
    #[serde(deserialize_with = "f64_or_nan")]
    pub cv: f64,
    /// The interval with the lowest throughput (the first such).
    pub slowest: IntervalPoint,
    /// The interval with the highest throughput (the first such).
    pub fastest: IntervalPoint,
    /// Per section with operations, the spread of its per-interval p99.
    pub p99_us: Vec<P99Spread>,
    /// When throughput settled over the whole series (warm-up included),
    /// by `steady_state` over successful operations, in a window without
    /// failed operations; `None` when it never did.
    pub steady_state: Option<SteadyState>,
    /// Failed operations (status neither OK nor BATCHED_OK) in the
    /// measured intervals; the throughputs above count only successful
    /// ones.
    #[serde(default)]
    pub errors: u64,
    /// Their share of the measured intervals' operations (0 to 1).
    #[serde(default, deserialize_with = "f64_or_nan")]
    pub error_share: f64,
}

/// Stability is judged from at least this many steady-state windows of
/// intervals: with fewer, a CV or a "settled" verdict describes start-up,
/// not the store (`ycsb report` applies the same rule to exports).
pub const JUDGED_WINDOWS: usize = 2;

impl Stability {
    /// Whether the phase had too few intervals for these figures (or its
    /// amplification, measured over as short a time) to judge the store:
    /// fewer than [`JUDGED_WINDOWS`] steady-state windows of `window`
    /// intervals (`steadystate.window`).
    pub fn too_short(&self, window: usize) -> bool {
        self.intervals < JUDGED_WINDOWS * window.max(1)
    }
}

/// Amplification at the end of a phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Amplification {
    /// Estimated user bytes written in the phase (inserts, updates and
    /// read-modify-writes, warm-up included).
    #[serde(deserialize_with = "f64_or_nan")]
    pub user_bytes: f64,
    /// Bytes sent to the storage layer during the phase by the client and
    /// `monitor.pid` (None when `/proc/<pid>/io` was not readable).
    pub write_bytes: Option<u64>,
    /// `write_bytes / user_bytes`.
    pub write_amplification: Option<f64>,
    /// Estimated user bytes of the data set at the end of the phase: after
    /// a load the records inserted, after a run `recordcount` plus the run's
    /// inserts minus its deletes, times `UserBytes::per_insert`.
    #[serde(deserialize_with = "f64_or_nan")]
    pub data_bytes: f64,
    /// The DB directory's size at the end of the phase.
    pub db_size_bytes: Option<u64>,
    /// `db_size_bytes / data_bytes`.
    pub space_amplification: Option<f64>,
}

impl Amplification {
    /// The figures, or `None` when the phase wrote nothing and holds no
    /// data.
    pub fn new(
        user_bytes: f64,
        data_bytes: f64,
        write_bytes: Option<u64>,
        db_size_bytes: Option<u64>,
    ) -> Option<Self> {
        if user_bytes <= 0.0 && data_bytes <= 0.0 {
            return None;
        }
        let ratio = |num: Option<u64>, den: f64| num.filter(|_| den > 0.0).map(|n| n as f64 / den);
        Some(Self {
            user_bytes,
            write_bytes,
            write_amplification: ratio(write_bytes, user_bytes),
            data_bytes,
            db_size_bytes,
            space_amplification: ratio(db_size_bytes, data_bytes),
        })
    }
}

/// A process's resource use over one interval, as `pidstat -u -r -d -w`
/// reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceUsage {
    /// CPU time in user mode, in percent of one core (above 100 with
    /// several busy threads, as `pidstat -u`).
    #[serde(deserialize_with = "f64_or_nan")]
    pub cpu_user_pct: f64,
    /// CPU time in kernel mode, in percent of one core.
    #[serde(deserialize_with = "f64_or_nan")]
    pub cpu_system_pct: f64,
    /// Resident set size at the end of the interval.
    pub rss_bytes: u64,
    /// Peak resident set size so far.
    pub peak_rss_bytes: u64,
    /// Bytes fetched from the storage layer in the interval (None when
    /// `/proc/<pid>/io` is not readable).
    pub read_bytes: Option<u64>,
    /// Bytes sent to the storage layer in the interval.
    pub write_bytes: Option<u64>,
    /// `read_bytes` per second.
    pub read_bytes_per_s: Option<f64>,
    /// `write_bytes` per second.
    pub write_bytes_per_s: Option<f64>,
    /// Voluntary context switches in the interval (the process waited).
    pub voluntary_ctxt_switches: u64,
    /// Involuntary context switches in the interval (the process was
    /// preempted).
    pub involuntary_ctxt_switches: u64,
}
