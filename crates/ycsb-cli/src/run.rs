//! `ycsb load|run` and `ycsb -load -run`: the benchmark phases.

use std::ffi::OsString;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ycsb_core::measurement::{
    self, effective_config, EngineReportEntry, ExporterKind, MeasurementSettings, PhaseReport,
    RunMetadata, RunReport, StatusLine,
};
use ycsb_core::runner::{
    self, Observer, Phase, PhaseOutcome, RunnerSettings, StatusUpdate, StopSignal, Tick,
};
use ycsb_core::workload::CoreWorkload;
use ycsb_db::{Origin, PropertyDecl, StoreContext};

use crate::args::{Benchmark, Style};
use crate::{
    build_properties, core_properties, find_store, warn_unknown, Failure, EXIT_INTERRUPTED,
};

/// Prints Java's status line on standard error when `-s` was given.
struct StatusPrinter {
    enabled: bool,
    hdr: crate::hdrlog::HdrLogWriter,
    observe: crate::observe::ObserveHook,
}

impl Observer for StatusPrinter {
    fn on_tick(&mut self, tick: &Tick<'_>) {
        self.observe.on_tick(tick);
    }

    fn on_status(&mut self, update: &StatusUpdate<'_>) {
        self.hdr.on_status(update);
        self.observe.on_status(update);
        if !self.enabled {
            return;
        }
        let line = StatusLine {
            label: "",
            now: chrono::Local::now().naive_local(),
            elapsed: update.elapsed,
            total_operations: update.operations,
            interval_operations: update.interval_operations,
            interval: update.interval_length,
            remaining_operations: update.total_operations.saturating_sub(update.operations),
        };
        let mut text = measurement::format_status_line(&line, update.interval);
        for gauge in update.gauges {
            text.push_str(&format!(" [{}={}]", gauge.name, gauge.value));
        }
        eprintln!("{text}");
    }

    fn on_notice(&mut self, notice: &str) {
        self.observe.clear_progress();
        eprintln!("ycsb: {notice}");
    }
}

