//! Real memcached processes on loopback ports, for tests (feature
//! `testing`): this crate's and the `ycsb` binary's.
//!
//! Test code: it panics when a server cannot be started or answers
//! what it should not.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use ycsb_db::testing::{free_port, ServerProcess, ServerSpec};

/// A memcached child process on a free loopback port, killed when dropped.
pub struct Memcached {
    server: ServerProcess,
    /// The port it listens on.
    pub port: u16,
}

/// memcached, ready once it answers `version`.
const MEMCACHED: ServerSpec = ServerSpec {
    program: "memcached",
    package: "memcached",
    probe: b"version\r\n",
    ready: b"VERSION",
};

/// The process: `kill` it (as a crash would), `restart` it on the same
/// port (empty: memcached keeps nothing), its `addr` (for
/// `memcached.hosts`) and its `child`.
impl std::ops::Deref for Memcached {
    type Target = ServerProcess;

    fn deref(&self) -> &ServerProcess {
        &self.server
    }
}

impl std::ops::DerefMut for Memcached {
    fn deref_mut(&mut self) -> &mut ServerProcess {
        &mut self.server
    }
}

impl Memcached {
    /// Starts memcached on a free port, TCP on 127.0.0.1 only.
    pub fn start() -> Self {
        let port = free_port();
        let mut args: Vec<String> = ["-l", "127.0.0.1", "-p", &port.to_string()]
            .iter()
            .chain(&["-U", "0", "-m", "64", "-t", "2", "-c", "1024"])
            .map(|s| s.to_string())
            .collect();
        if ycsb_db::testing::is_root() {
            args.extend(["-u".to_string(), "root".to_string()]);
        }
        Self {
            server: ServerProcess::start(MEMCACHED, port, args),
            port,
        }
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
