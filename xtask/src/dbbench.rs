//! `cargo xtask dbbench-compare`: Debian's `db_bench` and `ycsb bench
//! --db-engine rocksdb` side by side, with the same flags, on the same
//! RocksDB shared library, and the throughput ratios.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// The benchmarks compared, in this order, each in its own process on the
/// database the previous one left.
const BENCHMARKS: &[&str] = &["fillseq", "fillrandom", "overwrite", "readrandom"];

/// The goal: our throughput within 5 % of db_bench's.
const TOLERANCE: f64 = 0.05;

pub const USAGE: &str = "  dbbench-compare
          build ycsb (release), run Debian's db_bench and 'ycsb bench --db-engine rocksdb'
          with the same flags (fillseq, fillrandom, overwrite, readrandom) and print both
          and the ratios; options: --num N (default 500000), --threads N (default 1),
          --repeat N (default 3, the median run counts), --value_size N (default 100),
          --dir PATH (default target/dbbench-compare); --core N: both programs pinned to
          core N; --one-process: the four benchmarks in one process per program with
          db_bench's plain flags (--num, --value_size, --key_size=16, --threads and a seed
          per round shared by both), as a user types them;
          --baseline REV [--pairs N]: instead of db_bench, ycsb built from REV (under
          target/baseline/), the two builds alternated, N pairs (default 5): both
          medians, the paired ratio current/baseline and its range
";

fn option(args: &[String], name: &str, default: u64) -> Result<u64> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => {
            let v = args
                .get(i + 1)
                .with_context(|| format!("{name} needs a value"))?;
            v.parse()
                .with_context(|| format!("{name} {v}: expected a whole number"))
        }
    }
}

/// The `ops/sec` figure of each benchmark line in db_bench's format.
fn parse_ops(output: &str) -> Vec<(String, f64)> {
    output
        .lines()
        .filter_map(|line| {
            let (name, rest) = line.split_once(" : ")?;
            let tokens: Vec<&str> = rest.split_whitespace().collect();
            let at = tokens.iter().position(|t| *t == "ops/sec")?;
            let ops = tokens.get(at.checked_sub(1)?)?.parse().ok()?;
            Some((name.trim().to_string(), ops))
        })
        .collect()
}

