//! Data integrity across processes: `dataintegrity=true` data loaded by
//! one `ycsb` process and verified by another (embedded engines and a real
//! redis-server), and no acknowledged record lost when a synced load is
//! killed with SIGKILL (rocksdb, leveldb, lmdb, sqlite, wiredtiger; fjall
//! and redb in `rust_engines.rs`).

mod common;
mod rel_support;

use std::time::Duration;

use common::*;
use rel_support::*;

/// The figure of `[section], name` in a text report, as a number.
fn figure(out: &str, section: &str, name: &str) -> u64 {
    report_value(out, section, name)
        .unwrap_or_else(|| panic!("no [{section}], {name} in: {out}"))
        .parse()
        .unwrap()
}

/// Runs `args` (plus `extra`) and returns standard output, requiring
/// success.
fn ok(args: &[&str], extra: &[String]) -> String {
    let o = ycsb().args(args).args(extra).output().unwrap();
    assert!(o.status.success(), "{args:?} {extra:?}: {}", stderr(&o));
    stdout(&o)
}

/// Loads with data integrity in one process, runs workload A (reads
/// verified, updates rewriting deterministic values) in a second and
/// reads every record back in a third. Returns the records verified.
fn verify_across_processes(db: &str, store_props: &[String]) -> u64 {
    const RECORDS: u64 = 2000;
    let common = INTEGRITY_RECORDS;
    let out = ok(
        &[&["load", db][..], &common, &["-threads", "4"]].concat(),
        store_props,
    );
    assert_eq!(figure(&out, "INSERT", "Return=OK"), RECORDS, "{out}");

    let out = ok(
        &[
            &["run", db, "-P", "workloads/workloada"][..],
            &common,
            &["-p", "operationcount=3000", "-threads", "4"],
        ]
        .concat(),
        store_props,
    );
    let reads = figure(&out, "READ", "Operations");
    assert_eq!(figure(&out, "READ", "Return=OK"), reads, "{out}");
    assert_eq!(figure(&out, "VERIFY", "Return=OK"), reads, "{out}");
    assert!(!out.contains("UNEXPECTED_STATE"), "{out}");
    assert!(!out.contains("Return=ERROR"), "{out}");

    // Every record, once each, in a last process.
    let out = ok(
        &[&["run", db][..], &common, &READ_EACH_RECORD].concat(),
        store_props,
    );
    assert_eq!(figure(&out, "VERIFY", "Return=OK"), RECORDS, "{out}");
    assert!(!out.contains("UNEXPECTED_STATE"), "{out}");
    reads + RECORDS
}

#[test]
fn data_integrity_holds_across_processes_on_embedded_engines() {
    for engine in embedded_engines() {
        let dir = tempfile::tempdir().unwrap();
        let props = engine.at(&dir.path().join("db")).to_vec();
        let engine = engine.name;
        let verified = verify_across_processes(engine, &props);
        assert!(verified > 2000, "{engine}: {verified}");
        eprintln!("{engine}: {verified} reads verified across 3 processes, none wrong");
    }
}

/// The same with `batch.size=25` in every process: batched loads, batched
/// reads and updates of workload A (two updates of one key in a batch
/// included), all verified.
#[test]
fn data_integrity_holds_across_processes_with_batches() {
    for engine in embedded_engines() {
        let dir = tempfile::tempdir().unwrap();
        let mut props = engine.at(&dir.path().join("db")).to_vec();
        props.extend(["-p".to_string(), "batch.size=25".to_string()]);
        let engine = engine.name;
        let verified = verify_across_processes(engine, &props);
        assert!(verified > 2000, "{engine}: {verified}");
        eprintln!("{engine}: {verified} batched reads verified across 3 processes, none wrong");
    }
}