pub fn benchmark(bench: Benchmark, argv: &[OsString]) -> Result<u8, Failure> {
    let mut props = build_properties(&bench.sources)?;
    let descriptor = find_store(&bench.db)?;
    let mut known: Vec<&PropertyDecl> = Vec::new();
    for (_, decls) in core_properties() {
        known.extend_from_slice(decls);
    }
    known.extend_from_slice(descriptor.properties);
    warn_unknown(&props, &known);

    let workload = CoreWorkload::from_properties(&props).map_err(Failure::usage)?;
    let runner_settings = RunnerSettings::from_properties(&props).map_err(Failure::usage)?;
    let mut measurement_settings =
        MeasurementSettings::from_properties(&props).map_err(Failure::usage)?;
    if runner_settings.target.is_some() && !props.is_set(measurement::MEASUREMENT_INTERVAL.decl()) {
        // With a target the schedule gives every operation an intended
        // start; report the latency from it beside the service time unless
        // the user chose otherwise (Java needs measurement.interval=both).
        measurement_settings.interval = measurement::MeasurementInterval::Both;
    }
    check_export_target(&measurement_settings, &props)?;
    if runner_settings.seed_is_random {
        // Recorded so that the export says how to reproduce the run.
        props.set("seed", runner_settings.seed.to_string(), Origin::Default);
    }

    let command_line = argv.iter().map(|a| a.to_string_lossy().into_owned());
    let mut metadata = RunMetadata::new("ycsb", env!("CARGO_PKG_VERSION"), command_line, &known);
    metadata.git_revision = option_env!("YCSB_GIT_REVISION").map(str::to_string);
    // The metadata's copy has secrets redacted; never echo raw arguments.
    eprintln!("Command line: {}", metadata.command_line.join(" "));
    eprintln!(
        "ycsb {} ({} store)",
        env!("CARGO_PKG_VERSION"),
        descriptor.name
    );

    let stop = StopSignal::new();
    let signalled = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        let signalled = signalled.clone();
        // A second signal ends the process at once, for a store that hangs.
        let _ = ctrlc::set_handler(move || {
            if signalled.swap(true, Ordering::SeqCst) {
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
            stop.stop();
        });
    }

    let output: ycsb_db::OutputSink = Arc::new(Mutex::new(std::io::stdout()));
    let context = StoreContext::new(&props).with_output(output);
    let store = (descriptor.open)(&context).map_err(Failure::usage)?;
    let engine = store.engine_info();

    let mut phases: Vec<PhaseReport> = Vec::new();
    let mut observer = StatusPrinter {
        enabled: bench.status,
        hdr: crate::hdrlog::HdrLogWriter::new(
            measurement::HdrLogSettings::from_properties(&props).map_err(Failure::usage)?,
            bench.load && bench.run,
        ),
        observe: crate::observe::ObserveHook::new(
            &props,
            measurement_settings.interval,
            store.as_ref(),
            bench.status,
            runner_settings.max_execution_time,
        )?,
    };
    let mut failure: Option<Failure> = None;
    let requested: Vec<Phase> = [(bench.load, Phase::Load), (bench.run, Phase::Run)]
        .into_iter()
        .filter_map(|(on, phase)| on.then_some(phase))
        .collect();
    for phase in requested {
        if stop.is_stopped() {
            break;
        }
        eprintln!(
            "{} phase: {} threads{}",
            phase.name(),
            runner_settings.threads,
            if engine.version.is_empty() {
                String::new()
            } else {
                format!(", {} {}", engine.name, engine.version)
            }
        );
        observer.observe.start_phase(phase);
        match runner::run_phase(
            phase,
            &workload,
            store.as_ref(),
            &runner_settings,
            &measurement_settings,
            &stop,
            &mut observer,
        ) {
            Ok(mut outcome) => {
                if let Err(e) = observer.observe.finish_phase(&mut outcome, &workload) {
                    // The phase's figures are still reported and exported.
                    failure.get_or_insert(e);
                }
                report_phase(&bench, &measurement_settings, &outcome)?;
                for error in &outcome.thread_errors {
                    eprintln!("ycsb: error: {error}");
                }
                let budget_spent = outcome.error_budget_spent;
                let (operations, interrupted) = (outcome.operations, outcome.interrupted);
                phases.push(outcome.report);
                if let Some(failed) = budget_spent {
                    // The report and exports are still written below.
                    failure = Some(Failure::runtime(format!(
                        "{} phase stopped: {failed} operations failed, more than errorbudget={} allows (their statuses are the Return= lines of the report)",
                        phase.name(),
                        runner_settings.error_budget.unwrap_or(0)
                    )));
                    break;
                }
                if phase == Phase::Load && !interrupted && operations < workload.insert_count() {
                    // A load thread stops at an insert that fails for good
                    // (as in Java); a data set with holes must not pass
                    // for a complete one, nor be run against.
                    failure = Some(Failure::runtime(format!(
                        "load phase incomplete: {operations} of {} records inserted (see the messages above and the Return= lines of the report)",
                        workload.insert_count()
                    )));
                    break;
                }
            }
            Err(e) => {
                failure = Some(Failure::runtime(e));
                break;
            }
        }
    }
    for path in observer.hdr.finish() {
        eprintln!("HdrHistogram log: {}", path.display());
    }
    let engine_reports: Vec<EngineReportEntry> = store
        .final_reports()
        .into_iter()
        .map(|r| EngineReportEntry {
            name: r.name,
            text: r.text,
        })
        .collect();
    metadata.store = Some(descriptor.name.to_string());
    if !engine.name.is_empty() {
        metadata.engine = Some(engine.name.clone());
        metadata.engine_version = Some(engine.version.clone());
    }
    let config = effective_config(&props, &known);
    let run_report = RunReport {
        metadata,
        config,
        phases,
        engine_reports,
    };
    // Results are written before the store closes: an engine that fails
    // while closing (a full disk) cannot take them with it.
    let exported = export(&measurement_settings, &run_report);
    save_engine_reports(&measurement_settings, &run_report.engine_reports);
    if let Err(e) = store.close() {
        eprintln!("ycsb: error: closing the store: {e}");
    }
    exported?;
    if let Some(failure) = failure {
        return Err(failure);
    }
    Ok(if signalled.load(Ordering::SeqCst) {
        EXIT_INTERRUPTED
    } else {
        0
    })
}

