//! etcd alone: a minimal loop of gateway requests on one keep-alive
//! connection, the same puts and gets a one-thread `ycsb load etcd` and
//! `ycsb run etcd` (read-only) do, to show what the `etcd` store and the
//! harness add per operation (docs/performance-engines.md).
//!
//! `cargo run --release -p ycsb-etcd --example etcd-direct-loop --
//!  127.0.0.1:2379 <records> <value bytes>`
//!
//! Prints `phase=<load|run> operations=<n> seconds=<s> mean_us=<µs>` per
//! phase. Keys are `usertable/user<i>`; values are `value bytes` of 'x'
//! (their content does not matter to etcd).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// Sends one request and reads the answer (Content-Length framed, as
/// etcd's gateway answers 200s); returns the status code.
fn exchange(stream: &mut TcpStream, request: &[u8], buf: &mut Vec<u8>) -> u16 {
    stream.write_all(request).expect("write");
    buf.clear();
    let mut chunk = [0u8; 65536];
    loop {
        let n = stream.read(&mut chunk).expect("read");
        assert!(n > 0, "connection closed");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&buf[..end]).expect("head");
            let status: u16 = head[9..12].parse().expect("status");
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().expect("length"))
                })
                .expect("a Content-Length answer");
            while buf.len() < end + 4 + length {
                let n = stream.read(&mut chunk).expect("read");
                assert!(n > 0, "connection closed");
                buf.extend_from_slice(&chunk[..n]);
            }
            return status;
        }
    }
}

fn request(path: &str, body: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: etcd\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let endpoint = args.first().map_or("127.0.0.1:2379", String::as_str);
    let records: usize = args.get(1).map_or(1000, |a| a.parse().expect("records"));
    let value_len: usize = args.get(2).map_or(100, |a| a.parse().expect("value bytes"));
    let value = STANDARD.encode(vec![b'x'; value_len]);
    let keys: Vec<String> = (0..records)
        .map(|i| STANDARD.encode(format!("usertable/user{i}")))
        .collect();
    // Requests are rendered before the clock starts: the loop measures
    // the round trips alone.
    let puts: Vec<Vec<u8>> = keys
        .iter()
        .map(|k| {
            request(
                "/v3/kv/put",
                &format!(r#"{{"key":"{k}","value":"{value}"}}"#),
            )
        })
        .collect();
    let gets: Vec<Vec<u8>> = keys
        .iter()
        .map(|k| request("/v3/kv/range", &format!(r#"{{"key":"{k}"}}"#)))
        .collect();
    let mut stream = TcpStream::connect(endpoint).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let mut buf = Vec::with_capacity(65536);
    for (phase, requests) in [("load", &puts), ("run", &gets)] {
        let start = Instant::now();
        for r in requests {
            assert_eq!(exchange(&mut stream, r, &mut buf), 200);
        }
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "phase={phase} operations={records} seconds={seconds:.3} mean_us={:.1}",
            seconds * 1e6 / records as f64
        );
    }
}
