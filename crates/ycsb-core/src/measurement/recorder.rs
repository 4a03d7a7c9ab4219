//! Per-thread recording, publication and merging.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::{Counter, Histogram};
use ycsb_db::Status;

use super::flat::{Count, FlatCounts};
use super::java::{JavaFigures, JavaRecording};
use super::{MeasurementInterval, MeasurementSettings};
use ycsb_results::{
    JavaSection, PercentileLatency, PhaseReport, ReportFormat, SectionReport, StatusCount,
};
use ycsb_results::{MeasurementType, Operation};

/// The sections of one operation: its own, `<OP>-FAILED`, then one
/// `<OP>-<STATUS>` per status (Java's `DBWrapper` names).
const KINDS: usize = 2 + Status::COUNT;
/// The kind of the `<OP>-FAILED` section.
const FAILED: usize = 1;

/// Latency sections: every kind of every operation, then the same for the
/// intended latency.
const SECTIONS: usize = Operation::COUNT * 2 * KINDS;

/// The index of a section.
const fn section_index(op: Operation, intended: bool, kind: usize) -> usize {
    ((intended as usize) * Operation::COUNT + op.index()) * KINDS + kind
}

/// The percentiles of a status line, as Java's `getSummary`.
const STATUS_PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// HdrHistogram precision: values are kept to 3 significant digits (0.1 %).
const SIGNIFICANT_DIGITS: u8 = 3;

/// A recorder publishes at the latest after this many records, so that no
/// count of its 32-bit histograms can overflow.
const LOCAL_LIMIT: u64 = 1 << 31;

/// The figures of one section: a latency histogram in nanoseconds, exact
/// extremes and sum, and the count of each returned status.
///
/// Per-thread histograms (recorder and slot) count in 32 bits, which halves
/// their memory; the recorder folds its slot into the shared interval
/// before a count could overflow. The status thread's merged figures count
/// in 64 bits.
#[derive(Clone, Debug)]
struct Stats<H> {
    histogram: H,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
    statuses: [u64; Status::COUNT],
    /// The figures of Java's other measurement types (empty with
    /// `hdrhistogram`).
    java: JavaFigures,
}

/// Where a section keeps its latencies: an HdrHistogram, or a worker's
/// [`FlatCounts`] in the same layout.
trait Latencies {
    /// An empty store that grows with the values recorded, so memory
    /// follows the latencies actually seen.
    fn empty() -> Self;
    fn record(&mut self, latency_ns: u64);
    fn len(&self) -> u64;
    /// HdrHistogram's `value_at_quantile` of each of `quantiles` (0s when
    /// empty).
    fn values_at_quantiles<const N: usize>(&self, quantiles: [f64; N]) -> [u64; N];
    fn reset(&mut self);
    #[cfg(test)]
    fn bytes(&self) -> usize;
}

impl<C: Counter> Latencies for Histogram<C> {
    fn empty() -> Self {
        match Histogram::new(SIGNIFICANT_DIGITS) {
            Ok(h) => h,
            // 3 significant digits is always within HdrHistogram's 0..=5.
            Err(e) => unreachable!("HdrHistogram refused 3 significant digits: {e:?}"),
        }
    }

    #[inline]
    fn record(&mut self, latency_ns: u64) {
        // `record` grows the histogram to fit (saturating_record would
        // clamp instead); it fails only if the counts array cannot grow,
        // and then clamping is the best left to do.
        if Histogram::record(self, latency_ns).is_err() {
            self.saturating_record(latency_ns);
        }
    }

    fn len(&self) -> u64 {
        Histogram::len(self)
    }

    fn values_at_quantiles<const N: usize>(&self, quantiles: [f64; N]) -> [u64; N] {
        quantiles.map(|q| Histogram::value_at_quantile(self, q))
    }

    fn reset(&mut self) {
        // Keeps the counts array, so the next round allocates nothing.
        Histogram::reset(self);
    }

    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.distinct_values() * std::mem::size_of::<C>()
    }
}

impl<C: Count> Latencies for FlatCounts<C> {
    fn empty() -> Self {
        FlatCounts::default()
    }

    #[inline]
    fn record(&mut self, latency_ns: u64) {
        FlatCounts::record(self, latency_ns);
    }

    fn len(&self) -> u64 {
        FlatCounts::len(self)
    }

