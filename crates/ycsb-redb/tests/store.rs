//! The `redb` store through the ycsb-db traits, on real databases in
//! temporary directories.

use std::path::Path;

use ycsb_db::testing::{
    assert_conforms, assert_directory_is_guarded, assert_fresh_open_refused_while_the_engine_holds,
    assert_not_a_record, assert_refuses_foreign_directory, assert_reports_locked_version,
    assert_shipped_file_opens, assert_survives_reopen, gauge, insert_filler_records,
    shipped_property_file, Contract,
};
use ycsb_db::{Gauge, Properties, Store, StoreError, ThreadContext};
use ycsb_redb::RedbStore;

fn props(dir: &Path, extra: &[(&str, &str)]) -> Properties {
    Properties::new()
        .with("redb.path", dir.display())
        .with_flags(extra)
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

/// Also covers `redb.destroy`, the descriptor's fresh property.
#[test]
fn a_database_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let p = props(dir.path(), &[]);
    assert_survives_reopen(&ycsb_redb::DESCRIPTOR, &p, &p);
}

#[test]
fn gauges_and_reports_show_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("redb.durability", "none")]);
    insert_filler_records(&store, 3000, 200);
    let names = store.gauge_names();
    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    let sampled: Vec<&str> = gauges.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(sampled, names, "the first sample walks the tree");
    // The next sample, too early for another walk, shows the same walk.
    let mut next = Vec::new();
    store.gauges(&mut next);
    let tree = |g: &[Gauge]| g[1..].to_vec();
    assert_eq!(tree(&next), tree(&gauges));
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
    assert_eq!(store.gauge_names(), ["redb.cache-used-bytes"]);
}

/// The version the results name is the one Cargo built.
#[test]
fn engine_version_is_the_locked_one() {
    assert_reports_locked_version(
        &ycsb_redb::DESCRIPTOR,
        Path::new(env!("CARGO_MANIFEST_DIR")),
        "redb",
        ycsb_redb::ENGINE_VERSION,
    );
}

#[test]
fn shipped_properties_file_opens() {
    let file = shipped_property_file(Path::new(env!("CARGO_MANIFEST_DIR")), "redb");
    let dir = tempfile::tempdir().unwrap();
    assert_shipped_file_opens(&ycsb_redb::DESCRIPTOR, &file, dir.path());
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
    assert_not_a_record(
        store.thread(ThreadContext::new(0, 1)).unwrap().as_mut(),
        "user1",
    );
}

#[test]
fn a_file_that_is_not_a_redb_database_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(ycsb_redb::FILE_NAME), vec![b'x'; 10_000]).unwrap();
    for destroy in ["false", "true"] {
        let err = open_error(dir.path(), &[("redb.destroy", destroy)]);
        assert!(matches!(err, StoreError::DataDir(_)), "{err:?}");
        let text = err.to_string();
        assert!(text.contains(&dir.path().display().to_string()), "{text}");
        assert!(text.contains("not its content"), "{text}");
        assert_eq!(
            std::fs::read(dir.path().join(ycsb_redb::FILE_NAME)).unwrap(),
            vec![b'x'; 10_000]
        );
    }
}

#[test]
fn a_foreign_directory_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    assert_refuses_foreign_directory(
        &ycsb_redb::DESCRIPTOR,
        &Properties::new(),
        dir.path(),
        "notes.txt",
        &["is not empty and holds no redb database", "notes.txt"],
    );
}

/// Unusable locations and a second open are refused, and the guard holds.
#[test]
fn the_directory_is_guarded() {
    assert_directory_is_guarded(&ycsb_redb::DESCRIPTOR, &Properties::new());
}

/// Opened by redb directly (another program): no directory lock of ours,
/// but redb's own locks on its file.
#[test]
fn a_database_redb_itself_holds_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path(), &[]));
    let db = redb::Database::create(dir.path().join(ycsb_redb::FILE_NAME)).unwrap();
    assert_fresh_open_refused_while_the_engine_holds(
        &ycsb_redb::DESCRIPTOR,
        dir.path(),
        db,
        "which holds the lock on its ycsb.redb",
        ycsb_redb::FILE_NAME,
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
