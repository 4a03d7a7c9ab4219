//! Several client hosts, simulated: a `ycsb serve` memory server in one
//! network namespace and two `ycsb` clients in two others, each client
//! namespace joined to the server's by its own veth pair with private
//! addresses, so their traffic crosses a network interface, not loopback.
//! The clients load and run with `client.count`/`client.index` and a
//! shared `start.at`, and `ycsb merge` adds up their exports: the flow of
//! N real hosts. The namespaces (and with them the veth pairs) are created
//! per test run with unique names and deleted on drop, also on panic.
//!
//! Needs root and `ip` (iproute2); without either it says so and skips.

mod common;
mod export_support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::*;
use export_support::returns;

const RECORDS: u64 = 2_000;
const OPERATIONS: u64 = 1_500;
const PORT: u16 = 6379;
/// The server host's address, inside the test's namespaces only.
const SERVER: &str = "10.77.0.1";

/// Network namespaces of one test run and the server inside one of them;
/// dropping kills the server and deletes the namespaces (their veth ends
/// go with them).
struct Namespaces {
    names: Vec<String>,
    server: Option<Child>,
}

impl Namespaces {
    fn new() -> Self {
        Self {
            names: Vec::new(),
            server: None,
        }
    }

    fn add(&mut self, name: String) {
        // A namespace left by a killed earlier run with the same process id.
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        ip(&["netns", "add", &name]);
        self.names.push(name.clone());
        ip(&["-n", &name, "link", "set", "lo", "up"]);
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            let _ = server.wait();
        }
        for name in &self.names {
            let _ = Command::new("ip").args(["netns", "del", name]).output();
        }
    }
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip runs");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Why this test cannot run here, if it cannot.
fn missing_prerequisite() -> Option<&'static str> {
    // SAFETY: a plain syscall without arguments.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (creating network namespaces needs CAP_SYS_ADMIN)");
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("no `ip` command (Debian package iproute2)");
    }
    None
}

/// `ycsb` inside namespace `ns`.
fn ycsb_in(ns: &str) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns])
        .arg(env!("CARGO_BIN_EXE_ycsb"))
        .current_dir(root());
    c
}

/// The server's password: off loopback, `ycsb serve` serves no one
/// without one.
const PASSWORD: &str = "multihost-password";

