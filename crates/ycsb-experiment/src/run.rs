//! Running cells: one `ycsb` process per cell (and a server when the db
//! needs one), provenance beside the results, write-then-rename, resume.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ycsb_db::{Protocol, ServerAddress};

use crate::cells::Cell;
use crate::error::{Context as _, ExperimentError, Result};
use crate::host;
use crate::matrix::{descriptor, dir_property, Matrix, Server};
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
pub fn cell_dir(results: &Path, id: &str) -> PathBuf {
    let sub = if id.starts_with("load,") {
        "loads"
    } else {
        "cells"
    };
    results.join(sub).join(id)
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

struct Lines {
    lines: Vec<(f64, String)>,
}

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
        complete(
            &cell_dir(&self.results, &cell.id),
            &self.fingerprint_of(m, cell, kind),
        ) && (kind != Kind::SharedLoad || self.data.join(&cell.id).join("db").exists())
    }

    /// Runs one cell unless it is already complete, calling `announce`
    /// just before it starts.
    ///
    /// # Errors
    /// Problems of the harness itself (files, cgroups); a failing `ycsb`
    /// is an [`Outcome::Failed`].
    pub fn run_cell(
        &self,
        m: &Matrix,
        cell: &Cell,
        kind: Kind,
        announce: &mut dyn FnMut(),
    ) -> Result<Outcome> {
        let final_dir = cell_dir(&self.results, &cell.id);
        let parent = final_dir.parent().unwrap_or(&self.results).to_path_buf();
        std::fs::create_dir_all(&parent).context(|| format!("creating {}", parent.display()))?;
        let partial = parent.join(format!(".partial-{}", cell.id));
        let failed = parent.join(format!(".failed-{}", cell.id));
        let data_dir = self.data.join(&cell.id);
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
        let _ = std::fs::remove_dir_all(&partial);
        std::fs::create_dir_all(&partial).context(|| format!("creating {}", partial.display()))?;
        let _ = std::fs::remove_dir_all(&data_dir);
        std::fs::create_dir_all(&data_dir)
            .context(|| format!("creating {}", data_dir.display()))?;
        if kind == Kind::RunOnCopy {
            let Some(load_id) = cell.load.as_deref() else {
                return Ok(Outcome::Failed(format!(
                    "{} runs on a shared load but names none",
                    cell.id
                )));
            };
            let source = self.data.join(load_id).join("db");
            let status = std::process::Command::new("cp")
                .args(["-a", "--reflink=auto"])
                .arg(&source)
                .arg(&db_dir)
                .status()
                .context(|| "starting cp".into())?;
            if !status.success() {
                return Err(ExperimentError::Tool(format!(
                    "copying the shared load {} to {} failed",
                    source.display(),
                    db_dir.display()
                )));
            }
            // The copy's pages would be cached and charged to the xtask:
            // write them out and drop them, so every run starts cold and a
            // memory-limited run pays for its own cache.
            host::evict_page_cache(&db_dir);
        }
        let result = self.execute(
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
        );
        let cleanup_data = |keep: bool| {
            if !keep {
                let _ = std::fs::remove_dir_all(&data_dir);
            }
        };
        match result {
            Ok(Outcome::Done) => {
                let _ = std::fs::remove_dir_all(&failed);
                let _ = std::fs::remove_dir_all(&final_dir);
                std::fs::rename(&partial, &final_dir).context(|| {
                    format!("renaming {} to {}", partial.display(), final_dir.display())
                })?;
                cleanup_data(m.keep_data || kind == Kind::SharedLoad);
                Ok(Outcome::Done)
            }
            Ok(Outcome::Failed(why)) => {
                // Kept for a look (logs, command), never taken for a result.
                let _ = std::fs::remove_dir_all(&failed);
                let kept = std::fs::rename(&partial, &failed).is_ok();
                let _ = std::fs::remove_dir_all(&partial);
                cleanup_data(false);
                Ok(Outcome::Failed(if kept {
                    format!("{why} (logs in {})", failed.display())
                } else {
                    why
                }))
            }
            Ok(other) => {
                let _ = std::fs::remove_dir_all(&partial);
                cleanup_data(false);
                Ok(other)
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&partial);
                cleanup_data(false);
                Err(e)
            }
        }
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
        let mut cmd = proc::command(argv, m.cpus.as_deref(), cgroup.as_ref());
        let stdout = create(&partial.join("stdout.txt"))?;
        cmd.stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                if let Some(s) = server.as_mut() {
                    proc::kill(s, libc::SIGTERM, Duration::from_secs(5));
                }
                return Err(ExperimentError::Tool(format!(
                    "cannot start {}: {e}",
                    argv[0]
                )));
            }
        };
        let lines = Arc::new(Mutex::new(Lines { lines: Vec::new() }));
        let reader = {
            let Some(stderr) = child.stderr.take() else {
                proc::kill(&mut child, libc::SIGKILL, Duration::from_secs(2));
                return Err(ExperimentError::Tool(format!(
                    "no standard error pipe from {}",
                    argv[0]
                )));
            };
            let lines = Arc::clone(&lines);
            let mut file = create(&partial.join("stderr.txt"))?;
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    let _ = writeln!(file, "{line}");
                    let t = started.elapsed().as_secs_f64();
                    if let Ok(mut l) = lines.lock() {
                        l.lines.push((t, line));
                    }
                }
            })
        };
        let phases_expected = match kind {
            Kind::Fresh => u64::from(m.phases.load) + u64::from(m.phases.run),
            _ => 1,
        };
        let hard_limit = m
            .time_limit
            .map(|t| Duration::from_secs(t * phases_expected + 120));
        // Twice a second at least, so short phases still get a CPU figure.
        let interval = Duration::from_millis((m.status_interval * 1000).min(500));
        let mut samples: Vec<Sample> = Vec::new();
        let mut boundaries: Vec<(f64, Option<u64>)> = Vec::new();
        let mut seen_headers = 0;
        let mut next_sample = Instant::now();
        let mut outcome = None;
        let status = loop {
            if self.stop.load(Ordering::SeqCst) {
                proc::kill(&mut child, libc::SIGKILL, Duration::from_secs(2));
                outcome = Some(Outcome::Interrupted);
                break None;
            }
            if let Some(limit) = hard_limit {
                if started.elapsed() > limit {
                    proc::kill(&mut child, libc::SIGKILL, Duration::from_secs(2));
                    outcome = Some(Outcome::Failed(format!(
                        "killed after {}s (time_limit per phase + 120s)",
                        limit.as_secs()
                    )));
                    break None;
                }
            }
            if let Some(s) = server.as_mut() {
                if let Ok(Some(st)) = s.try_wait() {
                    proc::kill(&mut child, libc::SIGKILL, Duration::from_secs(2));
                    outcome = Some(Outcome::Failed(format!(
                        "the server exited during the cell ({st})"
                    )));
                    break None;
                }
            }
            let headers = lines
                .lock()
                .map(|l| {
                    l.lines
                        .iter()
                        .filter(|(_, s)| series::phase_header(s).is_some())
                        .count()
                })
                .unwrap_or(0);
            if headers > seen_headers {
                // A phase began: the previous one's data is all on disk.
                for _ in seen_headers..headers {
                    boundaries.push((
                        started.elapsed().as_secs_f64(),
                        Some(host::disk_usage(db_dir)),
                    ));
                }
                seen_headers = headers;
            }
            if Instant::now() >= next_sample {
                let t = started.elapsed().as_secs_f64();
                if let Some((cpu, rss)) = proc::sample(child.id()) {
                    let srv = server.as_ref().and_then(|s| proc::sample(s.id()));
                    samples.push((t, cpu, rss, srv));
                }
                next_sample += interval;
            }
            match proc::try_wait4(child.id()) {
                Ok(Some((st, cpu))) => {
                    let rss = samples.last().map(|s| s.2).unwrap_or(0);
                    let srv = server.as_ref().and_then(|s| proc::sample(s.id()));
                    samples.push((started.elapsed().as_secs_f64(), cpu, rss, srv));
                    break Some(st);
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => return Err(ExperimentError::Tool(format!("waiting for ycsb: {e}"))),
            }
        };
        let _ = reader.join();
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
            let text = std::fs::read_to_string(partial.join("stderr.txt")).unwrap_or_default();
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            use std::os::unix::process::ExitStatusExt;
            if status.signal() == Some(libc::SIGKILL) {
                if let Some(limit) = memory_limit {
                    return Ok(Outcome::Failed(format!("ycsb was killed (SIGKILL), most likely by the out-of-memory killer of its cgroup (memory_limit {} MiB); last line: {last}", limit >> 20)));
                }
            }
            return Ok(Outcome::Failed(format!(
                "ycsb exited with {status}: {last}"
            )));
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
        // A reader that panicked mid-push still left whole lines.
        let lines = std::mem::take(&mut lines.lock().unwrap_or_else(|p| p.into_inner()).lines);

        // Split the status lines and samples into phases.
        let mut phases: Vec<PhaseSeries> = Vec::new();
        let mut engine = None;
        for (t, line) in &lines {
            if let Some(p) = series::phase_header(line) {
                if let Some(last) = phases.last_mut() {
                    last.end_s = *t;
                }
                engine = engine.or_else(|| {
                    line.split_once("threads, ")
                        .map(|(_, e)| e.trim().to_string())
                });
                phases.push(PhaseSeries {
                    phase: p.into(),
                    start_s: *t,
                    end_s,
                    ..PhaseSeries::default()
                });
            } else if let Some(point) = series::parse_status(line) {
                if let Some(last) = phases.last_mut() {
                    // The end-of-phase line repeats the last second with no
                    // new operations: not an interval of its own.
                    if last.status.last().is_some_and(|p| p.t == point.t) {
                        continue;
                    }
                    last.status.push(point);
                }
            }
        }
        for (i, p) in phases.iter_mut().enumerate() {
            p.space_bytes = boundaries
                .get(i + 1)
                .and_then(|b| b.1)
                .or(if i + 1 == seen_headers {
                    Some(space_end)
                } else {
                    None
                });
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

        let export_path = partial.join("export.json");
        let export: Value = serde_json::from_str(
            &std::fs::read_to_string(&export_path)
                .context(|| format!("reading {}", export_path.display()))?,
        )
        .context(|| format!("parsing {}", export_path.display()))?;
        let mut props = String::new();
        if let Some(config) = export["config"].as_array() {
            for c in config {
                let key = c["key"].as_str().unwrap_or("");
                // ycsb redacts its export; this holds even for an older
                // binary that did not.
                let value = redact::value(key, c["value"].as_str().unwrap_or(""));
                props.push_str(&format!(
                    "{key}={value}    # {}\n",
                    c["origin"].as_str().unwrap_or("")
                ));
            }
        }
        write(&partial.join("properties.txt"), &props)?;
        let pinned: Vec<String> = match &m.cpus {
            Some(c) => ["taskset", "-c", c]
                .iter()
                .map(|s| s.to_string())
                .chain(argv.iter().cloned())
                .collect(),
            None => argv.to_vec(),
        };
        // Secrets (password properties, --requirepass) never reach the results.
        let (pinned, server_argv) = (redact::argv(&pinned), redact::argv(server_argv));
        let mut command_txt = proc::shell_line(&pinned);
        command_txt.push('\n');
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
            "command": pinned,
            "server_command": server_argv,
            "cwd": std::env::current_dir().ok().map(|d| d.display().to_string()),
            "environment": {"cpus": m.cpus, "server_cpus": m.server_cpus, "memory_limit_bytes": memory_limit, "cgroup_peak_bytes": cgroup_peak},
            "start_time": start_time.to_rfc3339(),
            "end_time": end_time.to_rfc3339(),
            "duration_s": end_s,
            "exit_status": status.code(),
            "engine_version": engine,
            "engine_build": export["metadata"]["engine_build"],
            "server_version": server_version,
            "ycsb_version": export["metadata"]["version"],
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

fn create(path: &Path) -> Result<std::fs::File> {
    std::fs::File::create(path).context(|| format!("creating {}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).context(|| format!("writing {}", path.display()))
}

/// The first expected phase the export lacks, or a load that ended early.
fn missing_phase(path: &Path, expected: &[&str]) -> Option<String> {
    let export: Option<Value> = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let Some(export) = export else {
        return Some("(no readable export)".into());
    };
    let phases = export["phases"].as_array().cloned().unwrap_or_default();
    for want in expected {
        let Some(p) = phases.iter().find(|p| p["phase"] == *want) else {
            return Some((*want).into());
        };
        if *want == "load" {
            let wanted = export["config"]
                .as_array()
                .and_then(|c| {
                    c.iter()
                        .find(|c| c["key"] == "insertcount")
                        .or_else(|| c.iter().find(|c| c["key"] == "recordcount"))
                })
                .and_then(|c| c["value"].as_str()?.parse::<u64>().ok());
            if let (Some(w), Some(got)) = (wanted, p["operations"].as_u64()) {
                if got < w {
                    return Some(format!("load ({got} of {w} records)"));
                }
            }
        }
    }
    None
}
