//! `ycsb`: Java YCSB's and YCSB-cpp's command lines on ycsb-rs.
//!
//! The binary is thin: it parses the command line ([`args`]), builds the
//! properties, looks up the store (`ycsb_stores`) and drives
//! `ycsb_core::runner`. It is the only place that prints or exits.

mod args;
mod bench;
mod hdrlog;
mod merge;
mod observe;
mod progress;
mod reference;
mod report;
mod run;
mod serve;

use std::ffi::OsString;
use std::process::ExitCode;

use ycsb_core::properties::load_file;
use ycsb_core::{measurement, runner, workload};
use ycsb_db::{Origin, Properties, PropertyDecl, StoreDescriptor};

use crate::args::{Invocation, PropertySource};

/// Exit status for bad input (command line, properties, files).
const EXIT_USAGE: u8 = 2;
/// Exit status when a run was stopped by Ctrl-C or SIGTERM (its partial
/// report is still written).
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

/// An error that ends the program: a message (one line) and an exit code.
pub(crate) struct Failure {
    message: String,
    code: u8,
}

impl Failure {
    pub(crate) fn usage(message: impl std::fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: EXIT_USAGE,
        }
    }

    pub(crate) fn runtime(message: impl std::fmt::Display) -> Self {
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
            print!("{}", reference::help_text());
            Ok(0)
        }
        Invocation::Version => {
            println!("ycsb {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        Invocation::Stores => {
            for store in ycsb_stores::STORES {
                println!("{:<10} {}", store.name, store.summary);
            }
            Ok(0)
        }
        Invocation::Properties { markdown } => {
            print!("{}", reference::properties_reference(markdown));
            Ok(0)
        }
        Invocation::Benchmark(bench) => run::benchmark(bench, argv),
        Invocation::Serve(serve) => serve::serve_store(serve),
        Invocation::Bench(args) => bench::run(args),
        Invocation::Merge(args) => merge::run(args, argv),
        Invocation::Report(args) => report::run(args),
    }
}

/// The properties every benchmark reads, whatever the store.
pub(crate) fn core_properties() -> Vec<(&'static str, &'static [&'static PropertyDecl])> {
    vec![
        ("CoreWorkload", workload::PROPERTIES),
        ("Data files", workload::datafile::PROPERTIES),
        ("Runner", runner::PROPERTIES),
        ("Measurement", measurement::PROPERTIES),
        ("Observation", ycsb_core::observe::PROPERTIES),
    ]
}

/// Builds the properties from the sources in argv order.
pub(crate) fn build_properties(sources: &[PropertySource]) -> Result<Properties, Failure> {
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

pub(crate) fn find_store(name: &str) -> Result<StoreDescriptor, Failure> {
    ycsb_stores::find(name).map_err(Failure::usage)
}

/// Warns about every set property that no component of this run reads.
pub(crate) fn warn_unknown(props: &Properties, known: &[&PropertyDecl]) {
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
