//! `ycsb merge`: one report from several clients' JSON exports, or one
//! interval log from several clients' HdrHistogram logs.
//!
//! The exports are merged by ycsb-results' [`Merge`] (counts summed,
//! percentiles from the sum of the clients' histograms, never from
//! averaged percentiles); this command reads the files, refuses what does
//! not belong together and prints. See docs/multi-client.md.

use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;
use ycsb_core::measurement::Exporter as _;
use ycsb_core::measurement::{
    self, run_metadata, IntervalLogReader, JsonExporter, LogInterval, TextExporter,
};
use ycsb_core::outputs::{check_outputs, Output, Protected};
use ycsb_db::Status;
use ycsb_results::Merge;
use ycsb_results::{encode_histogram, java_percentile};

use crate::args::{find_flag, unknown_flag, CommandHelp, Flag};
use crate::Failure;

/// The flags of `ycsb merge`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeFlag {
    /// `-o`: the merged file.
    Output,
    /// `--force`: merge exports that do not look like one run's clients.
    Force,
    /// `-h`: the help.
    Help,
}

/// `ycsb merge --help`, rendered by `reference.rs`.
pub const HELP: CommandHelp<MergeFlag> = CommandHelp {
    usage: &[
        "ycsb merge [--force] [-o merged.json] export.json...   (JSON exports of exporter=json)",
        "ycsb merge -o merged/READ.hdr a/READ.hdr b/READ.hdr...  (HdrHistogram interval logs)",
    ],
    about: "One report from several clients' JSON exports: counts summed, percentiles from the
sum of the clients' histograms, time series lined up by wall clock; or one HdrHistogram
interval log from several clients' logs (docs/multi-client.md).",
    flags: &[
        Flag {
            id: MergeFlag::Output,
            name: "-o",
            also: &["--output"],
            value: Some("<file>"),
            doc: "also write the merged export there (the report is printed either way);\nfor HdrHistogram logs, the merged log (required)",
        },
        Flag {
            id: MergeFlag::Force,
            name: "--force",
            also: &[],
            value: None,
            doc: "merge exports that do not look like the clients of one run (warning why)",
        },
        Flag {
            id: MergeFlag::Help,
            name: "-h",
            also: &["--help", "-help"],
            value: None,
            doc: "print this help",
        },
    ],
    notes: "",
};

/// Where a bad command line is told to look: a bad input is one line, so
/// the usage is not printed with the error.
const SEE_USAGE: &str = "ycsb merge --help shows the usage";

/// `ycsb merge` with the arguments after `merge`.
pub fn run(args: Vec<String>, argv: &[std::ffi::OsString]) -> Result<u8, Failure> {
    let mut output: Option<PathBuf> = None;
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut force = false;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let Some(flag) = find_flag(HELP.flags, &arg) else {
            if arg.starts_with('-') && arg.len() > 1 {
                return Err(Failure::usage(format!(
                    "merge: {}",
                    unknown_flag(HELP.flags, &arg, "ycsb merge")
                )));
            }
            inputs.push(PathBuf::from(arg));
            continue;
        };
        match flag.id {
            MergeFlag::Output => {
                let value = it
                    .next()
                    .ok_or_else(|| Failure::usage(format!("merge: {arg} needs a file name")))?;
                output = Some(PathBuf::from(value));
            }
            MergeFlag::Force => force = true,
            MergeFlag::Help => {
                print!("{}", crate::reference::command_help(&HELP));
                return Ok(0);
            }
        }
    }
    if inputs.is_empty() {
        return Err(Failure::usage(format!(
            "merge: no input files ({SEE_USAGE})"
        )));
    }
    if let Some(output) = &output {
        check_output(output, &inputs)?;
    }
    let logs = inputs.iter().filter(|p| is_hdr_log(p)).count();
    if logs == inputs.len() {
        let output = output.ok_or_else(|| {
            Failure::usage("merge: merging HdrHistogram logs needs -o <merged.hdr>")
        })?;
        if !is_hdr_log(&output) {
            return Err(Failure::usage(format!(
                "merge: -o {}: the inputs are HdrHistogram logs and so is the merge: name it <merged>.hdr",
                output.display()
            )));
        }
        merge_logs(&inputs, &output)
    } else if logs == 0 {
        if let Some(output) = output.as_deref().filter(|o| is_hdr_log(o)) {
            return Err(Failure::usage(format!(
                "merge: -o {}: the inputs are JSON exports and so is the merge, not an HdrHistogram log: name it <merged>.json",
                output.display()
            )));
        }
        merge_exports(&inputs, output.as_deref(), argv, force)
    } else {
        Err(Failure::usage(
            "merge: give either JSON exports or HdrHistogram logs (.hdr), not both",
        ))
    }
}

