//! `cargo xtask bench`: whole-process benchmarks of the client against the
//! targets of docs/performance.md, printed side by side from one run.
//!
//! Every figure is the best of `--rounds` runs: on a shared, noisy machine
//! the best run is the one least disturbed by other processes, so it is the
//! closest to what the client itself costs. The load average is printed
//! before and after, to judge how noisy the machine was. Nothing here
//! asserts: a missed target is printed as such.
//!
//! With `--baseline <rev>` it runs the whole-client steps instead with
//! another revision's build and the current one alternated (`baseline`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

pub const USAGE: &str =
    "  bench   build ycsb in release mode and measure the client: basic store workload A
          on 1 and 2 threads, timing on/off and clock costs, load-phase value
          generation, zipfian start-up over 10^10 items, peak RSS at recordcount 10^9
          with 16 threads; with YCSB_CPP_BIN=<path to YCSB-cpp's ycsb> also its basic DB.
          options: --rounds N (default 3), --operations N (default 20000000),
          --rss-operations N (default 100000000), --load-records N (default 5000000),
          --quick (small sizes, 1 round)
          --baseline REV [--pairs N] [--instructions]: build REV too (under
          target/baseline/) and run workload A on 1 and 2 threads, timing off and the
          load phase with both builds alternated, N pairs (default 5): both medians, the
          paired ratio current/baseline and its range; --instructions counts each
          process's instructions per operation under cachegrind instead (sizes then
          default to 200000 operations and records)
";

struct Options {
    baseline: crate::baseline::Request,
    /// With a baseline: instructions under cachegrind instead of time.
    instructions: bool,
    rounds: usize,
    operations: u64,
    rss_operations: u64,
    load_records: u64,
}

fn parse(args: &[String]) -> Result<Options> {
    let (baseline, args) = crate::baseline::Request::take(args)?;
    let mut options = Options {
        baseline,
        instructions: false,
        rounds: 3,
        operations: 20_000_000,
        rss_operations: 100_000_000,
        load_records: 5_000_000,
    };
    let (mut operations_given, mut records_given) = (false, false);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<u64> {
            let value = args
                .next()
                .with_context(|| format!("{name} needs a number"))?;
            value
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .with_context(|| format!("{name}: expected a positive whole number, got '{value}'"))
        };
        match arg.as_str() {
            "--rounds" => options.rounds = number("--rounds")? as usize,
            "--operations" => {
                options.operations = number("--operations")?;
                operations_given = true;
            }
            "--load-records" => {
                options.load_records = number("--load-records")?;
                records_given = true;
            }
            "--instructions" => options.instructions = true,
            "--rss-operations" => options.rss_operations = number("--rss-operations")?,
            "--quick" => {
                options.rounds = 1;
                options.operations = 2_000_000;
                options.rss_operations = 2_000_000;
                options.load_records = 1_000_000;
            }
            other => bail!("bench: unknown option '{other}'\n\n{USAGE}"),
        }
    }
    if options.instructions {
        if options.baseline.rev.is_none() {
            return Err(
                crate::baseline::BadInput("--instructions needs --baseline <rev>".into()).into(),
            );
        }
        // Under cachegrind a process runs some 50 times slower.
        if !operations_given {
            options.operations = 200_000;
        }
        if !records_given {
            options.load_records = 200_000;
        }
    }
    Ok(options)
}

