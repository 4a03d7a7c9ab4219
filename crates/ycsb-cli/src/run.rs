//! `ycsb load|run` and `ycsb -load -run`: argv into a `ycsb_core::Session`,
//! and what the session shows printed in Java's and YCSB-cpp's forms.

use std::ffi::OsString;
use std::io::Write;
use std::sync::{Arc, Mutex};

use ycsb_core::measurement::{self, ExporterKind, JavaReport as _, StatusLine};
use ycsb_core::{Observer, StartHold, StatusUpdate, Tick};
use ycsb_core::{
    Phase, PhaseOutcome, Session, SessionError, SessionFailure, SessionObserver, StopSignal,
};
use ycsb_db::{EngineBuild, EngineInfo};

use crate::args::{Benchmark, Style};
use crate::interrupt::Interrupts;
use crate::{
    build_properties_quietly, find_store, print_unknown, print_warnings, Failure, EXIT_INTERRUPTED,
};

/// Prints what a session shows: Java's status line on standard error with
/// `-s`, each phase's report on standard output, the progress bar and the
/// observation summaries.
struct Printer {
    status: bool,
    /// Java's `standardstatus`: with `measurementtype=timeseries` its
    /// status thread prints each line on standard output too.
    status_to_stdout: bool,
    /// The engine gauges status lines show (`status.gauges`): Java's line
    /// stays one line unless asked; the series has every gauge.
    status_gauges: Vec<String>,
    /// Java's `-l`: put directly before each status line's date.
    label: String,
    style: Style,
    /// Whether the text report goes to standard output phase by phase.
    text_to_stdout: bool,
    /// go-ycsb's `outputstyle`: its summary on standard output instead of
    /// Java's text report.
    output_style: Option<measurement::OutputStyle>,
    observe: crate::observe::ObserveHook,
    stdout: std::io::Stdout,
    /// The first failure to write the report to standard output.
    write_error: Option<std::io::Error>,
    /// Told when the export starts and ends (a second Ctrl-C).
    interrupts: Interrupts,
    /// Where the types that keep every latency write them (standard output
    /// when unset): Java's `measurement.raw.output_file`, go-ycsb's
    /// `measurement.output_file` for `csv`.
    raw_output: Option<std::path::PathBuf>,
    /// Whether a phase wrote its latencies already: the first write of
    /// go-ycsb's `csv` empties the file (go-ycsb creates it anew; Java
    /// appends) and heads the table, later phases append rows to it.
    raw_written: bool,
    /// The live view's feed (`live.port`).
    live: Option<crate::live::LiveFeed>,
}

impl Observer for Printer {
    fn on_tick(&mut self, tick: &Tick<'_>) {
        self.observe.on_tick(tick);
    }

    fn on_status(&mut self, update: &StatusUpdate<'_>) {
        self.observe.on_status(update);
        if !self.status {
            return;
        }
        let line = StatusLine {
            label: &self.label,
            now: chrono::Local::now().naive_local(),
            elapsed: update.elapsed,
            total_operations: update.operations,
            interval_operations: update.interval_operations,
            interval: update.interval_length,
            remaining_operations: update.total_operations.saturating_sub(update.operations),
        };
        let mut text = measurement::format_status_line(&line, update.interval);
        let all = self.status_gauges.iter().any(|g| g == "all");
        for gauge in update.gauges {
            if all || self.status_gauges.contains(&gauge.name) {
                text.push_str(&format!(" [{}={}]", gauge.name, gauge.value));
            }
        }
        eprintln!("{text}");
        if self.status_to_stdout {
            let mut out = self.stdout.lock();
            if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
                self.write_error.get_or_insert(e);
            }
        }
    }

    fn on_notice(&mut self, notice: &str) {
        self.observe.clear_progress();
        eprintln!("ycsb: {notice}");
    }

    /// The session has printed and exported what was measured: the
    /// threads named here may never return, so the process ends now,
    /// without waiting for them or closing the store they are inside.
    fn on_workers_stuck(&mut self, stuck: &mut ycsb_core::StuckWorkers) {
        self.observe.clear_progress();
        for thread in &stuck.threads {
            eprintln!("ycsb: error: {thread}");
        }
        eprintln!(
            "ycsb: error: the {} phase was stopped {:.0} s ago (stop.grace) and the store has not returned: \
             the report and the export hold what was measured; exiting with status 1 without closing the store",
            stuck.outcome.phase.name(),
            stuck.waited.as_secs_f64()
        );
        crate::interrupt::exit_now(1);
    }
}

