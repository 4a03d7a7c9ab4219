//! A whole benchmark invocation as the `ycsb` binary runs it: properties
//! and a store descriptor in, a [`RunReport`] out, with every rule about
//! what a run means applied here and nowhere else.
//!
//! The binary only turns argv into [`Properties`], prints what a
//! [`SessionObserver`] is shown and picks the exit status from the result;
//! a library user writes the same chain without argv and gets the same
//! semantics: the known-property set, the `target` rule, load
//! completeness, the error budget, the time series and HdrHistogram logs,
//! and the export written before the store closes.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use ycsb_db::{
    EngineBuild, EngineInfo, GaugeKind, Origin, OutputSink, Properties, PropertyDecl, Store,
    StoreContext, StoreDescriptor, StoreError,
};

use crate::benchmark::{Benchmark, ConfigError, PhaseError};
use crate::client::ClientSettings;
use crate::measurement::hdrlog::HdrLogWriter;
use crate::measurement::{self, effective_config, ExporterKind, HdrLogSettings};
use crate::observe::{Collector, LiveSettings, ObserveError, ObserveSettings};
use crate::runner::{Observer, Phase, PhaseOutcome, StartHold, StatusUpdate, StopSignal, Tick};
use ycsb_results::SeriesRow;
use ycsb_results::{EngineReportEntry, RunMetadata, RunReport};

/// A property that nothing in a session reads, with a near miss among the
/// known names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownProperty {
    /// The key as set.
    pub key: String,
    /// Where it was set (`file:line`, a flag).
    pub origin: Origin,
    /// The known property nearest to `key` ([`ycsb_db::nearest_name`]: within
    /// two edits), if any.
    pub suggestion: Option<&'static str>,
    /// For a setting of another YCSB (Java's, YCSB-cpp's, go-ycsb's) that
    /// has no property of the same meaning here: what to use instead.
    pub instead: Option<&'static str>,
}

/// Other YCSBs' settings that no property here reads under any name, and
/// what does their job here. (Names that mean the same as ours are aliases
/// on the declarations instead.)
const FOREIGN_PROPERTIES: &[(&str, &str)] = &[
    (
        "measurement.raw.output_file",
        "per-interval figures go to timeseries.file, every latency to the HdrHistogram logs (hdrhistogram.fileoutput)",
    ),
    (
        "measurement.trackjvm",
        "the client's CPU, memory and I/O are sampled into the time series (timeseries.granularity)",
    ),
    (
        "histogram.buckets",
        "latencies are kept in HdrHistogram (percentiles: hdrhistogram.percentiles)",
    ),
    (
        "dropdata",
        "an empty database comes from the store's own property (its destroy or fresh setting: ycsb properties lists them)",
    ),
    (
        "silence",
        "status lines are printed only with -s",
    ),
];

impl std::fmt::Display for UnknownProperty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "property '{}' ({}) is not read by the workload, the runner or this store",
            self.key, self.origin
        )?;
        if let Some(instead) = self.instead {
            write!(f, "; here {instead}")?;
        } else if let Some(name) = self.suggestion {
            write!(f, "; did you mean '{name}'?")?;
        }
        Ok(())
    }
}

/// What a [`Session`] shows while it runs, besides the runner's status
/// updates and ticks ([`Observer`]). Every method has an empty default.
pub trait SessionObserver: Observer {
    /// The first phase is held until `start.at` ([`StartHold::Waiting`]),
    /// or `start.at` had already passed and it starts at once
    /// ([`StartHold::Passed`], worth a warning: this client started late).
    fn start_held(&mut self, hold: StartHold) {
        let _ = hold;
    }

    /// A phase is about to start.
    fn phase_starting(&mut self, phase: Phase, threads: usize, engine: &EngineInfo) {
        let _ = (phase, threads, engine);
    }

    /// The engine the store runs on and how it was built (library file,
    /// assertions), once, before the first phase: a result measured on an
    /// engine built with assertions should say so where it is shown.
    fn engine_build(&mut self, engine: &EngineInfo, build: &EngineBuild) {
        let _ = (engine, build);
    }

    /// A time-series interval ended: its row, as the phase's observation
    /// will carry it (client resources and gauges sampled), and the kind
    /// of every gauge the phase sampled so far. Called on the status
    /// thread right after [`Observer::on_tick`], only while the time
    /// series is kept; the row is already computed, so watching it (a
    /// live view) adds nothing to the operations' path.
    fn interval_observed(
        &mut self,
        phase: Phase,
        row: &SeriesRow,
        gauge_kinds: &BTreeMap<String, GaugeKind>,
    ) {
        let _ = (phase, row, gauge_kinds);
    }

