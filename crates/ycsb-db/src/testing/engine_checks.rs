//! Checks the embedded stores' own tests share beyond the contract of
//! [`check_store`](super::check_store) and the directory checks of
//! `embedded.rs`: each takes the store (or its descriptor) and what differs
//! from engine to engine as parameters, and fails where the per-store copies
//! it replaces failed.

use crate::ScanOp;
use std::path::{Path, PathBuf};

use crate::properties::Properties;
use crate::record::{Fields, ScanResult};
use crate::status::Status;
use crate::store::{Store, StoreDescriptor, StoreError, StoreThread, ThreadContext};

use super::embedded::{open_in, with_fresh};
use super::{
    assert_guards_its_directory, assert_opens_in, load_property_file, locked_version,
    read_both_ways, record, scan_keys, scan_rows, second_open_error, text_fields,
    unusable_location_errors, UpdateMissing,
};

/// The table the checks name; embedded engines ignore it, and the first
/// inserts name another one to show it.
const TABLE: &str = "usertable";

/// The property file a store ships at the workspace root,
/// `<store>/<store>.properties`, found from the store crate's
/// `manifest_dir` (pass `env!("CARGO_MANIFEST_DIR")`).
pub fn shipped_property_file(manifest_dir: &Path, store: &str) -> PathBuf {
    manifest_dir
        .join("../..")
        .join(store)
        .join(format!("{store}.properties"))
}

/// Asserts that the property file a store ships (`file`, as
/// [`shipped_property_file`] finds it) holds only properties the store
/// declares and keeps its data directory at `/tmp/ycsb-<store>` (the
/// shipped files' convention, which the docs name), and that it opens with
/// the data directory moved to `dir` ([`assert_opens_in`]); returns the
/// store for the engine's own checks on the options in force.
///
/// # Panics
///
/// When the file cannot be read, holds an undeclared property, names
/// another data directory, or the store does not open or read back.
#[track_caller]
pub fn assert_shipped_file_opens(
    descriptor: &StoreDescriptor,
    file: &Path,
    dir: &Path,
) -> Box<dyn Store> {
    let properties = load_property_file(file);
    let undeclared = properties.unknown(descriptor.properties.iter().copied());
    assert!(undeclared.is_empty(), "undeclared: {undeclared:?}");
    let data_dir = descriptor
        .data_dir
        .unwrap_or_else(|| panic!("{} keeps no data directory", descriptor.name));
    // Only compared: the store below opens in `dir`, never at the shipped
    // default path.
    assert_eq!(
        properties.get_str(data_dir.name),
        Some(format!("/tmp/ycsb-{}", descriptor.name).as_str())
    );
    assert_opens_in(descriptor, &properties, dir)
}

/// Asserts that the engine version a store built from a crate reports
/// (`engine_version`, the binding's constant, and the
/// [`engine_info`](Store::engine_info) of the store opened in a temporary
/// directory) is the version of `package` that the workspace's
/// `Cargo.lock` locks ([`locked_version`]), and that the engine is named
/// `package` too.
///
/// # Panics
///
/// When a version or the name differs, or the store does not open.
#[track_caller]
pub fn assert_reports_locked_version(
    descriptor: &StoreDescriptor,
    manifest_dir: &Path,
    package: &str,
    engine_version: &str,
) {
    let locked = locked_version(manifest_dir, package);
    assert_eq!(engine_version, locked);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = open_in(descriptor, &Properties::new(), dir.path()).expect("open");
    let info = store.engine_info();
    assert_eq!(
        (info.name.as_str(), info.version.as_str()),
        (package, locked.as_str())
    );
}