pub fn main(root: &Path, args: &[String]) -> Result<()> {
    let options = parse(args)?;
    let target = crate::target::target_dir(root);
    if let Some(rev) = &options.baseline.rev {
        return compare(root, &target, rev, &options);
    }
    cargo(root, &["build", "--release", "-p", "ycsb-cli"])?;
    cargo(
        root,
        &[
            "build",
            "--release",
            "-p",
            "ycsb-core",
            "--example",
            "perf_probe",
        ],
    )?;
    let ycsb = target.join("release").join("ycsb");
    let probe = target.join("release").join("examples").join("perf_probe");
    let workload_a = root.join("workloads").join("workloada");

    println!("== machine");
    println!("cpu: {}", cpu_model());
    println!(
        "cores: {}",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("clocksource: {}", clocksource());
    let load_before = crate::machine::load_average();
    println!("load average before: {load_before}");

    let probe = run_probe(&probe)?;
    let bench = Bench {
        ycsb: &ycsb,
        workload_a: &workload_a,
        rounds: options.rounds,
    };
    let figures = measure(&bench, &options)?;
    let load_after = crate::machine::load_average();
    print_summary(&figures, &probe, &load_before, &load_after);
    Ok(())
}

/// What the probe example measured: the clock's cost and the zipfian's
/// start-up.
struct ProbeFigures {
    clock_ns: String,
    clock_std_ns: String,
    zipf_ms: f64,
}

/// Runs the probe example and prints its lines.
fn run_probe(probe: &Path) -> Result<ProbeFigures> {
    println!("\n== probe (clock, zipfian start-up, value generation)");
    let probe_out = run_capture(&mut Command::new(probe))?;
    let figure = |name: &str| -> Option<String> {
        probe_out
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ').map(str::to_string))
    };
    for line in probe_out.lines() {
        println!("  {line}");
    }
    Ok(ProbeFigures {
        clock_ns: figure("clock_auto_ns_per_reading").unwrap_or_default(),
        clock_std_ns: figure("clock_std_ns_per_reading").unwrap_or_default(),
        zipf_ms: figure("zipfian_startup_worst_ms")
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN),
    })
}

/// The whole-process figures of the bench.
struct Figures {
    /// Workload A, one thread, the default clock.
    a1: Best,
    /// Workload A, two threads.
    a2: Best,
    /// One thread, the standard library's clock.
    a1_std: Best,
    /// One thread, timing off.
    a1_off: Best,
    /// Load value generation, GB/s wall and per CPU-second.
    load_gbps: f64,
    load_cpu_gbps: f64,
    rss_mib: f64,
    /// YCSB-cpp's basic DB, when `YCSB_CPP_BIN` names it.
    cpp: Option<Best>,
}

/// Runs the bench's measurements, printing each as it goes.
fn measure(bench: &Bench<'_>, options: &Options) -> Result<Figures> {
    let workload_a = bench.workload_a;
    let ops = options.operations;
    println!(
        "\n== basic store, workload A, 10^6 records (best of {} runs; M ops/s wall | M ops per CPU-second)",
        options.rounds
    );
    let a1 = bench.run_a(1, ops, "auto")?;
    let a2 = bench.run_a(2, 2 * ops, "auto")?;
    let a1_std = bench.run_a(1, ops, "std")?;
    let a1_off = bench.run_a(1, ops, "off")?;

    println!("\n== load phase, 10 fields of 100 bytes, 1 thread");
    let load = bench.best(
        &load_args(&workload_a.display().to_string(), options.load_records),
        "load",
    )?;
    // Each insert generates 10 fields of 100 bytes.
    let load_gbps = load.throughput * 1000.0 / 1e9;
    let load_cpu_gbps = load.per_cpu_second * 1000.0 / 1e9;

    println!(
        "\n== memory: recordcount 10^9, {} operations, 16 threads",
        options.rss_operations
    );
    let rss = bench.best(
        &[
            "run",
            "basic",
            "-P",
            &workload_a.display().to_string(),
            "-p",
            "recordcount=1000000000",
            "-p",
            &format!("operationcount={}", options.rss_operations),
            "-threads",
            "16",
        ],
        "16 threads",
    )?;
    let rss_mib = rss.peak_rss_kib as f64 / 1024.0;
    println!("  peak RSS (VmHWM) {rss_mib:.1} MiB");

    let cpp = match std::env::var_os("YCSB_CPP_BIN") {
        Some(bin) => {
            println!("\n== YCSB-cpp basic DB (basic.silent=true), workload A, 1 thread");
            Some(bench.run_ycsb_cpp(Path::new(&bin), ops)?)
        }
        None => None,
    };
    Ok(Figures {
        a1,
        a2,
        a1_std,
        a1_off,
        load_gbps,
        load_cpu_gbps,
        rss_mib,
        cpp,
    })
}