    fn values_at_quantiles<const N: usize>(&self, quantiles: [f64; N]) -> [u64; N] {
        FlatCounts::values_at_quantiles(self, quantiles)
    }

    fn reset(&mut self) {
        // Drained sections are zero already; this only matters for one
        // dropped without a drain.
        if self.len() != 0 {
            *self = FlatCounts::default();
        }
    }

    #[cfg(test)]
    fn bytes(&self) -> usize {
        FlatCounts::bytes(self)
    }
}

impl<H: Latencies> Stats<H> {
    #[cold]
    #[inline(never)]
    fn boxed() -> Box<Self> {
        Box::new(Stats {
            histogram: H::empty(),
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            statuses: [0; Status::COUNT],
            java: JavaFigures::default(),
        })
    }

    #[inline]
    fn record(&mut self, latency_ns: u64) {
        self.histogram.record(latency_ns);
        self.min_ns = self.min_ns.min(latency_ns);
        self.max_ns = self.max_ns.max(latency_ns);
        self.sum_ns += u128::from(latency_ns);
    }

    fn is_empty(&self) -> bool {
        self.histogram.len() == 0 && self.statuses.iter().all(|&c| c == 0)
    }

    /// Merges everything but the histogram and the Java figures.
    fn merge_figures<G>(&mut self, other: &Stats<G>) {
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns += other.sum_ns;
        for (mine, theirs) in self.statuses.iter_mut().zip(other.statuses) {
            *mine += theirs;
        }
    }

    fn reset(&mut self) {
        self.histogram.reset();
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.sum_ns = 0;
        self.statuses = [0; Status::COUNT];
        self.java.reset();
    }

    fn count(&self) -> u64 {
        self.histogram.len()
    }

    fn min_ns(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.min_ns
        }
    }

    fn mean_ns(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum_ns as f64 / n as f64,
        }
    }

    /// Bytes held by the latency counts, for the memory bound test.
    #[cfg(test)]
    fn histogram_bytes(&self) -> usize {
        self.histogram.bytes()
    }
}

impl<H: Latencies> Stats<H> {
    /// The value at `percentile` (in `(0, 100]`), by ycsb-results' one
    /// percentile rule ([`java_quantile`], as `java_percentile`), kept
    /// within the exact extremes.
    ///
    /// A histogram bucket's value lies up to 0.1 % above the values it
    /// holds, while the minimum and maximum beside it are exact: unclamped,
    /// a report could print `99.9=21790` next to `Max=21781`. (Java reads
    /// all of them off its buckets, so its percentiles never pass its
    /// maximum either.)
    fn percentile_ns(&self, percentile: f64) -> u64 {
        let [at] = self.percentiles_ns([percentile]);
        at
    }

    /// [`percentile_ns`](Self::percentile_ns) of each of `percentiles`
    /// (ascending: flat counts then find them in one pass).
    fn percentiles_ns<const N: usize>(&self, percentiles: [f64; N]) -> [u64; N] {
        let at = match self.count() {
            0 => [0; N],
            n => self
                .histogram
                .values_at_quantiles(percentiles.map(|p| java_quantile(n, p))),
        };
        let min_ns = self.min_ns();
        at.map(|ns| ns.clamp(min_ns, self.max_ns.max(min_ns)))
    }
}

/// The rank rule of ycsb-results' `java_percentile`, so that a histogram
/// decoded from an export or a log (`ycsb merge`) gives the same figures
/// as the report.
use ycsb_results::java_quantile;

/// A worker's own section, recorded on every operation.
type Local = Stats<FlatCounts>;
/// A slot's section: the same flat counts, summed over publications.
type Narrow = Stats<FlatCounts>;
/// The status thread's time-series interval: every slot's counts, summed
/// in 64 bits.
type Series = Stats<FlatCounts<u64>>;
/// A merged section: a status-line interval, or the totals.
type Wide = Stats<Histogram<u64>>;

impl<C: Count> Stats<FlatCounts<C>> {
    /// Moves another section's counts and figures into this one (a
    /// recorder's into its slot, a slot's into the time-series interval).
    fn take<D: Count>(&mut self, other: &mut Stats<FlatCounts<D>>)
    where
        C: From<D>,
    {
        other
            .histogram
            .move_into(&mut self.histogram, other.min_ns, other.max_ns);
        self.merge_figures(other);
        self.java.absorb(&mut other.java);
    }
}