/// Checks, before any input is read, that `-o` can be written: its
/// directory exists (it is not created silently) and it is none of the
/// inputs (by any name: links, `..`, hard links), which the merge would
/// replace.
fn check_output(path: &Path, inputs: &[PathBuf]) -> Result<(), Failure> {
    measurement::check_output_path(path)
        .map_err(|why| Failure::usage(format!("merge: -o {} {why}", path.display())))?;
    let inputs: Vec<Protected> = inputs
        .iter()
        .map(|input| Protected::file(format!("the input {}", input.display()), input))
        .collect();
    check_outputs(
        &[Output::file(format!("merge: -o {}", path.display()), path)],
        &inputs,
    )
    .map_err(Failure::usage)
}

fn is_hdr_log(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "hdr")
}

fn merge_exports(
    inputs: &[PathBuf],
    output: Option<&Path>,
    argv: &[std::ffi::OsString],
    force: bool,
) -> Result<u8, Failure> {
    let statuses: Vec<&str> = Status::ALL.iter().map(|s| s.name()).collect();
    let mut merge = Merge::new(&statuses);
    for path in inputs {
        // One export held at a time: the merge keeps its sums, not the
        // export.
        let export = crate::report::read_export("merge", path)?;
        merge
            .add(path.display().to_string(), export)
            .map_err(|e| Failure::usage(format!("merge: {e}")))?;
    }
    check_together(inputs, &merge, force)?;

    let command_line = argv.iter().map(|a| a.to_string_lossy().into_owned());
    let mut metadata = run_metadata("ycsb merge", env!("CARGO_PKG_VERSION"), command_line, &[]);
    metadata.git_revision = option_env!("YCSB_GIT_REVISION").map(str::to_string);
    let report = merge.finish(metadata);

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (i, phase) in report.phases.iter().enumerate() {
        let written = if i > 0 {
            std::io::Write::write_all(&mut out, b"\n")
        } else {
            Ok(())
        };
        written
            .and_then(|()| TextExporter::new(&mut out).write_phase(phase))
            .map_err(|e| Failure::runtime(format!("writing the report: {e}")))?;
    }
    if let Some(path) = output {
        measurement::write_atomically(path, |w| JsonExporter::new(w).export(&report))
            .map_err(|e| Failure::runtime(format!("writing {}: {e}", path.display())))?;
        eprintln!("merged {} exports into {}", inputs.len(), path.display());
    }
    Ok(0)
}

/// Refuses exports that are not the clients of one run (exit 2, every
/// reason named: the same file twice, then the merge's
/// [`Merge::mismatches`]), or with `--force` warns and merges them.
fn check_together(inputs: &[PathBuf], merge: &Merge, force: bool) -> Result<(), Failure> {
    let mut problems = Vec::new();
    let canonical: Vec<PathBuf> = inputs
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    for (k, path) in canonical.iter().enumerate() {
        if let Some(j) = canonical[..k].iter().position(|p| p == path) {
            problems.push(format!(
                "{} and {} are the same file",
                inputs[j].display(),
                inputs[k].display()
            ));
        }
    }
    problems.extend(merge.mismatches());
    if problems.is_empty() {
        return Ok(());
    }
    if force {
        for p in &problems {
            eprintln!("ycsb: warning: merge --force: {p}");
        }
        return Ok(());
    }
    Err(Failure::usage(format!(
        "merge: these exports are not the clients of one run: {} (--force merges them anyway)",
        problems.join("; ")
    )))
}

/// Opens an interval log for reading one line at a time.
fn open_log(path: &Path) -> Result<IntervalLogReader<std::io::BufReader<std::fs::File>>, Failure> {
    // A FIFO or device is refused.
    let file = ycsb_db::open_input(path)
        .map_err(|e| Failure::usage(format!("merge: {}: {e}", path.display())))?;
    Ok(IntervalLogReader::new(
        std::io::BufReader::new(file),
        path.display().to_string(),
    ))
}

/// What the first pass over the logs finds, without decoding a histogram.
struct LogsAtAGlance {
    /// The earliest interval start, in seconds since the epoch.
    start: f64,
    /// The first log's usual interval length (the median).
    length: f64,
    name: Option<String>,
}

/// The first pass: every line's timing, so that the output's grid is
/// known before any interval is summed.
fn glance_at_logs(inputs: &[PathBuf]) -> Result<LogsAtAGlance, Failure> {
    let mut start = f64::INFINITY;
    let mut lengths: Vec<f64> = Vec::new();
    let mut name = None;
    for (i, path) in inputs.iter().enumerate() {
        let mut reader = open_log(path)?;
        while let Some(timing) = reader.next_timing().map_err(Failure::usage)? {
            start = start.min(timing.start);
            if i == 0 {
                lengths.push(timing.length);
            }
        }
        if name.is_none() {
            name = reader.name().map(str::to_string);
        }
    }
    if !start.is_finite() {
        return Err(Failure::usage("merge: the logs hold no intervals"));
    }
    lengths.sort_by(f64::total_cmp);
    let length = lengths
        .get(lengths.len() / 2)
        .copied()
        .filter(|l| *l > 0.0)
        .unwrap_or(1.0);
    Ok(LogsAtAGlance {
        start,
        length,
        name,
    })
}

