//! Real etcd clusters on loopback ports, for tests (feature `testing`).
//!
//! The tests of this crate and of the `ycsb` binary start `etcd` (Debian's
//! `etcd-server`) as child processes with their data in a directory the
//! test owns; [`EtcdCluster`] kills them when dropped.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One member process.
#[derive(Debug)]
struct Member {
    child: Option<Child>,
    client_port: u16,
    /// Plain-HTTP port of `/health` and `/metrics`, also with TLS clients.
    metrics_port: u16,
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
    /// within 30 seconds (the message points at the logs).
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
            let log = std::fs::File::create(dir.join(format!("m{i}.log")))?;
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
            });
        }
        let cluster = Self { members };
        cluster.wait_healthy(Duration::from_secs(30)).map_err(|e| {
            io::Error::new(e.kind(), format!("{e}; see the logs in {}", dir.display()))
        })?;
        Ok(cluster)
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
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }

    /// Waits until every running member answers `/health` with a leader.
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::TimedOut`] when that does not happen in `limit`.
    pub fn wait_healthy(&self, limit: Duration) -> io::Result<()> {
        let deadline = Instant::now() + limit;
        for member in self.members.iter().filter(|m| m.child.is_some()) {
            loop {
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
