//! Running cells: one `ycsb` process per cell (and a server when the db
//! needs one), provenance beside the results, write-then-rename, resume.

pub(crate) mod attempt;
pub(crate) mod command;
mod provenance;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use ycsb_db::ServerAddress;
use ycsb_results::RunReport;

use crate::cells::Cell;
use crate::error::{Context as _, ExperimentError, Result};
use crate::host;
use crate::matrix::{descriptor, Matrix};
use crate::paths::{self, FAILED_PREFIX, PARTIAL_PREFIX};
use crate::proc;
use attempt::Attempt;

/// Percentiles every cell exports unless the matrix sets its own: enough
/// points for a latency CDF.
pub const CDF_PERCENTILES: &str = "1,5,10,20,30,40,50,60,70,80,90,95,97,99,99.5,99.9,99.95,99.99";

/// What a cell does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The matrix's phases on a fresh DB directory.
    Fresh,
    /// Only the load, keeping the data for the run cells that share it.
    SharedLoad,
    /// Only the run, on a copy of a shared load's data.
    RunOnCopy,
}

impl Kind {
    /// The phases a cell of this kind runs, in order.
    pub(crate) fn phases(self, m: &Matrix) -> Vec<&'static str> {
        match self {
            Kind::Fresh => [("load", m.phases.load), ("run", m.phases.run)]
                .into_iter()
                .filter(|p| p.1)
                .map(|p| p.0)
                .collect(),
            Kind::SharedLoad => vec!["load"],
            Kind::RunOnCopy => vec!["run"],
        }
    }
}

/// How a cell ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Results written.
    Done,
    /// Already complete with the same inputs.
    Skipped,
    /// The cell failed; why.
    Failed(String),
    /// Ctrl-C or a termination signal.
    Interrupted,
}

/// Where and how cells run.
pub struct Runner {
    /// The `ycsb` binary.
    pub ycsb: PathBuf,
    /// `results/<experiment>`.
    pub results: PathBuf,
    /// Parent of the cells' DB directories.
    pub data: PathBuf,
    /// Rerun complete cells.
    pub force: bool,
    /// Set by Ctrl-C / SIGTERM.
    pub stop: Arc<AtomicBool>,
    /// Host facts, recorded in every cell.
    pub host: crate::records::HostFacts,
    /// Git revision of the checkout.
    pub git: Option<String>,
    /// The I/O ceiling measurement, if any.
    pub io_ceiling: Option<crate::records::IoCeiling>,
}

/// The directory of a complete cell.
///
/// # Errors
/// [`ExperimentError::UnsafePath`] when `id` is not one directory name.
pub fn cell_dir(results: &Path, id: &str) -> Result<PathBuf> {
    let sub = if id.starts_with("load,") {
        "loads"
    } else {
        "cells"
    };
    paths::child(&results.join(sub), id)
}

/// What a failed cell's kept directory (`.failed-<cell>/`) says about why
/// it failed.
pub const FAILURE_FILE: &str = "failure.txt";

/// Why a cell that is not complete failed, as its kept directory records,
/// if it failed.
pub fn recorded_failure(results: &Path, id: &str) -> Option<String> {
    let dir = cell_dir(results, id).ok()?;
    if dir.join("cell.json").is_file() {
        return None;
    }
    let failed = paths::child(dir.parent()?, &format!("{FAILED_PREFIX}{id}")).ok()?;
    let text = std::fs::read_to_string(failed.join(FAILURE_FILE)).ok()?;
    Some(text.trim_end().to_string())
}

fn fnv64(text: &str) -> String {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    format!("{h:016x}")
}

/// Properties whose values differ between attempts of one cell (the DB
/// directory, the server's port): `name=` prefixes of arguments that are
/// not inputs.
fn varying_properties(cell: &Cell) -> Vec<String> {
    let mut out = vec!["exportfile=".to_string()];
    if let Some((_, dir)) = cell.db.data_engine() {
        out.push(format!("{dir}="));
    }
    let client = descriptor(&cell.db.store).and_then(|d| d.server);
    match client.map(|c| c.address) {
        // The host stays an input: another host is another experiment.
        Some(ServerAddress::HostPort { port, .. }) => out.push(format!("{port}=")),
        Some(ServerAddress::Url(url)) => out.push(format!("{url}=")),
        _ => {}
    }
    out
}

