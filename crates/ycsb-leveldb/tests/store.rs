//! The `leveldb` store through the ycsb-db traits, on real databases in
//! temporary directories.

use std::path::{Path, PathBuf};

use ycsb_db::testing::{
    assert_conforms, assert_directory_is_guarded, assert_not_a_record,
    assert_operations_in_key_order, assert_shipped_file_opens, assert_survives_reopen,
    assert_threads_share_one_store, gauge, insert_filler_records, load_property_file,
    read_both_ways, record, report, scan_rows, shipped_property_file, text_fields, Contract,
    Deletes, UpdateMissing,
};
use ycsb_db::{
    Fields, Origin, Properties, Record, Status, Store, StoreError, StoreThread, ThreadContext,
};
use ycsb_leveldb::LevelStore;

const TABLE: &str = "usertable";

/// Both record layouts (the column layout does not open).
#[test]
fn keeps_the_store_contract() {
    for (format, update_missing) in [
        ("single", UpdateMissing::NotFound),
        // Row updates are blind writes of the changed fields (YCSB-cpp's):
        // on a missing key they make a record of those fields.
        ("row", UpdateMissing::Creates),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), &[("leveldb.format", format)]);
        eprintln!("leveldb, format {format}");
        // LevelDB's Delete cannot tell whether the key existed.
        let contract = Contract::new()
            .with_deletes(Deletes::MissingOk)
            .with_update_missing(update_missing);
        assert_conforms(&store, &contract);
    }
}

fn props(dir: &Path, extra: &[(&str, &str)]) -> Properties {
    Properties::new()
        .with("leveldb.dbname", dir.display())
        .with_flags(extra)
}

fn open(dir: &Path, extra: &[(&str, &str)]) -> LevelStore {
    LevelStore::open(&props(dir, extra)).expect("open")
}

fn read(t: &mut dyn StoreThread, key: &str, fields: Fields<'_>) -> (Status, Vec<(String, String)>) {
    read_both_ways(t, TABLE, key, fields)
}

fn scan_keys(t: &mut dyn StoreThread, start: &str, count: usize) -> Vec<String> {
    ycsb_db::testing::scan_keys(t, TABLE, start, count)
}

/// Every operation of a format, checked the same way; deleting a missing
/// key is not an error (LevelDB's and YCSB-cpp's way), and a row update of a
/// missing key writes its fields (a blind write, as YCSB-cpp's).
fn exercise_operations(format: &str, missing_update: UpdateMissing) {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("leveldb.format", format)]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_operations_in_key_order(t.as_mut(), Status::Ok, missing_update);
}

#[test]
fn single_format_operations() {
    exercise_operations("single", UpdateMissing::NotFound);
}

#[test]
fn row_format_operations() {
    exercise_operations("row", UpdateMissing::Creates);
}

/// Row entries are `<key>` NUL `<field>`: NUL sorts below every byte of a
/// key, so a record's entries sort where its key does. (With YCSB-cpp's
/// `<key>:<field>` they did not: `:` sorts after the digits, so
/// `user10:…` came before `user1:…` and a scan from `user1` began at
/// `user10`.)
#[test]
fn row_format_scans_are_in_key_order_when_a_key_prefixes_another() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("leveldb.format", "row")]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let t = t.as_mut();
    for key in ["user2", "user100", "user1", "user10"] {
        let r = record(&[
            ("field0", &format!("{key}-0")),
            ("field1", &format!("{key}-1")),
        ]);
        assert_eq!(t.insert(TABLE, key, &r), Status::Ok);
    }
    assert_eq!(
        scan_keys(t, "user1", 4),
        ["user1", "user10", "user100", "user2"]
    );
    assert_eq!(scan_keys(t, "user10", 2), ["user10", "user100"]);
    assert_eq!(scan_keys(t, "user1000", 5), ["user2"]);
    assert_eq!(scan_keys(t, "", 1), ["user1"]);
    assert_eq!(
        scan_rows(t, TABLE, "user1", 2, Fields::All),
        ["user1", "user10"].map(|k| (
            k.to_string(),
            text_fields(&record(&[
                ("field0", &format!("{k}-0")),
                ("field1", &format!("{k}-1"))
            ]))
        ))
    );
    // A record's read and delete see its own entries only.
    assert_eq!(
        read(t, "user1", Fields::All).1,
        text_fields(&record(&[("field0", "user1-0"), ("field1", "user1-1")]))
    );
    assert_eq!(t.delete(TABLE, "user1"), Status::Ok);
    assert_eq!(read(t, "user1", Fields::All).0, Status::NotFound);
    assert_eq!(scan_keys(t, "user1", 3), ["user10", "user100", "user2"]);
    // A key holding the separator cannot be told apart from its fields.
    assert_eq!(
        t.insert(TABLE, "user\0x1", &record(&[("field0", "x")])),
        Status::BadRequest
    );
    assert!(
        t.last_error().unwrap().contains("NUL"),
        "{:?}",
        t.last_error()
    );
}