impl SessionObserver for Printer {
    fn phase_starting(&mut self, phase: Phase, threads: usize, engine: &EngineInfo) {
        eprintln!(
            "{} phase: {threads} threads{}",
            phase.name(),
            if engine.version.is_empty() {
                String::new()
            } else {
                format!(", {} {}", engine.name, engine.version)
            }
        );
        self.observe.start_phase();
        if let Some(live) = &self.live {
            live.phase_starting(phase);
        }
    }

    fn interval_observed(
        &mut self,
        phase: Phase,
        row: &ycsb_results::SeriesRow,
        gauge_kinds: &std::collections::BTreeMap<String, ycsb_core::db::GaugeKind>,
    ) {
        if let Some(live) = &self.live {
            live.interval_observed(phase, row, gauge_kinds);
        }
    }

    fn start_held(&mut self, hold: StartHold) {
        let rfc3339 = |at: std::time::SystemTime| {
            chrono::DateTime::<chrono::Utc>::from(at)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        };
        match hold {
            StartHold::Waiting { at, wait } => eprintln!(
                "ycsb: start.at: holding until {} ({:.1} s from now)",
                rfc3339(at),
                wait.as_secs_f64()
            ),
            StartHold::Passed { at, late } => eprintln!(
                "ycsb: warning: start.at {} passed {:.1} s ago; starting at once",
                rfc3339(at),
                late.as_secs_f64()
            ),
        }
    }

    fn engine_build(&mut self, engine: &EngineInfo, build: &EngineBuild) {
        if let Some(line) = crate::engine_line(engine, build) {
            eprintln!("{line}");
        }
        if let Some(warning) = build.warning() {
            eprintln!("{warning}");
        }
    }

    fn phase_finished(&mut self, outcome: &PhaseOutcome) {
        if let Some(live) = &self.live {
            live.phase_finished(outcome);
        }
        self.observe.finish_phase(outcome);
        if let Err(e) = self.print_phase(outcome) {
            self.write_error.get_or_insert(e);
        }
    }

    fn error(&mut self, message: &str) {
        self.observe.clear_progress();
        eprintln!("ycsb: error: {message}");
    }

    fn file_written(&mut self, what: &str, path: &std::path::Path) {
        eprintln!("{what}: {}", path.display());
    }

    fn export_starting(&mut self) {
        self.interrupts.export_starting();
    }

    fn export_finished(&mut self, _written: bool) {
        self.interrupts.export_finished();
    }

    fn export_output(&mut self) -> Option<&mut dyn Write> {
        Some(&mut self.stdout)
    }
}

impl Printer {
    /// Names each gauge `status.gauges` asks for that the store does not
    /// list (checked once, as the store opens).
    fn check_status_gauges(&self, known: &[String]) {
        for wanted in &self.status_gauges {
            if wanted != "all" && !known.contains(wanted) {
                let has = if known.is_empty() {
                    "it reports none".to_string()
                } else {
                    format!("it has {}", known.join(", "))
                };
                eprintln!("ycsb: status.gauges: the store reports no gauge '{wanted}' ({has})");
            }
        }
    }

