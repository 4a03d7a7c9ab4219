//! `--baseline <rev>`: a bench run twice over, once with the binaries of
//! another revision, the two alternated, so that a change can show what it
//! did to the client's figures on a machine whose load moves.
//!
//! The revision's tree is exported (`git archive`) to
//! `<target>/baseline/<commit>/src` and built there with its own target
//! directory, `<target>/baseline/<commit>/target`; both stay for the next
//! run against the same commit. An export rather than a `git worktree`:
//! a worktree registers itself in the repository's `.git`, which other
//! checkouts of the repository share, and leaves a stale entry behind when
//! `target/` is deleted. The first build of a baseline is seeded with a
//! copy of the current release build (when there is one), so that only the
//! workspace crates compile again, not every dependency.
//!
//! Then every step of the bench runs pair after pair: baseline then
//! current in even pairs, current then baseline in odd ones, so that
//! neither always meets the quieter or the warmer machine. Each figure's
//! line gives both medians, the median of the per-pair ratios
//! current/baseline (each pair's two runs were back to back, under nearly
//! the same load) and the smallest and largest of those ratios.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::machine::load_average;

/// Bad input on the command line: xtask prints it as one line and exits
/// with status 2.
#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// `--baseline` and `--pairs` as every bench takes them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// The revision to compare with, as given.
    pub rev: Option<String>,
    /// How many baseline/current pairs to run.
    pub pairs: usize,
}

impl Request {
    pub const DEFAULT_PAIRS: usize = 5;

    /// Takes `--baseline REV` and `--pairs N` out of `args`, leaving the
    /// bench's own options.
    ///
    /// # Errors
    /// [`BadInput`] for a flag without its value or a pair count that is
    /// not a positive whole number.
    pub fn take(args: &[String]) -> Result<(Request, Vec<String>)> {
        let mut request = Request {
            rev: None,
            pairs: Self::DEFAULT_PAIRS,
        };
        let mut rest = Vec::new();
        let mut pairs_given = false;
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--baseline" => {
                    let rev = it.next().ok_or_else(|| {
                        BadInput("--baseline needs a git revision (a commit, tag or branch)".into())
                    })?;
                    request.rev = Some(rev.clone());
                }
                "--pairs" => {
                    let value = it
                        .next()
                        .ok_or_else(|| BadInput("--pairs needs a number".into()))?;
                    request.pairs = value.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        BadInput(format!("--pairs {value}: expected a positive whole number"))
                    })?;
                    pairs_given = true;
                }
                _ => rest.push(arg.clone()),
            }
        }
        if pairs_given && request.rev.is_none() {
            return Err(BadInput("--pairs needs --baseline <rev>".into()).into());
        }
        Ok((request, rest))
    }
}

/// The full commit hash `rev` names in the repository at `root`.
///
/// # Errors
/// [`BadInput`] when git does not know `rev` as a commit; an error when
/// git cannot be run.
pub fn resolve(root: &Path, rev: &str) -> Result<String> {
    let out = Command::new("git")
        .current_dir(root)
        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{rev}^{{commit}}"))
        .stdin(Stdio::null())
        .output()
        .context("running git rev-parse (is git installed?)")?;
    let hash = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || hash.len() < 40 {
        return Err(BadInput(format!(
            "--baseline {rev}: not a commit of the repository at {}",
            root.display()
        ))
        .into());
    }
    Ok(hash)
}

/// A revision's tree and where its build goes.
#[derive(Debug)]
pub struct Baseline {
    pub commit: String,
    /// The exported tree.
    pub source: PathBuf,
    /// Its own cargo target directory.
    pub target: PathBuf,
}

impl Baseline {
    /// The release directory of the baseline's build.
    pub fn release(&self) -> PathBuf {
        self.target.join("release")
    }

    /// `abcdef123456` for headings.
    pub fn short(&self) -> &str {
        &self.commit[..12.min(self.commit.len())]
    }
}