/// The summary table, each figure against its target.
fn print_summary(f: &Figures, probe: &ProbeFigures, load_before: &str, load_after: &str) {
    let (a1, a2, a1_std, a1_off, cpp) = (&f.a1, &f.a2, &f.a1_std, &f.a1_off, &f.cpp);
    let (load_gbps, load_cpu_gbps, rss_mib) = (f.load_gbps, f.load_cpu_gbps, f.rss_mib);
    let zipf_ms = probe.zipf_ms;
    let (clock_ns, clock_std_ns) = (probe.clock_ns.clone(), probe.clock_std_ns.clone());
    let per_op_ns = |rate: f64| 1e9 / rate;
    let timing_ns = per_op_ns(a1.per_cpu_second) - per_op_ns(a1_off.per_cpu_second);
    let timing_std_ns = per_op_ns(a1_std.per_cpu_second) - per_op_ns(a1_off.per_cpu_second);

    println!("\n== summary (wall: as measured; per CPU-s: operations per second of CPU time the process used)");
    println!("load average before: {load_before}; after: {load_after}");
    let row = |what: &str, value: String, target: &str, met: Option<bool>| {
        let verdict = match met {
            Some(true) => "met",
            Some(false) => "NOT met",
            None => "",
        };
        println!("{what:<48} {value:>22}  {target:<12} {verdict}");
    };
    let pair = |wall: f64, cpu: f64| format!("{wall:.2} | {cpu:.2}");
    row("figure", "wall | per CPU-s".into(), "target", None);
    row(
        "workload A, 1 thread (M ops/s)",
        pair(a1.throughput / 1e6, a1.per_cpu_second / 1e6),
        ">= 10",
        Some(a1.throughput >= 10e6),
    );
    match cpp {
        Some(cpp) => {
            row(
                "YCSB-cpp basic, 1 thread (M ops/s)",
                pair(cpp.throughput / 1e6, cpp.per_cpu_second / 1e6),
                "",
                None,
            );
            row(
                "ratio ours / YCSB-cpp",
                pair(
                    a1.throughput / cpp.throughput,
                    a1.per_cpu_second / cpp.per_cpu_second,
                ),
                ">= 5",
                Some(a1.throughput / cpp.throughput >= 5.0),
            );
        }
        None => row(
            "ratio ours / YCSB-cpp",
            "skipped".into(),
            "YCSB_CPP_BIN",
            None,
        ),
    }
    row(
        "workload A, 2 threads (M ops/s)",
        pair(a2.throughput / 1e6, a2.per_cpu_second / 1e6),
        "",
        None,
    );
    // Per CPU-second, perfect scaling keeps the rate per CPU-second: two
    // threads on two idle cores would then reach twice the 1-thread rate.
    row(
        "scaling 2 threads / 1 thread",
        pair(
            a2.throughput / a1.throughput,
            2.0 * a2.per_cpu_second / a1.per_cpu_second,
        ),
        ">= 1.8",
        Some(a2.throughput / a1.throughput >= 1.8),
    );
    row(
        "load value generation (GB/s per thread)",
        pair(load_gbps, load_cpu_gbps),
        ">= 1",
        Some(load_gbps >= 1.0),
    );
    row(
        "zipfian start-up, 10^10 items, worst (ms)",
        format!("{zipf_ms:.3}"),
        "< 50",
        Some(zipf_ms < 50.0),
    );
    row(
        "peak RSS, 10^9 records, 16 threads (MiB)",
        format!("{rss_mib:.1}"),
        "< 64",
        Some(rss_mib < 64.0),
    );
    row("clock reading, auto (ns)", clock_ns, "", None);
    row("clock reading, std (ns)", clock_std_ns, "", None);
    row(
        "workload A, timing off (M ops/s)",
        pair(a1_off.throughput / 1e6, a1_off.per_cpu_second / 1e6),
        "",
        None,
    );
    row(
        "timing cost per op, auto clock (ns/CPU)",
        format!("{timing_ns:.1}"),
        "",
        None,
    );
    row(
        "timing cost per op, std clock (ns/CPU)",
        format!("{timing_std_ns:.1}"),
        "",
        None,
    );
}