    /// Writes the raw types' latencies where Java's `OneMeasurementRaw`
    /// does (appended to `measurement.raw.output_file`) or go-ycsb's `csv`
    /// does (`measurement.output_file`, emptied by the run's first phase),
    /// or to standard output.
    fn write_raw(&mut self, report: &ycsb_results::PhaseReport) -> std::io::Result<()> {
        let continued = std::mem::replace(&mut self.raw_written, true);
        let fresh =
            !continued && report.format.measurement_type == ycsb_results::MeasurementType::Csv;
        let write = |out: &mut dyn std::io::Write| {
            if continued {
                report.write_raw_continued(out)
            } else {
                report.write_raw(out)
            }
        };
        match &self.raw_output {
            Some(path) => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(!fresh)
                    .write(true)
                    .truncate(fresh)
                    .open(path)
                    .map_err(|e| {
                        std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
                    })?;
                let mut out = std::io::BufWriter::new(file);
                write(&mut out)?;
                out.flush()
            }
            None => {
                let mut out = self.stdout.lock();
                write(&mut out)?;
                out.flush()
            }
        }
    }

    /// Prints a finished phase's report on standard output (unless it goes
    /// to an export file), with YCSB-cpp's summary lines in its form.
    fn print_phase(&mut self, outcome: &PhaseOutcome) -> std::io::Result<()> {
        if outcome.report.has_raw() {
            self.write_raw(&outcome.report)?;
        }
        let mut out = self.stdout.lock();
        if let Some(style) = self.output_style {
            measurement::write_go_summary(&outcome.report, style, &mut out)?;
        } else if self.text_to_stdout {
            measurement::TextExporter::new(&mut out).write_phase(&outcome.report)?;
        }
        if self.style == Style::Cpp {
            let label = match outcome.phase {
                Phase::Load => "Load",
                Phase::Run => "Run",
            };
            let seconds = outcome.runtime.as_secs_f64();
            writeln!(out, "{label} runtime(sec): {seconds:.3}")?;
            writeln!(out, "{label} operations(ops): {}", outcome.operations)?;
            // YCSB-cpp divides by its exact runtime (Java's report line
            // divides by whole milliseconds).
            let throughput = if seconds > 0.0 {
                outcome.operations as f64 / seconds
            } else {
                0.0
            };
            writeln!(out, "{label} throughput(ops/sec): {throughput:.0}")?;
        }
        if outcome.interrupted {
            writeln!(
                out,
                "# {} phase interrupted after {} operations",
                outcome.phase.name(),
                outcome.operations
            )?;
        }
        out.flush()
    }
}

/// The live view, when `live.port` asks for one.
fn start_live_view(
    session: &Session,
    phases: &[Phase],
    store: &str,
) -> Result<Option<crate::live::LiveView>, Failure> {
    let Some(settings) = session.live_settings() else {
        return Ok(None);
    };
    let granularity = session.series_granularity().unwrap_or_default();
    let title = format!(
        "ycsb {} {store}",
        phases
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(" + "),
    );
    crate::live::LiveView::start(
        settings,
        granularity,
        title,
        session.metadata(),
        &session.effective_config(),
    )
    .map(Some)
    .map_err(Failure::usage)
}

/// The exit status of a session: 0, the interrupted status, or the
/// failure (bad input found late is a usage error). A lost export prints
/// the results as text instead, unless they already went to standard
/// output.
fn exit_status(
    result: Result<ycsb_results::RunReport, SessionError>,
    interrupted: bool,
    text_to_stdout: bool,
) -> Result<u8, Failure> {
    match result {
        Ok(_) if interrupted => Ok(EXIT_INTERRUPTED),
        Ok(_) => Ok(0),
        // A time-series file that cannot be created is bad input, found
        // only once the store is open (its gauges name the CSV columns).
        Err(SessionError { failure, report }) => match *failure {
            SessionFailure::Config(e) => Err(Failure::usage(e)),
            SessionFailure::Export { what, source } => {
                // The export file is lost, not the results: they go to
                // standard output as text.
                if !text_to_stdout {
                    let mut out = std::io::stdout().lock();
                    let _ = measurement::Exporter::export(
                        &mut measurement::TextExporter::new(&mut out),
                        &report,
                    );
                }
                Err(Failure::runtime(SessionFailure::Export { what, source }))
            }
            other => Err(Failure::runtime(other)),
        },
    }
}

