//! `cargo xtask memcached-bench`: the memcached store against memaslap,
//! the load tool of Debian's libmemcached-tools (`memcaslap`).
//!
//! Starts a private memcached (one worker thread, 1 GiB, no UDP) on a free
//! loopback port, pinned to one core while the clients run on another, and
//! alternates, round by round, one connection each:
//! - `memcaslap -T 1 -c 1 -x 2N` with a configuration of 33-byte keys (as
//!   long as the binding's `usertable-user` + 19 digits), values of the size ycsb's record
//!   takes in memcached (Java's binding stores a record as a JSON object:
//!   one 100-byte field is about 115 bytes) and sets and gets half and
//!   half;
//! - `ycsb -load -run -db memcached`: N inserts (sets), then N reads (gets)
//!   of one 100-byte field, uniform over the loaded keys.
//!
//! Both did 2N operations, half writes and half reads; what is compared is
//! the operations per CPU-second of the client (user + system, from
//! `getrusage` of the waited child), the "client is not the bottleneck"
//! criterion of docs/performance.md, and, for information, the rate.

use std::net::{Ipv4Addr, TcpStream};
use std::path::Path;

use std::time::Duration;

use anyhow::{bail, Result};

use crate::machine::{load_average, Placement};
use crate::peer::{alternate, print_table, timed, Bench, Figures, Options, Run, Server};

/// The bench's name in its messages.
const BENCH: &str = "memcached-bench";

const USAGE: &str = "usage: cargo xtask memcached-bench [--requests N] [--rounds N] [--no-pin]
  N sets and N gets per client and round (default 50000), rounds alternate the
  clients (default 3); memcached runs on one core and the clients on another
  unless --no-pin.";

/// The size ycsb's record of one 100-byte field takes as a memcached
/// value: Java's JSON object `{"field0":"…"}` with the value escaped as
/// Java's Jackson writes it (15 bytes of framing, a few more where the
/// random value has characters to escape; 115 measured on the first key).
const VALUE_BYTES: usize = 115;

/// The binding's memcached key: `usertable-user` and a 64-bit hash of 19
/// or 20 digits.
const KEY_BYTES: usize = 33;

/// Starts a private memcached (stopped when dropped), on `core` alone
/// when one is given.
fn start_memcached(core: Option<usize>) -> Result<Server> {
    let args = |port: u16| {
        let port = port.to_string();
        let mut args = [
            "-p",
            &port,
            "-l",
            "127.0.0.1",
            "-U",
            "0",
            "-t",
            "1",
            "-m",
            "1024",
        ]
        .map(String::from)
        .to_vec();
        if crate::is_root() {
            // memcached refuses to run as root without a user to become.
            args.extend(["-u", "nobody"].map(String::from));
        }
        args
    };
    let accepts = |port: u16| TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok();
    Server::start("memcached", core, args, accepts, "accept connections")
}

/// Empties the cache between clients, so that each starts alike.
fn flush(server: &Server) -> Result<()> {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, server.port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(b"flush_all\r\n")?;
    let mut reply = [0u8; 16];
    let n = s.read(&mut reply)?;
    if !reply[..n].starts_with(b"OK") {
        bail!(
            "flush_all answered {}",
            String::from_utf8_lossy(&reply[..n])
        );
    }
    Ok(())
}

fn memaslap(config: &Path, port: u16, o: &Options, core: Option<usize>) -> Result<Run> {
    let mut command = crate::machine::pinned("memcaslap", core);
    command
        .args(["-s", &format!("127.0.0.1:{port}"), "-T", "1", "-c", "1"])
        .args(["-x", &(2 * o.requests).to_string(), "-F"])
        .arg(config);
    let (run, stdout) = timed(&mut command, "memcaslap (package libmemcached-tools)")?;
    // Every get must have found its key for the figure to mean the same
    // work as ycsb's reads.
    let misses = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("get_misses:"))
        .and_then(|v| v.trim().parse::<u64>().ok());
    match misses {
        Some(0) => Ok(run),
        Some(n) => bail!("memcaslap: {n} gets missed"),
        None => bail!("memcaslap printed no get_misses line:\n{stdout}"),
    }
}

