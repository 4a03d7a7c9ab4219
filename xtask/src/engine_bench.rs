//! `cargo xtask engine-bench`: what the embedded engines' bindings cost.
//!
//! For workloads A and C on each engine (rocksdb and leveldb by default;
//! `--engines` takes any embedded store whose crate `ycsb-<engine>` has a
//! `<engine>-direct-loop` example: wiredtiger, lmdb, sqlite, fjall and redb too), the same load and run phases go
//! through three clients against the same library and engine options:
//! `ycsb` (release build, `-P <engine>/<engine>.properties`), the binding
//! crate's direct-engine loop (`examples/direct_loop.rs`: the very keys
//! ycsb asks for, both run with `seed=1`, the same op mix and value size,
//! nothing else), and, when
//! `YCSB_CPP_BIN` names it, YCSB-cpp built against the same library. The
//! clients take turns within each round so that a busy machine slows them
//! alike; the table shows each client's median over the rounds and the
//! ratios ycsb/direct (target ≥ 0.95) and ycsb/YCSB-cpp (target ≥ 1.0).
//!
//! With `--instructions`, each engine × workload runs the direct loop and
//! ycsb once (or `--rounds` times) under `valgrind --tool=cachegrind
//! --cache-sim=no`, with the same arguments as the timed runs, and the
//! table gives the instructions each whole process executed, per operation
//! (load records + run operations) too, and the work ratio direct/ycsb
//! (≥ 0.95: ycsb does at most about 5 % more work than the loop). Unlike
//! throughput, these counts hardly depend on the machine's load, so they can
//! show a 5 % difference on a busy machine. The cachegrind files stay in
//! `<target>/engine-bench/` for `cg_annotate`.
//!
//! With `--same-files`, ycsb loads each engine × workload's records once;
//! the direct loop compacts that database; then every round, each client
//! runs only the run phase, each on its own copy of the settled files.
//! Both then start from the very same engine state, which a fresh load
//! does not give (when the background flushes and compactions happen
//! differs from process to process, and with it what reads touch and what
//! work overlaps the run: whole-process CPU time moved by 20 % between
//! runs of the same client).
//! The direct loop makes new values for every insert and updated field
//! (`values=fresh`), as the workload asks of any YCSB client, so that the
//! ratio is the harness's cost alone (the harness tax); with
//! `--pooled-values` it cuts them from a pool made beforehand, as db_bench
//! does, and the ratio then counts making the workload's values as ycsb's
//! cost too.
//! With `--baseline <rev>`, each client runs with another revision's build
//! and the current one alternated (`baseline`).
//! With `--control`, every round also runs the direct loop a second time
//! (an A/A control): the paired ratio of the loop to itself shows how far
//! the machine alone moves a paired median, the resolution against which
//! ycsb/direct is read.
//!
//! See docs/performance-engines.md.

// Built without the `engines` feature, xtask hands `engine-bench` to a
// build with it (main.rs, `with_engines`), so most of this is unused there.
#![cfg_attr(not(feature = "engines"), allow(dead_code))]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

const USAGE: &str = "usage: cargo xtask engine-bench [--records N] [--operations N] [--threads N]
       [--rounds N] [--engines rocksdb,leveldb,wiredtiger,lmdb,sqlite,fjall,redb] [--workloads a,c]
       [--instructions | --same-files] [--pooled-values] [--control]
  defaults: 200000 records, 200000 operations, 1 thread, 3 rounds
  --same-files    load once, compact, then time only the run phase of each client,
                  each round on a fresh copy of the same files (YCSB-cpp not run)
  --instructions  count the instructions of each whole process under valgrind's
                  cachegrind instead of timing it (needs valgrind: apt-get install
                  valgrind); defaults then 20000 records, 60000 operations, 1 round
                  (--rounds N runs each client N times and prints the spread)
  --baseline REV [--pairs N]  build REV too (under target/baseline/) and run each
                  client (direct loop, ycsb) of each engine × workload with both builds
                  alternated, N pairs (default 5): both medians, the paired ratio
                  current/baseline and its range (with --instructions: instructions
                  per operation)
  --pooled-values the direct loop cuts its values from a pool made beforehand, as
                  db_bench does, instead of making new ones for every insert and updated
                  field as a YCSB load and update must (the default, --fresh-values):
                  the ratio then counts the workload's values as ycsb's cost; needed
                  with a --baseline older than e9e5fe1, whose loop makes no fresh values
  --control       run the direct loop twice every round and print the paired ratio of
                  the loop to itself (an A/A control: what the machine alone moves a
                  paired median by); not with --instructions or --baseline
  --engines       embedded stores with a direct loop (default rocksdb,leveldb,wiredtiger)
  env YCSB_CPP_BIN=/path/to/YCSB-cpp/ycsb adds YCSB-cpp (built against the same library;
      timed runs of rocksdb, leveldb, wiredtiger, lmdb and sqlite)";

/// The seed of both ycsb and the direct loop (which draws from ycsb's
/// streams): both ask the engine for the same keys in the same order.
const SEED: u64 = 1;

/// The engines YCSB-cpp has bindings for, among those with direct loops.
const YCSB_CPP_ENGINES: &[&str] = &["rocksdb", "leveldb", "wiredtiger", "lmdb", "sqlite"];

/// WiredTiger's configuration from the environment, which it reads at
/// every `wiredtiger_open`: YCSB-cpp's binding loads no extension, so
/// without this its tables cannot use the shipped property file's snappy
/// (Debian builds it as the extension `libwiredtiger_snappy.so`, which our
/// binding loads). Other engines ignore the variable.
const CPP_WIREDTIGER_CONFIG: (&str, &str) =
    ("WIREDTIGER_CONFIG", "extensions=[libwiredtiger_snappy.so]");