/// Prints a finished phase's report on standard output (unless it goes to
/// an export file), with YCSB-cpp's summary lines in its form.
fn report_phase(
    bench: &Benchmark,
    settings: &MeasurementSettings,
    outcome: &PhaseOutcome,
) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let to_stdout = settings.export_file.is_none() && settings.exporter == ExporterKind::Text;
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        if to_stdout {
            measurement::TextExporter::new(&mut *out).write_phase(&outcome.report)?;
        }
        if bench.style == Style::Cpp {
            let label = match outcome.phase {
                Phase::Load => "Load",
                Phase::Run => "Run",
            };
            let seconds = outcome.runtime.as_secs_f64();
            writeln!(out, "{label} runtime(sec): {seconds:.3}")?;
            writeln!(out, "{label} operations(ops): {}", outcome.operations)?;
            writeln!(
                out,
                "{label} throughput(ops/sec): {:.0}",
                outcome.report.throughput
            )?;
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
    };
    write(&mut out)
        .map_err(|e| Failure::runtime(format!("writing the report to standard output: {e}")))
}

/// Checks, before any phase runs, that the export file can be created
/// where it goes: a run of hours must not end in "cannot write".
fn check_export_target(
    settings: &MeasurementSettings,
    props: &ycsb_db::Properties,
) -> Result<(), Failure> {
    let Some(path) = &settings.export_file else {
        return Ok(());
    };
    let origin = props
        .origin(measurement::EXPORT_FILE.name())
        .map(|o| format!(" ({o})"))
        .unwrap_or_default();
    let bad = |why: String| {
        Failure::usage(format!(
            "{}={}{origin}: {why}",
            measurement::EXPORT_FILE.name(),
            path.display()
        ))
    };
    if path.is_dir() {
        return Err(bad("is a directory".into()));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(bad(format!("directory {} does not exist", dir.display())));
    }
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

/// Saves each engine report (`rocksdb.stats`, ...) beside the export file
/// as `<exportfile>.<name>.txt`; without an export file they are only in
/// a JSON export.
fn save_engine_reports(settings: &MeasurementSettings, reports: &[EngineReportEntry]) {
    let Some(export) = &settings.export_file else {
        return;
    };
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
        let path = std::path::PathBuf::from(name);
        match measurement::write_atomically(&path, |w| w.write_all(report.text.as_bytes())) {
            Ok(()) => eprintln!("{}: {}", report.name, path.display()),
            Err(e) => eprintln!("ycsb: error: writing {}: {e}", path.display()),
        }
    }
}

/// Writes the export file, atomically, with every phase.
fn export(settings: &MeasurementSettings, report: &RunReport) -> Result<(), Failure> {
    match &settings.export_file {
        Some(path) => {
            let kind = settings.exporter;
            measurement::write_atomically(path, |w| {
                measurement::new_exporter(kind, Box::new(w)).export(report)
            })
            .map_err(|e| Failure::runtime(format!("writing {}: {e}", path.display())))
        }
        None if settings.exporter != ExporterKind::Text => {
            measurement::new_exporter(settings.exporter, Box::new(std::io::stdout().lock()))
                .export(report)
                .map_err(|e| {
                    Failure::runtime(format!("writing the export to standard output: {e}"))
                })
        }
        None => Ok(()),
    }
}
