//! Matrix results never hold a password: a matrix that sets
//! `redis.password` (and a server `--requirepass`-style secret, a
//! misspelled `redis.pasword`, credential headers in `http.headers` and
//! user:password in a URL) runs, and
//! no file of its results (commands, properties, exports, standard error,
//! summaries, report) contains the secret.

mod common;

use std::path::{Path, PathBuf};

use common::{experiment, write_matrix};

const PASSWORD: &str = "Matrix-S3cret-4d1b";

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
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let matrix = write_matrix(
        &dir.join("m.toml"),
        "workloada",
        &format!(
            r#"name = "secret"

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
"#
        ),
    );
    let out = experiment(&matrix, &dir.join("results")).output().unwrap();
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
}
