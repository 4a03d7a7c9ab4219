//! `cargo xtask engine-bench`: what the rocksdb and leveldb bindings cost.
//!
//! For workloads A and C on both engines, the same load and run phases go
//! through three clients against the same library and engine options:
//! `ycsb` (release build, `-P <engine>/<engine>.properties`), the binding
//! crate's direct-engine loop (`examples/direct_loop.rs`: the same keys,
//! request distribution, op mix and value size, nothing else), and, when
//! `YCSB_CPP_BIN` names it, YCSB-cpp built against the same library. The
//! clients take turns within each round so that a busy machine slows them
//! alike; the table shows each client's median over the rounds and the
//! ratios ycsb/direct (target ≥ 0.95) and ycsb/YCSB-cpp (target ≥ 1.0).
//! See docs/performance-engines.md.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

const USAGE: &str = "usage: cargo xtask engine-bench [--records N] [--operations N] [--threads N]
       [--rounds N] [--engines rocksdb,leveldb] [--workloads a,c]
  env YCSB_CPP_BIN=/path/to/YCSB-cpp/ycsb adds YCSB-cpp (built against the same library)";

struct Options {
    records: u64,
    operations: u64,
    threads: u64,
    rounds: usize,
    engines: Vec<String>,
    workloads: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options {
        records: 200_000,
        operations: 200_000,
        threads: 1,
        rounds: 3,
        engines: vec!["rocksdb".into(), "leveldb".into()],
        workloads: vec!["a".into(), "c".into()],
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .with_context(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = || -> Result<u64> {
            value
                .parse()
                .with_context(|| format!("{flag} {value}: expected a whole number"))
        };
        let list = || value.split(',').map(str::to_string).collect::<Vec<_>>();
        match flag.as_str() {
            "--records" => o.records = number()?,
            "--operations" => o.operations = number()?,
            "--threads" => o.threads = number()?,
            "--rounds" => o.rounds = number()? as usize,
            "--engines" => o.engines = list(),
            "--workloads" => o.workloads = list(),
            _ => bail!("engine-bench: unknown option {flag}\n{USAGE}"),
        }
    }
    if o.records == 0 || o.threads == 0 || o.rounds == 0 {
        bail!("engine-bench: --records, --threads and --rounds must be at least 1");
    }
    for e in &o.engines {
        if e != "rocksdb" && e != "leveldb" {
            bail!("engine-bench: --engines {e}: expected rocksdb or leveldb");
        }
    }
    for w in &o.workloads {
        if !matches!(w.as_str(), "a" | "b" | "c") {
            bail!("engine-bench: --workloads {w}: expected a, b or c (read/update mixes)");
        }
    }
    Ok(o)
}

/// One client's figures for one phase.
#[derive(Clone, Copy, Debug)]
struct Phase {
    operations: u64,
    throughput: f64,
}

/// One client's load and run phases.
#[derive(Clone, Copy, Debug)]
struct Cell {
    load: Phase,
    run: Phase,
    /// CPU time (user + system, all threads, engine background work
    /// included) of the whole client process.
    cpu_seconds: f64,
}

impl Cell {
    /// Operations of both phases per CPU-second of the process: on a
    /// machine whose load average exceeds its cores, the rate a client
    /// reaches when nothing competes for its core.
    fn ops_per_cpu_second(&self) -> f64 {
        (self.load.operations + self.run.operations) as f64 / self.cpu_seconds
    }
}

/// CPU seconds used so far by the children this process has waited for.
fn children_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn check(status: std::process::ExitStatus, what: &str, stderr: &[u8]) -> Result<()> {
    if !status.success() {
        bail!(
            "{what} failed with {status}:\n{}",
            String::from_utf8_lossy(stderr)
        );
    }
    Ok(())
}

/// The read proportion of a workload file (the rest are updates).
fn read_proportion(root: &Path, workload: &str) -> Result<f64> {
    let path = root.join("workloads").join(format!("workload{workload}"));
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    for line in text.lines() {
        if let Some(v) = line.trim().strip_prefix("readproportion=") {
            return v
                .trim()
                .parse()
                .with_context(|| format!("{}: readproportion={v}", path.display()));
        }
    }
    bail!("{}: no readproportion", path.display())
}

fn run_ycsb(
    ycsb: &Path,
    root: &Path,
    engine: &str,
    workload: &str,
    dir: &Path,
    o: &Options,
) -> Result<Cell> {
    let export = dir.with_extension("json");
    let out = Command::new(ycsb)
        .current_dir(root)
        .args(["-load", "-run", "-db", engine, "-P"])
        .arg(format!("workloads/workload{workload}"))
        .arg("-P")
        .arg(format!("{engine}/{engine}.properties"))
        .arg("-p")
        .arg(format!("{engine}.dbname={}", dir.display()))
        .args(["-p", &format!("recordcount={}", o.records)])
        .args(["-p", &format!("operationcount={}", o.operations)])
        .args(["-threads", &o.threads.to_string()])
        .args(["-p", "exporter=json", "-p"])
        .arg(format!("exportfile={}", export.display()))
        .stdout(Stdio::null())
        .output()
        .with_context(|| format!("starting {}", ycsb.display()))?;
    check(out.status, "ycsb", &out.stderr)?;
    let text = std::fs::read_to_string(&export)
        .with_context(|| format!("reading {}", export.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", export.display()))?;
    let phase = |name: &str| -> Result<Phase> {
        let p = json["phases"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["phase"] == name))
            .with_context(|| format!("{}: no {name} phase", export.display()))?;
        Ok(Phase {
            operations: p["operations"].as_u64().unwrap_or(0),
            throughput: p["throughput"].as_f64().unwrap_or(0.0),
        })
    };
    Ok(Cell {
        load: phase("load")?,
        run: phase("run")?,
        cpu_seconds: 0.0,
    })
}

fn run_direct(bin: &Path, dir: &Path, read: f64, o: &Options) -> Result<Cell> {
    let out = Command::new(bin)
        .arg(format!("dir={}", dir.display()))
        .arg(format!("recordcount={}", o.records))
        .arg(format!("operationcount={}", o.operations))
        .arg(format!("threadcount={}", o.threads))
        .arg(format!("readproportion={read}"))
        .output()
        .with_context(|| format!("starting {}", bin.display()))?;
    check(out.status, "direct loop", &out.stderr)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let phase = |name: &str| -> Result<Phase> {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("phase={name} ")))
            .with_context(|| format!("direct loop printed no {name} phase:\n{text}"))?;
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                .unwrap_or("")
        };
        if field("errors") != "0" || field("notfound") != "0" {
            bail!("direct loop {name}: failed operations: {line}");
        }
        Ok(Phase {
            operations: field("operations").parse().unwrap_or(0),
            throughput: field("throughput").parse().unwrap_or(0.0),
        })
    };
    Ok(Cell {
        load: phase("load")?,
        run: phase("run")?,
        cpu_seconds: 0.0,
    })
}

