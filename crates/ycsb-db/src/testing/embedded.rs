//! Checks every embedded engine (a store keeping its files in a directory
//! its [`StoreDescriptor::data_dir`] property names) owes its users, beyond
//! the per-operation contract of [`check_store`](super::check_store): its
//! data outlives the process, [`StoreDescriptor::fresh`] empties it, and a
//! directory that is not its own is refused untouched.
//!
//! They open stores through the descriptor, as the workbench does, and
//! panic with what they found, like [`assert_conforms`](super::assert_conforms).

use crate::{ReadOp, ScanOp};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::properties::{Origin, Properties};
use crate::record::{Fields, Record, ScanResult};
use crate::status::Status;
use crate::store::{
    EngineReport, Gauge, Store, StoreContext, StoreDescriptor, StoreError, StoreThread,
    ThreadContext,
};

use super::{record, text_fields};

/// The table the checks write; embedded engines differ in whether tables
/// are separate key spaces, so the checks use only this one.
const TABLE: &str = "usertable";

/// How many records [`assert_survives_reopen`] writes: enough that B-trees
/// split pages and LSM trees flush more than one buffer block.
const REOPEN_RECORDS: usize = 500;

/// Reads `key` both ways, copied ([`StoreThread::read`]) and in place
/// ([`StoreThread::read_in_place`]), asserts that they agree (the workload
/// reads in place unless it verifies data), and returns the status with the
/// fields as text.
///
/// # Panics
///
/// When the two reads disagree on the status or the fields, or the view is
/// visited twice or on a failed read.
#[track_caller]
pub fn read_both_ways(
    thread: &mut dyn StoreThread,
    table: &str,
    key: &str,
    fields: Fields<'_>,
) -> (Status, Vec<(String, String)>) {
    let mut copied = Record::new();
    let status = thread.read(&ReadOp::new(table, key, fields), &mut copied);
    let mut seen = None;
    let in_place = thread.read_in_place(
        &ReadOp::new(table, key, fields),
        &mut Record::new(),
        &mut |view| {
            assert!(seen.is_none(), "read_in_place of {key} visited twice");
            seen = Some(view.iter().collect::<Record>());
        },
    );
    assert_eq!(in_place, status, "read_in_place of {key}");
    assert_eq!(seen.is_some(), status.is_ok(), "visited on {status:?}");
    if let Some(seen) = seen {
        assert_eq!(seen, copied, "read_in_place of {key}");
    }
    (status, text_fields(&copied))
}

/// The keys a scan of `count` records from `start` returns, asserting that
/// it succeeds.
///
/// # Panics
///
/// When the scan's status is not [`Status::Ok`].
#[track_caller]
pub fn scan_keys(
    thread: &mut dyn StoreThread,
    table: &str,
    start: &str,
    count: usize,
) -> Vec<String> {
    let mut rows = ScanResult::new();
    let status = thread.scan(&ScanOp::new(table, start, count, Fields::All), &mut rows);
    assert_eq!(status, Status::Ok, "scan of {count} from {start:?}");
    rows.iter().map(|(key, _)| key.to_string()).collect()
}

/// The rows a scan of `count` records from `start` returns, each key with
/// its `fields` as text, asserting that it succeeds.
///
/// # Panics
///
/// When the scan's status is not [`Status::Ok`].
#[track_caller]
pub fn scan_rows(
    thread: &mut dyn StoreThread,
    table: &str,
    start: &str,
    count: usize,
    fields: Fields<'_>,
) -> Vec<(String, Vec<(String, String)>)> {
    let mut rows = ScanResult::new();
    let status = thread.scan(&ScanOp::new(table, start, count, fields), &mut rows);
    assert_eq!(status, Status::Ok, "scan of {count} from {start:?}");
    rows.iter()
        .map(|(key, record)| (key.to_string(), text_fields(record)))
        .collect()
}

/// The value of the gauge called `name`.
///
/// # Panics
///
/// When `gauges` has no gauge of that name.
#[track_caller]
pub fn gauge(gauges: &[Gauge], name: &str) -> f64 {
    gauges
        .iter()
        .find(|g| g.name == name)
        .unwrap_or_else(|| panic!("no gauge {name} in {gauges:?}"))
        .value
}

/// The text of the report called `name`.
///
/// # Panics
///
/// When `reports` has no report of that name.
#[track_caller]
pub fn report<'a>(reports: &'a [EngineReport], name: &str) -> &'a str {
    let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
    reports
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no report {name} in {names:?}"))
        .text
        .as_str()
}