fn run_capture(command: &mut Command, what: &str) -> Result<String> {
    let out = command
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .with_context(|| format!("starting {what}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        bail!(
            "{what} failed ({}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        );
    }
    Ok(stdout)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median over the rounds of `ours[i] / theirs[i]`: within a round the
/// two programs ran one benchmark back to back, under nearly the same
/// machine load.
fn paired_ratio(ours: &[f64], theirs: &[f64]) -> f64 {
    median(ours.iter().zip(theirs).map(|(o, t)| o / t).collect())
}

/// `cargo xtask dbbench-compare`'s flags.
struct CompareOptions {
    num: u64,
    threads: u64,
    repeat: u64,
    value_size: u64,
    /// The core both programs are pinned to (`--core`).
    core: Option<usize>,
    one_process: bool,
    /// `--dir`: where the databases go.
    dir: Option<PathBuf>,
}

fn parse_compare_options(args: &[String]) -> Result<CompareOptions> {
    for a in args.iter().filter(|a| a.starts_with("--")) {
        if ![
            "--num",
            "--threads",
            "--repeat",
            "--value_size",
            "--dir",
            "--core",
            "--one-process",
        ]
        .contains(&a.as_str())
        {
            bail!("dbbench-compare: unknown option {a}");
        }
    }
    Ok(CompareOptions {
        num: option(args, "--num", 500_000)?,
        threads: option(args, "--threads", 1)?,
        repeat: option(args, "--repeat", 3)?.max(1),
        value_size: option(args, "--value_size", 100)?,
        core: match args.iter().position(|a| a == "--core") {
            None => None,
            Some(_) => Some(option(args, "--core", 0)? as usize),
        },
        one_process: args.iter().any(|a| a == "--one-process"),
        dir: match args.iter().position(|a| a == "--dir") {
            Some(i) => Some(PathBuf::from(
                args.get(i + 1).context("--dir needs a value")?,
            )),
            None => None,
        },
    })
}

pub fn compare(args: &[String]) -> Result<()> {
    let (baseline, args) = crate::baseline::Request::take(args)?;
    let CompareOptions {
        num,
        threads,
        repeat,
        value_size,
        core,
        one_process,
        dir,
    } = parse_compare_options(&args)?;
    let root = crate::project_root();
    if let Some(rev) = &baseline.rev {
        let dir = dir.unwrap_or_else(|| crate::target::target_dir(&root).join("dbbench-baseline"));
        let flags = common_flags(num, threads, value_size);
        return compare_builds(&root, rev, baseline.pairs, &dir, &flags, num * threads);
    }
    // With release engines built (`cargo xtask engines`), their db_bench,
    // from the same source and linked to the same library ycsb links;
    // else Debian's db_bench and library.
    let release = crate::engines::ReleaseEngines::find(&root);
    let db_bench = match &release.rocksdb {
        Some(r) => r.db_bench(),
        None => PathBuf::from("/usr/bin/db_bench"),
    };
    if !db_bench.exists() {
        bail!(
            "{} is missing: install the rocksdb-tools package (cargo xtask deps)",
            db_bench.display()
        );
    }
    eprintln!("xtask: db_bench: {}", db_bench.display());
    let target = crate::engines::build_release(&root, &["-p", "ycsb-cli"])?;
    let ycsb = target.join("release").join("ycsb");
    let target = crate::engines::default_target(&root);
    let dir = dir.unwrap_or_else(|| target.join("dbbench-compare"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let program = |tool: Tool| {
        let mut c = match tool {
            Tool::DbBench => {
                let mut c = Command::new(&db_bench);
                c.arg("--progress_reports=false");
                c
            }
            Tool::Ycsb => {
                let mut c = Command::new(&ycsb);
                c.args(["bench", "--db-engine", "rocksdb"]);
                c
            }
        };
        if let Some(core) = core {
            crate::machine::pin(&mut c, core);
        }
        c
    };
    if let Some(core) = core {
        eprintln!("xtask: both programs pinned to core {core}");
    }
    if one_process {
        return compare_one_process(&dir, program, num, threads, value_size, repeat);
    }
    let common = common_flags(num, threads, value_size);
    let (rows, options_diff) =
        measure_per_benchmark(&dir, &program, &common, num * threads, repeat)?;
    print_per_benchmark(rows, options_diff, num, threads, value_size, repeat);
    Ok(())
}

/// How the two programs' OPTIONS files differ after fillseq (`<`, `>`
/// lines), or why they could not be compared.
type OptionsDiff = Result<Vec<String>>;

/// Each benchmark in its own process (on the database the previous one
/// left, --use_existing_db), the two programs alternating, `repeat`
/// rounds; with the OPTIONS files' difference after fillseq.
fn measure_per_benchmark(
    dir: &Path,
    program: &dyn Fn(Tool) -> Command,
    common: &[String],
    operations: u64,
    repeat: u64,
) -> Result<(Vec<Row>, Option<OptionsDiff>)> {
    // Each benchmark runs in its own process (on the database the
    // previous one left, --use_existing_db), alternating the two programs,
    // so that both see the same machine load; the CPU time of each process
    // (getrusage of the children) is the figure least disturbed by other
    // work on a shared machine.
    let mut rows = empty_rows();
    let mut options_diff = None;
    for round in 1..=repeat {
        // Each benchmark runs for both programs back to back (each on its
        // own database), the first program alternating between rounds, so
        // that neither always meets the quieter or the warmer machine.
        let order = if round % 2 == 1 {
            [Tool::DbBench, Tool::Ycsb]
        } else {
            [Tool::Ycsb, Tool::DbBench]
        };
        for tool in order {
            let _ = std::fs::remove_dir_all(dir.join(tool.name()));
        }
        let round_load = crate::machine::load_average();
        for row in rows.iter_mut() {
            for tool in order {
                let db = dir.join(tool.name());
                // fillseq and fillrandom start fresh; overwrite and
                // readrandom use what fillrandom wrote.
                let existing = !matches!(row.name, "fillseq" | "fillrandom");
                let mut command = program(tool);
                command
                    .args(common)
                    .arg(format!("--benchmarks={}", row.name))
                    .arg(format!("--use_existing_db={existing}"))
                    .arg(format!("--db={}", db.display()));
                let before = children_cpu();
                let out = run_capture(&mut command, tool.name())?;
                let cpu = children_cpu() - before;
                let ops = parse_ops(&out)
                    .into_iter()
                    .find(|(n, _)| n == row.name)
                    .map(|(_, o)| o)
                    .with_context(|| format!("{}: no {} line in:\n{out}", tool.name(), row.name))?;
                print_lines(tool.name(), &out);
                eprintln!(
                    "  {:<8} {:<12} process CPU {cpu:.3} s (round {round})",
                    tool.name(),
                    row.name
                );
                let ops_per_cpu = operations as f64 / cpu.max(1e-9);
                match tool {
                    Tool::DbBench => {
                        row.theirs.push(ops);
                        row.theirs_cpu.push(ops_per_cpu);
                    }
                    Tool::Ycsb => {
                        row.ours.push(ops);
                        row.ours_cpu.push(ops_per_cpu);
                    }
                }
            }
            if options_diff.is_none() && row.name == "fillseq" {
                options_diff = Some(compare_options(
                    &dir.join(Tool::DbBench.name()),
                    &dir.join(Tool::Ycsb.name()),
                ));
            }
        }
        for tool in order {
            let _ = std::fs::remove_dir_all(dir.join(tool.name()));
        }
        eprintln!(
            "  round {round}: load average before {round_load}, after {}",
            crate::machine::load_average()
        );
    }
    Ok((rows, options_diff))
}

/// The per-benchmark table: throughput and operations per CPU-second,
/// ratios of the medians and paired ratios; then the OPTIONS difference.
fn print_per_benchmark(
    rows: Vec<Row>,
    options_diff: Option<OptionsDiff>,
    num: u64,
    threads: u64,
    value_size: u64,
    repeat: u64,
) {
    println!();
    println!(
        "RocksDB 7.8.3 (Debian librocksdb.so.7.8, shared by both), num={num}, threads={threads}, value_size={value_size}, median of {repeat}"
    );
    println!(
        "| {:<11} | {:>14} | {:>14} | {:>7} | {:>7} | {:>16} | {:>16} | {:>7} | {:>7} |",
        "benchmark",
        "db_bench ops/s",
        "ycsb ops/s",
        "ratio",
        "paired",
        "db_bench ops/cpu-s",
        "ycsb ops/cpu-s",
        "ratio",
        "paired"
    );
    println!(
        "|{:-<13}|{:->16}|{:->16}|{:->9}|{:->9}|{:->18}|{:->18}|{:->9}|{:->9}|",
        "", "", "", "", "", "", "", "", ""
    );
    let mut outside = Vec::new();
    for row in rows {
        let paired = paired_ratio(&row.ours, &row.theirs);
        let cpu_paired = paired_ratio(&row.ours_cpu, &row.theirs_cpu);
        let (t, o) = (median(row.theirs), median(row.ours));
        let (tc, oc) = (median(row.theirs_cpu), median(row.ours_cpu));
        let (ratio, cpu_ratio) = (o / t, oc / tc);
        if (ratio - 1.0).abs() > TOLERANCE {
            outside.push(row.name);
        }
        println!(
            "| {:<11} | {t:>14.0} | {o:>14.0} | {ratio:>7.3} | {paired:>7.3} | {tc:>16.0} | {oc:>16.0} | {cpu_ratio:>7.3} | {cpu_paired:>7.3} |",
            row.name
        );
    }
    println!("\nratio = ycsb / db_bench of the medians; paired = the median of each round's ratio (the two ran back to back); ops/cpu-s counts the whole process (open, close, background threads).");
    match options_diff {
        Some(Ok(lines)) if lines.is_empty() => {
            println!("OPTIONS files after fillseq: identical");
        }
        Some(Ok(lines)) => {
            println!("OPTIONS files after fillseq differ in (< db_bench, > ycsb):");
            for line in lines {
                println!("  {line}");
            }
        }
        Some(Err(e)) => println!("OPTIONS files not compared: {e:#}"),
        None => {}
    }
    println!(
        "load average at the end: {}",
        crate::machine::load_average()
    );
    if outside.is_empty() {
        println!("throughput: all within {:.0}%", TOLERANCE * 100.0);
    } else {
        println!(
            "throughput outside {:.0}%: {}",
            TOLERANCE * 100.0,
            outside.join(", ")
        );
    }
}

/// A row for each benchmark, with no figure yet.
fn empty_rows() -> Vec<Row> {
    BENCHMARKS
        .iter()
        .map(|b| Row {
            name: b,
            ..Row::default()
        })
        .collect()
}

/// `--one-process`: per round, each program runs all of [`BENCHMARKS`]
/// in one process with db_bench's plain flags, the two programs back to
/// back, the first alternating between rounds; the table has each
/// benchmark's throughput and the whole process's CPU time per wall
/// second.
fn compare_one_process(
    dir: &Path,
    program: impl Fn(Tool) -> Command,
    num: u64,
    threads: u64,
    value_size: u64,
    repeat: u64,
) -> Result<()> {
    let mut rows = empty_rows();
    // (CPU seconds, wall seconds) of each process.
    let (mut theirs_cpu, mut ours_cpu) = (Vec::new(), Vec::new());
    let mut found: Vec<String> = Vec::new();
    for round in 1..=repeat {
        let order = if round % 2 == 1 {
            [Tool::DbBench, Tool::Ycsb]
        } else {
            [Tool::Ycsb, Tool::DbBench]
        };
        let before = crate::machine::load_average();
        for tool in order {
            let db = dir.join(tool.name());
            let _ = std::fs::remove_dir_all(&db);
            let mut command = program(tool);
            command
                .arg(format!("--benchmarks={}", BENCHMARKS.join(",")))
                .arg(format!("--num={num}"))
                .arg(format!("--value_size={value_size}"))
                .arg("--key_size=16")
                .arg(format!("--threads={threads}"))
                // Both draw the same keys in a round; another round, others.
                .arg(format!("--seed={round}"))
                .arg(format!("--db={}", db.display()));
            let cpu_before = children_cpu();
            let started = std::time::Instant::now();
            let out = run_capture(&mut command, tool.name())?;
            let wall = started.elapsed().as_secs_f64();
            let cpu = children_cpu() - cpu_before;
            let _ = std::fs::remove_dir_all(&db);
            print_lines(tool.name(), &out);
            if let Some(line) = out.lines().find(|l| l.contains(" found)")) {
                let tail = &line[line.rfind('(').unwrap_or(0)..];
                found.push(format!("{} round {round}: {tail}", tool.name()));
            }
            eprintln!(
                "  {:<8} process: {cpu:.3} CPU s in {wall:.3} s (round {round})",
                tool.name()
            );
            let ops = parse_ops(&out);
            for row in rows.iter_mut() {
                let o = ops
                    .iter()
                    .find(|(n, _)| n == row.name)
                    .map(|(_, o)| *o)
                    .with_context(|| format!("{}: no {} line in:\n{out}", tool.name(), row.name))?;
                match tool {
                    Tool::DbBench => row.theirs.push(o),
                    Tool::Ycsb => row.ours.push(o),
                }
            }
            match tool {
                Tool::DbBench => theirs_cpu.push(cpu / wall.max(1e-9)),
                Tool::Ycsb => ours_cpu.push(cpu / wall.max(1e-9)),
            }
        }
        eprintln!(
            "  round {round}: load average before {before}, after {}",
            crate::machine::load_average()
        );
    }
    println!();
    println!(
        "one process each, --num={num} --value_size={value_size} --key_size=16 --threads={threads}, median of {repeat}"
    );
    println!(
        "| {:<11} | {:>14} | {:>14} | {:>7} | {:>7} |",
        "benchmark", "db_bench ops/s", "ycsb ops/s", "ratio", "paired"
    );
    println!(
        "|{:-<13}|{:->16}|{:->16}|{:->9}|{:->9}|",
        "", "", "", "", ""
    );
    for row in rows {
        let paired = paired_ratio(&row.ours, &row.theirs);
        let (t, o) = (median(row.theirs), median(row.ours));
        println!(
            "| {:<11} | {t:>14.0} | {o:>14.0} | {:>7.3} | {paired:>7.3} |",
            row.name,
            o / t
        );
    }
    println!(
        "process CPU seconds per wall second (median): db_bench {:.2}, ycsb {:.2}",
        median(theirs_cpu),
        median(ours_cpu)
    );
    for line in found {
        println!("  {line}");
    }
    println!(
        "load average at the end: {}",
        crate::machine::load_average()
    );
    Ok(())
}

/// The flags both programs take.
fn common_flags(num: u64, threads: u64, value_size: u64) -> Vec<String> {
    // The flags both programs take, spelled out so that neither relies on
    // a default the other does not share. Same library, same options:
    // snappy, an 8 MiB block cache, 64 MiB memtables, no Bloom filter.
    vec![
        format!("--num={num}"),
        format!("--threads={threads}"),
        "--key_size=16".into(),
        format!("--value_size={value_size}"),
        "--compression_ratio=0.5".into(),
        "--compression_type=snappy".into(),
        "--cache_size=8388608".into(),
        "--write_buffer_size=67108864".into(),
        "--max_write_buffer_number=2".into(),
        "--max_background_jobs=2".into(),
        "--bloom_bits=-1".into(),
        "--open_files=-1".into(),
        "--seed=42".into(),
        // RocksDB's per-thread perf context off, db_bench's default and the
        // binding's (rocksdb.perf_level=1); said explicitly on both sides.
        "--perf_level=1".into(),
    ]
}

/// `--baseline REV`: `ycsb bench` of the baseline's build against the
/// current one, each benchmark alternated (see `baseline`); every
/// benchmark runs on the database the same build's previous one left.
fn compare_builds(
    root: &Path,
    rev: &str,
    pairs: usize,
    dir: &Path,
    flags: &[String],
    operations: u64,
) -> Result<()> {
    use crate::baseline::{self, Side};
    let commit = baseline::resolve(root, rev)?;
    let build = ["-p", "ycsb-cli", "--bin", "ycsb"];
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    crate::run(
        Command::new(&cargo)
            .current_dir(root)
            .args(["build", "--release"])
            .args(build),
    )?;
    let target = crate::target::target_dir(root);
    let base = baseline::prepare(root, &target, &commit, |source, out| {
        baseline::cargo_build(source, out, &build)
    })?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    println!(
        "dbbench-compare: baseline {rev} = {commit}; ycsb bench --db-engine rocksdb {}",
        flags.join(" ")
    );
    let result = baseline::alternate(pairs, BENCHMARKS.len(), |side, step| {
        let benchmark = BENCHMARKS[step];
        let (bin, db) = match side {
            Side::Baseline => (base.release().join("ycsb"), dir.join("baseline")),
            Side::Current => (target.join("release").join("ycsb"), dir.join("current")),
        };
        let existing = !matches!(benchmark, "fillseq" | "fillrandom");
        if !existing {
            let _ = std::fs::remove_dir_all(&db);
        }
        let before = children_cpu();
        let out = run_capture(
            Command::new(&bin)
                .args(["bench", "--db-engine", "rocksdb"])
                .args(flags)
                .arg(format!("--benchmarks={benchmark}"))
                .arg(format!("--use_existing_db={existing}"))
                .arg(format!("--db={}", db.display())),
            &format!("{side:?} ycsb bench"),
        )?;
        let cpu = children_cpu() - before;
        let ops = parse_ops(&out)
            .into_iter()
            .find(|(n, _)| n == benchmark)
            .map(|(_, o)| o)
            .with_context(|| format!("{side:?} ycsb: no {benchmark} line in:\n{out}"))?;
        eprintln!("  {side:?} {benchmark}: {ops:.0} ops/s, process CPU {cpu:.3} s");
        Ok(vec![
            (format!("{benchmark}: ops/s"), ops),
            (
                format!("{benchmark}: ops per CPU-s"),
                operations as f64 / cpu.max(1e-9),
            ),
        ])
    })?;
    for side in ["baseline", "current"] {
        let _ = std::fs::remove_dir_all(dir.join(side));
    }
    result.print(base.short(), pairs);
    Ok(())
}

/// The option lines (not comments) that differ between the newest
/// `OPTIONS-*` files of two database directories, as `< line` (only in
/// `a`) and `> line` (only in `b`).
fn compare_options(a: &Path, b: &Path) -> Result<Vec<String>> {
    let read = |dir: &Path| -> Result<Vec<String>> {
        let newest = std::fs::read_dir(dir)
            .with_context(|| format!("listing {}", dir.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("OPTIONS-"))
            })
            .max()
            .with_context(|| format!("no OPTIONS file in {}", dir.display()))?;
        let text = std::fs::read_to_string(&newest)
            .with_context(|| format!("reading {}", newest.display()))?;
        let mut lines: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        lines.sort();
        Ok(lines)
    };
    let (x, y) = (read(a)?, read(b)?);
    let mut out: Vec<String> = x
        .iter()
        .filter(|l| !y.contains(l))
        .map(|l| format!("< {l}"))
        .collect();
    out.extend(
        y.iter()
            .filter(|l| !x.contains(l))
            .map(|l| format!("> {l}")),
    );
    Ok(out)
}

#[derive(Clone, Copy)]
enum Tool {
    DbBench,
    Ycsb,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::DbBench => "db_bench",
            Tool::Ycsb => "ycsb",
        }
    }
}

#[derive(Default)]
struct Row {
    name: &'static str,
    theirs: Vec<f64>,
    ours: Vec<f64>,
    theirs_cpu: Vec<f64>,
    ours_cpu: Vec<f64>,
}

/// User plus system CPU seconds of every waited-for child so far.
fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given and has no other
    // effect.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn print_lines(who: &str, output: &str) {
    for line in output.lines().filter(|l| l.contains(" ops/sec ")) {
        eprintln!("  {who:<8} {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_db_bench_lines() {
        let out = "DB path: [/tmp/x]\n\
            fillseq      :       3.622 micros/op 276122 ops/sec 1.811 seconds 500000 operations;   30.5 MB/s\n\
            readrandom   :       6.531 micros/op 153119 ops/sec 3.265 seconds 500000 operations;   10.7 MB/s (315873 of 500000 found)\n";
        assert_eq!(
            parse_ops(out),
            vec![
                ("fillseq".to_string(), 276122.0),
                ("readrandom".to_string(), 153119.0)
            ]
        );
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
    }
}
