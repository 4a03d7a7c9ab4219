//! The `lmdb` store through the ycsb-db traits, on real environments in
//! temporary directories, and a real child process killed mid-load.

use std::path::Path;

use ycsb_db::testing::durability::AckWriterBinary;
use ycsb_db::testing::{
    assert_conforms, assert_guards_its_directory, assert_refuses_foreign_directory,
    assert_survives_reopen, gauge, insert_filler_records, record, report, Contract,
};
use ycsb_db::{
    Fields, Gauge, Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store, ThreadContext,
};
use ycsb_lmdb::LmdbStore;

const TABLE: &str = "usertable";

fn props(dir: &Path, extra: &[(&str, &str)]) -> Properties {
    Properties::new()
        .with("lmdb.dbpath", dir.display())
        .with("lmdb.mapsize", 64u64 << 20)
        .with_flags(extra)
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
    insert_filler_records(&store, 2000, 100);
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
    let options = report(&reports, "lmdb.options");
    assert!(options.contains("lmdb.nosync=true\n"), "{}", options);
    assert!(options.contains(&format!("version={version}\n")));
    assert!(options.contains("library="), "{}", options);
    let stat = report(&reports, "lmdb.stat");
    assert!(stat.contains("Entries: 2000\n"), "{}", stat);
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
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user0", Fields::All), &mut out),
        Status::Ok
    );
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
        &["holds no LMDB database", "notes.txt"],
    );
    // A data.mdb that is not LMDB's: refused by its content, untouched,
    // and no lock.mdb made beside it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.mdb"), vec![7u8; 16384]).unwrap();
    let message = LmdbStore::open(&props(dir.path(), &[("lmdb.destroy", "true")]))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("\"data.mdb\", which has the name of a LMDB file but not its content")
            && message.contains(&dir.path().display().to_string()),
        "{message}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("data.mdb")).unwrap(),
        vec![7u8; 16384]
    );
    assert!(!dir.path().join("lock.mdb").exists());
    // A path that is a file.
    let file = dir.path().join("data.mdb");
    let message = LmdbStore::open(&props(&file, &[])).unwrap_err().to_string();
    assert!(message.contains("lmdb.dbpath="), "{message}");
}

const WRITER: AckWriterBinary = AckWriterBinary::new(
    env!("CARGO_BIN_EXE_ycsb-lmdb-ack-writer"),
    &ycsb_lmdb::DESCRIPTOR,
);

#[test]
fn synced_inserts_survive_sigkill() {
    WRITER.check_acknowledged_inserts_survive_sigkill(&[], 200);
}

#[test]
fn nosync_inserts_survive_sigkill_of_the_process() {
    // MDB_NOSYNC skips the fsync, not the write(2): a committed
    // transaction is in the kernel's page cache, which a killed process
    // does not take with it (a machine crash would).
    WRITER.check_acknowledged_inserts_survive_sigkill(&["nosync"], 5000);
}

/// LMDB itself lets processes share an environment, and a second one with
/// lmdb.destroy=true would delete it under the first: the guard refuses the
/// second open, destroy or not, and the writer's records stay.
#[test]
fn another_process_cannot_open_the_environment_a_writer_holds() {
    WRITER.check_open_refused_while_another_process_holds(&[], "in use");
}

#[test]
fn the_directory_guard_holds() {
    let dir = tempfile::tempdir().unwrap();
    assert_guards_its_directory(
        &ycsb_lmdb::DESCRIPTOR,
        &Properties::new().with("lmdb.mapsize", 64u64 << 20),
        dir.path(),
    );
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
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, "", 2, Fields::All), &mut rows),
        Status::Ok
    );
    let keys: Vec<_> = rows.iter().map(|(k, _)| k.to_string()).collect();
    assert_eq!(keys, ["a", "b"]);
}

/// Issue 33 item 5: with `lmdb.writemap` a commit writes through the map
/// into a sparse data.mdb, and on a full file system the process died of
/// SIGBUS. The map is now allocated at open: a map the file system cannot
/// hold is refused with one line naming the properties, and one it can
/// hold fills up with LMDB's MDB_MAP_FULL, the run ending cleanly.
#[test]
fn writemap_reserves_the_map_so_a_full_disk_is_an_error_not_sigbus() {
    let fs = ycsb_db::testing::Tmpfs::mount("8m");
    let filler = fs.path().join("filler");
    std::fs::write(&filler, vec![1u8; 5 << 20]).unwrap();
    let writemap = [("lmdb.writemap", "true"), ("lmdb.nosync", "true")];

    let err = match LmdbStore::open(&props(&fs.path().join("big"), &writemap)) {
        Ok(_) => panic!("a 64 MiB map opened on a file system with 3 MiB free"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("lmdb.writemap=true")
            && err.contains("lmdb.mapsize=67108864")
            && !err.contains('\n'),
        "{err}"
    );

    let dir = fs.path().join("small");
    let mut small = writemap.to_vec();
    small.push(("lmdb.mapsize", "1048576"));
    let store = LmdbStore::open(&props(&dir, &small)).expect("a 1 MiB map fits");
    // The free space left is now used up by something else: what LMDB
    // writes next must land in the pages it reserved.
    let free = std::fs::metadata(&filler).unwrap().len();
    let mut other = std::fs::OpenOptions::new()
        .append(true)
        .open(&filler)
        .unwrap();
    while std::io::Write::write_all(&mut other, &[2u8; 64 << 10]).is_ok() {}
    assert!(std::fs::metadata(&filler).unwrap().len() > free);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let value = "v".repeat(1000);
    let failed = (0..5000).find(|i| {
        t.insert(TABLE, &format!("user{i}"), &record(&[("field0", &value)])) != Status::Ok
    });
    assert!(failed.is_some(), "1 MiB held 5 MB");
    let message = t.last_error().unwrap();
    assert!(message.contains("MDB_MAP_FULL"), "{message}");
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user0", Fields::All), &mut out),
        Status::Ok
    );
}

/// Issue 35 item 5: `lmdb.mapsize=-1`, YCSB-cpp's "use default", leaves
/// the size to LMDB: a database keeps the map it was made with (here
/// 64 MiB, where LMDB's own default of 1 MiB would be full after 4 MiB of
/// values), and a new one opens with LMDB's default.
#[test]
fn mapsize_minus_one_keeps_the_stored_map_size() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path(), &[("lmdb.nosync", "true")]);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        assert_eq!(t.insert(TABLE, "first", &record(&[("f", "v")])), Status::Ok);
        drop(t);
        store.close().unwrap();
    }
    let store = open(
        dir.path(),
        &[("lmdb.mapsize", "-1"), ("lmdb.nosync", "true")],
    );
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(
        t.read(
            &ReadOp::new(TABLE, "first", Fields::All),
            &mut Record::new()
        ),
        Status::Ok
    );
    let value = "x".repeat(64 << 10);
    for i in 0..64 {
        let key = format!("big{i:02}");
        assert_eq!(
            t.insert(TABLE, &key, &record(&[("f", &value)])),
            Status::Ok,
            "{key}"
        );
    }
    drop(t);
    store.close().unwrap();

    let fresh = tempfile::tempdir().unwrap();
    let store = open(fresh.path(), &[("lmdb.mapsize", "-1")]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert(TABLE, "k", &record(&[("f", "v")])), Status::Ok);
}
