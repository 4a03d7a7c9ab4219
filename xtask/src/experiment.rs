//! `cargo xtask experiment <matrix.toml>`: the command line of the
//! `ycsb-experiment` library, which runs the matrix (docs/experiments.md).
//! Here: the options, Ctrl-C, and where its messages are printed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use ycsb_experiment::{ExperimentError, Mode, Options, Progress};

/// Usage of the subcommand.
pub const USAGE: &str = "usage: cargo xtask experiment <matrix.toml> [options]

Runs every cell of the matrix (each a separate release-built ycsb process),
keeping results/<experiment>/cells/<cell>/ (JSON export, time series, command,
effective properties, versions, host facts, times), then writes summary.md,
summary-<phase>.csv and report.html. Interrupted runs resume: complete cells
are skipped.

options:
  --check           validate the matrix and list its cells; run nothing
  --force           rerun complete cells too
  --report          only rebuild the summary and report from complete cells
  --results DIR     results root (default: <repo>/results)
  --ycsb PATH       use this ycsb binary instead of building it in release mode

A failed cell does not stop the others; the summaries and the report list it
with its reason. Exit status: 0 when every cell is complete, 1 when some
failed, 2 for a refused matrix (one line naming file:line).
";

/// Progress lines to standard error, results to standard output.
struct Print;

impl Progress for Print {
    fn status(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn result(&mut self, text: &str) {
        println!("{text}");
    }
}

fn parse_options(root: &Path, args: &[String]) -> Result<Options> {
    let (mut check, mut force, mut report) = (false, false, false);
    let (mut results, mut ycsb, mut matrix) = (None, None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => check = true,
            "--force" => force = true,
            "--report" => report = true,
            "--results" => {
                results = Some(PathBuf::from(
                    it.next().context("--results needs a directory")?,
                ))
            }
            "--ycsb" => ycsb = Some(PathBuf::from(it.next().context("--ycsb needs a path")?)),
            "-h" | "--help" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            other if other.starts_with('-') => {
                bail!("experiment: unknown option {other}\n\n{USAGE}")
            }
            other if matrix.is_none() => matrix = Some(PathBuf::from(other)),
            other => bail!("experiment: unexpected argument {other}\n\n{USAGE}"),
        }
    }
    let matrix = matrix.with_context(|| format!("experiment: which matrix?\n\n{USAGE}"))?;
    // --check runs nothing whatever else is asked; --report runs no cell.
    let mode = if check {
        Mode::Check
    } else if report {
        Mode::ReportOnly
    } else if force {
        Mode::Force
    } else {
        Mode::Run
    };
    let mut options = Options::new(root.to_path_buf(), matrix, mode);
    options.results = results;
    options.ycsb = ycsb;
    Ok(options)
}

/// Entry point of `cargo xtask experiment`.
///
/// # Errors
/// A refused matrix, a failed build, failed cells or an interruption.
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    let mut options = parse_options(root, args)?;
    if options.ycsb.is_none() && options.mode != Mode::Check && options.mode != Mode::ReportOnly {
        // Built here rather than by the library, so that the cells run on
        // release engines when `cargo xtask engines` built them.
        let target = crate::engines::build_release(root, &["-p", "ycsb-cli"])?;
        options.ycsb = Some(target.join("release").join("ycsb"));
    }
    let stop = Arc::new(AtomicBool::new(false));
    if options.mode != Mode::Check && options.mode != Mode::ReportOnly {
        let stop = Arc::clone(&stop);
        // A second handler (tests running twice in one process) is refused;
        // the first one still sets a flag.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    // The library's errors carry their causes in their text: one line. A
    // refused matrix is bad input (exit status 2); failed cells, after the
    // others ran and the summaries were written, are a failure (1).
    ycsb_experiment::run(&options, stop, &mut Print).map_err(|e| match e {
        ExperimentError::Matrix(refused) => {
            anyhow::Error::new(crate::baseline::BadInput(refused.to_string()))
        }
        other => anyhow::anyhow!("{other}"),
    })
}