/// Asserts that while another program holds the database in `dir` through
/// the engine itself (`holder`, say the engine's own handle: no directory
/// lock of ours, but the engine's lock), an open with the descriptor's
/// [`fresh`](StoreDescriptor::fresh) properties is refused with an error
/// containing `reason` and the file `kept` in `dir` is still there; and that
/// once `holder` is dropped, the fresh open succeeds.
///
/// # Panics
///
/// When the fresh open succeeds while held, fails otherwise, deleted
/// `kept`, or fails once the holder is gone.
#[track_caller]
pub fn assert_fresh_open_refused_while_the_engine_holds<H>(
    descriptor: &StoreDescriptor,
    dir: &Path,
    holder: H,
    reason: &str,
    kept: &str,
) {
    let fresh = with_fresh(descriptor, &Properties::new());
    let Err(err) = open_in(descriptor, &fresh, dir) else {
        panic!("{:?} opened a database the engine holds", descriptor.fresh);
    };
    let text = err.to_string();
    assert!(text.contains(reason), "{text}");
    assert!(dir.join(kept).exists(), "{kept} was deleted");
    drop(holder);
    if let Err(e) = open_in(descriptor, &fresh, dir) {
        panic!("no fresh open once the engine let go: {e}");
    }
}

/// Inserts `count` records `user00000`, `user00001`, ... through one thread
/// of `store`, each one field `field0` of `value_len` bytes: data to fill
/// pages, memtables and files for the checks of an engine's gauges and
/// reports.
///
/// # Panics
///
/// When the store gives no thread or an insert fails.
#[track_caller]
pub fn insert_filler_records(store: &dyn Store, count: usize, value_len: usize) {
    let mut t = store.thread(ThreadContext::new(0, 1)).expect("a thread");
    let value = "x".repeat(value_len);
    for i in 0..count {
        let key = format!("user{i:05}");
        assert_eq!(
            t.insert(TABLE, &key, &record(&[("field0", &value)])),
            Status::Ok,
            "insert {key}"
        );
    }
}

/// Asserts that the stored value at `key`, which is not a record in the
/// one encoding (something else wrote it), is answered
/// [`Status::UnexpectedState`], not a panic or garbage, by a read (copied
/// and in place), a scan starting there and an update, and that the failed
/// update changed nothing.
///
/// # Panics
///
/// When an operation answers otherwise.
#[track_caller]
pub fn assert_not_a_record(t: &mut dyn StoreThread, key: &str) {
    let read = |t: &mut dyn StoreThread| read_both_ways(t, TABLE, key, Fields::All).0;
    assert_eq!(read(t), Status::UnexpectedState);
    let mut rows = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, key, 1, Fields::All), &mut rows),
        Status::UnexpectedState
    );
    assert_eq!(
        t.update(TABLE, key, &record(&[("f", "v")])),
        Status::UnexpectedState
    );
    assert_eq!(read(t), Status::UnexpectedState);
}

/// Asserts that the two data directories no one can make
/// ([`unusable_location_errors`]) are refused by the directory guard
/// ([`StoreError::DataDir`]), the one below a regular file with an error
/// that reads `cannot open <store>: <property>=` and says that the
/// directory cannot be created.
///
/// # Panics
///
/// When the store opens, or an error is not the guard's or reads
/// otherwise.
#[track_caller]
pub fn assert_unusable_locations_refused(
    descriptor: &StoreDescriptor,
    properties: &Properties,
    dir: &Path,
) {
    let [below_a_file, in_proc] = unusable_location_errors(descriptor, properties, dir);
    for err in [&below_a_file, &in_proc] {
        assert!(matches!(err, StoreError::DataDir(_)), "{err:?}");
    }
    let data_dir = descriptor.data_dir.expect("a data directory");
    let text = below_a_file.to_string();
    let setting = format!("cannot open {}: {}=", descriptor.name, data_dir.name);
    assert!(
        text.starts_with(&setting) && text.contains("cannot create the directory"),
        "{text}"
    );
}

/// Asserts that a second open of the same directory in this process, while
/// the first store is open ([`second_open_error`]), is refused by the
/// directory guard as in use, naming the directory.
///
/// # Panics
///
/// When the second open succeeds or its error is not the guard's, does not
/// say the directory is in use or does not name it.
#[track_caller]
pub fn assert_second_open_refused(
    descriptor: &StoreDescriptor,
    properties: &Properties,
    dir: &Path,
) {
    let err = second_open_error(descriptor, properties, dir);
    assert!(matches!(err, StoreError::DataDir(_)), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("is in use"), "{text}");
    assert!(text.contains(&dir.display().to_string()), "{text}");
}