fn run_cpp(
    bin: &Path,
    root: &Path,
    engine: &str,
    workload: &str,
    dir: &Path,
    o: &Options,
) -> Result<Cell> {
    let out = Command::new(bin)
        .current_dir(root)
        .args(["-load", "-run", "-db", engine, "-P"])
        .arg(format!("workloads/workload{workload}"))
        .arg("-P")
        .arg(format!("{engine}/{engine}.properties"))
        .arg("-p")
        .arg(format!("{engine}.dbname={}", dir.display()))
        .args(["-p", &format!("recordcount={}", o.records)])
        .args(["-p", &format!("operationcount={}", o.operations)])
        .args(["-p", &format!("threadcount={}", o.threads)])
        .arg("-s")
        .output()
        .with_context(|| format!("starting {}", bin.display()))?;
    check(out.status, "YCSB-cpp", &out.stderr)?;
    // YCSB-cpp prints "Load operations(ops): N" and "Load
    // throughput(ops/sec): X" (and the same for Run) on stdout.
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |prefix: &str| -> Result<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|v| v.trim().parse().ok())
            .with_context(|| format!("YCSB-cpp printed no '{prefix}':\n{text}"))
    };
    let phase = |name: &str| -> Result<Phase> {
        Ok(Phase {
            operations: value(&format!("{name} operations(ops):"))? as u64,
            throughput: value(&format!("{name} throughput(ops/sec):"))?,
        })
    };
    Ok(Cell {
        load: phase("Load")?,
        run: phase("Run")?,
        cpu_seconds: 0.0,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The median over the rounds of `ours[i] / theirs[i]`: the clients of a
/// round run back to back, so each round's ratio compares them under
/// nearly the same machine load, which medians of each client taken
/// separately do not.
fn paired_ratio(ours: &[Cell], theirs: &[Cell], value: impl Fn(&Cell) -> f64) -> f64 {
    median(
        ours.iter()
            .zip(theirs)
            .map(|(o, t)| value(o) / value(t))
            .collect(),
    )
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Runs the comparison and prints the table.
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let o = parse(args)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("engine-bench: building ycsb and the direct loops (release)");
    crate::run(Command::new(&cargo).current_dir(root).args([
        "build",
        "--release",
        "-p",
        "ycsb-cli",
        "-p",
        "ycsb-rocksdb",
        "--example",
        "rocksdb-direct-loop",
        "-p",
        "ycsb-leveldb",
        "--example",
        "leveldb-direct-loop",
        "--bin",
        "ycsb",
    ]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let release = target.join("release");
    let ycsb = release.join("ycsb");
    let cpp = std::env::var_os("YCSB_CPP_BIN").map(PathBuf::from);
    if let Some(cpp) = &cpp {
        if !cpp.is_file() {
            bail!("YCSB_CPP_BIN={}: no such file", cpp.display());
        }
    }
    let work = target.join("engine-bench");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let load_before = load_average();
    eprintln!(
        "engine-bench: {} records, {} operations, {} thread(s), {} round(s); load average {load_before}",
        o.records, o.operations, o.threads, o.rounds
    );

    struct Row {
        engine: String,
        workload: String,
        ycsb: Vec<Cell>,
        direct: Vec<Cell>,
        cpp: Vec<Cell>,
    }
    let mut rows = Vec::new();
    for engine in &o.engines {
        let direct_bin = release
            .join("examples")
            .join(format!("{engine}-direct-loop"));
        for workload in &o.workloads {
            let read = read_proportion(root, workload)?;
            let mut row = Row {
                engine: engine.clone(),
                workload: workload.clone(),
                ycsb: Vec::new(),
                direct: Vec::new(),
                cpp: Vec::new(),
            };
            for round in 0..o.rounds {
                // Alternate who goes first, so that neither always meets a
                // freshly written page cache or a busier machine.
                let mut order = vec!["direct", "ycsb"];
                if cpp.is_some() {
                    order.push("cpp");
                }
                let first = round % order.len();
                order.rotate_left(first);
                for client in order {
                    let dir = work.join(format!("{engine}-{workload}-{client}-{round}"));
                    eprintln!(
                        "engine-bench: {engine} workload{workload} round {} {client}",
                        round + 1
                    );
                    let cpu_before = children_cpu_seconds();
                    let mut cell = match client {
                        "direct" => run_direct(&direct_bin, &dir, read, &o)?,
                        "ycsb" => run_ycsb(&ycsb, root, engine, workload, &dir, &o)?,
                        _ => match &cpp {
                            Some(bin) => run_cpp(bin, root, engine, workload, &dir, &o)?,
                            None => continue,
                        },
                    };
                    // The client was waited for, so its CPU time (and only
                    // its: clients run one at a time) is in the delta.
                    cell.cpu_seconds = children_cpu_seconds() - cpu_before;
                    let _ = std::fs::remove_dir_all(&dir);
                    match client {
                        "direct" => row.direct.push(cell),
                        "ycsb" => row.ycsb.push(cell),
                        _ => row.cpp.push(cell),
                    }
                }
            }
            rows.push(row);
        }
    }

    println!();
    println!(
        "| engine  | workload  | phase | ops      | direct ops/s | ycsb ops/s | ycsb/direct | paired | YCSB-cpp ops/s | ycsb/YCSB-cpp |"
    );
    println!(
        "|---------|-----------|-------|----------|-------------:|-----------:|------------:|-------:|---------------:|--------------:|"
    );
    let mut mismatched = false;
    for r in &rows {
        for (phase, pick) in [
            ("load", (|c: &Cell| c.load) as fn(&Cell) -> Phase),
            ("run", |c: &Cell| c.run),
        ] {
            let med = |cells: &[Cell]| median(cells.iter().map(|c| pick(c).throughput).collect());
            let ops: Vec<u64> = r
                .ycsb
                .iter()
                .chain(&r.direct)
                .chain(&r.cpp)
                .map(|c| pick(c).operations)
                .collect();
            let same = ops.windows(2).all(|w| w[0] == w[1]);
            mismatched |= !same;
            let (d, y) = (med(&r.direct), med(&r.ycsb));
            let paired = paired_ratio(&r.ycsb, &r.direct, |c| pick(c).throughput);
            let (c, cr) = if r.cpp.is_empty() {
                ("-".to_string(), "-".to_string())
            } else {
                let c = med(&r.cpp);
                (format!("{c:.0}"), format!("{:.3}", y / c))
            };
            println!(
                "| {:<7} | {:<9} | {:<5} | {:<8} | {:>12.0} | {:>10.0} | {:>11.3} | {:>6.3} | {:>14} | {:>13} |",
                r.engine,
                format!("workload{}", r.workload),
                phase,
                if same {
                    ops.first().copied().unwrap_or(0).to_string()
                } else {
                    "DIFFER".into()
                },
                d,
                y,
                y / d,
                paired,
                c,
                cr
            );
        }
    }
    println!();
    println!("Whole process (open, load, run, close), operations per CPU-second:");
    println!();
    println!(
        "| engine  | workload  | direct | ycsb | ycsb/direct | paired | YCSB-cpp | ycsb/YCSB-cpp |"
    );
    println!(
        "|---------|-----------|-------:|-----:|------------:|-------:|---------:|--------------:|"
    );
    for r in &rows {
        let med = |cells: &[Cell]| median(cells.iter().map(Cell::ops_per_cpu_second).collect());
        let (d, y) = (med(&r.direct), med(&r.ycsb));
        let (c, cr) = if r.cpp.is_empty() {
            ("-".to_string(), "-".to_string())
        } else {
            let c = med(&r.cpp);
            (format!("{c:.0}"), format!("{:.3}", y / c))
        };
        let paired = paired_ratio(&r.ycsb, &r.direct, Cell::ops_per_cpu_second);
        println!(
            "| {:<7} | {:<9} | {d:.0} | {y:.0} | {:.3} | {paired:.3} | {c} | {cr} |",
            r.engine,
            format!("workload{}", r.workload),
            y / d
        );
    }
    println!(
        "\npaired: the median over the rounds of each round's ycsb/direct ratio (the two ran back to back)"
    );
    println!(
        "\nmedians of {} round(s), {} thread(s); load average before {load_before}, after {}",
        o.rounds,
        o.threads,
        load_average()
    );
    if cpp.is_none() {
        println!("YCSB-cpp: skipped (set YCSB_CPP_BIN to its ycsb binary)");
    }
    if mismatched {
        bail!("the clients did not perform the same number of operations (DIFFER rows)");
    }
    Ok(())
}
