//! Running cells: one `ycsb` process per cell (and a server when the db
//! needs one), provenance beside the results, write-then-rename, resume.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ycsb_db::{Protocol, ServerAddress};
use ycsb_results::RunReport;

use crate::cells::Cell;
use crate::error::{Context as _, ExperimentError, Result};
use crate::host;
use crate::matrix::{descriptor, dir_property, Matrix, Server};
use crate::paths::{self, FAILED_PREFIX, PARTIAL_PREFIX};
use crate::proc::{self, Cgroup};
use crate::redact;
use crate::series::{self, PhaseSeries, ResourcePoint};

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
    pub host: Value,
    /// Git revision of the checkout.
    pub git: Option<String>,
    /// The I/O ceiling measurement, if any.
    pub io_ceiling: Option<Value>,
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
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|v| v["fingerprint"] == fingerprint)
}

/// (seconds since the cell started, client CPU seconds, client resident
/// bytes, server CPU seconds and resident bytes).
type Sample = (f64, f64, u64, Option<(f64, u64)>);

impl Runner {
    /// The client's argv for a cell (without pinning), its server's argv
    /// and port.
    pub(crate) fn commands(
        &self,
        m: &Matrix,
        cell: &Cell,
        kind: Kind,
        db_dir: &Path,
        export: &Path,
        port: u16,
    ) -> (Vec<String>, Vec<String>) {
        let mut argv: Vec<String> = vec![self.ycsb.display().to_string()];
        match kind {
            Kind::Fresh => {
                if m.phases.load {
                    argv.push("-load".into());
                }
                if m.phases.run {
                    argv.push("-run".into());
                }
            }
            Kind::SharedLoad => argv.push("-load".into()),
            Kind::RunOnCopy => argv.push("-run".into()),
        }
        argv.extend(["-db".into(), cell.db.store.clone()]);
        let files = m
            .property_files
            .iter()
            .cloned()
            .chain(cell.workload_files())
            .chain(cell.db.property_files.iter().cloned());
        for f in files {
            argv.extend(["-P".into(), f.display().to_string()]);
        }
        let mut props: Vec<(String, String)> = Vec::new();
        if !m
            .properties
            .iter()
            .chain(&cell.db.properties)
            .any(|(k, _)| k == "hdrhistogram.percentiles")
        {
            props.push(("hdrhistogram.percentiles".into(), CDF_PERCENTILES.into()));
        }
        props.extend(m.properties.iter().cloned());
        props.extend(cell.db.properties.iter().cloned());
        props.extend(cell.axis_properties());
        let mut server = Vec::new();
        let client = descriptor(&cell.db.store).and_then(|d| d.server);
        match (&cell.db.server, client) {
            (Some(s), Some(client)) => {
                let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
                props.extend(client.address_properties(address));
                let p = port.to_string();
                match s {
                    Server::Redis => {
                        server = [
                            "redis-server",
                            "--port",
                            &p,
                            "--bind",
                            "127.0.0.1",
                            "--save",
                            "",
                            "--appendonly",
                            "no",
                            "--dir",
                        ]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                        server.push(db_dir.display().to_string());
                    }
                    Server::YcsbServe {
                        engine,
                        property_files,
                        properties,
                    } => {
                        // Defaults for talking to ycsb serve, unless the
                        // matrix chose otherwise.
                        let user_set = |k: &str| {
                            m.properties
                                .iter()
                                .chain(&cell.db.properties)
                                .chain(&cell.axis_properties())
                                .any(|(u, _)| u == k)
                        };
                        props.extend(
                            client
                                .for_ycsb_serve
                                .iter()
                                .filter(|(k, _)| !user_set(k))
                                .map(|(k, v)| (k.to_string(), v.to_string())),
                        );
                        server = vec![
                            self.ycsb.display().to_string(),
                            "serve".into(),
                            engine.clone(),
                        ];
                        for f in property_files {
                            server.extend(["-P".into(), f.display().to_string()]);
                        }
                        for (k, v) in properties {
                            server.extend(["-p".into(), format!("{k}={v}")]);
                        }
                        if let Some(dp) = dir_property(engine) {
                            server.extend(["-p".into(), format!("{dp}={}", db_dir.display())]);
                        }
                        // The client's protocol is served; the other is off.
                        let (on, off) = match client.protocol {
                            Protocol::Http => ("--http", "--resp"),
                            _ => ("--resp", "--http"),
                        };
                        server.extend([on.into(), address.to_string(), off.into(), "off".into()]);
                    }
                }
            }
            _ => {
                if let Some((_, p)) = cell.db.data_engine() {
                    props.push((p.into(), db_dir.display().to_string()));
                }
            }
        }
        if let Some(t) = m.time_limit {
            props.push(("maxexecutiontime".into(), t.to_string()));
        }
        props.push(("status.interval".into(), m.status_interval.to_string()));
        props.push(("exporter".into(), "json".into()));
        props.push(("exportfile".into(), export.display().to_string()));
        for (k, v) in props {
            argv.extend(["-p".into(), format!("{k}={v}")]);
        }
        argv.push("-s".into());
        (argv, server)
    }

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
                    None => self.execute(
                        m,
                        cell,
                        kind,
                        &argv,
                        &server_argv,
                        port,
                        &partial,
                        &data_dir,
                        &db_dir,
                        &fp,
                    ),
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