/// The steps `--baseline` alternates: (label, ycsb arguments after the
/// program's own tree, operations).
/// `ycsb run basic` of workload A (its file `workload`) as the bench
/// measures it: 10^6 records, `threads` clients, `clock` timing.
fn workload_a_args(workload: &str, threads: u64, operations: u64, clock: &str) -> Vec<String> {
    [
        "run",
        "basic",
        "-P",
        workload,
        "-p",
        "recordcount=1000000",
        "-p",
        &format!("operationcount={operations}"),
        "-p",
        &format!("measurement.clock={clock}"),
        "-threads",
        &threads.to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// `ycsb load basic` of `records` records of 10 fields of 100 bytes (the
/// workload file `workload`), one thread.
fn load_args(workload: &str, records: u64) -> Vec<String> {
    [
        "load",
        "basic",
        "-P",
        workload,
        "-p",
        &format!("recordcount={records}"),
        "-p",
        "fieldcount=10",
        "-p",
        "fieldlength=100",
        "-threads",
        "1",
    ]
    .map(String::from)
    .to_vec()
}

fn baseline_steps(options: &Options) -> Vec<(&'static str, Vec<String>, u64)> {
    let ops = options.operations;
    let workload = "workloads/workloada";
    let workload_a =
        |threads, operations, clock| workload_a_args(workload, threads, operations, clock);
    let load = load_args(workload, options.load_records);
    vec![
        ("workload A, 1 thread", workload_a(1, ops, "auto"), ops),
        (
            "workload A, 2 threads",
            workload_a(2, 2 * ops, "auto"),
            2 * ops,
        ),
        (
            "workload A, 1 thread, timing off",
            workload_a(1, ops, "off"),
            ops,
        ),
        ("load, 10 fields of 100 bytes", load, options.load_records),
    ]
}

/// `--baseline REV`: the steps of the bench whose figures are rates of the
/// whole client, with both builds alternated (see `baseline`).
fn compare(root: &Path, target: &Path, rev: &str, options: &Options) -> Result<()> {
    use crate::baseline::{self, Side};
    // A bad revision is told before anything is built.
    let commit = baseline::resolve(root, rev)?;
    if options.instructions {
        crate::engine_bench::check_valgrind()?;
    }
    let build = ["-p", "ycsb-cli", "--bin", "ycsb"];
    cargo(root, &[&["build", "--release"][..], &build[..]].concat())?;
    let base = baseline::prepare(root, target, &commit, |source, out| {
        baseline::cargo_build(source, out, &build)
    })?;
    let current = target.join("release").join("ycsb");
    let old = base.release().join("ycsb");
    let work = target.join("bench-baseline");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    println!(
        "== baseline {rev} = {commit}; current = the working tree at {}",
        root.display()
    );
    println!(
        "cpu: {}; cores: {}; clocksource: {}",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        clocksource()
    );
    let ops = options.operations;
    let steps = baseline_steps(options);
    let pairs = baseline::alternate(options.baseline.pairs, steps.len(), |side, step| {
        let (label, args, operations) = &steps[step];
        // Each build runs in its own tree, with its own workload files.
        let (bin, tree) = match side {
            Side::Baseline => (&old, base.source.as_path()),
            Side::Current => (&current, root),
        };
        if options.instructions {
            let cachegrind = crate::engine_bench::Cachegrind {
                out_file: work.join(format!("{step}-{side:?}.cachegrind")),
                log_file: work.join(format!("{step}-{side:?}.valgrind.log")),
            };
            run_capture(
                crate::engine_bench::client(bin, Some(&cachegrind))
                    .current_dir(tree)
                    .args(args),
            )?;
            let instructions = crate::engine_bench::instructions_of(&cachegrind)?;
            eprintln!("  {side:?} {label}: {instructions} instructions");
            return Ok(vec![(
                format!("{label}: instructions per operation"),
                instructions as f64 / *operations as f64,
            )]);
        }
        let run = measured_run(Command::new(bin).current_dir(tree).args(args), parse_ycsb)?;
        eprintln!(
            "  {side:?} {label}: {:.3} M ops/s, {:.3} M ops per CPU-s",
            run.throughput / 1e6,
            run.per_cpu_second / 1e6
        );
        Ok(vec![
            (format!("{label}: ops/s"), run.throughput),
            (format!("{label}: ops per CPU-s"), run.per_cpu_second),
        ])
    })?;
    pairs.print(base.short(), options.baseline.pairs);
    println!(
        "operations per run: {ops} (2 threads: {}), load records {}{}",
        2 * ops,
        options.load_records,
        if options.instructions {
            "; instructions of the whole process (start-up included) under valgrind --tool=cachegrind --cache-sim=no"
        } else {
            ""
        }
    );
    Ok(())
}

/// The best of several runs, figure by figure.
#[derive(Clone, Copy)]
struct Best {
    throughput: f64,
    per_cpu_second: f64,
    peak_rss_kib: u64,
}

struct Bench<'a> {
    ycsb: &'a Path,
    workload_a: &'a Path,
    rounds: usize,
}

impl Bench<'_> {
    /// Workload A on the basic store.
    fn run_a(&self, threads: u64, operations: u64, clock: &str) -> Result<Best> {
        let workload = self.workload_a.display().to_string();
        self.best(
            &workload_a_args(&workload, threads, operations, clock),
            &format!("{threads} thread(s), clock {clock}"),
        )
    }

    /// Runs `ycsb args` `rounds` times: the best throughputs, and the
    /// largest peak RSS.
    fn best<A: AsRef<std::ffi::OsStr>>(&self, args: &[A], label: &str) -> Result<Best> {
        let runs = (0..self.rounds)
            .map(|_| measured_run(Command::new(self.ycsb).args(args), parse_ycsb))
            .collect::<Result<Vec<_>>>()?;
        Ok(summarise(label, &runs))
    }

    /// YCSB-cpp's basic DB with output off, the same mix and sizes.
    fn run_ycsb_cpp(&self, bin: &Path, operations: u64) -> Result<Best> {
        // YCSB-cpp's property names are Java's; written out so that no
        // file of ours needs to suit its parser.
        let dir = std::env::temp_dir().join(format!("ycsb-bench-cpp-{}", std::process::id()));
        fs::create_dir_all(&dir)?;
        let props = dir.join("workloada-cpp");
        fs::write(
            &props,
            format!(
                "recordcount=1000000\noperationcount={operations}\nworkload=com.yahoo.ycsb.workloads.CoreWorkload\n\
                 readallfields=true\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\n\
                 insertproportion=0\nrequestdistribution=zipfian\nbasic.silent=true\n"
            ),
        )?;
        let mut runs = Vec::new();
        for _ in 0..self.rounds {
            let run = measured_run(
                Command::new(bin).args([
                    "-run",
                    "-db",
                    "basic",
                    "-P",
                    &props.display().to_string(),
                    "-threads",
                    "1",
                ]),
                parse_ycsb_cpp,
            );
            runs.push(run?);
        }
        let _ = fs::remove_dir_all(&dir);
        Ok(summarise("YCSB-cpp", &runs))
    }
}

