//! `ycsb serve` under hostile and careless clients (issue #17, items 2
//! and 3): its memory stays bounded whatever lengths a client declares,
//! however many replies it leaves unread and however many connections it
//! opens, and SIGTERM ends it within seconds, with the engine closed,
//! even while a client never reads its replies.
//!
//! Every figure is the server process's own peak resident set (VmHWM in
//! /proc/<pid>/status), on loopback, with attacks bounded in size and time.

mod common;
mod rel_support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Child;
use std::time::{Duration, Instant};

use common::*;
use rel_support::*;

const MIB: u64 = 1 << 20;

/// A `ycsb serve` child and the address it serves one protocol on.
struct Served {
    child: Child,
    addr: SocketAddr,
    lines: StderrLines,
}

impl Served {
    /// `ycsb serve <store> <args...>` serving only `protocol` (RESP or
    /// HTTP) on a free loopback port.
    fn start(store: &str, protocol: &str, args: &[&str]) -> Self {
        let (resp, http) = if protocol == "RESP" {
            ("127.0.0.1:0", "off")
        } else {
            ("off", "127.0.0.1:0")
        };
        let (child, mut lines) = spawn_watched(
            ycsb()
                .args(["serve", store, "--resp", resp, "--http", http])
                .args(args),
        );
        let marker = format!(" over {protocol} at ");
        let line = lines
            .wait_for(Duration::from_secs(30), |l| l.contains(&marker))
            .unwrap_or_else(|| panic!("no {protocol} address line: {:?}", lines.seen));
        let addr = address_after(&line, &marker);
        Self { child, addr, lines }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    }

