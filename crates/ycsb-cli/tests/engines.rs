//! The seeds' command lines on the embedded engines, verbatim, in two
//! processes; engine version and final engine reports saved with the
//! results.

mod common;

use common::*;

/// Runs `ycsb` with `args` (whitespace-split) plus extra arguments.
fn ycsb_with(args: &str, extra: &[String]) -> std::process::Output {
    ycsb()
        .args(args.split_whitespace())
        .args(extra)
        .output()
        .expect("ycsb runs")
}

#[test]
fn ycsb_cpp_command_lines_load_then_run_in_a_second_process() {
    for db in ["leveldb", "rocksdb"] {
        let dir = tempfile::tempdir().unwrap();
        // The seeds' lines, with the data directory moved off /tmp's
        // shared default and the sizes kept small.
        let extra = vec![
            "-p".to_string(),
            format!("{db}.dbname={}", dir.path().join("db").display()),
            "-p".to_string(),
            "recordcount=2000".to_string(),
            "-p".to_string(),
            "operationcount=4000".to_string(),
        ];
        let load = ycsb_with(
            &format!("-load -db {db} -P workloads/workloada -P {db}/{db}.properties -s"),
            &extra,
        );
        assert!(load.status.success(), "{db} load: {}", stderr(&load));
        assert!(
            stdout(&load).contains("Load operations(ops): 2000"),
            "{}",
            stdout(&load)
        );
        let run = ycsb_with(
            &format!(
                "-run -db {db} -P workloads/workloada -P {db}/{db}.properties -s \
                 -p status.gauges={db}.num-files-at-level0"
            ),
            &extra,
        );
        assert!(run.status.success(), "{db} run: {}", stderr(&run));
        let out = stdout(&run);
        assert!(out.contains("Run operations(ops): 4000"), "{out}");
        // Every read finds the record the other process loaded.
        assert!(out.contains("[READ], Return=OK, "), "{out}");
        assert!(!out.contains("NOT_FOUND"), "{db}: {out}");
        // -s status lines carry the engine gauges asked for, only those.
        assert!(
            stderr(&run).contains(&format!("[{db}.num-files-at-level0=")),
            "{db}: {}",
            stderr(&run)
        );
        assert!(
            !stderr(&run).contains(&format!("[{db}.num-files-at-level1=")),
            "{db}: {}",
            stderr(&run)
        );
    }
}

#[test]
fn java_command_line_with_rocksdb_dir() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("ycsb-rocksdb-data");
    let o = ycsb()
        .args(["load", "rocksdb", "-s", "-P", "workloads/workloada", "-p"])
        .arg(format!("rocksdb.dir={}", data.display()))
        .args(["-p", "recordcount=500"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        report_value(&stdout(&o), "INSERT", "Return=OK").as_deref(),
        Some("500")
    );
    assert!(data.join("CURRENT").exists(), "rocksdb.dir was not used");
}

#[test]
fn engine_version_and_final_reports_are_saved_with_the_results() {
    for (db, report) in [("rocksdb", "rocksdb.stats"), ("leveldb", "leveldb.stats")] {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("out.json");
        let o = load_run(db, "workloads/workloadc")
            .arg("-p")
            .arg(format!("{db}.dbname={}", dir.path().join("db").display()))
            .args(["-p", "recordcount=1000", "-p", "operationcount=1000"])
            .args(json_export(&export))
            .output()
            .unwrap();
        assert!(o.status.success(), "{db}: {}", stderr(&o));
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
        assert_eq!(json["metadata"]["store"], db);
        let version = json["metadata"]["engine_version"]
            .as_str()
            .unwrap_or_default();
        assert!(
            version.split('.').count() >= 2
                && version.chars().next().is_some_and(|c| c.is_ascii_digit()),
            "{db}: engine version {version:?}"
        );
        let reports = json["engine_reports"].as_array().expect("engine reports");
        let stats = reports.iter().find(|r| r["name"] == report).expect(report);
        assert!(
            stats["text"].as_str().unwrap().contains("Compaction"),
            "{db}: {stats}"
        );
        let file = dir.path().join(format!("out.json.{report}.txt"));
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(text, stats["text"].as_str().unwrap());
    }
}

/// Every file under `dir` (relative name, length, contents), hashed: what
/// "touch nothing" is checked against.
fn checksum(dir: &std::path::Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut files = Vec::new();
    for path in files_under(dir) {
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let contents = std::fs::read(&path).unwrap();
        files.push((path, contents, modified));
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    files.hash(&mut h);
    h.finish()
}

/// Loads 200 records into `db` with `engine`.
fn load_into(engine: &str, db: &std::path::Path) {
    let o = ycsb_with(
        &format!("load {engine} -P workloads/workloada -p recordcount=200"),
        &["-p".into(), format!("{engine}.dbname={}", db.display())],
    );
    assert!(o.status.success(), "{engine}: {}", stderr(&o));
}

#[test]
fn a_database_directory_of_the_other_engine_is_refused_untouched() {
    for (maker, other, said) in [
        ("leveldb", "rocksdb", "LevelDB"),
        ("rocksdb", "leveldb", "RocksDB"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        load_into(maker, &db);
        let before = checksum(&db);
        for (verb, extra) in [("run", ""), ("load", ""), ("load", "destroy")] {
            let mut args = vec!["-p".to_string(), format!("{other}.dbname={}", db.display())];
            if extra == "destroy" {
                args.extend(["-p".to_string(), format!("{other}.destroy=true")]);
            }
            let o = ycsb_with(
                &format!("{verb} {other} -P workloads/workloada -p recordcount=200 -p operationcount=200"),
                &args,
            );
            let err = stderr(&o);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{maker} dir, {other} {verb} {extra}: {err}"
            );
            let error = one_error_line(&err);
            assert!(
                error.contains(&format!("holds a {said} database"))
                    && error.contains(&db.display().to_string()),
                "{}",
                error
            );
            assert!(!err.contains("panicked"), "{err}");
            assert_eq!(
                checksum(&db),
                before,
                "{other} {verb} {extra} changed the {maker} directory"
            );
        }
        // The engine that made it still reads it.
        let o = ycsb_with(
            &format!("run {maker} -P workloads/workloadc -p recordcount=200 -p operationcount=200"),
            &["-p".into(), format!("{maker}.dbname={}", db.display())],
        );
        assert!(o.status.success(), "{maker}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("[READ], Return=OK, 200"),
            "{}",
            stdout(&o)
        );
    }
}

#[test]
fn a_non_empty_directory_that_is_no_database_is_refused_untouched() {
    for engine in ["leveldb", "rocksdb"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "keep me\n").unwrap();
        std::fs::write(dir.path().join("000001.log"), "not a log\n").unwrap();
        let before = checksum(dir.path());
        for destroy in ["false", "true"] {
            let o = ycsb_with(
                &format!("load {engine} -P workloads/workloada -p recordcount=10 -p {engine}.destroy={destroy}"),
                &["-p".into(), format!("{engine}.dbname={}", dir.path().display())],
            );
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{engine}: {err}");
            assert!(
                err.contains("is not empty and holds no") && err.contains("notes.txt"),
                "{engine}: {err}"
            );
            assert_eq!(checksum(dir.path()), before, "{engine} destroy={destroy}");
        }
    }
}