/// Runs the phases. Nothing is printed until every input is known to be
/// good and the store is open (its properties are checked as it opens):
/// a bad input is one line on standard error, without Java's header.
pub fn benchmark(bench: Benchmark, argv: &[OsString]) -> Result<u8, Failure> {
    let (props, warnings) = build_properties_quietly(&bench.sources)?;
    let descriptor = find_store(&bench.db)?;
    let session = Session::new(props, descriptor)
        .map_err(Failure::usage)?
        .with_invocation(
            "ycsb",
            env!("CARGO_PKG_VERSION"),
            argv.iter().map(|a| a.to_string_lossy().into_owned()),
            option_env!("YCSB_GIT_REVISION").map(str::to_string),
        );
    let client = session.client_settings().clone();
    let phases = client.phases.clone();
    session.check_phases(&phases).map_err(Failure::usage)?;

    let stop = StopSignal::new();
    let settings = session.benchmark().measurement_settings();
    let unwritten = match &settings.export_file {
        Some(path) => format!("the export {}", path.display()),
        None => "the interrupted phase's report and the export".to_string(),
    };
    let interrupts = Interrupts::install(stop.clone(), unwritten);
    let output: ycsb_db::OutputSink = Arc::new(Mutex::new(std::io::stdout()));
    let live = start_live_view(&session, &phases, descriptor.name)?;
    let store = session.open_store(Some(output)).map_err(Failure::usage)?;
    print_warnings(&warnings);
    print_unknown(&session.unknown_properties());
    // The metadata's copy has secrets redacted; never echo raw arguments.
    eprintln!(
        "Command line: {}",
        session.metadata().command_line.join(" ")
    );
    eprintln!(
        "ycsb {} ({} store)",
        env!("CARGO_PKG_VERSION"),
        descriptor.name
    );
    if let (Some(view), Some(settings)) = (&live, session.live_settings()) {
        crate::live::announce(view, settings.address);
    }
    let mut printer = Printer {
        status: client.status,
        status_to_stdout: client.status
            && settings.kind == ycsb_results::MeasurementType::TimeSeries,
        status_gauges: settings.status_gauges.clone(),
        label: client.label,
        style: bench.style,
        text_to_stdout: settings.export_file.is_none() && settings.exporter == ExporterKind::Text,
        output_style: settings.output_style,
        observe: crate::observe::ObserveHook::new(
            client.status,
            session.benchmark().runner_settings().max_execution_time,
            session.steady_state_window(),
        ),
        stdout: std::io::stdout(),
        write_error: None,
        interrupts: interrupts.clone(),
        raw_output: if settings.kind == ycsb_results::MeasurementType::Csv {
            settings.csv_output_file.clone()
        } else {
            settings.raw_output_file.clone()
        },
        raw_written: false,
        live: live.as_ref().map(crate::live::LiveView::feed),
    };
    printer.check_status_gauges(&store.gauge_names());
    let result = session.execute(store, &phases, &stop, &mut printer);
    // A Ctrl-C while the live view lingers ends that, not the run.
    let interrupted = interrupts.signalled();
    if let Some(view) = &live {
        let report = match &result {
            Ok(report) => report,
            Err(e) => &e.report,
        };
        view.finish(report);
        view.linger(&stop);
    }
    if let Some(e) = printer.write_error {
        return Err(Failure::runtime(format!(
            "writing the report to standard output: {e}"
        )));
    }
    exit_status(result, interrupted, printer.text_to_stdout)
}
