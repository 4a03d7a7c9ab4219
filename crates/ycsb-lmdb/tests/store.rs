//! The `lmdb` store through the ycsb-db traits, on real environments in
//! temporary directories, and a real child process killed mid-load.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use ycsb_db::testing::{
    assert_conforms, assert_refuses_foreign_directory, assert_survives_reopen, gauge, record,
    Contract,
};
use ycsb_db::{
    Fields, Gauge, Origin, Properties, Record, ScanResult, Status, Store, ThreadContext,
};
use ycsb_lmdb::LmdbStore;

const TABLE: &str = "usertable";

fn props(dir: &Path, extra: &[(&str, &str)]) -> Properties {
    let mut p = Properties::new()
        .with("lmdb.dbpath", dir.display())
        .with("lmdb.mapsize", 64u64 << 20);
    for (k, v) in extra {
        p.set(*k, *v, Origin::Flag("-p"));
    }
    p
}

fn open(dir: &Path, extra: &[(&str, &str)]) -> LmdbStore {
    LmdbStore::open(&props(dir, extra)).expect("open")
}

/// LMDB is an ordered store with exact deletes: the default contract, with
/// synced commits and with the flags of the shipped property file.
#[test]
fn keeps_the_store_contract() {
    for flags in [
        &[][..],
        &[("lmdb.nosync", "true")][..],
        &[("lmdb.writemap", "true")][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), flags);
        eprintln!("lmdb {flags:?}");
        assert_conforms(&store, &Contract::new());
    }
}

/// Written without syncing, read back with it; also covers
/// `lmdb.destroy`, the descriptor's fresh property.
#[test]
fn records_survive_a_reopen_and_scans_are_in_key_order() {
    let dir = tempfile::tempdir().unwrap();
    assert_survives_reopen(
        &ycsb_lmdb::DESCRIPTOR,
        &props(dir.path(), &[("lmdb.nosync", "true")]),
        &props(dir.path(), &[]),
    );
}

#[test]
fn gauges_show_the_tree_and_the_map_and_reports_name_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("lmdb.nosync", "true")]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let value = "v".repeat(100);
    for i in 0..2000 {
        let r = record(&[("field0", &value)]);
        assert_eq!(t.insert(TABLE, &format!("user{i:05}"), &r), Status::Ok);
    }
    let mut gauges: Vec<Gauge> = Vec::new();
    store.gauges(&mut gauges);
    let get = |name: &str| gauge(&gauges, name);
    assert_eq!(get("lmdb.entries"), 2000.0);
    // 2000 records of ~120 bytes do not fit in one 4 KiB page.
    assert!(get("lmdb.depth") >= 2.0, "{gauges:?}");
    assert!(get("lmdb.leaf-pages") > 40.0, "{gauges:?}");
    assert!(get("lmdb.map-used-bytes") > 40.0 * 4096.0, "{gauges:?}");
    assert_eq!(get("lmdb.map-size-bytes"), (64u64 << 20) as f64);
    assert!(get("lmdb.readers") >= 1.0, "{gauges:?}");
    let version = store.engine_info().version;
    assert!(version.starts_with("0.9."), "{version}");
    let reports = store.final_reports();
    let options = reports.iter().find(|r| r.name == "lmdb.options").unwrap();
    assert!(
        options.text.contains("lmdb.nosync=true\n"),
        "{}",
        options.text
    );
    assert!(options.text.contains(&format!("version={version}\n")));
    assert!(options.text.contains("library="), "{}", options.text);
    let stat = reports.iter().find(|r| r.name == "lmdb.stat").unwrap();
    assert!(stat.text.contains("Entries: 2000\n"), "{}", stat.text);
}

#[test]
fn a_full_map_is_an_error_with_lmdb_s_reason() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(
        dir.path(),
        &[("lmdb.mapsize", "262144"), ("lmdb.nosync", "true")],
    );
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let value = "v".repeat(1000);
    let mut failed = None;
    for i in 0..1000 {
        if t.insert(TABLE, &format!("user{i}"), &record(&[("field0", &value)])) != Status::Ok {
            failed = Some(i);
            break;
        }
    }
    assert!(failed.is_some(), "256 KiB held 1 MB");
    let message = t.last_error().unwrap();
    assert!(message.contains("MDB_MAP_FULL"), "{message}");
    // What was committed before stays readable.
    let mut out = Record::new();
    assert_eq!(t.read(TABLE, "user0", Fields::All, &mut out), Status::Ok);
}

