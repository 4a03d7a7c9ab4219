//! `ycsb`: Java YCSB's and YCSB-cpp's command lines on ycsb-rs.
//!
//! The binary is thin: it parses the command line ([`args`]), builds the
//! properties, looks up the store ([`registry`]) and drives
//! `ycsb_core::runner`. It is the only place that prints or exits.

mod args;
mod registry;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ycsb_core::measurement::{
    self, effective_config, ExporterKind, MeasurementSettings, PhaseReport, RunMetadata, RunReport,
    StatusLine,
};
use ycsb_core::properties::load_file;
use ycsb_core::runner::{
    self, Observer, Phase, PhaseOutcome, RunnerSettings, StatusUpdate, StopSignal,
};
use ycsb_core::workload::{self, CoreWorkload};
use ycsb_db::{Origin, Properties, PropertyDecl, StoreContext, StoreDescriptor};

use crate::args::{Benchmark, Invocation, PropertySource, Style};

/// Exit status for bad input (command line, properties, files).
const EXIT_USAGE: u8 = 2;
/// Exit status when a run was stopped by Ctrl-C or SIGTERM (its partial
/// report is still written).
const EXIT_INTERRUPTED: u8 = 130;

/// An error that ends the program: a message (one line) and an exit code.
struct Failure {
    message: String,
    code: u8,
}

impl Failure {
    fn usage(message: impl std::fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: EXIT_USAGE,
        }
    }

    fn runtime(message: impl std::fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: 1,
        }
    }
}

fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let result = args::parse(argv.iter().skip(1).cloned())
        .map_err(Failure::usage)
        .and_then(|invocation| execute(invocation, &argv));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("ycsb: error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

fn execute(invocation: Invocation, argv: &[OsString]) -> Result<u8, Failure> {
    match invocation {
        Invocation::Help => {
            print!("{}", help_text());
            Ok(0)
        }
        Invocation::Version => {
            println!("ycsb {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        Invocation::Stores => {
            for store in registry::stores() {
                println!("{:<10} {}", store.name, store.summary);
            }
            Ok(0)
        }
        Invocation::Properties { markdown } => {
            print!("{}", properties_reference(markdown));
            Ok(0)
        }
        Invocation::Benchmark(bench) => benchmark(bench, argv),
        Invocation::Serve(serve) => serve_store(serve),
    }
}

/// `ycsb serve`: opens an embedded store once and serves it over RESP
/// and/or HTTP until Ctrl-C or SIGTERM.
fn serve_store(serve: args::Serve) -> Result<u8, Failure> {
    use ycsb_server::{http, resp};
    let props = build_properties(&serve.sources)?;
    let descriptor = find_store(&serve.db)?;
    let mut known: Vec<&PropertyDecl> = descriptor.properties.to_vec();
    known.extend_from_slice(resp::PROPERTIES);
    known.extend_from_slice(http::PROPERTIES);
    warn_unknown(&props, &known);
    let resp_config = resp::RespServerConfig::from_properties(&props).map_err(Failure::usage)?;
    let http_config = http::HttpServerConfig::from_properties(&props).map_err(Failure::usage)?;

    let stop = StopSignal::new();
    {
        let stop = stop.clone();
        let _ = ctrlc::set_handler(move || stop.stop());
    }
    let context = StoreContext::new(&props);
    let store: Arc<dyn ycsb_db::Store> =
        Arc::from((descriptor.open)(&context).map_err(Failure::usage)?);
    let engine = store.engine_info();
    let describe = |protocol: &str, addr: std::net::SocketAddr| {
        let scope = if addr.ip().is_loopback() {
            "loopback only"
        } else {
            "reachable from other hosts"
        };
        eprintln!(
            "ycsb serve: {} store{} over {protocol} at {addr} ({scope})",
            descriptor.name,
            if engine.version.is_empty() {
                String::new()
            } else {
                format!(" ({} {})", engine.name, engine.version)
            },
        );
    };
    let resp_handle = match serve.resp {
        Some(addr) => {
            let handle =
                resp::serve_resp(store.clone(), addr, resp_config).map_err(Failure::runtime)?;
            describe("RESP", handle.local_addr());
            Some(handle)
        }
        None => None,
    };
    let http_handle = match serve.http {
        Some(addr) => {
            let handle =
                http::serve_http(store.clone(), addr, http_config).map_err(Failure::runtime)?;
            describe("HTTP", handle.local_addr());
            Some(handle)
        }
        None => None,
    };
    eprintln!("ycsb serve: press Ctrl-C to stop");
    while !stop.is_stopped() {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    eprintln!("ycsb serve: stopping");
    if let Some(h) = resp_handle {
        h.stop().map_err(Failure::runtime)?;
    }
    if let Some(h) = http_handle {
        h.stop().map_err(Failure::runtime)?;
    }
    store.close().map_err(Failure::runtime)?;
    Ok(0)
}

/// The properties every benchmark reads, whatever the store.
fn core_properties() -> Vec<(&'static str, &'static [&'static PropertyDecl])> {
    vec![
        ("CoreWorkload", workload::PROPERTIES),
        ("Runner", runner::PROPERTIES),
        ("Measurement", measurement::PROPERTIES),
    ]
}

fn help_text() -> String {
    let mut stores = String::new();
    for s in registry::stores() {
        stores.push_str(&format!("  {:<10} {}\n", s.name, s.summary));
    }
    format!(
        "ycsb {version}: benchmark key-value stores with YCSB's workloads

Usage (Java YCSB's form):
  ycsb load <db> [options]      insert the data set
  ycsb run <db> [options]       run the operation mix

Usage (YCSB-cpp's form):
  ycsb -load -run -db <db> [options]   both phases in one process, one store

Other commands:
  ycsb serve <db> [-P f] [-p k=v] [--resp ADDR|off] [--http ADDR|off]
                                serve an embedded store over RESP (default 127.0.0.1:6379)
                                and simpleleveldb-style HTTP (default 127.0.0.1:8080)
                                until Ctrl-C; a bare port means 127.0.0.1:<port>
  ycsb stores                   list the stores
  ycsb properties [--markdown]  list every property with its default and meaning
  ycsb --help | --version

Options:
  -P <file>        read a property file (Java .properties syntax)
  -p <key>=<value> set a property
  -threads <n>     client threads (property threadcount, default 1)
  -target <n>      target operations per second over all threads (property target);
                   latency is then also measured from each operation's intended start
  -s               print a status line every status.interval seconds on standard error
  -load, -run, -t  (YCSB-cpp form) the phases to run; -t means -run
  -db <name>       (YCSB-cpp form) the store

-P and -p apply in the order given; the last setting of a property wins.
The final report is printed on standard output in Java YCSB's format;
-p exporter=json -p exportfile=<path> also writes a JSON document.

Stores:
{stores}
Examples:
  ycsb load basic -P workloads/workloada -s
  ycsb -load -run -db memory -P workloads/workloada -p operationcount=100000 -threads 2
",
        version = env!("CARGO_PKG_VERSION"),
    )
}

/// The reference of every property, generated from the declarations.
fn properties_reference(markdown: bool) -> String {
    let mut groups = core_properties();
    let stores = registry::stores();
    for store in &stores {
        groups.push((store.name, store.properties));
    }
    let mut out = String::new();
    if markdown {
        out.push_str("# Properties\n\nGenerated by `ycsb properties --markdown` from the property declarations; do not edit by hand.\n");
    }
    for (group, decls) in groups {
        if decls.is_empty() {
            continue;
        }
        if markdown {
            out.push_str(&format!(
                "\n## {group}\n\n| property | type | default | meaning |\n|---|---|---|---|\n"
            ));
        } else {
            out.push_str(&format!("\n{group}\n"));
        }
        for d in decls {
            let mut name = d.name.to_string();
            if !d.aliases.is_empty() {
                name.push_str(&format!(" (alias {})", d.aliases.join(", ")));
            }
            let default = d.default.unwrap_or("(unset)");
            if markdown {
                let default = if default.is_empty() {
                    "(empty)"
                } else {
                    default
                };
                out.push_str(&format!(
                    "| `{name}` | {} | `{}` | {} |\n",
                    d.kind,
                    default.replace('|', "\\|"),
                    d.doc.replace('|', "\\|")
                ));
            } else {
                out.push_str(&format!(
                    "  {name} = {default}  [{}]\n      {}\n",
                    d.kind, d.doc
                ));
            }
        }
    }
    out
}

/// Builds the properties from the sources in argv order.
fn build_properties(sources: &[PropertySource]) -> Result<Properties, Failure> {
    let mut props = Properties::new();
    for source in sources {
        match source {
            PropertySource::File(path) => load_file(path, &mut props).map_err(Failure::usage)?,
            PropertySource::Assignment { flag, key, value } => {
                props.set(key.clone(), value.clone(), Origin::Flag(flag));
            }
        }
    }
    Ok(props)
}

fn find_store(name: &str) -> Result<StoreDescriptor, Failure> {
    let stores = registry::stores();
    stores
        .iter()
        .find(|s| s.matches(name))
        .copied()
        .ok_or_else(|| {
            let names: Vec<&str> = stores.iter().map(|s| s.name).collect();
            Failure::usage(format!(
                "unknown store '{name}' (known: {})",
                names.join(", ")
            ))
        })
}

/// Warns about every set property that no component of this run reads.
fn warn_unknown(props: &Properties, known: &[&PropertyDecl]) {
    for (key, origin) in props.unknown(known.iter().copied()) {
        let suggestion = known
            .iter()
            .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
            .map(|name| (edit_distance(key, name), name))
            .filter(|(d, _)| *d <= 2)
            .min()
            .map(|(_, name)| format!("; did you mean '{name}'?"))
            .unwrap_or_default();
        eprintln!(
            "ycsb: warning: property '{key}' ({origin}) is not read by the workload, the runner or this store{suggestion}"
        );
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Prints Java's status line on standard error when `-s` was given.
struct StatusPrinter {
    enabled: bool,
}

impl Observer for StatusPrinter {
    fn on_status(&mut self, update: &StatusUpdate<'_>) {
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
        eprintln!("ycsb: {notice}");
    }
}

fn benchmark(bench: Benchmark, argv: &[OsString]) -> Result<u8, Failure> {
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
        match runner::run_phase(
            phase,
            &workload,
            store.as_ref(),
            &runner_settings,
            &measurement_settings,
            &stop,
            &mut observer,
        ) {
            Ok(outcome) => {
                report_phase(&bench, &measurement_settings, &outcome)?;
                for error in &outcome.thread_errors {
                    eprintln!("ycsb: error: {error}");
                }
                phases.push(outcome.report);
            }
            Err(e) => {
                failure = Some(Failure::runtime(e));
                break;
            }
        }
    }
    if let Err(e) = store.close() {
        eprintln!("ycsb: error: closing the store: {e}");
    }
    let config = effective_config(&props, &known);
    let run_report = RunReport {
        metadata,
        config,
        phases,
    };
    export(&measurement_settings, &run_report)?;
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
