//! `cargo xtask redis-bench`: the redis store against `redis-benchmark`.
//!
//! Starts a private `redis-server` on a free loopback port (no persistence),
//! pinned to one core while every client runs on another, then for each
//! pipeline depth runs, one connection each:
//! - `redis-benchmark -t set,get -c 1 -P <depth> -d <size> -r <N>` (SET/GET
//!   of one string value, what users quote, over N random keys so that the
//!   writes create keys as ycsb's inserts do);
//! - `redis-benchmark -c 1 -P <depth> HMSET key:ycsb field0 <size bytes>` and
//!   `... HGETALL key:ycsb`, and the same over `-r N` random keys: the
//!   commands of Java YCSB's schema, which the store sends (a record is a
//!   hash), so that like is compared with like;
//! - `ycsb -load -run -db redis` with one field of `<size>` bytes,
//!   `redis.index=none` (no scan index, so an insert is one HMSET),
//!   `redis.pipeline=<depth>`: the load phase's inserts are the SET-like
//!   operations, the run phase's reads (readproportion=1) the GET-like ones.
//!
//! Around every client it also takes the server's own time per command
//! (`CONFIG RESETSTAT`, then `INFO commandstats`) and the client's CPU time
//! (user + system, from `getrusage` of the waited child): with the wall
//! time per operation these say where a round trip goes (the server's
//! command, the client's work, and the rest: the kernel's loopback path and
//! the wake-ups of both processes).
//!
//! The store pipelines writes only (a read needs its answer before the
//! workload goes on), so reads are compared with redis-benchmark's
//! pipelined GET only for information. Clients alternate within each round;
//! the tables show medians and ratios. See docs/performance-engines.md.
//!
//! `--baseline REV` runs only ycsb, the current build and REV's alternated
//! (`baseline`), against the same pinned server.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::machine::{children_cpu_seconds, load_average};
use crate::peer::{self, median};

const USAGE: &str = "usage: cargo xtask redis-bench [--requests N] [--size BYTES] [--depths 1,8,32]
       [--rounds N] [--no-pin] [--baseline REV [--pairs N]]
  redis-server runs on one core and the clients (redis-benchmark, ycsb) on another;
  --no-pin leaves both to the scheduler.
  --baseline REV [--pairs N]  build REV's ycsb too (under target/baseline/) and run
                  the two ycsb builds alternated, N pairs (default 5), against the
                  same server: paired ratios current/baseline of the insert and read
                  rates and of the client's CPU per operation";

struct Options {
    /// Server and clients on separate cores.
    pin: bool,
    requests: u64,
    size: usize,
    depths: Vec<u64>,
    rounds: usize,
    baseline: crate::baseline::Request,
}

fn parse(args: &[String]) -> Result<Options> {
    let (baseline, args) = crate::baseline::Request::take(args)?;
    let mut o = Options {
        pin: true,
        requests: 100_000,
        size: 100,
        depths: vec![1, 8, 32],
        rounds: 3,
        baseline,
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
struct Server(peer::Server);

impl Server {
    /// Starts the server, on `core` alone when one is given.
    fn start(core: Option<usize>) -> Result<Server> {
        let args = |port: u16| {
            let port = port.to_string();
            ["--port", &port, "--bind", "127.0.0.1", "--save", ""]
                .into_iter()
                .chain(["--appendonly", "no", "--protected-mode", "yes"])
                .map(String::from)
                .collect()
        };
        let answers = |port: u16| command(port, b"PING\r\n").is_ok_and(|r| r.starts_with(b"+PONG"));
        peer::Server::start("redis-server", core, args, answers, "answer PING").map(Server)
    }

    /// The port it listens on.
    fn port(&self) -> u16 {
        self.0.port
    }

    /// Sends one inline command and returns its whole reply.
    fn command(&self, command: &[u8]) -> std::io::Result<Vec<u8>> {
        self::command(self.port(), command)
    }

    fn expect_ok(&self, command: &str) -> Result<()> {
        let reply = self
            .command(format!("{command}\r\n").as_bytes())
            .with_context(|| command.to_string())?;
        if !reply.starts_with(b"+OK") {
            bail!("{command} answered {}", String::from_utf8_lossy(&reply));
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        self.expect_ok("FLUSHALL")
    }

    /// The server's CPU time so far (every thread), in seconds, from
    /// `/proc/<pid>/task/*/schedstat` (nanoseconds on a CPU; no tick
    /// rounding).
    fn cpu_seconds(&self) -> f64 {
        let tasks = PathBuf::from(format!("/proc/{}/task", self.0.pid()));
        let Ok(entries) = std::fs::read_dir(&tasks) else {
            return f64::NAN;
        };
        entries
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("schedstat")).ok())
            .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
            .sum::<f64>()
            / 1e9
    }

    /// Zeroes the server's per-command statistics.
    fn reset_stats(&self) -> Result<()> {
        self.expect_ok("CONFIG RESETSTAT")
    }

    /// The server's own microseconds per call of each command since the
    /// last [`Server::reset_stats`], from `INFO commandstats` (the time
    /// inside the command, without reading, parsing or replying).
    fn micros_per_call(&self) -> Result<Vec<(String, f64)>> {
        let reply = self
            .command(b"INFO commandstats\r\n")
            .context("INFO commandstats")?;
        Ok(parse_commandstats(&String::from_utf8_lossy(&reply)))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.command(b"SHUTDOWN NOSAVE\r\n");
        if !matches!(self.0.child().try_wait(), Ok(Some(_))) {
            std::thread::sleep(Duration::from_millis(200));
        }
        // Then the process's own drop kills it if it is still there.
    }
}

/// Sends one inline command and returns its whole reply (a simple
/// string, an error or one bulk string).
fn command(port: u16, command: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(command)?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    while !complete_reply(&reply) {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&buf[..n]);
    }
    Ok(reply)
}

