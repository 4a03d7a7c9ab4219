//! The rocksdb store against a real RocksDB in temporary directories.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{open, props, record_for};
use ycsb_db::testing::{
    assert_conforms, assert_guards_its_directory, assert_opens_in, assert_survives_reopen,
    load_property_file, record, report, Contract, Deletes, UpdateMissing,
};
use ycsb_db::{
    EngineLibrary, Fields, Origin, Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store,
    ThreadContext,
};
use ycsb_rocksdb::{Compression, EngineOptions, RocksConfig, DESCRIPTOR};

const T: &str = "usertable";

fn ctx() -> ThreadContext {
    ThreadContext::new(0, 1)
}

#[test]
fn insert_read_select_update_delete() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]).unwrap();
    let mut t = store.thread(ctx()).unwrap();
    let full = record_for("user1", 10, 100);
    assert_eq!(t.insert(T, "user1", &full), Status::Ok);

    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "user1", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out, full);

    let only = vec!["field3".to_string(), "field7".to_string()];
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "user1", Fields::Only(&only)), &mut out),
        Status::Ok
    );
    assert_eq!(out.len(), 2);
    assert_eq!(out.get("field3"), full.get("field3"));
    assert_eq!(out.get("field7"), full.get("field7"));

    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "user2", Fields::All), &mut out),
        Status::NotFound
    );
    assert!(out.is_empty());

    // Read-modify-write: one field changes, one is added, the rest stay.
    let change = record(&[("field3", "new3"), ("extra", "x")]);
    assert_eq!(t.update(T, "user1", &change), Status::Ok);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "user1", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.len(), 11);
    assert_eq!(out.get("field3"), Some(&b"new3"[..]));
    assert_eq!(out.get("extra"), Some(&b"x"[..]));
    assert_eq!(out.get("field0"), full.get("field0"));
    assert_eq!(out.get("field9"), full.get("field9"));

    assert_eq!(t.update(T, "user2", &change), Status::NotFound);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "user2", Fields::All), &mut out),
        Status::NotFound
    );

    assert_eq!(t.delete(T, "user1"), Status::Ok);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "user1", Fields::All), &mut out),
        Status::NotFound
    );
    t.cleanup().unwrap();
}

/// Both update paths of the record format. The raw format is exempt: it
/// holds records of exactly one field (db_bench's bare values), and the
/// kit's records have several; `raw_format_stores_the_bare_value` covers it.
#[test]
fn keeps_the_store_contract() {
    for (update, extra, update_missing) in [
        ("read-modify-write", &[][..], UpdateMissing::NotFound),
        // A merge operand is a blind write: it makes a record of its fields.
        (
            "merge operator",
            &[("rocksdb.mergeupdate", "true")][..],
            UpdateMissing::Creates,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), extra).unwrap();
        eprintln!("rocksdb, {update} updates");
        // RocksDB's Delete cannot tell whether the key existed.
        let contract = Contract::new()
            .with_deletes(Deletes::MissingOk)
            .with_update_missing(update_missing);
        assert_conforms(&store, &contract);
    }
}

#[test]
fn raw_format_stores_the_bare_value() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(
        dir.path(),
        &[("rocksdb.format", "raw"), ("rocksdb.raw_field", "v")],
    )
    .unwrap();
    let mut t = store.thread(ctx()).unwrap();
    // The name written is not stored: reads give the configured one.
    assert_eq!(t.insert(T, "k1", &record(&[("x", "value1")])), Status::Ok);
    assert_eq!(t.insert(T, "k2", &record(&[("v", "value2")])), Status::Ok);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "k1", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out, record(&[("v", "value1")]));
    let other = vec!["w".to_string()];
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "k1", Fields::Only(&other)), &mut out),
        Status::Ok
    );
    assert!(out.is_empty());
    // An update is a blind overwrite and creates a missing key.
    assert_eq!(t.update(T, "k1", &record(&[("v", "new")])), Status::Ok);
    assert_eq!(t.update(T, "k3", &record(&[("v", "three")])), Status::Ok);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "k1", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.get("v"), Some(&b"new"[..]));
    // Only records of exactly one field fit.
    let two = record(&[("a", "1"), ("b", "2")]);
    assert_eq!(t.insert(T, "k4", &two), Status::BadRequest);
    assert_eq!(t.update(T, "k1", &Record::new()), Status::BadRequest);
    let mut rows = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(T, "k1", 10, Fields::All), &mut rows),
        Status::Ok
    );
    let got: Vec<(String, Vec<u8>)> = rows
        .iter()
        .map(|(k, r)| (k.to_string(), r.get("v").unwrap_or_default().to_vec()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("k1".to_string(), b"new".to_vec()),
            ("k2".to_string(), b"value2".to_vec()),
            ("k3".to_string(), b"three".to_vec()),
        ]
    );
}