/// Asserts what the directory guard promises an embedded store's users,
/// each in a temporary directory of its own: a data directory no one can
/// make is refused ([`assert_unusable_locations_refused`]), so is a second
/// open of a directory in use ([`assert_second_open_refused`]), and the
/// guard holds for the layout on the descriptor
/// ([`assert_guards_its_directory`]).
///
/// # Panics
///
/// As the three checks.
#[track_caller]
pub fn assert_directory_is_guarded(descriptor: &StoreDescriptor, properties: &Properties) {
    let temporary = || tempfile::tempdir().expect("a temporary directory");
    assert_unusable_locations_refused(descriptor, properties, temporary().path());
    assert_second_open_refused(descriptor, properties, temporary().path());
    assert_guards_its_directory(descriptor, properties, temporary().path());
}

/// Asserts the single-thread operations on five records inserted out of
/// key order, through a table name the store ignores: whole and partial
/// reads, missing keys (a prefix of stored keys included), an update that
/// changes one field and adds another, scans from stored and unstored
/// start keys, of no record and with a field selection, a delete, a second
/// delete of the same key answered `missing_delete`, and last an update of
/// a missing key, answered as `missing_update` says.
///
/// `t` must be a thread of an empty store that ignores table names.
///
/// # Panics
///
/// When an operation answers otherwise or a read or scan differs from what
/// was written.
#[track_caller]
pub fn assert_operations_in_key_order(
    t: &mut dyn StoreThread,
    missing_delete: Status,
    missing_update: UpdateMissing,
) {
    let read = |t: &mut dyn StoreThread, key: &str, fields: Fields<'_>| {
        read_both_ways(t, TABLE, key, fields)
    };
    let scan =
        |t: &mut dyn StoreThread, start: &str, count: usize| scan_keys(t, TABLE, start, count);
    for key in ["user3", "user1", "user5", "user2", "user4"] {
        let r = record(&[
            ("field0", &format!("{key}-0")),
            ("field1", &format!("{key}-1")),
        ]);
        assert_eq!(t.insert("any-table", key, &r), Status::Ok);
    }
    assert_eq!(
        read(t, "user2", Fields::All),
        (
            Status::Ok,
            text_fields(&record(&[("field0", "user2-0"), ("field1", "user2-1")]))
        )
    );
    let only = vec!["field1".to_string()];
    assert_eq!(
        read(t, "user2", Fields::Only(&only)),
        (Status::Ok, text_fields(&record(&[("field1", "user2-1")])))
    );
    assert_eq!(read(t, "user9", Fields::All), (Status::NotFound, vec![]));
    // A key that is a prefix of stored keys is still not found.
    assert_eq!(read(t, "user", Fields::All).0, Status::NotFound);

    // Update merges: field1 changes, field2 is added, field0 is kept.
    let changes = record(&[("field1", "new-1"), ("field2", "new-2")]);
    assert_eq!(t.update(TABLE, "user3", &changes), Status::Ok);
    let (status, mut got) = read(t, "user3", Fields::All);
    assert_eq!(status, Status::Ok);
    got.sort();
    assert_eq!(
        got,
        text_fields(&record(&[
            ("field0", "user3-0"),
            ("field1", "new-1"),
            ("field2", "new-2")
        ]))
    );

    // Scans are ordered from the start key (inclusive) and stop at count.
    assert_eq!(scan(t, "user2", 3), ["user2", "user3", "user4"]);
    assert_eq!(scan(t, "user2~", 2), ["user3", "user4"]);
    // A start key between records.
    assert_eq!(scan(t, "user25", 2), ["user3", "user4"]);
    assert_eq!(scan(t, "user25", 10), ["user3", "user4", "user5"]);
    assert_eq!(scan(t, "user4", 10), ["user4", "user5"]);
    assert_eq!(scan(t, "", 1), ["user1"]);
    assert!(scan(t, "user6", 10).is_empty());
    assert!(scan(t, "user1", 0).is_empty());
    assert_eq!(
        scan_rows(t, TABLE, "user1", 2, Fields::Only(&only)),
        vec![
            (
                "user1".to_string(),
                text_fields(&record(&[("field1", "user1-1")]))
            ),
            (
                "user2".to_string(),
                text_fields(&record(&[("field1", "user2-1")]))
            ),
        ]
    );

    assert_eq!(t.delete(TABLE, "user3"), Status::Ok);
    assert_eq!(read(t, "user3", Fields::All).0, Status::NotFound);
    assert_eq!(scan(t, "user2", 2), ["user2", "user4"]);
    assert_eq!(t.delete(TABLE, "user3"), missing_delete);

    // Last, since an update that creates its record adds a key.
    match missing_update {
        UpdateMissing::NotFound => {
            assert_eq!(t.update(TABLE, "user9", &changes), Status::NotFound);
            assert_eq!(read(t, "user9", Fields::All).0, Status::NotFound);
        }
        UpdateMissing::Creates => {
            assert_eq!(t.update(TABLE, "user9", &changes), Status::Ok);
            let (status, mut got) = read(t, "user9", Fields::All);
            got.sort();
            assert_eq!((status, got), (Status::Ok, text_fields(&changes)));
        }
    }
}