/// The inputs of a cell that decide its results: any change reruns it.
pub(crate) fn fingerprint(
    m: &Matrix,
    cell: &Cell,
    kind: Kind,
    argv: &[String],
    server: &[String],
) -> String {
    let mut text = String::new();
    let varying = varying_properties(cell);
    let strip = |a: &String| {
        if varying.iter().any(|p| a.starts_with(p.as_str()))
            || a.starts_with("127.0.0.1:")
            || a.contains("/.partial-")
        {
            String::new()
        } else {
            a.clone()
        }
    };
    let mut previous = "";
    for a in argv.iter().skip(1).chain(server.iter().skip(1)) {
        text.push_str(&strip(a));
        text.push('\0');
        if previous == "-P" {
            text.push_str(&std::fs::read_to_string(a).unwrap_or_default());
        }
        previous = a;
    }
    text.push_str(&format!(
        "{kind:?}|{:?}|{:?}|{:?}|{:?}",
        cell.coords, m.cpus, m.server_cpus, m.memory_limit
    ));
    fnv64(&text)
}

/// Whether a complete cell with this fingerprint exists.
fn complete(dir: &Path, fingerprint: &str) -> bool {
    std::fs::read_to_string(dir.join("cell.json"))
        .ok()
        .and_then(|t| crate::records::CellFacts::parse(&t))
        .is_some_and(|facts| facts.fingerprint == fingerprint)
}

impl Runner {
    /// The fingerprint of a cell: its commands with the port left out.
    fn fingerprint_of(&self, m: &Matrix, cell: &Cell, kind: Kind) -> String {
        let db_dir = self.data.join(&cell.id).join("db");
        let (argv, server) = self.commands(m, cell, kind, &db_dir, Path::new("export.json"), 0);
        fingerprint(m, cell, kind, &argv, &server)
    }

    /// Whether the cell is complete with its current inputs (a shared load
    /// also needs its data).
    pub fn is_complete(&self, m: &Matrix, cell: &Cell, kind: Kind) -> bool {
        let (Ok(dir), Ok(data)) = (
            cell_dir(&self.results, &cell.id),
            paths::child(&self.data, &cell.id),
        ) else {
            return false;
        };
        complete(&dir, &self.fingerprint_of(m, cell, kind))
            && (kind != Kind::SharedLoad || data.join("db").exists())
    }

    /// Runs one cell unless it is already complete, calling `announce`
    /// just before it starts.
    ///
    /// # Errors
    /// Problems before the cell starts (a name that cannot be a directory,
    /// the results directory, a free port). Whatever goes wrong in the cell
    /// itself (its directories, its processes, a failing `ycsb`) is an
    /// [`Outcome::Failed`] with the reason, kept in `.failed-<cell>/`.
    pub fn run_cell(
        &self,
        m: &Matrix,
        cell: &Cell,
        kind: Kind,
        announce: &mut dyn FnMut(),
    ) -> Result<Outcome> {
        let final_dir = cell_dir(&self.results, &cell.id)?;
        let parent = final_dir.parent().unwrap_or(&self.results).to_path_buf();
        std::fs::create_dir_all(&parent).context(|| format!("creating {}", parent.display()))?;
        let partial = paths::child(&parent, &format!("{PARTIAL_PREFIX}{}", cell.id))?;
        let failed = paths::child(&parent, &format!("{FAILED_PREFIX}{}", cell.id))?;
        let data_dir = paths::child(&self.data, &cell.id)?;
        let db_dir = data_dir.join("db");
        let export = partial.join("export.json");
        if !self.force && self.is_complete(m, cell, kind) {
            return Ok(Outcome::Skipped);
        }
        let fp = self.fingerprint_of(m, cell, kind);
        let port = if cell.db.server.is_some() {
            Some(proc::free_port()?)
        } else {
            None
        };
        let (argv, server_argv) = self.commands(m, cell, kind, &db_dir, &export, port.unwrap_or(0));
        announce();
        let result = match paths::create_owned(&partial) {
            // Nothing of ours to keep: the cell fails with the reason.
            Err(e) => return Ok(Outcome::Failed(e.to_string())),
            Ok(()) => paths::create_owned(&data_dir)
                .and_then(|()| self.copy_shared_load(cell, kind, &db_dir))
                .and_then(|copied| match copied {
                    Some(why) => Ok(Outcome::Failed(why)),
                    None => self.execute(&Attempt {
                        m,
                        cell,
                        kind,
                        argv: &argv,
                        server_argv: &server_argv,
                        port,
                        partial: &partial,
                        data_dir: &data_dir,
                        db_dir: &db_dir,
                        fingerprint: &fp,
                    }),
                }),
        };
        // Only what this cell made is deleted; anything else is left alone.
        let cleanup_data = |keep: bool| {
            if !keep {
                let _ = paths::remove_owned(&data_dir);
            }
        };
        let fail = |why: String| {
            // Kept for a look (logs, command, the reason), never taken for
            // a result.
            let kept_why = format!("{why} (logs in {})", failed.display());
            let _ = std::fs::write(partial.join(FAILURE_FILE), format!("{kept_why}\n"));
            let _ = paths::remove_owned(&failed);
            let kept = paths::rename_no_replace(&partial, &failed).is_ok();
            let _ = paths::remove_owned(&partial);
            cleanup_data(false);
            Outcome::Failed(if kept { kept_why } else { why })
        };
        match result {
            Ok(Outcome::Done) => {
                let _ = paths::remove_owned(&failed);
                // A previous result of this cell is replaced; what is not
                // one is kept, and the cell fails saying so.
                if let Err(e) = paths::remove_owned(&final_dir)
                    .and_then(|()| paths::rename_no_replace(&partial, &final_dir))
                {
                    return Ok(fail(e.to_string()));
                }
                cleanup_data(m.keep_data || kind == Kind::SharedLoad);
                Ok(Outcome::Done)
            }
            Ok(Outcome::Failed(why)) => Ok(fail(why)),
            // A problem of this cell's files or processes fails the cell,
            // not the matrix.
            Err(e) => Ok(fail(e.to_string())),
            Ok(other) => {
                let _ = paths::remove_owned(&partial);
                cleanup_data(false);
                Ok(other)
            }
        }
    }