/// Reads a `key=value` property file the simple way the shipped files
/// (YCSB-cpp's) are written, without continuations or escapes, each entry
/// with its `file:line` origin, so that a store test can open a store with
/// a file exactly as it ships.
///
/// # Panics
///
/// When the file cannot be read or a line is neither blank, a `#` comment
/// nor `key=value`.
#[track_caller]
pub fn load_property_file(path: &Path) -> Properties {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let file: Arc<Path> = Arc::from(path);
    let mut properties = Properties::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("{}:{}: not key=value", path.display(), index + 1));
        let origin = Origin::File {
            path: Arc::clone(&file),
            line: index + 1,
        };
        properties.set(key.trim(), value.trim(), origin);
    }
    properties
}

/// The version of `package` that the `Cargo.lock` of the workspace holding
/// `manifest_dir` locks, for checking that the engine version a store
/// reports is the one Cargo built (pass `env!("CARGO_MANIFEST_DIR")`).
///
/// # Panics
///
/// When no `Cargo.lock` is found above `manifest_dir` or it does not lock
/// `package`.
#[track_caller]
pub fn locked_version(manifest_dir: &Path, package: &str) -> String {
    let lock_path: PathBuf = manifest_dir
        .ancestors()
        .map(|dir| dir.join("Cargo.lock"))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("no Cargo.lock above {}", manifest_dir.display()));
    let lock = std::fs::read_to_string(&lock_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", lock_path.display()));
    let name_line = format!("\nname = \"{package}\"\n");
    lock.split("[[package]]")
        .find(|entry| entry.contains(&name_line))
        .and_then(|entry| entry.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|version| version.trim_matches('"').to_string())
        .unwrap_or_else(|| panic!("{package} is not in {}", lock_path.display()))
}

/// Opens the store `descriptor` describes with `properties`.
fn open(
    descriptor: &StoreDescriptor,
    properties: &Properties,
) -> Result<Box<dyn Store>, StoreError> {
    (descriptor.open)(&StoreContext::new(properties))
}

/// Opens the store `descriptor` describes with `properties` and its data
/// directory set to `dir`.
pub(super) fn open_in(
    descriptor: &StoreDescriptor,
    properties: &Properties,
    dir: &Path,
) -> Result<Box<dyn Store>, StoreError> {
    let data_dir = descriptor.data_dir.expect("a data directory");
    let mut properties = properties.clone();
    properties.set(data_dir.name, dir.display().to_string(), Origin::Api);
    open(descriptor, &properties)
}

#[track_caller]
fn open_ok(descriptor: &StoreDescriptor, properties: &Properties, why: &str) -> Box<dyn Store> {
    open(descriptor, properties)
        .unwrap_or_else(|e| panic!("{} did not open {why}: {e}", descriptor.name))
}

/// `properties` with the descriptor's [`fresh`](StoreDescriptor::fresh)
/// properties added.
pub(super) fn with_fresh(descriptor: &StoreDescriptor, properties: &Properties) -> Properties {
    let mut fresh = properties.clone();
    for (key, value) in descriptor.fresh {
        fresh.set(*key, *value, Origin::Api);
    }
    fresh
}

fn reopen_key(i: usize) -> String {
    format!("user{i:04}")
}