/// The property naming `engine`'s data directory, from its descriptor.
#[cfg(feature = "engines")]
fn dir_property(engine: &str) -> Result<&'static str> {
    let store = ycsb_stores::find(engine).map_err(|e| anyhow::anyhow!("engine-bench: {e}"))?;
    match store.data_dir {
        Some(dir) => Ok(dir.name),
        None => bail!(
            "engine-bench: --engines {engine}: not an embedded engine (embedded: {})",
            ycsb_stores::STORES
                .iter()
                .filter(|s| s.data_dir.is_some())
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Without the descriptors (see `with_engines` in main.rs): never called,
/// since `engine-bench` runs in a build with the `engines` feature.
#[cfg(not(feature = "engines"))]
fn dir_property(engine: &str) -> Result<&'static str> {
    bail!("engine-bench: --engines {engine}: this xtask was built without the engines feature")
}

/// The engines benched by default (each has a direct loop,
/// `<engine>-direct-loop`, an example of the crate `ycsb-<engine>`, and a
/// shipped `<engine>/<engine>.properties`).
const ENGINES: &[&str] = &["rocksdb", "leveldb", "wiredtiger"];

#[derive(Debug)]
struct Options {
    baseline: crate::baseline::Request,
    records: u64,
    operations: u64,
    threads: u64,
    rounds: usize,
    engines: Vec<String>,
    workloads: Vec<String>,
    /// Count instructions under cachegrind instead of timing.
    instructions: bool,
    /// Time only run phases, on copies of one loaded, compacted database.
    same_files: bool,
    /// The direct loop makes fresh values (`values=fresh`, the default)
    /// rather than cutting them from a pool (`--pooled-values`).
    fresh_values: bool,
    /// Run the direct loop a second time every round (`--control`).
    control: bool,
}

fn parse(args: &[String]) -> Result<Options> {
    let (baseline, args) = crate::baseline::Request::take(args)?;
    let args = &args[..];
    let mut o = Options {
        baseline,
        records: 0,
        operations: 0,
        threads: 1,
        rounds: 0,
        engines: ENGINES.iter().map(|e| e.to_string()).collect(),
        workloads: vec!["a".into(), "c".into()],
        instructions: false,
        same_files: false,
        fresh_values: true,
        control: false,
    };
    // The sizes default differently with and without --instructions,
    // which may come after them.
    let (mut records, mut operations, mut rounds) = (None, None, None);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--instructions" {
            o.instructions = true;
            continue;
        }
        if flag == "--same-files" {
            o.same_files = true;
            continue;
        }
        if flag == "--control" {
            o.control = true;
            continue;
        }
        if flag == "--fresh-values" || flag == "--pooled-values" {
            o.fresh_values = flag == "--fresh-values";
            continue;
        }
        const VALUED: [&str; 6] = [
            "--records",
            "--operations",
            "--threads",
            "--rounds",
            "--engines",
            "--workloads",
        ];
        if !VALUED.contains(&flag.as_str()) {
            bail!("engine-bench: unknown option {flag}\n{USAGE}");
        }
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
            "--records" => records = Some(number()?),
            "--operations" => operations = Some(number()?),
            "--threads" => o.threads = number()?,
            "--rounds" => rounds = Some(number()? as usize),
            "--engines" => o.engines = list(),
            "--workloads" => o.workloads = list(),
            _ => bail!("engine-bench: unknown option {flag}\n{USAGE}"),
        }
    }
    let (default_records, default_operations, default_rounds) = if o.instructions {
        (20_000, 60_000, 1)
    } else {
        (200_000, 200_000, 3)
    };
    if o.instructions && o.same_files {
        bail!("engine-bench: --instructions and --same-files exclude each other");
    }
    // Instruction counts hardly move between runs, and a baseline's pairs
    // are their own comparison: an A/A control adds nothing to either.
    if o.control && o.instructions {
        bail!("engine-bench: --control times the direct loop twice; --instructions counts instead of timing");
    }
    if o.control && o.baseline.rev.is_some() {
        bail!("engine-bench: --control and --baseline exclude each other");
    }
    if o.same_files && o.baseline.rev.is_some() {
        bail!("engine-bench: --same-files and --baseline exclude each other");
    }
    o.records = records.unwrap_or(default_records);
    o.operations = operations.unwrap_or(default_operations);
    o.rounds = rounds.unwrap_or(default_rounds);
    if o.records == 0 || o.threads == 0 || o.rounds == 0 {
        bail!("engine-bench: --records, --threads and --rounds must be at least 1");
    }
    for e in &o.engines {
        dir_property(e)?;
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

impl Phase {
    /// A phase the client did not run (`--same-files` has no load).
    const NONE: Phase = Phase {
        operations: 0,
        throughput: 0.0,
    };
}

/// One client's load and run phases.
#[derive(Clone, Copy, Debug)]
struct Cell {
    load: Phase,
    run: Phase,
    /// CPU time (all threads, engine background work included) of the
    /// whole client process.
    cpu: CpuTime,
}

impl Cell {
    /// Operations of both phases.
    fn operations(&self) -> f64 {
        (self.load.operations + self.run.operations) as f64
    }

    /// Operations of both phases per CPU-second of the process: on a
    /// machine whose load average exceeds its cores, the rate a client
    /// reaches when nothing competes for its core.
    fn ops_per_cpu_second(&self) -> f64 {
        self.operations() / self.cpu.total()
    }

    /// Operations per second of user CPU: without the kernel's share,
    /// which for an engine that syncs every write is mostly its writes
    /// and fsyncs, the same calls from both clients, whose cost moves
    /// with the disk and not with the client.
    fn ops_per_user_cpu_second(&self) -> f64 {
        self.operations() / self.cpu.user
    }

    /// The kernel's share of the CPU time.
    fn system_share(&self) -> f64 {
        self.cpu.system / self.cpu.total()
    }
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

/// Where a client run under cachegrind leaves its counts and valgrind its
/// own messages.
pub(crate) struct Cachegrind {
    pub(crate) out_file: PathBuf,
    pub(crate) log_file: PathBuf,
}

/// The command that starts `program`: itself, or valgrind's cachegrind
/// running it (instructions only, no cache simulation, the process's own
/// threads and not its children).
pub(crate) fn client(program: &Path, cachegrind: Option<&Cachegrind>) -> Command {
    match cachegrind {
        None => Command::new(program),
        Some(c) => {
            let mut cmd = Command::new("valgrind");
            cmd.args(["--tool=cachegrind", "--cache-sim=no", "--trace-children=no"])
                .arg(format!("--cachegrind-out-file={}", c.out_file.display()))
                .arg(format!("--log-file={}", c.log_file.display()))
                .arg(program);
            cmd
        }
    }
}

/// A client's cell from its phases as `phase` reads them: its load (none
/// with `--same-files`, where it loaded nothing) and its run.
fn cell(o: &Options, phase: impl Fn(&str) -> Result<Phase>) -> Result<Cell> {
    Ok(Cell {
        load: if o.same_files {
            Phase::NONE
        } else {
            phase("load")?
        },
        run: phase("run")?,
        cpu: CpuTime::default(),
    })
}

/// What ycsb and YCSB-cpp are both given: the workload's file, the
/// engine's shipped properties, its data directory `dir` and the bench's
/// record and operation counts.
fn workload_args(engine: &str, workload: &str, dir: &Path, o: &Options) -> Result<Vec<String>> {
    Ok(vec![
        "-P".into(),
        format!("workloads/workload{workload}"),
        "-P".into(),
        format!("{engine}/{engine}.properties"),
        "-p".into(),
        format!("{}={}", dir_property(engine)?, dir.display()),
        "-p".into(),
        format!("recordcount={}", o.records),
        "-p".into(),
        format!("operationcount={}", o.operations),
    ])
}

fn run_ycsb(
    ycsb: &Path,
    root: &Path,
    engine: &str,
    workload: &str,
    dir: &Path,
    o: &Options,
    cachegrind: Option<&Cachegrind>,
) -> Result<Cell> {
    let export = dir.with_extension("json");
    let phases: &[&str] = if o.same_files {
        &["-run"]
    } else {
        &["-load", "-run"]
    };
    let out = client(ycsb, cachegrind)
        .current_dir(root)
        .args(phases)
        .args(["-db", engine])
        .args(workload_args(engine, workload, dir, o)?)
        .args(["-threads", &o.threads.to_string()])
        // The direct loop's seed: with ycsb's default, a random seed, every
        // run asked for other keys, so the engine's work (and the
        // instructions per operation) moved between runs; with the same
        // seed the loop asks the engine for the very same keys.
        .args(["-p", &format!("seed={SEED}")])
        .args(["-p", "exporter=json", "-p"])
        .arg(format!("exportfile={}", export.display()))
        .stdout(Stdio::null())
        .output()
        .with_context(|| format!("starting {}", ycsb.display()))?;
    check(out.status, "ycsb", &out.stderr)?;
    let json = crate::read_export(&export)?;
    let phase = |name: &str| -> Result<Phase> {
        let p = json
            .phase(name)
            .with_context(|| format!("{}: no {name} phase", export.display()))?;
        Ok(Phase {
            operations: p.operations,
            throughput: p.throughput,
        })
    };
    cell(o, phase)
}

fn run_direct(
    bin: &Path,
    dir: &Path,
    read: f64,
    o: &Options,
    cachegrind: Option<&Cachegrind>,
) -> Result<Cell> {
    let out = client(bin, cachegrind)
        .arg(format!("dir={}", dir.display()))
        .arg(format!("recordcount={}", o.records))
        .arg(format!("operationcount={}", o.operations))
        .arg(format!("threadcount={}", o.threads))
        .arg(format!("readproportion={read}"))
        .arg(format!("seed={SEED}"))
        .arg(format!("load={}", !o.same_files))
        // Nothing for the pool, which every loop makes by default: a
        // baseline's loop older than e9e5fe1 knows no `values`.
        .args(o.fresh_values.then_some("values=fresh"))
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
    cell(o, phase)
}

/// `--same-files`: the database every round's clients start from, in
/// `base`: ycsb's load of the workload's records, then compacted by the
/// direct loop (a run of no operations with `compact=true`), so that no
/// flush or compaction is pending when a copy is opened.
fn settled_database(
    ycsb: &Path,
    direct: &Path,
    root: &Path,
    engine: &str,
    workload: &str,
    base: &Path,
    o: &Options,
) -> Result<()> {
    let _ = std::fs::remove_dir_all(base);
    let out = Command::new(ycsb)
        .current_dir(root)
        .args(["-load", "-db", engine, "-P"])
        .arg(format!("workloads/workload{workload}"))
        .arg("-P")
        .arg(format!("{engine}/{engine}.properties"))
        .arg("-p")
        .arg(format!("{}={}", dir_property(engine)?, base.display()))
        .args(["-p", &format!("recordcount={}", o.records)])
        .args(["-threads", &o.threads.to_string()])
        .stdout(Stdio::null())
        .output()
        .with_context(|| format!("starting {}", ycsb.display()))?;
    check(out.status, "ycsb -load", &out.stderr)?;
    let out = Command::new(direct)
        .arg(format!("dir={}", base.display()))
        .arg(format!("recordcount={}", o.records))
        .args(["operationcount=0", "load=false", "compact=true"])
        .output()
        .with_context(|| format!("starting {}", direct.display()))?;
    check(out.status, "direct loop compact=true", &out.stderr)
}

/// Copies directory `from` into a new directory `to`, subdirectories
/// included (fjall keeps its tables in them).
fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
            continue;
        }
        std::fs::copy(entry.path(), &target).with_context(|| {
            format!("copying {} to {}", entry.path().display(), target.display())
        })?;
    }
    Ok(())
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
        .env(CPP_WIREDTIGER_CONFIG.0, CPP_WIREDTIGER_CONFIG.1)
        .args(["-load", "-run", "-db", engine])
        .args(workload_args(engine, workload, dir, o)?)
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
        cpu: CpuTime::default(),
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

