//! Real redis-server processes on loopback ports, for tests (feature
//! `testing`): this crate's and the `ycsb` binary's.
//!
//! Test code: it panics when a server cannot be started.

#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ycsb_db::testing::{ServerProcess, ServerSpec};

/// A redis-server child process, killed when dropped.
pub struct RedisServer {
    server: ServerProcess,
    /// The port it listens on.
    pub port: u16,
    _dir: tempfile::TempDir,
}

/// A port that is free now, and (for cluster nodes) whose bus port
/// (port + 10000) is free too.
pub fn free_port(with_bus: bool) -> u16 {
    for _ in 0..100 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        if !with_bus {
            return port;
        }
        if port < 55000 && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return port;
        }
    }
    panic!("no free port pair found");
}

/// redis-server, serving once it answers a PING at all.
const REDIS: ServerSpec = ServerSpec {
    program: "redis-server",
    package: "redis-server",
    probe: b"PING\r\n",
    ready: b"",
};

/// The process: `kill` it (as a crash would), `restart` it on the same
/// port, its `addr` and its `child` (for signals).
impl std::ops::Deref for RedisServer {
    type Target = ServerProcess;

    fn deref(&self) -> &ServerProcess {
        &self.server
    }
}

impl std::ops::DerefMut for RedisServer {
    fn deref_mut(&mut self) -> &mut ServerProcess {
        &mut self.server
    }
}

impl RedisServer {
    /// Starts redis-server on a free port with `extra` arguments.
    pub fn start(extra: &[&str]) -> Self {
        let cluster = extra.contains(&"--cluster-enabled");
        let port = free_port(cluster);
        let dir = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = [
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--dir",
            &dir.path().display().to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        Self {
            server: ServerProcess::start(REDIS, port, args),
            port,
            _dir: dir,
        }
    }

    /// Runs redis-cli against this server and returns its output.
    pub fn cli(&self, args: &[&str]) -> String {
        redis_cli(&[&["-p", &self.port.to_string()], args].concat())
    }

    /// How many times the server ran `command` (`INFO commandstats`; 0
    /// when it never did).
    pub fn calls(&self, command: &str) -> u64 {
        let stats = self.cli(&["info", "commandstats"]);
        let prefix = format!("cmdstat_{command}:calls=");
        stats
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |n| n.parse().unwrap())
    }
}

/// Runs redis-cli with `args` and returns what it printed (standard
/// output, then standard error).
pub fn redis_cli(args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "redis-cli: {e}: these tests need the Debian package redis-tools; \
                 .ci/run installs it"
            )
        });
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// A three-master Redis Cluster on loopback ports.
pub struct RedisCluster {
    /// Its servers, masters first.
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Three masters without replicas, failed over after 5 s.
    pub fn start() -> Self {
        Self::start_with(0, 5000)
    }

    /// Three masters with `replicas` replicas each, and
    /// `cluster-node-timeout` of `node_timeout_ms` (how long until a
    /// silent master is failed over).
    pub fn start_with(replicas: usize, node_timeout_ms: u64) -> Self {
        let timeout = node_timeout_ms.to_string();
        let nodes: Vec<RedisServer> = (0..3 * (1 + replicas))
            .map(|_| {
                RedisServer::start(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    &timeout,
                ])
            })
            .collect();
        let addrs: Vec<String> = nodes.iter().map(|n| n.addr()).collect();
        let replicas = replicas.to_string();
        let mut args: Vec<&str> = vec!["--cluster", "create"];
        args.extend(addrs.iter().map(String::as_str));
        args.extend(["--cluster-replicas", &replicas, "--cluster-yes"]);
        let out = redis_cli(&args);
        assert!(
            out.contains("All 16384 slots covered"),
            "cluster create failed: {out}"
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        for node in &nodes {
            // Ready: the cluster is ok, every node knows every replica,
            // and a replica has its master's data link up.
            let replicas: usize = replicas.parse().unwrap_or(0);
            while !node.cli(&["cluster", "info"]).contains("cluster_state:ok")
                || node.cli(&["cluster", "nodes"]).matches("slave").count() < 3 * replicas
                // A master lists a replica in CLUSTER SLOTS once it has
                // heard of its first replication offset.
                || node.cli(&["cluster", "slots"]).matches("127.0.0.1").count() < 3 * (1 + replicas)
                || (node.cli(&["role"]).starts_with("slave")
                    && !node.cli(&["info", "replication"]).contains("master_link_status:up"))
            {
                assert!(Instant::now() < deadline, "cluster did not become ready");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Self { nodes }
    }
}
