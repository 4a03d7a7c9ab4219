//! `cargo xtask redis-bench`: the redis store against `redis-benchmark`.
//!
//! Starts a private `redis-server` on a free loopback port (no persistence),
//! then for each pipeline depth runs, one connection each:
//! - `redis-benchmark -t set,get -c 1 -P <depth> -d <size>` (SET/GET of one
//!   string value, what users quote);
//! - `redis-benchmark -c 1 -P <depth> HMSET key:ycsb field0 <size bytes>` and
//!   `... HGETALL key:ycsb`: the commands of Java YCSB's schema, which the
//!   store sends (a record is a hash), so that like is compared with like;
//! - `ycsb -load -run -db redis` with one field of `<size>` bytes,
//!   `redis.index=none` (no scan index, so an insert is one HMSET),
//!   `redis.pipeline=<depth>`: the load phase's inserts are the SET-like
//!   operations, the run phase's reads (readproportion=1) the GET-like ones.
//!
//! The store pipelines writes only (a read needs its answer before the
//! workload goes on), so reads are compared with redis-benchmark's
//! pipelined GET only for information. Clients alternate within each round;
//! the table shows medians and ratios (target at depth 1: ≥ 0.9). See
//! docs/performance-engines.md.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

const USAGE: &str = "usage: cargo xtask redis-bench [--requests N] [--size BYTES] [--depths 1,8,32]
       [--rounds N] [--no-pin]
  redis-server runs on one core and the clients (redis-benchmark, ycsb) on another;
  --no-pin leaves both to the scheduler";

struct Options {
    /// Server and clients on separate cores.
    pin: bool,
    requests: u64,
    size: usize,
    depths: Vec<u64>,
    rounds: usize,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options {
        pin: true,
        requests: 100_000,
        size: 100,
        depths: vec![1, 8, 32],
        rounds: 3,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--no-pin" {
            o.pin = false;
            continue;
        }
        let value = it
            .next()
            .with_context(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = |v: &str| -> Result<u64> {
            v.parse()
                .with_context(|| format!("{flag} {v}: expected a whole number"))
        };
        match flag.as_str() {
            "--requests" => o.requests = number(value)?,
            "--size" => o.size = number(value)? as usize,
            "--rounds" => o.rounds = number(value)? as usize,
            "--depths" => o.depths = value.split(',').map(number).collect::<Result<_>>()?,
            _ => bail!("redis-bench: unknown option {flag}\n{USAGE}"),
        }
    }
    if o.requests == 0 || o.size == 0 || o.rounds == 0 || o.depths.contains(&0) {
        bail!("redis-bench: --requests, --size, --rounds and every depth must be at least 1");
    }
    Ok(o)
}