    /// Records that `cell` failed without running (its shared load
    /// failed) in its `.failed-<cell>/`, as a cell that ran and failed
    /// records it, so that `--report` finds it too.
    ///
    /// # Errors
    /// The directory cannot be made (something else is there) or written.
    pub fn record_failure(&self, cell: &Cell, why: &str) -> Result<()> {
        let final_dir = cell_dir(&self.results, &cell.id)?;
        let parent = final_dir.parent().unwrap_or(&self.results);
        let failed = paths::child(parent, &format!("{FAILED_PREFIX}{}", cell.id))?;
        paths::create_owned(&failed)?;
        write(&failed.join(FAILURE_FILE), &format!("{why}\n"))
    }

    /// For a run on a shared load: copies the load's data into `db_dir`.
    /// `Some(why)` when it cannot.
    fn copy_shared_load(&self, cell: &Cell, kind: Kind, db_dir: &Path) -> Result<Option<String>> {
        if kind != Kind::RunOnCopy {
            return Ok(None);
        }
        let Some(load_id) = cell.load.as_deref() else {
            return Ok(Some(format!(
                "{} runs on a shared load but names none",
                cell.id
            )));
        };
        let source = paths::child(&self.data, load_id)?.join("db");
        let out = std::process::Command::new("cp")
            .args(["-a", "--reflink=auto"])
            .arg(&source)
            .arg(db_dir)
            .output()
            .context(|| "starting cp".into())?;
        if !out.status.success() {
            return Ok(Some(format!(
                "copying the shared load {} to {} failed: {}",
                source.display(),
                db_dir.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        // The copy's pages would be cached and charged to the xtask:
        // write them out and drop them, so every run starts cold and a
        // memory-limited run pays for its own cache.
        host::evict_page_cache(db_dir);
        Ok(None)
    }
}

fn append(path: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .context(|| format!("opening {}", path.display()))
}

/// How long after launching a group of clients their shared `start.at`
/// lies: time for every process to start and connect (milliseconds on a
/// loopback server), with a wide margin for a loaded host.
pub const START_LEAD: Duration = Duration::from_secs(2);

/// The processes of a cell, group by group: one group of one process
/// (`argv` itself) for a single client; for `n` clients, one group per
/// phase (a client's run must not start before every client's share is
/// loaded), each of `n` processes with `client.count`, `client.index` and
/// an export of their own under `clients/`.
pub(crate) fn client_groups(
    m: &Matrix,
    kind: Kind,
    argv: &[String],
    n: u32,
    partial: &Path,
) -> Vec<(&'static str, Vec<Vec<String>>)> {
    if n <= 1 {
        return vec![("", vec![argv.to_vec()])];
    }
    kind.phases(m)
        .into_iter()
        .map(|phase| {
            let clients = (0..n)
                .map(|i| {
                    let mut out = vec![argv[0].clone(), format!("-{phase}")];
                    for a in &argv[1..] {
                        if a == "-load" || a == "-run" {
                            continue;
                        }
                        if a.starts_with("exportfile=") {
                            out.push(format!(
                                "exportfile={}",
                                client_export(partial, phase, i).display()
                            ));
                        } else {
                            out.push(a.clone());
                        }
                    }
                    out.extend(["-p".into(), format!("client.count={n}")]);
                    out.extend(["-p".into(), format!("client.index={i}")]);
                    out
                })
                .collect();
            (phase, clients)
        })
        .collect()
}

/// Where client `i` of a group exports its phase.
fn client_export(partial: &Path, phase: &str, i: u32) -> PathBuf {
    partial
        .join("clients")
        .join(format!("{phase}-client-{i}.json"))
}

impl Runner {
    /// Merges each group's client exports with `ycsb merge` (exact: summed
    /// counts, summed histograms) into `clients/<phase>.json`, and the
    /// phases into the cell's `export.json`.
    fn merge_clients(
        &self,
        groups: &[(&'static str, Vec<Vec<String>>)],
        partial: &Path,
    ) -> std::result::Result<(), String> {
        let mut export: Option<RunReport> = None;
        for (phase, clients) in groups {
            let merged = partial.join("clients").join(format!("{phase}.json"));
            let inputs = (0..clients.len() as u32).map(|i| client_export(partial, phase, i));
            let out = std::process::Command::new(&self.ycsb)
                .arg("merge")
                .arg("-o")
                .arg(&merged)
                .args(inputs)
                .output()
                .map_err(|e| format!("cannot run {} merge: {e}", self.ycsb.display()))?;
            let report = partial.join("clients").join(format!("merge-{phase}.txt"));
            let _ = std::fs::write(&report, &out.stdout);
            if !out.status.success() {
                let text = String::from_utf8_lossy(&out.stderr);
                return Err(format!(
                    "ycsb merge of the {} clients' {phase} exports failed: {}",
                    clients.len(),
                    text.lines().last().unwrap_or("")
                ));
            }
            let doc = read_export(&merged)
                .map_err(|e| format!("ycsb merge wrote no readable export: {e}"))?;
            export = Some(match export.take() {
                None => doc,
                Some(earlier) => {
                    // The run's metadata and configuration, both phases.
                    let mut doc = doc;
                    let later = std::mem::replace(&mut doc.phases, earlier.phases);
                    doc.phases.extend(later);
                    doc
                }
            });
        }
        let export = export.ok_or("no client group ran")?;
        let text = serde_json::to_string_pretty(&export).map_err(|e| e.to_string())?;
        host::write_atomic(&partial.join("export.json"), text.as_bytes()).map_err(|e| e.to_string())
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).context(|| format!("writing {}", path.display()))
}

/// Reads a cell's JSON export (`ycsb`'s, or `ycsb merge`'s) typed.
///
/// # Errors
///
/// [`ExperimentError::Io`] when it cannot be opened,
/// [`ExperimentError::Export`] when it is not a readable export.
pub(crate) fn read_export(path: &Path) -> Result<RunReport> {
    let file = std::fs::File::open(path).context(|| format!("reading {}", path.display()))?;
    ycsb_results::read_export(file).map_err(|source| ExperimentError::Export {
        path: path.to_path_buf(),
        source,
    })
}

/// The first expected phase the export lacks, or a load that ended early.
fn missing_phase(path: &Path, expected: &[&str]) -> Option<String> {
    let Ok(export) = read_export(path) else {
        return Some("(no readable export)".into());
    };
    for want in expected {
        let Some(p) = export.phase(want) else {
            return Some((*want).into());
        };
        if *want == "load" {
            let wanted = export
                .config_value("insertcount")
                .or_else(|| export.config_value("recordcount"))
                .and_then(|v| v.parse::<u64>().ok());
            if let (Some(w), got) = (wanted, p.operations) {
                if got < w {
                    return Some(format!("load ({got} of {w} records)"));
                }
            }
        }
    }
    None
}