/// Each round's `ours[i] / theirs[i]`.
fn round_ratios(ours: &[Cell], theirs: &[Cell], value: impl Fn(&Cell) -> f64) -> Vec<f64> {
    ours.iter()
        .zip(theirs)
        .map(|(o, t)| value(o) / value(t))
        .collect()
}

/// The lowest and highest over the rounds of `ours[i] / theirs[i]`.
fn ratio_range(ours: &[Cell], theirs: &[Cell], value: impl Fn(&Cell) -> f64) -> (f64, f64) {
    round_ratios(ours, theirs, value)
        .into_iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), r| {
            (low.min(r), high.max(r))
        })
}

/// The control column: the paired median of the direct loop's second run
/// over its first, ops per CPU-second, and its range; `-` without
/// `--control`.
fn control_cell(control: &[Cell], direct: &[Cell]) -> String {
    if control.is_empty() {
        return "-".into();
    }
    let paired = paired_ratio(control, direct, Cell::ops_per_cpu_second);
    let (low, high) = ratio_range(control, direct, Cell::ops_per_cpu_second);
    format!("{paired:.3} ({low:.3}–{high:.3})")
}

/// The median over the rounds of `ours[i] / theirs[i]`: the clients of a
/// round run back to back, so each round's ratio compares them under
/// nearly the same machine load, which medians of each client taken
/// separately do not.
fn paired_ratio(ours: &[Cell], theirs: &[Cell], value: impl Fn(&Cell) -> f64) -> f64 {
    median(round_ratios(ours, theirs, value))
}

