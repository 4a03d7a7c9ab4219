//! The `fjall` store through the ycsb-db traits, on real databases in
//! temporary directories.

use std::path::Path;

use ycsb_db::testing::{
    assert_conforms, assert_directory_is_guarded, assert_fresh_open_refused_while_the_engine_holds,
    assert_not_a_record, assert_refuses_foreign_directory, assert_reports_locked_version,
    assert_shipped_file_opens, assert_survives_reopen, gauge, insert_filler_records,
    shipped_property_file, Contract, Deletes,
};
use ycsb_db::{Properties, Store, ThreadContext};
use ycsb_fjall::FjallStore;

fn props(dir: &Path, extra: &[(&str, &str)]) -> Properties {
    Properties::new()
        .with("fjall.dir", dir.display())
        .with_flags(extra)
}

fn open(dir: &Path, extra: &[(&str, &str)]) -> FjallStore {
    FjallStore::open(&props(dir, extra)).expect("open")
}

/// Every configuration that changes how values are stored or synced.
#[test]
fn keeps_the_store_contract() {
    for extra in [
        &[][..],
        &[("fjall.compression", "none"), ("fjall.fsync", "true")][..],
        &[
            ("fjall.compression", "lz4"),
            ("fjall.memtable_size", "65536"),
        ][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), extra);
        eprintln!("fjall {extra:?}");
        // fjall's remove writes a tombstone without looking the key up.
        assert_conforms(&store, &Contract::new().with_deletes(Deletes::MissingOk));
    }
}

/// Also covers `fjall.destroy`, the descriptor's fresh property.
#[test]
fn a_database_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let p = props(dir.path(), &[]);
    assert_survives_reopen(&ycsb_fjall::DESCRIPTOR, &p, &p);
}

#[test]
fn gauges_and_reports_show_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("fjall.memtable_size", "65536")]);
    insert_filler_records(&store, 3000, 200);
    store.compact().unwrap();
    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    let levels: Vec<f64> = (0..)
        .map_while(|l| {
            gauges
                .iter()
                .find(|g| g.name == format!("fjall.num-files-at-level{l}"))
                .map(|g| g.value)
        })
        .collect();
    assert_eq!(levels.len(), 7, "{gauges:?}");
    let tables = gauge(&gauges, "fjall.tables");
    assert!(tables >= 1.0, "{gauges:?}");
    assert_eq!(levels.iter().sum::<f64>(), tables);
    // Compaction moved everything out of level 0.
    assert_eq!(levels[0], 0.0, "{gauges:?}");
    assert!(gauge(&gauges, "fjall.disk-bytes") > 3000.0 * 200.0 / 10.0);
    assert!(gauge(&gauges, "fjall.journal-count") >= 1.0);
    let reports = store.final_reports();
    let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["fjall.stats", "fjall.options"]);
    assert!(reports[0].text.contains("tables="), "{}", reports[0].text);
    assert!(
        reports[1].text.contains("fjall.memtable_size=65536\n"),
        "{}",
        reports[1].text
    );
    assert!(reports[1]
        .text
        .contains(&format!("version={}\n", ycsb_fjall::ENGINE_VERSION)));
}

/// The version the results name is the one Cargo built.
#[test]
fn engine_version_is_the_locked_one() {
    assert_reports_locked_version(
        &ycsb_fjall::DESCRIPTOR,
        Path::new(env!("CARGO_MANIFEST_DIR")),
        "fjall",
        ycsb_fjall::ENGINE_VERSION,
    );
}

#[test]
fn shipped_properties_file_opens() {
    let file = shipped_property_file(Path::new(env!("CARGO_MANIFEST_DIR")), "fjall");
    let dir = tempfile::tempdir().unwrap();
    assert_shipped_file_opens(&ycsb_fjall::DESCRIPTOR, &file, dir.path());
}

#[test]
fn values_that_are_not_records_are_unexpected_state() {
    // A database written by something else: the same key space, raw bytes.
    let dir = tempfile::tempdir().unwrap();
    {
        let db = fjall::Database::builder(dir.path()).open().unwrap();
        let ks = db
            .keyspace("ycsb", fjall::KeyspaceCreateOptions::default)
            .unwrap();
        ks.insert("user1", [0xffu8, 0xff, 0xff].as_slice()).unwrap();
    }
    let store = open(dir.path(), &[]);
    assert_not_a_record(
        store.thread(ThreadContext::new(0, 1)).unwrap().as_mut(),
        "user1",
    );
}

#[test]
fn a_foreign_directory_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    assert_refuses_foreign_directory(
        &ycsb_fjall::DESCRIPTOR,
        &Properties::new(),
        dir.path(),
        "notes.txt",
        &["is not empty and holds no fjall database", "notes.txt"],
    );
}

/// Unusable locations and a second open are refused, and the guard holds.
#[test]
fn the_directory_is_guarded() {
    assert_directory_is_guarded(&ycsb_fjall::DESCRIPTOR, &Properties::new());
}

/// Opened by fjall directly (another program): no directory lock of ours,
/// but fjall's own lock on its lock file.
#[test]
fn a_database_fjall_itself_holds_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = fjall::Database::builder(dir.path()).open().unwrap();
    assert_fresh_open_refused_while_the_engine_holds(
        &ycsb_fjall::DESCRIPTOR,
        dir.path(),
        db,
        "is open in another process, which holds the lock on its lock",
        "version",
    );
}

#[test]
fn registered_as_fjall() {
    let d = ycsb_fjall::DESCRIPTOR;
    assert_eq!(d.name, "fjall");
    assert_eq!(d.data_dir.map(|p| p.name), Some("fjall.dir"));
    assert_eq!(d.fresh, &[("fjall.destroy", "true")]);
    assert_eq!(d.dbbench_property("--db"), Some("fjall.dir"));
    assert_eq!(d.dbbench_property("--sync"), Some("fjall.fsync"));
}