/// Whether `reply` holds a whole line reply, or a whole bulk string.
fn complete_reply(reply: &[u8]) -> bool {
    let Some(line_end) = reply.windows(2).position(|w| w == b"\r\n") else {
        return false;
    };
    if reply[0] != b'$' {
        return true;
    }
    match std::str::from_utf8(&reply[1..line_end])
        .ok()
        .and_then(|n| n.parse::<i64>().ok())
    {
        Some(len) if len >= 0 => reply.len() >= line_end + 2 + len as usize + 2,
        _ => true,
    }
}

/// `cmdstat_hmset:calls=3,usec=12,...` lines as (command, µs per call).
fn parse_commandstats(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|line| {
            let (name, fields) = line.trim().strip_prefix("cmdstat_")?.split_once(':')?;
            let field = |key: &str| -> Option<f64> {
                fields
                    .split(',')
                    .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))?
                    .parse()
                    .ok()
            };
            let (calls, usec) = (field("calls")?, field("usec")?);
            (calls > 0.0).then(|| (name.to_string(), usec / calls))
        })
        .collect()
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
    let mut command = crate::machine::pinned("redis-benchmark", core);
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
    let mut command = crate::machine::pinned(bin, core);
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
    let json = crate::read_export(export)?;
    let phase = |name: &str| -> Result<(u64, f64)> {
        let p = json
            .phase(name)
            .with_context(|| format!("{}: no {name} phase", export.display()))?;
        // Every operation must have succeeded for the figure to mean
        // anything: count the failed ones in the sections.
        let failed: u64 = p
            .sections
            .iter()
            .filter(|s| s.name.ends_with("-FAILED"))
            .map(|s| s.operations)
            .sum();
        if failed > 0 {
            bail!("ycsb {name} phase: {failed} failed operations");
        }
        Ok((p.operations, p.throughput))
    };
    let figures = [phase("load")?, phase("run")?];
    if figures.iter().any(|(ops, _)| *ops != o.requests) {
        bail!(
            "ycsb did {} inserts and {} reads, not {}",
            figures[0].0,
            figures[1].0,
            o.requests
        );
    }
    Ok(figures)
}

/// The clients compared, in the tables' order.
const CLIENTS: [&str; 4] = [
    "SET/GET -r N",
    "HMSET/HGETALL 1 key",
    "HMSET/HGETALL -r N",
    "ycsb",
];

/// One client's figures for one kind of operation, a value per round.
#[derive(Clone, Default)]
struct Cell {
    /// Operations per second.
    rate: Vec<f64>,
    /// The server's microseconds per call of the command.
    server_us: Vec<f64>,
    /// The server process's CPU microseconds per operation (the command,
    /// reading, parsing and replying, the kernel's work on its behalf).
    server_cpu_us: Vec<f64>,
    /// The client's CPU microseconds (user + system) per operation.
    client_cpu_us: Vec<f64>,
}

/// The cells of one depth: `[client][0 = write, 1 = read]`.
type Cells = [[Cell; 2]; 4];

