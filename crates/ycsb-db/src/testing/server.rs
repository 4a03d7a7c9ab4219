//! A real server process a test starts on a loopback port of its own
//! (redis-server, memcached): started and waited for until it answers, killed
//! as a crash would kill it, restarted on the same port, and killed when
//! dropped so that no server outlives its test.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether this process runs as root: servers that refuse to run as root
/// (memcached, PostgreSQL, MariaDB) are then started as another user.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|ids| ids.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// A loopback port that is free now.
///
/// # Panics
///
/// When no port can be bound.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// How to start a server and tell that it is ready.
#[derive(Clone, Debug)]
pub struct ServerSpec {
    /// The program (`redis-server`).
    pub program: &'static str,
    /// The Debian package that has it, for the message when it is missing.
    pub package: &'static str,
    /// What is sent once connected (`PING\r\n`).
    pub probe: &'static [u8],
    /// What the answer starts with when the server is ready (`+PONG`;
    /// empty: any answer at all).
    pub ready: &'static [u8],
}

/// A server process of a test, on `127.0.0.1:port`.
#[derive(Debug)]
pub struct ServerProcess {
    spec: ServerSpec,
    port: u16,
    args: Vec<String>,
    child: Option<Child>,
}

impl ServerProcess {
    /// Starts `spec.program` with `args` (which name the port and whatever
    /// else it needs) and waits until it answers on `port`.
    ///
    /// # Panics
    ///
    /// When the program is missing (naming its package), exits at start,
    /// or does not answer within 10 seconds.
    pub fn start(spec: ServerSpec, port: u16, args: Vec<String>) -> ServerProcess {
        let mut server = ServerProcess {
            spec,
            port,
            args,
            child: None,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let child = Command::new(self.spec.program)
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{} cannot be started ({e}): these tests need the Debian package {}, \
                     which .ci/run installs",
                    self.spec.program, self.spec.package
                )
            });
        self.child = Some(child);
        self.wait_ready();
    }

    /// Until the server answers the probe as ready (not merely accepts).
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
                let mut buf = [0u8; 64];
                if s.write_all(self.spec.probe).is_ok()
                    && matches!(s.read(&mut buf), Ok(n) if n > 0 && buf[..n].starts_with(self.spec.ready))
                {
                    return;
                }
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "{} on port {} exited at start: {status}",
                    self.spec.program, self.port
                );
            }
            assert!(
                Instant::now() < deadline,
                "{} on port {} did not start",
                self.spec.program,
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:port`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The process, while it runs.
    ///
    /// # Panics
    ///
    /// When it was killed and not restarted.
    pub fn child(&self) -> &Child {
        self.child.as_ref().expect("the server runs")
    }

    /// Kills the server at once, as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, with the same arguments.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }
}

/// Stops process `pid` (SIGSTOP, as a hung server) and returns once every
/// one of its threads is stopped: `kill` returns when the signal is sent,
/// and a thread still running could answer one more request.
///
/// # Panics
///
/// When the signal cannot be sent or the process does not stop within 5
/// seconds.
pub fn stop_process(pid: u32) {
    let sent = Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(sent, "cannot stop process {pid}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process's tasks");
        let all_stopped = tasks.flatten().all(|task| {
            std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
                stat.rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with('T'))
            })
        });
        if all_stopped {
            return;
        }
        assert!(Instant::now() < deadline, "process {pid} did not stop");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Lets a process stopped by [`stop_process`] run again.
///
/// # Panics
///
/// When the signal cannot be sent.
pub fn continue_process(pid: u32) {
    let sent = Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(sent, "cannot continue process {pid}");
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
