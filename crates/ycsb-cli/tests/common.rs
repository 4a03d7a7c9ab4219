//! Helpers shared by the end-to-end tests of the `ycsb` binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (where `workloads/` lives).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// A `ycsb` command run from the repository root.
pub fn ycsb() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ycsb"));
    c.current_dir(root());
    c
}

/// Runs `ycsb` with `args` (split on whitespace) and returns its output.
pub fn run(args: &str) -> Output {
    ycsb()
        .args(args.split_whitespace())
        .output()
        .expect("ycsb runs")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The value of `[section], name, value` in a Java text report (first
/// occurrence after `skip` earlier `[OVERALL], RunTime` blocks).
pub fn report_value(report: &str, section: &str, name: &str) -> Option<String> {
    let prefix = format!("[{section}], {name}, ");
    report
        .lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
}

/// The `ycsb: error: ` lines of standard error `err`.
pub fn error_lines(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.starts_with("ycsb: error: "))
        .collect()
}

/// The one `ycsb: error: ` line of standard error `err`: the test fails,
/// showing `err`, unless there is exactly one.
pub fn one_error_line(err: &str) -> &str {
    let errors = error_lines(err);
    assert_eq!(errors.len(), 1, "{err}");
    errors[0]
}

/// A `ycsb -load -run -db <db> -P <workload>` command, to add to.
pub fn load_run(db: &str, workload: &str) -> Command {
    let mut c = ycsb();
    c.args(["-load", "-run", "-db", db, "-P", workload]);
    c
}