fn ycsb(bin: &Path, port: u16, o: &Options, core: Option<usize>) -> Result<Run> {
    let mut command = crate::machine::pinned(bin, core);
    command
        .args(["-load", "-run", "-db", "memcached", "-threads", "1"])
        .args(["-p", &format!("memcached.hosts=127.0.0.1:{port}")])
        .args(["-p", "fieldcount=1", "-p", "fieldlength=100"])
        .args(["-p", &format!("recordcount={}", o.requests)])
        .args(["-p", &format!("operationcount={}", o.requests)])
        .args(["-p", "readproportion=1", "-p", "updateproportion=0"])
        .args(["-p", "requestdistribution=uniform"]);
    let (run, stdout) = timed(&mut command, "ycsb")?;
    if let Some(line) = stdout.lines().find(|l| l.contains("-FAILED], Operations")) {
        bail!("ycsb: failed operations: {line}");
    }
    Ok(run)
}

/// Runs the comparison and prints its table.
///
/// # Errors
/// Bad options, a client or server that cannot start, a failed operation.
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    let Some(bench) = Bench::prepare(root, args, BENCH, USAGE)? else {
        return Ok(());
    };
    let o = bench.options;
    let placement = if o.pin {
        Placement::separate_cores()
    } else {
        None
    };
    let client_core = placement.map(|p| p.client);
    let server = start_memcached(placement.map(|p| p.server))?;
    let config = bench.work.join("memaslap.cnf");
    // memaslap's configuration: key sizes, value sizes (from, to,
    // proportion), then commands (0 = set, 1 = get) and their shares.
    std::fs::write(
        &config,
        format!("key\n{KEY_BYTES} {KEY_BYTES} 1\nvalue\n{VALUE_BYTES} {VALUE_BYTES} 1\ncmd\n0 0.5\n1 0.5\n"),
    )?;
    let load_before = load_average();
    let pinning = match placement {
        Some(p) => format!(
            "memcached on core {}, clients on core {}",
            p.server, p.client
        ),
        None => "not pinned".into(),
    };
    eprintln!(
        "memcached-bench: port {}; {pinning}; {} sets and {} gets per client, {} round(s); load average {load_before}",
        server.port, o.requests, o.requests, o.rounds
    );
    // Each client starts from an empty cache.
    let (peer, ours) = alternate(
        BENCH,
        o.rounds,
        || {
            flush(&server)?;
            memaslap(&config, server.port, &o, client_core)
        },
        || {
            flush(&server)?;
            ycsb(&bench.ycsb, server.port, &o, client_core)
        },
    )?;
    drop(server);
    let operations = (2 * o.requests) as f64;
    let (peer, ours) = (
        Figures::of(&peer, operations),
        Figures::of(&ours, operations),
    );
    print_table(
        "op",
        "ops",
        [("memaslap", &peer), ("ycsb memcached", &ours)],
    );
    println!(
        "\nycsb / memaslap per client CPU-second: {:.3} (rate: {:.3}); medians of {} round(s); {pinning}; load average before {load_before}, after {}",
        ours.per_cpu / peer.per_cpu,
        ours.rate / peer.rate,
        o.rounds,
        load_average()
    );
    println!("memaslap: -T 1 -c 1, {KEY_BYTES}-byte keys, {VALUE_BYTES}-byte values, sets and gets half and half at random; ycsb: {} inserts then {} reads of one 100-byte field (Java's JSON record, about {VALUE_BYTES} bytes, {KEY_BYTES}-byte keys), uniform, one thread; both one connection, every get a hit", o.requests, o.requests);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_private_server_accepts_flushes_and_is_stopped_when_dropped() {
        let server = start_memcached(None).unwrap();
        let port = server.port;
        flush(&server).unwrap();
        drop(server);
        assert!(TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err());
    }
}