impl Series {
    /// Moves the time-series interval into a status-line interval and the
    /// totals (which alone keep the Java figures), one `record_n` each per
    /// distinct value.
    fn fold_into(&mut self, interval: &mut Wide, totals: &mut Wide) {
        // Fails only when a histogram cannot grow; then nothing better can
        // be done than keep the other figures.
        self.histogram.drain(self.min_ns, |value, count| {
            let _ = interval.histogram.record_n(value, count);
            let _ = totals.histogram.record_n(value, count);
        });
        interval.merge_figures(self);
        totals.merge_figures(self);
        totals.java.absorb(&mut self.java);
    }
}

type Sections<H> = [Option<Box<Stats<H>>>; SECTIONS];

fn empty_sections<H>() -> Sections<H> {
    std::array::from_fn(|_| None)
}

#[inline]
fn section<H: Latencies>(sections: &mut Sections<H>, index: usize) -> &mut Stats<H> {
    sections[index].get_or_insert_with(Stats::boxed)
}

/// Moves every non-empty section of `from` into `into` with `merge`,
/// leaving `from`'s sections empty but allocated.
fn drain_into<H: Latencies, G: Latencies>(
    from: &mut Sections<H>,
    into: &mut Sections<G>,
    merge: impl Fn(&mut Stats<G>, &mut Stats<H>),
) {
    for (index, stats) in from.iter_mut().enumerate() {
        if let Some(stats) = stats.as_deref_mut() {
            if !stats.is_empty() {
                merge(section(into, index), stats);
                stats.reset();
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking recorder thread leaves consistent data behind (every
    // update under the lock is a plain merge), so poisoning is ignored.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a section holds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SectionKey {
    pub(crate) operation: Operation,
    pub(crate) intended: bool,
    /// Whether it holds the latencies of failed operations.
    pub(crate) failed: bool,
    /// Java's name (`READ`, `READ-FAILED`, `Intended-READ-NOT_FOUND`).
    pub(crate) name: &'static str,
}

/// The Java section name of section `index` under `mode`.
fn section_name(index: usize, mode: MeasurementInterval) -> SectionKey {
    let kind = index % KINDS;
    let op_index = index / KINDS;
    let operation = Operation::ALL[op_index % Operation::COUNT];
    let intended = op_index >= Operation::COUNT;
    let prefixed = intended && mode == MeasurementInterval::Both;
    SectionKey {
        operation,
        intended,
        failed: kind != 0,
        name: section_label(operation, prefixed, kind),
    }
}

/// Java's name of a section: `[Intended-]<OP>[-FAILED|-<STATUS>]`.
fn section_label(op: Operation, prefixed: bool, kind: usize) -> &'static str {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        let mut names = Vec::with_capacity(2 * Operation::COUNT * KINDS);
        for prefix in ["", "Intended-"] {
            for op in Operation::ALL {
                for kind in 0..KINDS {
                    names.push(match kind {
                        0 => format!("{prefix}{}", op.name()),
                        FAILED => format!("{prefix}{}-FAILED", op.name()),
                        _ => format!("{prefix}{}-{}", op.name(), Status::ALL[kind - 2].name()),
                    });
                }
            }
        }
        names
    });
    &names[((prefixed as usize) * Operation::COUNT + op.index()) * KINDS + kind]
}

/// Whether an operation reports a status: Java prints no `Return=` lines
/// for `READ-MODIFY-WRITE`, `CLEANUP` and `SCAN-LATENCY-PER-RECORD`.
#[inline]
fn reports_status(op: Operation) -> bool {
    !matches!(
        op,
        Operation::ReadModifyWrite | Operation::Cleanup | Operation::ScanLatencyPerRecord
    )
}

/// Microseconds since the Unix epoch; its thousandth is Java's
/// `System.currentTimeMillis`.
fn wall_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

fn to_us(ns: u64) -> u64 {
    ns / 1_000
}

/// One thread's published data, waiting for the status thread.
#[derive(Debug)]
struct Slot {
    sections: Sections<FlatCounts>,
}

/// Adds the time-series interval to the status interval and the totals,
/// and empties it.
fn fold_series(aggregate: &mut Aggregate) {
    let Aggregate {
        series,
        interval,
        totals,
        ..
    } = aggregate;
    for (index, stats) in series.iter_mut().enumerate() {
        if let Some(stats) = stats.as_deref_mut() {
            if !stats.is_empty() {
                stats.fold_into(section(interval, index), section(totals, index));
                stats.reset();
            }
        }
    }
}

#[path = "tick.rs"]
mod tick;
pub use tick::{TickSection, TickSnapshot};

/// The status thread's state: the time-series interval being merged
/// (`series`, see [`Measurements::take_tick`]), the status-line interval
/// and the totals. Slots drain into `series`, which is folded into both
/// others.
#[derive(Debug)]
struct Aggregate {
    /// Whether time-series ticks take the slots in: status intervals then
    /// leave them to the ticks, so that every operation is in one tick.
    ticking: bool,
    series: Sections<FlatCounts<u64>>,
    interval: Sections<Histogram<u64>>,
    totals: Sections<Histogram<u64>>,
}

/// The measurements of one phase, shared by all threads (it is `Sync`).
///
/// Use one per phase: [`Measurements::summary`] reports everything
/// recorded since [`Measurements::new`].
#[derive(Debug)]
pub struct Measurements {
    mode: MeasurementInterval,
    settings: MeasurementSettings,
    /// Per section, the wall-clock millisecond of its first latency (0
    /// before it), where Java's timeseries units start; set once by the
    /// first recorder to measure in the section, then cached per thread.
    series_starts: Arc<[AtomicU64]>,
    percentiles: Vec<f64>,
    publish_period: Duration,
    thread_count: usize,
    /// Whether interval snapshots carry their merged histograms (for the
    /// HdrHistogram interval logs).
    keep_histograms: bool,
    // Lock order: aggregate, then slots, then one slot.
    aggregate: Arc<Mutex<Aggregate>>,
    slots: Mutex<Vec<Arc<Mutex<Slot>>>>,
}

impl Measurements {
    /// Measurements for `thread_count` worker threads (a capacity hint:
    /// any number of recorders may be created).
    pub fn new(settings: &MeasurementSettings, thread_count: usize) -> Self {
        Self {
            mode: settings.interval,
            settings: settings.clone(),
            series_starts: (0..SECTIONS).map(|_| AtomicU64::new(0)).collect(),
            percentiles: settings.percentiles.clone(),
            publish_period: settings.publish_period(),
            thread_count: thread_count.max(1),
            keep_histograms: settings.interval_histograms,
            aggregate: Arc::new(Mutex::new(Aggregate {
                ticking: false,
                series: empty_sections(),
                interval: empty_sections(),
                totals: empty_sections(),
            })),
            slots: Mutex::new(Vec::with_capacity(thread_count)),
        }
    }

    /// A recorder for worker thread `thread_id`, to be owned by that thread.
    ///
    /// The thread id staggers the recorders' publish times so that threads
    /// do not all publish at the same instant.
    pub fn recorder(&self, thread_id: usize) -> Recorder {
        let slot = Arc::new(Mutex::new(Slot {
            sections: empty_sections(),
        }));
        lock(&self.slots).push(Arc::clone(&slot));
        let stagger = self
            .publish_period
            .mul_f64((thread_id % self.thread_count) as f64 / self.thread_count as f64);
        let mut failure_kind = [FAILED as u8; Status::COUNT];
        for status in Status::ALL {
            if self.settings.failures.own_section[status.index()] {
                failure_kind[status.index()] = (2 + status.index()) as u8;
            }
        }
        let java = JavaRecording::of(
            self.settings.kind,
            self.settings.histogram_buckets,
            self.settings.timeseries_granularity_ms,
        );
        Recorder {
            mode: self.mode,
            plain_path: self.mode != MeasurementInterval::Intended && java.is_none(),
            failure_kind,
            java,
            series_starts: Arc::clone(&self.series_starts),
            local_starts: [0; SECTIONS],
            local: empty_sections(),
            pending: 0,
            slot,
            aggregate: Arc::clone(&self.aggregate),
            period: self.publish_period,
            next_publish: Instant::now() + stagger,
        }
    }

    /// Merges everything published since the last call into the figures of
    /// one status line, and adds it to the cumulative totals.
    ///
    /// The snapshot lists every section seen so far in the phase (with zero
    /// counts for those idle in this interval), as Java's status line does.
    pub fn take_interval(&self) -> IntervalSnapshot {
        let mut aggregate = lock(&self.aggregate);
        if !aggregate.ticking {
            self.collect(&mut aggregate);
        }
        let Aggregate {
            interval, totals, ..
        } = &mut *aggregate;

        let mut sections = Vec::new();
        let mut histograms = Vec::new();
        for (index, total) in totals.iter().enumerate() {
            if total.is_none() {
                continue;
            }
            let key = section_name(index, self.mode);
            let name = key.name;
            let mut figures = IntervalSection {
                name,
                operation: key.operation,
                intended: key.intended,
                failed: key.failed,
                count: 0,
                min_us: 0,
                max_us: 0,
                mean_us: 0.0,
                p50_us: 0,
                p90_us: 0,
                p99_us: 0,
                p999_us: 0,
                p9999_us: 0,
                returns: [0; Status::COUNT],
            };
            if let Some(stats) = interval[index].as_deref_mut() {
                let [p50, p90, p99, p999, p9999] =
                    stats.percentiles_ns(STATUS_PERCENTILES).map(to_us);
                figures.count = stats.count();
                figures.min_us = to_us(stats.min_ns());
                figures.max_us = to_us(stats.max_ns);
                figures.mean_us = stats.mean_ns() / 1_000.0;
                figures.p50_us = p50;
                figures.p90_us = p90;
                figures.p99_us = p99;
                figures.p999_us = p999;
                figures.p9999_us = p9999;
                figures.returns = stats.statuses;
                if self.keep_histograms {
                    histograms.push(SectionHistogram {
                        name,
                        histogram: stats.histogram.clone(),
                    });
                }
                stats.reset();
            } else if self.keep_histograms {
                // An idle interval is logged too, as an empty histogram,
                // so that a log's intervals cover the phase without gaps.
                histograms.push(SectionHistogram {
                    name,
                    histogram: Histogram::<u64>::empty(),
                });
            }
            sections.push(figures);
        }
        IntervalSnapshot {
            sections,
            histograms,
        }
    }

    /// Drains every slot into `series`, then folds `series` into the
    /// status interval and the totals (leaving `interval` filled, for the
    /// caller to read and reset).
    fn collect(&self, aggregate: &mut Aggregate) {
        self.drain_slots(&mut aggregate.series);
        fold_series(aggregate);
    }

    /// Drains every slot into `series`.
    fn drain_slots(&self, series: &mut Sections<FlatCounts<u64>>) {
        for slot in lock(&self.slots).iter() {
            drain_into(&mut lock(slot).sections, series, Series::take);
        }
    }

    /// The cumulative report of the phase: everything published, including
    /// what no status line showed yet.
    ///
    /// Call it after the worker threads finished and dropped (or
    /// [published](Recorder::publish)) their recorders; `operations` is the
    /// number of operations the threads completed, for the throughput.
    pub fn summary(&self, phase: &str, runtime: Duration, operations: u64) -> PhaseReport {
        let mut aggregate = lock(&self.aggregate);
        self.collect(&mut aggregate);
        let Aggregate {
            interval, totals, ..
        } = &mut *aggregate;
        for stats in interval.iter_mut().flatten() {
            stats.reset();
        }

        let sections = totals
            .iter_mut()
            .enumerate()
            .filter_map(|(index, stats)| {
                let stats = stats.as_deref_mut()?;
                let key = section_name(index, self.mode);
                let min_ns = stats.min_ns();
                let average_ns = stats.mean_ns();
                let java = self.settings.kind != MeasurementType::HdrHistogram;
                let java = java.then(|| {
                    let figures = std::mem::take(&mut stats.java);
                    let mut raw = figures.raw;
                    // Threads publish in turns: time order is Java's list
                    // order (each operation appended as it ended).
                    raw.sort_by_key(|p| p.end_us);
                    JavaSection {
                        sum_us: figures.sum_us,
                        sum_sq_us: figures.sum_sq_us,
                        buckets: figures.buckets,
                        series: figures.units,
                        raw,
                    }
                });
                Some(SectionReport {
                    name: key.name.to_string(),
                    operation: key.operation,
                    intended: key.intended,
                    failed: key.failed,
                    operations: stats.count(),
                    average_us: average_ns / 1_000.0,
                    min_us: to_us(min_ns),
                    max_us: to_us(stats.max_ns),
                    average_ns,
                    min_ns,
                    max_ns: stats.max_ns,
                    histogram: Some(ycsb_results::encode_histogram(&stats.histogram)),
                    percentiles: self
                        .percentiles
                        .iter()
                        .map(|&percentile| {
                            let ns = stats.percentile_ns(percentile);
                            PercentileLatency {
                                percentile,
                                us: to_us(ns),
                                ns,
                            }
                        })
                        .collect(),
                    returns: Status::ALL
                        .iter()
                        .filter(|s| stats.statuses[s.index()] > 0)
                        .map(|&status| StatusCount {
                            status: status.name().to_string(),
                            count: stats.statuses[status.index()],
                        })
                        .collect(),
                    java,
                })
            })
            .collect();

        let runtime_ns = u64::try_from(runtime.as_nanos()).unwrap_or(u64::MAX);
        let runtime_ms = u64::try_from(runtime.as_millis()).unwrap_or(u64::MAX);
        PhaseReport {
            phase: phase.to_string(),
            runtime_ms,
            runtime_ns,
            operations,
            // Java's `Client`: 1000 * operations / RunTime(ms), over the
            // whole milliseconds it prints, so the two lines agree. A phase
            // shorter than 1 ms reports 0 (Java divides by zero: Infinity).
            throughput: if runtime_ms == 0 {
                0.0
            } else {
                1000.0 * operations as f64 / runtime_ms as f64
            },
            sections,
            format: ReportFormat {
                measurement_type: self.settings.kind,
                histogram_buckets: self.settings.histogram_buckets,
                histogram_verbose: self.settings.histogram_verbose,
                raw_no_summary: self.settings.raw_no_summary,
            },
            observation: None,
        }
    }

    /// Bytes held by every histogram (recorders excluded), for the memory
    /// bound test.
    #[cfg(test)]
    pub(crate) fn histogram_bytes(&self) -> usize {
        fn sum<H: Latencies>(s: &Sections<H>) -> usize {
            s.iter().flatten().map(|s| s.histogram_bytes()).sum()
        }
        let aggregate = lock(&self.aggregate);
        let slots: usize = lock(&self.slots)
            .iter()
            .map(|slot| sum(&lock(slot).sections))
            .sum();
        slots + sum(&aggregate.series) + sum(&aggregate.interval) + sum(&aggregate.totals)
    }
}

/// A worker thread's recorder: records into thread-local histograms and
/// publishes them to the thread's slot now and then.
///
/// Dropping it publishes what is left.
#[derive(Debug)]
pub struct Recorder {
    mode: MeasurementInterval,
    /// Whether a successful operation needs nothing but its own section:
    /// latency recorded (`measurement.interval` is not `intended`) and no
    /// Java figures to keep.
    plain_path: bool,
    /// Per status, the section kind a failure with it is measured in.
    failure_kind: [u8; Status::COUNT],
    /// What Java's other measurement types need; `None` for
    /// `hdrhistogram`.
    java: Option<JavaRecording>,
    series_starts: Arc<[AtomicU64]>,
    /// This thread's copy of `series_starts` (0: not known yet).
    local_starts: [u64; SECTIONS],
    local: Sections<FlatCounts>,
    /// Records since the last publication.
    pending: u64,
    slot: Arc<Mutex<Slot>>,
    aggregate: Arc<Mutex<Aggregate>>,
    period: Duration,
    next_publish: Instant,
}

impl Recorder {
    /// Records one operation's status and service time, as Java's
    /// `DBWrapper`: the latency of a failed store operation (status not OK
    /// or BATCHED_OK) goes to `<OP>-FAILED` (or `<OP>-<STATUS>`, see
    /// [`FailureSections`](super::FailureSections)), while the status is
    /// always counted under `<OP>`. `READ-MODIFY-WRITE` and `CLEANUP`
    /// report no status (Java prints no `Return=` lines for them) and
    /// `VERIFY` never fails over to another section, as in Java.
    ///
    /// With `measurement.interval=intended` only the status is counted
    /// here (in the operation's intended section, as Java does); the
    /// latency must come through [`Recorder::record_intended`].
    // Always inlined: it is the per-operation path, and the call would
    // cost as much as the recording (counted with cachegrind).
    #[inline(always)]
    pub fn record(&mut self, op: Operation, status: Status, latency_ns: u64) {
        if self.plain_path && status.is_ok() {
            // The usual case: one section takes latency and status, with
            // nothing else to keep.
            let stats = section(&mut self.local, section_index(op, false, 0));
            stats.record(latency_ns);
            if reports_status(op) {
                stats.statuses[status.index()] += 1;
            }
            self.count_pending();
        } else {
            self.record_elsewhere(op, status, latency_ns);
        }
    }

    /// [`Recorder::record`] off the usual path: a failure, intended-only
    /// measurement, or one of Java's other measurement types.
    #[inline(never)]
    fn record_elsewhere(&mut self, op: Operation, status: Status, latency_ns: u64) {
        let reports_status = reports_status(op);
        if self.mode == MeasurementInterval::Intended {
            if reports_status {
                section(&mut self.local, section_index(op, true, 0)).statuses[status.index()] += 1;
            }
        } else {
            let kind = self.kind_of(op, status);
            let index = section_index(op, false, kind);
            let stats = section(&mut self.local, index);
            stats.record(latency_ns);
            if kind == 0 {
                if reports_status {
                    stats.statuses[status.index()] += 1;
                }
            } else {
                section(&mut self.local, section_index(op, false, 0)).statuses[status.index()] += 1;
            }
            if self.java.is_some() {
                self.record_java(index, latency_ns);
            }
        }
        self.count_pending();
    }

    /// Records one operation's latency measured from its intended start
    /// time; ignored with `measurement.interval=op`. A failed operation's
    /// goes to the failure's section, as with [`Recorder::record`].
    ///
    /// With `intended` or `both`, call it for every operation (with the
    /// service time when no target throughput sets start times), as Java
    /// does.
    #[inline]
    pub fn record_intended(&mut self, op: Operation, status: Status, latency_ns: u64) {
        if self.mode != MeasurementInterval::Op {
            self.record_intended_latency(op, status, latency_ns);
        }
    }

    #[inline(never)]
    fn record_intended_latency(&mut self, op: Operation, status: Status, latency_ns: u64) {
        let kind = self.kind_of(op, status);
        self.record_latency(section_index(op, true, kind), latency_ns);
        self.count_pending();
    }

    /// The section kind of an operation's latency: its own unless a store
    /// operation failed.
    #[inline]
    fn kind_of(&self, op: Operation, status: Status) -> usize {
        let store_operation = matches!(
            op,
            Operation::Read
                | Operation::Update
                | Operation::Insert
                | Operation::Scan
                | Operation::Delete
        );
        if status.is_ok() || !store_operation {
            0
        } else {
            usize::from(self.failure_kind[status.index()])
        }
    }

    #[inline]
    fn record_latency(&mut self, index: usize, latency_ns: u64) {
        section(&mut self.local, index).record(latency_ns);
        if self.java.is_some() {
            self.record_java(index, latency_ns);
        }
    }

    /// The figures of Java's other measurement types (off the
    /// `hdrhistogram` path).
    #[inline(never)]
    fn record_java(&mut self, index: usize, latency_ns: u64) {
        let Some(how) = self.java else {
            return;
        };
        let (now_us, offset_ms) = if how.needs_time() {
            let now_us = wall_us();
            let now = now_us / 1_000;
            if self.local_starts[index] == 0 {
                // The first thread to measure in the section sets its
                // start, as Java's synchronized `checkEndOfUnit`.
                let shared = &self.series_starts[index];
                self.local_starts[index] =
                    match shared.compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire) {
                        Ok(_) => now,
                        Err(first) => first,
                    };
            }
            (now_us, now.saturating_sub(self.local_starts[index]))
        } else {
            (0, 0)
        };
        let stats = section(&mut self.local, index);
        stats
            .java
            .record(&how, latency_ns / 1_000, now_us, offset_ms);
    }

    #[inline]
    fn count_pending(&mut self) {
        self.pending += 1;
        if self.pending >= LOCAL_LIMIT {
            self.publish();
        }
    }

    /// Publishes if the publish period has passed since the last time: one
    /// comparison otherwise. Call it after each operation.
    #[inline]
    pub fn publish_if_due(&mut self, now: Instant) {
        if now >= self.next_publish {
            self.publish();
            self.next_publish = now + self.period;
        }
    }

    /// Moves everything recorded so far into this thread's slot, where the
    /// next [`Measurements::take_interval`] or [`Measurements::summary`]
    /// finds it.
    pub fn publish(&mut self) {
        if self.pending == 0 {
            return;
        }
        let mut slot = lock(&self.slot);
        if self.would_overflow(&slot) {
            // No status thread emptied the slot for over two billion
            // records: fold it into the shared interval first, taking the
            // locks in their global order (aggregate, then slot).
            drop(slot);
            let mut aggregate = lock(&self.aggregate);
            slot = lock(&self.slot);
            drain_into(&mut slot.sections, &mut aggregate.series, Series::take);
        }
        drain_into(&mut self.local, &mut slot.sections, Narrow::take);
        self.pending = 0;
    }

    /// Whether adding the local counts to the slot's could overflow a
    /// 32-bit bucket count (no bucket holds more than its section's total).
    fn would_overflow(&self, slot: &Slot) -> bool {
        self.local.iter().zip(&slot.sections).any(|(local, slot)| {
            let local = local.as_deref().map_or(0, Local::count);
            local + slot.as_deref().map_or(0, Narrow::count) > u64::from(u32::MAX)
        })
    }
}