#[test]
fn table_name_is_ignored_like_ycsb_cpp() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]).unwrap();
    let mut t = store.thread(ctx()).unwrap();
    assert_eq!(t.insert("a", "k", &record(&[("f", "1")])), Status::Ok);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new("b", "k", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.get("f"), Some(&b"1"[..]));
}

#[test]
fn scan_is_ordered_from_start_key_with_field_selection() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]).unwrap();
    let mut t = store.thread(ctx()).unwrap();
    for i in [7, 2, 9, 0, 5, 3, 8, 1, 6, 4] {
        let key = format!("user{i}");
        assert_eq!(t.insert(T, &key, &record_for(&key, 3, 10)), Status::Ok);
    }
    let only = vec!["field1".to_string()];
    let mut rows = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(T, "user3", 4, Fields::Only(&only)), &mut rows),
        Status::Ok
    );
    let keys: Vec<_> = rows.iter().map(|(k, _)| k.to_string()).collect();
    assert_eq!(keys, ["user3", "user4", "user5", "user6"]);
    for (key, r) in rows.iter() {
        assert_eq!(r.len(), 1);
        assert_eq!(r.get("field1"), record_for(key, 3, 10).get("field1"));
    }

    // A start key between records, and a scan running off the end.
    let mut rows = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(T, "user75", 10, Fields::All), &mut rows),
        Status::Ok
    );
    let keys: Vec<_> = rows.iter().map(|(k, _)| k.to_string()).collect();
    assert_eq!(keys, ["user8", "user9"]);
    assert_eq!(rows.iter().next().unwrap().1, &record_for("user8", 3, 10));

    let mut rows = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(T, "user99", 5, Fields::All), &mut rows),
        Status::Ok
    );
    assert!(rows.is_empty());
}

#[test]
fn merge_updates_merge_fields_and_survive_compaction_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path(), &[("rocksdb.mergeupdate", "true")]).unwrap();
        let mut t = store.thread(ctx()).unwrap();
        assert_eq!(
            t.insert(T, "k", &record(&[("a", "1"), ("b", "2"), ("c", "3")])),
            Status::Ok
        );
        assert_eq!(t.update(T, "k", &record(&[("b", "20")])), Status::Ok);
        assert_eq!(
            t.update(T, "k", &record(&[("c", "30"), ("d", "40")])),
            Status::Ok
        );
        assert_eq!(t.update(T, "k", &record(&[("b", "200")])), Status::Ok);
        let expected = record(&[("a", "1"), ("b", "200"), ("c", "30"), ("d", "40")]);
        let mut out = Record::new();
        assert_eq!(
            t.read(&ReadOp::new(T, "k", Fields::All), &mut out),
            Status::Ok
        );
        assert_eq!(out, expected);

        // Operands merged by a flush and a full compaction give the same.
        store.db().flush().unwrap();
        store.db().compact_range::<&[u8], &[u8]>(None, None);
        let mut out = Record::new();
        assert_eq!(
            t.read(&ReadOp::new(T, "k", Fields::All), &mut out),
            Status::Ok
        );
        assert_eq!(out, expected);

        // As in YCSB-cpp, a merge update of a missing key creates it.
        assert_eq!(t.update(T, "new", &record(&[("x", "1")])), Status::Ok);
        assert_eq!(t.update(T, "pending", &record(&[("y", "2")])), Status::Ok);
        store.close().unwrap();
    }
    // Without mergeupdate the operator is still installed, so pending
    // operands stay readable.
    let store = open(dir.path(), &[]).unwrap();
    let mut t = store.thread(ctx()).unwrap();
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "pending", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out, record(&[("y", "2")]));
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "k", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.get("b"), Some(&b"200"[..]));
}

