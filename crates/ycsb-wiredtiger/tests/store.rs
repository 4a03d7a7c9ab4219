//! The `wiredtiger` store through the ycsb-db traits, on real databases in
//! temporary directories.

use std::path::{Path, PathBuf};

use ycsb_db::testing::{
    assert_conforms, assert_directory_is_guarded, assert_operations_in_key_order,
    assert_refuses_foreign_directory, assert_shipped_file_opens, assert_survives_reopen,
    assert_threads_share_one_store, gauge, insert_filler_records, load_property_file,
    read_both_ways, record, report, shipped_property_file, Contract, Deletes, UpdateMissing,
};
use ycsb_db::{
    Fields, Origin, Properties, Record, Status, Store, StoreError, StoreThread, ThreadContext,
};
use ycsb_wiredtiger::WiredTigerStore;

const TABLE: &str = "usertable";

/// Both table types, and without compression.
#[test]
fn keeps_the_store_contract() {
    for extra in [
        &[("wiredtiger.type", "btree")][..],
        &[("wiredtiger.type", "lsm")],
        &[("wiredtiger.blk_mgr.compressor", "none")],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), extra);
        eprintln!("wiredtiger, {extra:?}");
        // An overwrite cursor's remove cannot tell whether the key existed.
        let contract = Contract::new().with_deletes(Deletes::MissingOk);
        assert_conforms(&store, &contract);
    }
}

fn props(dir: &Path, extra: &[(&str, &str)]) -> Properties {
    // A small cache: tests run in parallel on small machines.
    let mut p = Properties::new()
        .with("wiredtiger.home", dir.display())
        .with("wiredtiger.cache_size", "8MB")
        .with_flags(extra);
    // WiredTiger wants a cache of three LSM chunks and more: small chunks.
    if extra.contains(&("wiredtiger.type", "lsm"))
        && p.get_str("wiredtiger.blk_mgr.chunk_size").is_none()
    {
        p.set("wiredtiger.blk_mgr.chunk_size", "1MB", Origin::Api);
    }
    p
}

fn open(dir: &Path, extra: &[(&str, &str)]) -> WiredTigerStore {
    WiredTigerStore::open(&props(dir, extra)).expect("open")
}

fn read(t: &mut dyn StoreThread, key: &str, fields: Fields<'_>) -> (Status, Vec<(String, String)>) {
    read_both_ways(t, TABLE, key, fields)
}

/// Deleting a missing key is `OK`: an overwrite cursor's remove cannot
/// tell whether the key existed.
#[test]
fn operations_on_both_table_types() {
    for table_type in ["btree", "lsm"] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), &[("wiredtiger.type", table_type)]);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        eprintln!("wiredtiger, {table_type}");
        assert_operations_in_key_order(t.as_mut(), Status::Ok, UpdateMissing::NotFound);
    }
}

#[test]
fn values_that_are_not_records_are_unexpected_state_not_panics() {
    // A record whose stored value is not the codec's (written here through
    // the table with a value the codec rejects: a truncated encoding).
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut big = Record::new();
    big.push("field0", &[b'x'; 100]);
    assert_eq!(t.insert(TABLE, "good", &big), Status::Ok);
    let mut encoded = Vec::new();
    ycsb_db::codec::encode(&big, &mut encoded);
    // The same bytes minus the last 10, stored as a field value of a
    // record that is then read back whole: decoding the inner bytes as a
    // record must fail cleanly.
    let mut out = Record::new();
    assert_eq!(
        ycsb_db::codec::read_into(&encoded[..encoded.len() - 10], Fields::All, &mut out),
        Status::UnexpectedState
    );
    assert_eq!(read(t.as_mut(), "good", Fields::All).0, Status::Ok);
}

#[test]
fn threads_share_one_database() {
    let dir = tempfile::tempdir().unwrap();
    assert_threads_share_one_store(&open(dir.path(), &[]));
}

