//! One attempt at a cell, step by step: its memory cgroup, its server,
//! its clients group by group (their resources sampled as they run), why
//! it failed if it did, and otherwise its files.

use std::io::{BufRead, BufReader, Write};
use std::ops::ControlFlow;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ChildStderr, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::{append, client_groups, missing_phase, read_export, Kind, Outcome, Runner, START_LEAD};
use crate::cells::Cell;
use crate::error::{Context as _, ExperimentError, Result};
use crate::host;
use crate::matrix::{descriptor, Matrix, Server};
use crate::proc::{self, Cgroup};

/// What the runner saw of a cell's processes, which all ended well.
pub(super) struct Ended {
    /// When the cell started.
    pub(super) start_time: DateTime<Utc>,
    /// When its clients had all ended.
    pub(super) end_time: DateTime<Utc>,
    /// Seconds from the start to the end of the last client.
    pub(super) end_s: f64,
    /// The clients' exit status.
    pub(super) status: ExitStatus,
    /// Bytes on disk of the DB directory after the last phase.
    pub(super) space_end: u64,
    /// The cell's memory limit.
    pub(super) memory_limit: Option<u64>,
    /// The most memory its cgroup used.
    pub(super) cgroup_peak: Option<u64>,
    /// The server's version.
    pub(super) server_version: Option<String>,
    /// The clients' (and the server's) resources over the cell.
    pub(super) samples: Vec<Sample>,
    /// Every client's command as started.
    pub(super) spawned: Vec<Vec<String>>,
}

/// (seconds since the cell started, client CPU seconds, client resident
/// bytes, server CPU seconds and resident bytes).
pub(super) type Sample = (f64, f64, u64, Option<(f64, u64)>);

/// One attempt at a cell, as [`Runner::run_cell`] prepared it.
pub(super) struct Attempt<'a> {
    /// The matrix.
    pub(super) m: &'a Matrix,
    /// The cell.
    pub(super) cell: &'a Cell,
    /// What the cell does.
    pub(super) kind: Kind,
    /// The client's command, unpinned (several clients' are made from it).
    pub(super) argv: &'a [String],
    /// The server's command; empty when the cell has no server.
    pub(super) server_argv: &'a [String],
    /// The server's loopback port.
    pub(super) port: Option<u16>,
    /// `.partial-<cell>/`: everything the attempt writes goes there.
    pub(super) partial: &'a Path,
    /// The cell's data directory (recorded: its filesystem).
    pub(super) data_dir: &'a Path,
    /// The DB directory inside it.
    pub(super) db_dir: &'a Path,
    /// The fingerprint of the cell's inputs, recorded for resuming.
    pub(super) fingerprint: &'a str,
}

/// The clients of an attempt as the runner learns of them while they run,
/// group after group.
#[derive(Default)]
struct Clients {
    /// The clients' (and the server's) resources over the whole cell.
    samples: Vec<Sample>,
    /// Exact CPU seconds (wait4) of the clients that have exited.
    cpu_done: f64,
    /// The exit status that decides the cell: the first client's, or a
    /// failed one's.
    status: Option<ExitStatus>,
    /// The first client that failed, by index in its group.
    failed_client: Option<usize>,
    /// Threads copying each client's standard error into its log.
    readers: Vec<JoinHandle<()>>,
    /// Every client's command as started.
    spawned: Vec<Vec<String>>,
}

