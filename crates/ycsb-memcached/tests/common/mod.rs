//! Real memcached processes on loopback ports, for tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A memcached child process on a free loopback port, killed when dropped.
pub struct Memcached {
    child: Option<Child>,
    pub port: u16,
}

/// Whether this process runs as root (memcached then needs `-u root`).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|ids| ids.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

impl Memcached {
    /// Starts memcached on a free port, TCP on 127.0.0.1 only.
    pub fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        let mut server = Self { child: None, port };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let mut command = Command::new("memcached");
        command
            .args(["-l", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "0", "-m", "64", "-t", "2", "-c", "1024"]);
        if is_root() {
            command.args(["-u", "root"]);
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "memcached does not start ({e}): these tests need the Debian package \
                     memcached (cargo xtask deps installs it)"
                )
            });
        self.child = Some(child);
        self.wait_ready();
    }

    /// Until the server answers `version` (not merely accepts).
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
                s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
                let mut buf = [0u8; 64];
                if s.write_all(b"version\r\n").is_ok()
                    && matches!(s.read(&mut buf), Ok(n) if buf[..n].starts_with(b"VERSION"))
                {
                    return;
                }
            }
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                panic!("memcached on port {} exited at start: {status}", self.port);
            }
            assert!(
                Instant::now() < deadline,
                "memcached on port {} did not start",
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

    /// Starts the server again on the same port (empty: memcached keeps
    /// nothing).
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

    /// Sends one text command and returns the reply up to `END`, a single
    /// line answer, or what came within a second.
    pub fn raw(&self, command: &[u8]) -> Vec<u8> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        s.write_all(command).unwrap();
        let mut reader = BufReader::new(s);
        let mut out = Vec::new();
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return out,
                Ok(_) => {}
            }
            out.extend_from_slice(&line);
            if line == b"END\r\n" || !out.starts_with(b"VALUE") && !out.starts_with(b"STAT") {
                return out;
            }
        }
    }

    /// The item at `key` as `(flags, value)`, read with a raw `get`.
    pub fn get(&self, key: &str) -> Option<(u32, Vec<u8>)> {
        let reply = self.raw(format!("get {key}\r\n").as_bytes());
        if reply == b"END\r\n" {
            return None;
        }
        let header_end = reply.windows(2).position(|w| w == b"\r\n").unwrap();
        let header = String::from_utf8_lossy(&reply[..header_end]).into_owned();
        let words: Vec<&str> = header.split(' ').collect();
        assert_eq!(words[..2], ["VALUE", key], "{header}");
        let flags: u32 = words[2].parse().unwrap();
        let len: usize = words[3].parse().unwrap();
        let value = reply[header_end + 2..header_end + 2 + len].to_vec();
        Some((flags, value))
    }

    /// Stores `value` at `key` with `flags` (a raw `set`).
    pub fn set(&self, key: &str, flags: u32, value: &[u8]) {
        let mut command = format!("set {key} {flags} 0 {}\r\n", value.len()).into_bytes();
        command.extend_from_slice(value);
        command.extend_from_slice(b"\r\n");
        assert_eq!(self.raw(&command), b"STORED\r\n");
    }

    /// One number of `stats`.
    pub fn stat(&self, name: &str) -> u64 {
        let reply = String::from_utf8(self.raw(b"stats\r\n")).unwrap();
        let prefix = format!("STAT {name} ");
        reply
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {name} in {reply}"))
            .parse()
            .unwrap()
    }
}

impl Drop for Memcached {
    fn drop(&mut self) {
        self.kill();
    }
}
