//! The B-tree engines (lmdb, sqlite) through the binary, case by case for
//! each: YCSB-cpp's command lines with the shipped property files, a load
//! and a run in two processes with data integrity verified, workload E's
//! scans, the engine's version and reports in the export, `ycsb serve`
//! on the engine, and the failures (a full disk, a foreign or read-only
//! directory) ending with one clear line.

mod common;
mod rel_support;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use common::*;
use rel_support::*;

/// (store, the property naming its data directory, a gauge the -s status
/// lines carry, the engine's final report)
const ENGINES: &[(&str, &str, &str, &str)] = &[
    ("lmdb", "lmdb.dbpath", "lmdb.depth=", "lmdb.stat"),
    ("sqlite", "sqlite.dbpath", "sqlite.pages=", "sqlite.stats"),
];

fn ycsb_args(args: &str, extra: &[String]) -> Output {
    ycsb()
        .args(args.split_whitespace())
        .args(extra)
        .output()
        .expect("ycsb runs")
}

fn dir_property(property: &str, dir: &Path) -> Vec<String> {
    vec!["-p".into(), format!("{property}={}", dir.display())]
}

/// YCSB-cpp's SQLite as YCSB-cpp runs it: `sqlite.dbpath` naming the
/// database file in a directory shared with other files, and
/// `sqlite.schema=columns`, its table of a column per field, under
/// workload A (half updates of one column) with data integrity, load and
/// run in two processes.
#[test]
fn sqlite_as_ycsb_cpp_lays_it_out_a_database_file_and_a_column_per_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let file = dir.path().join("ycsb-sqlite.db");
    let extra: Vec<String> = [
        format!("sqlite.dbpath={}", file.display()),
        "sqlite.schema=columns".into(),
        "recordcount=1000".into(),
        "operationcount=2000".into(),
        "dataintegrity=true".into(),
    ]
    .iter()
    .flat_map(|p| ["-p".to_string(), p.clone()])
    .collect();
    for phase in ["-load", "-run"] {
        let o = ycsb_args(
            &format!(
                "{phase} -db sqlite -P workloads/workloada -P sqlite/sqlite.properties -threads 2"
            ),
            &extra,
        );
        assert!(o.status.success(), "{phase}: {}", stderr(&o));
        let out = stdout(&o);
        for bad in ["NOT_FOUND", "UNEXPECTED_STATE", "Return=ERROR"] {
            assert!(!out.contains(bad), "{phase}: {bad} in {out}");
        }
        if phase == "-run" {
            assert!(out.contains("[VERIFY], Return=OK, "), "{out}");
            assert!(out.contains("[UPDATE], Return=OK, "), "{out}");
        }
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["notes.txt", "ycsb-sqlite.db"]);
    let db = std::fs::read(&file).unwrap();
    assert!(db.starts_with(b"SQLite format 3\0"));
    // The table's definition is in the file's schema page, as YCSB-cpp's.
    let text = String::from_utf8_lossy(&db);
    assert!(text.contains("\"field9\" TEXT"), "a column per field");
}

#[test]
fn ycsb_cpp_command_lines_with_integrity_load_then_run_in_a_second_process() {
    for (db, property, gauge, _) in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let mut extra = dir_property(property, &dir.path().join("db"));
        extra.extend(
            [
                "recordcount=2000",
                "operationcount=4000",
                "dataintegrity=true",
            ]
            .iter()
            .flat_map(|p| ["-p".to_string(), p.to_string()]),
        );
        let load = ycsb_args(
            &format!("-load -db {db} -P workloads/workloada -P {db}/{db}.properties -s"),
            &extra,
        );
        assert!(load.status.success(), "{db} load: {}", stderr(&load));
        assert!(
            stdout(&load).contains("Load operations(ops): 2000"),
            "{db}: {}",
            stdout(&load)
        );
        let run = ycsb_args(
            &format!("-run -db {db} -P workloads/workloada -P {db}/{db}.properties -s -p status.gauges=all"),
            &extra,
        );
        assert!(run.status.success(), "{db} run: {}", stderr(&run));
        let out = stdout(&run);
        assert!(out.contains("Run operations(ops): 4000"), "{db}: {out}");
        // Every read finds the record the other process loaded, with the
        // bytes the workload derived from its key.
        assert!(out.contains("[READ], Return=OK, "), "{db}: {out}");
        assert!(out.contains("[VERIFY], Return=OK, "), "{db}: {out}");
        for bad in ["NOT_FOUND", "UNEXPECTED_STATE", "Return=ERROR"] {
            assert!(!out.contains(bad), "{db}: {bad} in {out}");
        }
        assert!(stderr(&run).contains(gauge), "{db}: {}", stderr(&run));
    }
}

