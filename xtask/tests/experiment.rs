//! End-to-end tests of `cargo xtask experiment` with the real `ycsb`
//! binary on the basic and memory stores: a run killed with SIGKILL or
//! interrupted with SIGINT resumes without redoing complete cells and never
//! leaves half a result; summaries and the report appear.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{experiment, write_matrix, ycsb};
use tempfile::TempDir;

/// A fresh directory with a matrix: 6 cells of about a second each (the
/// target rate paces them, so the test can stop the run mid-cell).
fn setup() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let matrix = write_matrix(
        &dir.path().join("m.toml"),
        "workloada",
        r#"name = "e2e"
baseline = { db = "basic" }

[properties]
recordcount = 200
operationcount = 1500
target = 1500
fieldcount = 2

[axes]
db = ["basic", "memory"]
fieldlength = [8, 16, 32]
"#,
    );
    (dir, matrix)
}

fn start(dir: &Path, matrix: &Path, extra: &[&str]) -> Child {
    experiment(matrix, &dir.join("results"))
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn cells_dir(dir: &Path) -> PathBuf {
    dir.join("results").join("e2e").join("cells")
}

/// (complete cell names, partial directory names).
fn state(dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut complete = Vec::new();
    let mut partial = Vec::new();
    if let Ok(entries) = std::fs::read_dir(cells_dir(dir)) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(".partial-") {
                partial.push(name);
            } else if name.starts_with(".failed-") {
                panic!(
                    "a cell failed: see {}",
                    e.path().join("stderr.txt").display()
                );
            } else {
                assert!(
                    e.path().join("cell.json").is_file(),
                    "{name} is a cell directory without cell.json"
                );
                complete.push(name);
            }
        }
    }
    complete.sort();
    (complete, partial)
}