fn summarise(label: &str, runs: &[Run]) -> Best {
    let mut best = Best {
        throughput: 0.0,
        per_cpu_second: 0.0,
        peak_rss_kib: 0,
    };
    let mut each = Vec::new();
    for run in runs {
        best.throughput = best.throughput.max(run.throughput);
        best.per_cpu_second = best.per_cpu_second.max(run.per_cpu_second);
        best.peak_rss_kib = best.peak_rss_kib.max(run.peak_rss_kib);
        each.push(format!(
            "{:.2} | {:.2}",
            run.throughput / 1e6,
            run.per_cpu_second / 1e6
        ));
    }
    println!(
        "  {label}: best {:.2} | {:.2} (runs: {})",
        best.throughput / 1e6,
        best.per_cpu_second / 1e6,
        each.join("; ")
    );
    best
}

fn cargo(root: &Path, args: &[&str]) -> Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(args)
        .current_dir(root)
        .status()
        .context("running cargo")?;
    if !status.success() {
        bail!("cargo {} failed", args.join(" "));
    }
    Ok(())
}

/// Runs a command to completion; its standard output and error, joined.
fn run_capture(command: &mut Command) -> Result<String> {
    let program = format!("{:?}", command.get_program());
    let out = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {program}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        bail!("{program} failed ({}):\n{text}", out.status);
    }
    Ok(text)
}

