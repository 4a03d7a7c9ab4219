//! The `redb` store through the ycsb-db traits, on real databases in
//! temporary directories.

use std::path::{Path, PathBuf};

use ycsb_db::testing::{assert_conforms, record, text_fields, Contract};
use ycsb_db::{
    Fields, Gauge, Origin, Properties, Record, ScanResult, Status, Store, StoreError, StoreThread,
    ThreadContext,
};
use ycsb_redb::RedbStore;

const TABLE: &str = "usertable";

fn props(dir: &Path, extra: &[(&str, &str)]) -> Properties {
    let mut p = Properties::new().with("redb.path", dir.display());
    for (k, v) in extra {
        p.set(*k, *v, Origin::Flag("-p"));
    }
    p
}

fn open(dir: &Path, extra: &[(&str, &str)]) -> RedbStore {
    RedbStore::open(&props(dir, extra)).expect("open")
}

fn open_error(dir: &Path, extra: &[(&str, &str)]) -> StoreError {
    RedbStore::open(&props(dir, extra)).expect_err("opened")
}

/// Every configuration that changes how values are stored or synced.
#[test]
fn keeps_the_store_contract() {
    for extra in [
        &[][..],
        &[("redb.durability", "none"), ("redb.cache_size", "1048576")][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), extra);
        eprintln!("redb {extra:?}");
        // redb's remove tells whether the key was there: the full contract.
        assert_conforms(&store, &Contract::new());
    }
}

/// Reads `key` both ways, copied and in place, and checks that they agree
/// (the workload reads in place unless it verifies data).
fn read(t: &mut dyn StoreThread, key: &str) -> (Status, Vec<(String, String)>) {
    let mut out = Record::new();
    let status = t.read(TABLE, key, Fields::All, &mut out);
    let mut seen = None;
    let in_place = t.read_in_place(TABLE, key, Fields::All, &mut Record::new(), &mut |view| {
        assert!(seen.is_none(), "visited twice");
        seen = Some(view.iter().collect::<Record>());
    });
    assert_eq!(in_place, status, "read_in_place of {key}");
    assert_eq!(seen.is_some(), status.is_ok(), "visited on {status:?}");
    if let Some(seen) = seen {
        assert_eq!(seen, out, "read_in_place of {key}");
    }
    (status, text_fields(&out))
}

#[test]
fn a_database_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path(), &[]);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        for i in 0..500 {
            let key = format!("user{i:04}");
            assert_eq!(
                t.insert(TABLE, &key, &record(&[("field0", &key), ("field1", "b")])),
                Status::Ok
            );
        }
        assert_eq!(
            t.update(TABLE, "user0007", &record(&[("field1", "changed")])),
            Status::Ok
        );
        drop(t);
        store.close().unwrap();
    }
    let store = open(dir.path(), &[]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let (status, fields) = read(t.as_mut(), "user0007");
    assert_eq!(status, Status::Ok);
    assert_eq!(
        fields,
        vec![
            ("field0".to_string(), "user0007".to_string()),
            ("field1".to_string(), "changed".to_string())
        ]
    );
    let mut rows = ScanResult::new();
    assert_eq!(
        t.scan(TABLE, "user0495", 10, Fields::All, &mut rows),
        Status::Ok
    );
    let keys: Vec<&str> = rows.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        ["user0495", "user0496", "user0497", "user0498", "user0499"]
    );
}

#[test]
fn destroy_removes_the_old_database() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path(), &[]);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        assert_eq!(t.insert(TABLE, "k", &record(&[("f", "v")])), Status::Ok);
    }
    let store = open(dir.path(), &[("redb.destroy", "true")]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(read(t.as_mut(), "k").0, Status::NotFound);
}

fn gauge(gauges: &[Gauge], name: &str) -> f64 {
    gauges
        .iter()
        .find(|g| g.name == name)
        .unwrap_or_else(|| panic!("no gauge {name} in {gauges:?}"))
        .value
}

#[test]
fn gauges_and_reports_show_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("redb.durability", "none")]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let value = "x".repeat(200);
    for i in 0..3000 {
        assert_eq!(
            t.insert(TABLE, &format!("user{i}"), &record(&[("field0", &value)])),
            Status::Ok
        );
    }
    drop(t);
    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    // 3000 records of about 220 bytes need more than one 4 KiB leaf.
    assert!(gauge(&gauges, "redb.tree-height") >= 2.0, "{gauges:?}");
    assert!(gauge(&gauges, "redb.leaf-pages") > 100.0, "{gauges:?}");
    assert!(gauge(&gauges, "redb.branch-pages") >= 1.0, "{gauges:?}");
    assert!(
        gauge(&gauges, "redb.stored-bytes") >= 3000.0 * 200.0,
        "{gauges:?}"
    );
    assert!(gauge(&gauges, "redb.allocated-pages") >= gauge(&gauges, "redb.leaf-pages"));
    assert!(gauges.iter().any(|g| g.name == "redb.fragmented-bytes"));
    assert!(gauges.iter().any(|g| g.name == "redb.cache-used-bytes"));
    let reports = store.final_reports();
    let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["redb.stats", "redb.options"]);
    assert!(
        reports[0].text.contains("leaf_pages="),
        "{}",
        reports[0].text
    );
    assert!(
        reports[0].text.contains("file_bytes="),
        "{}",
        reports[0].text
    );
    assert!(
        reports[1].text.contains("redb.durability=none\n"),
        "{}",
        reports[1].text
    );
    assert!(reports[1]
        .text
        .contains(&format!("version={}\n", ycsb_redb::ENGINE_VERSION)));
    // Without tree gauges, only the cache's.
    drop(store);
    let store = open(dir.path(), &[("redb.tree_gauges", "false")]);
    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    let names: Vec<&str> = gauges.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["redb.cache-used-bytes"]);
}