#[cfg(test)]
impl Recorder {
    /// Bytes held by this recorder's local histograms.
    pub(crate) fn histogram_bytes(&self) -> usize {
        self.local
            .iter()
            .flatten()
            .map(|s| s.histogram_bytes())
            .sum()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.publish();
    }
}

/// The figures of one status line: per section, what happened in the
/// interval.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalSnapshot {
    /// The sections seen so far in the phase, operations in report order
    /// and then the intended-latency sections.
    pub sections: Vec<IntervalSection>,
    /// With [`MeasurementSettings::interval_histograms`], each section's
    /// merged latency histogram of the interval (nanoseconds), in the
    /// order of `sections`; empty otherwise.
    pub histograms: Vec<SectionHistogram>,
}

/// One section's latency histogram of one interval.
#[derive(Clone, Debug, PartialEq)]
pub struct SectionHistogram {
    /// Java's section name (`READ`, `Intended-READ`).
    pub name: &'static str,
    /// The latencies recorded in the interval, in nanoseconds (3
    /// significant digits).
    pub histogram: Histogram<u64>,
}

impl IntervalSnapshot {
    /// The operations completed in the interval: the sum of the status
    /// counts (each operation reports exactly one status), without the
    /// batched calls (`BATCH_INSERT`, ...), whose records are counted.
    pub fn operations(&self) -> u64 {
        self.sections
            .iter()
            .filter(|s| !s.operation.is_batch())
            .flat_map(|s| s.returns.iter())
            .sum()
    }
}

