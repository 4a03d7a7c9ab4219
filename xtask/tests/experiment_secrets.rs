//! Matrix results never hold a password: a matrix that sets
//! `redis.password` (and a server `--requirepass`-style secret, a
//! misspelled `redis.pasword`, credential headers in `http.headers` and
//! user:password in a URL) runs, and
//! no file of its results (commands, properties, exports, standard error,
//! summaries, report) contains the secret.

use std::path::{Path, PathBuf};
use std::process::Command;

const PASSWORD: &str = "Matrix-S3cret-4d1b";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The debug `ycsb` binary (see tests/experiment.rs).
fn ycsb() -> PathBuf {
    if let Some(p) = std::env::var_os("XTASK_TEST_YCSB") {
        return PathBuf::from(p);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root())
        .args(["build", "-q", "-p", "ycsb-cli"])
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building ycsb-cli failed");
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap().join("ycsb");
    assert!(bin.is_file(), "{} missing", bin.display());
    bin
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn matrix_results_never_hold_a_password() {
    let dir = tempfile_dir();
    let matrix = dir.join("m.toml");
    std::fs::write(
        &matrix,
        format!(
            r#"[experiment]
name = "secret"
io_ceiling = "off"
property_files = ["{}"]

[properties]
recordcount = 50
operationcount = 200
"redis.password" = "{PASSWORD}"
"http.auth_token" = "{PASSWORD}"
"redis.pasword" = "{PASSWORD}"
"http.headers" = "Authorization: Bearer {PASSWORD} | Cookie: sid={PASSWORD} | X-Api-Key: {PASSWORD} | Accept: */*"
"backup.url" = "http://alice:{PASSWORD}@10.0.0.1:8080/"

[axes]
db = ["basic"]
"#,
            root().join("workloads").join("workloada").display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("experiment")
        .arg(&matrix)
        .arg("--results")
        .arg(dir.join("results"))
        .arg("--ycsb")
        .arg(ycsb())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(!stdout.contains(PASSWORD), "{stdout}");
    assert!(!stderr.contains(PASSWORD), "{stderr}");
    let mut all = Vec::new();
    files(&dir.join("results"), &mut all);
    assert!(
        all.iter().any(|p| p.ends_with("command.txt")),
        "no cell ran: {all:?}"
    );
    for path in &all {
        let bytes = std::fs::read(path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(PASSWORD),
            "the password leaked into {}: {text}",
            path.display()
        );
    }
    // The redaction is visible where the value was.
    let command: String = all
        .iter()
        .filter(|p| p.ends_with("command.txt"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(command.contains("redis.password=<redacted>"), "{command}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-secrets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
