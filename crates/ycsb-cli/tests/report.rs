//! `ycsb report`: charts from a real run's JSON export, as HTML and SVG.

mod common;

use common::*;

/// Runs LevelDB for about three seconds with a 1 s time series and returns
/// the export's path (inside `dir`).
fn leveldb_export(dir: &std::path::Path) -> std::path::PathBuf {
    let export = dir.join("run.json");
    let mut cmd = ycsb();
    cmd.args([
        "-load",
        "-run",
        "-db",
        "leveldb",
        "-P",
        "workloads/workloada",
    ])
    .arg("-p")
    .arg(format!("leveldb.dbname={}", dir.join("db").display()))
    .args(["-p", "recordcount=20000", "-p", "operationcount=0"])
    .args(["-p", "maxexecutiontime=3", "-p", "exporter=json", "-p"])
    .arg(format!("exportfile={}", export.display()));
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    export
}

#[test]
fn report_draws_the_four_charts_of_each_phase() {
    let dir = tempfile::tempdir().unwrap();
    let export = leveldb_export(dir.path());
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let rows = doc["phases"][1]["observation"]["series"]
        .as_array()
        .unwrap();
    assert!(rows.len() >= 2, "the run phase has a time series");

    let html = dir.path().join("charts.html");
    let mut cmd = ycsb();
    cmd.arg("report").arg(&export).arg("-o").arg(&html);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        !page.contains("<script") && !page.contains("src="),
        "self-contained"
    );
    for heading in ["load phase", "run phase"] {
        assert!(page.contains(&format!("<h2>{heading}</h2>")), "{heading}");
    }
    for title in [
        "Throughput",
        "Latency percentiles",
        "CPU",
        "Files per level",
    ] {
        assert_eq!(
            page.matches(&format!(">{title}</text>")).count(),
            2,
            "{title}"
        );
    }
    // Lines were drawn (not only "no data"): throughput, READ/UPDATE
    // latencies, CPU and at least level 0 of LevelDB.
    assert!(page.matches("<path d=\"M").count() >= 8, "{page}");
    assert!(page.contains(">READ p99<") && page.contains(">client user<"));
    // 20 MB through a 4 MB write buffer: files appear on some level.
    assert!(
        (0..7).any(|level| page.contains(&format!(">L{level}<"))),
        "LevelDB's files per level are charted"
    );

    let svg = dir.path().join("charts.svg");
    let mut cmd = ycsb();
    cmd.arg("report").arg(&export).arg("-o").arg(&svg);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_eq!(text.matches("<svg ").count(), 9, "a page with 8 charts");
}
