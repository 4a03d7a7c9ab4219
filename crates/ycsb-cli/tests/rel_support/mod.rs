//! Real fault sources for the reliability tests: redis-server processes,
//! small tmpfs mounts, signals, and reading a child's standard error while
//! it runs. Every external program is started with an argument vector,
//! never through a shell.

#![allow(dead_code)]

#[path = "../export_support/mod.rs"]
mod export_support;

// Not every test crate that includes this module counts returns.
#[allow(unused_imports)]
pub use export_support::returns;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}

pub const SIGINT: i32 = 2;
pub const SIGKILL: i32 = 9;
pub const SIGTERM: i32 = 15;
pub const SIGCONT: i32 = 18;
pub const SIGSTOP: i32 = 19;

/// Sends `signal` to `child`.
pub fn signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) on the pid of our own child, which has not been
    // waited for yet, so the pid cannot have been reused.
    let rc = unsafe { libc_kill(child.id() as i32, signal) };
    assert_eq!(rc, 0, "kill({}, {signal})", child.id());
}

/// Fails with a clear message when `binary` is missing.
pub fn require(binary: &str, package: &str) {
    let found = Command::new(binary)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(
        found,
        "{binary} is not installed: this test needs the Debian package {package} (cargo xtask deps installs it)"
    );
}

#[allow(unused_imports)]
pub use ycsb_db::testing::free_port;

/// A redis-server on a loopback port, killed when dropped (the redis
/// store's own test server).
#[allow(unused_imports)]
pub use ycsb_redis::testing::RedisServer as Redis;

/// A memcached on a loopback port (TCP only), killed when dropped (the
/// memcached store's own test server).
#[allow(unused_imports)]
pub use ycsb_memcached::testing::Memcached;

/// A tmpfs of the test's own (the kit's).
#[allow(unused_imports)]
pub use ycsb_db::testing::Tmpfs;

/// Lines of a child's standard error as they arrive, and all of them.
pub struct StderrLines {
    rx: Receiver<String>,
    pub seen: Vec<String>,
}

/// Starts `command` with its standard output discarded and its standard
/// error read line by line as it runs.
pub fn spawn_watched(command: &mut Command) -> (Child, StderrLines) {
    spawn_reading(command, Stdio::null())
}

/// Starts `command` with its standard output piped (for the caller to
/// read) and its standard error read as it arrives.
/// Runs `command` (a timed run with `-s` status lines), calls
/// `interrupt` (kill the server, start it again) once a status line shows
/// operations, and returns the run's standard output and error once it
/// ended, after checking that it succeeded and that some reads or updates
/// failed as SERVICE_UNAVAILABLE meanwhile.
pub fn run_across_an_interruption(
    command: &mut Command,
    interrupt: impl FnOnce(),
) -> (String, String) {
    let (mut child, mut lines) = spawn_piped(command);
    lines
        .wait_for(Duration::from_secs(30), status_with_operations)
        .expect("a status line");
    interrupt();
    let status = wait_bounded(&mut child, Duration::from_secs(60), "the run");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    let err = lines.rest();
    assert!(status.success(), "{err}");
    let count =
        |section: &str| crate::common::report_count(&out, section, "Return=SERVICE_UNAVAILABLE");
    assert!(count("READ") + count("UPDATE") > 0, "{out}");
    (out, err)
}

pub fn spawn_piped(command: &mut Command) -> (Child, StderrLines) {
    spawn_reading(command, Stdio::piped())
}

fn spawn_reading(command: &mut Command, stdout: Stdio) -> (Child, StderrLines) {
    let mut child = command
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = StderrLines::new(child.stderr.take().unwrap());
    (child, lines)
}