    /// A field of /proc/<pid>/status, in bytes.
    fn status_bytes(&self, field: &str) -> u64 {
        let text = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with(field))
            .unwrap_or_else(|| panic!("no {field} in {text}"));
        let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kb * 1024
    }

    /// The peak resident set so far.
    fn peak(&self) -> u64 {
        self.status_bytes("VmHWM:")
    }

    /// SIGTERM, a bounded wait, and its exit status; panics after `limit`.
    fn stop(mut self, limit: Duration) -> (std::process::ExitStatus, Duration, String) {
        let started = Instant::now();
        signal(&self.child, SIGTERM);
        let status = wait_bounded(&mut self.child, limit, "ycsb serve after SIGTERM");
        (status, started.elapsed(), self.lines.rest())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Reads until `want` bytes arrived, the peer closed or the read timed out.
fn read_some(s: &mut TcpStream, want: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while out.len() < want {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    out
}

/// Sends `head` and then `total` bytes of filler from a thread of its
/// own, ignoring write errors (the server may close on it); it returns
/// when everything is sent or the server stopped taking it.
fn send_partial(
    mut s: TcpStream,
    head: Vec<u8>,
    total: usize,
) -> std::thread::JoinHandle<TcpStream> {
    std::thread::spawn(move || {
        let chunk = vec![b'x'; 1 << 20];
        if s.write_all(&head).is_ok() {
            let mut sent = 0;
            while sent < total {
                let n = chunk.len().min(total - sent);
                if s.write_all(&chunk[..n]).is_err() {
                    break;
                }
                sent += n;
            }
        }
        s
    })
}

fn resp_command(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

#[test]
fn http_declared_lengths_reserve_nothing_and_time_out() {
    // Eight requests declare 64 MiB bodies (the default limit) and send
    // nothing: nothing is reserved for them, and each is answered 408
    // when its time is up.
    let served = Served::start("memory", "HTTP", &["-p", "serve.http.timeout=2"]);
    let before = served.peak();
    let mut conns: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut s = served.connect();
            s.write_all(b"POST /put?key=k HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n")
                .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let peak = served.peak();
    eprintln!(
        "8 x Content-Length 64 MiB: peak RSS {} MiB (before {} MiB)",
        peak / MIB,
        before / MIB
    );
    assert!(peak < 64 * MIB, "peak RSS {} MiB", peak / MIB);
    let started = Instant::now();
    for s in &mut conns {
        let reply = String::from_utf8_lossy(&read_some(s, 1 << 16)).into_owned();
        assert!(reply.starts_with("HTTP/1.1 408"), "{reply:?}");
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    let (status, _, err) = served.stop(Duration::from_secs(10));
    assert!(status.success(), "{err}");
}

#[test]
fn http_bodies_share_one_budget() {
    // Six bodies of 30 MiB are sent, none finished: together they are
    // over serve.http.maxbuffered, so some are answered 503 and the server
    // holds no more than the budget.
    let served = Served::start("memory", "HTTP", &["-p", "serve.http.maxbuffered=67108864"]);
    let head = b"POST /put?key=k HTTP/1.1\r\nHost: x\r\nContent-Length: 33554432\r\n\r\n";
    let senders: Vec<_> = (0..6)
        .map(|_| send_partial(served.connect(), head.to_vec(), 30 << 20))
        .collect();
    let mut streams: Vec<TcpStream> = senders.into_iter().map(|t| t.join().unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let peak = served.peak();
    eprintln!(
        "6 x 30 MiB partial HTTP bodies: peak RSS {} MiB",
        peak / MIB
    );
    assert!(peak < 128 * MIB, "peak RSS {} MiB", peak / MIB);
    let mut refused = 0;
    for s in &mut streams {
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let reply = read_some(s, 1 << 16);
        if reply.starts_with(b"HTTP/1.1 503") {
            refused += 1;
        }
    }
    assert!(refused >= 2, "{refused} bodies refused");
    drop(streams);
    let (status, _, err) = served.stop(Duration::from_secs(10));
    assert!(status.success(), "{err}");
}

#[test]
fn resp_replies_are_written_as_they_are_produced() {
    // 400 GETs of a 1 MiB value in one packet, replies left unread: the
    // server does not build 400 MiB of replies, and they all arrive.
    let served = Served::start("memory", "RESP", &[]);
    let mut s = served.connect();
    let value = vec![b'v'; 1 << 20];
    s.write_all(&resp_command(&[b"SET", b"big", &value]))
        .unwrap();
    assert_eq!(read_some(&mut s, 5), b"+OK\r\n");
    let gets: Vec<u8> = (0..400)
        .flat_map(|_| resp_command(&[b"GET", b"big"]))
        .collect();
    s.write_all(&gets).unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let peak = served.peak();
    eprintln!("400 x GET of 1 MiB, unread: peak RSS {} MiB", peak / MIB);
    let reply_len = format!("${}\r\n", value.len()).len() + value.len() + 2;
    let replies = read_some(&mut s, 400 * reply_len);
    assert_eq!(replies.len(), 400 * reply_len);
    assert!(peak < 64 * MIB, "peak RSS {} MiB", peak / MIB);
    let (status, _, err) = served.stop(Duration::from_secs(10));
    assert!(status.success(), "{err}");
}

#[test]
fn resp_oversized_bulk_strings_are_refused_before_they_arrive() {
    // Three 100 MiB bulk strings, each declared over serve.resp.maxbulk
    // (64 MiB): each is answered -ERR at once, nothing is reserved.
    let served = Served::start("memory", "RESP", &[]);
    let head = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$104857600\r\n".to_vec();
    let senders: Vec<_> = (0..3)
        .map(|_| {
            let s = served.connect();
            let reader = s.try_clone().unwrap();
            (send_partial(s, head.clone(), 99 << 20), reader)
        })
        .collect();
    let mut replies = Vec::new();
    for (_, reader) in &senders {
        let mut reader = reader.try_clone().unwrap();
        reader
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        replies.push(String::from_utf8_lossy(&read_some(&mut reader, 4)).into_owned());
    }
    for (sender, _) in senders {
        drop(sender.join().unwrap());
    }
    let peak = served.peak();
    eprintln!("3 x 100 MiB bulk strings: peak RSS {} MiB", peak / MIB);
    for reply in &replies {
        assert!(reply.starts_with("-ERR"), "{replies:?}");
    }
    assert!(peak < 64 * MIB, "peak RSS {} MiB", peak / MIB);
    let (status, _, err) = served.stop(Duration::from_secs(10));
    assert!(status.success(), "{err}");
}

#[test]
fn resp_commands_share_one_budget() {
    // Six 30 MiB bulk strings, under the per-string limit but together
    // over serve.resp.maxbuffered: some are refused, the rest fit.
    let served = Served::start("memory", "RESP", &["-p", "serve.resp.maxbuffered=67108864"]);
    let head = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$31457280\r\n".to_vec();
    let senders: Vec<_> = (0..6)
        .map(|_| send_partial(served.connect(), head.clone(), 30 << 20))
        .collect();
    let mut streams: Vec<TcpStream> = senders.into_iter().map(|t| t.join().unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let peak = served.peak();
    eprintln!(
        "6 x 30 MiB partial bulk strings: peak RSS {} MiB",
        peak / MIB
    );
    let mut refused = 0;
    for s in &mut streams {
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        if read_some(s, 4).starts_with(b"-ERR") {
            refused += 1;
        }
    }
    assert!(peak < 128 * MIB, "peak RSS {} MiB", peak / MIB);
    assert!(refused >= 2, "{refused} commands refused");
    drop(streams);
    let (status, _, err) = served.stop(Duration::from_secs(10));
    assert!(status.success(), "{err}");
}

#[test]
fn connections_are_capped_and_idle_ones_closed() {
    let served = Served::start(
        "memory",
        "RESP",
        &[
            "-p",
            "serve.resp.maxconnections=4",
            "-p",
            "serve.resp.timeout=2",
        ],
    );
    let mut held: Vec<TcpStream> = (0..4).map(|_| served.connect()).collect();
    for s in &mut held {
        s.write_all(b"PING\r\n").unwrap();
        assert_eq!(read_some(s, 7), b"+PONG\r\n");
    }
    let mut extra = served.connect();
    let reply = String::from_utf8_lossy(&read_some(&mut extra, 1 << 10)).into_owned();
    assert!(reply.starts_with("-ERR max number of clients"), "{reply:?}");
    // Idle past the timeout: closed by the server (end of stream).
    let started = Instant::now();
    for s in &mut held {
        assert_eq!(read_some(s, 1), b"");
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    // Their places are free again.
    let mut again = served.connect();
    again.write_all(b"PING\r\n").unwrap();
    assert_eq!(read_some(&mut again, 7), b"+PONG\r\n");
    let (status, _, err) = served.stop(Duration::from_secs(10));
    assert!(status.success(), "{err}");
}

#[test]
fn sigterm_stops_a_server_whose_client_never_reads() {
    for engine in embedded_engines() {
        sigterm_with_an_unread_client(&engine);
    }
}

fn sigterm_with_an_unread_client(engine: &Embedded) {
    let dir = tempfile::tempdir().unwrap();
    let [flag, dbname] = engine.at(&dir.path().join("db"));
    let served = Served::start(engine.name, "RESP", &[&flag, &dbname]);
    // Acknowledged writes: each reply read.
    let mut acked = served.connect();
    let value = vec![b'v'; 1 << 20];
    acked
        .write_all(&resp_command(&[b"SET", b"big", &value]))
        .unwrap();
    assert_eq!(read_some(&mut acked, 5), b"+OK\r\n");
    for i in 0..100 {
        let key = format!("key{i}");
        acked
            .write_all(&resp_command(&[b"SET", key.as_bytes(), b"x"]))
            .unwrap();
        assert_eq!(read_some(&mut acked, 5), b"+OK\r\n");
    }
    // A client that writes and never reads: its replies fill the socket
    // buffers and the server's writes block.
    let mut hog = served.connect();
    let gets: Vec<u8> = (0..200)
        .flat_map(|_| resp_command(&[b"GET", b"big"]))
        .collect();
    hog.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let _ = hog.write_all(&gets);
    std::thread::sleep(Duration::from_millis(500));
    let (status, took, err) = served.stop(Duration::from_secs(20));
    eprintln!(
        "{}: SIGTERM with an unread client: exited in {took:?}",
        engine.name
    );
    assert!(status.success(), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
    drop(hog);
    drop(acked);
    // The database reopens with every acknowledged record.
    let served = Served::start(engine.name, "RESP", &[&flag, &dbname]);
    let mut s = served.connect();
    for i in 0..100 {
        let key = format!("key{i}");
        s.write_all(&resp_command(&[b"GET", key.as_bytes()]))
            .unwrap();
        assert_eq!(read_some(&mut s, 7), b"$1\r\nx\r\n", "{key}");
    }
    s.write_all(&resp_command(&[b"GET", b"big"])).unwrap();
    let got = read_some(&mut s, value.len() + 12);
    assert_eq!(got.len(), value.len() + 12);
    assert!(got.ends_with(b"v\r\n"));
    let (status, _, err) = served.stop(Duration::from_secs(10));
    assert!(status.success(), "{err}");
}

#[test]
fn http_connections_are_capped() {
    let served = Served::start("memory", "HTTP", &["-p", "serve.http.maxconnections=2"]);
    let mut held: Vec<TcpStream> = (0..2).map(|_| served.connect()).collect();
    for s in &mut held {
        s.write_all(b"GET /get?key=k&format=txt HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let reply = String::from_utf8_lossy(&read_some(s, 12)).into_owned();
        assert!(reply.starts_with("HTTP/1.1 404"), "{reply:?}");
    }
    let mut extra = served.connect();
    let reply = String::from_utf8_lossy(&read_some(&mut extra, 1 << 10)).into_owned();
    assert!(reply.starts_with("HTTP/1.1 503"), "{reply:?}");
    assert!(reply.ends_with("too many connections"), "{reply:?}");
    drop(held);
    let (status, _, err) = served.stop(Duration::from_secs(10));
    assert!(status.success(), "{err}");
}
