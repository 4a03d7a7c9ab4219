//! Experiment matrices: run a matrix of benchmark cells, each as its own
//! `ycsb` process, keep their provenance, resume after an interruption,
//! and summarise the results in tables and an HTML report.
//!
//! `cargo xtask experiment <matrix.toml>` is the command; this crate is
//! everything but its command line. See docs/experiments.md for the matrix
//! format. The library never prints, reads argv or exits: what it has to
//! say goes through the caller's [`Progress`], failures are
//! [`ExperimentError`]s, and Ctrl-C is a flag the caller sets.
//!
//! Stores are known only through the `ycsb-stores` registry: which names
//! exist, which keep a data directory that a shared load can copy, which
//! are clients of a server and over what protocol all come from their
//! [`StoreDescriptor`](ycsb_db::StoreDescriptor)s.
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use std::sync::Arc;
//! use ycsb_experiment::{Mode, Options, Progress};
//!
//! struct Print;
//! impl Progress for Print {
//!     fn status(&mut self, line: &str) {
//!         eprintln!("{line}");
//!     }
//!     fn result(&mut self, text: &str) {
//!         println!("{text}");
//!     }
//! }
//!
//! let options = Options::new(".".into(), "matrices/smoke.toml".into(), Mode::Check);
//! ycsb_experiment::run(&options, Arc::new(AtomicBool::new(false)), &mut Print)?;
//! # Ok::<(), ycsb_experiment::ExperimentError>(())
//! ```

#![deny(missing_docs)]
// Only the programs print or exit; a library reports through its return
// values, and a bug is a typed error, not a panic (tests may do both).
#![cfg_attr(
    not(test),
    deny(
        clippy::print_stdout,
        clippy::print_stderr,
        clippy::exit,
        clippy::unwrap_used
    )
)]

mod cells;
mod error;
mod host;
mod matrix;
mod paths;
mod proc;
mod records;
mod redact;
mod report;
mod run;
mod series;
mod summary;
mod sweep;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cells::Cell;
use error::{Context as _, Result};
use matrix::{Matrix, Server};
use run::{Kind, Outcome, Runner};

pub use error::{ExperimentError, MatrixError};

/// Where the runner's messages go; the caller decides how to show them.
pub trait Progress {
    /// A line about what is happening: the I/O ceiling measured, a cell
    /// starting (`[k/N] elapsed, ETA: cell`), a cell failed, the totals.
    /// `cargo xtask experiment` prints these to standard error.
    fn status(&mut self, line: &str);

    /// Text for the reader: the cells of a check, each phase's summary
    /// table, where the results and the report are. `cargo xtask
    /// experiment` prints these to standard output.
    fn result(&mut self, text: &str);
}

/// What [`run`] does with the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// Validate the matrix and list its cells; run nothing.
    Check,
    /// Run the cells that are not complete with their current inputs,
    /// then write the summaries and the report.
    Run,
    /// Rerun every cell, complete or not.
    Force,
    /// Only rebuild the summaries and the report from complete cells.
    ReportOnly,
}

/// What to run and where.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// The repository: where `ycsb` is built and the git revision read.
    pub root: PathBuf,
    /// The matrix file.
    pub matrix: PathBuf,
    /// What to do.
    pub mode: Mode,
    /// The results root; `None`: `<root>/results`.
    pub results: Option<PathBuf>,
    /// The `ycsb` binary; `None`: build it with `cargo build --release`.
    pub ycsb: Option<PathBuf>,
}

impl Options {
    /// Options for `matrix` in the repository at `root`, results under
    /// `<root>/results`, `ycsb` built in release mode.
    pub fn new(root: PathBuf, matrix: PathBuf, mode: Mode) -> Self {
        Self {
            root,
            matrix,
            mode,
            results: None,
            ycsb: None,
        }
    }
}

/// The ordered work: shared loads just before the first run cell needing them.
fn plan(m: &Matrix, all: &[Cell]) -> Vec<(Cell, Kind)> {
    if m.reuse_load_across.is_empty() {
        return all.iter().map(|c| (c.clone(), Kind::Fresh)).collect();
    }
    let loads = cells::load_cells(m, all);
    // By id, each taken out when planned: linear in the cells.
    let mut unplanned: HashMap<&str, &Cell> = loads.iter().map(|l| (l.id.as_str(), l)).collect();
    let mut out: Vec<(Cell, Kind)> = Vec::with_capacity(all.len() + loads.len());
    for c in all {
        if let Some(l) = c.load.as_deref().and_then(|id| unplanned.remove(id)) {
            out.push((l.clone(), Kind::SharedLoad));
        }
        out.push((c.clone(), Kind::RunOnCopy));
    }
    out
}