/// Asserts that the threads of one store share one database: four threads
/// insert 500 records each at once, and one thread then reads every record
/// back (copied and in place) and scans exactly those 2000.
///
/// `store` must be empty.
///
/// # Panics
///
/// When an insert fails, or a record or the scan differs from what was
/// written.
#[track_caller]
pub fn assert_threads_share_one_store(store: &dyn Store) {
    let key = |id: usize, i: usize| format!("user{id}-{i:04}");
    std::thread::scope(|s| {
        for id in 0..4 {
            s.spawn(move || {
                let mut t = store.thread(ThreadContext::new(id, 4)).expect("a thread");
                for i in 0..500 {
                    let key = key(id, i);
                    assert_eq!(
                        t.insert(TABLE, &key, &record(&[("field0", &key)])),
                        Status::Ok
                    );
                }
            });
        }
    });
    let mut t = store.thread(ThreadContext::new(0, 1)).expect("a thread");
    for id in 0..4 {
        for i in 0..500 {
            let key = key(id, i);
            assert_eq!(
                read_both_ways(t.as_mut(), TABLE, &key, Fields::All),
                (Status::Ok, text_fields(&record(&[("field0", &key)])))
            );
        }
    }
    assert_eq!(scan_keys(t.as_mut(), TABLE, "", 3000).len(), 2000);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ReferenceStore;

    #[test]
    fn shipped_files_are_at_the_workspace_root() {
        let file = shipped_property_file(Path::new("/w/crates/ycsb-x"), "x");
        assert_eq!(file, Path::new("/w/crates/ycsb-x/../../x/x.properties"));
    }

    #[test]
    fn threads_of_a_store_that_keeps_the_contract_share_it() {
        assert_threads_share_one_store(&ReferenceStore::new());
    }

    #[test]
    fn filler_records_are_inserted_with_their_length() {
        let store = ReferenceStore::new();
        insert_filler_records(&store, 30, 7);
        assert_eq!(store.table_len(TABLE), 30);
        let last = store.get(TABLE, "user00029").unwrap();
        assert_eq!(last.get("field0"), Some(&b"xxxxxxx"[..]));
    }

    #[test]
    fn a_stored_record_is_caught_as_one() {
        let store = ReferenceStore::new();
        insert_filler_records(&store, 1, 7);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            assert_not_a_record(t.as_mut(), "user00000")
        }));
        assert!(caught.is_err());
    }
}