/// Asserts that a database outlives its store: records written and updated
/// through a store opened with `write`, then closed, read back the same
/// (copied and in place) through a store opened with `reopen`, which scans
/// them in key order, including from a key that is not stored, and updates
/// them field by field; then that the descriptor's
/// [`fresh`](StoreDescriptor::fresh) properties open it empty.
///
/// Both property sets must name the same directory; they may differ in
/// other properties (a table type the reopen must find on disk, a sync mode
/// used only for writing). The records go in out of key order, so that scans
/// cannot pass by following the order of insertion.
///
/// # Panics
///
/// When the store does not open, an operation fails, or a record or a
/// scan differs from what was written.
#[track_caller]
pub fn assert_survives_reopen(
    descriptor: &StoreDescriptor,
    write: &Properties,
    reopen: &Properties,
) {
    {
        let store = open_ok(descriptor, write, "to write");
        let mut thread = store
            .thread(ThreadContext::new(0, 1))
            .expect("a thread of the store");
        // 211 is prime to REOPEN_RECORDS: a permutation of the keys.
        for i in (0..REOPEN_RECORDS).map(|i| i * 211 % REOPEN_RECORDS) {
            let key = reopen_key(i);
            let fields = record(&[("field0", &key), ("field1", "b")]);
            assert_eq!(
                thread.insert(TABLE, &key, &fields),
                Status::Ok,
                "insert {key}"
            );
        }
        let changes = record(&[("field1", "changed")]);
        assert_eq!(
            thread.update(TABLE, "user0007", &changes),
            Status::Ok,
            "update user0007"
        );
        drop(thread);
        store.close().expect("close");
    }
    {
        let store = open_ok(descriptor, reopen, "again");
        let mut thread = store
            .thread(ThreadContext::new(0, 1))
            .expect("a thread of the reopened store");
        let t = thread.as_mut();
        let expect = |key: &str, field1: &str| {
            (
                Status::Ok,
                text_fields(&record(&[("field0", key), ("field1", field1)])),
            )
        };
        assert_eq!(
            read_both_ways(t, TABLE, "user0007", Fields::All),
            expect("user0007", "changed")
        );
        for i in [0, REOPEN_RECORDS / 2, REOPEN_RECORDS - 1] {
            let key = reopen_key(i);
            assert_eq!(
                read_both_ways(t, TABLE, &key, Fields::All),
                expect(&key, "b")
            );
        }
        let all: Vec<String> = (0..REOPEN_RECORDS).map(reopen_key).collect();
        assert_eq!(
            scan_keys(t, TABLE, "", REOPEN_RECORDS * 2),
            all,
            "scan of everything"
        );
        assert_eq!(
            scan_keys(t, TABLE, "user0495", 10),
            ["user0495", "user0496", "user0497", "user0498", "user0499"]
        );
        // A start key between two stored keys starts at the next one.
        assert_eq!(
            scan_keys(t, TABLE, "user02505", 2),
            ["user0251", "user0252"]
        );
        // One field changed, the other kept: a read-modify-write on what
        // was read from the files.
        let changes = record(&[("field1", "y")]);
        assert_eq!(
            t.update(TABLE, "user0042", &changes),
            Status::Ok,
            "update user0042"
        );
        assert_eq!(
            read_both_ways(t, TABLE, "user0042", Fields::All),
            expect("user0042", "y")
        );
    }
    if !descriptor.fresh.is_empty() {
        let store = open_ok(descriptor, &with_fresh(descriptor, reopen), "fresh");
        let mut thread = store
            .thread(ThreadContext::new(0, 1))
            .expect("a thread of the fresh store");
        assert_eq!(
            read_both_ways(thread.as_mut(), TABLE, "user0007", Fields::All).0,
            Status::NotFound,
            "{:?} kept the old records",
            descriptor.fresh
        );
    }
}

/// Opens the store with `properties` (a shipped property file, say) but
/// its data directory moved to `dir`, and asserts that a record inserted
/// there reads back, copied and in place; returns the store for the
/// engine's own checks (its reports show the options in force).
///
/// # Panics
///
/// When the descriptor names no data directory, the store does not open,
/// or the record does not read back.
#[track_caller]
pub fn assert_opens_in(
    descriptor: &StoreDescriptor,
    properties: &Properties,
    dir: &Path,
) -> Box<dyn Store> {
    let data_dir = descriptor
        .data_dir
        .unwrap_or_else(|| panic!("{} keeps no data directory", descriptor.name));
    let mut properties = properties.clone();
    properties.set(data_dir.name, dir.display().to_string(), Origin::Api);
    let store = open_ok(descriptor, &properties, "in a new directory");
    {
        let mut thread = store
            .thread(ThreadContext::new(0, 1))
            .expect("a thread of the store");
        let fields = record(&[("field0", "v")]);
        assert_eq!(
            thread.insert(TABLE, "user1", &fields),
            Status::Ok,
            "insert user1"
        );
        assert_eq!(
            read_both_ways(thread.as_mut(), TABLE, "user1", Fields::All),
            (Status::Ok, text_fields(&fields))
        );
    }
    store
}

