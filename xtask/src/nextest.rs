//! The test suite under cargo-nextest, when it is installed: every test in
//! its own process, both cores busy across test binaries, and each test's
//! time, of which the slowest ten are printed at the end so that a test
//! that grows slow is seen before it slows CI down.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// How many of the slowest tests are printed after the run.
const SLOWEST_SHOWN: usize = 10;

/// Whether `cargo nextest` can run here.
pub fn available(cargo: &str) -> bool {
    Command::new(cargo)
        .args(["nextest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs the workspace's tests under nextest, passing its output through,
/// then prints the slowest tests.
///
/// # Errors
///
/// When nextest cannot be started or a test fails (after the slowest tests
/// are printed).
pub fn run(root: &Path, cargo: &str, extra: &[String]) -> Result<()> {
    let mut child = Command::new(cargo)
        .current_dir(root)
        // Every failure in one run, not only the first: a CI run is
        // minutes long, and its log should say all that is wrong.
        .args([
            "nextest",
            "run",
            "--workspace",
            "--all-targets",
            "--no-fail-fast",
        ])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start cargo nextest")?;
    let stderr = child.stderr.take().context("nextest's stderr")?;
    let mut times: Vec<(f64, String)> = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.context("reading nextest's output")?;
        eprintln!("{line}");
        if let Some((seconds, test)) = finished_test(&line) {
            match times.iter_mut().find(|(_, name)| *name == test) {
                Some(known) => known.0 = known.0.max(seconds),
                None => times.push((seconds, test)),
            }
        }
    }
    let status = child.wait().context("waiting for cargo nextest")?;
    eprintln!("{}", slowest(&mut times, SLOWEST_SHOWN));
    if !status.success() {
        bail!("cargo nextest run failed ({status})");
    }
    Ok(())
}

/// The time and name of a test from one of nextest's result lines
/// (`PASS [   1.234s] (12/998) crate::binary test_name`); `None` for any
/// other line (progress, `SLOW` notices, build output).
fn finished_test(line: &str) -> Option<(f64, String)> {
    let line = line.trim_start();
    let rest = ["PASS", "FAIL", "FLAKY", "TIMEOUT"]
        .iter()
        .find_map(|status| line.strip_prefix(status))?
        .trim_start()
        .strip_prefix('[')?;
    let (time, rest) = rest.split_once(']')?;
    let seconds: f64 = time.trim().strip_suffix('s')?.trim().parse().ok()?;
    let mut rest = rest.trim_start();
    if rest.starts_with('(') {
        rest = rest.split_once(')')?.1.trim_start();
    }
    (!rest.is_empty()).then(|| (seconds, rest.to_string()))
}

/// The `count` slowest tests as lines to print.
fn slowest(times: &mut [(f64, String)], count: usize) -> String {
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out = format!("xtask: the {} slowest tests:", count.min(times.len()));
    for (seconds, test) in times.iter().take(count) {
        out.push_str(&format!("\n  {seconds:8.3} s  {test}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_give_their_test_and_time() {
        assert_eq!(
            finished_test("        PASS [  11.328s] ( 13/998) xtask::deploy the_jobs_run"),
            Some((11.328, "xtask::deploy the_jobs_run".to_string()))
        );
        assert_eq!(
            finished_test("        FAIL [   0.117s] ycsb-rocksdb::errors property_errors"),
            Some((0.117, "ycsb-rocksdb::errors property_errors".to_string()))
        );
        for other in [
            "        SLOW [> 60.000s] (195/998) ycsb-cli::merge_memory a_large_log",
            "   Compiling xtask v0.0.0 (/work/main/xtask)",
            "     Summary [ 301.322s] 998 tests run: 997 passed (1 slow), 1 failed",
            "PASS",
        ] {
            assert_eq!(finished_test(other), None, "{other}");
        }
    }

    #[test]
    fn the_slowest_come_first_and_only_as_many_as_asked() {
        let mut times = vec![
            (0.5, "a".to_string()),
            (75.0, "b".to_string()),
            (3.0, "c".to_string()),
        ];
        let text = slowest(&mut times, 2);
        assert_eq!(
            text,
            "xtask: the 2 slowest tests:\n    75.000 s  b\n     3.000 s  c"
        );
    }
}