    #[allow(clippy::too_many_arguments)]
    fn execute(
        &self,
        m: &Matrix,
        cell: &Cell,
        kind: Kind,
        argv: &[String],
        server_argv: &[String],
        port: Option<u16>,
        partial: &Path,
        data_dir: &Path,
        db_dir: &Path,
        fp: &str,
    ) -> Result<Outcome> {
        let start_time = chrono::Utc::now();
        let started = Instant::now();
        // One cgroup per cell: with a server, the limit covers the engine
        // wherever it runs (client and server together).
        let memory_limit = cell.memory_limit(m.memory_limit);
        let cgroup = match memory_limit {
            Some(bytes) => Some(Cgroup::create(
                &format!("ycsb-xtask-{}", std::process::id()),
                bytes,
            )?),
            None => None,
        };
        let mut server = None;
        let mut server_version = None;
        if !server_argv.is_empty() {
            std::fs::create_dir_all(db_dir).ok();
            let log_path = partial.join("server.log");
            let log = std::fs::File::create(&log_path)
                .context(|| format!("creating {}", log_path.display()))?;
            let mut cmd = proc::command(server_argv, m.server_cpus.as_deref(), cgroup.as_ref());
            cmd.stdin(Stdio::null())
                .stdout(
                    log.try_clone()
                        .context(|| format!("opening {}", log_path.display()))?,
                )
                .stderr(log);
            let mut child = cmd
                .spawn()
                .context(|| format!("starting {}", server_argv[0]))?;
            if let Err(e) = proc::wait_listening(
                &mut child,
                port.unwrap_or(0),
                descriptor(&cell.db.store)
                    .and_then(|d| d.server)
                    .map(|c| c.protocol),
                Duration::from_secs(30),
            ) {
                proc::kill(&mut child, libc::SIGKILL, Duration::from_secs(1));
                let log = std::fs::read_to_string(partial.join("server.log")).unwrap_or_default();
                return Ok(Outcome::Failed(format!(
                    "{e}; server log: {}",
                    log.lines().last().unwrap_or("")
                )));
            }
            server_version = if cell.db.server == Some(Server::Redis) {
                std::process::Command::new(&server_argv[0])
                    .arg("--version")
                    .output()
                    .ok()
                    .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            } else {
                // "ycsb serve: <store> store (<engine> <version>) over RESP at ..."
                std::fs::read_to_string(partial.join("server.log"))
                    .ok()
                    .and_then(|l| {
                        l.lines()
                            .next()
                            .map(|l| l.trim_start_matches("ycsb serve: "))
                            .map(|l| l.split(" over ").next().unwrap_or(l).trim().to_string())
                    })
            };
            server = Some(child);
        }
        let n = cell.clients();
        let groups = client_groups(m, kind, argv, n, partial);
        if n > 1 {
            std::fs::create_dir_all(partial.join("clients"))
                .context(|| format!("creating {}/clients", partial.display()))?;
        }
        // Per client: its standard error lines, kept across the groups.
        let phases_expected = match kind {
            Kind::Fresh => u64::from(m.phases.load) + u64::from(m.phases.run),
            _ => 1,
        };
        let hard_limit = m
            .time_limit
            .map(|t| Duration::from_secs(t * phases_expected + 120 + START_LEAD.as_secs()));
        let interval = m.sample_interval();
        let mut samples: Vec<Sample> = Vec::new();
        let mut outcome = None;
        let mut status = None;
        let mut failed_client = None;
        // Exact CPU seconds (wait4) of the clients that have exited.
        let mut cpu_done = 0.0;
        let mut readers = Vec::new();
        let mut spawned: Vec<Vec<String>> = Vec::new();
        'groups: for (_, group) in &groups {
            // Several clients start together at a shared time, after all
            // of them have had time to start and connect.
            let start_at = (n > 1).then(|| {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                format!("start.at={:.3}", (now + START_LEAD).as_secs_f64())
            });
            let mut children: Vec<Option<std::process::Child>> = Vec::new();
            for (i, client_argv) in group.iter().enumerate() {
                let mut full = client_argv.clone();
                if let Some(at) = &start_at {
                    full.extend(["-p".into(), at.clone()]);
                }
                let (out_name, err_name) = if i == 0 {
                    ("stdout.txt".to_string(), "stderr.txt".to_string())
                } else {
                    (
                        format!("clients/client-{i}.stdout.txt"),
                        format!("clients/client-{i}.stderr.txt"),
                    )
                };
                let mut cmd = proc::command(&full, m.cpus.as_deref(), cgroup.as_ref());
                cmd.stdin(Stdio::null())
                    .stdout(append(&partial.join(&out_name))?)
                    .stderr(Stdio::piped());
                spawned.push(full);
                let mut child = match cmd.spawn() {
                    Ok(c) => c,
                    Err(e) => {
                        for c in children.iter_mut().flatten() {
                            proc::kill(c, libc::SIGKILL, Duration::from_secs(2));
                        }
                        if let Some(s) = server.as_mut() {
                            proc::kill(s, libc::SIGTERM, Duration::from_secs(5));
                        }
                        return Err(ExperimentError::Tool(format!(
                            "cannot start {}: {e}",
                            argv[0]
                        )));
                    }
                };
                let Some(stderr) = child.stderr.take() else {
                    proc::kill(&mut child, libc::SIGKILL, Duration::from_secs(2));
                    return Err(ExperimentError::Tool(format!(
                        "no standard error pipe from {}",
                        argv[0]
                    )));
                };
                // The log only: the phases' facts come from the export.
                let mut file = append(&partial.join(&err_name))?;
                readers.push(std::thread::spawn(move || {
                    for line in BufReader::new(stderr).lines() {
                        let Ok(line) = line else { break };
                        let _ = writeln!(file, "{line}");
                    }
                }));
                children.push(Some(child));
            }
            let kill_all = |children: &mut Vec<Option<std::process::Child>>| {
                for c in children.iter_mut().flatten() {
                    proc::kill(c, libc::SIGKILL, Duration::from_secs(2));
                }
            };
            let mut next_sample = Instant::now();
            let mut last_rss = 0;
            loop {
                if self.stop.load(Ordering::SeqCst) {
                    kill_all(&mut children);
                    outcome = Some(Outcome::Interrupted);
                    break 'groups;
                }
                if let Some(limit) = hard_limit {
                    if started.elapsed() > limit {
                        kill_all(&mut children);
                        outcome = Some(Outcome::Failed(format!(
                            "killed after {}s (time_limit per phase + 120s)",
                            limit.as_secs()
                        )));
                        break 'groups;
                    }
                }
                if let Some(s) = server.as_mut() {
                    if let Ok(Some(st)) = s.try_wait() {
                        kill_all(&mut children);
                        outcome = Some(Outcome::Failed(format!(
                            "the server exited during the cell ({st})"
                        )));
                        break 'groups;
                    }
                }
                if Instant::now() >= next_sample {
                    let t = started.elapsed().as_secs_f64();
                    // The clients together: CPU and resident memory summed.
                    let live: Vec<_> = children
                        .iter()
                        .flatten()
                        .filter_map(|c| proc::sample(c.id()))
                        .collect();
                    if !live.is_empty() {
                        let cpu = cpu_done + live.iter().map(|s| s.0).sum::<f64>();
                        last_rss = live.iter().map(|s| s.1).sum();
                        let srv = server.as_ref().and_then(|s| proc::sample(s.id()));
                        samples.push((t, cpu, last_rss, srv));
                    }
                    next_sample += interval;
                }
                for (i, slot) in children.iter_mut().enumerate() {
                    let Some(child) = slot else { continue };
                    match proc::try_wait4(child.id()) {
                        Ok(Some((st, cpu))) => {
                            cpu_done += cpu;
                            *slot = None;
                            if i == 0 || !st.success() {
                                status = Some(st);
                            }
                            if !st.success() && failed_client.is_none() {
                                failed_client = Some(i);
                            }
                        }
                        Ok(None) => {}
                        Err(e) => {
                            return Err(ExperimentError::Tool(format!("waiting for ycsb: {e}")))
                        }
                    }
                }
                if failed_client.is_some() {
                    // One client failed: the cell has failed; the others
                    // would only measure a smaller load.
                    kill_all(&mut children);
                    break 'groups;
                }
                if children.iter().all(Option::is_none) {
                    let srv = server.as_ref().and_then(|s| proc::sample(s.id()));
                    let t = started.elapsed().as_secs_f64();
                    samples.push((t, cpu_done, last_rss, srv));
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        for reader in readers {
            let _ = reader.join();
        }
        let end_s = started.elapsed().as_secs_f64();
        let space_end = host::disk_usage(db_dir);
        if let Some(s) = server.as_mut() {
            proc::kill(s, libc::SIGTERM, Duration::from_secs(10));
        }
        let cgroup_peak = cgroup.as_ref().and_then(Cgroup::peak_bytes);
        drop(cgroup);
        if let Some(o) = outcome {
            return Ok(o);
        }
        let Some(status) = status else {
            return Ok(Outcome::Failed("ycsb ended without an exit status".into()));
        };
        let end_time = chrono::Utc::now();
        if !status.success() {
            let (who, log) = match failed_client {
                Some(i) if i > 0 => (
                    format!("ycsb client {i} of {n}"),
                    partial.join(format!("clients/client-{i}.stderr.txt")),
                ),
                _ => ("ycsb".to_string(), partial.join("stderr.txt")),
            };
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            use std::os::unix::process::ExitStatusExt;
            if status.signal() == Some(libc::SIGKILL) {
                if let Some(limit) = memory_limit {
                    return Ok(Outcome::Failed(format!("{who} was killed (SIGKILL), most likely by the out-of-memory killer of its cgroup (memory_limit {} MiB); last line: {last}", limit >> 20)));
                }
            }
            return Ok(Outcome::Failed(format!(
                "{who} exited with {status}: {last}"
            )));
        }
        if n > 1 {
            if let Err(why) = self.merge_clients(&groups, partial) {
                return Ok(Outcome::Failed(why));
            }
        }
        let expected: Vec<&str> = match kind {
            Kind::Fresh => [("load", m.phases.load), ("run", m.phases.run)]
                .iter()
                .filter(|p| p.1)
                .map(|p| p.0)
                .collect(),
            Kind::SharedLoad => vec!["load"],
            Kind::RunOnCopy => vec!["run"],
        };
        if let Some(missing) = missing_phase(&partial.join("export.json"), &expected) {
            // A load cut short by the time limit leaves a smaller data set:
            // its run would not be comparable.
            return Ok(Outcome::Failed(format!("the JSON export has no complete {missing} phase (a load cut short by time_limit stops the cell)")));
        }
        // The phases' facts, from the export: when each began and ended
        // (its observation's start, its run time), its throughput over
        // time and the store's gauges, the engine, the data set's size.
        let export = read_export(&partial.join("export.json"))?;
        let cell_start_ms = start_time.timestamp_millis();
        let mut phases: Vec<PhaseSeries> = Vec::new();
        for p in &export.phases {
            let start_s = match &p.observation {
                Some(o) => (o.start_unix_ms as i64 - cell_start_ms) as f64 / 1e3,
                // Not observed (timeseries.granularity=0): after the
                // previous phase.
                None => phases.last().map_or(0.0, |q: &PhaseSeries| q.end_s),
            };
            let mut operations = 0;
            let status = p
                .series()
                .iter()
                .map(|row| {
                    operations += row.operations;
                    series::StatusPoint {
                        t: row.time_s,
                        operations,
                        ops_per_sec: row.throughput,
                        gauges: row.gauges.clone(),
                    }
                })
                .collect();
            // The data directory's size as ycsb measured it at the phase's
            // end, or as the cell measured it after the last phase.
            let measured = p
                .observation
                .as_ref()
                .and_then(|o| o.amplification.as_ref()?.db_size_bytes)
                .or_else(|| p.series().last()?.db_size_bytes);
            phases.push(PhaseSeries {
                phase: p.phase.clone(),
                start_s,
                end_s: start_s + p.runtime_ns as f64 / 1e9,
                status,
                space_bytes: measured,
                ..PhaseSeries::default()
            });
        }
        if let Some(last) = phases.last_mut() {
            last.space_bytes = Some(space_end);
        }
        let engine = match (&export.metadata.engine, &export.metadata.engine_version) {
            (Some(e), Some(v)) => Some(format!("{e} {v}")),
            (Some(e), None) => Some(e.clone()),
            _ => None,
        };
        for p in phases.iter_mut() {
            // The exact total from wait4 is accounted differently from
            // /proc's ticks: right for the phase mean, a spike as a point.
            let sampled = &samples[..samples.len().saturating_sub(1)];
            let in_phase: Vec<_> = sampled
                .iter()
                .filter(|s| s.0 >= p.start_s && s.0 <= p.end_s)
                .collect();
            let mut prev: Option<&Sample> = None;
            for s in &in_phase {
                if let Some(q) = prev {
                    let dt = (s.0 - q.0).max(1e-9);
                    p.resources.push(ResourcePoint {
                        t: s.0 - p.start_s,
                        cpu_percent: 100.0 * (s.1 - q.1) / dt,
                        rss_bytes: s.2,
                        server_cpu_percent: s.3.zip(q.3).map(|(a, b)| 100.0 * (a.0 - b.0) / dt),
                        server_rss_bytes: s.3.map(|x| x.1),
                    });
                }
                prev = Some(s);
            }
            // Mean CPU from the last sample at or before the phase start
            // (or the process start) to the last sample in the phase; the
            // final sample is the exact total from wait4.
            let base = samples
                .iter()
                .rev()
                .find(|s| s.0 <= p.start_s)
                .copied()
                .unwrap_or((0.0, 0.0, 0, Some((0.0, 0))));
            if let Some(last) = samples.iter().rev().find(|s| s.0 <= p.end_s + 1e-6) {
                let dt = last.0 - base.0;
                if dt > 0.0 {
                    p.cpu_percent = Some(100.0 * (last.1 - base.1) / dt);
                    p.server_cpu_percent =
                        last.3.zip(base.3).map(|(l, b)| 100.0 * (l.0 - b.0) / dt);
                }
            }
        }
        host::write_atomic(
            &partial.join("timeseries.json"),
            serde_json::to_string_pretty(&phases)
                .context(|| "encoding timeseries.json".into())?
                .as_bytes(),
        )?;

        let mut props = String::new();
        for c in &export.config {
            // ycsb redacts its export; this holds even for an older
            // binary that did not.
            let value = redact::value(&c.key, &c.value);
            props.push_str(&format!("{}={value}    # {}\n", c.key, c.origin));
        }
        write(&partial.join("properties.txt"), &props)?;
        let pin = |argv: &[String]| -> Vec<String> {
            match &m.cpus {
                Some(c) => ["taskset", "-c", c]
                    .iter()
                    .map(|s| s.to_string())
                    .chain(argv.iter().cloned())
                    .collect(),
                None => argv.to_vec(),
            }
        };
        // Secrets (password properties, --requirepass) never reach the results.
        let (pinned, server_argv) = (redact::argv(&pin(argv)), redact::argv(server_argv));
        let mut command_txt = String::new();
        if n > 1 {
            // The commands as started, each client with its index and the
            // group's start time.
            command_txt.push_str(&format!(
                "# {n} clients per phase, started together (start.at)\n"
            ));
            for client in &spawned {
                command_txt.push_str(&proc::shell_line(&redact::argv(&pin(client))));
                command_txt.push('\n');
            }
        } else {
            command_txt.push_str(&proc::shell_line(&pinned));
            command_txt.push('\n');
        }
        if !server_argv.is_empty() {
            command_txt.push_str(&format!("# server:\n{}\n", proc::shell_line(&server_argv)));
        }
        write(&partial.join("command.txt"), &command_txt)?;
        let coords: serde_json::Map<String, Value> = cell
            .coords
            .iter()
            .map(|(a, v, l)| {
                let (v, l) = (redact::value(a, v), redact::value(a, l));
                (a.clone(), json!({"value": v, "label": l}))
            })
            .collect();
        let record = json!({
            "id": cell.id,
            "group": cell.group,
            "repeat": cell.repeat,
            "kind": format!("{kind:?}"),
            "load": cell.load,
            "coords": coords,
            "db": {"label": cell.db.label, "store": cell.db.store, "server": cell.db.server.as_ref().map(|s| format!("{s:?}"))},
            "fingerprint": fp,
            "clients": n,
            "command": pinned,
            "server_command": server_argv,
            "cwd": std::env::current_dir().ok().map(|d| d.display().to_string()),
            "environment": {"cpus": m.cpus, "server_cpus": m.server_cpus, "memory_limit_bytes": memory_limit, "cgroup_peak_bytes": cgroup_peak},
            "start_time": start_time.to_rfc3339(),
            "end_time": end_time.to_rfc3339(),
            "duration_s": end_s,
            "exit_status": status.code(),
            "engine_version": engine,
            "engine_build": export.metadata.engine_build,
            "server_version": server_version,
            "ycsb_version": export.metadata.version,
            "git_revision": self.git,
            "host": self.host,
            "db_dir": host::filesystem_json(data_dir),
            "space_bytes_end": space_end,
            "io_ceiling": self.io_ceiling,
        });
        // Last: its presence (after the rename) marks the cell complete.
        host::write_atomic(
            &partial.join("cell.json"),
            serde_json::to_string_pretty(&record)
                .context(|| "encoding cell.json".into())?
                .as_bytes(),
        )?;
        Ok(Outcome::Done)
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
    let phases: Vec<&'static str> = match kind {
        Kind::Fresh => [("load", m.phases.load), ("run", m.phases.run)]
            .into_iter()
            .filter(|p| p.1)
            .map(|p| p.0)
            .collect(),
        Kind::SharedLoad => vec!["load"],
        Kind::RunOnCopy => vec!["run"],
    };
    phases
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
