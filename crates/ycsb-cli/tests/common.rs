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

/// The count a report gives for `name` in `section` (`Return=OK`,
/// `Operations`), 0 when the line is missing.
pub fn report_count(report: &str, section: &str, name: &str) -> u64 {
    report_value(report, section, name).map_or(0, |v| v.trim().parse().unwrap())
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

/// Every path under `dir` (not `dir` itself), sorted, each with whether it
/// is a directory: what the "untouched" snapshots are made of.
pub fn paths_under(dir: &Path) -> Vec<(PathBuf, bool)> {
    let mut paths = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let is_dir = path.is_dir();
            if is_dir {
                pending.push(path.clone());
            }
            paths.push((path, is_dir));
        }
    }
    paths.sort();
    paths
}

/// Every file under `dir`, sorted: [`paths_under`] without directories.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    paths_under(dir)
        .into_iter()
        .filter(|(_, is_dir)| !is_dir)
        .map(|(path, _)| path)
        .collect()
}

/// Runs `ycsb report <exports> -o <out>`, which must succeed, and returns
/// its output.
pub fn ycsb_report<P: AsRef<std::ffi::OsStr>>(exports: &[P], out: &Path) -> Output {
    let o = ycsb()
        .arg("report")
        .args(exports)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

/// Runs [`ycsb_report`] and returns the page or document it wrote.
pub fn report_page<P: AsRef<std::ffi::OsStr>>(exports: &[P], out: &Path) -> String {
    ycsb_report(exports, out);
    std::fs::read_to_string(out).unwrap()
}

/// The records of the three-process integrity runs: 2000 of four 50-byte
/// fields, written and read with `dataintegrity=true`.
pub const INTEGRITY_RECORDS: [&str; 8] = [
    "-p",
    "dataintegrity=true",
    "-p",
    "recordcount=2000",
    "-p",
    "fieldcount=4",
    "-p",
    "fieldlength=50",
];

/// A run that reads each of [`INTEGRITY_RECORDS`] once, in key order.
pub const READ_EACH_RECORD: [&str; 8] = [
    "-p",
    "operationcount=2000",
    "-p",
    "readproportion=1",
    "-p",
    "updateproportion=0",
    "-p",
    "requestdistribution=sequential",
];

/// `ycsb bench` (and db_bench) flags for a production-like mixgraph: 83%
/// gets, 14% puts and 3% seeks, over 30 key ranges whose hotness follows
/// the two-term exponential model (`--keyrange_dist_a/b/c/d`), keys within
/// a range drawn by the power model (`--key_dist_a/b`).
pub const MIXGRAPH_SKEWED_MODEL: [&str; 10] = [
    "--mix_get_ratio=0.83",
    "--mix_put_ratio=0.14",
    "--mix_seek_ratio=0.03",
    "--keyrange_dist_a=14.18",
    "--keyrange_dist_b=-2.917",
    "--keyrange_dist_c=0.0164",
    "--keyrange_dist_d=-0.08082",
    "--keyrange_num=30",
    "--key_dist_a=0.002312",
    "--key_dist_b=0.3467",
];

/// `-p exporter=json -p exportfile=<path>`: the run's JSON export.
pub fn json_export(path: &Path) -> [String; 4] {
    [
        "-p".into(),
        "exporter=json".into(),
        "-p".into(),
        format!("exportfile={}", path.display()),
    ]
}

/// The address `ycsb serve` printed in `line` after `marker` (such as
/// ` over RESP at `).
pub fn address_after(line: &str, marker: &str) -> std::net::SocketAddr {
    let (_, rest) = line
        .split_once(marker)
        .unwrap_or_else(|| panic!("no '{marker}' in {line}"));
    rest.split_whitespace().next().unwrap().parse().unwrap()
}