/// Asserts that a directory holding someone else's file is refused, with
/// and without the descriptor's [`fresh`](StoreDescriptor::fresh)
/// properties, as an [`StoreError::Open`] whose message holds every part of
/// `refusal`, and that the directory is left as it was: only `file`, with
/// its content.
///
/// `dir` must be an empty directory the test owns; `properties` are what
/// the store needs besides its data directory, which is set to `dir`.
///
/// # Panics
///
/// When the descriptor names no data directory, `file` cannot be written,
/// the store opens, the error differs, or the directory changed.
#[track_caller]
pub fn assert_refuses_foreign_directory(
    descriptor: &StoreDescriptor,
    properties: &Properties,
    dir: &Path,
    file: &str,
    refusal: &[&str],
) {
    let data_dir = descriptor
        .data_dir
        .unwrap_or_else(|| panic!("{} keeps no data directory", descriptor.name));
    let content = "keep me\n";
    std::fs::write(dir.join(file), content).expect("write the foreign file");
    let mut properties = properties.clone();
    properties.set(data_dir.name, dir.display().to_string(), Origin::Api);
    for (how, properties) in [
        ("as it is", properties.clone()),
        ("fresh", with_fresh(descriptor, &properties)),
    ] {
        let err = match open(descriptor, &properties) {
            Ok(_) => panic!(
                "{} opened {} holding {file} ({how})",
                descriptor.name,
                dir.display()
            ),
            Err(err) => err,
        };
        assert!(
            matches!(err, StoreError::Open { .. } | StoreError::DataDir(_)),
            "{how}: {err:?}"
        );
        let message = err.to_string();
        for part in refusal {
            assert!(message.contains(part), "{how}: {part:?} not in {message}");
        }
        let names: Vec<_> = std::fs::read_dir(dir)
            .expect("list the directory")
            .map(|entry| entry.expect("a directory entry").file_name())
            .collect();
        assert_eq!(names, [file], "{how}: the directory changed");
        assert_eq!(
            std::fs::read_to_string(dir.join(file)).expect("read the foreign file"),
            content,
            "{how}: {file} changed"
        );
    }
}

