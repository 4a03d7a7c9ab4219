//! `cargo xtask experiment <matrix.toml>`: run a matrix of benchmark cells,
//! each as its own `ycsb` process, keep their provenance, resume after an
//! interruption, and summarise the results in tables and an HTML report.
//!
//! See docs/experiments.md for the matrix format.

pub mod cells;
pub mod host;
pub mod matrix;
pub mod proc;
pub mod redact;
pub mod report;
pub mod run;
pub mod series;
pub mod summary;
pub mod svg;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::json;

use cells::Cell;
use matrix::{Matrix, Server};
use run::{Kind, Outcome, Runner};

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
";

struct Options {
    matrix: PathBuf,
    check: bool,
    force: bool,
    report_only: bool,
    results: Option<PathBuf>,
    ycsb: Option<PathBuf>,
}

fn parse_options(args: &[String]) -> Result<Options> {
    let mut o = Options {
        matrix: PathBuf::new(),
        check: false,
        force: false,
        report_only: false,
        results: None,
        ycsb: None,
    };
    let mut it = args.iter();
    let mut matrix = None;
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => o.check = true,
            "--force" => o.force = true,
            "--report" => o.report_only = true,
            "--results" => {
                o.results = Some(it.next().context("--results needs a directory")?.into())
            }
            "--ycsb" => o.ycsb = Some(it.next().context("--ycsb needs a path")?.into()),
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
    o.matrix = matrix.with_context(|| format!("experiment: which matrix?\n\n{USAGE}"))?;
    Ok(o)
}