#[test]
fn concurrent_updates_of_one_record_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]);
    {
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        let r = record(&[("field0", "0"), ("field1", "0")]);
        assert_eq!(t.insert(TABLE, "hot", &r), Status::Ok);
    }
    std::thread::scope(|s| {
        for id in 0..4 {
            let store = &store;
            s.spawn(move || {
                let mut t = store.thread(ThreadContext::new(id, 4)).unwrap();
                for i in 0..300 {
                    let r = record(&[("field1", &format!("{id}-{i}"))]);
                    assert_eq!(t.update(TABLE, "hot", &r), Status::Ok);
                }
            });
        }
    });
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let (status, fields) = read(t.as_mut(), "hot", Fields::All);
    assert_eq!(status, Status::Ok);
    assert_eq!(fields[0], ("field0".to_string(), "0".to_string()));
    assert!(fields[1].1.ends_with("-299"), "{fields:?}");
}

/// Also covers `wiredtiger.destroy`, the descriptor's fresh property.
#[test]
fn a_database_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    for table_type in ["btree", "lsm"] {
        let home = dir.path().join(table_type);
        // Reopened without wiredtiger.type: the table keeps its own.
        assert_survives_reopen(
            &ycsb_wiredtiger::DESCRIPTOR,
            &props(&home, &[("wiredtiger.type", table_type)]),
            &props(&home, &[]),
        );
    }
}

fn shipped_properties() -> PathBuf {
    shipped_property_file(Path::new(env!("CARGO_MANIFEST_DIR")), "wiredtiger")
}

#[test]
fn shipped_ycsb_cpp_properties_file_works_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let store = assert_shipped_file_opens(
        &ycsb_wiredtiger::DESCRIPTOR,
        &shipped_properties(),
        dir.path(),
    );
    let reports = store.final_reports();
    let options = report(&reports, "wiredtiger.options");
    for part in [
        "cache_size=67108864,",
        "direct_io=[],",
        "in_memory=false,",
        "lsm_manager=(merge=true,worker_thread_max=4)",
        "extensions=[libwiredtiger_snappy.so]",
        "allocation_size=4096,block_compressor=snappy,",
        "internal_page_max=4096,leaf_key_max=0,leaf_value_max=0,leaf_page_max=32768",
    ] {
        assert!(options.contains(part), "{part} missing in\n{options}");
    }
}

#[test]
fn invalid_properties_are_errors_naming_property_and_origin() {
    let mut p = load_property_file(&shipped_properties());
    p.set("wiredtiger.home", "/unused", Origin::Flag("-p"));
    p.set("wiredtiger.cache_size", "64 megs", Origin::Flag("-p"));
    let err = WiredTigerStore::open(&p).unwrap_err();
    assert!(matches!(err, StoreError::Property(_)));
    assert!(
        err.to_string().starts_with(
            "wiredtiger.cache_size: invalid value '64 megs' (-p flag): expected a size"
        ),
        "{err}"
    );
    let mut p = load_property_file(&shipped_properties());
    p.remove("wiredtiger.home");
    let err = WiredTigerStore::open(&p).unwrap_err().to_string();
    assert!(
        err.starts_with("wiredtiger.home: required property is not set"),
        "{err}"
    );
    // Origins from the file are file:line.
    let mut p = load_property_file(&shipped_properties());
    p.set("wiredtiger.home", "/unused", Origin::Api);
    let line = std::fs::read_to_string(shipped_properties())
        .unwrap()
        .lines()
        .position(|l| l.starts_with("wiredtiger.blk_mgr.compressor="))
        .unwrap()
        + 1;
    p.set(
        "wiredtiger.blk_mgr.compressor",
        "brotli",
        Origin::File {
            path: std::sync::Arc::from(shipped_properties().as_path()),
            line,
        },
    );
    let err = WiredTigerStore::open(&p).unwrap_err().to_string();
    assert!(
        err.contains(&format!("wiredtiger.properties:{line})")),
        "{err}"
    );
}

#[test]
fn a_compressor_without_its_extension_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    // Debian ships no LZ4 extension.
    let err = WiredTigerStore::open(&props(
        dir.path(),
        &[("wiredtiger.blk_mgr.compressor", "lz4")],
    ))
    .unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(err.to_string().contains("libwiredtiger_lz4.so"), "{err}");
}