/// VERIFY's Return= lines of a run reading records of `read_fields`
/// fields from a store loaded with `loaded_fields` fields.
fn verify_with_fields(db: &str, props: &[String], loaded_fields: u32, read_fields: u32) -> String {
    let common = |fields: u32| {
        [
            "-p".to_string(),
            "dataintegrity=true".to_string(),
            "-p".to_string(),
            "recordcount=50".to_string(),
            "-p".to_string(),
            format!("fieldcount={fields}"),
            "-p".to_string(),
            "fieldlength=20".to_string(),
        ]
    };
    ok(&["load", db], &[&common(loaded_fields)[..], props].concat());
    let out = ok(
        &[
            "run",
            db,
            "-p",
            "operationcount=100",
            "-p",
            "readproportion=1",
            "-p",
            "updateproportion=0",
        ],
        &[&common(read_fields)[..], props].concat(),
    );
    out.lines()
        .filter(|l| l.starts_with("[VERIFY], Return="))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn data_integrity_sees_missing_and_extra_fields_on_embedded_engines() {
    for engine in embedded_engines() {
        for (loaded, read) in [(4, 3), (3, 4)] {
            let dir = tempfile::tempdir().unwrap();
            let props = engine.at(&dir.path().join("db")).to_vec();
            let engine = engine.name;
            let verify = verify_with_fields(engine, &props, loaded, read);
            assert_eq!(
                verify, "[VERIFY], Return=UNEXPECTED_STATE, 100",
                "{engine}: records of {loaded} fields read as {read}"
            );
        }
    }
}

#[test]
fn data_integrity_sees_missing_and_extra_fields_on_a_real_redis_server() {
    for (loaded, read) in [(4, 3), (3, 4)] {
        let redis = Redis::start(&[]);
        let props = vec!["-p".to_string(), format!("redis.port={}", redis.port)];
        let verify = verify_with_fields("redis", &props, loaded, read);
        assert_eq!(
            verify, "[VERIFY], Return=UNEXPECTED_STATE, 100",
            "redis: records of {loaded} fields read as {read}"
        );
    }
}

#[test]
fn data_integrity_holds_across_processes_on_a_real_redis_server() {
    let redis = Redis::start(&[]);
    let props = vec!["-p".to_string(), format!("redis.port={}", redis.port)];
    let verified = verify_across_processes("redis", &props);
    assert!(verified > 2000, "{verified}");
    eprintln!("redis: {verified} reads verified across 3 processes, none wrong");
}

/// The operations of a Java status line: `... 12 sec: 3456 operations; ...`.
fn status_operations(line: &str) -> Option<u64> {
    let (_, rest) = line.split_once(" sec: ")?;
    rest.split(' ').next()?.parse().ok()
}

/// A synced load's settings for each embedded engine: the property naming
/// its data directory and the setting its descriptor declares makes every
/// acknowledged write durable.
fn synced_engines() -> Vec<(&'static str, &'static str, Vec<String>)> {
    embedded_engines()
        .into_iter()
        .filter_map(|e| Some((e.name, e.dir_property, vec![e.synced?])))
        .collect()
}

/// Why this check is sound: a single load thread inserts key numbers 0,
/// 1, 2, ... in order, each insert returning (synced, with the engine's
/// sync settings) before the next starts, and the runner counts an insert
/// in the progress a status line prints only after the store acknowledged
/// it. So when a status line says N operations, keys 0..N-1 were
/// acknowledged. After SIGKILL (at an arbitrary point of a later insert) a
/// new process reads keys 0..N-1 once each and verifies their values:
/// every one must be there, intact.
#[test]
fn sigkill_during_a_synced_load_loses_no_acknowledged_record() {
    sigkill_during_a_synced_load(1);
}

/// The same with batches of 10 (`batch.size`): the runner counts a batch's
/// records once the store acknowledged the whole batch, each batch synced
/// once, so the records a status line counts survive.
#[test]
fn sigkill_during_a_synced_batched_load_loses_no_acknowledged_batch() {
    sigkill_during_a_synced_load(10);
}

fn sigkill_during_a_synced_load(batch_size: u32) {
    let batch = format!("batch.size={batch_size}");
    for (engine, location, synced) in synced_engines() {
        let dir = tempfile::tempdir().unwrap();
        let at = format!("{location}={}", dir.path().join("db").display());
        let shape = [
            "-p",
            "dataintegrity=true",
            "-p",
            "insertorder=ordered",
            "-p",
            "fieldcount=2",
            "-p",
            "fieldlength=32",
        ];
        let mut command = ycsb();
        command.args(["load", engine, "-p", &at]).args(shape).args([
            "-p",
            "recordcount=100000000",
            "-threads",
            "1",
            "-p",
            &batch,
        ]);
        for property in &synced {
            command.args(["-p", property]);
        }
        let (mut child, mut lines) = spawn_watched(command.args(["-s", "-p", "status.interval=1"]));
        let mut acknowledged = 0;
        // Two status lines: the load is well under way and the kill lands
        // in the middle of an insert stream.
        for _ in 0..2 {
            let line = lines
                .wait_for(Duration::from_secs(60), |l| {
                    status_operations(l).is_some_and(|n| n > 0)
                })
                .unwrap_or_else(|| panic!("{engine}: no status line: {:?}", lines.seen));
            acknowledged = status_operations(&line).unwrap();
        }
        signal(&child, SIGKILL);
        let status = wait_bounded(&mut child, Duration::from_secs(30), "the killed load");
        assert_eq!(status.code(), None, "{engine}: not killed by the signal");
        assert!(acknowledged > 0, "{engine}: {:?}", lines.seen);

        // The reopen with the same settings, as a user resuming would
        // (WiredTiger recovers its log only when logging is on).
        let read_back = |records: u64| {
            let mut command = ycsb();
            command.args(["run", engine, "-p", &at]);
            for property in &synced {
                command.args(["-p", property]);
            }
            let o = command
                .args(shape)
                .args(["-p", &format!("recordcount={records}")])
                .args(["-p", &format!("operationcount={records}")])
                .args(["-p", "readproportion=1", "-p", "updateproportion=0"])
                .args(["-p", "requestdistribution=sequential", "-threads", "1"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{engine}: {}", stderr(&o));
            stdout(&o)
        };
        let out = read_back(acknowledged);
        assert_eq!(
            figure(&out, "READ", "Return=OK"),
            acknowledged,
            "{engine}: acknowledged records lost: {out}"
        );
        assert_eq!(
            figure(&out, "VERIFY", "Return=OK"),
            acknowledged,
            "{engine}: {out}"
        );
        eprintln!("{engine}: {acknowledged} acknowledged records survived SIGKILL");
        let atomic = ycsb_stores::find(engine).is_ok_and(|d| d.batching.is_atomic());
        if batch_size > 1 && atomic {
            // An atomic batch is on disk whole or not at all: the records
            // past the acknowledged ones (batches written but not yet
            // counted when the kill came) are whole batches too, so the
            // records found are a whole number of batches.
            // Far past what the load wrote between its status line and
            // the kill (milliseconds), so that the last batch written shows.
            let span = acknowledged + 50_000;
            let out = read_back(span);
            let found = figure(&out, "READ", "Return=OK");
            assert!(found >= acknowledged, "{engine}: {out}");
            assert!(
                found < span,
                "{engine}: every record up to {span} was found: widen the span"
            );
            assert_eq!(
                found % u64::from(batch_size),
                0,
                "{engine}: {found} records found after SIGKILL, not whole batches of {batch_size}"
            );
            eprintln!("{engine}: {found} records after SIGKILL, whole batches of {batch_size}");
        }
    }
}

#[test]
fn data_integrity_holds_across_processes_on_an_etcd_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = ycsb_etcd::testing::EtcdCluster::start(dir.path(), 3).unwrap();
    let props = vec![
        "-p".to_string(),
        format!("etcd.endpoints={}", cluster.endpoints()),
    ];
    let verified = verify_across_processes("etcd", &props);
    assert!(verified > 2000, "etcd: {verified}");
}
