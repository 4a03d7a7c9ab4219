//! Turns the runner's ticks into time-series rows, samples resources, and
//! sums a phase up.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use super::amplification::UserBytes;

use super::resources::{dir_size, ProcessSampler};
use super::settings::{ObserveError, ObserveSettings};
use super::stability::stability_of;
use super::timeseries::{CsvWriter, SeriesWriter};
use crate::db::GaugeKind;
use crate::runner::{Phase, PhaseOutcome, Tick};
use crate::workload::CoreWorkload;
use ycsb_results::Amplification;
use ycsb_results::Operation;
use ycsb_results::{PhaseObservation, SeriesRow, SeriesSection};

/// Collects a run's time series on the status thread: feed it every
/// [`Tick`] from [`Observer::on_tick`](crate::runner::Observer::on_tick),
/// call [`Collector::start_phase`] before and [`Collector::finish_phase`]
/// after each phase.
#[derive(Debug)]
pub struct Collector {
    settings: ObserveSettings,
    client: ProcessSampler,
    monitor: Option<ProcessSampler>,
    writer: Option<SeriesWriter<BufWriter<File>>>,
    path: Option<PathBuf>,
    error: Option<io::Error>,
    phase: &'static str,
    rows: Vec<SeriesRow>,
    /// The kind each gauge sampled in the phase declared.
    gauge_kinds: BTreeMap<String, GaugeKind>,
    start_unix_ms: Option<u64>,
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl Collector {
    /// A collector with `settings`; creates (or truncates) the time-series
    /// file now. `intended` says whether intended-latency sections exist
    /// (a target is set), `gauges` names the store's gauges for the CSV
    /// columns.
    ///
    /// # Errors
    ///
    /// [`ObserveError::File`] when the file cannot be created or its CSV
    /// header written.
    pub fn new(
        settings: &ObserveSettings,
        intended: bool,
        gauges: Vec<String>,
    ) -> Result<Self, ObserveError> {
        let writer = match &settings.file {
            None => None,
            Some(path) => {
                let file_error = |source| ObserveError::File {
                    path: path.clone(),
                    source,
                };
                let out = BufWriter::new(File::create(path).map_err(file_error)?);
                let csv = path
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
                Some(if csv {
                    SeriesWriter::Csv(CsvWriter::new(out, intended, gauges).map_err(file_error)?)
                } else {
                    SeriesWriter::JsonLines(out)
                })
            }
        };
        Ok(Self {
            settings: settings.clone(),
            client: ProcessSampler::current(),
            monitor: settings.monitor_pid.map(ProcessSampler::pid),
            writer,
            path: settings.file.clone(),
            error: None,
            phase: "",
            rows: Vec::new(),
            gauge_kinds: BTreeMap::new(),
            start_unix_ms: None,
        })
    }

    /// Starts a phase: resource figures and written bytes count from now.
    pub fn start_phase(&mut self, phase: Phase) {
        self.phase = phase.name();
        self.rows.clear();
        self.gauge_kinds.clear();
        self.start_unix_ms = None;
        self.client.restart();
        if let Some(m) = &mut self.monitor {
            m.restart();
        }
    }

    /// Turns one tick into a row: samples the processes and the DB
    /// directory, and appends the row to the time-series file.
    pub fn on_tick(&mut self, tick: &Tick<'_>) {
        let seconds = tick.length.as_secs_f64();
        let per_second = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let mut row = SeriesRow::empty(tick.elapsed.as_secs_f64(), seconds, tick.warmup);
        row.unix_ms = unix_ms();
        self.start_unix_ms.get_or_insert_with(|| {
            row.unix_ms
                .saturating_sub(u64::try_from(tick.elapsed.as_millis()).unwrap_or(0))
        });
        for s in &tick.snapshot.sections {
            let operations = s.operations();
            let errors = s.errors();
            // A scan's per-record latencies are no operations of their own.
            // Nor are batched calls: their records are counted.
            if !s.intended
                && !s.operation.is_batch()
                && !matches!(
                    s.operation,
                    Operation::Cleanup | Operation::ScanLatencyPerRecord
                )
            {
                row.operations += operations;
                row.errors += errors;
            }
            row.sections.push(SeriesSection {
                name: s.name.to_string(),
                operation: s.operation.name().to_string(),
                intended: s.intended,
                operations,
                throughput: per_second(operations),
                errors,
                avg_us: s.mean_us,
                min_us: s.min_us,
                p50_us: s.p50_us,
                p99_us: s.p99_us,
                p999_us: s.p999_us,
                max_us: s.max_us,
            });
        }
        // In `measurement.interval=intended` mode the statuses live in
        // the intended sections; count them there when nothing else did.
        if row.operations == 0 {
            for s in row.sections.iter().filter(|s| s.operation != "CLEANUP") {
                row.operations += s.operations;
                row.errors += s.errors;
            }
        }
        row.throughput = per_second(row.operations);
        row.client = self.client.sample();
        row.monitor = self.monitor.as_mut().and_then(ProcessSampler::sample);
        row.db_size_bytes = self.settings.db_dir.as_deref().and_then(dir_size);
        for g in tick.gauges {
            row.gauges.insert(g.name.clone(), g.value);
            if self.gauge_kinds.get(&g.name) != Some(&g.kind) {
                self.gauge_kinds.insert(g.name.clone(), g.kind);
            }
        }
        if let Some(writer) = &mut self.writer {
            if let Err(e) = writer.write_row(self.phase, &row) {
                // Later rows would leave a gap; stop writing and report
                // the first error at the end of the phase.
                self.error = Some(e);
                self.writer = None;
            }
        }
        self.rows.push(row);
    }

    /// The row of the last tick (the one [`Collector::on_tick`] just made).
    pub fn last_row(&self) -> Option<&SeriesRow> {
        self.rows.last()
    }

    /// The kind of every gauge sampled so far in the phase, as its store
    /// declared it.
    pub fn gauge_kinds(&self) -> &BTreeMap<String, GaugeKind> {
        &self.gauge_kinds
    }

    /// Ends the phase: its series with stability and amplification
    /// figures, to put into the phase's report.
    pub fn finish_phase(
        &mut self,
        outcome: &PhaseOutcome,
        workload: &CoreWorkload,
    ) -> PhaseObservation {
        let granularity_s = self.settings.granularity.map_or(0.0, |g| g.as_secs_f64());
        let rows = std::mem::take(&mut self.rows);
        let stability = stability_of(
            &rows,
            granularity_s,
            self.settings.steady_window,
            self.settings.steady_tolerance,
        );
        let count = |name: &str| -> u64 {
            rows.iter()
                .flat_map(|r| r.sections.iter())
                .filter(|s| s.name == name)
                .map(|s| s.operations)
                .sum()
        };
        let (inserts, updates, deletes) = (
            count("INSERT"),
            count("UPDATE") + count("READ-MODIFY-WRITE"),
            count("DELETE"),
        );
        let user = UserBytes::of(workload);
        let records = match outcome.phase {
            Phase::Load => inserts,
            Phase::Run => (workload.record_count() + inserts).saturating_sub(deletes),
        };
        let written = match (
            self.client.written(),
            self.monitor.as_ref().map(ProcessSampler::written),
        ) {
            (Some(c), None) => Some(c),
            (Some(c), Some(Some(m))) => Some(c + m),
            _ => None,
        };
        // Without a directory or a server to watch, the client's own
        // writes say nothing about the store (a network store, or one in
        // memory): no amplification then.
        let watched = self.settings.db_dir.is_some() || self.monitor.is_some();
        let amplification = watched
            .then(|| {
                Amplification::new(
                    user.written(inserts, updates),
                    records as f64 * user.per_insert,
                    written,
                    self.settings.db_dir.as_deref().and_then(dir_size),
                )
            })
            .flatten();
        PhaseObservation {
            granularity_s,
            start_unix_ms: self.start_unix_ms.unwrap_or_else(unix_ms),
            warmup: outcome.warmup.clone(),
            series: rows,
            stability,
            amplification,
            gauge_kinds: std::mem::take(&mut self.gauge_kinds),
        }
    }

    /// The first error writing the time-series file, if one happened
    /// (writing stopped there).
    pub fn take_error(&mut self) -> Option<ObserveError> {
        let source = self.error.take()?;
        Some(ObserveError::File {
            path: self.path.clone().unwrap_or_default(),
            source,
        })
    }
}