    /// A phase ended; its report (with the phase's observation) is final.
    fn phase_finished(&mut self, outcome: &PhaseOutcome) {
        let _ = outcome;
    }

    /// An error that does not end the session: a client thread that
    /// failed, an HdrHistogram log or engine report that could not be
    /// written (either then fails the session once everything else is
    /// written), a store that failed to close.
    fn error(&mut self, message: &str) {
        let _ = message;
    }

    /// A file the session wrote (an HdrHistogram log, an engine report).
    fn file_written(&mut self, what: &str, path: &std::path::Path) {
        let _ = (what, path);
    }

    /// The export is about to be written (after the last phase's report,
    /// before the engine reports and closing the store).
    fn export_starting(&mut self) {}

    /// The export was written (`true`) or failed (`false`, the error is
    /// the session's); with nothing to export, called with `true`.
    fn export_finished(&mut self, written: bool) {
        let _ = written;
    }

    /// Where a non-text export goes when no `exportfile` is set (the
    /// binary's standard output). `None`, the default: not written.
    fn export_output(&mut self) -> Option<&mut dyn Write> {
        None
    }
}

/// An observer that shows nothing.
impl SessionObserver for crate::runner::Silent {}

/// Why a session did not succeed.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum SessionFailure {
    /// A phase failed: no thread could run, the load was incomplete, or
    /// the error budget was spent.
    #[error(transparent)]
    Phase(#[from] PhaseError),
    /// The configuration turned out invalid once the store was open (the
    /// time-series file, whose CSV columns name the store's gauges, could
    /// not be created); no phase ran.
    #[error(transparent)]
    Config(ConfigError),
    /// The time-series file could not be written.
    #[error(transparent)]
    Observe(#[from] ObserveError),
    /// An HdrHistogram interval log could not be written (the run went
    /// on; the report and the export are written).
    #[error("HdrHistogram log {0}")]
    HdrLog(measurement::HdrLogError),
    /// An engine report beside the export file could not be written (it
    /// is still in a JSON export).
    #[error("writing the engine report {}: {source}", path.display())]
    EngineReport {
        /// The report's file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The export could not be written.
    #[error("writing {what}: {source}")]
    Export {
        /// The file, or standard output.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The store failed to close: what it acknowledged may not be durable
    /// (an engine that makes its writes durable at close found the disk
    /// full). The report and the export are written.
    #[error("closing the store: {0}")]
    Close(StoreError),
}

/// A session that did not succeed, with the report of everything that was
/// measured (already exported where the export could be written).
#[derive(Debug, thiserror::Error)]
#[error("{failure}")]
pub struct SessionError {
    /// What went wrong first.
    pub failure: Box<SessionFailure>,
    /// What was measured.
    pub report: Box<RunReport>,
}

/// A validated benchmark invocation on one store: see the module docs.
///
/// ```
/// use ycsb_core::db::Properties;
/// use ycsb_core::{Phase, Session, Silent, StopSignal};
///
/// let props = Properties::new()
///     .with("recordcount", 100)
///     .with("operationcount", 200)
///     .with("seed", 1);
/// let session = Session::new(props, ycsb_memory::DESCRIPTOR)?;
/// assert!(session.unknown_properties().is_empty());
/// let store = session.open_store(None)?;
/// let report = session.execute(store, &[Phase::Load, Phase::Run], &StopSignal::new(), &mut Silent)?;
/// assert_eq!(report.phases.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Session {
    props: Properties,
    descriptor: StoreDescriptor,
    known: Vec<&'static PropertyDecl>,
    benchmark: Benchmark,
    client: ClientSettings,
    observe: ObserveSettings,
    hdr: HdrLogSettings,
    metadata: RunMetadata,
}

impl Session {
    /// Validates every property against the declarations of the workload,
    /// the runner, measurement, observation and the store. A random seed
    /// is recorded in the properties, so that the export says how to
    /// reproduce the run.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the first invalid property, its value and
    /// where it came from, or an export file that could not be created.
    pub fn new(mut props: Properties, descriptor: StoreDescriptor) -> Result<Self, ConfigError> {
        let mut known = crate::known_properties();
        known.extend_from_slice(descriptor.properties);
        let client = ClientSettings::from_properties(&props)?;
        let benchmark = Benchmark::from_properties(&props)?;
        let observe = ObserveSettings::from_properties(&props, descriptor.data_dir_in(&props))?;
        let hdr = HdrLogSettings::from_properties(&props)?;
        check_hdr_prefix(&hdr, &props)?;
        check_export_target(
            benchmark.measurement_settings().export_file.as_ref(),
            &props,
        )?;
        check_latency_file(benchmark.measurement_settings(), &props)?;
        check_series_file(&observe, &props)?;
        check_outputs_apart(&benchmark, &observe, &hdr, &props, &descriptor)?;
        if benchmark.runner_settings().seed_is_random {
            props.set(
                crate::runner::SEED.name(),
                benchmark.runner_settings().seed.to_string(),
                Origin::Default,
            );
        }
        let mut metadata =
            measurement::run_metadata("ycsb", env!("CARGO_PKG_VERSION"), Vec::new(), &known);
        metadata.store = Some(descriptor.name.to_string());
        metadata.durability =
            descriptor
                .durability_in(&props)
                .map(|d| ycsb_results::DurabilityEntry {
                    property: d.property.to_string(),
                    value: d.value,
                    durable: d.durable,
                });
        Ok(Self {
            props,
            descriptor,
            known,
            benchmark,
            client,
            observe,
            hdr,
            metadata,
        })
    }

    /// Checks that `phases` can run with these properties, before a store
    /// is opened: a run phase must have loaded records to choose keys
    /// among unless it only inserts ([`CoreWorkload::check_run_phase`]).
    /// [`Session::execute`] checks it too.
    ///
    /// [`CoreWorkload::check_run_phase`]: crate::workload::CoreWorkload::check_run_phase
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the property the user set.
    pub fn check_phases(&self, phases: &[Phase]) -> Result<(), ConfigError> {
        if phases.contains(&Phase::Run) {
            self.benchmark.workload().check_run_phase()?;
        }
        Ok(())
    }

    /// Records the program and the command line that started the session
    /// (secret values redacted) in the report's metadata.
    pub fn with_invocation(
        mut self,
        tool: &str,
        version: &str,
        command_line: impl IntoIterator<Item = String>,
        git_revision: Option<String>,
    ) -> Self {
        let mut metadata = measurement::run_metadata(tool, version, command_line, &self.known);
        metadata.git_revision = git_revision;
        metadata.store = self.metadata.store.take();
        metadata.durability = self.metadata.durability.take();
        self.metadata = metadata;
        self
    }

    /// The metadata the report will carry (its command line redacted).
    pub fn metadata(&self) -> &RunMetadata {
        &self.metadata
    }

    /// The effective configuration the report will carry (every property
    /// read, secrets redacted).
    pub fn effective_config(&self) -> Vec<ycsb_results::ConfigEntry> {
        effective_config(&self.props, &self.known)
    }

    /// The properties, with a random seed recorded.
    pub fn properties(&self) -> &Properties {
        &self.props
    }

    /// Every property this session reads.
    pub fn known_properties(&self) -> &[&'static PropertyDecl] {
        &self.known
    }

    /// The steady-state window in intervals (`steadystate.window`), by
    /// which [`Stability::too_short`](ycsb_results::Stability::too_short)
    /// judges a phase.
    pub fn steady_state_window(&self) -> usize {
        self.observe.steady_window
    }

    /// The time series' interval, `None` when it is off
    /// (`timeseries.granularity=0`).
    pub fn series_granularity(&self) -> Option<std::time::Duration> {
        self.observe.granularity
    }

    /// Where to serve the live view of the run (`live.port`), if asked.
    pub fn live_settings(&self) -> Option<&LiveSettings> {
        self.observe.live.as_ref()
    }

    /// The validated workload, runner and measurement settings.
    pub fn benchmark(&self) -> &Benchmark {
        &self.benchmark
    }

    /// The phases to run, status lines and the pause between the phases
    /// (`dotransactions`, `doload`, `dotransaction`, `status`, `label`,
    /// `sleepafterload`).
    pub fn client_settings(&self) -> &ClientSettings {
        &self.client
    }

    /// The store's descriptor.
    pub fn descriptor(&self) -> &StoreDescriptor {
        &self.descriptor
    }

    /// The properties set that nothing reads, so that `recordcout=1000`
    /// does not silently run the default.
    pub fn unknown_properties(&self) -> Vec<UnknownProperty> {
        unknown_properties(&self.props, &self.known)
    }

    /// Opens the store with the session's properties; `output` receives
    /// its human-readable output (discarded when `None`).
    ///
    /// # Errors
    ///
    /// The store's [`StoreError`]: a bad store property, an engine that
    /// cannot open.
    pub fn open_store(&self, output: Option<OutputSink>) -> Result<Box<dyn Store>, StoreError> {
        let mut context = StoreContext::new(&self.props);
        if let Some(output) = output {
            context = context.with_output(output);
        }
        (self.descriptor.open)(&context).map_err(|e| self.descriptor.name_server_in(e, &self.props))
    }

    /// Runs `phases` in order on `store`, then writes the export and the
    /// engine's reports and only then closes the store, so that an engine
    /// failing as it closes (a full disk) cannot take the results with it.
    ///
    /// A phase that fails (no thread could run, an incomplete load, the
    /// error budget spent) ends the session: later phases do not run
    /// against a data set with holes. A raised `stop` ends the current
    /// phase early and skips the later ones; that is not a failure.
    ///
    /// # Errors
    ///
    /// A [`SessionError`] with the first failure and the report of what was
    /// measured.
    pub fn execute(
        &self,
        store: Box<dyn Store>,
        phases: &[Phase],
        stop: &StopSignal,
        observer: &mut dyn SessionObserver,
    ) -> Result<RunReport, SessionError> {
        let hooks = self
            .check_phases(phases)
            .and_then(|()| Ok(self.hooks(store.as_ref(), phases, observer)?));
        let mut hooks = match hooks {
            Ok(hooks) => hooks,
            Err(e) => {
                let report = self.report(store.as_ref(), Vec::new());
                if let Err(e) = store.close() {
                    observer.error(&format!("closing the store: {e}"));
                }
                return Err(SessionError {
                    failure: Box::new(SessionFailure::Config(e)),
                    report: Box::new(report),
                });
            }
        };
        let engine = store.engine_info();
        hooks.user.engine_build(&engine, &store.engine_build());
        let held_start = self.hold_start(phases, stop, &mut hooks);
        let mut failure = self.run_phases(store.as_ref(), phases, stop, &mut hooks, &engine);
        finish_hdr_logs(&mut hooks, &mut failure);
        let reports = std::mem::take(&mut hooks.reports);
        let observer = hooks.user;
        let mut report = self.report(store.as_ref(), reports);
        if let Some(start_time) = held_start {
            report.metadata.start_time = start_time;
        }
        self.conclude(store.as_ref(), report, observer, failure)
    }

    /// Waits for `start.at` (held before the first phase, after everything
    /// that can refuse the configuration, so a bad setup fails at once, not
    /// at the start time); the time the phases then started, for the
    /// export.
    fn hold_start(
        &self,
        phases: &[Phase],
        stop: &StopSignal,
        hooks: &mut Hooks<'_>,
    ) -> Option<String> {
        self.benchmark
            .runner_settings()
            .start_at
            .filter(|_| !phases.is_empty())
            .map(|at| {
                hooks
                    .user
                    .start_held(StartHold::new(at, std::time::SystemTime::now()));
                crate::runner::wait_until(at, stop);
                // The merge of several clients' exports checks that their
                // phases overlapped from this time on.
                chrono::Local::now().to_rfc3339()
            })
    }

    /// Runs the phases in order until one fails or `stop` is raised; the
    /// first failure (a phase's, or the time series' while its figures
    /// are still kept).
    fn run_phases(
        &self,
        store: &dyn Store,
        phases: &[Phase],
        stop: &StopSignal,
        hooks: &mut Hooks<'_>,
        engine: &EngineInfo,
    ) -> Option<SessionFailure> {
        let mut failure: Option<SessionFailure> = None;
        for &phase in phases {
            if stop.is_stopped() {
                break;
            }
            if phase == Phase::Run && !self.client.sleep_after_load.is_zero() {
                // YCSB-cpp's sleepafterload, before the run phase whether
                // or not a load preceded it (as ycsbc): the engine settles;
                // a stop request ends the wait.
                sleep_unless_stopped(self.client.sleep_after_load, stop);
                if stop.is_stopped() {
                    break;
                }
            }
            hooks
                .user
                .phase_starting(phase, self.benchmark.runner_settings().threads, engine);
            if let Some(c) = &mut hooks.collector {
                c.start_phase(phase);
            }
            let mut result = self.benchmark.phase(phase, store, stop, hooks);
            let outcome = match &mut result {
                Ok(outcome) => Some(outcome),
                Err(e) => e.outcome_mut(),
            };
            if let Some(outcome) = outcome {
                if let Some(c) = &mut hooks.collector {
                    outcome.report.observation =
                        Some(c.finish_phase(outcome, self.benchmark.workload()));
                    if let Some(e) = c.take_error() {
                        // The phase's figures are still reported and exported.
                        failure.get_or_insert(e.into());
                    }
                }
                hooks.user.phase_finished(outcome);
                for error in &outcome.thread_errors {
                    hooks.user.error(&error.to_string());
                }
                hooks.reports.push(outcome.report.clone());
            }
            if let Err(e) = result {
                failure = Some(e.into());
                break;
            }
        }
        failure
    }

    /// Writes the export and the engine's reports, then closes the store:
    /// the session's result, failed for the first reason (the export's,
    /// the phases', the reports', then the close's).
    fn conclude(
        &self,
        store: &dyn Store,
        report: RunReport,
        observer: &mut dyn SessionObserver,
        failure: Option<SessionFailure>,
    ) -> Result<RunReport, SessionError> {
        observer.export_starting();
        let exported = self.export(&report, observer);
        observer.export_finished(exported.is_ok());
        let saved = self.save_engine_reports(&report.engine_reports, observer);
        let closed = store.close();
        let failure = match (exported.err().or(failure).or(saved.err()), closed) {
            (None, Err(e)) => Some(SessionFailure::Close(e)),
            (Some(first), Err(e)) => {
                // The session fails for the first reason; this one is still said.
                observer.error(&format!("closing the store: {e}"));
                Some(first)
            }
            (first, Ok(())) => first,
        };
        match failure {
            Some(failure) => Err(SessionError {
                failure: Box::new(failure),
                report: Box::new(report),
            }),
            None => Ok(report),
        }
    }

    fn hooks<'a>(
        &'a self,
        store: &'a dyn Store,
        phases: &[Phase],
        user: &'a mut dyn SessionObserver,
    ) -> Result<Hooks<'a>, ObserveError> {
        let collector = match self.observe.granularity {
            None => None,
            Some(_) => {
                let names = store.gauge_names();
                let intended = self.benchmark.measurement_settings().interval
                    == measurement::MeasurementInterval::Both;
                Some(Collector::new(&self.observe, intended, names)?)
            }
        };
        Ok(Hooks {
            collector,
            hdr: HdrLogWriter::new(self.hdr.clone(), phases.len() > 1),
            hdr_errors: Vec::new(),
            user,
            session: self,
            store,
            reports: Vec::new(),
        })
    }

    /// The report of a session whose store is not to be called again (a
    /// thread is stuck inside it): everything but the engine's final
    /// reports.
    fn report_without_engine_reports(
        &self,
        store: &dyn Store,
        phases: Vec<ycsb_results::PhaseReport>,
    ) -> RunReport {
        let engine = store.engine_info();
        let mut metadata = self.metadata.clone();
        if let Some(d) = store.durability() {
            metadata.durability = Some(ycsb_results::DurabilityEntry {
                property: d.property.to_string(),
                value: d.value,
                durable: d.durable,
            });
        }
        if !engine.name.is_empty() {
            metadata.engine = Some(engine.name);
            metadata.engine_version = Some(engine.version);
            metadata.engine_build = Some(measurement::engine_build_entry(&store.engine_build()));
        }
        RunReport {
            schema_version: ycsb_results::SCHEMA_VERSION,
            metadata,
            config: effective_config(&self.props, &self.known),
            phases,
            engine_reports: Vec::new(),
        }
    }

    fn report(&self, store: &dyn Store, phases: Vec<ycsb_results::PhaseReport>) -> RunReport {
        let mut report = self.report_without_engine_reports(store, phases);
        report.engine_reports = store
            .final_reports()
            .into_iter()
            .map(|r| EngineReportEntry {
                name: r.name,
                text: r.text,
            })
            .collect();
        report
    }

    /// Writes the export file atomically, or a non-text export to the
    /// observer's output when no file is set.
    fn export(
        &self,
        report: &RunReport,
        observer: &mut dyn SessionObserver,
    ) -> Result<(), SessionFailure> {
        let settings = self.benchmark.measurement_settings();
        let kind = settings.exporter;
        match &settings.export_file {
            Some(path) => measurement::write_atomically(path, |w| {
                measurement::new_exporter(kind, Box::new(w)).export(report)
            })
            .map_err(|source| SessionFailure::Export {
                what: path.display().to_string(),
                source,
            }),
            None if kind != ExporterKind::Text => match observer.export_output() {
                Some(out) => measurement::new_exporter(kind, Box::new(out))
                    .export(report)
                    .map_err(|source| SessionFailure::Export {
                        what: "the export to standard output".into(),
                        source,
                    }),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    /// Saves each engine report (`rocksdb.stats`, ...) beside the export
    /// file as `<exportfile>.<name>.txt`; without an export file, or with
    /// one that is not a regular file (`/dev/null`: nothing is created in
    /// /dev), they are only in a JSON export.
    ///
    /// Every report is attempted; the first that cannot be written is the
    /// error.
    fn save_engine_reports(
        &self,
        reports: &[EngineReportEntry],
        observer: &mut dyn SessionObserver,
    ) -> Result<(), SessionFailure> {
        let Some(export) = &self.benchmark.measurement_settings().export_file else {
            return Ok(());
        };
        if reports.is_empty() {
            return Ok(());
        }
        if std::fs::metadata(export).is_ok_and(|m| !m.is_file()) {
            observer.on_notice(&format!(
                "engine reports are not written beside {}, which is not a regular file",
                export.display()
            ));
            return Ok(());
        }
        let mut first = None;
        for report in reports {
            let safe: String = report
                .name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let mut name = export.as_os_str().to_owned();
            name.push(format!(".{safe}.txt"));
            let path = PathBuf::from(name);
            match measurement::write_atomically(&path, |w| w.write_all(report.text.as_bytes())) {
                Ok(()) => observer.file_written(&report.name, &path),
                Err(source) => {
                    observer.error(&format!("writing {}: {source}", path.display()));
                    first.get_or_insert(SessionFailure::EngineReport { path, source });
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// Waits `length`, or less when the session is asked to stop.
fn sleep_unless_stopped(length: std::time::Duration, stop: &StopSignal) {
    let end = std::time::Instant::now() + length;
    while !stop.is_stopped() {
        let left = end.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(20)));
    }
}

/// Closes the HdrHistogram logs and names them; a log that could not be
/// written is a result lost, so it fails the session (exit 1) unless an
/// earlier failure already does.
fn finish_hdr_logs(hooks: &mut Hooks<'_>, failure: &mut Option<SessionFailure>) {
    let (logs, log_errors) = hooks.hdr.finish();
    for e in log_errors {
        hooks.user.error(&format!("HdrHistogram log {e}"));
        hooks.hdr_errors.push(e);
    }
    if !hooks.hdr_errors.is_empty() {
        failure.get_or_insert(SessionFailure::HdrLog(hooks.hdr_errors.remove(0)));
    }
    for path in logs {
        hooks.user.file_written("HdrHistogram log", &path);
    }
}

/// The session's own work on the status thread (time series, HdrHistogram
/// logs) around the caller's observer.
struct Hooks<'a> {
    collector: Option<Collector>,
    hdr: HdrLogWriter,
    /// Logs that could not be written, already shown.
    hdr_errors: Vec<measurement::HdrLogError>,
    user: &'a mut dyn SessionObserver,
    /// What the export needs when a stopped phase's threads do not return
    /// (`stop.grace`): the session, its store and the finished phases.
    session: &'a Session,
    store: &'a dyn Store,
    reports: Vec<ycsb_results::PhaseReport>,
}

impl Observer for Hooks<'_> {
    fn on_status(&mut self, update: &StatusUpdate<'_>) {
        if let Some(e) = self.hdr.on_status(update) {
            self.user.error(&format!(
                "HdrHistogram log {e}; no more intervals are logged"
            ));
            self.hdr_errors.push(e);
        }
        self.user.on_status(update);
    }

    fn on_tick(&mut self, tick: &Tick<'_>) {
        if let Some(c) = &mut self.collector {
            c.on_tick(tick);
        }
        self.user.on_tick(tick);
        if let Some(c) = &self.collector {
            if let Some(row) = c.last_row() {
                self.user
                    .interval_observed(tick.phase, row, c.gauge_kinds());
            }
        }
    }

    fn on_notice(&mut self, notice: &str) {
        self.user.on_notice(notice);
    }

    /// Reports and exports what was measured before the caller hears of
    /// the stuck threads, since a caller that cannot wait for them ends
    /// the process there. The engine's final reports are left out: they
    /// would call into the engine the stuck threads are inside.
    fn on_workers_stuck(&mut self, stuck: &mut crate::runner::StuckWorkers) {
        let outcome = &mut stuck.outcome;
        if let Some(c) = &mut self.collector {
            outcome.report.observation =
                Some(c.finish_phase(outcome, self.session.benchmark.workload()));
        }
        self.user.phase_finished(outcome);
        let (logs, log_errors) = std::mem::replace(
            &mut self.hdr,
            HdrLogWriter::new(self.session.hdr.clone(), false),
        )
        .finish();
        for e in log_errors {
            self.user.error(&format!("HdrHistogram log {e}"));
        }
        for path in logs {
            self.user.file_written("HdrHistogram log", &path);
        }
        let mut reports = self.reports.clone();
        reports.push(outcome.report.clone());
        let mut report = self
            .session
            .report_without_engine_reports(self.store, reports);
        report.metadata.stuck_threads = stuck.threads.iter().map(ToString::to_string).collect();
        self.user.export_starting();
        let exported = self.session.export(&report, self.user);
        self.user.export_finished(exported.is_ok());
        if let Err(e) = exported {
            self.user.error(&e.to_string());
        }
        self.user.on_workers_stuck(stuck);
    }
}

/// Checks, before any phase runs, that the export file can be created
/// where it goes: a run of hours must not end in "cannot write".
/// ` (<where it was set>)` for a message about property `name`; empty
/// when it was not set.
fn origin_note(props: &Properties, name: &str) -> String {
    props
        .origin(name)
        .map(|o| format!(" ({o})"))
        .unwrap_or_default()
}

/// The time series' file must be creatable before the store opens: the
/// file itself is created only once the store's gauges (its CSV columns)
/// are known.
fn check_series_file(observe: &ObserveSettings, props: &Properties) -> Result<(), ConfigError> {
    let (Some(path), Some(_)) = (&observe.file, observe.granularity) else {
        return Ok(());
    };
    let name = crate::observe::TIMESERIES_FILE.name();
    measurement::check_output_path(path).map_err(|why| ConfigError::ExportFile {
        message: format!(
            "{name}={}{}: {why}",
            path.display(),
            origin_note(props, name)
        ),
    })
}

/// `name=value (origin)`: an output as the user named it.
fn named_output(props: &Properties, name: &str, value: impl std::fmt::Display) -> String {
    format!("{name}={value}{}", origin_note(props, name))
}

/// Checks, before anything runs, that no output of the session (the
/// export, the HdrHistogram logs, the raw latencies, the time series) is
/// a property file read with `-P` or a file the workload reads, lies in
/// the store's database directory or is another of them
/// ([`crate::outputs::check_outputs`]).
fn check_outputs_apart(
    benchmark: &Benchmark,
    observe: &ObserveSettings,
    hdr: &HdrLogSettings,
    props: &Properties,
    descriptor: &StoreDescriptor,
) -> Result<(), ConfigError> {
    use crate::outputs::{check_outputs, Output, Protected};
    let settings = benchmark.measurement_settings();
    let mut outputs = Vec::new();
    if let Some(path) = &settings.export_file {
        let name = measurement::EXPORT_FILE.name();
        outputs.push(Output::file(
            named_output(props, name, path.display()),
            path,
        ));
    }
    if let Some((name, path)) = latency_file(settings) {
        outputs.push(Output::file(
            named_output(props, name, path.display()),
            path,
        ));
    }
    if let (Some(path), Some(_)) = (&observe.file, observe.granularity) {
        let name = crate::observe::TIMESERIES_FILE.name();
        outputs.push(Output::file(
            named_output(props, name, path.display()),
            path,
        ));
    }
    if hdr.enabled {
        let name = measurement::hdrlog::HDR_OUTPUT_PATH.name();
        outputs.push(Output::hdr_logs(
            named_output(props, name, &hdr.prefix),
            &hdr.prefix,
        ));
    }
    let mut protected = Protected::property_files(props);
    // The workload's own inputs, where the user named one.
    for decl in [
        crate::workload::datafile::DATAFILE.decl(),
        crate::workload::datafile::KEY_FILE.decl(),
        crate::workload::FIELD_LENGTH_HISTOGRAM.decl(),
        crate::runner::LIMIT_FILE.decl(),
    ] {
        if let Some(raw) = props.raw(decl).filter(|raw| raw.origin != Origin::Default) {
            protected.push(Protected::file(
                format!("{}={} ({})", raw.key, raw.value, raw.origin),
                raw.value,
            ));
        }
    }
    if let (Some(dir), Some(decl)) = (descriptor.data_dir_in(props), descriptor.data_dir) {
        protected.push(Protected::directory(
            format!(
                "the {} database directory {}{}",
                descriptor.name,
                dir.display(),
                props
                    .raw(decl)
                    .map(|raw| format!(" ({}, {})", raw.key, raw.origin))
                    .unwrap_or_default()
            ),
            dir,
        ));
    }
    Ok(check_outputs(&outputs, &protected)?)
}

/// The property and file the types that keep every latency write to, if
/// this measurement type writes them to a file.
fn latency_file(settings: &measurement::MeasurementSettings) -> Option<(&'static str, &PathBuf)> {
    match settings.kind {
        ycsb_results::MeasurementType::Csv => settings
            .csv_output_file
            .as_ref()
            .map(|path| (measurement::CSV_OUTPUT_FILE.name(), path)),
        kind if kind.keeps_raw() => settings
            .raw_output_file
            .as_ref()
            .map(|path| (measurement::RAW_OUTPUT_FILE.name(), path)),
        _ => None,
    }
}

/// The file the types that keep every latency write to (Java's
/// `measurement.raw.output_file`, go-ycsb's `measurement.output_file`)
/// must be creatable before anything is measured: a run must not end
/// with its latencies unwritable.
fn check_latency_file(
    settings: &measurement::MeasurementSettings,
    props: &Properties,
) -> Result<(), ConfigError> {
    let Some((property, path)) = latency_file(settings) else {
        return Ok(());
    };
    measurement::check_output_path(path).map_err(|why| ConfigError::ExportFile {
        message: format!(
            "{property}={}{}: {why}",
            path.display(),
            origin_note(props, property)
        ),
    })
}

fn check_export_target(path: Option<&PathBuf>, props: &Properties) -> Result<(), ConfigError> {
    let Some(path) = path else {
        return Ok(());
    };
    let origin = origin_note(props, measurement::EXPORT_FILE.name());
    let bad = |why: String| ConfigError::ExportFile {
        message: format!(
            "{}={}{origin}: {why}",
            measurement::EXPORT_FILE.name(),
            path.display()
        ),
    };
    measurement::check_output_path(path).map_err(bad)?;
    // A device or FIFO (`/dev/null`) is written in place, not replaced.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Ok(());
    }
    // A link to a file is resolved: the temporary file goes beside it.
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    // The export is written to a temporary file beside it, then renamed:
    // creating a file there is what must work.
    let probe = dir.join(format!(".ycsb-export-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(bad(format!(
            "cannot create files in {}: {e}",
            dir.display()
        ))),
    }
}

/// Checks, before any phase runs, that the HdrHistogram logs' directory
/// exists: it is not created silently.
fn check_hdr_prefix(hdr: &HdrLogSettings, props: &Properties) -> Result<(), ConfigError> {
    if !hdr.enabled {
        return Ok(());
    }
    let name = measurement::hdrlog::HDR_OUTPUT_PATH.name();
    let probe = PathBuf::from(format!("{}READ.hdr", hdr.prefix));
    measurement::check_output_path(&probe).map_err(|why| {
        let origin = origin_note(props, name);
        let why = why.trim_start_matches("cannot be written: ");
        ConfigError::ExportFile {
            message: format!("{name}={}{origin}: {why}", hdr.prefix),
        }
    })
}

/// Every set property that none of `known` reads (by name or alias), each
/// with the nearest known name ([`ycsb_db::nearest_name`]).
pub fn unknown_properties(props: &Properties, known: &[&PropertyDecl]) -> Vec<UnknownProperty> {
    props
        .unknown(known.iter().copied())
        .into_iter()
        .map(|(key, origin)| {
            let suggestion = ycsb_db::nearest_name(
                key,
                known
                    .iter()
                    .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied())),
            );
            let instead = FOREIGN_PROPERTIES
                .iter()
                .find(|(name, _)| *name == key)
                .map(|(_, instead)| *instead);
            UnknownProperty {
                key: key.to_string(),
                origin: origin.clone(),
                suggestion,
                instead,
            }
        })
        .collect()
}