/// Exports `commit` (once) under `<current_target>/baseline/<commit>/`,
/// seeds its target directory from the current release build the first
/// time, then runs `build(source, target)`, which builds what the bench
/// needs (cargo makes that quick when nothing changed).
///
/// # Errors
/// When git, tar or the copy fail, or what `build` returns.
pub fn prepare(
    root: &Path,
    current_target: &Path,
    commit: &str,
    build: impl FnOnce(&Path, &Path) -> Result<()>,
) -> Result<Baseline> {
    let dir = current_target.join("baseline").join(commit);
    let baseline = Baseline {
        commit: commit.to_string(),
        source: dir.join("src"),
        target: dir.join("target"),
    };
    // Written last: an export cut short is redone rather than built.
    let exported = dir.join("exported");
    if !exported.exists() {
        let _ = std::fs::remove_dir_all(&baseline.source);
        std::fs::create_dir_all(&baseline.source)
            .with_context(|| format!("creating {}", baseline.source.display()))?;
        eprintln!("xtask: exporting {commit} to {}", baseline.source.display());
        // tar -m gives every file the time of extraction, not the commit's:
        // with a seeded target directory, cargo must see the sources as
        // newer than what was built from the current tree.
        let archive = Command::new("git")
            .current_dir(root)
            .args(["archive", "--format=tar", commit])
            .stdout(Stdio::piped())
            .spawn()
            .context("running git archive")?;
        let tar = Command::new("tar")
            .args(["-x", "-m", "-C"])
            .arg(&baseline.source)
            .stdin(archive.stdout.context("git archive's output")?)
            .status()
            .context("running tar")?;
        if !tar.success() {
            bail!("extracting {commit} with tar failed ({tar})");
        }
        std::fs::write(&exported, format!("{commit}\n"))
            .with_context(|| format!("writing {}", exported.display()))?;
    }
    let seed = current_target.join("release");
    if !baseline.target.exists() && seed.is_dir() {
        eprintln!(
            "xtask: seeding {} with a copy of {}",
            baseline.target.display(),
            seed.display()
        );
        std::fs::create_dir_all(&baseline.target)?;
        crate::run(
            Command::new("cp")
                .args(["-a", "--reflink=auto"])
                .arg(&seed)
                .arg(&baseline.target),
        )?;
    }
    build(&baseline.source, &baseline.target)
        .with_context(|| format!("building the baseline {commit}"))?;
    Ok(baseline)
}

/// `cargo build --release <args>` of the tree at `source` into `target`.
///
/// # Errors
/// When cargo fails.
pub fn cargo_build(source: &Path, target: &Path, args: &[&str]) -> Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    crate::run(
        Command::new(cargo)
            .current_dir(source)
            .env("CARGO_TARGET_DIR", target)
            .args(["build", "--release"])
            .args(args),
    )
}

/// Which build a run used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Baseline,
    Current,
}

/// The two runs' order in pair `pair` (counted from 0).
pub fn order(pair: usize) -> [Side; 2] {
    if pair.is_multiple_of(2) {
        [Side::Baseline, Side::Current]
    } else {
        [Side::Current, Side::Baseline]
    }
}

/// One figure's values, pair by pair.
#[derive(Clone, Debug, Default)]
pub struct Figure {
    pub name: String,
    pub baseline: Vec<f64>,
    pub current: Vec<f64>,
}

/// What one figure's pairs show.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub baseline_median: f64,
    pub current_median: f64,
    /// The median of current/baseline over the pairs.
    pub ratio: f64,
    /// The smallest and largest per-pair ratio.
    pub low: f64,
    pub high: f64,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