#[test]
fn workload_e_scans_in_key_order_with_integrity() {
    for (db, property, _, _) in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let mut extra = dir_property(property, &dir.path().join("db"));
        extra.extend(
            [
                "recordcount=1000",
                "operationcount=1000",
                "dataintegrity=true",
            ]
            .iter()
            .flat_map(|p| ["-p".to_string(), p.to_string()]),
        );
        let o = ycsb_args(
            &format!("-load -run -db {db} -P workloads/workloade -P {db}/{db}.properties"),
            &extra,
        );
        assert!(o.status.success(), "{db}: {}", stderr(&o));
        let out = stdout(&o);
        let scans = report_value(&out, "SCAN", "Operations")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        assert!(scans > 800, "{db}: {out}");
        assert_eq!(
            report_value(&out, "SCAN", "Return=OK"),
            Some(scans.to_string()),
            "{db}: {out}"
        );
        for bad in ["UNEXPECTED_STATE", "Return=ERROR"] {
            assert!(!out.contains(bad), "{db}: {bad} in {out}");
        }
    }
}

#[test]
fn engine_version_library_and_reports_are_saved_with_the_results() {
    for (db, property, _, report) in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("out.json");
        let mut extra = dir_property(property, &dir.path().join("db"));
        extra.extend(["-p".into(), format!("exportfile={}", export.display())]);
        let o = ycsb_args(
            &format!(
                "-load -run -db {db} -P workloads/workloadc -p recordcount=500 \
                 -p operationcount=500 -p exporter=json"
            ),
            &extra,
        );
        assert!(o.status.success(), "{db}: {}", stderr(&o));
        let json = read_json(&export);
        assert_eq!(json["metadata"]["store"], *db);
        let version = json["metadata"]["engine_version"]
            .as_str()
            .unwrap_or_default();
        assert!(
            version.split('.').count() == 3
                && version.chars().next().is_some_and(|c| c.is_ascii_digit()),
            "{db}: engine version {version:?}"
        );
        let reports = json["engine_reports"].as_array().expect("engine reports");
        let names: Vec<&str> = reports.iter().filter_map(|r| r["name"].as_str()).collect();
        assert!(names.contains(report), "{db}: {names:?}");
        let options = reports
            .iter()
            .find(|r| r["name"] == format!("{db}.options"))
            .expect("options report");
        let text = options["text"].as_str().unwrap();
        assert!(
            text.contains(&format!("version={version}\n")) && text.contains("library=/"),
            "{db}: {text}"
        );
        assert!(dir.path().join(format!("out.json.{report}.txt")).is_file());
    }
}

#[test]
fn a_read_only_directory_is_one_clear_error() {
    for (db, property, _, _) in ENGINES {
        // Read-only for root too: a read-only mount.
        let fs = Tmpfs::mount("1m,ro");
        let o = ycsb_args(
            &format!("load {db} -P workloads/workloada -p recordcount=10"),
            &dir_property(property, &fs.path().join("db")),
        );
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{db}: {err}");
        assert_eq!(o.status.code(), Some(2), "{db}: {err}");
        let errors = error_lines(&err);
        assert_eq!(errors.len(), 1, "{db}: {err}");
        assert!(
            errors[0].contains(property) && errors[0].contains("Read-only file system"),
            "{db}: {}",
            errors[0]
        );
    }
}