#[test]
fn threads_share_one_database() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]).unwrap();
    std::thread::scope(|s| {
        for id in 0..4 {
            let store = &store;
            s.spawn(move || {
                let mut t = store.thread(ThreadContext::new(id, 4)).unwrap();
                for i in 0..250 {
                    let key = format!("user{id}-{i:03}");
                    assert_eq!(t.insert(T, &key, &record_for(&key, 2, 20)), Status::Ok);
                }
            });
        }
    });
    let mut t = store.thread(ctx()).unwrap();
    let mut rows = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(T, "", 2000, Fields::All), &mut rows),
        Status::Ok
    );
    assert_eq!(rows.len(), 1000);
    for (key, r) in rows.iter() {
        assert_eq!(r, &record_for(key, 2, 20));
    }
}

#[test]
fn corrupt_stored_value_is_an_unexpected_state() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]).unwrap();
    store.db().put("bad", [0xff; 12]).unwrap();
    let mut t = store.thread(ctx()).unwrap();
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "bad", Fields::All), &mut out),
        Status::UnexpectedState
    );
    let mut rows = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(T, "bad", 1, Fields::All), &mut rows),
        Status::UnexpectedState
    );
    assert_eq!(
        t.update(T, "bad", &record(&[("f", "v")])),
        Status::UnexpectedState
    );
}

/// The workload reads in place unless it verifies data: every outcome of a
/// copying read must look the same through `read_in_place`, in both value
/// formats.
#[test]
fn read_in_place_shows_what_read_copies() {
    let some = vec!["field3".to_string(), "field1".to_string()];
    let none = vec!["missing".to_string()];
    let raw_only = vec!["v".to_string()];
    let selections = [
        Fields::All,
        Fields::Only(&some),
        Fields::Only(&none),
        Fields::Only(&raw_only),
    ];
    for format in [
        &[][..],
        &[("rocksdb.format", "raw"), ("rocksdb.raw_field", "v")][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), format).unwrap();
        store.db().put("bad", [0xff; 12]).unwrap();
        let mut t = store.thread(ctx()).unwrap();
        let stored = if format.is_empty() {
            record_for("user1", 10, 100)
        } else {
            record(&[("v", "bare value")])
        };
        assert_eq!(t.insert(T, "user1", &stored), Status::Ok);
        for key in ["user1", "user2", "bad"] {
            for fields in selections {
                let mut copied = Record::new();
                let status = t.read(&ReadOp::new(T, key, fields), &mut copied);
                let mut seen = Vec::new();
                let in_place = t.read_in_place(
                    &ReadOp::new(T, key, fields),
                    &mut Record::new(),
                    &mut |view| {
                        seen.push(view.iter().collect::<Record>());
                    },
                );
                let what = format!("{format:?} {key} {fields:?}");
                assert_eq!(in_place, status, "{what}");
                let expected: Vec<Record> = if status.is_ok() { vec![copied] } else { vec![] };
                assert_eq!(seen, expected, "{what}");
            }
        }
    }
}