/// A database whose entries are not in the row layout (the single layout,
/// or the `<key>:<field>` row layout of earlier versions, whose scans came
/// out of key order) is refused when opened with `leveldb.format=row`,
/// untouched, rather than read wrongly.
#[test]
fn the_row_format_refuses_a_database_in_another_layout() {
    for key in ["user1", "user1:field0"] {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = open(dir.path(), &[]);
            let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
            assert_eq!(
                t.insert(TABLE, key, &record(&[("field0", "x")])),
                Status::Ok
            );
        }
        let err = LevelStore::open(&props(dir.path(), &[("leveldb.format", "row")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("leveldb.format=row"), "{err}");
        assert!(err.contains("not in the row layout"), "{err}");
        assert!(err.contains("nothing was changed"), "{err}");
        // Untouched: the single format still reads it.
        let store = open(dir.path(), &[]);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        assert_eq!(read(t.as_mut(), key, Fields::All).0, Status::Ok);
    }
}

#[test]
fn single_format_update_of_missing_record_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(
        t.update(TABLE, "nobody", &record(&[("field0", "x")])),
        Status::NotFound
    );
    assert_eq!(read(t.as_mut(), "nobody", Fields::All).0, Status::NotFound);
}

#[test]
fn single_format_stores_one_entry_per_record_with_the_shared_codec() {
    let dir = tempfile::tempdir().unwrap();
    let r = record(&[("field0", "a"), ("field1", "bb")]);
    {
        let store = open(dir.path(), &[]);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        assert_eq!(t.insert(TABLE, "user1", &r), Status::Ok);
    }
    // One entry, under the plain key: not a row-layout database.
    let err = LevelStore::open(&props(dir.path(), &[("leveldb.format", "row")]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("its first entry \"user1\""), "{err}");
    let store = open(dir.path(), &[]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut expected = Vec::new();
    ycsb_db::codec::encode(&r, &mut expected);
    let mut back = Record::new();
    ycsb_db::codec::decode(&expected, Fields::All, &mut back).unwrap();
    assert_eq!(read(t.as_mut(), "user1", Fields::All).1, text_fields(&back));
}

#[test]
fn values_that_are_not_records_are_unexpected_state_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    {
        // The row layout stores raw field values under "<key>\0<field>".
        let store = open(dir.path(), &[("leveldb.format", "row")]);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        let r = record(&[("f", "\u{7f}not an encoded record")]);
        assert_eq!(t.insert(TABLE, "user1", &r), Status::Ok);
    }
    let store = open(dir.path(), &[]);
    assert_not_a_record(
        store.thread(ThreadContext::new(0, 1)).unwrap().as_mut(),
        "user1\0f",
    );
}

#[test]
fn threads_share_one_database() {
    let dir = tempfile::tempdir().unwrap();
    assert_threads_share_one_store(&open(dir.path(), &[]));
}

/// Also covers `leveldb.destroy`, the descriptor's fresh property.
#[test]
fn a_database_survives_a_reopen() {
    for format in ["single", "row"] {
        let dir = tempfile::tempdir().unwrap();
        let p = props(dir.path(), &[("leveldb.format", format)]);
        assert_survives_reopen(&ycsb_leveldb::DESCRIPTOR, &p, &p);
    }
}

fn shipped_properties() -> PathBuf {
    shipped_property_file(Path::new(env!("CARGO_MANIFEST_DIR")), "leveldb")
}

#[test]
fn shipped_ycsb_cpp_properties_file_works_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        assert_shipped_file_opens(&ycsb_leveldb::DESCRIPTOR, &shipped_properties(), dir.path());
    let reports = store.final_reports();
    let options = report(&reports, "leveldb.options");
    for line in [
        "leveldb.format=single",
        "leveldb.write_buffer_size=67108864",
        "leveldb.max_file_size=67108864",
        "leveldb.max_open_files=1000",
        "leveldb.compression=snappy",
        "leveldb.cache_size=134217728",
        "leveldb.filter_bits=10",
        "leveldb.block_size=4096",
        "leveldb.block_restart_interval=16",
        "leveldb.sync=false",
        "leveldb.fill_cache=true",
    ] {
        assert!(
            options.lines().any(|l| l == line),
            "{line} missing in\n{options}"
        );
    }
}