/// The version the results name is the one Cargo built.
#[test]
fn engine_version_is_the_locked_one() {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock"))
            .unwrap();
    let locked = lock
        .split("[[package]]")
        .find(|p| p.contains("\nname = \"redb\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|v| v.trim_matches('"').to_string())
        .expect("redb in Cargo.lock");
    assert_eq!(ycsb_redb::ENGINE_VERSION, locked);
    let dir = tempfile::tempdir().unwrap();
    let info = open(dir.path(), &[]).engine_info();
    assert_eq!(
        (info.name.as_str(), info.version.as_str()),
        ("redb", locked.as_str())
    );
}

fn shipped_properties() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../redb/redb.properties")
}

#[test]
fn shipped_properties_file_opens() {
    let path = shipped_properties();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut p = Properties::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (k, v) = line.split_once('=').expect("key=value");
        let origin = Origin::File {
            path: std::sync::Arc::from(path.as_path()),
            line: i + 1,
        };
        p.set(k.trim(), v.trim(), origin);
    }
    assert!(p.unknown(ycsb_redb::PROPERTIES.iter().copied()).is_empty());
    assert_eq!(p.get_str("redb.path"), Some("/tmp/ycsb-redb"));
    let dir = tempfile::tempdir().unwrap();
    p.set(
        "redb.path",
        dir.path().display().to_string(),
        Origin::Flag("-p"),
    );
    let store = RedbStore::open(&p).unwrap();
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(
        t.insert(TABLE, "user1", &record(&[("field0", "v")])),
        Status::Ok
    );
    assert_eq!(read(t.as_mut(), "user1").0, Status::Ok);
}

#[test]
fn values_that_are_not_records_are_unexpected_state() {
    // A database written by something else: the same table, raw bytes.
    let dir = tempfile::tempdir().unwrap();
    {
        let table: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("ycsb");
        let db = redb::Database::create(dir.path().join(ycsb_redb::FILE_NAME)).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(table)
            .unwrap()
            .insert(b"user1".as_slice(), [0xffu8, 0xff, 0xff].as_slice())
            .unwrap();
        txn.commit().unwrap();
    }
    let store = open(dir.path(), &[]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(read(t.as_mut(), "user1").0, Status::UnexpectedState);
    assert_eq!(
        t.update(TABLE, "user1", &record(&[("f", "v")])),
        Status::UnexpectedState
    );
    // The failed update changed nothing.
    assert_eq!(read(t.as_mut(), "user1").0, Status::UnexpectedState);
}

#[test]
fn a_file_that_is_not_a_redb_database_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(ycsb_redb::FILE_NAME), vec![b'x'; 10_000]).unwrap();
    let err = open_error(dir.path(), &[]);
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&dir.path().display().to_string()),
        "{err}"
    );
}

#[test]
fn locations_that_cannot_be_used_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"not a directory").unwrap();
    // A path below a regular file cannot be created, even by root.
    let err = open_error(&file.join("db"), &[]);
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("cannot create the redb.path ") && text.contains("plain-file/db"),
        "{text}"
    );
    // /proc refuses new entries whatever the user's privileges.
    let err = open_error(Path::new("/proc/ycsb-redb-test"), &[]);
    assert!(err.to_string().contains("/proc/ycsb-redb-test"), "{err}");
}

#[test]
fn a_second_open_of_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(dir.path(), &[]);
    let err = open_error(dir.path(), &[]);
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("locked"), "{text}");
    assert!(text.contains(&dir.path().display().to_string()), "{text}");
    let mut t = first.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert(TABLE, "k", &record(&[("f", "v")])), Status::Ok);
}

#[test]
fn a_foreign_directory_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "keep me\n").unwrap();
    for destroy in ["false", "true"] {
        let err = open_error(dir.path(), &[("redb.destroy", destroy)]).to_string();
        assert!(
            err.contains("is not empty and holds no redb database") && err.contains("notes.txt"),
            "{err}"
        );
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["notes.txt"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "keep me\n"
    );
}

#[test]
fn registered_as_redb() {
    let d = ycsb_redb::DESCRIPTOR;
    assert_eq!(d.name, "redb");
    assert_eq!(d.data_dir.map(|p| p.name), Some("redb.path"));
    assert_eq!(d.fresh, &[("redb.destroy", "true")]);
    assert_eq!(d.dbbench_property("--db"), Some("redb.path"));
    assert_eq!(d.dbbench_property("--cache_size"), Some("redb.cache_size"));
}