/// One input log during the merge, with its next interval decoded.
struct OpenLog {
    reader: IntervalLogReader<std::io::BufReader<std::fs::File>>,
    next: Option<LogInterval>,
}

impl OpenLog {
    fn advance(&mut self) -> Result<(), Failure> {
        self.next = self.reader.next_interval().map_err(Failure::usage)?;
        Ok(())
    }
}

/// Sums interval logs of the same operation from several clients: each
/// input interval goes to the output interval (of the first log's usual
/// length, from the earliest start) its start falls in.
///
/// The logs are streamed: a first pass reads the timings, the second
/// takes the intervals of all logs in time order, one decoded histogram
/// per log, and writes each output interval as soon as no log can add to
/// it, so memory holds a few histograms whatever the logs' sizes. Each
/// log must list its intervals in time order (HdrHistogram's writers do).
fn merge_logs(inputs: &[PathBuf], output: &Path) -> Result<u8, Failure> {
    let glance = glance_at_logs(inputs)?;
    let (start, length) = (glance.start, glance.length);
    let name = glance.name.unwrap_or_else(|| "merged".into());
    let bucket_of =
        |interval: &LogInterval| ((interval.start - start) / length + 1e-6).floor().max(0.0) as u64;
    let mut total: Histogram<u64> =
        Histogram::new(3).map_err(|e| Failure::runtime(format!("merge: {e:?}")))?;
    let mut written = 0usize;
    // A bad input found while writing: the output is then left as it was.
    let mut bad_input: Option<Failure> = None;
    let start_date = chrono::DateTime::<chrono::Local>::from(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(start.max(0.0)),
    )
    .format("%a %b %d %H:%M:%S %:z %Y");
    let mut write = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
        let mut fail = |failure: Failure| {
            let error = std::io::Error::other(failure.message.clone());
            bad_input = Some(failure);
            error
        };
        write!(
            w,
            "#[Logging for: {name}]\n#[Merged by ycsb merge from {} logs]\n#[Histogram log format version 1.3]\n\
             #[StartTime: {start:.3} (seconds since epoch), {start_date}]\n\
             #[BaseTime: {start:.3} (seconds since epoch)]\n\
             \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
            inputs.len()
        )?;
        let mut logs = Vec::with_capacity(inputs.len());
        for path in inputs {
            let mut log = OpenLog {
                reader: open_log(path).map_err(&mut fail)?,
                next: None,
            };
            log.advance().map_err(&mut fail)?;
            logs.push(log);
        }
        let mut current: Option<(u64, Histogram<u64>)> = None;
        let mut flush = |w: &mut dyn std::io::Write, (bucket, histogram): (u64, Histogram<u64>)| {
            written += 1;
            writeln!(
                w,
                "{:.3},{length:.3},{:.3},{}",
                bucket as f64 * length,
                histogram.max() as f64 / 1e6,
                encode_histogram(&histogram)
            )
        };
        // The earliest next interval of all logs, until none is left.
        while let Some(log) = logs.iter_mut().filter(|l| l.next.is_some()).min_by(|a, b| {
            let start = |l: &OpenLog| l.next.as_ref().map_or(f64::INFINITY, |i| i.start);
            start(a).total_cmp(&start(b))
        }) {
            let Some(interval) = log.next.take() else {
                break;
            };
            let at = log.reader.at();
            log.advance().map_err(&mut fail)?;
            let bucket = bucket_of(&interval);
            match &mut current {
                Some((open, _)) if bucket < *open => {
                    return Err(fail(Failure::usage(format!(
                        "merge: {at}: this interval starts before the one above it; merge reads logs whose intervals are in time order"
                    ))));
                }
                Some((open, histogram)) if bucket == *open => {
                    let _ = histogram.add(&interval.histogram);
                }
                _ => {
                    if let Some(done) = current.take() {
                        flush(w, done)?;
                    }
                    let mut histogram = Histogram::new_from(&total);
                    let _ = histogram.add(&interval.histogram);
                    current = Some((bucket, histogram));
                }
            }
            // Adding fails only if the counts array cannot grow.
            let _ = total.add(&interval.histogram);
        }
        if let Some(done) = current.take() {
            flush(w, done)?;
        }
        Ok(())
    };
    let result = measurement::write_atomically(output, &mut write);
    if let Some(failure) = bad_input {
        return Err(failure);
    }
    result.map_err(|e| Failure::runtime(format!("writing {}: {e}", output.display())))?;
    println!(
        "[{name}], Operations, {}\n[{name}], MaxLatency(us), {}",
        total.len(),
        total.max() / 1_000
    );
    for p in [50.0, 95.0, 99.0, 99.9] {
        println!(
            "[{name}], {}PercentileLatency(us), {}",
            measurement::java_ordinal(p),
            java_percentile(&total, p) / 1_000
        );
    }
    eprintln!(
        "merged {} logs ({written} intervals) into {}",
        inputs.len(),
        output.display()
    );
    Ok(0)
}