/// Every file under `dir` with its contents: what "untouched" is checked
/// against.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    files_under(dir)
        .into_iter()
        .map(|path| {
            let contents = std::fs::read(&path).unwrap();
            (path, contents)
        })
        .collect()
}

#[test]
fn another_engine_s_database_is_refused_untouched() {
    // (the engine that makes the directory, its property, what the other
    // engines say about it)
    let makers = [
        ("leveldb", "leveldb.dbname", "LevelDB"),
        ("lmdb", "lmdb.dbpath", "LMDB"),
        ("sqlite", "sqlite.dbpath", "SQLite"),
    ];
    for (maker, maker_property, said) in makers {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let o = ycsb_args(
            &format!("load {maker} -P workloads/workloada -p recordcount=100"),
            &dir_property(maker_property, &db),
        );
        assert!(o.status.success(), "{maker}: {}", stderr(&o));
        let before = snapshot(&db);
        for (other, property, _, _) in ENGINES.iter().filter(|e| e.0 != maker) {
            for destroy in ["false", "true"] {
                let mut extra = dir_property(property, &db);
                extra.extend(["-p".into(), format!("{other}.destroy={destroy}")]);
                let o = ycsb_args(
                    &format!("load {other} -P workloads/workloada -p recordcount=100"),
                    &extra,
                );
                let err = stderr(&o);
                assert_eq!(o.status.code(), Some(2), "{maker} dir, {other}: {err}");
                let error = one_error_line(&err);
                assert!(
                    error.contains(said) && error.contains(&db.display().to_string()),
                    "{maker} dir, {other}: {}",
                    error
                );
                assert!(
                    snapshot(&db) == before,
                    "{other} changed the {maker} directory"
                );
            }
        }
    }
}

#[test]
fn ycsb_serve_embeds_the_engine_and_its_data_survives() {
    for (db, property, _, _) in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("db");
        let (mut child, mut lines) = spawn_watched(
            ycsb()
                .args(["serve", db, "--resp", "127.0.0.1:0", "--http", "off"])
                .args(dir_property(property, &data)),
        );
        let line = lines
            .wait_for(Duration::from_secs(30), |l| l.contains(" over RESP at "))
            .unwrap_or_else(|| panic!("{db}: no RESP address line: {:?}", lines.seen));
        let addr = address_after(&line, " over RESP at ");
        let port = format!("redis.port={}", addr.port());
        for phase in ["load", "run"] {
            let o = ycsb()
                .args([phase, "redis", "-P", "workloads/workloada"])
                .args(["-p", "redis.host=127.0.0.1", "-p", &port])
                .args(["-p", "recordcount=300", "-p", "operationcount=600"])
                .args(["-p", "dataintegrity=true"])
                .output()
                .unwrap();
            let out = stdout(&o);
            assert!(o.status.success(), "{db} {phase}: {}", stderr(&o));
            for bad in ["NOT_FOUND", "UNEXPECTED_STATE", "Return=ERROR"] {
                assert!(!out.contains(bad), "{db} {phase}: {bad} in {out}");
            }
        }
        signal(&child, SIGTERM);
        let status = wait_bounded(&mut child, Duration::from_secs(30), "ycsb serve");
        assert!(status.success(), "{db}: {status:?} {}", lines.rest());
        // What the server stored is in the engine's files.
        let o = ycsb_args(
            &format!(
                "run {db} -P workloads/workloadc -p recordcount=300 -p operationcount=300 \
                 -p dataintegrity=true"
            ),
            &dir_property(property, &data),
        );
        assert!(o.status.success(), "{db}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("[READ], Return=OK, 300"),
            "{db}: {}",
            stdout(&o)
        );
    }
}
