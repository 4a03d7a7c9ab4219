//! `ycsb report <export.json>... -o <file.html|file.svg>`: the runs
//! compared (a summary table, then every run overlaid on each chart),
//! drawn by the `ycsb-report` crate.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use ycsb_core::measurement;
use ycsb_core::outputs::{check_outputs, Output, Protected};
use ycsb_results::{ResultsError, RunReport};

use crate::args::{find_flag, unknown_flag, CommandHelp, Flag};
use crate::Failure;

/// The flags of `ycsb report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFlag {
    /// `-o`: the page to write.
    Output,
    /// `--title`: the page's title.
    Title,
    /// `-h`: the help.
    Help,
}

/// `ycsb report --help`, rendered by `reference.rs`.
pub const HELP: CommandHelp<ReportFlag> = CommandHelp {
    usage: &["ycsb report export.json... -o charts.html|charts.svg [--title <text>]"],
    about:
        "Compares runs from their JSON exports (written with -p exporter=json -p exportfile=...):
a summary table, then per phase every run overlaid on each chart over time (throughput,
latency percentiles, CPU, files per LSM level). Runs are named by what tells them apart.",
    flags: &[
        Flag {
            id: ReportFlag::Output,
            name: "-o",
            also: &["--output"],
            value: Some("<file>"),
            doc: "the page to write (required): .html, one self-contained page, or .svg",
        },
        Flag {
            id: ReportFlag::Title,
            name: "--title",
            also: &[],
            value: Some("<text>"),
            doc:
                "the page's title (default: 'ycsb report: ' and the runs' names joined\nby ' vs ')",
        },
        Flag {
            id: ReportFlag::Help,
            name: "-h",
            also: &["--help", "-help"],
            value: None,
            doc: "print this help",
        },
    ],
    notes: "A summary of what was written goes to standard error.",
};

/// Where a bad command line is told to look: a bad input is one line, so
/// the usage is not printed with the error.
const SEE_USAGE: &str = "ycsb report --help shows the usage";

/// `ycsb report` with the arguments after `report`.
pub fn run(args: Vec<String>) -> Result<u8, Failure> {
    let mut output: Option<PathBuf> = None;
    let mut title: Option<String> = None;
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let Some(flag) = find_flag(HELP.flags, &arg) else {
            if arg.starts_with('-') && arg.len() > 1 {
                return Err(Failure::usage(format!(
                    "report: {}",
                    unknown_flag(HELP.flags, &arg, "ycsb report")
                )));
            }
            inputs.push(PathBuf::from(arg));
            continue;
        };
        let mut value = || {
            it.next()
                .ok_or_else(|| Failure::usage(format!("report: {} needs a value", flag.name)))
        };
        match flag.id {
            ReportFlag::Output => output = Some(PathBuf::from(value()?)),
            ReportFlag::Title => title = Some(value()?),
            ReportFlag::Help => {
                print!("{}", crate::reference::command_help(&HELP));
                return Ok(0);
            }
        }
    }
    if inputs.is_empty() {
        return Err(Failure::usage(format!(
            "report: no export given ({SEE_USAGE})"
        )));
    }
    let output = output
        .ok_or_else(|| Failure::usage(format!("report: -o <file> is required ({SEE_USAGE})")))?;
    let format = Format::of(&output)?;
    measurement::check_output_path(&output)
        .map_err(|why| Failure::usage(format!("report: -o {} {why}", output.display())))?;
    let exports: Vec<Protected> = inputs
        .iter()
        .map(|input| Protected::file(format!("the export {}", input.display()), input))
        .collect();
    check_outputs(
        &[Output::file(
            format!("report: -o {}", output.display()),
            &output,
        )],
        &exports,
    )
    .map_err(Failure::usage)?;

    let mut exports = Vec::new();
    for path in &inputs {
        exports.push((path.display().to_string(), read_export("report", path)?));
    }
    let runs = ycsb_report::runs_from_exports(exports);
    let comparison = ycsb_report::Comparison::new(runs);
    let title = title.unwrap_or_else(|| comparison.title());
    let page = comparison.page(&title);
    let text = match format {
        Format::Html => ycsb_report::render_html(&page),
        Format::Svg => ycsb_report::render_svg_page(&page),
    };
    measurement::write_atomically(&output, |w| w.write_all(text.as_bytes()))
        .map_err(|e| Failure::runtime(format!("writing {}: {e}", output.display())))?;
    for run in &comparison.runs {
        if run.assertions_enabled() {
            eprintln!(
                "ycsb report: {}: {}",
                run.name,
                ycsb_report::ASSERTIONS_WARNING
            );
        }
    }
    if let Some(warning) = comparison.durability_warning() {
        eprintln!("ycsb report: warning: {warning}");
    }
    eprintln!(
        "ycsb report: {} runs, {} charts written to {}",
        comparison.runs.len(),
        page.charts().len(),
        output.display()
    );
    Ok(0)
}

enum Format {
    Html,
    Svg,
}

impl Format {
    fn of(path: &Path) -> Result<Self, Failure> {
        match path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .as_deref()
        {
            Some("html" | "htm") => Ok(Format::Html),
            Some("svg") => Ok(Format::Svg),
            _ => Err(Failure::usage(format!(
                "report: -o {}: expected a file name ending in .html or .svg",
                path.display()
            ))),
        }
    }
}

/// Reads an export (`-p exporter=json`) for `command` (`report`,
/// `merge`), typed and streaming; a bad file is one line naming it.
pub(crate) fn read_export(command: &str, path: &Path) -> Result<RunReport, Failure> {
    let unreadable =
        |e: &dyn std::fmt::Display| Failure::usage(format!("{command}: {}: {e}", path.display()));
    // A FIFO or device is refused, a file beyond the limit too.
    let file = ycsb_db::open_input(path).map_err(|e| unreadable(&e))?;
    let size = file.metadata().map_err(|e| unreadable(&e))?.len();
    if size > ycsb_db::RESULT_FILE_LIMIT {
        let limit = ycsb_db::RESULT_FILE_LIMIT;
        return Err(unreadable(&ycsb_db::InputError::TooLarge { limit }));
    }
    ycsb_results::read_export(file.take(ycsb_db::RESULT_FILE_LIMIT + 1)).map_err(|e| match e {
        ResultsError::Malformed { .. } => unreadable(&format!(
            "{e}; {command} reads exports written with -p exporter=json"
        )),
        e => unreadable(&e),
    })
}