/// What one client process did: for each operation kind it ran, the rate
/// and the server command that served it.
struct ClientRun<'a> {
    client: usize,
    /// (0 = write / 1 = read, rate, server command).
    ops: Vec<(usize, f64, &'a str)>,
}

/// Runs `client` between a statistics reset and an `INFO commandstats`,
/// and files its figures into `cells`.
fn measure<'a>(
    server: &Server,
    requests: u64,
    cells: &mut Cells,
    client: impl FnOnce() -> Result<ClientRun<'a>>,
) -> Result<()> {
    server.reset_stats()?;
    let cpu_before = children_cpu_seconds();
    let server_before = server.cpu_seconds();
    let run = client()?;
    let cpu = children_cpu_seconds() - cpu_before;
    let server_cpu = server.cpu_seconds() - server_before;
    let stats = server.micros_per_call()?;
    // Each operation kind of the process ran `requests` operations.
    let operations = (run.ops.len() as u64 * requests) as f64;
    for &(op, rate, command) in &run.ops {
        let cell = &mut cells[run.client][op];
        cell.rate.push(rate);
        cell.client_cpu_us.push(cpu * 1e6 / operations);
        cell.server_cpu_us.push(server_cpu * 1e6 / operations);
        let server_us = stats
            .iter()
            .find(|(name, _)| name == command)
            .map_or(f64::NAN, |s| s.1);
        cell.server_us.push(server_us);
    }
    Ok(())
}

/// Where the server and the clients run, and how to say so.
fn placement(o: &Options) -> (Option<crate::machine::Placement>, String) {
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
    (placement, pinning)
}

fn server_version() -> String {
    Command::new("redis-server")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Runs the comparison and prints the tables.
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let o = parse(args)?;
    if let Some(rev) = &o.baseline.rev {
        return compare(root, rev, &o);
    }
    let bin = crate::peer::build_ycsb(root, "redis-bench")?;
    let target = crate::target::target_dir(root);
    let work = target.join("redis-bench");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let (placement, pinning) = placement(&o);
    let client_core = placement.map(|p| p.client);
    let server = Server::start(placement.map(|p| p.server))?;
    let version = server_version();
    let load_before = load_average();
    eprintln!(
        "redis-bench: {version}; port {}; {pinning}; {} requests of {} bytes, depths {:?}, {} round(s); load average {load_before}",
        server.port(), o.requests, o.size, o.depths, o.rounds
    );
    let value = "x".repeat(o.size);
    let range = o.requests.to_string();
    let strings = |args: &[&str]| -> Vec<String> { args.iter().map(|a| a.to_string()).collect() };
    let hmset = strings(&["HMSET", "key:ycsb", "field0", &value]);
    let hgetall = strings(&["HGETALL", "key:ycsb"]);
    // The same commands over `requests` random keys, as ycsb's inserts
    // create one new hash per record: creating keys costs the server more
    // than overwriting one. The reads then hit about 63 % of the time
    // (1 − 1/e of the keys were written), ycsb's always.
    let hmset_keys = strings(&["-r", &range, "HMSET", "key:__rand_int__", "field0", &value]);
    let hgetall_keys = strings(&["-r", &range, "HGETALL", "key:__rand_int__"]);
    let set_get = strings(&["-r", &range, "-t", "set,get", "-d", &o.size.to_string()]);
    let mut table = Vec::new();
    for &depth in &o.depths {
        let mut cells = Cells::default();
        let bench =
            |extra: &[String]| redis_benchmark(server.port(), depth, &o, client_core, extra);
        for round in 0..o.rounds {
            let mut order = ["set,get", "hash", "ycsb"];
            order.rotate_left(round % 3);
            let round_load = load_average();
            for client in order {
                eprintln!("redis-bench: depth {depth} round {} {client}", round + 1);
                server.flush()?;
                match client {
                    "set,get" => measure(&server, o.requests, &mut cells, || {
                        let r = bench(&set_get)?;
                        let [set, get] = r[..] else {
                            bail!("redis-benchmark -t set,get printed {} rows", r.len());
                        };
                        Ok(ClientRun {
                            client: 0,
                            ops: vec![(0, set, "set"), (1, get, "get")],
                        })
                    })?,
                    "hash" => {
                        for (client, op, args, command) in [
                            (1, 0, &hmset, "hmset"),
                            (1, 1, &hgetall, "hgetall"),
                            (2, 0, &hmset_keys, "hmset"),
                            (2, 1, &hgetall_keys, "hgetall"),
                        ] {
                            if client == 2 && op == 0 {
                                server.flush()?;
                            }
                            measure(&server, o.requests, &mut cells, || {
                                Ok(ClientRun {
                                    client,
                                    ops: vec![(op, bench(args)?[0], command)],
                                })
                            })?;
                        }
                    }
                    _ => measure(&server, o.requests, &mut cells, || {
                        let export = work.join(format!("ycsb-{depth}-{round}.json"));
                        let [(_, insert), (_, read)] =
                            ycsb(&bin, &export, server.port(), depth, &o, client_core)?;
                        Ok(ClientRun {
                            client: 3,
                            ops: vec![(0, insert, "hmset"), (1, read, "hgetall")],
                        })
                    })?,
                }
            }
            eprintln!(
                "redis-bench: depth {depth} round {}: load average before {round_load}, after {}",
                round + 1,
                load_average()
            );
        }
        table.push((depth, cells));
    }
    drop(server);
    print_tables(&table);
    println!(
        "\n{} requests per client and cell, {}-byte values, one connection; medians of {} round(s); {version}; {pinning}; load average before {load_before}, after {}",
        o.requests,
        o.size,
        o.rounds,
        load_average()
    );
    println!("redis-benchmark columns: -r N -t set,get (new keys, as ycsb's inserts); HMSET key:ycsb field0 <value> and HGETALL key:ycsb (one key); the same over -r N random keys key:__rand_int__ (new hashes as ycsb creates, reads hit about 63 %)");
    println!("ycsb: writes are inserts (HMSET of one field, redis.index=none, pipelined to redis.pipeline=depth); reads are HGETALL, never pipelined, so read ratios at depth > 1 are for information only");
    println!("per operation: wall = 1/rate; server command = the command's own time (INFO commandstats usec/calls); server CPU = redis-server's time on a CPU (/proc schedstat) over the client's operations; client CPU = user + system time of the client process over its operations (a process that ran writes and reads, ycsb and -t set,get, is split evenly between them; not shown for ycsb at depth > 1, whose writes are pipelined and reads not); the last column adds up a serial round trip, so it means something at depth 1 only (pipelined, client and server work at the same time and it can go negative)");
    Ok(())
}