use crate::machine::{children_cpu, children_cpu_seconds, load_average, CpuTime};

/// The cargo arguments that build ycsb and the direct loops of `engines`.
fn build_arguments(engines: &[String]) -> Vec<String> {
    let mut args = vec!["-p".to_string(), "ycsb-cli".to_string()];
    for engine in engines {
        args.extend([
            "-p".to_string(),
            format!("ycsb-{engine}"),
            "--example".to_string(),
            format!("{engine}-direct-loop"),
        ]);
    }
    args.extend(["--bin".to_string(), "ycsb".to_string()]);
    args
}

/// `--baseline REV`: every client of every engine × workload with the
/// baseline's build and the current one, alternated (see `baseline`).
fn compare(root: &Path, rev: &str, o: &Options) -> Result<()> {
    use crate::baseline::{self, Side};
    let commit = baseline::resolve(root, rev)?;
    if o.instructions {
        check_valgrind()?;
    }
    let build = build_arguments(&o.engines);
    let build: Vec<&str> = build.iter().map(String::as_str).collect();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    crate::run(
        Command::new(&cargo)
            .current_dir(root)
            .args(["build", "--release"])
            .args(&build),
    )?;
    let target = crate::target::target_dir(root);
    let base = baseline::prepare(root, &target, &commit, |source, out| {
        baseline::cargo_build(source, out, &build)
    })?;
    let work = target.join("engine-bench-baseline");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    println!(
        "engine-bench: baseline {rev} = {commit}; {} records, {} operations, {} thread(s){}",
        o.records,
        o.operations,
        o.threads,
        if o.instructions {
            ", instructions under valgrind --tool=cachegrind --cache-sim=no"
        } else {
            ""
        }
    );
    let mut steps = Vec::new();
    for engine in &o.engines {
        for workload in &o.workloads {
            for client in ["direct", "ycsb"] {
                steps.push((engine.as_str(), workload.as_str(), client));
            }
        }
    }
    let pairs = baseline::alternate(o.baseline.pairs, steps.len(), |side, step| {
        let (engine, workload, client) = steps[step];
        // Each build runs in its own tree, with its own workload and
        // properties files.
        let (release, tree) = match side {
            Side::Baseline => (base.release(), base.source.clone()),
            Side::Current => (target.join("release"), root.to_path_buf()),
        };
        let read = read_proportion(&tree, workload)?;
        let name = format!("{engine}-{workload}-{client}-{side:?}");
        let dir = work.join(&name);
        let _ = std::fs::remove_dir_all(&dir);
        let cachegrind = o.instructions.then(|| Cachegrind {
            out_file: work.join(format!("{name}.cachegrind")),
            log_file: work.join(format!("{name}.valgrind.log")),
        });
        let cpu_before = children_cpu_seconds();
        let cell = match client {
            "direct" => {
                let bin = release
                    .join("examples")
                    .join(format!("{engine}-direct-loop"));
                run_direct(&bin, &dir, read, o, cachegrind.as_ref())?
            }
            _ => run_ycsb(
                &release.join("ycsb"),
                &tree,
                engine,
                workload,
                &dir,
                o,
                cachegrind.as_ref(),
            )?,
        };
        let cpu = children_cpu_seconds() - cpu_before;
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(dir.with_extension("json"));
        let label = format!("{engine} workload{workload} {client}");
        let operations = cell.load.operations + cell.run.operations;
        if let Some(c) = &cachegrind {
            let instructions = instructions_of(c)?;
            eprintln!(
                "  {side:?} {label}: {} instructions",
                thousands(instructions)
            );
            return Ok(vec![(
                format!("{label}: instructions per operation"),
                instructions as f64 / operations as f64,
            )]);
        }
        eprintln!(
            "  {side:?} {label}: load {:.0} ops/s, run {:.0} ops/s, {:.0} ops per CPU-s",
            cell.load.throughput,
            cell.run.throughput,
            operations as f64 / cpu
        );
        Ok(vec![
            (format!("{label}: load ops/s"), cell.load.throughput),
            (format!("{label}: run ops/s"), cell.run.throughput),
            (format!("{label}: ops per CPU-s"), operations as f64 / cpu),
        ])
    })?;
    pairs.print(base.short(), o.baseline.pairs);
    Ok(())
}

