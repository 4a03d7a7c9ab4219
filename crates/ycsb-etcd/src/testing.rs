//! Real etcd clusters on loopback ports, for tests (feature `testing`).
//!
//! The tests of this crate and of the `ycsb` binary start `etcd` (Debian's
//! `etcd-server`) as child processes with their data in a directory the
//! test owns; [`EtcdCluster`] kills them when dropped.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One member process.
#[derive(Debug)]
struct Member {
    child: Option<Child>,
    client_port: u16,
    /// Plain-HTTP port of `/health` and `/metrics`, also with TLS clients.
    metrics_port: u16,
    /// The member's standard error: etcd's log.
    log: PathBuf,
    /// Whether [`EtcdCluster::kill`] ended it (rather than it exiting).
    killed: bool,
}

/// Server certificate and key files for TLS client URLs.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// PEM certificate, valid for 127.0.0.1.
    pub cert: std::path::PathBuf,
    /// PEM private key.
    pub key: std::path::PathBuf,
}

/// A cluster of `etcd` processes on 127.0.0.1, killed when dropped.
#[derive(Debug)]
pub struct EtcdCluster {
    members: Vec<Member>,
}

/// `n` ports free now (held together, so they differ).
fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<Vec<_>>>()?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect()
}

impl EtcdCluster {
    /// Starts `size` members with their data and logs under `dir`, and
    /// waits until the cluster has a leader and every member answers.
    /// Elections are tuned fast (50 ms heartbeats, 500 ms election
    /// timeout) so that a killed leader is replaced within a second.
    ///
    /// # Errors
    ///
    /// When `etcd` is not installed (the message names the Debian
    /// package), a process cannot start, or the cluster is not healthy
    /// within 30 seconds (the message gives each member's state and the
    /// end of its log). A member that exits while the cluster starts,
    /// most likely because another process took its port first, makes a
    /// new start on other ports, up to three attempts.
    pub fn start(dir: &Path, size: usize) -> io::Result<Self> {
        Self::start_with(dir, size, None)
    }

    /// As [`EtcdCluster::start`], with `https://` client URLs served with
    /// `tls` when given.
    ///
    /// # Errors
    ///
    /// As [`EtcdCluster::start`].
    pub fn start_with(dir: &Path, size: usize, tls: Option<&ServerTls>) -> io::Result<Self> {
        // Ports are free when picked but released before etcd binds them,
        // so a test running beside this one (or an outgoing connection)
        // may take one first; the member then exits at once, and the
        // cluster is started again on new ports.
        let mut attempt = 0;
        loop {
            attempt += 1;
            let dir = dir.join(format!("start{attempt}"));
            std::fs::create_dir_all(&dir)?;
            match Self::start_once(&dir, size, tls) {
                // The failed attempt's logs stay in its own directory.
                Err(StartError::MemberExited(_)) if attempt < START_ATTEMPTS => {}
                Err(StartError::MemberExited(e) | StartError::Other(e)) => return Err(e),
                Ok(cluster) => return Ok(cluster),
            }
        }
    }

