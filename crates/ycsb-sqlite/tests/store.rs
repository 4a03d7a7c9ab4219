//! The `sqlite` store through the ycsb-db traits, on real databases in
//! temporary directories, and a real child process killed mid-load.

use std::path::Path;

use ycsb_db::testing::durability::AckWriterBinary;
use ycsb_db::testing::{
    assert_conforms, assert_guards_its_directory, assert_refuses_foreign_directory,
    assert_survives_reopen, gauge, insert_filler_records, record, report, Contract,
};
use ycsb_db::{Fields, Gauge, Properties, ReadOp, Record, Status, Store, ThreadContext};
use ycsb_sqlite::SqliteStore;

const TABLE: &str = "usertable";

fn props(dir: &Path, extra: &[(&str, &str)]) -> Properties {
    Properties::new()
        .with("sqlite.dbpath", dir.display())
        .with_flags(extra)
}

fn open(dir: &Path, extra: &[(&str, &str)]) -> SqliteStore {
    SqliteStore::open(&props(dir, extra)).expect("open")
}

/// Opens the store in `dir` with `extra` and inserts `user1` (`field0=a`):
/// the insert's status and the thread's last error.
fn insert_one(dir: &Path, extra: &[(&str, &str)]) -> (Status, Option<String>) {
    let store = open(dir, extra);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let status = t.insert(TABLE, "user1", &record(&[("field0", "a")]));
    (status, t.last_error().map(str::to_string))
}

/// SQLite is an ordered store with exact deletes: the default contract,
/// in WAL mode (YCSB-cpp's) and with a rollback journal, in both layouts.
#[test]
fn keeps_the_store_contract() {
    for flags in [
        &[][..],
        &[
            ("sqlite.journal_mode", "DELETE"),
            ("sqlite.synchronous", "OFF"),
        ][..],
        &[("sqlite.schema", "columns")][..],
        &[
            ("sqlite.schema", "columns"),
            ("sqlite.journal_mode", "DELETE"),
            ("sqlite.primary_key", "YCSB_KEY"),
        ][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), flags);
        eprintln!("sqlite {flags:?}");
        assert_conforms(&store, &Contract::new());
    }
}

/// Also covers `sqlite.destroy`, the descriptor's fresh property.
#[test]
fn records_survive_a_reopen_and_scans_are_in_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let p = props(dir.path(), &[]);
    assert_survives_reopen(&ycsb_sqlite::DESCRIPTOR, &p, &p);
}

#[test]
fn close_checkpoints_the_log_and_tables_are_separate_key_spaces() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path(), &[]);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        let r = record(&[("field0", "user4-0"), ("field1", "x")]);
        assert_eq!(t.insert(TABLE, "user4", &r), Status::Ok);
        drop(t);
        store.close().unwrap();
    }
    // The checkpoint at close folded the log into the database file.
    let wal = dir.path().join("ycsb.sqlite-wal");
    assert!(std::fs::metadata(&wal).map_or(0, |m| m.len()) == 0);
    let store = open(dir.path(), &[]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user4", Fields::All), &mut out),
        Status::Ok
    );
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new("other", "user4", Fields::All), &mut out),
        Status::NotFound
    );
}

#[test]
fn the_schema_is_one_table_keyed_by_the_primary_key_property() {
    let dir = tempfile::tempdir().unwrap();
    let (status, _) = insert_one(dir.path(), &[("sqlite.primary_key", "ycsb_key")]);
    assert_eq!(status, Status::Ok);
    let conn = rusqlite::Connection::open(dir.path().join("ycsb.sqlite")).unwrap();
    let sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name = 'usertable'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        sql.contains("ycsb_key TEXT PRIMARY KEY") && !sql.contains("WITHOUT ROWID"),
        "{sql}"
    );
    let page_size: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    assert_eq!(page_size, 4096);
}