fn overall_throughput(report: &str) -> Option<f64> {
    report
        .lines()
        .find_map(|l| l.strip_prefix("[OVERALL], Throughput(ops/sec), "))
        .and_then(|v| v.trim().parse().ok())
}

/// What one run of `ycsb` showed.
struct Run {
    /// `[OVERALL], Throughput(ops/sec)`.
    throughput: f64,
    /// Operations per second of CPU time the process used (user + system):
    /// what the run would reach if nothing else competed for the cores.
    per_cpu_second: f64,
    /// The peak resident set (VmHWM), KiB.
    peak_rss_kib: u64,
}

/// Runs the command, polling its CPU time and peak resident set until it
/// ends. The kernel keeps the peak itself, and CPU time only grows, so
/// polling misses only the last few milliseconds of the process.
fn measured_run(command: &mut Command, parse: fn(&str) -> Option<(f64, f64)>) -> Result<Run> {
    let dir = std::env::temp_dir().join(format!("ycsb-bench-{}", std::process::id()));
    fs::create_dir_all(&dir)?;
    let out_path = dir.join("out");
    let out = fs::File::create(&out_path)?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .context("starting ycsb")?;
    let proc_dir = PathBuf::from(format!("/proc/{}", child.id()));
    let (mut peak, mut cpu_ticks) = (0u64, 0u64);
    let started = Instant::now();
    let status = loop {
        if let Some(kib) = fs::read_to_string(proc_dir.join("status"))
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            })
        {
            peak = peak.max(kib);
        }
        if let Some(ticks) = fs::read_to_string(proc_dir.join("stat"))
            .ok()
            .and_then(|stat| ycsb_results::ProcStat::parse(&stat))
            .map(|stat| stat.cpu_ticks())
        {
            cpu_ticks = cpu_ticks.max(ticks);
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let text = fs::read_to_string(&out_path).unwrap_or_default();
    let _ = fs::remove_dir_all(&dir);
    if !status.success() {
        bail!(
            "ycsb failed after {:?} ({status}):\n{text}",
            started.elapsed()
        );
    }
    let (throughput, runtime_s) = parse(&text)
        .with_context(|| format!("no throughput and run time in the output:\n{text}"))?;
    // USER_HZ is 100 on every Linux architecture this runs on.
    let cpu_s = cpu_ticks as f64 / 100.0;
    Ok(Run {
        throughput,
        per_cpu_second: if cpu_s > 0.0 {
            throughput * runtime_s / cpu_s
        } else {
            f64::NAN
        },
        peak_rss_kib: peak,
    })
}

/// Throughput and run time (s) from ycsb's text report.
fn parse_ycsb(report: &str) -> Option<(f64, f64)> {
    let runtime_ms: f64 = report
        .lines()
        .find_map(|l| l.strip_prefix("[OVERALL], RunTime(ms), "))?
        .trim()
        .parse()
        .ok()?;
    Some((overall_throughput(report)?, runtime_ms / 1e3))
}

/// Throughput and run time (s) from YCSB-cpp's output.
fn parse_ycsb_cpp(report: &str) -> Option<(f64, f64)> {
    let value = |prefix: &str| -> Option<f64> {
        report
            .lines()
            .find_map(|l| l.trim().strip_prefix(prefix))?
            .trim()
            .parse()
            .ok()
    };
    Some((
        value("Run throughput(ops/sec):")?,
        value("Run runtime(sec):")?,
    ))
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn clocksource() -> String {
    fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}