#[test]
fn foreign_directories_and_files_are_refused() {
    // Someone's files: refused untouched.
    let dir = tempfile::tempdir().unwrap();
    assert_refuses_foreign_directory(
        &ycsb_lmdb::DESCRIPTOR,
        &props(dir.path(), &[]),
        dir.path(),
        "notes.txt",
        &["holds no LMDB environment", "notes.txt"],
    );
    // A data.mdb that is not LMDB's: LMDB's own refusal.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.mdb"), vec![7u8; 16384]).unwrap();
    let message = LmdbStore::open(&props(dir.path(), &[]))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("mdb_env_open") && message.contains(&dir.path().display().to_string()),
        "{message}"
    );
    // A path that is a file.
    let file = dir.path().join("data.mdb");
    let message = LmdbStore::open(&props(&file, &[])).unwrap_err().to_string();
    assert!(message.contains("lmdb.dbpath="), "{message}");
}

/// Starts the ack writer, reads `n` acknowledgements, kills it with
/// SIGKILL and returns every key it acknowledged.
fn acknowledged_before_sigkill(dir: &Path, nosync: bool, n: usize) -> Vec<String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ycsb-lmdb-ack-writer"));
    cmd.arg(dir).stdout(Stdio::piped()).stderr(Stdio::inherit());
    if nosync {
        cmd.arg("nosync");
    }
    let mut child = cmd.spawn().expect("start the writer");
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut next = || {
        let mut line = String::new();
        let read = lines.read_line(&mut line).unwrap();
        // A line cut by the kill has no newline: not an acknowledgement.
        (read > 0 && line.ends_with('\n')).then(|| line.trim_end().to_string())
    };
    assert_eq!(next().as_deref(), Some("ready"));
    let mut acked = Vec::new();
    while acked.len() < n {
        acked.push(next().expect("writer stopped early"));
    }
    child.kill().expect("SIGKILL");
    let status = child.wait().unwrap();
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "{status:?}");
    }
    let mut rest = String::new();
    lines.read_to_string(&mut rest).unwrap();
    let complete = rest.rfind('\n').map_or("", |end| &rest[..end]);
    acked.extend(complete.lines().map(str::to_string));
    acked
}

fn check_all_readable(dir: &Path, acked: &[String]) {
    let store = open(dir, &[]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    for key in acked {
        out.clear();
        assert_eq!(
            t.read(TABLE, key, Fields::All, &mut out),
            Status::Ok,
            "acknowledged {key} lost"
        );
        let expected = format!("value-of-{key}-").repeat(8);
        assert_eq!(out.get("field0"), Some(expected.as_bytes()), "{key}");
    }
}

#[test]
fn synced_inserts_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let acked = acknowledged_before_sigkill(dir.path(), false, 200);
    assert_eq!(acked[0], "key0");
    check_all_readable(dir.path(), &acked);
}

#[test]
fn nosync_inserts_survive_sigkill_of_the_process() {
    // MDB_NOSYNC skips the fsync, not the write(2): a committed
    // transaction is in the kernel's page cache, which a killed process
    // does not take with it (a machine crash would).
    let dir = tempfile::tempdir().unwrap();
    let acked = acknowledged_before_sigkill(dir.path(), true, 5000);
    check_all_readable(dir.path(), &acked);
}

#[test]
fn another_process_may_share_the_environment() {
    // LMDB is multi-process by design (its lock file): a second process
    // opens the environment a writer holds and reads its commits.
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ycsb-lmdb-ack-writer"))
        .arg(dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    for _ in 0..3 {
        line.clear();
        lines.read_line(&mut line).unwrap();
    }
    assert_eq!(line.trim_end(), "key1");
    let store = open(dir.path(), &[]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    assert_eq!(t.read(TABLE, "key1", Fields::All, &mut out), Status::Ok);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_scan_from_the_empty_key_starts_at_the_first_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("lmdb.nosync", "true")]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    // One key space whatever the table: inserted under another name.
    for key in ["b", "a", "c"] {
        let r = record(&[("f", key)]);
        assert_eq!(t.insert("any-table", key, &r), Status::Ok);
    }
    let mut rows = ScanResult::new();
    assert_eq!(t.scan(TABLE, "", 2, Fields::All, &mut rows), Status::Ok);
    let keys: Vec<_> = rows.iter().map(|(k, _)| k.to_string()).collect();
    assert_eq!(keys, ["a", "b"]);
}