    fn start_once(dir: &Path, size: usize, tls: Option<&ServerTls>) -> Result<Self, StartError> {
        let ports = free_ports(3 * size)?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        let token = format!(
            "ycsb-test-{}-{}",
            std::process::id(),
            ports.first().copied().unwrap_or(0)
        );
        let initial: Vec<String> = (0..size)
            .map(|i| format!("m{i}=http://127.0.0.1:{}", ports[size + i]))
            .collect();
        let initial = initial.join(",");
        let mut members = Vec::new();
        for i in 0..size {
            let (client, peer, metrics) = (ports[i], ports[size + i], ports[2 * size + i]);
            let data = dir.join(format!("m{i}"));
            let log_path = dir.join(format!("m{i}.log"));
            let log = std::fs::File::create(&log_path)?;
            let mut command = Command::new("etcd");
            if let Some(tls) = tls {
                command
                    .arg(format!("--cert-file={}", tls.cert.display()))
                    .arg(format!("--key-file={}", tls.key.display()));
            }
            let child = command
                .arg(format!("--name=m{i}"))
                .arg(format!("--data-dir={}", data.display()))
                .arg(format!(
                    "--listen-client-urls={scheme}://127.0.0.1:{client}"
                ))
                .arg(format!(
                    "--advertise-client-urls={scheme}://127.0.0.1:{client}"
                ))
                .arg(format!("--listen-metrics-urls=http://127.0.0.1:{metrics}"))
                .arg(format!("--listen-peer-urls=http://127.0.0.1:{peer}"))
                .arg(format!(
                    "--initial-advertise-peer-urls=http://127.0.0.1:{peer}"
                ))
                .arg(format!("--initial-cluster={initial}"))
                .arg(format!("--initial-cluster-token={token}"))
                .arg("--initial-cluster-state=new")
                .arg("--heartbeat-interval=50")
                .arg("--election-timeout=500")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!(
                            "cannot start etcd ({e}): install the Debian package etcd-server \
                             (.ci/run does)"
                        ),
                    )
                })?;
            members.push(Member {
                child: Some(child),
                client_port: client,
                metrics_port: metrics,
                log: log_path,
                killed: false,
            });
        }
        let mut cluster = Self { members };
        match cluster.wait_healthy(Duration::from_secs(30)) {
            Ok(()) => Ok(cluster),
            Err(e) => {
                let e = io::Error::new(e.kind(), format!("{e}\n{}", cluster.report()));
                Err(if cluster.any_exited() {
                    StartError::MemberExited(e)
                } else {
                    StartError::Other(e)
                })
            }
        }
    }

    /// The members' client addresses, comma-separated, as
    /// `etcd.endpoints` takes them.
    pub fn endpoints(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("127.0.0.1:{}", m.client_port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Member `i`'s client port.
    pub fn client_port(&self, i: usize) -> u16 {
        self.members[i].client_port
    }

    /// Kills member `i` (SIGKILL) and waits for it to exit.
    ///
    /// # Errors
    ///
    /// When the process cannot be signalled.
    pub fn kill(&mut self, i: usize) -> io::Result<()> {
        if let Some(mut child) = self.members[i].child.take() {
            self.members[i].killed = true;
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }

    /// The index of the member that leads the cluster now: every running
    /// member is asked its status, and the first to name a leader counts.
    ///
    /// # Errors
    ///
    /// When a running member does not answer its status, or the leader
    /// named is not one of this cluster's running members.
    pub fn leader(&self) -> io::Result<usize> {
        let mut ids = Vec::new();
        let mut leader = None;
        for (i, member) in self.members.iter().enumerate() {
            if member.child.is_none() {
                continue;
            }
            let status = self.post(i, "/v3/maintenance/status", "{}", None)?;
            let value: serde_json::Value = serde_json::from_str(&status)
                .map_err(|e| io::Error::other(format!("status of member {i}: {e}: {status}")))?;
            let field = |v: &serde_json::Value| v.as_str().and_then(|s| s.parse::<u64>().ok());
            ids.push((i, field(&value["header"]["member_id"])));
            leader = leader.or(field(&value["leader"]));
        }
        ids.iter()
            .find(|(_, id)| id.is_some() && *id == leader)
            .map(|(i, _)| *i)
            .ok_or_else(|| {
                io::Error::other(format!(
                    "no running member leads: {ids:?}, leader {leader:?}"
                ))
            })
    }

    /// What each member is doing (running, killed, or exited with its
    /// status) and the last lines of its log: the context a failed test
    /// prints.
    pub fn report(&mut self) -> String {
        let mut out = String::new();
        for (i, member) in self.members.iter_mut().enumerate() {
            let state = match member.child.as_mut().map(Child::try_wait) {
                None if member.killed => "killed by the test".to_string(),
                None => "not started".to_string(),
                Some(Ok(None)) => "running".to_string(),
                Some(Ok(Some(status))) => format!("exited: {status}"),
                Some(Err(e)) => format!("unknown: {e}"),
            };
            let log = std::fs::read_to_string(&member.log).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let tail = &lines[lines.len().saturating_sub(REPORT_LOG_LINES)..];
            out.push_str(&format!(
                "member {i} (client port {}): {state}; last lines of {}:\n",
                member.client_port,
                member.log.display()
            ));
            for line in tail {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// Whether a member the test did not kill has exited.
    fn any_exited(&mut self) -> bool {
        self.members.iter_mut().any(|m| {
            m.child
                .as_mut()
                .is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))))
        })
    }

    /// Waits until every running member answers `/health` with a leader.
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::TimedOut`] when that does not happen in `limit`,
    /// and at once when a member the test did not kill has exited.
    pub fn wait_healthy(&mut self, limit: Duration) -> io::Result<()> {
        let deadline = Instant::now() + limit;
        for i in 0..self.members.len() {
            if self.members[i].child.is_none() {
                continue;
            }
            loop {
                if self.any_exited() {
                    return Err(io::Error::other("an etcd member exited"));
                }
                let member = &self.members[i];
                match get(member.metrics_port, "/health") {
                    Ok(body) if body.contains("\"health\":\"true\"") => break,
                    _ if Instant::now() > deadline => {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "etcd member on port {} is not healthy after {limit:?}",
                                member.client_port
                            ),
                        ))
                    }
                    _ => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        }
        Ok(())
    }

    /// Sends a JSON request to member `i`'s gateway and returns the
    /// answer's body (for tests that set up users or inspect keys).
    ///
    /// # Errors
    ///
    /// I/O errors, and a non-200 answer as [`io::ErrorKind::Other`].
    pub fn post(
        &self,
        i: usize,
        path: &str,
        body: &str,
        token: Option<&str>,
    ) -> io::Result<String> {
        let auth = token
            .map(|t| format!("Authorization: {t}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let answer = exchange(self.members[i].client_port, &request)?;
        if !answer.starts_with("HTTP/1.1 200") {
            return Err(io::Error::other(answer));
        }
        Ok(body_of(&answer))
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for member in &mut self.members {
            if let Some(mut child) = member.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// How often [`EtcdCluster::start`] tries to start a cluster.
const START_ATTEMPTS: u32 = 3;

/// How many of a member's last log lines [`EtcdCluster::report`] shows.
const REPORT_LOG_LINES: usize = 12;

/// Why one attempt at starting a cluster failed.
enum StartError {
    /// A member exited while the cluster started: likely a port taken
    /// between picking it and etcd binding it; worth another attempt.
    MemberExited(io::Error),
    /// Anything else.
    Other(io::Error),
}

impl From<io::Error> for StartError {
    fn from(e: io::Error) -> Self {
        StartError::Other(e)
    }
}

fn get(port: u16, path: &str) -> io::Result<String> {
    let answer = exchange(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
    )?;
    Ok(body_of(&answer))
}

fn exchange(port: u16, request: &str) -> io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(request.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

fn body_of(answer: &str) -> String {
    answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}