/// Waits until `n` cells are complete and the next one is under way.
fn wait_mid_cell(dir: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (complete, partial) = state(dir);
        if complete.len() >= n && !partial.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no progress: {complete:?} {partial:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn finish(child: Child) -> (Output, String) {
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, err)
}

#[test]
fn a_killed_run_resumes_and_keeps_complete_cells() {
    let (tmp, matrix) = setup();
    let dir = tmp.path();
    let mut child = start(dir, &matrix, &[]);
    wait_mid_cell(dir, 2);
    // SAFETY: a plain syscall on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let (before, _) = state(dir);
    assert!(before.len() >= 2 && before.len() < 6, "{before:?}");
    let first = cells_dir(dir).join(&before[0]).join("cell.json");
    let first_record = std::fs::read_to_string(&first).unwrap();
    // The killed xtask's ycsb died with it (no more writes into the partial cell).
    std::thread::sleep(Duration::from_millis(300));

    let (out, err) = finish(start(dir, &matrix, &[]));
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("{} already complete", before.len())),
        "{err}"
    );
    let (after, partial) = state(dir);
    assert_eq!(after.len(), 6, "{after:?}");
    assert!(partial.is_empty(), "{partial:?}");
    assert_eq!(
        std::fs::read_to_string(&first).unwrap(),
        first_record,
        "a complete cell was redone"
    );

    // Provenance of a cell.
    let cell = cells_dir(dir).join("db=memory,fieldlength=16,r1");
    for f in [
        "export.json",
        "timeseries.json",
        "command.txt",
        "properties.txt",
        "stderr.txt",
        "cell.json",
    ] {
        assert!(cell.join(f).is_file(), "{f} missing");
    }
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cell.join("cell.json")).unwrap()).unwrap();
    assert_eq!(
        record["command"][0].as_str().unwrap(),
        ycsb().canonicalize().unwrap().to_str().unwrap()
    );
    assert!(record["command"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "fieldlength=16"));
    assert!(record["host"]["logical_cpus"].as_u64().unwrap() >= 1);
    assert!(record["db_dir"]["type"].is_string(), "{}", record["db_dir"]);
    assert!(record["engine_version"]
        .as_str()
        .unwrap()
        .contains("memory"));
    assert!(record["start_time"].is_string() && record["end_time"].is_string());
    let props = std::fs::read_to_string(cell.join("properties.txt")).unwrap();
    assert!(props.contains("fieldlength=16    # -p flag"), "{props}");
    // The phases' facts come from the export, not from ycsb's standard
    // error: each phase's intervals are the export's series.
    let export: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cell.join("export.json")).unwrap()).unwrap();
    let series: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cell.join("timeseries.json")).unwrap())
            .unwrap();
    let phases = series.as_array().unwrap();
    assert_eq!(phases.len(), export["phases"].as_array().unwrap().len());
    for (p, e) in phases.iter().zip(export["phases"].as_array().unwrap()) {
        assert_eq!(p["phase"], e["phase"]);
        let rows = e["observation"]["series"].as_array().unwrap();
        assert!(!rows.is_empty(), "{e}");
        assert_eq!(p["status"].as_array().unwrap().len(), rows.len());
        let last = &p["status"].as_array().unwrap()[rows.len() - 1];
        assert_eq!(last["operations"], e["operations"], "{p}");
        let (start, end) = (p["start_s"].as_f64().unwrap(), p["end_s"].as_f64().unwrap());
        let runtime = e["runtime_ns"].as_f64().unwrap() / 1e9;
        assert!(start >= 0.0 && (end - start - runtime).abs() < 1e-6, "{p}");
    }

    // Summaries and the report.
    let results = dir.join("results").join("e2e");
    let csv = std::fs::read_to_string(results.join("summary-run.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7, "{csv}");
    assert!(
        csv.starts_with("db,fieldlength,repeats,ops_per_sec_mean"),
        "{csv}"
    );
    let basic = csv.lines().find(|l| l.starts_with("basic,8,")).unwrap();
    assert!(
        basic.contains(",1,"),
        "baseline ratio 1 for the baseline itself: {basic}"
    );
    let md = std::fs::read_to_string(results.join("summary.md")).unwrap();
    assert!(
        md.contains("### run phase") && md.contains("| memory | 32 |"),
        "{md}"
    );
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    assert!(
        html.matches("<svg").count() >= 4,
        "bars, throughput, CDF and CPU charts"
    );
    // Self-contained: no scripts, no fetched resources (the only URL is the SVG namespace).
    assert!(!html.contains("<script") && !html.contains("src=") && !html.contains("https://"));

    renders_in_chromium(&results.join("report.html"), dir);

    // Complete now: nothing runs again, unless forced.
    let (out, err) = finish(start(dir, &matrix, &[]));
    assert!(
        out.status.success() && err.contains("0 cells run, 6 already complete"),
        "{err}"
    );
    let (out, err) = finish(start(dir, &matrix, &["--force"]));
    assert!(
        out.status.success() && err.contains("6 cells run, 0 already complete"),
        "{err}"
    );
    assert_ne!(
        std::fs::read_to_string(&first).unwrap(),
        first_record,
        "--force reruns"
    );
}

/// Headless Chromium (Debian package chromium, installed by `cargo xtask
/// deps`) parses the report and paints it without the network.
fn renders_in_chromium(report: &Path, dir: &Path) {
    let chromium = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok())
        .expect("chromium is not installed: run cargo xtask deps");
    let headless = |extra: &[String]| {
        let out = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
            ])
            .arg(format!(
                "--user-data-dir={}",
                dir.join("chromium").display()
            ))
            .args(extra)
            .arg(format!("file://{}", report.display()))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let dom = String::from_utf8_lossy(&headless(&["--dump-dom".into()]).stdout).into_owned();
    let source = std::fs::read_to_string(report).unwrap();
    assert_eq!(
        dom.matches("<svg").count(),
        source.matches("<svg").count(),
        "every chart parsed"
    );
    assert!(
        dom.contains("<table>") || dom.contains("<table"),
        "tables parsed"
    );
    let png = dir.join("report.png");
    headless(&[
        format!("--screenshot={}", png.display()),
        "--window-size=1200,1600".into(),
    ]);
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
    // A blank page compresses to a few kilobytes; charts and tables do not.
    assert!(
        bytes.len() > 30_000,
        "the screenshot has content ({} bytes)",
        bytes.len()
    );
}

#[test]
fn ctrl_c_discards_the_partial_cell_and_resumes() {
    let (tmp, matrix) = setup();
    let dir = tmp.path();
    let child = start(dir, &matrix, &[]);
    wait_mid_cell(dir, 1);
    let stopped = Instant::now();
    // SAFETY: a plain syscall on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (out, err) = finish(child);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("interrupted") && err.contains("resume"),
        "{err}"
    );
    // Not a timing assertion on the benchmark: an upper bound on the stop
    // so that a hang fails rather than waiting for every cell.
    assert!(stopped.elapsed() < Duration::from_secs(30));
    let (complete, partial) = state(dir);
    assert!(partial.is_empty(), "{partial:?}");
    assert!(!complete.is_empty() && complete.len() < 6, "{complete:?}");
    let (out, err) = finish(start(dir, &matrix, &[]));
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("{} already complete", complete.len())),
        "{err}"
    );
    assert_eq!(state(dir).0.len(), 6);
}

#[test]
fn a_bad_matrix_is_refused_before_anything_runs() {
    let (tmp, matrix) = setup();
    let dir = tmp.path();
    let text = std::fs::read_to_string(&matrix).unwrap().replace(
        "db = [\"basic\", \"memory\"]",
        "db = [\"basic\", \"memroy\"]",
    );
    std::fs::write(&matrix, text).unwrap();
    let (out, err) = finish(start(dir, &matrix, &[]));
    assert!(!out.status.success());
    assert!(
        err.contains("m.toml:14: axes.db: unknown db 'memroy'"),
        "{err}"
    );
    assert!(!dir.join("results").exists(), "nothing ran");
}