/// Runs the comparison and prints the table.
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    // Everything `parse` refuses is the command line's fault: one line
    // and status 2, as any bad input.
    let o = parse(args).map_err(|e| crate::baseline::BadInput(format!("{e:#}")))?;
    if let Some(rev) = &o.baseline.rev {
        return compare(root, rev, &o);
    }
    if o.instructions {
        check_valgrind()?;
    }
    eprintln!("engine-bench: building ycsb and the direct loops (release)");
    let args = build_arguments(&o.engines);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let built = crate::engines::build_release(root, &args)?;
    let target = crate::engines::default_target(root);
    let release = built.join("release");
    let ycsb = release.join("ycsb");
    let cpp = std::env::var_os("YCSB_CPP_BIN")
        .map(PathBuf::from)
        .filter(|_| !o.instructions && !o.same_files);
    if let Some(cpp) = &cpp {
        if !cpp.is_file() {
            bail!("YCSB_CPP_BIN={}: no such file", cpp.display());
        }
    }
    let work = target.join("engine-bench");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    if o.instructions {
        return instructions(root, &release, &work, &o);
    }
    let load_before = load_average();
    eprintln!(
        "engine-bench: {} records, {} operations, {} thread(s), {} round(s); load average {load_before}",
        o.records, o.operations, o.threads, o.rounds
    );
    let clients = Clients {
        root,
        release: &release,
        ycsb: &ycsb,
        cpp: cpp.as_deref(),
        work: &work,
    };
    let mut rows = Vec::new();
    for engine in &o.engines {
        for workload in &o.workloads {
            rows.push(measure_row(&clients, engine, workload, &o)?);
        }
    }
    println!();
    let mismatched = print_throughput_table(&rows, &o);
    print_cpu_table(&rows, &o);
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

/// The programs a comparison runs and where they work.
struct Clients<'a> {
    root: &'a Path,
    /// The release build's directory (the direct loops are its examples).
    release: &'a Path,
    ycsb: &'a Path,
    /// YCSB-cpp's binary, when `YCSB_CPP_BIN` names one.
    cpp: Option<&'a Path>,
    work: &'a Path,
}

/// One engine and workload: every client's figures over the rounds.
struct Row {
    engine: String,
    workload: String,
    ycsb: Vec<Cell>,
    direct: Vec<Cell>,
    /// The direct loop's second run of each round (`--control`).
    control: Vec<Cell>,
    cpp: Vec<Cell>,
}

/// Runs every round of one engine and workload, the clients of a round
/// back to back in an order that rotates from round to round.
fn measure_row(clients: &Clients<'_>, engine: &str, workload: &str, o: &Options) -> Result<Row> {
    let direct_bin = clients
        .release
        .join("examples")
        .join(format!("{engine}-direct-loop"));
    let read = read_proportion(clients.root, workload)?;
    let base = clients.work.join(format!("{engine}-{workload}-base"));
    if o.same_files {
        eprintln!(
            "engine-bench: {engine} workload{workload}: loading and compacting the shared files"
        );
        settled_database(
            clients.ycsb,
            &direct_bin,
            clients.root,
            engine,
            workload,
            &base,
            o,
        )?;
    }
    let mut row = Row {
        engine: engine.to_string(),
        workload: workload.to_string(),
        ycsb: Vec::new(),
        direct: Vec::new(),
        control: Vec::new(),
        cpp: Vec::new(),
    };
    for round in 0..o.rounds {
        // Alternate who goes first, so that neither always meets a
        // freshly written page cache or a busier machine.
        let mut order = vec!["direct", "ycsb"];
        if o.control {
            order.push("control");
        }
        if clients.cpp.is_some() && YCSB_CPP_ENGINES.contains(&engine) {
            order.push("cpp");
        }
        let first = round % order.len();
        order.rotate_left(first);
        let round_load = load_average();
        for client in order {
            let dir = clients
                .work
                .join(format!("{engine}-{workload}-{client}-{round}"));
            eprintln!(
                "engine-bench: {engine} workload{workload} round {} {client}",
                round + 1
            );
            if o.same_files {
                copy_dir(&base, &dir)?;
            }
            let cpu_before = children_cpu();
            let mut cell = match (client, clients.cpp) {
                ("direct" | "control", _) => run_direct(&direct_bin, &dir, read, o, None)?,
                ("ycsb", _) => {
                    run_ycsb(clients.ycsb, clients.root, engine, workload, &dir, o, None)?
                }
                (_, Some(bin)) => run_cpp(bin, clients.root, engine, workload, &dir, o)?,
                (_, None) => continue,
            };
            // The client was waited for, so its CPU time (and only its:
            // clients run one at a time) is in the delta.
            cell.cpu = children_cpu() - cpu_before;
            let _ = std::fs::remove_dir_all(&dir);
            // YCSB-cpp's sqlite makes a file where ycsb makes a directory.
            let _ = std::fs::remove_file(&dir);
            let _ = std::fs::remove_file(dir.with_extension("json"));
            match client {
                "direct" => row.direct.push(cell),
                "control" => row.control.push(cell),
                "ycsb" => row.ycsb.push(cell),
                _ => row.cpp.push(cell),
            }
        }
        eprintln!(
            "engine-bench: {engine} workload{workload} round {}: load average before {round_load}, after {}",
            round + 1,
            load_average()
        );
    }
    let _ = std::fs::remove_dir_all(&base);
    Ok(row)
}