fn print_tables(table: &[(u64, Cells)]) {
    println!();
    println!(
        "| depth | operation | SET/GET -r N | HMSET/HGETALL 1 key | HMSET/HGETALL -r N | ycsb | ycsb / SET,GET | ycsb / hash 1 key | ycsb / hash -r N |"
    );
    println!("|------:|-----------|-------------:|--------------------:|-------------------:|-----:|---------------:|------------------:|-----------------:|");
    for (depth, cells) in table {
        for (op, name) in ["write", "read"].iter().enumerate() {
            let rate = |client: usize| median(cells[client][op].rate.clone());
            let ours = rate(3);
            println!(
                "| {depth:>5} | {name:<9} | {:.0} | {:.0} | {:.0} | {ours:.0} | {:.3} | {:.3} | {:.3} |",
                rate(0),
                rate(1),
                rate(2),
                ours / rate(0),
                ours / rate(1),
                ours / rate(2),
            );
        }
    }
    println!();
    println!("Per operation, µs (medians)");
    println!();
    println!("| depth | operation | client | wall | server command | server CPU | client CPU | neither on a CPU (wall − server CPU − client CPU) |");
    println!("|------:|-----------|--------|-----:|-------:|-------:|-----------:|-----:|");
    for (depth, cells) in table {
        for (op, name) in ["write", "read"].iter().enumerate() {
            for (client, label) in CLIENTS.iter().enumerate() {
                let cell = &cells[client][op];
                let wall = 1e6 / median(cell.rate.clone());
                let command = median(cell.server_us.clone());
                // ycsb's one process pipelines its writes and not its
                // reads: an even split of its CPU time is only fair when
                // both are round trips.
                if client == 3 && *depth > 1 {
                    println!(
                        "| {depth:>5} | {name:<9} | {label} | {wall:.2} | {command:.2} | - | - | - |"
                    );
                    continue;
                }
                let server = median(cell.server_cpu_us.clone());
                let client = median(cell.client_cpu_us.clone());
                println!(
                    "| {depth:>5} | {name:<9} | {label} | {wall:.2} | {command:.2} | {server:.2} | {client:.2} | {:.2} |",
                    wall - server - client
                );
            }
        }
    }
}

