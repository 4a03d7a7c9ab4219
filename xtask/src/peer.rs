//! What the benches that compare a store with its server's own load tool
//! share (`redis-bench`, `memcached-bench`, `pg-bench`): the release build
//! of `ycsb`, a client run timed with its CPU time, and medians.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::machine::children_cpu_seconds;

/// One client process's run: its wall time and its CPU time (user +
/// system, from `getrusage` of the waited child), in seconds.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    pub wall: f64,
    pub cpu: f64,
}

/// Runs `command` to its end (no standard input), with its wall and CPU
/// time and its standard output.
///
/// # Errors
/// When it cannot start or fails; the error names `what` and quotes its
/// standard error.
pub fn timed(command: &mut Command, what: &str) -> Result<(Run, String)> {
    let cpu_before = children_cpu_seconds();
    let start = Instant::now();
    let out = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("starting {what}"))?;
    let wall = start.elapsed().as_secs_f64();
    let cpu = children_cpu_seconds() - cpu_before;
    if !out.status.success() {
        bail!(
            "{what} failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok((
        Run { wall, cpu },
        String::from_utf8_lossy(&out.stdout).into(),
    ))
}

/// The median (the mean of the middle two for an even count; NaN for
/// none).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Builds the current tree's `ycsb` in release mode; returns the binary.
///
/// # Errors
/// A failed build.
pub fn build_ycsb(root: &Path, bench: &str) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("{bench}: building ycsb (release)");
    crate::run(Command::new(&cargo).current_dir(root).args([
        "build",
        "--release",
        "-p",
        "ycsb-cli",
        "--bin",
        "ycsb",
    ]))?;
    Ok(crate::target::target_dir(root).join("release").join("ycsb"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_odd_even_and_no_values() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }
}
