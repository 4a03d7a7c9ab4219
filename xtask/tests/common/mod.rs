//! What xtask's tests share: the workspace and its Rust files; for the
//! end-to-end tests of `cargo xtask experiment` (and the container
//! recipe's), the `ycsb` binary they run, a matrix file, the runner's
//! command and reading what it wrote.
//!
//! Each test file is its own crate and uses only part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Every `.rs` file below `dir` (sources, tests, examples), without the
/// build output and git's files.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != ".git" {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The workload property file `workloads/<name>` of the workspace.
pub fn workload(name: &str) -> PathBuf {
    root().join("workloads").join(name)
}

/// The debug `ycsb` binary, built once per test binary if needed (cargo
/// releases its lock before running tests, so this nested build is
/// allowed); `XTASK_TEST_YCSB` names a prebuilt one instead, e.g. while
/// the workspace is mid-edit.
pub fn ycsb() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(build_ycsb).clone()
}

fn build_ycsb() -> PathBuf {
    if let Some(prebuilt) = std::env::var_os("XTASK_TEST_YCSB") {
        return PathBuf::from(prebuilt);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root())
        .args(["build", "-q", "-p", "ycsb-cli"])
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building ycsb-cli failed");
    // The test binary is target/debug/deps/<name>; ycsb is target/debug/ycsb.
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap().join("ycsb");
    assert!(bin.is_file(), "{} missing", bin.display());
    bin
}

/// Writes a matrix file at `path`: its `[experiment]` table opens with
/// `io_ceiling = "off"` (no test measures the disk) and the workspace's
/// workload file `workloads/<workload_name>` as the property file, then `rest` (more keys
/// of `[experiment]`, then the other tables). `rest` starts on line 4.
pub fn write_matrix(path: &Path, workload_name: &str, rest: &str) -> PathBuf {
    let text = format!(
        "[experiment]\nio_ceiling = \"off\"\nproperty_files = [\"{}\"]\n{rest}",
        workload(workload_name).display()
    );
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path.to_path_buf()
}

/// `cargo xtask experiment <matrix> --results <results>` with the test's
/// `ycsb`, to add arguments to and run.
pub fn experiment(matrix: &Path, results: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command
        .arg("experiment")
        .arg(matrix)
        .arg("--results")
        .arg(results)
        .arg("--ycsb")
        .arg(ycsb());
    command
}

/// Runs [`experiment`] with `extra` arguments to its end: its output and
/// its standard error as text.
pub fn run_experiment(matrix: &Path, results: &Path, extra: &[&str]) -> (Output, String) {
    let out = experiment(matrix, results).args(extra).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, err)
}

/// A file the runner wrote, as text.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSON file the runner wrote.
pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