/// `sqlite.schema=columns`: YCSB-cpp's table (`sqlite/schema.sql`: the key,
/// then `field0 TEXT` ... ), an update that writes only its column in one
/// statement, and a table YCSB-cpp (or Java's JDBC binding) made read as
/// it is.
#[test]
fn the_column_schema_is_ycsb_cpp_s_table() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("sqlite.schema", "columns")]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let fields: Vec<(String, String)> = (0..10)
        .map(|i| (format!("field{i}"), format!("value{i}")))
        .collect();
    let pairs: Vec<(&str, &str)> = fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(t.insert(TABLE, "user1", &record(&pairs)), Status::Ok);
    assert_eq!(
        t.update(TABLE, "user1", &record(&[("field3", "new")])),
        Status::Ok
    );
    assert_eq!(
        t.update(TABLE, "user2", &record(&[("field3", "x")])),
        Status::NotFound
    );
    let mut out = Record::new();
    let only = vec!["field3".to_string(), "field9".to_string()];
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user1", Fields::Only(&only)), &mut out),
        Status::Ok
    );
    let got: Vec<(String, Vec<u8>)> = out
        .iter()
        .map(|f| (f.name.to_string(), f.value.to_vec()))
        .collect();
    assert_eq!(
        got,
        [
            ("field3".into(), b"new".to_vec()),
            ("field9".into(), b"value9".to_vec())
        ]
    );
    drop(t);
    drop(store);
    let conn = rusqlite::Connection::open(dir.path().join("ycsb.sqlite")).unwrap();
    let columns: Vec<(String, String)> = conn
        .prepare("PRAGMA table_info(usertable)")
        .unwrap()
        .query_map([], |r| Ok((r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut expected = vec![("user_id".to_string(), "TEXT".to_string())];
    expected.extend((0..10).map(|i| (format!("field{i}"), "TEXT".to_string())));
    assert_eq!(columns, expected);
    let (f3, f4): (String, String) = conn
        .query_row(
            "SELECT field3, field4 FROM usertable WHERE user_id = 'user1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((f3.as_str(), f4.as_str()), ("new", "value4"));
    // Java's JDBC binding's table, made beforehand: read and updated as is,
    // with sqlite.create_table=false (no column is added).
    conn.execute_batch(
        "CREATE TABLE jdbc (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 TEXT, FIELD1 TEXT);
         INSERT INTO jdbc VALUES ('user7', 'a', 'b');",
    )
    .unwrap();
    drop(conn);
    let store = open(
        dir.path(),
        &[
            ("sqlite.schema", "columns"),
            ("sqlite.primary_key", "YCSB_KEY"),
            ("sqlite.create_table", "false"),
        ],
    );
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(
        t.update("jdbc", "user7", &record(&[("field1", "c")])),
        Status::Ok
    );
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new("jdbc", "user7", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.get("FIELD0"), Some(&b"a"[..]));
    assert_eq!(out.get("FIELD1"), Some(&b"c"[..]));
    assert_eq!(
        t.update("jdbc", "user7", &record(&[("field2", "d")])),
        Status::Error
    );
    assert!(
        t.last_error().unwrap().contains("no such column: field2"),
        "{:?}",
        t.last_error()
    );
}

#[test]
fn without_create_table_a_missing_table_fails_with_sqlite_s_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (status, message) = insert_one(dir.path(), &[("sqlite.create_table", "false")]);
    assert_eq!(status, Status::Error);
    let message = message.unwrap();
    assert!(message.contains("no such table: usertable"), "{message}");
}

#[test]
fn gauges_show_pages_and_cache_and_reports_name_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]);
    insert_filler_records(&store, 2000, 100);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    for i in 0..600 {
        out.clear();
        assert_eq!(
            t.read(
                &ReadOp::new(TABLE, &format!("user{i:05}"), Fields::All),
                &mut out
            ),
            Status::Ok
        );
    }
    let mut gauges: Vec<Gauge> = Vec::new();
    store.gauges(&mut gauges);
    let get = |name: &str| gauge(&gauges, name);
    assert!(get("sqlite.pages") > 50.0, "{gauges:?}");
    assert_eq!(get("sqlite.db-bytes"), get("sqlite.pages") * 4096.0);
    assert!(get("sqlite.free-pages") >= 0.0);
    // Published every 256 operations: 2600 operations were done.
    assert!(get("sqlite.cache-hits") > 1000.0, "{gauges:?}");
    assert!(get("sqlite.memory-used") > 0.0, "{gauges:?}");
    let version = store.engine_info().version;
    assert!(version.starts_with("3."), "{version}");
    let reports = store.final_reports();
    let options = report(&reports, "sqlite.options");
    assert!(options.contains("sqlite.journal_mode=WAL\n"), "{}", options);
    assert!(options.contains(&format!("version={version}\n")));
    assert!(options.contains("library="), "{}", options);
    assert!(reports.iter().any(|r| r.name == "sqlite.stats"));
}