#[test]
fn invalid_properties_are_errors_naming_property_and_origin() {
    let mut p = load_property_file(&shipped_properties());
    p.set("leveldb.dbname", "/unused", Origin::Flag("-p"));
    p.set("leveldb.block_size", "4k", Origin::Flag("-p"));
    let err = LevelStore::open(&p).unwrap_err();
    assert!(matches!(err, StoreError::Property(_)));
    assert_eq!(
        err.to_string(),
        "leveldb.block_size: invalid value '4k' (-p flag): expected an unsigned integer"
    );
    let mut p = load_property_file(&shipped_properties());
    p.remove("leveldb.dbname");
    p.set("leveldb.compression", "lz4", Origin::Api);
    let err = LevelStore::open(&p).unwrap_err().to_string();
    assert!(
        err.starts_with("leveldb.dbname: required property is not set"),
        "{err}"
    );
    p.set("leveldb.dbname", "/unused", Origin::Api);
    let err = LevelStore::open(&p).unwrap_err().to_string();
    assert_eq!(
        err,
        "leveldb.compression: invalid value 'lz4' (set by the program): expected one of no, snappy"
    );
    // Origins from the file are file:line.
    let mut p = load_property_file(&shipped_properties());
    p.set("leveldb.dbname", "/unused", Origin::Api);
    let line = std::fs::read_to_string(shipped_properties())
        .unwrap()
        .lines()
        .position(|l| l.starts_with("leveldb.format="))
        .unwrap()
        + 1;
    p.set(
        "leveldb.format",
        "column",
        Origin::File {
            path: std::sync::Arc::from(shipped_properties().as_path()),
            line,
        },
    );
    let err = LevelStore::open(&p).unwrap_err().to_string();
    assert!(
        err.contains(&format!("leveldb.properties:{line})")),
        "{err}"
    );
    assert!(err.contains("column format is not supported"), "{err}");
}

#[test]
fn gauges_show_levels_after_compaction() {
    let dir = tempfile::tempdir().unwrap();
    // Small memtables and files so a few MiB make several level-0 files
    // (1 MiB files: LevelDB's smallest, it raised 256 KiB to it).
    let store = open(
        dir.path(),
        &[
            ("leveldb.write_buffer_size", "65536"),
            ("leveldb.max_file_size", "1048576"),
            ("leveldb.cache_size", "1048576"),
        ],
    );
    insert_filler_records(&store, 3000, 1000);
    let mut before = Vec::new();
    store.gauges(&mut before);
    let files_before: f64 = (0..7)
        .map(|l| gauge(&before, &format!("leveldb.num-files-at-level{l}")))
        .sum();
    assert!(files_before > 0.0, "{before:?}");

    store.compact();
    let mut after = Vec::new();
    store.gauges(&mut after);
    for level in 0..7 {
        gauge(&after, &format!("leveldb.num-files-at-level{level}"));
    }
    assert!(after
        .iter()
        .all(|g| g.name != "leveldb.num-files-at-level7"));
    assert_eq!(gauge(&after, "leveldb.num-files-at-level0"), 0.0);
    let deeper: f64 = (1..7)
        .map(|l| gauge(&after, &format!("leveldb.num-files-at-level{l}")))
        .sum();
    // 3 MB of values in files of at most ~256 KiB.
    assert!(deeper >= 4.0, "{after:?}");
    // The table files hold the ~3 MB of values (uncompressed by default).
    let size = gauge(&after, "leveldb.approximate-size");
    assert!((2.5e6..6e6).contains(&size), "approximate-size {size}");
    assert!(gauge(&after, "leveldb.approximate-memory-usage") > 0.0);
    let mb: f64 = (0..7)
        .map(|l| gauge(&after, &format!("leveldb.mb-at-level{l}")))
        .sum();
    assert!((2.0..6.0).contains(&mb), "{after:?}");
    assert!(gauge(&after, "leveldb.compaction-write-mb") >= 2.0);

    let reports = store.final_reports();
    let stats = report(&reports, "leveldb.stats");
    assert!(stats.contains("Compactions"), "{stats}");
    let sstables = report(&reports, "leveldb.sstables");
    assert!(sstables.contains("--- level 1 ---"), "{sstables}");
}