#[test]
fn gauges_after_writes_and_a_flush() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]).unwrap();
    let mut t = store.thread(ctx()).unwrap();
    for i in 0..2000 {
        let key = format!("user{i:05}");
        assert_eq!(t.insert(T, &key, &record_for(&key, 4, 50)), Status::Ok);
    }
    let mut before = Vec::new();
    store.gauges(&mut before);
    let get = |g: &[ycsb_db::Gauge], n: &str| g.iter().find(|x| x.name == n).map(|x| x.value);
    assert!(get(&before, "rocksdb.cur-size-all-mem-tables").unwrap() > 100_000.0);
    assert_eq!(get(&before, "rocksdb.num-files-at-level0"), Some(0.0));

    store.db().flush().unwrap();
    let mut g = Vec::new();
    store.gauges(&mut g);
    // One flush of one memtable writes exactly one L0 file (automatic
    // compaction needs 4 by default).
    assert_eq!(get(&g, "rocksdb.num-files-at-level0"), Some(1.0));
    // Seven levels by default, all present.
    for level in 0..7 {
        let name = format!("rocksdb.num-files-at-level{level}");
        assert!(get(&g, &name).is_some(), "{name} missing from {g:?}");
    }
    // The estimate counts the flushed keys (it is exact without deletes
    // or overwrites).
    assert_eq!(get(&g, "rocksdb.estimate-num-keys"), Some(2000.0));
    assert!(get(&g, "rocksdb.live-sst-files-size").unwrap() > 2000.0 * 200.0);
    assert!(get(&g, "rocksdb.cur-size-all-mem-tables").unwrap() < 100_000.0);
    assert_eq!(
        get(&g, "rocksdb.estimate-pending-compaction-bytes"),
        Some(0.0)
    );
    assert_eq!(get(&g, "rocksdb.is-write-stopped"), Some(0.0));
    assert_eq!(get(&g, "rocksdb.stall.total"), Some(0.0));
    assert!(get(&g, "rocksdb.stall.level0_slowdown").is_some());
    assert!(get(&g, "rocksdb.stall.memtable_slowdown").is_some());
}

fn header_version() -> Option<String> {
    // The headers the bindings were generated from, when the build used
    // the system library (ROCKSDB_INCLUDE_DIR, see docs/engines-rocksdb.md).
    let include = option_env!("ROCKSDB_INCLUDE_DIR")?;
    let text = std::fs::read_to_string(Path::new(include).join("rocksdb/version.h")).ok()?;
    let get = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("#define {name} ")))
            .map(|v| v.trim().to_string())
    };
    Some(format!(
        "{}.{}.{}",
        get("ROCKSDB_MAJOR")?,
        get("ROCKSDB_MINOR")?,
        get("ROCKSDB_PATCH")?
    ))
}

/// The build reported is the library this test links: with the default
/// configuration Debian's shared library, built with assertions; with a
/// release build (`cargo xtask engines`, whose tests set
/// `YCSB_ROCKSDB_EXPECT_ASSERTIONS=disabled`) the cache's, without.
#[test]
fn engine_build_names_the_linked_library_and_its_assertions() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]).unwrap();
    let build = store.engine_build();
    let lib_dir = std::env::var("ROCKSDB_LIB_DIR").ok();
    let compiled = std::env::var("ROCKSDB_COMPILE").is_ok() || lib_dir.is_none();
    match &build.library {
        EngineLibrary::Shared(path) => {
            let dir = std::fs::canonicalize(
                lib_dir.expect("a shared library comes from ROCKSDB_LIB_DIR"),
            )
            .unwrap();
            assert!(
                path.starts_with(&dir),
                "{build} is not in {}",
                dir.display()
            );
            assert!(
                path.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("librocksdb.so"),
                "{build}"
            );
        }
        EngineLibrary::Static => assert!(
            compiled || std::env::var_os("ROCKSDB_STATIC").is_some(),
            "{build}"
        ),
        _ => panic!("the linked RocksDB is found: {build}"),
    }
    let expected = match std::env::var("YCSB_ROCKSDB_EXPECT_ASSERTIONS") {
        Ok(expected) => expected,
        Err(_) if compiled => "disabled".into(),
        Err(_) => match &build.library {
            EngineLibrary::Shared(path) if path.starts_with("/usr/lib") => "enabled".into(),
            _ => return,
        },
    };
    assert_eq!(build.assertions.as_str(), expected, "{build}");
    assert_eq!(ycsb_rocksdb::linked_build(), build);
}

