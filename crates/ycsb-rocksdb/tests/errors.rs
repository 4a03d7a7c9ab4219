//! Engine failures become clear errors, never panics.

mod common;

use common::open;
use ycsb_db::testing::{record, report};
use ycsb_db::{Fields, ReadOp, Record, Status, Store, StoreError, ThreadContext};

fn open_err(dir: &std::path::Path, extra: &[(&str, &str)]) -> StoreError {
    match open(dir, extra) {
        Ok(_) => panic!("opening {} succeeded", dir.display()),
        Err(e) => e,
    }
}

#[test]
fn directory_that_cannot_be_created() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"not a directory").unwrap();
    // A path below a regular file cannot be created, even by root.
    let err = open_err(&file.join("db"), &[]);
    assert!(matches!(err, StoreError::DataDir(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("cannot open rocksdb: rocksdb.dbname=")
            && text.contains("cannot create the directory"),
        "{text}"
    );
    assert!(text.contains("plain-file/db"), "{text}");
}

#[test]
fn directory_that_is_not_writable() {
    let dir = tempfile::tempdir().unwrap();
    // /proc refuses new entries whatever the user's privileges.
    let err = open_err(std::path::Path::new("/proc/ycsb-rocksdb-test"), &[]);
    assert!(matches!(err, StoreError::DataDir(_)), "{err:?}");
    assert!(err.to_string().contains("/proc/ycsb-rocksdb-test"), "{err}");
    drop(dir);
}

#[test]
fn database_locked_by_another_opener() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(dir.path(), &[]).unwrap();
    let err = open_err(dir.path(), &[("rocksdb.destroy", "true")]);
    assert!(matches!(err, StoreError::DataDir(_)), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("is in use"), "{text}");
    assert!(text.contains(&dir.path().display().to_string()), "{text}");
    // The first opener is unaffected.
    let mut t = first.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert("t", "k", &record(&[("f", "v")])), Status::Ok);
}

#[test]
fn corrupt_options_file() {
    let dir = tempfile::tempdir().unwrap();
    let options = dir.path().join("options.ini");
    std::fs::write(&options, "[Version]\n  this is = not [an OPTIONS file\n").unwrap();
    let db = dir.path().join("db");
    let err = open_err(&db, &[("rocksdb.optionsfile", options.to_str().unwrap())]);
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("rocksdb.optionsfile"), "{text}");
    assert!(text.contains("options.ini"), "{text}");
    assert!(!db.exists(), "nothing is created on a bad options file");
}

#[test]
fn missing_options_file() {
    let dir = tempfile::tempdir().unwrap();
    let options = dir.path().join("nowhere.ini");
    let err = open_err(
        &dir.path().join("db"),
        &[("rocksdb.optionsfile", options.to_str().unwrap())],
    );
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("nowhere.ini"), "{err}");
}

#[test]
fn options_file_is_loaded_and_applied() {
    // An OPTIONS file written by RocksDB itself, with a changed memtable
    // size, as a user would save one.
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    drop(open(&source, &[("rocksdb.write_buffer_size", "12345678")]).unwrap());
    let written = std::fs::read_dir(&source)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with("OPTIONS-") && !name.ends_with(".dbtmp")
        })
        .max()
        .unwrap();
    let text = std::fs::read_to_string(written).unwrap();
    assert!(text.contains("write_buffer_size=12345678"));
    let file = dir.path().join("my-options.ini");
    std::fs::write(&file, text.replace("12345678", "7654321")).unwrap();

    let target = dir.path().join("target");
    let store = open(
        &target,
        &[
            ("rocksdb.optionsfile", file.to_str().unwrap()),
            // Ignored with an options file, as in YCSB-cpp.
            ("rocksdb.write_buffer_size", "999999"),
        ],
    )
    .unwrap();
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert("t", "k", &record(&[("f", "v")])), Status::Ok);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new("t", "k", Fields::All), &mut out),
        Status::Ok
    );
    let reports = store.final_reports();
    let options = report(&reports, "rocksdb.OPTIONS");
    assert!(options.contains("write_buffer_size=7654321"), "{options}");
}

/// YCSB-cpp's `rocksdb.compaction_pri` (a number cast to `CompactionPri`)
/// reaches the engine, with the other tuning properties beside it: the
/// OPTIONS file RocksDB writes says so.
#[test]
fn compaction_pri_is_applied_as_ycsb_cpp_sets_it() {
    for (value, name, also) in [
        ("3", "kMinOverlappingRatio", &[][..]),
        ("kRoundRobin", "kRoundRobin", &[][..]),
        (
            "1",
            "kOldestLargestSeqFirst",
            &[("rocksdb.write_buffer_size", "12345678")][..],
        ),
        (
            "0",
            "kByCompensatedSize",
            &[("rocksdb.dbbench_defaults", "true")][..],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut props = vec![("rocksdb.compaction_pri", value)];
        props.extend_from_slice(also);
        let store = open(&dir.path().join("db"), &props).unwrap();
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        assert_eq!(t.insert("t", "k", &record(&[("f", "v")])), Status::Ok);
        drop(t);
        let reports = store.final_reports();
        let options = report(&reports, "rocksdb.OPTIONS");
        assert!(
            options.contains(&format!("compaction_pri={name}")),
            "{value}: {options}"
        );
        for (_, size) in also
            .iter()
            .filter(|(k, _)| *k == "rocksdb.write_buffer_size")
        {
            assert!(
                options.contains(&format!("write_buffer_size={size}")),
                "{options}"
            );
        }
    }
}

#[test]
fn property_errors_surface_from_open() {
    let dir = tempfile::tempdir().unwrap();
    let err = open_err(dir.path(), &[("rocksdb.sync", "yes")]);
    assert!(matches!(err, StoreError::Property(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "rocksdb.sync: invalid value 'yes' (-p flag): expected true or false"
    );
}
