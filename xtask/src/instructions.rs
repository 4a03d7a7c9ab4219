//! `cargo xtask instructions`: the regression guard of the client's hot
//! paths, judged by instruction counts, which repeat exactly whatever else
//! the machine is doing (timed figures on a shared two-core machine swing
//! by more than the few percent this guards).
//!
//! Builds `ycsb-hot-paths` (xtask/hot-paths) in release mode, runs each of
//! its paths under valgrind's cachegrind twice, with `n` and `3n`
//! operations, and takes the difference divided by `2n`: the instructions
//! one more operation costs, free of start-up. Each figure is compared with
//! the one committed in `xtask/hot-paths/instructions.json`; a rise of more
//! than [`TOLERANCE`] fails, with the figures printed. `--accept` writes
//! the figures measured now into that file instead (the one command that
//! accepts a deliberate change; commit the file with the change).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::engine_bench::{client, instructions_of, Cachegrind};

/// The largest rise of a path's instructions per operation that passes:
/// the counts of one binary repeat to within 0.1 % (the only variation is
/// the histogram's handling of the latencies the clock happened to read),
/// so 3 % is a real change in the code, not noise.
pub const TOLERANCE: f64 = 0.03;

/// Operations of the shorter run of each path; the longer one runs three
/// times as many. 20,000 operations of the costliest path are about 50
/// million instructions: well under a second under cachegrind.
const OPERATIONS: u64 = 20_000;

const USAGE: &str = "usage: cargo xtask instructions [--accept]
  Counts the instructions per operation of the client's hot paths (release
  build of xtask/hot-paths, valgrind's cachegrind, marginal over n and 3n
  operations) and compares them with xtask/hot-paths/instructions.json:
  a rise of more than 3 % fails.
  --accept  write the figures measured now into that file (a deliberate
            change; commit the file with it)";

/// The committed figures (`xtask/hot-paths/instructions.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// `rustc --version` of the build that measured them: another compiler
    /// may inline differently, which the guard says when figures differ.
    pub rustc: String,
    /// The shorter run's operations.
    pub operations: u64,
    /// Instructions per operation of each path, by its name.
    pub paths: BTreeMap<String, f64>,
}

/// One path's comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The path's name.
    pub path: String,
    /// The committed figure, if the path has one.
    pub committed: Option<f64>,
    /// The figure measured now.
    pub measured: f64,
}

impl Comparison {
    /// The measured figure over the committed one.
    pub fn ratio(&self) -> Option<f64> {
        self.committed.map(|c| self.measured / c)
    }

    /// Whether this path fails the guard: a rise beyond [`TOLERANCE`], or
    /// no committed figure to compare with.
    pub fn fails(&self) -> bool {
        self.ratio().is_none_or(|r| r > 1.0 + TOLERANCE)
    }
}

/// Compares measured figures with the committed ones, path by path (the
/// measured paths' order).
pub fn compare(committed: &Figures, measured: &[(String, f64)]) -> Vec<Comparison> {
    measured
        .iter()
        .map(|(path, figure)| Comparison {
            path: path.clone(),
            committed: committed.paths.get(path).copied(),
            measured: *figure,
        })
        .collect()
}

/// The comparison as a table, one row per path.
pub fn table(comparisons: &[Comparison]) -> String {
    let mut out = format!(
        "{:<16} {:>12} {:>12} {:>9}  verdict\n",
        "path", "committed", "now", "change"
    );
    for c in comparisons {
        let committed = c
            .committed
            .map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
        let change = c.ratio().map_or_else(
            || "-".to_string(),
            |r| format!("{:+.2}%", (r - 1.0) * 100.0),
        );
        let verdict = match c.ratio() {
            None => "no committed figure",
            Some(_) if c.fails() => "RISE beyond 3 %",
            Some(r) if r < 1.0 - TOLERANCE => "lower (accept to keep the gain)",
            Some(_) => "ok",
        };
        let _ = writeln!(
            out,
            "{:<16} {committed:>12} {:>12.1} {change:>9}  {verdict}",
            c.path, c.measured
        );
    }
    out
}

fn figures_file(root: &Path) -> PathBuf {
    root.join("xtask")
        .join("hot-paths")
        .join("instructions.json")
}