#[test]
fn engine_info_is_the_linked_version() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]).unwrap();
    let info = store.engine_info();
    assert_eq!(info.name, "RocksDB");
    let parts: Vec<_> = info.version.split('.').collect();
    assert_eq!(parts.len(), 3, "{}", info.version);
    assert!(
        parts.iter().all(|p| p.parse::<u32>().is_ok()),
        "{}",
        info.version
    );
    // The LOG the engine wrote names the same version.
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(
        log.contains(&format!("RocksDB version: {}", info.version)),
        "LOG does not mention {}",
        info.version
    );
    if let Some(v) = header_version() {
        assert_eq!(info.version, v);
    }
}

#[test]
fn final_reports_hold_stats_statistics_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("rocksdb.statistics", "true")]).unwrap();
    let mut t = store.thread(ctx()).unwrap();
    assert_eq!(t.insert(T, "k", &record(&[("f", "v")])), Status::Ok);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "k", Fields::All), &mut out),
        Status::Ok
    );
    let reports = store.final_reports();
    assert!(report(&reports, "rocksdb.stats").contains("** DB Stats **"));
    let stats = report(&reports, "rocksdb.statistics");
    assert!(
        stats.contains("rocksdb.number.keys.written COUNT : 1"),
        "{stats}"
    );
    assert!(report(&reports, "rocksdb.OPTIONS").contains("[DBOptions]"));

    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]).unwrap();
    assert!(store
        .final_reports()
        .iter()
        .all(|r| r.name != "rocksdb.statistics"));
}

/// Written by a store opened with `rocksdb.destroy` on a new path, read
/// back without it; the kit also checks that destroy empties it again.
#[test]
fn a_database_survives_a_reopen_and_destroy_wipes_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    assert_survives_reopen(
        &DESCRIPTOR,
        &props(&path, &[("rocksdb.destroy", "true")]),
        &props(&path, &[]),
    );
}

#[test]
fn writes_without_wal_survive_a_clean_close() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path(), &[("rocksdb.disable_wal", "true")]).unwrap();
        let mut t = store.thread(ctx()).unwrap();
        assert_eq!(t.insert(T, "k", &record(&[("f", "v")])), Status::Ok);
        drop(t);
        store.close().unwrap();
    }
    let store = open(dir.path(), &[("rocksdb.fill_cache", "false")]).unwrap();
    let mut t = store.thread(ctx()).unwrap();
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(T, "k", Fields::All), &mut out),
        Status::Ok
    );
}

#[test]
fn descriptor_opens_the_store() {
    let dir = tempfile::tempdir().unwrap();
    assert!(DESCRIPTOR.matches("RocksDB"));
    assert!(DESCRIPTOR.matches("site.ycsb.db.rocksdb.RocksDBClient"));
    assert!(DESCRIPTOR
        .properties
        .iter()
        .any(|d| d.name == "rocksdb.dbname" && d.aliases.contains(&"rocksdb.dir")));
    let props = Properties::new().with("rocksdb.dir", dir.path().display());
    let store = (DESCRIPTOR.open)(&ycsb_db::StoreContext::new(&props)).unwrap();
    let mut t = store.thread(ctx()).unwrap();
    assert_eq!(t.insert(T, "k", &record(&[("f", "v")])), Status::Ok);
    drop(t);
    store.close().unwrap();
    assert!(dir.path().join("CURRENT").exists());
}

fn shipped_file() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rocksdb/rocksdb.properties")
}

