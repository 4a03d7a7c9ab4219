//! `cargo xtask overhead`: what the time series, resource sampling and
//! stability figures cost the client. Runs the `basic` store (which does
//! nothing, so the client is all that is measured) with observation off
//! (`timeseries.granularity=0`) and on (the default 1 s granularity with a
//! series file, a DB directory to walk and a monitored process; and a
//! 0.1 s granularity), alternating the configurations round by round so
//! that drift of the machine hits all of them alike, and prints the median
//! throughput of each and its drop against off.
//!
//! Throughput on a loaded machine (other builds, a shared CI runner) swings
//! by more than the effect measured, so the CPU time each run consumed
//! (user + system, all threads, from the `cutime`/`cstime` of waited-for
//! children in `/proc/self/stat`) is reported too: the cost of observation
//! per operation, which contention does not inflate the same way.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::machine::children_cpu_seconds;
use crate::{flag_value, run};

/// One configuration: a name and its extra arguments.
struct Config {
    name: &'static str,
    args: Vec<String>,
}

fn throughput(stdout: &str) -> Option<f64> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("[OVERALL], Throughput(ops/sec), "))
        .and_then(|v| v.trim().parse().ok())
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Runs the comparison.
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    for a in args.iter().filter(|a| a.starts_with("--")) {
        if !["--rounds", "--operations", "--threads"].contains(&a.as_str()) {
            bail!("overhead: unknown option {a}");
        }
    }
    let rounds = flag_value(args, "--rounds", 5)?.max(1);
    let operations = flag_value(args, "--operations", 50_000_000)?;
    let threads = flag_value(args, "--threads", 1)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("xtask: building ycsb (release)");
    run(Command::new(&cargo)
        .current_dir(root)
        .args(["build", "--release", "-p", "ycsb-cli"]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let ycsb = target.join("release").join("ycsb");
    let work = target.join("overhead");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;

    let on = |granularity: &str, file: &str| -> Vec<String> {
        vec![
            "-p".into(),
            format!("timeseries.granularity={granularity}"),
            "-p".into(),
            format!("timeseries.file={}", work.join(file).display()),
            "-p".into(),
            format!("monitor.dir={}", root.join("crates").display()),
            "-p".into(),
            format!("monitor.pid={}", std::process::id()),
        ]
    };
    let configs = [
        Config {
            name: "off (timeseries.granularity=0)",
            args: vec!["-p".into(), "timeseries.granularity=0".into()],
        },
        Config {
            name: "on, 1 s (default)",
            args: on("1000", "series-1s.jsonl"),
        },
        Config {
            name: "on, 0.1 s",
            args: on("100", "series-100ms.csv"),
        },
    ];
    let mut results: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    let mut cpu_ns: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    for round in 0..rounds as usize {
        for k in 0..configs.len() {
            // Rotate the order each round.
            let i = (round + k) % configs.len();
            let mut command = Command::new(&ycsb);
            command.current_dir(root).args([
                "run",
                "basic",
                "-p",
                "basicdb.verbose=false",
                "-p",
                "recordcount=1000",
                "-p",
                &format!("operationcount={operations}"),
                "-p",
                &format!("threadcount={threads}"),
                "-p",
                "seed=1",
            ]);
            command.args(&configs[i].args);
            let cpu_before = children_cpu_seconds();
            let output = command
                .output()
                .with_context(|| format!("cannot start {}", ycsb.display()))?;
            let stdout = String::from_utf8_lossy(&output.stdout);
            if !output.status.success() {
                bail!(
                    "ycsb failed ({}): {}",
                    output.status,
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            let t = throughput(&stdout).context("no [OVERALL] throughput in the report")?;
            let cpu = (children_cpu_seconds() - cpu_before) * 1e9 / operations.max(1) as f64;
            eprintln!(
                "xtask: round {}/{rounds} {}: {t:.0} ops/s, {cpu:.1} ns CPU/op",
                round + 1,
                configs[i].name
            );
            results[i].push(t);
            cpu_ns[i].push(cpu);
        }
    }
    let off = median(&mut results[0].clone());
    let off_cpu = median(&mut cpu_ns[0].clone());
    println!(
        "basic store, {threads} thread(s), {operations} operations, median of {rounds} rounds:"
    );
    for ((config, values), cpu) in configs
        .iter()
        .zip(results.iter_mut())
        .zip(cpu_ns.iter_mut())
    {
        let m = median(values);
        let c = median(cpu);
        println!(
            "  {:<32} {:>12.0} ops/s {:+7.2}% vs off   {:>7.2} ns CPU/op {:+7.2}% vs off",
            config.name,
            m,
            (m - off) / off * 100.0,
            c,
            (c - off_cpu) / off_cpu * 100.0
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_report_and_takes_medians() {
        let report = "[OVERALL], RunTime(ms), 10\n[OVERALL], Throughput(ops/sec), 1234.5\n";
        assert_eq!(throughput(report), Some(1234.5));
        assert_eq!(throughput("nothing"), None);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
