//! `ycsb`: Java YCSB's and YCSB-cpp's command lines on ycsb-rs.
//!
//! The binary is thin: it parses the command line ([`args`]), builds the
//! properties, looks up the store (`ycsb_stores`) and drives
//! a `ycsb_core::Session`. It is the only place that prints or exits.

// Unsafe only in interrupt.rs's `_exit`, allowed there alone.
#![deny(unsafe_code)]

mod args;
mod bench;
mod interrupt;
mod live;
mod merge;
mod observe;
mod progress;
mod reference;
mod report;
mod run;
#[cfg(feature = "serve")]
mod serve;
mod shell;

use std::ffi::OsString;
use std::process::ExitCode;

use ycsb_db::{Properties, PropertyDecl, StoreDescriptor};

use crate::args::{Invocation, PropertySource};

/// Exit status for bad input (command line, properties, files) and a store
/// that cannot be used: nothing ran, nothing was measured.
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

    /// The message as printed: bad input is one line, so an engine's or a
    /// parser's message spanning several is joined with `; `.
    fn one_line(&self) -> String {
        if self.code != EXIT_USAGE {
            return self.message.clone();
        }
        self.message
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
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
            eprintln!("ycsb: error: {}", failure.one_line());
            ExitCode::from(failure.code)
        }
    }
}

fn execute(invocation: Invocation, argv: &[OsString]) -> Result<u8, Failure> {
    match invocation {
        Invocation::Help(topic) => {
            print!("{}", reference::help(topic));
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
            // On standard error: standard output stays one store a line
            // for the scripts that read it.
            let out = ycsb_stores::COMPILED_OUT;
            if !out.is_empty() {
                eprintln!(
                    "ycsb: not in this build: {} ({} brings {})",
                    out.join(", "),
                    ycsb_stores::build_command(out),
                    if out.len() == 1 { "it" } else { "them" }
                );
            }
            Ok(0)
        }
        Invocation::Properties { markdown } => {
            print!("{}", reference::properties_reference(markdown));
            Ok(0)
        }
        Invocation::Benchmark(bench) => run::benchmark(bench, argv),
        #[cfg(feature = "serve")]
        Invocation::Serve(serve) => serve::serve_store(serve),
        #[cfg(not(feature = "serve"))]
        Invocation::Serve(_) => Err(serve_compiled_out()),
        Invocation::Shell(shell) => shell::run(shell),
        Invocation::Bench(args) => bench::run(args),
        Invocation::Merge(args) => merge::run(args, argv),
        Invocation::Report(args) => report::run(args),
    }
}

/// What `ycsb serve` answers in a build without the `serve` feature (the
/// client-only build): bad input, naming the feature and the command that
/// brings it back, as a compiled-out store's error does.
#[cfg_attr(feature = "serve", allow(dead_code))]
fn serve_compiled_out() -> Failure {
    Failure::usage(format!(
        "this ycsb was built without the serve feature ({})",
        ycsb_stores::build_command(&["serve"])
    ))
}

/// Builds the properties from the sources in argv order, printing a
/// warning for each value a file overrides a flag's with.
pub(crate) fn build_properties(sources: &[PropertySource]) -> Result<Properties, Failure> {
    let (props, warnings) = build_properties_quietly(sources)?;
    print_warnings(&warnings);
    Ok(props)
}

/// Builds the properties from the sources in argv order, and the warnings
/// to print once the input is known to be good (a bad input is one line).
pub(crate) fn build_properties_quietly(
    sources: &[PropertySource],
) -> Result<(Properties, Vec<String>), Failure> {
    let (props, overrides) =
        ycsb_core::properties::load_sources(sources).map_err(Failure::usage)?;
    let warnings = overrides.iter().map(ToString::to_string).collect();
    Ok((props, warnings))
}

/// Prints each warning on its own line of standard error.
pub(crate) fn print_warnings(warnings: &[String]) {
    for warning in warnings {
        eprintln!("ycsb: warning: {warning}");
    }
}

pub(crate) fn find_store(name: &str) -> Result<StoreDescriptor, Failure> {
    ycsb_stores::find(name).map_err(Failure::usage)
}

/// Warns about every set property that no component of this run reads.
pub(crate) fn warn_unknown(props: &Properties, known: &[&PropertyDecl]) {
    print_unknown(&ycsb_core::unknown_properties(props, known));
}

/// Prints one warning per property that nothing reads.
pub(crate) fn print_unknown(unknown: &[ycsb_core::UnknownProperty]) {
    for property in unknown {
        eprintln!("ycsb: warning: {property}");
    }
}

/// `Engine: RocksDB 7.8.3 (/usr/lib/.../librocksdb.so.7.8, assertions
/// enabled (imports __assert_fail))`: which build a result comes from, for
/// the headers of `ycsb load|run`, `ycsb bench` and `ycsb serve`. `None`
/// for a store that names no engine and says nothing of its build.
pub(crate) fn engine_line(
    engine: &ycsb_db::EngineInfo,
    build: &ycsb_db::EngineBuild,
) -> Option<String> {
    let unknown = *build == ycsb_db::EngineBuild::unknown();
    if engine.name.is_empty() && unknown {
        return None;
    }
    let name = match (engine.name.as_str(), engine.version.as_str()) {
        ("", _) => "unnamed".to_string(),
        (name, "") => name.to_string(),
        (name, version) => format!("{name} {version}"),
    };
    if unknown {
        // Nothing is known of its build (the export records "unknown").
        return Some(format!("Engine: {name}"));
    }
    Some(format!("Engine: {name} ({build})"))
}

#[cfg(test)]
mod tests {
    /// `ycsb serve` in a build without the feature: one line of bad input
    /// naming the feature and the command that brings it back (the
    /// client-only build that answers with it is not built by the tests).
    #[test]
    fn serve_compiled_out_names_the_feature_and_the_build() {
        let failure = super::serve_compiled_out();
        assert_eq!(failure.code, super::EXIT_USAGE);
        assert_eq!(
            failure.one_line(),
            "this ycsb was built without the serve feature \
             (cargo build -p ycsb-cli --features serve)"
        );
    }
}