fn hms(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Checks what the cells need before any runs: stores the binary knows,
/// servers and tools installed.
fn preflight(m: &Matrix, ycsb: &Path) -> Result<()> {
    let out = Command::new(ycsb)
        .arg("stores")
        .output()
        .context(|| format!("running {} stores", ycsb.display()))?;
    let known: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    let mut needed: Vec<(String, String)> = Vec::new();
    for db in m.dbs.values() {
        needed.push((db.label.clone(), db.store.clone()));
        if let Some(Server::YcsbServe { engine, .. }) = &db.server {
            needed.push((db.label.clone(), engine.clone()));
        }
    }
    for (label, store) in needed {
        if !known.contains(&store) {
            return Err(ExperimentError::Tool(format!(
                "db '{label}' needs store '{store}', which {} does not have (it has: {})",
                ycsb.display(),
                known.join(", ")
            )));
        }
    }
    let tool = |name: &str, why: &str| -> Result<()> {
        match Command::new(name).arg("--version").output() {
            Ok(_) => Ok(()),
            Err(_) => Err(ExperimentError::Tool(format!(
                "{why} needs '{name}', which is not installed (cargo xtask deps installs it)"
            ))),
        }
    };
    if m.dbs.values().any(|d| d.server == Some(Server::Redis)) {
        tool("redis-server", "a db with server = \"redis-server\"")?;
    }
    if m.dbs.values().any(|d| d.server == Some(Server::Memcached)) {
        tool("memcached", "a db with server = \"memcached\"")?;
    }
    if m.dbs.values().any(|d| d.server == Some(Server::Postgres)) {
        tool(
            &run::command::postgres_program("postgres"),
            "a db with server = \"postgres\" (Debian's postgresql)",
        )?;
    }
    if m.dbs.values().any(|d| d.server == Some(Server::MariaDb)) {
        tool(
            "mariadbd",
            "a db with server = \"mariadb\" (Debian's mariadb-server)",
        )?;
    }
    if m.cpus.is_some() || m.server_cpus.is_some() {
        tool("taskset", "experiment.cpus")?;
    }
    if m.memory_limit.is_some() || m.axes.iter().any(|a| a.name == "memory_limit") {
        // Fails now, with the reason, rather than at the first cell.
        proc::Cgroup::create(
            &format!("ycsb-xtask-{}-check", std::process::id()),
            m.memory_limit.unwrap_or(1 << 30),
        )?;
    }
    Ok(())
}

/// Runs the experiment `options` describe: validates the matrix, then,
/// depending on the mode, lists its cells, runs those not complete, and
/// writes the summaries (`summary.md`, `summary-<phase>.csv`) and
/// `report.html` under `<results>/<experiment>/`.
///
/// Setting `stop` (from a Ctrl-C or SIGTERM handler) kills the running
/// cell and discards its partial directory; the same call later resumes.
///
/// # Errors
///
/// A refused matrix ([`ExperimentError::Matrix`], naming `file:line`,
/// before anything is written), a failed build or missing tool, a results
/// directory the runner did not make ([`ExperimentError::NotOwned`]),
/// files that cannot be written, or an interruption. A failed cell (or a
/// failed shared load, which fails the cells that would run on its data)
/// does not stop the others: when all have run, the summaries and the
/// report list each failure with its reason, and the result is
/// [`ExperimentError::CellsFailed`].
pub fn run(options: &Options, stop: Arc<AtomicBool>, progress: &mut dyn Progress) -> Result<()> {
    let m = matrix::load(&options.matrix)?;
    let all = cells::expand(&m);
    let work = plan(&m, &all);
    if options.mode == Mode::Check {
        let loads = work.len() - all.len();
        let mut text = format!(
            "{}: {} cells{}",
            m.name,
            all.len(),
            if loads > 0 {
                format!(" and {loads} shared loads")
            } else {
                String::new()
            }
        );
        for (c, k) in &work {
            text.push_str(&format!(
                "\n  {}{}",
                c.id,
                if *k == Kind::SharedLoad {
                    "  (shared load)"
                } else {
                    ""
                }
            ));
        }
        progress.result(&text);
        return Ok(());
    }
    let root = &options.root;
    let results_root = options
        .results
        .clone()
        .unwrap_or_else(|| root.join("results"));
    let results = paths::child(&results_root, &m.name)?;
    paths::claim_experiment_dir(&results)?;
    let results = results
        .canonicalize()
        .context(|| format!("resolving {}", results.display()))?;
    let data = match &m.data_dir {
        Some(d) => paths::child(d, &m.name)?,
        None => results.join("data"),
    };
    std::fs::create_dir_all(&data).context(|| format!("creating {}", data.display()))?;
    let data = data
        .canonicalize()
        .context(|| format!("resolving {}", data.display()))?;
    let host_facts = host::facts();
    let git = host::git_revision(root);
    let reports = Reports {
        m: &m,
        results: &results,
        all: &all,
        work: &work,
        host_facts: &host_facts,
        git: git.as_deref(),
        data: &data,
    };
    if options.mode == Mode::ReportOnly {
        // The failures the last run recorded, for cells still not complete.
        let failed: Vec<(Cell, String)> = work
            .iter()
            .filter_map(|(c, _)| Some((c.clone(), run::recorded_failure(&results, &c.id)?)))
            .collect();
        return reports.write(&failed, progress);
    }
    let force = options.mode == Mode::Force;
    let ycsb = match &options.ycsb {
        Some(p) => p.clone(),
        None => build_ycsb(root, progress)?,
    };
    let ycsb = ycsb
        .canonicalize()
        .context(|| format!("ycsb binary {}", ycsb.display()))?;
    preflight(&m, &ycsb)?;
    // Leftovers of a killed run: never results.
    for sub in ["cells", "loads"] {
        if let Ok(entries) = std::fs::read_dir(results.join(sub)) {
            for e in entries.flatten() {
                if e.file_name()
                    .to_string_lossy()
                    .starts_with(paths::PARTIAL_PREFIX)
                {
                    // Only partial cells of ours: anything else is kept.
                    let _ = paths::remove_owned(&e.path());
                }
            }
        }
    }
    host::write_atomic(
        &results.join("matrix.toml"),
        redact::text(&m.text).as_bytes(),
    )?;
    let host_json = serde_json::to_string_pretty(&records::HostFile {
        matrix: m.path.display().to_string(),
        host: host_facts.clone(),
        git_revision: git.clone(),
        db_filesystem: host::filesystem(&data),
    })
    .context(|| "encoding host.json".into())?;
    host::write_atomic(&results.join("host.json"), host_json.as_bytes())?;
    let io_ceiling = match m.io_ceiling {
        Some(bytes) => {
            let v = host::io_ceiling(&results_root.join("io-ceiling.json"), &data, bytes)?;
            progress.status(&format!(
                "experiment: sequential write ceiling of {} ({}): {:.0} MB/s",
                v.mount,
                v.fstype,
                v.write_bytes_per_sec / 1e6
            ));
            Some(v)
        }
        None => None,
    };
    let runner = Runner {
        ycsb,
        results: results.clone(),
        data: data.clone(),
        force,
        stop: Arc::clone(&stop),
        host: host_facts.clone(),
        git: git.clone(),
        io_ceiling,
    };
    let started = Instant::now();
    let (mut executed, mut executed_secs, mut skipped) = (0usize, 0.0f64, 0usize);
    // Cells that failed, in order, with the reason.
    let mut failed: Vec<(Cell, String)> = Vec::new();
    // Shared loads that failed: their run cells fail without running.
    let mut failed_loads: HashMap<&str, String> = HashMap::new();
    // Cells still to run, for an ETA that does not count complete ones,
    // and run cells still to run per shared load.
    let todo: Vec<bool> = work
        .iter()
        .map(|(c, k)| force || !runner.is_complete(&m, c, *k))
        .collect();
    let mut pending_runs: HashMap<&str, usize> = HashMap::new();
    for ((c, k), t) in work.iter().zip(&todo) {
        if let (Kind::RunOnCopy, Some(load), true) = (k, c.load.as_deref(), *t) {
            *pending_runs.entry(load).or_default() += 1;
        }
    }
    let mut remaining = todo.iter().filter(|t| **t).count();
    for (i, (cell, kind)) in work.iter().enumerate() {
        if todo[i] {
            remaining -= 1;
        }
        // A shared load is only needed while some of its run cells are not complete.
        if *kind == Kind::SharedLoad && !force && !pending_runs.contains_key(cell.id.as_str()) {
            skipped += 1;
            continue;
        }
        if let Some(why) = cell
            .load
            .as_deref()
            .and_then(|l| failed_loads.get(l))
            .filter(|_| todo[i])
        {
            let why = format!(
                "its shared load {} failed: {why}",
                cell.load.as_deref().unwrap_or("")
            );
            progress.status(&format!("experiment: cell {} failed: {why}", cell.id));
            if let Err(e) = runner.record_failure(cell, &why) {
                progress.status(&format!(
                    "experiment: cannot record the failure of {}: {e}",
                    cell.id
                ));
            }
            failed.push((cell.clone(), why));
            continue;
        }
        let eta = if executed > 0 {
            format!(
                "ETA {}",
                hms(executed_secs / executed as f64 * (remaining + 1) as f64)
            )
        } else {
            "ETA after the first cell".into()
        };
        let line = format!(
            "[{}/{}] {} elapsed, {eta}: {}",
            i + 1,
            work.len(),
            hms(started.elapsed().as_secs_f64()),
            cell.id
        );
        let t = Instant::now();
        // A problem of one cell fails that cell; the others still run.
        let outcome = runner
            .run_cell(&m, cell, *kind, &mut || progress.status(&line))
            .unwrap_or_else(|e| {
                // Failed before it had a directory: recorded for --report.
                let why = e.to_string();
                let _ = runner.record_failure(cell, &why);
                Outcome::Failed(why)
            });
        match outcome {
            Outcome::Done => {
                executed += 1;
                executed_secs += t.elapsed().as_secs_f64();
            }
            Outcome::Skipped => skipped += 1,
            Outcome::Failed(why) => {
                progress.status(&format!("experiment: cell {} failed: {why}", cell.id));
                if *kind == Kind::SharedLoad {
                    failed_loads.insert(cell.id.as_str(), why.clone());
                }
                failed.push((cell.clone(), why));
                executed += 1;
                executed_secs += t.elapsed().as_secs_f64();
            }
            Outcome::Interrupted => {
                return Err(ExperimentError::Interrupted {
                    during: Some(cell.id.clone()),
                    complete: count_complete(&results),
                });
            }
        }
        if stop.load(Ordering::SeqCst) {
            return Err(ExperimentError::Interrupted {
                during: None,
                complete: count_complete(&results),
            });
        }
    }
    if !m.keep_data {
        // Shared loads whose run cells are all complete.
        let mut incomplete: HashMap<&str, bool> = HashMap::new();
        for (c, k) in &work {
            if let (Kind::RunOnCopy, Some(load)) = (k, c.load.as_deref()) {
                *incomplete.entry(load).or_default() |= !runner.is_complete(&m, c, *k);
            }
        }
        for (cell, kind) in &work {
            if *kind == Kind::SharedLoad && incomplete.get(cell.id.as_str()) != Some(&true) {
                if let Ok(dir) = paths::child(&data, &cell.id) {
                    let _ = paths::remove_owned(&dir);
                }
            }
        }
    }
    progress.status(&format!(
        "experiment: {executed} cells run, {skipped} already complete, {} failed, in {}",
        failed.len(),
        hms(started.elapsed().as_secs_f64())
    ));
    reports.write(&failed, progress)?;
    if !failed.is_empty() {
        return Err(ExperimentError::CellsFailed {
            cells: failed.into_iter().map(|(c, _)| c.id).collect(),
        });
    }
    Ok(())
}

fn count_complete(results: &Path) -> usize {
    ["cells", "loads"]
        .iter()
        .filter_map(|s| std::fs::read_dir(results.join(s)).ok())
        .flat_map(|d| d.flatten())
        .filter(|e| e.path().join("cell.json").is_file())
        .count()
}

/// What the summaries and the report are made of.
struct Reports<'a> {
    m: &'a Matrix,
    results: &'a Path,
    all: &'a [Cell],
    work: &'a [(Cell, Kind)],
    host_facts: &'a records::HostFacts,
    git: Option<&'a str>,
    data: &'a Path,
}