fn rustc_version() -> Result<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .arg("--version")
        .output()
        .with_context(|| format!("cannot start {rustc}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Instructions of one run of `path` over `operations` operations.
fn count(program: &Path, scratch: &Path, path: &str, operations: u64) -> Result<u64> {
    let cachegrind = Cachegrind {
        out_file: scratch.join(format!("{path}-{operations}.cachegrind")),
        log_file: scratch.join(format!("{path}-{operations}.log")),
    };
    let status = client(program, Some(&cachegrind))
        .args([path, &operations.to_string()])
        .status()
        .context("cannot start valgrind (Debian package valgrind; `cargo xtask deps`)")?;
    if !status.success() {
        bail!(
            "{path} under cachegrind failed with {status}; see {}",
            cachegrind.log_file.display()
        );
    }
    instructions_of(&cachegrind)
}

/// Measures every path of `program`.
fn measure(program: &Path, scratch: &Path) -> Result<Vec<(String, f64)>> {
    let list = Command::new(program)
        .arg("--list")
        .output()
        .with_context(|| format!("cannot start {}", program.display()))?;
    let mut figures = Vec::new();
    for line in String::from_utf8_lossy(&list.stdout).lines() {
        let Some((path, _meaning)) = line.split_once('\t') else {
            continue;
        };
        let short = count(program, scratch, path, OPERATIONS)?;
        let long = count(program, scratch, path, 3 * OPERATIONS)?;
        let per_operation = long.saturating_sub(short) as f64 / (2 * OPERATIONS) as f64;
        figures.push((path.to_string(), per_operation));
    }
    if figures.is_empty() {
        bail!("{} --list named no path", program.display());
    }
    Ok(figures)
}

/// Runs the guard (or, with `--accept`, records the figures).
///
/// # Errors
/// Bad arguments, a failed build or run, or a path whose figure rose by
/// more than [`TOLERANCE`].
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    let mut accept = false;
    for arg in args {
        match arg.as_str() {
            "--accept" => accept = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("instructions: unknown argument '{other}'\n{USAGE}"),
        }
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("xtask: cargo build --release -p ycsb-hot-paths");
    crate::run(Command::new(&cargo).current_dir(root).args([
        "build",
        "--quiet",
        "--release",
        "-p",
        "ycsb-hot-paths",
    ]))?;
    let program = crate::target::target_dir(root)
        .join("release")
        .join("ycsb-hot-paths");
    let scratch = tempfile_dir()?;
    eprintln!("xtask: instructions per operation under cachegrind");
    let measured = measure(&program, scratch.path())?;
    let file = figures_file(root);
    if accept {
        let figures = Figures {
            rustc: rustc_version()?,
            operations: OPERATIONS,
            paths: measured
                .iter()
                .map(|(p, f)| (p.clone(), (f * 10.0).round() / 10.0))
                .collect(),
        };
        let text = serde_json::to_string_pretty(&figures)? + "\n";
        std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
        for (path, figure) in &measured {
            println!("{path:<16} {figure:>12.1}");
        }
        eprintln!("xtask: wrote {}; commit it with the change", file.display());
        return Ok(());
    }
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let committed: Figures = serde_json::from_str(&text)
        .with_context(|| format!("{}: not the guard's figures", file.display()))?;
    let comparisons = compare(&committed, &measured);
    print!("{}", table(&comparisons));
    let failed: Vec<&str> = comparisons
        .iter()
        .filter(|c| c.fails())
        .map(|c| c.path.as_str())
        .collect();
    if !failed.is_empty() {
        let rustc = rustc_version()?;
        let compiler = if rustc == committed.rustc {
            String::new()
        } else {
            format!(
                " (the figures were recorded with {}, this build is {rustc}: a new compiler \
                 may account for it)",
                committed.rustc
            )
        };
        bail!(
            "instructions per operation rose by more than {:.0} % on: {}{compiler}; \
             if deliberate, run `cargo xtask instructions --accept` and commit {}",
            TOLERANCE * 100.0,
            failed.join(", "),
            file.display()
        );
    }
    Ok(())
}

/// A scratch directory for cachegrind's files, removed when dropped.
fn tempfile_dir() -> Result<ScratchDir> {
    let base = std::env::temp_dir().join(format!("ycsb-xtask-instructions-{}", std::process::id()));
    // `create_dir`, not `create_dir_all`: a directory that is already there
    // is not this run's, and dropping the scratch directory removes it.
    std::fs::create_dir(&base).with_context(|| format!("creating {}", base.display()))?;
    Ok(ScratchDir(base))
}

/// A directory this command created (never one it found), removed when it
/// goes out of scope.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed() -> Figures {
        Figures {
            rustc: "rustc 1.95.0".into(),
            operations: OPERATIONS,
            paths: [
                ("workload_a".to_string(), 900.0),
                ("workload_c".into(), 580.0),
            ]
            .into_iter()
            .collect(),
        }
    }

    /// (measured, fails): the edges of the tolerance on a committed 900.
    const CASES: [(f64, bool); 5] = [
        (900.0, false),
        (926.9, false),
        (927.1, true),
        (700.0, false),
        (2_000.0, true),
    ];

    #[test]
    fn a_rise_beyond_three_percent_fails_and_nothing_below_it_does() {
        for (measured, fails) in CASES {
            let c = compare(&committed(), &[("workload_a".into(), measured)]);
            assert_eq!(c[0].fails(), fails, "{measured} against 900");
        }
    }

    #[test]
    fn a_path_without_a_committed_figure_fails_and_says_so() {
        let c = compare(&committed(), &[("record_codec".into(), 10.0)]);
        assert!(c[0].fails());
        assert!(table(&c).contains("no committed figure"));
    }

    #[test]
    fn the_table_names_each_path_its_change_and_verdict() {
        let c = compare(
            &committed(),
            &[("workload_a".into(), 990.0), ("workload_c".into(), 580.0)],
        );
        let text = table(&c);
        assert!(text.contains("+10.00%"), "{text}");
        assert!(text.contains("RISE beyond 3 %"), "{text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("workload_c") && l.ends_with("ok")),
            "{text}"
        );
    }

    #[test]
    fn the_committed_figures_read_back_and_name_every_path() {
        let root = crate::project_root();
        let text = std::fs::read_to_string(figures_file(&root)).unwrap();
        let figures: Figures = serde_json::from_str(&text).unwrap();
        for path in [
            "workload_a",
            "workload_c",
            "load_insert",
            "record_values",
            "record_codec",
        ] {
            assert!(figures.paths.contains_key(path), "{path} has no figure");
        }
    }
}