/// Asserts what the one directory guard ([`DataDir`](crate::DataDir))
/// promises for this store, from the layout on its descriptor
/// ([`StoreDescriptor::dir_layout`]):
///
/// - a file named like each of the engine's named files but holding text
///   is refused, with and without the [`fresh`](StoreDescriptor::fresh)
///   properties, and left alone: nothing else appears in the directory;
/// - a real database with someone's `notes.txt` beside it is refused when
///   asked to start fresh, and neither the note nor the database is
///   touched (its record still reads once the note is gone);
/// - a fresh open of the database removes the engine's files only, and the
///   directory then holds nothing the layout does not declare;
/// - a second open of the directory while the first store lives is refused
///   as in use, and the first store still writes.
///
/// `root` must be an empty directory the test owns; `properties` are what
/// the store needs besides its data directory.
///
/// # Panics
///
/// When the descriptor declares no data directory or layout, or any of the
/// above does not hold.
#[track_caller]
pub fn assert_guards_its_directory(
    descriptor: &StoreDescriptor,
    properties: &Properties,
    root: &Path,
) {
    let data_dir = descriptor
        .data_dir
        .unwrap_or_else(|| panic!("{} keeps no data directory", descriptor.name));
    let layout = descriptor
        .dir_layout
        .unwrap_or_else(|| panic!("{} declares no directory layout", descriptor.name));
    let in_dir = |dir: &Path| {
        let mut p = properties.clone();
        p.set(data_dir.name, dir.display().to_string(), Origin::Api);
        p
    };
    assert_impostors_refused(descriptor, layout, root, &in_dir);
    let dir = root.join("database");
    let props = in_dir(&dir);
    assert_a_note_beside_the_database_is_kept(descriptor, &dir, &props);
    assert_a_second_open_is_refused(descriptor, &props);
    assert_fresh_leaves_only_the_engines_files(descriptor, layout, &dir, &props);
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list the directory")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// The guard's refusal of an open with `props` (`how` says which, for the
/// failure message).
#[track_caller]
fn refused(descriptor: &StoreDescriptor, props: &Properties, how: &str) -> crate::Refusal {
    match open(descriptor, props) {
        Ok(_) => panic!("{} opened ({how})", descriptor.name),
        Err(StoreError::DataDir(e)) => e
            .refusal()
            .cloned()
            .unwrap_or_else(|| panic!("{how}: not a refusal: {e}")),
        Err(e) => panic!("{how}: not the guard's refusal: {e:?}"),
    }
}

/// A text file under each of the engine's exact names is refused, as it
/// is and with a fresh open, and left as it was.
#[track_caller]
fn assert_impostors_refused(
    descriptor: &StoreDescriptor,
    layout: &crate::DirLayout,
    root: &Path,
    in_dir: &dyn Fn(&Path) -> Properties,
) {
    for (i, file) in layout.files.iter().enumerate() {
        let crate::Name::Exact(name) = file.name else {
            continue;
        };
        let dir = root.join(format!("impostor-{i}"));
        std::fs::create_dir(&dir).expect("make the directory");
        let content = "keep me: this is not the engine's file\n";
        std::fs::write(dir.join(name), content).expect("write the impostor");
        let props = in_dir(&dir);
        for (how, props) in [
            ("as it is", props.clone()),
            ("fresh", with_fresh(descriptor, &props)),
        ] {
            let how = format!("a text file named {name}, {how}");
            let refusal = refused(descriptor, &props, &how);
            assert!(
                matches!(&refusal, crate::Refusal::NotTheEngines { file, .. }
                    | crate::Refusal::NoMarker { file, .. } if file == name),
                "{how}: {refusal:?}"
            );
            assert_eq!(listing(&dir), [name], "{how}: the directory changed");
            assert_eq!(
                std::fs::read_to_string(dir.join(name)).expect("read the impostor"),
                content,
                "{how}: {name} changed"
            );
        }
    }
}

/// A real database with someone's note beside it: a fresh open is refused
/// and changes nothing; the database then still opens with its record.
#[track_caller]
fn assert_a_note_beside_the_database_is_kept(
    descriptor: &StoreDescriptor,
    dir: &Path,
    props: &Properties,
) {
    {
        let store = open_ok(descriptor, props, "in a new directory");
        let mut thread = store.thread(ThreadContext::new(0, 1)).expect("a thread");
        assert_eq!(
            thread.insert(TABLE, "kept", &record(&[("f", "v")])),
            Status::Ok
        );
        drop(thread);
        store.close().expect("close");
    }
    let engine_files = listing(dir);
    std::fs::write(dir.join("notes.txt"), "mine\n").expect("write the note");
    let refusal = refused(
        descriptor,
        &with_fresh(descriptor, props),
        "fresh, beside notes.txt",
    );
    assert!(
        matches!(&refusal, crate::Refusal::Foreign { file, beside_database: true, .. } if file == "notes.txt"),
        "fresh, beside notes.txt: {refusal:?}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("read the note"),
        "mine\n"
    );
    let mut with_note = engine_files.clone();
    with_note.push("notes.txt".to_string());
    with_note.sort();
    assert_eq!(
        listing(dir),
        with_note,
        "the refused fresh open changed the directory"
    );
    std::fs::remove_file(dir.join("notes.txt")).expect("remove the note");
}

/// While one store lives, a second (fresh) open of its directory is
/// refused as in use, and the first still reads and writes.
#[track_caller]
fn assert_a_second_open_is_refused(descriptor: &StoreDescriptor, props: &Properties) {
    let store = open_ok(descriptor, props, "after the refusal");
    let mut thread = store.thread(ThreadContext::new(0, 1)).expect("a thread");
    assert_eq!(
        read_both_ways(thread.as_mut(), TABLE, "kept", Fields::All).0,
        Status::Ok,
        "the record after the refused fresh open"
    );
    let refusal = refused(
        descriptor,
        &with_fresh(descriptor, props),
        "a second open, fresh",
    );
    assert_eq!(refusal, crate::Refusal::InUse);
    assert_eq!(
        thread.insert(TABLE, "after", &record(&[("f", "v")])),
        Status::Ok
    );
    drop(thread);
    store.close().expect("close");
}

/// A fresh open empties the database, and the directory then holds only
/// names the layout declares.
#[track_caller]
fn assert_fresh_leaves_only_the_engines_files(
    descriptor: &StoreDescriptor,
    layout: &crate::DirLayout,
    dir: &Path,
    props: &Properties,
) {
    let store = open_ok(descriptor, &with_fresh(descriptor, props), "fresh");
    let mut thread = store.thread(ThreadContext::new(0, 1)).expect("a thread");
    assert_eq!(
        thread.read(&ReadOp::new(TABLE, "kept", Fields::All), &mut Record::new()),
        Status::NotFound,
        "fresh kept a record"
    );
    drop(thread);
    store.close().expect("close");
    drop(store);
    for name in listing(dir) {
        assert!(
            layout.files.iter().any(|f| f.name.matches(&name)),
            "{name} in a fresh {} directory is not in its layout",
            layout.engine
        );
    }
}

/// Opens the store with its data directory where no directory can be made
/// and returns the two errors for the engine's own checks on their wording:
/// below a regular file (`dir/plain-file/db`, refused even to root, which
/// permission bits would not stop), and in procfs
/// (`/proc/ycsb-<name>-test/db`, which no one can create entries in).
/// Each is asserted to be an error naming its path.
///
/// `dir` must be a directory the test owns; `properties` are what the store
/// needs besides its data directory.
///
/// # Panics
///
/// When the descriptor names no data directory, the plain file cannot be
/// written, the store opens, or an error does not name its path.
#[track_caller]
pub fn unusable_location_errors(
    descriptor: &StoreDescriptor,
    properties: &Properties,
    dir: &Path,
) -> [StoreError; 2] {
    let data_dir = descriptor
        .data_dir
        .unwrap_or_else(|| panic!("{} keeps no data directory", descriptor.name));
    let file = dir.join("plain-file");
    std::fs::write(&file, b"not a directory").expect("write the plain file");
    let proc_dir = PathBuf::from(format!("/proc/ycsb-{}-test/db", descriptor.name));
    [file.join("db"), proc_dir].map(|location| {
        let mut properties = properties.clone();
        properties.set(data_dir.name, location.display().to_string(), Origin::Api);
        match open(descriptor, &properties) {
            Ok(_) => panic!("{} opened in {}", descriptor.name, location.display()),
            Err(err) => {
                let shown = location.display().to_string();
                assert!(err.to_string().contains(&shown), "{shown} not in {err}");
                err
            }
        }
    })
}

/// Opens the store in `dir`, asserts that a second open of the same
/// directory in this process fails while the first is open and that the
/// first still writes, and returns the second open's error for the engine's
/// own checks on its wording.
///
/// # Panics
///
/// When the descriptor names no data directory, the first open fails, the
/// second succeeds, or the first store no longer inserts.
#[track_caller]
pub fn second_open_error(
    descriptor: &StoreDescriptor,
    properties: &Properties,
    dir: &Path,
) -> StoreError {
    let data_dir = descriptor
        .data_dir
        .unwrap_or_else(|| panic!("{} keeps no data directory", descriptor.name));
    let mut properties = properties.clone();
    properties.set(data_dir.name, dir.display().to_string(), Origin::Api);
    let first = open_ok(descriptor, &properties, "the first time");
    let err = match open(descriptor, &properties) {
        Ok(_) => panic!("{} opened {} twice", descriptor.name, dir.display()),
        Err(err) => err,
    };
    let mut thread = first
        .thread(ThreadContext::new(0, 1))
        .expect("a thread of the first store");
    let fields = record(&[("f", "v")]);
    assert_eq!(
        thread.insert(TABLE, "k", &fields),
        Status::Ok,
        "the first store after the refused second open"
    );
    err
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ReferenceStore;

    #[test]
    fn property_files_keep_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.properties");
        std::fs::write(&path, "# comment\n\n a.b = 1 \nc=two=2\n").unwrap();
        let p = load_property_file(&path);
        assert_eq!(p.get_str("a.b"), Some("1"));
        assert_eq!(p.get_str("c"), Some("two=2"));
        assert_eq!(
            p.origin("a.b").map(ToString::to_string),
            Some(format!("{}:3", path.display()))
        );
    }

    #[test]
    #[should_panic(expected = ":1: not key=value")]
    fn a_line_without_equals_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.properties");
        std::fs::write(&path, "novalue\n").unwrap();
        load_property_file(&path);
    }

    #[test]
    fn locked_versions_come_from_the_workspace_lock() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(
            locked_version(manifest, "ycsb-db"),
            env!("CARGO_PKG_VERSION")
        );
    }

    #[test]
    fn both_reads_agree_on_a_store_that_keeps_the_contract() {
        let store = ReferenceStore::new();
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        let fields = record(&[("f", "v")]);
        assert_eq!(t.insert(TABLE, "k", &fields), Status::Ok);
        assert_eq!(
            read_both_ways(t.as_mut(), TABLE, "k", Fields::All),
            (Status::Ok, text_fields(&fields))
        );
        assert_eq!(
            read_both_ways(t.as_mut(), TABLE, "x", Fields::All),
            (Status::NotFound, vec![])
        );
        assert_eq!(scan_keys(t.as_mut(), TABLE, "", 5), ["k"]);
    }

    #[test]
    #[should_panic(expected = "no report b in [\"a\"]")]
    fn a_missing_report_is_named() {
        let reports = [EngineReport {
            name: "a".into(),
            text: "text".into(),
        }];
        assert_eq!(report(&reports, "a"), "text");
        report(&reports, "b");
    }

    #[test]
    #[should_panic(expected = "no gauge b")]
    fn a_missing_gauge_is_named() {
        gauge(&[Gauge::count("a", 1.0)], "b");
    }
}
