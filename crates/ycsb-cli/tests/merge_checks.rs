//! `ycsb merge` checks that the exports belong together: the clients of
//! one run (same phase, workload, record count, store and client.count,
//! distinct client.index, overlapping time), or `--force`.

mod common;

use std::path::{Path, PathBuf};

use common::*;

/// Runs `ycsb <args>` (a phase and a store, then properties) writing a
/// JSON export to `dir/<name>.json`.
fn export(dir: &Path, name: &str, args: &str) -> PathBuf {
    let path = dir.join(format!("{name}.json"));
    let mut words = args.splitn(3, ' ');
    let (phase, store, rest) = (
        words.next().unwrap(),
        words.next().unwrap(),
        words.next().unwrap_or(""),
    );
    let o = run(&format!(
        "{phase} {store} -p operationcount=50 -p recordcount=20 -p exporter=json -p exportfile={} {rest}",
        path.display()
    ));
    assert!(o.status.success(), "{args}: {}", stderr(&o));
    path
}

fn merge(args: &[&Path], extra: &[&str]) -> std::process::Output {
    let mut cmd = ycsb();
    cmd.arg("merge").args(extra).args(args);
    cmd.output().unwrap()
}

/// The one error line of a refused merge.
fn refused(o: &std::process::Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("ycsb: error:"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_string()
}

#[test]
fn merge_takes_only_exports_that_belong_together() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = "-P workloads/workloada -p client.count=2";
    let c0 = export(d, "c0", &format!("run basic {a} -p client.index=0"));
    let c1 = export(d, "c1", &format!("run basic {a} -p client.index=1"));
    let o = merge(&[&c0, &c1], &[]);
    assert!(o.status.success(), "{}", stderr(&o));

    // The same file twice.
    let line = refused(&merge(&[&c0, &c0], &[]));
    assert!(line.contains("are the same file"), "{line}");

    // A copy of one client: the same client.index twice.
    let copy = d.join("copy.json");
    std::fs::copy(&c0, &copy).unwrap();
    let line = refused(&merge(&[&c0, &copy], &[]));
    assert!(line.contains("both client.index=0"), "{line}");

    // A load with a run.
    let load = export(d, "load", &format!("load basic {a} -p client.index=1"));
    let line = refused(&merge(&[&c0, &load], &[]));
    assert!(
        line.contains("has phases [load]") && line.contains("[run]"),
        "{line}"
    );

    // Workload A with E.
    let e = export(
        d,
        "e",
        "run basic -P workloads/workloade -p client.count=2 -p client.index=1",
    );
    let line = refused(&merge(&[&c0, &e], &[]));
    assert!(line.contains("scanproportion=0.95"), "{line}");
    assert!(line.contains("not the same workload"), "{line}");

    // Another record count, another client count, another store.
    let other = export(
        d,
        "rc",
        &format!("run basic {a} -p client.index=1 -p recordcount=30"),
    );
    let line = refused(&merge(&[&c0, &other], &[]));
    assert!(line.contains("recordcount=30 (-p flag)"), "{line}");
    let other = export(
        d,
        "cc",
        "run basic -P workloads/workloada -p client.count=3 -p client.index=1",
    );
    let line = refused(&merge(&[&c0, &other], &[]));
    assert!(line.contains("client.count=3"), "{line}");
    let other = export(d, "mem", &format!("run memory {a} -p client.index=1"));
    let line = refused(&merge(&[&c0, &other], &[]));
    assert!(line.contains("store 'memory'"), "{line}");

    // Runs a day apart.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&c1).unwrap()).unwrap();
    let start = doc["metadata"]["start_time"].as_str().unwrap().to_string();
    let earlier = chrono::DateTime::parse_from_rfc3339(&start).unwrap() - chrono::Duration::days(1);
    doc["metadata"]["start_time"] = earlier.to_rfc3339().into();
    let yesterday = d.join("yesterday.json");
    std::fs::write(&yesterday, doc.to_string()).unwrap();
    let line = refused(&merge(&[&c0, &yesterday], &[]));
    assert!(line.contains("had finished"), "{line}");

    // --force merges anyway, saying why it should not.
    let merged = d.join("forced.json");
    let o = merge(&[&c0, &e], &["--force", "-o", merged.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("ycsb: warning: merge --force:"),
        "{}",
        stderr(&o)
    );
    assert!(merged.exists());

    // A JSON merge written as an HdrHistogram log.
    let hdr = d.join("x.hdr");
    let line = refused(&merge(&[&c0, &c1], &["-o", hdr.to_str().unwrap()]));
    assert!(line.contains("x.hdr") && line.contains(".json"), "{line}");
    assert!(!hdr.exists());
}