impl Runner {
    /// Runs a prepared cell: its server, its clients, and, when they all
    /// ended well with complete phases, its files in `.partial-<cell>/`.
    ///
    /// # Errors
    /// A problem of the cell's own files or processes (which fails the
    /// cell); a failing `ycsb` or server, or a stop, is an [`Outcome`].
    pub(super) fn execute(&self, a: &Attempt<'_>) -> Result<Outcome> {
        let start_time = chrono::Utc::now();
        let started = Instant::now();
        let memory_limit = a.cell.memory_limit(a.m.memory_limit);
        let cgroup = cell_cgroup(memory_limit)?;
        let mut server = match start_server(a, cgroup.as_ref())? {
            ControlFlow::Continue(server) => server,
            ControlFlow::Break(outcome) => return Ok(outcome),
        };
        let server_version = server.as_ref().and_then(|_| server_version(a));
        let n = a.cell.clients();
        let groups = client_groups(a.m, a.kind, a.argv, n, a.partial);
        if n > 1 {
            std::fs::create_dir_all(a.partial.join("clients"))
                .context(|| format!("creating {}/clients", a.partial.display()))?;
        }
        let mut clients = Clients::default();
        let stopped = self.run_clients(
            a,
            &groups,
            cgroup.as_ref(),
            &mut server,
            started,
            &mut clients,
        )?;
        for reader in clients.readers.drain(..) {
            let _ = reader.join();
        }
        let end_s = started.elapsed().as_secs_f64();
        let space_end = host::disk_usage(a.db_dir);
        if let Some(s) = server.as_mut() {
            proc::kill(s, libc::SIGTERM, Duration::from_secs(10));
        }
        let cgroup_peak = cgroup.as_ref().and_then(Cgroup::peak_bytes);
        drop(cgroup);
        if let Some(outcome) = stopped {
            return Ok(outcome);
        }
        let Some(status) = clients.status else {
            return Ok(Outcome::Failed("ycsb ended without an exit status".into()));
        };
        let end_time = chrono::Utc::now();
        if !status.success() {
            let why = client_failure(a, clients.failed_client, status, memory_limit);
            return Ok(Outcome::Failed(why));
        }
        if n > 1 {
            if let Err(why) = self.merge_clients(&groups, a.partial) {
                return Ok(Outcome::Failed(why));
            }
        }
        let export_path = a.partial.join("export.json");
        if let Some(missing) = missing_phase(&export_path, &a.kind.phases(a.m)) {
            // A load cut short by the time limit leaves a smaller data set:
            // its run would not be comparable.
            return Ok(Outcome::Failed(format!("the JSON export has no complete {missing} phase (a load cut short by time_limit stops the cell)")));
        }
        let export = read_export(&export_path)?;
        let ended = Ended {
            start_time,
            end_time,
            end_s,
            status,
            space_end,
            memory_limit,
            cgroup_peak,
            server_version,
            samples: clients.samples,
            spawned: clients.spawned,
        };
        self.write_cell_files(a, &export, &ended)?;
        Ok(Outcome::Done)
    }