#[test]
fn shipped_properties_file_has_ycsb_cpp_values_and_opens() {
    let props = load_property_file(&shipped_file());
    let unknown = props.unknown(DESCRIPTOR.properties.iter().copied());
    assert!(unknown.is_empty(), "undeclared: {unknown:?}");
    let config = RocksConfig::from_properties(&props).unwrap();
    assert_eq!(config.path, Path::new("/tmp/ycsb-rocksdb"));
    assert!(!config.destroy && !config.sync && !config.merge_update);
    let EngineOptions::Properties(t) = &config.engine else {
        panic!("expected property tuning");
    };
    assert_eq!(t.compression, Compression::Snappy);
    assert_eq!(t.max_background_jobs, Some(2));
    assert_eq!(t.target_file_size_base, Some(67_108_864));
    assert_eq!(t.target_file_size_multiplier, Some(1));
    assert_eq!(t.max_bytes_for_level_base, Some(268_435_456));
    assert_eq!(t.write_buffer_size, Some(67_108_864));
    assert_eq!(t.max_open_files, Some(-1));
    assert_eq!(t.max_write_buffer_number, Some(2));
    assert_eq!(t.cache_size, Some(8_388_608));
    assert_eq!(t.compressed_cache_size, None);
    assert_eq!(t.bloom_bits, None);
    assert!(!t.use_direct_reads && !t.allow_mmap_reads && !t.increase_parallelism);

    // The engine really runs with them: its own OPTIONS file says so.
    let dir = tempfile::tempdir().unwrap();
    let store = assert_opens_in(&DESCRIPTOR, &props, dir.path());
    let reports = store.final_reports();
    let options = report(&reports, "rocksdb.OPTIONS");
    for line in [
        "compression=kSnappyCompression",
        "max_background_jobs=2",
        "target_file_size_base=67108864",
        "max_bytes_for_level_base=268435456",
        "write_buffer_size=67108864",
        "max_write_buffer_number=2",
    ] {
        assert!(
            options.lines().any(|l| l.trim() == line),
            "{line} not in OPTIONS"
        );
    }
}

#[test]
fn bad_value_in_a_file_names_file_and_line() {
    let mut props = load_property_file(&shipped_file());
    props.set(
        "rocksdb.cache_size",
        "8M",
        Origin::File {
            path: Arc::from(Path::new("my.properties")),
            line: 12,
        },
    );
    let err = RocksConfig::from_properties(&props)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "rocksdb.cache_size: invalid value '8M' (my.properties:12): expected an unsigned integer"
    );
}

#[test]
fn every_compression_choice_works_with_the_linked_library() {
    for compression in [
        "no", "none", "snappy", "zlib", "bzip2", "lz4", "lz4hc", "zstd",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), &[("rocksdb.compression", compression)])
            .unwrap_or_else(|e| panic!("{compression}: {e}"));
        let mut t = store.thread(ctx()).unwrap();
        let full = record_for("user1", 10, 100);
        assert_eq!(t.insert(T, "user1", &full), Status::Ok);
        // Blocks are compressed when the memtable is flushed to an SST.
        store.db().flush().unwrap();
        let mut out = Record::new();
        assert_eq!(
            t.read(&ReadOp::new(T, "user1", Fields::All), &mut out),
            Status::Ok
        );
        assert_eq!(out, full, "{compression}");
    }
}

#[test]
fn the_directory_guard_holds() {
    let dir = tempfile::tempdir().unwrap();
    assert_guards_its_directory(&DESCRIPTOR, &Properties::new(), dir.path());
}

#[test]
fn a_leveldb_database_is_refused_untouched() {
    // LevelDB writes RocksDB's names (CURRENT, MANIFEST, LOCK, LOG, logs)
    // but no IDENTITY or OPTIONS file: RocksDB would rewrite it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000002\n").unwrap();
    std::fs::write(dir.path().join("000003.log"), b"").unwrap();
    std::fs::write(dir.path().join("LOCK"), b"").unwrap();
    let fresh = props(dir.path(), &[("rocksdb.destroy", "true")]);
    let err = match ycsb_rocksdb::RocksStore::open_config(
        RocksConfig::from_properties(&fresh).unwrap(),
    ) {
        Ok(_) => panic!("opened a LevelDB directory"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("holds a LevelDB database (its \"CURRENT\")"),
        "{err}"
    );
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["000003.log", "CURRENT", "LOCK"]);
}
