//! Every result names the engine build it ran on (issue #22): the stderr
//! header, db_bench's warning for an engine built with assertions, the
//! JSON export, `ycsb report` and `ycsb bench`'s header. By default the
//! build links Debian's libraries (assertions on); `cargo xtask test` runs
//! these again against release engines when `cargo xtask engines` built
//! them, with `YCSB_<ENGINE>_EXPECT_ASSERTIONS=disabled`.

mod common;

use common::*;

const WARNING: &str = "WARNING: Assertions are enabled; benchmarks unnecessarily slow";

/// What the build of `db`'s engine must say: `enabled` for Debian's
/// libraries unless the release path says otherwise.
fn expected_assertions(db: &str) -> String {
    std::env::var(format!("YCSB_{}_EXPECT_ASSERTIONS", db.to_uppercase()))
        .unwrap_or_else(|_| "enabled".into())
}

#[test]
fn the_header_the_export_and_the_report_name_the_engine_build() {
    for (db, engine) in [("rocksdb", "RocksDB"), ("leveldb", "LevelDB")] {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("out.json");
        let o = load_run(db, "workloads/workloadc")
            .arg("-p")
            .arg(format!("{db}.dbname={}", dir.path().join("db").display()))
            .args(["-p", "recordcount=100", "-p", "operationcount=100"])
            .args(json_export(&export))
            .output()
            .unwrap();
        assert!(o.status.success(), "{db}: {}", stderr(&o));
        let err = stderr(&o);
        let expected = expected_assertions(db);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
        let build = &json["metadata"]["engine_build"];
        assert_eq!(build["assertions"], expected.as_str(), "{db}: {build}");
        let library = build["library"].as_str().expect("library");
        assert!(
            library == "static" || library.contains(&format!("lib{db}.so")),
            "{db}: {library}"
        );
        // The header names the same build, once, before the first phase,
        // and warns as db_bench does exactly when assertions are on.
        let line = err
            .lines()
            .find(|l| l.starts_with("Engine: "))
            .unwrap_or_else(|| panic!("{db}: no Engine line in {err}"));
        assert!(line.starts_with(&format!("Engine: {engine} ")), "{line}");
        assert!(
            line.contains(&format!("{library}, assertions {expected}")),
            "{line}"
        );
        assert_eq!(err.matches("Engine: ").count(), 1, "{err}");
        assert_eq!(err.contains(WARNING), expected == "enabled", "{db}: {err}");
        let engine_at = err.find("Engine: ").unwrap();
        assert!(engine_at < err.find("load phase").unwrap(), "{err}");

        // The report shows it beside the charts and warns the same way.
        let html = dir.path().join("report.html");
        let page = report_page(&[&export], &html);
        // The summary's build row: `library: ..., assertions: ...`.
        assert!(page.contains(&library.to_string()), "{db}");
        assert!(page.contains(&format!("assertions: {expected}")), "{db}");
        assert_eq!(page.contains(WARNING), expected == "enabled", "{db}");
    }
}

#[test]
fn a_store_without_an_engine_prints_no_build() {
    let o = ycsb()
        .args(["-load", "-db", "basic", "-P", "workloads/workloadc"])
        .args(["-p", "recordcount=10", "-p", "basicdb.verbose=false"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains(WARNING), "{}", stderr(&o));
}

#[test]
fn ycsb_bench_prints_the_build_in_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let o = ycsb()
        .args([
            "bench",
            "--db-engine=rocksdb",
            "--benchmarks=fillseq",
            "--num=100",
        ])
        .arg(format!("--db={}", dir.path().join("db").display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let expected = expected_assertions("rocksdb");
    let build = out
        .lines()
        .find(|l| l.starts_with("Build:"))
        .unwrap_or_else(|| panic!("no Build line: {out}"));
    assert!(build.contains(&format!("assertions {expected}")), "{build}");
    assert_eq!(out.contains(WARNING), expected == "enabled", "{out}");
}