    /// Runs the client groups one after the other, a group's clients
    /// together, until every group has ended or a client failed (`None`,
    /// with what happened in `clients`), or the cell was stopped: how.
    fn run_clients(
        &self,
        a: &Attempt<'_>,
        groups: &[(&'static str, Vec<Vec<String>>)],
        cgroup: Option<&Cgroup>,
        server: &mut Option<Child>,
        started: Instant,
        clients: &mut Clients,
    ) -> Result<Option<Outcome>> {
        let hard_limit = hard_limit(a.m, a.kind);
        for (_, group) in groups {
            let mut children = spawn_group(a, group, cgroup, server, clients)?;
            let stopped =
                self.watch_group(a, &mut children, server, started, hard_limit, clients)?;
            if stopped.is_some() {
                return Ok(stopped);
            }
            if clients.failed_client.is_some() {
                break;
            }
        }
        Ok(None)
    }

    /// Watches one group's clients until they have all exited: samples
    /// their CPU and memory (and the server's) every sample interval and
    /// reaps them with their exact CPU time. When one fails the others
    /// are killed (they would only measure a smaller load); when the cell
    /// is stopped, all are, and that is the outcome.
    fn watch_group(
        &self,
        a: &Attempt<'_>,
        children: &mut [Option<Child>],
        server: &mut Option<Child>,
        started: Instant,
        hard_limit: Option<Duration>,
        clients: &mut Clients,
    ) -> Result<Option<Outcome>> {
        let interval = a.m.sample_interval();
        let mut next_sample = Instant::now();
        let mut last_rss = 0;
        loop {
            if let Some(outcome) = self.stop_reason(started, hard_limit, server) {
                kill_all(children);
                return Ok(Some(outcome));
            }
            if Instant::now() >= next_sample {
                if let Some(rss) = clients.sample(children, server.as_ref(), started) {
                    last_rss = rss;
                }
                next_sample += interval;
            }
            clients.reap(children)?;
            if clients.failed_client.is_some() {
                kill_all(children);
                return Ok(None);
            }
            if children.iter().all(Option::is_none) {
                // The last point: every client's exact CPU time.
                let srv = server.as_ref().and_then(|s| proc::sample_tree(s.id()));
                let t = started.elapsed().as_secs_f64();
                clients.samples.push((t, clients.cpu_done, last_rss, srv));
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Why the running cell must stop now, if it must: Ctrl-C, its hard
    /// time limit passed, or its server exited.
    fn stop_reason(
        &self,
        started: Instant,
        hard_limit: Option<Duration>,
        server: &mut Option<Child>,
    ) -> Option<Outcome> {
        if self.stop.load(Ordering::SeqCst) {
            return Some(Outcome::Interrupted);
        }
        if let Some(limit) = hard_limit {
            if started.elapsed() > limit {
                return Some(Outcome::Failed(format!(
                    "killed after {}s (time_limit per phase + 120s)",
                    limit.as_secs()
                )));
            }
        }
        if let Some(s) = server.as_mut() {
            if let Ok(Some(st)) = s.try_wait() {
                return Some(Outcome::Failed(format!(
                    "the server exited during the cell ({st})"
                )));
            }
        }
        None
    }
}

impl Clients {
    /// Samples the live clients together (CPU and resident memory
    /// summed) and the server: the clients' resident bytes, when any
    /// client was still there to sample.
    fn sample(
        &mut self,
        children: &[Option<Child>],
        server: Option<&Child>,
        started: Instant,
    ) -> Option<u64> {
        let t = started.elapsed().as_secs_f64();
        let live: Vec<_> = children
            .iter()
            .flatten()
            .filter_map(|c| proc::sample(c.id()))
            .collect();
        if live.is_empty() {
            return None;
        }
        let cpu = self.cpu_done + live.iter().map(|s| s.0).sum::<f64>();
        let rss = live.iter().map(|s| s.1).sum();
        let srv = server.and_then(|s| proc::sample_tree(s.id()));
        self.samples.push((t, cpu, rss, srv));
        Some(rss)
    }

    /// Reaps the clients that have exited, adding their exact CPU time
    /// and keeping the status that decides the cell.
    fn reap(&mut self, children: &mut [Option<Child>]) -> Result<()> {
        for (i, slot) in children.iter_mut().enumerate() {
            let Some(child) = slot else { continue };
            match proc::try_wait4(child.id()) {
                Ok(Some((st, cpu))) => {
                    self.cpu_done += cpu;
                    *slot = None;
                    if i == 0 || !st.success() {
                        self.status = Some(st);
                    }
                    if !st.success() && self.failed_client.is_none() {
                        self.failed_client = Some(i);
                    }
                }
                Ok(None) => {}
                Err(e) => return Err(ExperimentError::Tool(format!("waiting for ycsb: {e}"))),
            }
        }
        Ok(())
    }
}

/// The cell's memory cgroup, when it has a limit: one per cell, so that
/// with a server the limit covers the engine wherever it runs (client and
/// server together).
fn cell_cgroup(memory_limit: Option<u64>) -> Result<Option<Cgroup>> {
    memory_limit
        .map(|bytes| Cgroup::create(&format!("ycsb-xtask-{}", std::process::id()), bytes))
        .transpose()
}

/// Starts the cell's server, if it has one, its output in `server.log`,
/// and waits until it listens; a server that does not ends the attempt,
/// failed, with the log's last line.
fn start_server(
    a: &Attempt<'_>,
    cgroup: Option<&Cgroup>,
) -> Result<ControlFlow<Outcome, Option<Child>>> {
    if a.server_argv.is_empty() {
        return Ok(ControlFlow::Continue(None));
    }
    std::fs::create_dir_all(a.db_dir).ok();
    if let Some(server) = &a.cell.db.server {
        if let Err(why) = init_server_data(server, a.db_dir) {
            return Ok(ControlFlow::Break(Outcome::Failed(why)));
        }
    }
    let log_path = a.partial.join("server.log");
    let log =
        std::fs::File::create(&log_path).context(|| format!("creating {}", log_path.display()))?;
    let mut cmd = proc::command(a.server_argv, a.m.server_cpus.as_deref(), cgroup);
    cmd.stdin(Stdio::null())
        .stdout(
            log.try_clone()
                .context(|| format!("opening {}", log_path.display()))?,
        )
        .stderr(log);
    let mut child = cmd
        .spawn()
        .context(|| format!("starting {}", a.server_argv[0]))?;
    if let Err(e) = proc::wait_listening(
        &mut child,
        a.port.unwrap_or(0),
        descriptor(&a.cell.db.store)
            .and_then(|d| d.server)
            .map(|c| c.protocol),
        Duration::from_secs(30),
    ) {
        proc::kill(&mut child, libc::SIGKILL, Duration::from_secs(1));
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        return Ok(ControlFlow::Break(Outcome::Failed(format!(
            "{e}; server log: {}",
            log.lines().last().unwrap_or("")
        ))));
    }
    Ok(ControlFlow::Continue(Some(child)))
}

/// Makes the server's data directory in `db_dir` when it has none (a
/// PostgreSQL cluster, MariaDB's system tables), owned by `nobody` for
/// PostgreSQL when the runner is root.
///
/// # Errors
///
/// What the command said when it failed, as the attempt's failure.
pub(crate) fn init_server_data(server: &Server, db_dir: &std::path::Path) -> Result<(), String> {
    let Some((data, argv)) = super::command::server_init(server, db_dir) else {
        return Ok(());
    };
    if data.exists() {
        return Ok(());
    }
    if matches!(server, Server::Postgres) && super::command::is_root() {
        // initdb, run as nobody, makes its directory inside this one.
        std::os::unix::fs::chown(db_dir, Some(65534), Some(65534))
            .map_err(|e| format!("cannot give {} to nobody: {e}", db_dir.display()))?;
    }
    // MariaDB's bootstrap now and then dies of a signal (a server bug it
    // reports itself): a fresh directory is tried again. `data` did not
    // exist before this attempt (checked above), so what is removed is
    // only what the failed bootstrap just made in the cell's own directory.
    let mut last = String::new();
    for _ in 0..3 {
        let out = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(db_dir)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
        if out.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        last = stderr.lines().last().unwrap_or("").trim().to_string();
        let _ = std::fs::remove_dir_all(&data);
    }
    Err(format!("{} failed: {last}", argv[0]))
}

/// The running server's version: `redis-server --version`,
/// `memcached --version`, `postgres --version`, `mariadbd --version`, or
/// what `ycsb serve` says it serves.
fn server_version(a: &Attempt<'_>) -> Option<String> {
    let program = match a.cell.db.server {
        Some(Server::Postgres) => Some(super::command::postgres_program("postgres")),
        Some(Server::MariaDb) => Some("mariadbd".to_string()),
        Some(Server::Redis | Server::Memcached) => Some(a.server_argv[0].clone()),
        _ => None,
    };
    if let Some(program) = program {
        return std::process::Command::new(program)
            .arg("--version")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    }
    // "ycsb serve: <store> store (<engine> <version>) over RESP at ..."
    let log = std::fs::read_to_string(a.partial.join("server.log")).ok()?;
    let first = log.lines().next()?.trim_start_matches("ycsb serve: ");
    Some(
        first
            .split(" over ")
            .next()
            .unwrap_or(first)
            .trim()
            .to_string(),
    )
}

/// How long the clients may run before they are killed: the time limit
/// of every phase, the clients' start lead and two minutes to spare.
fn hard_limit(m: &Matrix, kind: Kind) -> Option<Duration> {
    let phases = kind.phases(m).len() as u64;
    m.time_limit
        .map(|t| Duration::from_secs(t * phases + 120 + START_LEAD.as_secs()))
}

/// Starts the clients of one group, each writing its standard output to
/// its own file and its standard error to its log through a thread;
/// several clients start together at a shared time (`start.at`), after
/// all of them have had time to start and connect.
fn spawn_group(
    a: &Attempt<'_>,
    group: &[Vec<String>],
    cgroup: Option<&Cgroup>,
    server: &mut Option<Child>,
    clients: &mut Clients,
) -> Result<Vec<Option<Child>>> {
    let start_at = (a.cell.clients() > 1).then(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        format!("start.at={:.3}", (now + START_LEAD).as_secs_f64())
    });
    let mut children: Vec<Option<Child>> = Vec::new();
    for (i, client_argv) in group.iter().enumerate() {
        let mut full = client_argv.clone();
        if let Some(at) = &start_at {
            full.extend(["-p".into(), at.clone()]);
        }
        let (out_name, err_name) = client_logs(i);
        let mut cmd = proc::command(&full, a.m.cpus.as_deref(), cgroup);
        cmd.stdin(Stdio::null())
            .stdout(append(&a.partial.join(&out_name))?)
            .stderr(Stdio::piped());
        clients.spawned.push(full);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                kill_all(&mut children);
                if let Some(s) = server.as_mut() {
                    proc::kill(s, libc::SIGTERM, Duration::from_secs(5));
                }
                return Err(ExperimentError::Tool(format!(
                    "cannot start {}: {e}",
                    a.argv[0]
                )));
            }
        };
        let Some(stderr) = child.stderr.take() else {
            proc::kill(&mut child, libc::SIGKILL, Duration::from_secs(2));
            return Err(ExperimentError::Tool(format!(
                "no standard error pipe from {}",
                a.argv[0]
            )));
        };
        let log = append(&a.partial.join(&err_name))?;
        clients.readers.push(copy_to_log(stderr, log));
        children.push(Some(child));
    }
    Ok(children)
}

/// Client `i`'s standard output and standard error files in the cell: the
/// first client's are the cell's own.
fn client_logs(i: usize) -> (String, String) {
    if i == 0 {
        ("stdout.txt".to_string(), "stderr.txt".to_string())
    } else {
        (
            format!("clients/client-{i}.stdout.txt"),
            format!("clients/client-{i}.stderr.txt"),
        )
    }
}

/// Copies a client's standard error into its log, line by line, on a
/// thread of its own. The log only: the phases' facts come from the
/// export.
fn copy_to_log(stderr: ChildStderr, mut log: std::fs::File) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = writeln!(log, "{line}");
        }
    })
}

fn kill_all(children: &mut [Option<Child>]) {
    for c in children.iter_mut().flatten() {
        proc::kill(c, libc::SIGKILL, Duration::from_secs(2));
    }
}

/// Why the clients failed: who exited how, with the last line of its
/// log; a SIGKILL under a memory limit is most likely the out-of-memory
/// killer.
fn client_failure(
    a: &Attempt<'_>,
    failed_client: Option<usize>,
    status: ExitStatus,
    memory_limit: Option<u64>,
) -> String {
    let n = a.cell.clients();
    let (who, log) = match failed_client {
        Some(i) if i > 0 => (
            format!("ycsb client {i} of {n}"),
            a.partial.join(format!("clients/client-{i}.stderr.txt")),
        ),
        _ => ("ycsb".to_string(), a.partial.join("stderr.txt")),
    };
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string();
    if status.signal() == Some(libc::SIGKILL) {
        if let Some(limit) = memory_limit {
            return format!("{who} was killed (SIGKILL), most likely by the out-of-memory killer of its cgroup (memory_limit {} MiB); last line: {last}", limit >> 20);
        }
    }
    format!("{who} exited with {status}: {last}")
}