impl Figure {
    /// Both medians and the per-pair ratios' median and range; None when
    /// no pair is complete. Pairs are matched by index: the i-th baseline
    /// value with the i-th current one.
    pub fn summary(&self) -> Option<Summary> {
        let ratios: Vec<f64> = self
            .baseline
            .iter()
            .zip(&self.current)
            .map(|(b, c)| c / b)
            .collect();
        if ratios.is_empty() {
            return None;
        }
        Some(Summary {
            baseline_median: median(self.baseline.clone()),
            current_median: median(self.current.clone()),
            ratio: median(ratios.clone()),
            low: ratios.iter().copied().fold(f64::INFINITY, f64::min),
            high: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// The figures of a paired run, in the order they first appeared, and the
/// load average around each pair.
#[derive(Debug, Default)]
pub struct Pairs {
    pub figures: Vec<Figure>,
    /// (before, after) each pair.
    pub loads: Vec<(String, String)>,
}

impl Pairs {
    fn record(&mut self, side: Side, name: &str, value: f64) {
        let at = match self.figures.iter().position(|f| f.name == name) {
            Some(at) => at,
            None => {
                self.figures.push(Figure {
                    name: name.to_string(),
                    ..Figure::default()
                });
                self.figures.len() - 1
            }
        };
        let figure = &mut self.figures[at];
        match side {
            Side::Baseline => figure.baseline.push(value),
            Side::Current => figure.current.push(value),
        }
    }

    /// Prints the table: figure, baseline and current medians, the paired
    /// ratio and its range.
    pub fn print(&self, baseline: &str, pairs: usize) {
        println!();
        println!(
            "| figure | baseline {baseline} | current | current/baseline (paired median) | per-pair min–max |"
        );
        println!("|--------|---------:|--------:|--------:|--------:|");
        for figure in &self.figures {
            match figure.summary() {
                Some(s) => println!(
                    "| {} | {} | {} | {:.3} | {:.3}–{:.3} |",
                    figure.name,
                    compact(s.baseline_median),
                    compact(s.current_median),
                    s.ratio,
                    s.low,
                    s.high
                ),
                None => println!("| {} | - | - | - | - |", figure.name),
            }
        }
        println!(
            "\n{pairs} pair(s), each step baseline then current in even pairs, current then baseline in odd ones; ratio > 1: the current build's figure is larger (better for rates, worse for instructions per operation)"
        );
        for (i, (before, after)) in self.loads.iter().enumerate() {
            println!(
                "pair {}: load average before {before}, after {after}",
                i + 1
            );
        }
    }
}

/// A figure with the digits that matter: 1234567 → 1234567, 0.01234 → 0.0123.
fn compact(value: f64) -> String {
    if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.4}")
    }
}

/// Runs `steps` steps `pairs` times, each step once per side in the pair's
/// order; `run(side, step)` runs one step with one side's binaries and
/// returns its named figures. Prints the load average around every pair.
///
/// # Errors
/// The first error `run` returns.
pub fn alternate(
    pairs: usize,
    steps: usize,
    mut run: impl FnMut(Side, usize) -> Result<Vec<(String, f64)>>,
) -> Result<Pairs> {
    let mut result = Pairs::default();
    for pair in 0..pairs {
        let before = load_average();
        eprintln!("xtask: pair {}/{pairs}: load average {before}", pair + 1);
        for step in 0..steps {
            for side in order(pair) {
                for (name, value) in run(side, step)? {
                    result.record(side, &name, value);
                }
            }
        }
        let after = load_average();
        eprintln!(
            "xtask: pair {}/{pairs} done: load average {after}",
            pair + 1
        );
        result.loads.push((before, after));
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn summarises_pairs() {
        // (baseline values, current values, expected summary)
        // (baseline median, current median, ratio, low, high)
        type Expected = Option<(f64, f64, f64, f64, f64)>;
        let cases: &[(&[f64], &[f64], Expected)] = &[
            (&[], &[], None),
            (&[10.0], &[12.0], Some((10.0, 12.0, 1.2, 1.2, 1.2))),
            // Odd count: the middle ratio; the range from the extremes.
            (
                &[10.0, 20.0, 40.0],
                &[11.0, 20.0, 30.0],
                Some((20.0, 20.0, 1.0, 0.75, 1.1)),
            ),
            // Even count: the mean of the middle two, for both medians and
            // the ratio.
            (
                &[100.0, 100.0, 200.0, 200.0],
                &[50.0, 100.0, 300.0, 400.0],
                Some((150.0, 200.0, 1.25, 0.5, 2.0)),
            ),
            // The ratio pairs by index, not by rank: a slow pair stays a
            // pair (sorting each side apart would give ratios 1.0 and 1.0).
            (&[2.0, 1.0], &[1.0, 2.0], Some((1.5, 1.5, 1.25, 0.5, 2.0))),
            // A missing current value leaves its pair out of the ratios.
            (&[4.0, 8.0], &[2.0], Some((6.0, 2.0, 0.5, 0.5, 0.5))),
        ];
        for (baseline, current, expected) in cases {
            let figure = Figure {
                name: "f".into(),
                baseline: baseline.to_vec(),
                current: current.to_vec(),
            };
            let got = figure
                .summary()
                .map(|s| (s.baseline_median, s.current_median, s.ratio, s.low, s.high));
            match (got, expected) {
                (None, None) => {}
                (Some(g), Some(e)) => {
                    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
                    assert!(
                        close(g.0, e.0)
                            && close(g.1, e.1)
                            && close(g.2, e.2)
                            && close(g.3, e.3)
                            && close(g.4, e.4),
                        "{baseline:?} {current:?}: {g:?} != {e:?}"
                    );
                }
                _ => panic!("{baseline:?} {current:?}: {got:?} != {expected:?}"),
            }
        }
    }

    #[test]
    fn alternates_sides_and_records_in_order() {
        let mut calls = Vec::new();
        let pairs = alternate(3, 2, |side, step| {
            calls.push((side, step));
            let value = match side {
                Side::Baseline => 10.0,
                Side::Current => 5.0 + calls.len() as f64,
            };
            Ok(vec![(format!("step {step}"), value)])
        })
        .unwrap();
        use Side::{Baseline as B, Current as C};
        assert_eq!(
            calls,
            [
                (B, 0),
                (C, 0),
                (B, 1),
                (C, 1),
                (C, 0),
                (B, 0),
                (C, 1),
                (B, 1),
                (B, 0),
                (C, 0),
                (B, 1),
                (C, 1)
            ]
        );
        let names: Vec<&str> = pairs.figures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["step 0", "step 1"]);
        // Current values are 5 + the call's number (from 1).
        assert_eq!(pairs.figures[0].current, [7.0, 10.0, 15.0]);
        assert_eq!(pairs.figures[1].current, [9.0, 12.0, 17.0]);
        assert_eq!(pairs.figures[0].baseline, [10.0; 3]);
        assert_eq!(pairs.loads.len(), 3);
    }

    #[test]
    fn a_failing_step_stops_the_pairs() {
        let mut calls = 0;
        let result = alternate(2, 2, |_, step| {
            calls += 1;
            if step == 1 {
                bail!("step 1 broke");
            }
            Ok(vec![])
        });
        assert_eq!(result.unwrap_err().to_string(), "step 1 broke");
        assert_eq!(calls, 3);
    }

    #[test]
    fn takes_baseline_options() {
        // (arguments, rev, pairs, the rest)
        let cases = [
            ("", None, 5, ""),
            ("--quick", None, 5, "--quick"),
            ("--baseline HEAD~5", Some("HEAD~5"), 5, ""),
            (
                "--rounds 2 --baseline main --pairs 1 --quick",
                Some("main"),
                1,
                "--rounds 2 --quick",
            ),
        ];
        for (line, rev, pairs, rest) in cases {
            let (request, others) = Request::take(&strings(line)).unwrap();
            assert_eq!(request.rev.as_deref(), rev, "{line:?}");
            assert_eq!(request.pairs, pairs, "{line:?}");
            assert_eq!(others, strings(rest), "{line:?}");
        }
        // (arguments, the message)
        let bad = [
            (
                "--baseline",
                "--baseline needs a git revision (a commit, tag or branch)",
            ),
            ("--baseline x --pairs", "--pairs needs a number"),
            (
                "--baseline x --pairs 0",
                "--pairs 0: expected a positive whole number",
            ),
            (
                "--baseline x --pairs two",
                "--pairs two: expected a positive whole number",
            ),
            ("--pairs 3", "--pairs needs --baseline <rev>"),
        ];
        for (line, message) in bad {
            let e = Request::take(&strings(line)).expect_err(line);
            assert!(e.downcast_ref::<BadInput>().is_some(), "{line:?}: {e}");
            assert_eq!(e.to_string(), message, "{line:?}");
        }
    }

    /// A repository of two commits in a temporary directory; the files
    /// differ between them.
    fn repository() -> (tempfile::TempDir, String, String) {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .current_dir(dir.path())
                .args(["-c", "user.name=t", "-c", "user.email=t@localhost"])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("version"), "one\n").unwrap();
        git(&["add", "version"]);
        git(&["commit", "-q", "-m", "one"]);
        let first = git(&["rev-parse", "HEAD"]);
        std::fs::write(dir.path().join("version"), "two\n").unwrap();
        git(&["commit", "-q", "-a", "-m", "two"]);
        let second = git(&["rev-parse", "HEAD"]);
        (dir, first, second)
    }

    #[test]
    fn resolves_revisions_and_refuses_unknown_ones() {
        let (repo, first, second) = repository();
        assert_eq!(resolve(repo.path(), "HEAD").unwrap(), second);
        assert_eq!(resolve(repo.path(), "HEAD~1").unwrap(), first);
        assert_eq!(resolve(repo.path(), &first[..10]).unwrap(), first);
        for bad in ["HEAD~2", "no-such-branch", "--all", "", "HEAD:version"] {
            let e = resolve(repo.path(), bad).expect_err(bad);
            assert!(e.downcast_ref::<BadInput>().is_some(), "{bad:?}: {e}");
            assert_eq!(
                e.to_string(),
                format!(
                    "--baseline {bad}: not a commit of the repository at {}",
                    repo.path().display()
                )
            );
        }
    }

    #[test]
    fn exports_builds_and_reuses_a_baseline() {
        let (repo, first, _) = repository();
        let target = tempfile::tempdir().unwrap();
        // A current release build to seed from.
        std::fs::create_dir_all(target.path().join("release")).unwrap();
        std::fs::write(target.path().join("release").join("dep"), "built").unwrap();
        let mut builds = Vec::new();
        for _ in 0..2 {
            let baseline = prepare(repo.path(), target.path(), &first, |source, out| {
                builds.push((source.to_path_buf(), out.to_path_buf()));
                // What a build of the baseline's tree sees: its own files.
                assert_eq!(
                    std::fs::read_to_string(source.join("version")).unwrap(),
                    "one\n"
                );
                std::fs::write(out.join("release").join("ycsb"), "baseline").unwrap();
                Ok(())
            })
            .unwrap();
            let dir = target.path().join("baseline").join(&first);
            assert_eq!(baseline.source, dir.join("src"));
            assert_eq!(baseline.target, dir.join("target"));
            assert_eq!(baseline.release(), dir.join("target").join("release"));
            assert_eq!(
                std::fs::read_to_string(baseline.release().join("dep")).unwrap(),
                "built"
            );
            // The export is not a checkout: no .git of its own.
            assert!(!baseline.source.join(".git").exists());
            // The current tree is untouched.
            assert_eq!(
                std::fs::read_to_string(repo.path().join("version")).unwrap(),
                "two\n"
            );
            assert_eq!(baseline.short(), &first[..12]);
        }
        assert_eq!(builds.len(), 2);
        // The second time reuses the export (a file added to it stays) and
        // does not seed again (the build's own output stays).
        let dir = target.path().join("baseline").join(&first);
        std::fs::write(dir.join("src").join("mark"), "").unwrap();
        prepare(repo.path(), target.path(), &first, |source, out| {
            assert!(source.join("mark").exists());
            assert_eq!(
                std::fs::read_to_string(out.join("release").join("ycsb")).unwrap(),
                "baseline"
            );
            Ok(())
        })
        .unwrap();
        let e = prepare(repo.path(), target.path(), &first, |_, _| {
            bail!("cargo failed")
        })
        .unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            format!("building the baseline {first}: cargo failed")
        );
    }
}