/// One section of a status line, latencies in whole microseconds as Java.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalSection {
    /// Java's section name (`READ`, `Intended-READ`).
    pub name: &'static str,
    /// The operation.
    pub operation: Operation,
    /// Whether this is intended latency.
    pub intended: bool,
    /// Whether it holds the latencies of failed operations
    /// (`READ-FAILED`); their statuses are counted in the operation's own
    /// section.
    pub failed: bool,
    /// Latencies recorded in the interval.
    pub count: u64,
    /// The smallest latency (0 when none).
    pub min_us: u64,
    /// The largest latency (0 when none).
    pub max_us: u64,
    /// The mean latency (0 when none).
    pub mean_us: f64,
    /// The median.
    pub p50_us: u64,
    /// The 90th percentile.
    pub p90_us: u64,
    /// The 99th percentile.
    pub p99_us: u64,
    /// The 99.9th percentile.
    pub p999_us: u64,
    /// The 99.99th percentile.
    pub p9999_us: u64,
    /// Operations per returned status, indexed by [`Status::index`].
    pub returns: [u64; Status::COUNT],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_slot_is_folded_before_its_counts_overflow() {
        let measurements = Measurements::new(&MeasurementSettings::default(), 1);
        let mut recorder = measurements.recorder(0);
        recorder.record(Operation::Read, Status::Ok, 2_000);
        recorder.publish();
        // As if the slot had gathered over four billion reads without a
        // status thread to empty it.
        {
            let mut slot = lock(&recorder.slot);
            let read = section(&mut slot.sections, Operation::Read.index());
            read.histogram.record_n(2_000, u32::MAX - 1);
        }
        recorder.record(Operation::Read, Status::Ok, 2_000);
        recorder.record(Operation::Read, Status::Ok, 2_000);
        recorder.publish();
        {
            let slot = lock(&recorder.slot);
            let read = slot.sections[Operation::Read.index()].as_deref().unwrap();
            assert_eq!(read.count(), 2, "the slot was folded, then refilled");
        }
        drop(recorder);
        let report = measurements.summary("run", Duration::from_secs(1), 3);
        let read = &report.sections[0];
        assert_eq!(read.operations, u64::from(u32::MAX) + 2);
        assert_eq!((read.min_us, read.max_us), (2, 2));
    }
}