#[test]
fn foreign_directories_files_and_locked_databases_are_refused() {
    // Someone's files: refused untouched.
    let dir = tempfile::tempdir().unwrap();
    assert_refuses_foreign_directory(
        &ycsb_sqlite::DESCRIPTOR,
        &Properties::new(),
        dir.path(),
        "notes.txt",
        &["holds no SQLite database", "notes.txt"],
    );
    // A database file that is not one: refused by its content, untouched,
    // whether named by its directory or as the database file itself
    // (YCSB-cpp's sqlite.dbpath).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ycsb.sqlite");
    std::fs::write(&file, vec![7u8; 16384]).unwrap();
    for path in [dir.path(), file.as_path()] {
        let message = SqliteStore::open(&props(path, &[("sqlite.destroy", "true")]))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(
                "\"ycsb.sqlite\", which has the name of a SQLite file but not its content"
            ),
            "{message}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), vec![7u8; 16384]);
    }
    // A database another connection holds exclusively: "locked" once the
    // busy timeout has passed, at open or at the first write.
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path(), &[]));
    let holder = rusqlite::Connection::open(dir.path().join("ycsb.sqlite")).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let store = SqliteStore::open(&props(dir.path(), &[("sqlite.busy_timeout", "100")]));
    let message = match store {
        Err(e) => e.to_string(),
        Ok(store) => {
            let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
            assert_eq!(
                t.insert(TABLE, "user1", &record(&[("field0", "a")])),
                Status::Error
            );
            t.last_error().unwrap().to_string()
        }
    };
    assert!(message.contains("database is locked"), "{message}");
}

/// YCSB-cpp's `sqlite.dbpath` names the database file
/// (`/tmp/ycsb-sqlite.db`): the file is the database, in a directory
/// shared with other files, which the store neither refuses nor touches.
#[test]
fn a_database_file_path_as_ycsb_cpp_s_is_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("notes.txt"), "mine").unwrap();
    let file = d.join("ycsb-sqlite.db");
    {
        let store = open(&file, &[]);
        assert_eq!(store.path(), file);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        assert_eq!(
            t.insert(TABLE, "user1", &record(&[("field0", "a")])),
            Status::Ok
        );
        drop(t);
        // A second database of the same directory waits for this one.
        let other = SqliteStore::open(&props(&d.join("other.db"), &[]))
            .unwrap_err()
            .to_string();
        assert!(
            other.contains("one database file of a directory is used at a time"),
            "{other}"
        );
        store.close().unwrap();
    }
    // The database is an ordinary SQLite file.
    let conn = rusqlite::Connection::open(&file).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM usertable", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
    drop(conn);
    // Reopened, the record is there; sqlite.destroy removes the database's
    // files and nothing else.
    let store = open(&file, &[]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user1", Fields::All), &mut out),
        Status::Ok
    );
    drop(t);
    drop(store);
    std::fs::write(d.join("ycsb-sqlite.db-journal"), "").unwrap();
    drop(open(&file, &[("sqlite.destroy", "true")]));
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["notes.txt", "ycsb-sqlite.db"],
        "the rest was left alone"
    );
    let conn = rusqlite::Connection::open(&file).unwrap();
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tables, 0, "destroy started an empty database");
    // Another engine's file under the name is refused and kept.
    let impostor = d.join("impostor.db");
    std::fs::write(&impostor, "SQLite? no").unwrap();
    let message = SqliteStore::open(&props(&impostor, &[("sqlite.destroy", "true")]))
        .unwrap_err()
        .to_string();
    assert!(message.contains("sqlite.dbpath="), "{message}");
    assert_eq!(std::fs::read(&impostor).unwrap(), b"SQLite? no");
}