/// The build reported is the library this test links: Debian's shared
/// library (assertions on) by default; the static release library of
/// `build-leveldb.sh` (`cargo xtask engines`) says `static` and, from the
/// script's record, assertions disabled (`YCSB_LEVELDB_EXPECT_ASSERTIONS`).
#[test]
fn engine_build_names_the_linked_library_and_its_assertions() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]);
    let build = store.engine_build();
    let library = LevelStore::linked_library().expect("library path");
    match &build.library {
        ycsb_db::EngineLibrary::Shared(path) => {
            assert_eq!(path, Path::new(&library), "{build}");
            assert!(
                path.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("libleveldb.so"),
                "{build}"
            );
        }
        ycsb_db::EngineLibrary::Static => {
            let program = std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
            assert_eq!(Path::new(&library), program, "{build}");
        }
        _ => panic!("the linked LevelDB is found: {build}"),
    }
    let expected = match std::env::var("YCSB_LEVELDB_EXPECT_ASSERTIONS") {
        Ok(expected) => expected,
        Err(_) if library.starts_with("/usr/lib") => "enabled".into(),
        Err(_) => return,
    };
    assert_eq!(build.assertions.as_str(), expected, "{build}");
}

#[test]
fn engine_info_names_the_linked_version() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]);
    let info = store.engine_info();
    assert_eq!(info.name, "LevelDB");
    let (major, minor) = info.version.split_once('.').expect("major.minor");
    let (major, minor): (u32, u32) = (major.parse().unwrap(), minor.parse().unwrap());
    assert!(major == 1 && minor >= 20, "{}", info.version);
    // A build pointed at another LevelDB can say which version it expects.
    if let Ok(expected) = std::env::var("YCSB_LEVELDB_EXPECT_VERSION") {
        assert_eq!(info.version, expected);
    }
    let library = LevelStore::linked_library().expect("library path");
    // Linked against the system's shared library: it must be the version
    // the installed headers declare.
    if library.starts_with("/usr/lib") {
        let header = std::fs::read_to_string("/usr/include/leveldb/db.h").unwrap();
        let constant = |name: &str| -> u32 {
            let line = header.lines().find(|l| l.contains(name)).unwrap();
            line.rsplit('=')
                .next()
                .unwrap()
                .trim_end_matches(';')
                .trim()
                .parse()
                .unwrap()
        };
        assert_eq!(
            (major, minor),
            (constant("kMajorVersion"), constant("kMinorVersion"))
        );
    }
    let options = store.final_reports();
    let options = report(&options, "leveldb.options");
    assert!(options.contains(&format!("version={}\n", info.version)));
    assert!(options.contains(&format!("library={library}\n")));
}

#[test]
fn registered_as_leveldb() {
    let d = ycsb_leveldb::DESCRIPTOR;
    assert!(d.matches("leveldb") && d.matches("LevelDB"));
    assert!(!d.matches("rocksdb"));
    assert_eq!(d.properties.len(), ycsb_leveldb::PROPERTIES.len());
}

/// Unusable locations and a second open are refused, and the guard holds.
#[test]
fn the_directory_is_guarded() {
    assert_directory_is_guarded(&ycsb_leveldb::DESCRIPTOR, &Properties::new());
}