/// The ordered work: shared loads just before the first run cell needing them.
fn plan(m: &Matrix, all: &[Cell]) -> Vec<(Cell, Kind)> {
    if m.reuse_load_across.is_empty() {
        return all.iter().map(|c| (c.clone(), Kind::Fresh)).collect();
    }
    let loads = cells::load_cells(m, all);
    let mut out: Vec<(Cell, Kind)> = Vec::new();
    for c in all {
        if let Some(l) = loads.iter().find(|l| Some(&l.id) == c.load.as_ref()) {
            if !out.iter().any(|(x, _)| x.id == l.id) {
                out.push((l.clone(), Kind::SharedLoad));
            }
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
        .with_context(|| format!("running {} stores", ycsb.display()))?;
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
            bail!(
                "db '{label}' needs store '{store}', which {} does not have (it has: {})",
                ycsb.display(),
                known.join(", ")
            );
        }
    }
    let tool = |name: &str, why: &str| -> Result<()> {
        match Command::new(name).arg("--version").output() {
            Ok(_) => Ok(()),
            Err(_) => {
                bail!("{why} needs '{name}', which is not installed (cargo xtask deps installs it)")
            }
        }
    };
    if m.dbs.values().any(|d| d.server == Some(Server::Redis)) {
        tool("redis-server", "a db with server = \"redis-server\"")?;
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

/// Entry point of `cargo xtask experiment`.
///
/// # Errors
/// A refused matrix, a failed build, failed cells or an interruption.
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    let o = parse_options(args)?;
    let m = matrix::load(&o.matrix)?;
    let all = cells::expand(&m);
    let work = plan(&m, &all);
    if o.check {
        let loads = work.len() - all.len();
        println!(
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
            println!(
                "  {}{}",
                c.id,
                if *k == Kind::SharedLoad {
                    "  (shared load)"
                } else {
                    ""
                }
            );
        }
        return Ok(());
    }
    let results_root = o.results.clone().unwrap_or_else(|| root.join("results"));
    let results = results_root.join(&m.name);
    std::fs::create_dir_all(&results).with_context(|| format!("creating {}", results.display()))?;
    let results = results.canonicalize()?;
    let data = match &m.data_dir {
        Some(d) => d.join(&m.name),
        None => results.join("data"),
    };
    std::fs::create_dir_all(&data).with_context(|| format!("creating {}", data.display()))?;
    let data = data.canonicalize()?;
    let host_facts = host::facts();
    let git = host::git_revision(root);

    if !o.report_only {
        let ycsb = match &o.ycsb {
            Some(p) => p.clone(),
            None => build_ycsb(root)?,
        };
        let ycsb = ycsb
            .canonicalize()
            .with_context(|| format!("ycsb binary {}", ycsb.display()))?;
        preflight(&m, &ycsb)?;
        // Leftovers of a killed run: never results.
        for sub in ["cells", "loads"] {
            if let Ok(entries) = std::fs::read_dir(results.join(sub)) {
                for e in entries.flatten() {
                    if e.file_name().to_string_lossy().starts_with(".partial-") {
                        let _ = std::fs::remove_dir_all(e.path());
                    }
                }
            }
        }
        host::write_atomic(
            &results.join("matrix.toml"),
            redact::text(&m.text).as_bytes(),
        )?;
        host::write_atomic(&results.join("host.json"), serde_json::to_string_pretty(&json!({"matrix": m.path.display().to_string(), "host": host_facts, "git_revision": git, "db_filesystem": host::filesystem_json(&data)}))?.as_bytes())?;
        let io_ceiling = match m.io_ceiling {
            Some(bytes) => {
                let v = host::io_ceiling(&results_root.join("io-ceiling.json"), &data, bytes)?;
                eprintln!(
                    "experiment: sequential write ceiling of {} ({}): {:.0} MB/s",
                    v["mount"].as_str().unwrap_or("?"),
                    v["type"].as_str().unwrap_or("?"),
                    v["write_bytes_per_sec"].as_f64().unwrap_or(0.0) / 1e6
                );
                Some(v)
            }
            None => None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        {
            let stop = Arc::clone(&stop);
            // A second handler (tests running twice in one process) is refused; the first one still sets a flag.
            let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
        }
        let runner = Runner {
            ycsb,
            results: results.clone(),
            data: data.clone(),
            force: o.force,
            stop: Arc::clone(&stop),
            host: host_facts.clone(),
            git: git.clone(),
            io_ceiling,
        };
        let started = Instant::now();
        let (mut executed, mut executed_secs, mut skipped) = (0usize, 0.0f64, 0usize);
        let mut failed: Vec<(String, String)> = Vec::new();
        // Cells still to run, for an ETA that does not count complete ones.
        let todo: Vec<bool> = work
            .iter()
            .map(|(c, k)| o.force || !runner.is_complete(&m, c, *k))
            .collect();
        for (i, (cell, kind)) in work.iter().enumerate() {
            // A shared load is only needed while some of its run cells are not complete.
            if *kind == Kind::SharedLoad && !o.force {
                let pending = work.iter().any(|(c, k)| {
                    *k == Kind::RunOnCopy
                        && c.load.as_ref() == Some(&cell.id)
                        && !runner.is_complete(&m, c, *k)
                });
                if !pending {
                    skipped += 1;
                    continue;
                }
            }
            let remaining = todo[i..].iter().filter(|t| **t).count().max(1);
            let eta = if executed > 0 {
                format!(
                    "ETA {}",
                    hms(executed_secs / executed as f64 * remaining as f64)
                )
            } else {
                "ETA after the first cell".into()
            };
            let progress = format!(
                "[{}/{}] {} elapsed, {eta}:",
                i + 1,
                work.len(),
                hms(started.elapsed().as_secs_f64())
            );
            let t = Instant::now();
            match runner.run_cell(&m, cell, *kind, &progress)? {
                Outcome::Done => {
                    executed += 1;
                    executed_secs += t.elapsed().as_secs_f64();
                }
                Outcome::Skipped => skipped += 1,
                Outcome::Failed(why) => {
                    eprintln!("experiment: cell {} failed: {why}", cell.id);
                    failed.push((cell.id.clone(), why));
                    executed += 1;
                    executed_secs += t.elapsed().as_secs_f64();
                }
                Outcome::Interrupted => {
                    bail!("interrupted during {}; {} cells complete are kept, the partial one was discarded: run the same command again to resume", cell.id, count_complete(&results));
                }
            }
            if stop.load(Ordering::SeqCst) {
                bail!("interrupted; run the same command again to resume");
            }
        }
        if !m.keep_data {
            // Shared loads whose run cells are all complete.
            for (cell, kind) in &work {
                if *kind == Kind::SharedLoad
                    && work.iter().all(|(c, k)| {
                        *k != Kind::RunOnCopy
                            || c.load.as_ref() != Some(&cell.id)
                            || runner.is_complete(&m, c, *k)
                    })
                {
                    let _ = std::fs::remove_dir_all(data.join(&cell.id));
                }
            }
        }
        eprintln!(
            "experiment: {executed} cells run, {skipped} already complete, {} failed, in {}",
            failed.len(),
            hms(started.elapsed().as_secs_f64())
        );
        write_reports(
            &m,
            &results,
            &all,
            &work,
            &host_facts,
            git.as_deref(),
            &data,
        )?;
        if !failed.is_empty() {
            bail!(
                "{} cells failed (rerun to retry them): {}",
                failed.len(),
                failed
                    .iter()
                    .map(|f| f.0.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        return Ok(());
    }
    write_reports(
        &m,
        &results,
        &all,
        &work,
        &host_facts,
        git.as_deref(),
        &data,
    )
}

fn count_complete(results: &Path) -> usize {
    ["cells", "loads"]
        .iter()
        .filter_map(|s| std::fs::read_dir(results.join(s)).ok())
        .flat_map(|d| d.flatten())
        .filter(|e| e.path().join("cell.json").is_file())
        .count()
}

fn write_reports(
    m: &Matrix,
    results: &Path,
    all: &[Cell],
    work: &[(Cell, Kind)],
    host_facts: &serde_json::Value,
    git: Option<&str>,
    data: &Path,
) -> Result<()> {
    let mut cells: Vec<Cell> = work
        .iter()
        .filter(|(_, k)| *k == Kind::SharedLoad)
        .map(|(c, _)| c.clone())
        .collect();
    cells.extend(all.iter().cloned());
    let res = summary::read_results(results, &cells)?;
    let mut phases = Vec::new();
    let mut md = format!("# {}\n\n{}\n\n", m.name, m.description);
    for phase in ["load", "run"] {
        let rows = summary::rows(m, &res, phase);
        if rows.is_empty() {
            continue;
        }
        println!("\n{}", summary::terminal(m, phase, &rows));
        md.push_str(&summary::markdown(m, phase, &rows));
        md.push('\n');
        host::write_atomic(
            &results.join(format!("summary-{phase}.csv")),
            summary::csv(m, &rows).as_bytes(),
        )?;
        phases.push((phase.to_string(), rows));
    }
    md.push_str("Throughput is mean ± sample standard deviation over repeats; latencies in microseconds (means over repeats); cpu % is of one core; cv % is the coefficient of variation of per-interval throughput (lower is steadier); user MB/s counts keys and values written, its share is of the measured sequential write bandwidth.\n");
    host::write_atomic(&results.join("summary.md"), md.as_bytes())?;
    let io = res
        .iter()
        .find_map(|r| (!r.record["io_ceiling"].is_null()).then(|| r.record["io_ceiling"].clone()))
        .unwrap_or_default();
    let extra = json!({"host": host_facts, "git": git, "fs": host::filesystem_json(data), "io_ceiling": io});
    let html = report::html(m, &res, &phases, &extra);
    host::write_atomic(&results.join("report.html"), html.as_bytes())?;
    println!(
        "results: {}\nreport:  {}",
        results.display(),
        results.join("report.html").display()
    );
    Ok(())
}

fn build_ycsb(root: &Path) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("experiment: building ycsb (release)");
    let status = Command::new(&cargo)
        .current_dir(root)
        .args(["build", "--release", "-p", "ycsb-cli"])
        .status()
        .context("starting cargo")?;
    if !status.success() {
        bail!("cargo build --release -p ycsb-cli failed with {status}");
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