#[test]
fn the_directory_guard_holds() {
    let dir = tempfile::tempdir().unwrap();
    assert_guards_its_directory(&ycsb_sqlite::DESCRIPTOR, &Properties::new(), dir.path());
}

/// Nor is the database destroyed under the writer (`sqlite.destroy`).
#[test]
fn another_process_cannot_open_the_database_a_writer_holds() {
    WRITER.check_open_refused_while_another_process_holds(&["FULL"], "in use");
}

const WRITER: AckWriterBinary = AckWriterBinary::new(
    env!("CARGO_BIN_EXE_ycsb-sqlite-ack-writer"),
    &ycsb_sqlite::DESCRIPTOR,
);

#[test]
fn synced_inserts_survive_sigkill() {
    WRITER.check_acknowledged_inserts_survive_sigkill(&["FULL"], 200);
}

#[test]
fn wal_normal_inserts_survive_sigkill_of_the_process() {
    // synchronous=NORMAL in WAL mode writes each commit to the log (no
    // fsync): the kernel keeps it when the process is killed.
    WRITER.check_acknowledged_inserts_survive_sigkill(&["NORMAL"], 3000);
}

#[test]
fn concurrent_writers_on_their_own_connections_all_succeed() {
    // Four threads updating the same records: each waits for the others'
    // write lock instead of failing, and no update is lost.
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]);
    {
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        assert_eq!(
            t.insert(TABLE, "counter", &record(&[("n", "0")])),
            Status::Ok
        );
    }
    std::thread::scope(|s| {
        for i in 0..4 {
            let store = &store;
            s.spawn(move || {
                let mut t = store.thread(ThreadContext::new(i, 4)).unwrap();
                for j in 0..200 {
                    let r = record(&[(&format!("t{i}"), &j.to_string())]);
                    assert_eq!(
                        t.update(TABLE, "counter", &r),
                        Status::Ok,
                        "{:?}",
                        t.last_error()
                    );
                }
            });
        }
    });
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "counter", Fields::All), &mut out),
        Status::Ok
    );
    // Every thread's last update is there: the merges were atomic.
    for i in 0..4 {
        assert_eq!(out.get(&format!("t{i}")), Some(&b"199"[..]), "{out:?}");
    }
}

/// Issue 33 item 13: a database, or an empty directory, on a file system
/// mounted read-only is an open error that says so (SQLite itself said
/// "unable to open database file (No such file or directory)").
#[test]
fn a_read_only_file_system_is_named_in_the_open_error() {
    let fs = ycsb_db::testing::Tmpfs::mount("4m");
    let existing = fs.path().join("db");
    let empty = fs.path().join("empty");
    {
        let store = open(&existing, &[]);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        assert_eq!(
            t.insert(TABLE, "user1", &record(&[("field0", "a")])),
            Status::Ok
        );
        drop(t);
        store.close().unwrap();
    }
    std::fs::create_dir(&empty).unwrap();
    fs.remount_read_only();
    for dir in [&existing, &empty] {
        let err = match SqliteStore::open(&props(dir, &[])) {
            Ok(_) => panic!("{}: opened on a read-only file system", dir.display()),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains("read-only") && err.contains("sqlite.dbpath"),
            "{}: {err}",
            dir.display()
        );
        assert!(!err.contains("No such file"), "{}: {err}", dir.display());
    }
}