/// Waits until a RESP server answers PING at `addr` from inside `ns`.
fn wait_serving(ns: &str, addr: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        // A probe process in the client's namespace: the test process
        // itself stays in the host's namespace.
        let out = ycsb_in(ns)
            .args(["run", "redis", "-p"])
            .arg(format!("redis.host={addr}"))
            .args(["-p", &format!("redis.port={PORT}"), "-p", "redis.index=lex"])
            .args(["-p", &format!("redis.password={PASSWORD}")])
            .args(["-p", "recordcount=1", "-p", "operationcount=1"])
            .output()
            .unwrap();
        if out.status.success() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the server at {addr} is not reachable from {ns}: {}",
            stderr(&out)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Bytes received by interface `dev` in namespace `ns`.
fn rx_bytes(ns: &str, dev: &str) -> u64 {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "cat"])
        .arg(format!("/sys/class/net/{dev}/statistics/rx_bytes"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Starts both clients of a phase, with a shared start time three to four
/// seconds ahead (time to start and connect), and waits for both.
fn phase(phase: &str, clients: &[(&str, &str)], dir: &Path, extra: &[&str]) -> (f64, Vec<Output>) {
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        .ceil()
        + 3.0;
    let children: Vec<Child> = clients
        .iter()
        .enumerate()
        .map(|(i, (ns, server))| {
            ycsb_in(ns)
                .args([phase, "redis", "-P", "workloads/workloadc", "-p"])
                .arg(format!("redis.host={server}"))
                .args(["-p", &format!("redis.port={PORT}"), "-p", "redis.index=lex"])
                .args(["-p", &format!("redis.password={PASSWORD}")])
                .args(["-p", &format!("recordcount={RECORDS}")])
                .args(["-p", &format!("operationcount={OPERATIONS}")])
                .args(["-p", "client.count=2", "-p", &format!("client.index={i}")])
                .args(["-p", &format!("start.at={at}"), "-p", "exporter=json"])
                .arg("-p")
                .arg(format!(
                    "exportfile={}",
                    dir.join(format!("{phase}-{i}.json")).display()
                ))
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for (i, out) in outputs.iter().enumerate() {
        assert!(out.status.success(), "client {i}: {}", stderr(out));
        // Held, or on a machine too loaded to start a client within the
        // lead, started at once with the warning; either way no earlier
        // than the shared time (checked on the exports).
        let err = stderr(out);
        assert!(
            err.contains("start.at: holding until") || err.contains("warning: start.at"),
            "{err}"
        );
    }
    (at, outputs)
}

#[test]
fn two_clients_in_two_namespaces_load_run_and_merge_against_a_third() {
    if let Some(why) = missing_prerequisite() {
        eprintln!("skipped: {why}");
        return;
    }
    let tag = std::process::id();
    let mut ns = Namespaces::new();
    let (server, a, b) = (
        format!("ycsbt{tag}s"),
        format!("ycsbt{tag}a"),
        format!("ycsbt{tag}b"),
    );
    for name in [&server, &a, &b] {
        ns.add(name.clone());
    }
    // One veth pair per client host: y<pid><host>c in the client's
    // namespace, y<pid><host>s in the server's (at most 15 characters).
    let mut links = Vec::new();
    for (host, client, subnet) in [("a", &a, 1), ("b", &b, 2)] {
        let (c_dev, s_dev) = (format!("y{tag}{host}c"), format!("y{tag}{host}s"));
        ip(&[
            "link", "add", &c_dev, "type", "veth", "peer", "name", &s_dev,
        ]);
        ip(&["link", "set", &c_dev, "netns", client]);
        ip(&["link", "set", &s_dev, "netns", &server]);
        let (c_addr, s_addr) = (format!("10.77.{subnet}.2"), format!("10.77.{subnet}.1"));
        ip(&[
            "-n",
            client,
            "addr",
            "add",
            &format!("{c_addr}/24"),
            "dev",
            &c_dev,
        ]);
        ip(&[
            "-n",
            &server,
            "addr",
            "add",
            &format!("{s_addr}/24"),
            "dev",
            &s_dev,
        ]);
        ip(&["-n", client, "link", "set", &c_dev, "up"]);
        ip(&["-n", &server, "link", "set", &s_dev, "up"]);
        // The server host's one service address, reached through the
        // link's far end (as a host on another subnet is, via a router).
        ip(&[
            "-n",
            client,
            "route",
            "add",
            &format!("{SERVER}/32"),
            "via",
            &s_addr,
        ]);
        links.push((client.clone(), s_dev));
    }
    // The server's address is its own (on its loopback device, so that
    // both links reach it) and the only one it listens on.
    ip(&[
        "-n",
        &server,
        "addr",
        "add",
        &format!("{SERVER}/32"),
        "dev",
        "lo",
    ]);
    let mut serve = ycsb_in(&server)
        .args(["serve", "memory", "--resp"])
        .arg(format!("{SERVER}:{PORT}"))
        .args(["--http", "off", "-p", &format!("serve.password={PASSWORD}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    let mut err = serve.stderr.take().unwrap();
    ns.server = Some(serve);
    // "ycsb serve: memory store over RESP at 10.77.0.1:6379 (reachable
    // from other hosts)".
    // (The engine line comes first.)
    let mut byte = [0u8; 1];
    while !banner.contains(" over RESP at ") || !banner.ends_with('\n') {
        if err.read(&mut byte).unwrap_or(0) != 1 {
            break;
        }
        banner.push(byte[0] as char);
    }
    assert!(banner.contains("reachable from other hosts"), "{banner}");
    let clients: Vec<(&str, &str)> = links.iter().map(|(ns, _)| (ns.as_str(), SERVER)).collect();
    for (ns_name, addr) in &clients {
        wait_serving(ns_name, addr);
        // Loopback in a client's namespace reaches nothing: the server is
        // only behind the veth.
        let out = ycsb_in(ns_name)
            .args(["run", "redis", "-p", "redis.host=127.0.0.1"])
            .args(["-p", &format!("redis.port={PORT}")])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{}", stderr(&out));
    }
    let before: Vec<u64> = links
        .iter()
        .map(|(_, dev)| rx_bytes(&server, dev))
        .collect();

    let dir = tempfile::tempdir().unwrap();
    let (load_at, _) = phase("load", &clients, dir.path(), &[]);
    let (run_at, _) = phase("run", &clients, dir.path(), &[]);
    let _ = std::io::stderr().flush();

    // Each client started its phase at the shared time or after it.
    for (name, at) in [("load", load_at), ("run", run_at)] {
        for i in 0..2 {
            let export = json(&dir.path().join(format!("{name}-{i}.json")));
            let start = export["metadata"]["start_time"].as_str().unwrap();
            let start = chrono::DateTime::parse_from_rfc3339(start).unwrap();
            let start = start.timestamp_millis() as f64 / 1000.0;
            assert!(
                start >= at - 0.001,
                "{name}-{i} started {start} before {at}"
            );
        }
    }
    // Both clients' traffic arrived at the server through its veth ends.
    for ((_, dev), before) in links.iter().zip(before) {
        let received = rx_bytes(&server, dev) - before;
        assert!(received > RECORDS / 2 * 20, "{dev}: {received} bytes");
    }

    let merge = |name: &str| {
        let merged = dir.path().join(format!("{name}.json"));
        let out = ycsb()
            .arg("merge")
            .arg("-o")
            .arg(&merged)
            .arg(dir.path().join(format!("{name}-0.json")))
            .arg(dir.path().join(format!("{name}-1.json")))
            .output()
            .unwrap();
        assert!(out.status.success(), "merge {name}: {}", stderr(&out));
        json(&merged)
    };
    let load = merge("load");
    let load = &load["phases"][0];
    assert_eq!(load["operations"], RECORDS, "every key loaded once");
    assert_eq!(returns(load, "INSERT", "OK"), RECORDS);
    let run = merge("run");
    let run = &run["phases"][0];
    assert_eq!(run["operations"], 2 * OPERATIONS);
    // Reads over the whole key space all found their record: the two
    // halves loaded from two hosts make one data set.
    assert_eq!(returns(run, "READ", "OK"), 2 * OPERATIONS);
    assert_eq!(returns(run, "READ", "NOT_FOUND"), 0);
}
