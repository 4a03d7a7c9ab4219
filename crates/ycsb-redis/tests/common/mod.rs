//! Real redis-server processes on loopback ports, for tests.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server child process, killed when dropped.
pub struct RedisServer {
    child: Option<Child>,
    pub port: u16,
    dir: tempfile::TempDir,
    extra: Vec<String>,
}

fn require(binary: &str) {
    let found = Command::new(binary)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(
        found,
        "{binary} is not installed: these tests need the Debian package redis-server \
         (with redis-tools); .ci/run installs it"
    );
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

impl RedisServer {
    /// Starts redis-server on a free port with `extra` arguments.
    pub fn start(extra: &[&str]) -> Self {
        let cluster = extra.contains(&"--cluster-enabled");
        let mut server = Self {
            child: None,
            port: free_port(cluster),
            dir: tempfile::tempdir().unwrap(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        require("redis-server");
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .args(["--daemonize", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
                s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
                let mut buf = [0u8; 64];
                if s.write_all(b"PING\r\n").is_ok() && matches!(s.read(&mut buf), Ok(n) if n > 0) {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "redis-server on port {} did not start",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server (as a crash would).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server running").id()
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Runs redis-cli against this server and returns its output.
    pub fn cli(&self, args: &[&str]) -> String {
        redis_cli(&[&["-p", &self.port.to_string()], args].concat())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn redis_cli(args: &[&str]) -> String {
    require("redis-cli");
    let out = Command::new("redis-cli")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("redis-cli runs");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// A three-master Redis Cluster on loopback ports.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
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