#[test]
fn gauges_show_the_cache_and_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("wiredtiger.blk_mgr.compressor", "none")]);
    insert_filler_records(&store, 3000, 1000);
    store.checkpoint().unwrap();
    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    assert!(gauge(&gauges, "wiredtiger.cache-bytes") > 0.0);
    assert_eq!(
        gauge(&gauges, "wiredtiger.cache-max-bytes"),
        8.0 * 1048576.0
    );
    assert!(gauge(&gauges, "wiredtiger.checkpoints") >= 1.0);
    // The checkpoint wrote the 3 MB of values.
    assert!(
        gauge(&gauges, "wiredtiger.block-bytes-written") >= 3e6,
        "{gauges:?}"
    );
    let file = gauge(&gauges, "wiredtiger.file-bytes");
    assert!((3e6..1e7).contains(&file), "{gauges:?}");

    let reports = store.final_reports();
    let stats = report(&reports, "wiredtiger.stats");
    assert!(
        stats.contains("cache: bytes currently in the cache: "),
        "{stats}"
    );
    assert!(
        stats.contains("# table (statistics:table:ycsbc)"),
        "{stats}"
    );
}

#[test]
fn lsm_gauges_count_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(
        dir.path(),
        &[
            ("wiredtiger.type", "lsm"),
            ("wiredtiger.blk_mgr.chunk_size", "512KB"),
            ("wiredtiger.lsm_mgr.merge", "false"),
        ],
    );
    insert_filler_records(&store, 5000, 1000);
    store.checkpoint().unwrap();
    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    assert!(gauge(&gauges, "wiredtiger.lsm-chunks") >= 2.0, "{gauges:?}");
    assert!(gauges.iter().all(|g| g.name != "wiredtiger.file-bytes"));
}

#[test]
fn no_gauges_without_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("wiredtiger.statistics", "none")]);
    insert_filler_records(&store, 10, 1000);
    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    assert!(gauges.is_empty(), "{gauges:?}");
    assert!(store
        .final_reports()
        .iter()
        .all(|r| r.name != "wiredtiger.stats"));
}

#[test]
fn engine_info_names_the_linked_version() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]);
    let info = store.engine_info();
    assert_eq!(info.name, "WiredTiger");
    // The version the installed header declares.
    let header = std::fs::read_to_string("/usr/include/wiredtiger.h").unwrap();
    let constant = |name: &str| -> String {
        let line = header
            .lines()
            .find(|l| {
                l.starts_with(&format!("#define\t{name}\t"))
                    || l.starts_with(&format!("#define {name} "))
            })
            .unwrap_or_else(|| panic!("{name} in wiredtiger.h"));
        line.split_whitespace().last().unwrap().to_string()
    };
    let library = WiredTigerStore::linked_library().expect("library path");
    if library.starts_with("/usr/lib") {
        assert_eq!(
            info.version,
            format!(
                "{}.{}.{}",
                constant("WIREDTIGER_VERSION_MAJOR"),
                constant("WIREDTIGER_VERSION_MINOR"),
                constant("WIREDTIGER_VERSION_PATCH")
            )
        );
    }
    let reports = store.final_reports();
    let options = report(&reports, "wiredtiger.options");
    assert!(options.contains(&format!("version={}\n", info.version)));
    assert!(options.contains(&format!("library={library}\n")));
}

#[test]
fn registered_as_wiredtiger() {
    let d = ycsb_wiredtiger::DESCRIPTOR;
    assert!(d.matches("wiredtiger") && d.matches("WiredTiger"));
    assert_eq!(d.properties.len(), ycsb_wiredtiger::PROPERTIES.len());
}

/// Unusable locations and a second open are refused, and the guard holds.
#[test]
fn the_directory_is_guarded() {
    assert_directory_is_guarded(&ycsb_wiredtiger::DESCRIPTOR, &Properties::new());
}

#[test]
fn foreign_directories_are_refused_untouched() {
    for (file, said) in [
        // A CURRENT that does not name a manifest is someone's file.
        (
            "CURRENT",
            "holds no WiredTiger database (it holds \"CURRENT\")",
        ),
        ("IDENTITY", "holds a RocksDB database"),
        ("notes.txt", "is not empty and holds no WiredTiger database"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        assert_refuses_foreign_directory(
            &ycsb_wiredtiger::DESCRIPTOR,
            &Properties::new(),
            dir.path(),
            file,
            &[said],
        );
    }
}