/// The throughput table, phase by phase; whether any row's clients
/// performed different numbers of operations.
fn print_throughput_table(rows: &[Row], o: &Options) -> bool {
    println!(
        "| engine  | workload  | phase | ops      | direct ops/s | ycsb ops/s | ycsb/direct | paired | YCSB-cpp ops/s | ycsb/YCSB-cpp |"
    );
    println!(
        "|---------|-----------|-------|----------|-------------:|-----------:|------------:|-------:|---------------:|--------------:|"
    );
    let mut mismatched = false;
    for r in rows {
        for (phase, pick) in [
            ("load", (|c: &Cell| c.load) as fn(&Cell) -> Phase),
            ("run", |c: &Cell| c.run),
        ] {
            if phase == "load" && o.same_files {
                continue;
            }
            let med = |cells: &[Cell]| median(cells.iter().map(|c| pick(c).throughput).collect());
            let ops: Vec<u64> = r
                .ycsb
                .iter()
                .chain(&r.direct)
                .chain(&r.control)
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
    mismatched
}

/// The operations-per-CPU-second table, with the paired ratios, the
/// kernel's share and the control.
fn print_cpu_table(rows: &[Row], o: &Options) {
    if o.same_files {
        println!("Whole process (open a copy of the settled files, run, close), run operations per CPU-second:");
    } else {
        println!("Whole process (open, load, run, close), operations per CPU-second:");
    }
    println!();
    println!(
        "| engine  | workload  | direct | ycsb | ycsb/direct | paired | paired range | paired, user CPU | system share direct / ycsb | control: direct/direct | YCSB-cpp | ycsb/YCSB-cpp |"
    );
    println!(
        "|---------|-----------|-------:|-----:|------------:|-------:|-------------:|-----------------:|---------------------------:|-----------------------:|---------:|--------------:|"
    );
    for r in rows {
        let med = |cells: &[Cell], f: fn(&Cell) -> f64| median(cells.iter().map(f).collect());
        let (d, y) = (
            med(&r.direct, Cell::ops_per_cpu_second),
            med(&r.ycsb, Cell::ops_per_cpu_second),
        );
        let (c, cr) = if r.cpp.is_empty() {
            ("-".to_string(), "-".to_string())
        } else {
            let c = med(&r.cpp, Cell::ops_per_cpu_second);
            (format!("{c:.0}"), format!("{:.3}", y / c))
        };
        let paired = paired_ratio(&r.ycsb, &r.direct, Cell::ops_per_cpu_second);
        let (low, high) = ratio_range(&r.ycsb, &r.direct, Cell::ops_per_cpu_second);
        let paired_user = paired_ratio(&r.ycsb, &r.direct, Cell::ops_per_user_cpu_second);
        let (system_direct, system_ycsb) = (
            med(&r.direct, Cell::system_share),
            med(&r.ycsb, Cell::system_share),
        );
        println!(
            "| {:<7} | {:<9} | {d:.0} | {y:.0} | {:.3} | {paired:.3} | {low:.3}–{high:.3} | {paired_user:.3} | {:.0} % / {:.0} % | {} | {c} | {cr} |",
            r.engine,
            format!("workload{}", r.workload),
            y / d,
            system_direct * 100.0,
            system_ycsb * 100.0,
            control_cell(&r.control, &r.direct),
        );
    }
    println!(
        "\npaired: the median over the rounds of each round's ycsb/direct ratio (the two ran back to back); \
         paired range: the lowest and highest of those ratios; paired, user CPU: the same ratio of \
         operations per user CPU-second, without the kernel's time (for engines that sync every \
         write mostly their writes and fsyncs, which move with the disk); system share: the \
         kernel's part of each client's CPU time (medians); control (--control): the paired \
         median and range of the direct loop's second run of each round over its first, the \
         same program twice, so what the machine alone moves a paired median by"
    );
}

/// Fails with the install command when valgrind cannot be started.
pub(crate) fn check_valgrind() -> Result<()> {
    match Command::new("valgrind").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => bail!(
            "engine-bench --instructions: `valgrind --version` failed with {}; \
             reinstall valgrind (apt-get install valgrind)",
            out.status
        ),
        Err(e) => bail!(
            "engine-bench --instructions needs valgrind, which cannot be started ({e}): \
             install it (apt-get install valgrind)"
        ),
    }
}

/// The total `Ir` (instructions executed) of a cachegrind or callgrind
/// output file: the `summary:` line's figure in the column that the
/// `events:` line names `Ir`.
fn cachegrind_ir(text: &str) -> Option<u64> {
    let (mut events, mut summary) = (None, None);
    for line in text.lines() {
        if let Some(e) = line.strip_prefix("events:") {
            events = Some(e);
        } else if let Some(v) = line.strip_prefix("summary:") {
            summary = Some(v);
        }
    }
    let column = events?.split_whitespace().position(|e| e == "Ir")?;
    summary?.split_whitespace().nth(column)?.parse().ok()
}

/// The total of valgrind's `I   refs:      922,599,996` line (cachegrind's
/// summary on stderr or in its `--log-file`, each line prefixed with
/// `==pid==`).
fn valgrind_i_refs(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let body = match line.strip_prefix("==") {
            Some(rest) => rest.split_once("==")?.1,
            None => line,
        };
        let figure = body
            .trim_start()
            .strip_prefix('I')?
            .trim_start()
            .strip_prefix("refs:")?
            .trim()
            .replace(',', "");
        figure.parse().ok()
    })
}