/// A redis-server of our own, shut down when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    /// Starts the server, on `core` alone when one is given.
    fn start(core: Option<usize>) -> Result<Server> {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .context("finding a free loopback port")?
            .port();
        let mut command = Command::new("redis-server");
        if let Some(core) = core {
            crate::machine::pin(&mut command, core);
        }
        let child = command
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting redis-server (cargo xtask deps installs it)")?;
        let server = Server { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while server
            .command(b"PING\r\n")
            .map(|r| !r.starts_with(b"+PONG"))
            .unwrap_or(true)
        {
            if Instant::now() > deadline {
                bail!("redis-server on port {port} did not answer PING within 10 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }

    /// Sends one inline command and returns the start of the reply.
    fn command(&self, command: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port))?;
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        s.write_all(command)?;
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf)?;
        Ok(buf[..n].to_vec())
    }

    fn flush(&self) -> Result<()> {
        let reply = self.command(b"FLUSHALL\r\n").context("FLUSHALL")?;
        if !reply.starts_with(b"+OK") {
            bail!("FLUSHALL answered {}", String::from_utf8_lossy(&reply));
        }
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.command(b"SHUTDOWN NOSAVE\r\n");
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            std::thread::sleep(Duration::from_millis(200));
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Runs redis-benchmark and returns the requests per second of each row of
/// its CSV output, in order.
fn redis_benchmark(
    port: u16,
    depth: u64,
    o: &Options,
    core: Option<usize>,
    extra: &[String],
) -> Result<Vec<f64>> {
    let mut command = Command::new("redis-benchmark");
    if let Some(core) = core {
        crate::machine::pin(&mut command, core);
    }
    let out = command
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-c", "1"])
        .args(["-P", &depth.to_string(), "-n", &o.requests.to_string()])
        .args(["-q", "--csv"])
        .args(extra)
        .output()
        .context("starting redis-benchmark (Debian package redis-tools)")?;
    if !out.status.success() {
        bail!(
            "redis-benchmark failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // "test","rps","avg_latency_ms",...: the second column of each row.
    let rows: Vec<f64> = text
        .lines()
        .skip_while(|l| l.starts_with("\"test\""))
        .filter_map(|l| l.split("\",\"").nth(1)?.trim_matches('"').parse().ok())
        .collect();
    if rows.is_empty() {
        bail!("redis-benchmark printed no result:\n{text}");
    }
    Ok(rows)
}

/// The load (insert) and run (read) throughput of the redis store through
/// the ycsb binary, with their operation counts.
fn ycsb(
    bin: &Path,
    export: &Path,
    port: u16,
    depth: u64,
    o: &Options,
    core: Option<usize>,
) -> Result<[(u64, f64); 2]> {
    let mut command = Command::new(bin);
    if let Some(core) = core {
        crate::machine::pin(&mut command, core);
    }
    let out = command
        .args(["-load", "-run", "-db", "redis", "-threads", "1"])
        .args(["-p", &format!("redis.port={port}")])
        .args(["-p", "redis.index=none"])
        .args(["-p", &format!("redis.pipeline={depth}")])
        .args(["-p", "fieldcount=1"])
        .args(["-p", &format!("fieldlength={}", o.size)])
        .args(["-p", "fieldlengthdistribution=constant"])
        .args(["-p", &format!("recordcount={}", o.requests)])
        .args(["-p", &format!("operationcount={}", o.requests)])
        .args(["-p", "readproportion=1", "-p", "updateproportion=0"])
        .args(["-p", "requestdistribution=uniform"])
        .args(["-p", "exporter=json", "-p"])
        .arg(format!("exportfile={}", export.display()))
        .stdout(Stdio::null())
        .output()
        .with_context(|| format!("starting {}", bin.display()))?;
    if !out.status.success() {
        bail!(
            "ycsb failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text =
        std::fs::read_to_string(export).with_context(|| format!("reading {}", export.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", export.display()))?;
    let phase = |name: &str| -> Result<(u64, f64)> {
        let p = json["phases"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["phase"] == name))
            .with_context(|| format!("{}: no {name} phase", export.display()))?;
        // Every operation must have succeeded for the figure to mean
        // anything: count the failed ones in the sections.
        let failed: u64 = p["sections"]
            .as_array()
            .map(|ss| {
                ss.iter()
                    .filter(|s| s["name"].as_str().is_some_and(|n| n.ends_with("-FAILED")))
                    .filter_map(|s| s["operations"].as_u64())
                    .sum()
            })
            .unwrap_or(0);
        if failed > 0 {
            bail!("ycsb {name} phase: {failed} failed operations");
        }
        Ok((
            p["operations"].as_u64().unwrap_or(0),
            p["throughput"].as_f64().unwrap_or(0.0),
        ))
    };
    Ok([phase("load")?, phase("run")?])
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

use crate::machine::load_average;

/// Medians per depth of every client's figures.
#[derive(Default)]
struct Figures {
    set: Vec<f64>,
    get: Vec<f64>,
    hmset: Vec<f64>,
    hgetall: Vec<f64>,
    hmset_keys: Vec<f64>,
    hgetall_keys: Vec<f64>,
    insert: Vec<f64>,
    read: Vec<f64>,
}

/// Runs the comparison and prints the table.
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let o = parse(args)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("redis-bench: building ycsb (release)");
    crate::run(Command::new(&cargo).current_dir(root).args([
        "build",
        "--release",
        "-p",
        "ycsb-cli",
        "--bin",
        "ycsb",
    ]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let bin = target.join("release").join("ycsb");
    let work = target.join("redis-bench");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let placement = if o.pin {
        crate::machine::Placement::separate_cores()
    } else {
        None
    };
    let pinning = match placement {
        Some(p) => format!(
            "redis-server on core {}, clients on core {}",
            p.server, p.client
        ),
        None if o.pin => "not pinned (fewer than two cores allowed)".to_string(),
        None => "not pinned (--no-pin)".to_string(),
    };
    let client_core = placement.map(|p| p.client);
    let server = Server::start(placement.map(|p| p.server))?;
    let version = Command::new("redis-server")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let load_before = load_average();
    eprintln!(
        "redis-bench: {version}; port {}; {pinning}; {} requests of {} bytes, depths {:?}, {} round(s); load average {load_before}",
        server.port, o.requests, o.size, o.depths, o.rounds
    );
    let value = "x".repeat(o.size);
    let hmset: Vec<String> = ["HMSET", "key:ycsb", "field0", &value]
        .map(String::from)
        .to_vec();
    let hgetall: Vec<String> = vec!["HGETALL".into(), "key:ycsb".into()];
    // The same commands over `requests` random keys, as ycsb's inserts
    // create one new hash per record: creating keys costs the server more
    // than overwriting one. The reads then hit about 63 % of the time
    // (1 − 1/e of the keys were written), ycsb's always.
    let range = o.requests.to_string();
    let hmset_keys: Vec<String> = ["-r", &range, "HMSET", "key:__rand_int__", "field0", &value]
        .map(String::from)
        .to_vec();
    let hgetall_keys: Vec<String> = ["-r", &range, "HGETALL", "key:__rand_int__"]
        .map(String::from)
        .to_vec();
    let set_get: Vec<String> = ["-t", "set,get", "-d", &o.size.to_string()]
        .map(String::from)
        .to_vec();
    let mut table = Vec::new();
    for &depth in &o.depths {
        let mut f = Figures::default();
        for round in 0..o.rounds {
            let mut order = ["set,get", "hash", "ycsb"];
            order.rotate_left(round % 3);
            let round_load = load_average();
            for client in order {
                eprintln!("redis-bench: depth {depth} round {} {client}", round + 1);
                server.flush()?;
                match client {
                    "set,get" => {
                        let r = redis_benchmark(server.port, depth, &o, client_core, &set_get)?;
                        let [set, get] = r[..] else {
                            bail!("redis-benchmark -t set,get printed {} rows", r.len());
                        };
                        f.set.push(set);
                        f.get.push(get);
                    }
                    "hash" => {
                        f.hmset
                            .push(redis_benchmark(server.port, depth, &o, client_core, &hmset)?[0]);
                        f.hgetall.push(
                            redis_benchmark(server.port, depth, &o, client_core, &hgetall)?[0],
                        );
                        server.flush()?;
                        f.hmset_keys.push(
                            redis_benchmark(server.port, depth, &o, client_core, &hmset_keys)?[0],
                        );
                        f.hgetall_keys.push(
                            redis_benchmark(server.port, depth, &o, client_core, &hgetall_keys)?[0],
                        );
                    }
                    _ => {
                        let export = work.join(format!("ycsb-{depth}-{round}.json"));
                        let [(loaded, insert), (ran, read)] =
                            ycsb(&bin, &export, server.port, depth, &o, client_core)?;
                        if loaded != o.requests || ran != o.requests {
                            bail!(
                                "ycsb did {loaded} inserts and {ran} reads, not {}",
                                o.requests
                            );
                        }
                        f.insert.push(insert);
                        f.read.push(read);
                    }
                }
            }
            eprintln!(
                "redis-bench: depth {depth} round {}: load average before {round_load}, after {}",
                round + 1,
                load_average()
            );
        }
        table.push((depth, f));
    }
    drop(server);

    println!();
    println!(
        "| depth | operation | SET/GET | HMSET/HGETALL 1 key | HMSET/HGETALL -r N | ycsb | ycsb / SET,GET | ycsb / hash 1 key | ycsb / hash -r N |"
    );
    println!("|------:|-----------|--------:|--------------------:|-------------------:|-----:|---------------:|------------------:|-----------------:|");
    for (depth, f) in &table {
        for (op, plain, hash, keys, ours) in [
            ("write", &f.set, &f.hmset, &f.hmset_keys, &f.insert),
            ("read", &f.get, &f.hgetall, &f.hgetall_keys, &f.read),
        ] {
            let (p, h, k, y) = (
                median(plain.clone()),
                median(hash.clone()),
                median(keys.clone()),
                median(ours.clone()),
            );
            println!(
                "| {depth:>5} | {op:<9} | {p:.0} | {h:.0} | {k:.0} | {y:.0} | {:.3} | {:.3} | {:.3} |",
                y / p,
                y / h,
                y / k
            );
        }
    }
    println!(
        "\n{} requests per client and cell, {}-byte values, one connection; medians of {} round(s); {version}; {pinning}; load average before {load_before}, after {}",
        o.requests,
        o.size,
        o.rounds,
        load_average()
    );
    println!("redis-benchmark columns: -t set,get; HMSET key:ycsb field0 <value> and HGETALL key:ycsb (one key); the same over -r N random keys key:__rand_int__ (new hashes as ycsb creates, reads hit about 63 %)");
    println!("ycsb: writes are inserts (HMSET of one field, redis.index=none, pipelined to redis.pipeline=depth); reads are HGETALL, never pipelined, so read ratios at depth > 1 are for information only");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_unless_told_not_to() {
        let args =
            |line: &str| -> Vec<String> { line.split_whitespace().map(str::to_string).collect() };
        // (arguments, pin, rounds)
        for (line, pin, rounds) in [
            ("", true, 3),
            ("--no-pin", false, 3),
            ("--rounds 2 --no-pin", false, 2),
            ("--no-pin --rounds 4", false, 4),
        ] {
            let o = parse(&args(line)).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            assert_eq!((o.pin, o.rounds), (pin, rounds), "{line:?}");
        }
        assert!(parse(&args("--pin")).is_err());
    }
}