/// `--baseline REV`: ycsb alone, the baseline's build and the current one
/// alternated pair by pair at each depth, against one pinned server.
fn compare(root: &Path, rev: &str, o: &Options) -> Result<()> {
    use crate::baseline::{self, Side};
    let commit = baseline::resolve(root, rev)?;
    crate::peer::build_ycsb(root, "redis-bench")?;
    let target = crate::target::target_dir(root);
    let base = baseline::prepare(root, &target, &commit, |source, out| {
        baseline::cargo_build(source, out, &["-p", "ycsb-cli", "--bin", "ycsb"])
    })?;
    let work = target.join("redis-bench-baseline");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let (placement, pinning) = placement(o);
    let client_core = placement.map(|p| p.client);
    let server = Server::start(placement.map(|p| p.server))?;
    println!(
        "redis-bench: baseline {rev} = {commit}; {}; {pinning}; {} requests of {} bytes, depths {:?}",
        server_version(),
        o.requests,
        o.size,
        o.depths
    );
    let pairs = baseline::alternate(o.baseline.pairs, o.depths.len(), |side, step| {
        let depth = o.depths[step];
        let bin = match side {
            Side::Baseline => base.release().join("ycsb"),
            Side::Current => target.join("release").join("ycsb"),
        };
        server.flush()?;
        let export = work.join(format!("ycsb-{depth}-{side:?}.json"));
        let cpu_before = children_cpu_seconds();
        let [(_, insert), (_, read)] = ycsb(&bin, &export, server.port(), depth, o, client_core)?;
        let cpu_us = (children_cpu_seconds() - cpu_before) * 1e6 / (2 * o.requests) as f64;
        eprintln!(
            "  {side:?} depth {depth}: insert {insert:.0} ops/s, read {read:.0} ops/s, {cpu_us:.2} client CPU µs/op"
        );
        Ok(vec![
            (format!("depth {depth}: insert ops/s"), insert),
            (format!("depth {depth}: read ops/s"), read),
            (format!("depth {depth}: client CPU µs/op"), cpu_us),
        ])
    })?;
    drop(server);
    pairs.print(base.short(), o.baseline.pairs);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_private_server_answers_flushes_and_is_shut_down_when_dropped() {
        let server = Server::start(None).unwrap();
        let port = server.port();
        assert!(command(port, b"PING\r\n").unwrap().starts_with(b"+PONG"));
        server.flush().unwrap();
        drop(server);
        assert!(TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err());
    }

    #[test]
    fn pins_unless_told_not_to() {
        let args =
            |line: &str| -> Vec<String> { line.split_whitespace().map(str::to_string).collect() };
        // (arguments, pin, rounds, baseline)
        for (line, pin, rounds, baseline) in [
            ("", true, 3, None),
            ("--no-pin", false, 3, None),
            ("--rounds 2 --no-pin", false, 2, None),
            ("--no-pin --rounds 4", false, 4, None),
            ("--baseline HEAD~1 --pairs 3", true, 3, Some("HEAD~1")),
        ] {
            let o = parse(&args(line)).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            assert_eq!(
                (o.pin, o.rounds, o.baseline.rev.as_deref()),
                (pin, rounds, baseline),
                "{line:?}"
            );
        }
        assert!(parse(&args("--pin")).is_err());
        assert!(parse(&args("--pairs 3")).is_err());
    }

    #[test]
    fn reads_the_servers_time_per_command() {
        let info = "$120\r\n# Commandstats\r\ncmdstat_hmset:calls=4,usec=18,usec_per_call=4.50,rejected_calls=0,failed_calls=0\r\ncmdstat_get:calls=0,usec=0\r\ncmdstat_config:calls=2,usec=30,usec_per_call=15.00\r\n\r\n";
        assert_eq!(
            parse_commandstats(info),
            [("hmset".to_string(), 4.5), ("config".to_string(), 15.0)]
        );
    }

    #[test]
    fn knows_when_a_reply_is_whole() {
        // (reply so far, complete)
        for (reply, whole) in [
            (&b""[..], false),
            (b"+OK", false),
            (b"+OK\r\n", true),
            (b"-ERR x\r\n", true),
            (b"$5\r\nab", false),
            (b"$5\r\nabcde", false),
            (b"$5\r\nabcde\r\n", true),
            (b"$-1\r\n", true),
        ] {
            assert_eq!(
                complete_reply(reply),
                whole,
                "{:?}",
                String::from_utf8_lossy(reply)
            );
        }
    }
}