/// The instructions of a client that ran under cachegrind: from its
/// output file, else from valgrind's summary in the log.
pub(crate) fn instructions_of(c: &Cachegrind) -> Result<u64> {
    let from_out = std::fs::read_to_string(&c.out_file)
        .ok()
        .and_then(|t| cachegrind_ir(&t));
    let from_log = || {
        std::fs::read_to_string(&c.log_file)
            .ok()
            .and_then(|t| valgrind_i_refs(&t))
    };
    from_out.or_else(from_log).with_context(|| {
        format!(
            "no instruction count in {} (summary: line) nor in {} (I refs: line)",
            c.out_file.display(),
            c.log_file.display()
        )
    })
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// (largest − smallest) / smallest, as a percentage: how far repeated
/// counts of one client moved.
fn spread_percent(counts: &[u64]) -> f64 {
    match (counts.iter().min(), counts.iter().max()) {
        (Some(&lo), Some(&hi)) if lo > 0 => (hi - lo) as f64 / lo as f64 * 100.0,
        _ => 0.0,
    }
}

/// One client's counted run: its instructions and its operations (load
/// records + run operations, as it reported them).
#[derive(Clone, Copy, Debug)]
struct Counted {
    instructions: u64,
    operations: u64,
}

/// `--instructions`: every client once per round under cachegrind, then
/// the table of instructions and the work ratio direct/ycsb.
fn instructions(root: &Path, release: &Path, work: &Path, o: &Options) -> Result<()> {
    eprintln!(
        "engine-bench --instructions: {} records, {} operations, {} thread(s), {} round(s), \
         under valgrind --tool=cachegrind --cache-sim=no",
        o.records, o.operations, o.threads, o.rounds
    );
    let started = std::time::Instant::now();
    let rows = count_rows(root, release, work, o)?;
    let took = started.elapsed().as_secs_f64();
    println!();
    let mismatched = print_instruction_table(&rows);
    if o.rounds > 1 {
        print_spread_table(&rows, o.rounds);
    }
    println!(
        "\ninstructions of each whole process (open, load, run, close; all its threads) under \
         valgrind --tool=cachegrind --cache-sim=no; {} records + {} operations, {} thread(s), \
         {} of {} round(s); instr/op = instructions / (records + operations); direct/ycsb ≥ 0.95: \
         ycsb does at most ~5 % more work than the loop",
        o.records,
        o.operations,
        o.threads,
        if o.rounds > 1 { "median" } else { "1" },
        o.rounds
    );
    println!(
        "took {took:.0} s; cachegrind files in {} (cg_annotate <file>)",
        work.display()
    );
    if mismatched {
        bail!("the clients did not perform the same number of operations (DIFFER rows)");
    }
    Ok(())
}

/// One engine and workload under cachegrind: each client's counts over
/// the rounds.
struct CountedRow {
    engine: String,
    workload: String,
    direct: Vec<Counted>,
    ycsb: Vec<Counted>,
}

/// Runs each client once per round under cachegrind, for every engine and
/// workload.
fn count_rows(root: &Path, release: &Path, work: &Path, o: &Options) -> Result<Vec<CountedRow>> {
    let ycsb = release.join("ycsb");
    let mut rows = Vec::new();
    for engine in &o.engines {
        let direct_bin = release
            .join("examples")
            .join(format!("{engine}-direct-loop"));
        for workload in &o.workloads {
            let read = read_proportion(root, workload)?;
            let mut row = CountedRow {
                engine: engine.clone(),
                workload: workload.clone(),
                direct: Vec::new(),
                ycsb: Vec::new(),
            };
            for round in 0..o.rounds {
                for client in ["direct", "ycsb"] {
                    let name = format!("{engine}-{workload}-{client}-{round}");
                    // A fresh, empty database directory, as the timed runs use.
                    let dir = work.join(&name);
                    let _ = std::fs::remove_dir_all(&dir);
                    let c = Cachegrind {
                        out_file: work.join(format!("{name}.cachegrind")),
                        log_file: work.join(format!("{name}.valgrind.log")),
                    };
                    let t = std::time::Instant::now();
                    let cell = match client {
                        "direct" => run_direct(&direct_bin, &dir, read, o, Some(&c)),
                        _ => run_ycsb(&ycsb, root, engine, workload, &dir, o, Some(&c)),
                    }
                    .with_context(|| {
                        format!(
                            "{client} under valgrind (valgrind's log: {})",
                            c.log_file.display()
                        )
                    })?;
                    let counted = Counted {
                        instructions: instructions_of(&c)?,
                        operations: cell.load.operations + cell.run.operations,
                    };
                    eprintln!(
                        "engine-bench: {engine} workload{workload} round {} {client}: \
                         {} instructions, {} operations, {:.1} s",
                        round + 1,
                        thousands(counted.instructions),
                        counted.operations,
                        t.elapsed().as_secs_f64()
                    );
                    let _ = std::fs::remove_dir_all(&dir);
                    match client {
                        "direct" => row.direct.push(counted),
                        _ => row.ycsb.push(counted),
                    }
                }
            }
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The instructions table; whether any row's clients performed different
/// numbers of operations.
fn print_instruction_table(rows: &[CountedRow]) -> bool {
    println!(
        "| engine  | workload  | direct instr   | ycsb instr     | direct instr/op | ycsb instr/op | direct/ycsb |"
    );
    println!(
        "|---------|-----------|---------------:|---------------:|----------------:|--------------:|------------:|"
    );
    let mut mismatched = false;
    for r in rows {
        let ops: Vec<u64> = r
            .direct
            .iter()
            .chain(&r.ycsb)
            .map(|c| c.operations)
            .collect();
        let same = ops.windows(2).all(|w| w[0] == w[1]);
        mismatched |= !same;
        let med = |cs: &[Counted]| median(cs.iter().map(|c| c.instructions as f64).collect());
        let (d, y) = (med(&r.direct), med(&r.ycsb));
        let (d_per_op, y_per_op) = if same && ops[0] > 0 {
            let n = ops[0] as f64;
            (format!("{:.0}", d / n), format!("{:.0}", y / n))
        } else {
            ("DIFFER".to_string(), "DIFFER".to_string())
        };
        println!(
            "| {:<7} | {:<9} | {:>14} | {:>14} | {:>15} | {:>13} | {:>11.3} |",
            r.engine,
            format!("workload{}", r.workload),
            thousands(d.round() as u64),
            thousands(y.round() as u64),
            d_per_op,
            y_per_op,
            d / y
        );
    }
    mismatched
}

/// How much the counts moved from round to round.
fn print_spread_table(rows: &[CountedRow], rounds: usize) {
    println!();
    println!(
        "Run-to-run spread of the counts, (largest − smallest) / smallest over {} rounds:",
        rounds
    );
    println!();
    println!("| engine  | workload  | direct | ycsb |");
    println!("|---------|-----------|-------:|-----:|");
    for r in rows {
        let spread =
            |cs: &[Counted]| spread_percent(&cs.iter().map(|c| c.instructions).collect::<Vec<_>>());
        println!(
            "| {:<7} | {:<9} | {:.3} % | {:.3} % |",
            r.engine,
            format!("workload{}", r.workload),
            spread(&r.direct),
            spread(&r.ycsb)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn parses_options() {
        // (arguments, records, operations, rounds, instructions)
        let cases = [
            ("", 200_000, 200_000, 3, false),
            ("--instructions", 20_000, 60_000, 1, true),
            ("--records 5 --instructions", 5, 60_000, 1, true),
            (
                "--instructions --operations 7 --rounds 2",
                20_000,
                7,
                2,
                true,
            ),
            (
                "--records 100000 --operations 300000",
                100_000,
                300_000,
                3,
                false,
            ),
        ];
        for (line, records, operations, rounds, instructions) in cases {
            let o = parse(&args(line)).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            assert_eq!(
                (o.records, o.operations, o.rounds, o.instructions),
                (records, operations, rounds, instructions),
                "{line:?}"
            );
        }
        let o = parse(&args("--same-files --rounds 5")).unwrap();
        assert!(o.same_files && !o.instructions);
        assert_eq!((o.records, o.operations, o.rounds), (200_000, 200_000, 5));
        let o = parse(&args("--engines fjall,redb")).unwrap();
        assert_eq!(o.engines, ["fjall", "redb"]);
        assert!(o.fresh_values, "fresh values by default");
        let o = parse(&args("--pooled-values --instructions")).unwrap();
        assert!(!o.fresh_values && o.instructions);
        let o = parse(&args("--pooled-values --fresh-values")).unwrap();
        assert!(o.fresh_values, "the last of the two counts");
        let o = parse(&args("--control --rounds 5")).unwrap();
        assert!(o.control && !o.instructions);
        assert!(!parse(&args("")).unwrap().control, "no control by default");
        let o = parse(&args("--engines leveldb --workloads c --threads 2")).unwrap();
        assert_eq!(
            (o.engines, o.workloads, o.threads),
            (vec!["leveldb".to_string()], vec!["c".to_string()], 2)
        );
    }

    #[test]
    fn refuses_bad_options() {
        // (arguments, part of the message)
        let cases = [
            ("--records", "needs a value"),
            ("--records x", "expected a whole number"),
            ("--records 0 --instructions", "at least 1"),
            ("--rounds 0", "at least 1"),
            ("--instructions 3", "unknown option 3"),
            ("--same-files --instructions", "exclude each other"),
            ("--control --instructions", "counts instead of timing"),
            ("--baseline HEAD --control", "exclude each other"),
            (
                "--engines redis",
                "not an embedded engine (embedded: rocksdb, leveldb",
            ),
            ("--engines nosuch", "unknown store 'nosuch'"),
            ("--workloads e", "expected a, b or c"),
            ("--bogus 1", "unknown option --bogus"),
        ];
        for (line, message) in cases {
            let e = parse(&args(line)).expect_err(line).to_string();
            assert!(e.contains(message), "{line:?}: {e}");
        }
    }

    #[test]
    fn reads_the_cachegrind_summary() {
        // (file text, expected Ir)
        let cases = [
            (
                "desc: I1 cache: 32768 B\ncmd: ycsb -load\nevents: Ir\nfl=x.rs\nfn=main\n3 12\nsummary: 922599996\n",
                Some(922_599_996),
            ),
            // Cache simulation on: Ir is one column of several.
            (
                "events: Ir I1mr ILmr Dr\nsummary: 1152305100 2 3 4\n",
                Some(1_152_305_100),
            ),
            ("events: Dr Ir\nsummary: 7 42\n", Some(42)),
            // Callgrind names the same line the same way.
            ("events: Ir\nsummary: 5\ntotals: 5\n", Some(5)),
            ("events: Ir\n", None),
            ("summary: 5\n", None),
            ("events: Dr\nsummary: 5\n", None),
            ("events: Ir\nsummary: many\n", None),
            ("", None),
        ];
        for (text, ir) in cases {
            assert_eq!(cachegrind_ir(text), ir, "{text:?}");
        }
    }

    #[test]
    fn reads_valgrinds_i_refs_line() {
        // (valgrind's messages, expected I refs)
        let cases = [
            (
                "==10748== \n==10748== I   refs:      922,599,996\n",
                Some(922_599_996),
            ),
            (
                "==1== Command: x\n==1== I refs: 12\n==1== I1  misses: 3\n",
                Some(12),
            ),
            ("I   refs:      1,000\n", Some(1000)),
            ("==1== I1  misses:      3\n==1== D   refs:      9\n", None),
            ("==1== I   refs:\n", None),
            ("", None),
        ];
        for (text, refs) in cases {
            assert_eq!(valgrind_i_refs(text), refs, "{text:?}");
        }
    }

    #[test]
    fn formats_and_spreads() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (922_599_996, "922,599,996"),
        ] {
            assert_eq!(thousands(n), text);
        }
        assert_eq!(spread_percent(&[100]), 0.0);
        assert_eq!(spread_percent(&[200, 202, 201]), 1.0);
        assert_eq!(spread_percent(&[]), 0.0);
    }

    fn cell(operations: u64, user: f64, system: f64) -> Cell {
        Cell {
            load: Phase {
                operations,
                throughput: 0.0,
            },
            run: Phase::NONE,
            cpu: CpuTime { user, system },
        }
    }

    /// One client's rounds of 100 operations each, from their (user,
    /// system) CPU seconds.
    fn rounds(cpu: &[(f64, f64)]) -> Vec<Cell> {
        cpu.iter()
            .map(|&(user, system)| cell(100, user, system))
            .collect()
    }

    #[test]
    fn ratios_per_cpu_second_pair_the_rounds() {
        // Round 1: ycsb used 2 s for 100 operations where the loop used 1 s
        // (0.5); round 2: the same CPU (1.0); round 3: ycsb was faster (2.0).
        let ycsb = rounds(&[(1.5, 0.5), (0.5, 0.5), (0.25, 0.25)]);
        let direct = rounds(&[(0.5, 0.5); 3]);
        assert_eq!(paired_ratio(&ycsb, &direct, Cell::ops_per_cpu_second), 1.0);
        assert_eq!(
            ratio_range(&ycsb, &direct, Cell::ops_per_cpu_second),
            (0.5, 2.0)
        );
        // Without the kernel's time: 1/3, 1, 2.
        let (low, high) = ratio_range(&ycsb, &direct, Cell::ops_per_user_cpu_second);
        assert!(
            (low - 1.0 / 3.0).abs() < 1e-12 && high == 2.0,
            "{low} {high}"
        );
        assert_eq!(ycsb[0].system_share(), 0.25);
        assert_eq!(ycsb[0].ops_per_user_cpu_second(), 100.0 / 1.5);
    }

    #[test]
    fn the_control_column_pairs_the_loop_with_itself() {
        let direct = rounds(&[(1.0, 0.0); 3]);
        // The second runs took 1.25, 1 and 0.8 s: ratios 0.8, 1, 1.25.
        let control = rounds(&[(1.25, 0.0), (1.0, 0.0), (0.8, 0.0)]);
        assert_eq!(control_cell(&control, &direct), "1.000 (0.800–1.250)");
        assert_eq!(control_cell(&[], &direct), "-");
    }
}