impl Reports<'_> {
    /// Writes the summaries and the report of the complete cells and of
    /// those that `failed` (with the reason).
    fn write(&self, failed: &[(Cell, String)], progress: &mut dyn Progress) -> Result<()> {
        let (m, results) = (self.m, self.results);
        let mut cells: Vec<Cell> = self
            .work
            .iter()
            .filter(|(_, k)| *k == Kind::SharedLoad)
            .map(|(c, _)| c.clone())
            .collect();
        cells.extend(self.all.iter().cloned());
        let res = summary::read_results(results, &cells)?;
        let mut phases = Vec::new();
        let mut md = format!("# {}\n\n{}\n\n", m.name, m.description);
        for phase in ["load", "run"] {
            let rows = summary::rows(m, &res, phase);
            if rows.is_empty() {
                continue;
            }
            progress.result(&format!("\n{}", summary::terminal(m, phase, &rows)));
            md.push_str(&summary::markdown(m, phase, &rows));
            md.push('\n');
            host::write_atomic(
                &results.join(format!("summary-{phase}.csv")),
                summary::csv(m, &rows).as_bytes(),
            )?;
            if let Some(note) = summary::too_short_note(m, &res, phase) {
                progress.result(&format!("note: {note}"));
                md.push_str(&format!("Note: {note}\n\n"));
            }
            let knees = sweep::markdown(m, &res, phase);
            if !knees.is_empty() {
                progress.result(knees.trim_start_matches("#### "));
                md.push_str(&knees);
                md.push('\n');
            }
            let sweep_csv = results.join(format!("sweep-{phase}.csv"));
            match sweep::csv(m, &res, phase) {
                Some(text) => host::write_atomic(&sweep_csv, text.as_bytes())?,
                // A sweep of an earlier version of the matrix, recognised
                // by its header, does not outlive it.
                None => {
                    if std::fs::read_to_string(&sweep_csv)
                        .is_ok_and(|t| t.starts_with(sweep::CSV_HEADER))
                    {
                        let _ = std::fs::remove_file(&sweep_csv);
                    }
                }
            }
            phases.push((phase.to_string(), rows));
        }
        if !failed.is_empty() {
            progress.result(&format!("\n{}", summary::failed_terminal(failed)));
            md.push_str(&summary::failed_markdown(failed));
            md.push('\n');
        }
        // Written even when empty, so that it never tells of an older run.
        host::write_atomic(
            &results.join("summary-failed.csv"),
            summary::failed_csv(m, failed).as_bytes(),
        )?;
        md.push_str("Throughput is mean ± sample standard deviation over repeats; latencies in microseconds (means over repeats); cpu % is of one core; cv % is the coefficient of variation of per-interval throughput (lower is steadier); user MB/s counts keys and values written, its share is of the measured sequential write bandwidth.\n");
        host::write_atomic(&results.join("summary.md"), md.as_bytes())?;
        let context = records::RunContext {
            host: self.host_facts.clone(),
            git: self.git.map(str::to_string),
            filesystem: host::filesystem(self.data),
            io_ceiling: res.iter().find_map(|r| r.io_ceiling.clone()),
        };
        let html = report::html(m, &res, &phases, failed, &context);
        host::write_atomic(&results.join("report.html"), html.as_bytes())?;
        progress.result(&format!(
            "results: {}\nreport:  {}",
            results.display(),
            results.join("report.html").display()
        ));
        Ok(())
    }
}

fn build_ycsb(root: &Path, progress: &mut dyn Progress) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    progress.status("experiment: building ycsb (release)");
    let status = Command::new(&cargo)
        .current_dir(root)
        .args(["build", "--release", "-p", "ycsb-cli"])
        .status()
        .context(|| "starting cargo".into())?;
    if !status.success() {
        return Err(ExperimentError::Tool(format!(
            "cargo build --release -p ycsb-cli failed with {status}"
        )));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let target = if target.is_relative() {
        root.join(target)
    } else {
        target
    };
    Ok(target.join("release").join("ycsb"))
}