impl StderrLines {
    pub fn new(stderr: ChildStderr) -> Self {
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            rx,
            seen: Vec::new(),
        }
    }

    /// Waits up to `timeout` for a line for which `pred` holds.
    pub fn wait_for(&mut self, timeout: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if pred(&line) {
                        return Some(line);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Everything, once the child has ended.
    pub fn rest(&mut self) -> String {
        while let Ok(line) = self.rx.recv_timeout(Duration::from_secs(10)) {
            self.seen.push(line);
        }
        self.seen.join("\n")
    }
}

/// The operations a Java status line counts (`... 12 sec: 3456
/// operations; ...`), if `line` is one.
pub fn status_line_operations(line: &str) -> Option<u64> {
    line.split_once(" sec: ")
        .and_then(|(_, rest)| rest.split_once(" operations;"))
        .and_then(|(count, _)| count.parse::<u64>().ok())
}

/// Whether `line` is a status line that counted operations: the first
/// line, at 0 seconds as Java's, comes before any operation.
pub fn status_with_operations(line: &str) -> bool {
    status_line_operations(line).is_some_and(|count| count > 0)
}

/// Waits for `child` to end, killing it after `timeout` (a hang is a
/// failure of the test, not a stuck CI job).
pub fn wait_bounded(child: &mut Child, timeout: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not end within {timeout:?}: deadlock or hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The stores `ycsb stores` lists.
pub fn registered_stores() -> Vec<String> {
    let out = super::common::run("stores");
    super::common::stdout(&out)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// An embedded engine of this build, as the store registry describes it.
#[derive(Clone, Debug)]
pub struct Embedded {
    /// The store's name (`rocksdb`).
    pub name: &'static str,
    /// The property naming its data directory (`rocksdb.dbname`).
    pub dir_property: &'static str,
    /// The engine's name in messages (`RocksDB`).
    pub display: &'static str,
    /// The setting that makes every acknowledged write durable
    /// (`rocksdb.sync=true`), where the store has one.
    pub synced: Option<String>,
}

impl Embedded {
    /// `-p` and the setting that puts the engine's data at `path`.
    pub fn at(&self, path: &Path) -> [String; 2] {
        [
            "-p".into(),
            format!("{}={}", self.dir_property, path.display()),
        ]
    }
}

/// Every embedded engine this build registers: the stores whose
/// descriptor names a data directory (so a new engine is covered by the
/// reliability checks without a line here).
pub fn embedded_engines() -> Vec<Embedded> {
    let engines: Vec<Embedded> = ycsb_stores::STORES
        .iter()
        .filter_map(|d| {
            Some(Embedded {
                name: d.name,
                dir_property: d.data_dir?.name,
                display: d.dir_layout?.engine,
                synced: d
                    .durability
                    .map(|u| format!("{}={}", u.property, u.durable[0])),
            })
        })
        .collect();
    let registered = registered_stores();
    for engine in &engines {
        assert!(
            registered.iter().any(|s| s == engine.name),
            "{registered:?}"
        );
    }
    assert!(!engines.is_empty(), "no embedded engine in this build");
    engines
}

/// Parses a JSON export file.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("export {} missing: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("export {} is not valid JSON: {e}", path.display()))
}

/// Operations of a phase that failed (any status but OK, BATCHED_OK and
/// NOT_FOUND), over the store operations (not VERIFY or CLEANUP).
pub fn failures(phase: &serde_json::Value) -> u64 {
    phase["sections"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| {
            s["intended"] != true && !matches!(s["name"].as_str(), Some("VERIFY" | "CLEANUP"))
        })
        .flat_map(|s| s["returns"].as_array().into_iter().flatten())
        .filter(|r| {
            !matches!(
                r["status"].as_str(),
                Some("OK" | "BATCHED_OK" | "NOT_FOUND")
            )
        })
        .map(|r| r["count"].as_u64().unwrap_or(0))
        .sum()
}

/// Every file and directory under `dir`, with each file's contents: what
/// "left untouched" is checked against.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    super::common::paths_under(dir)
        .into_iter()
        .map(|(path, is_dir)| {
            let contents = if is_dir {
                b"<directory>".to_vec()
            } else {
                std::fs::read(&path).unwrap()
            };
            (path, contents)
        })
        .collect()
}
