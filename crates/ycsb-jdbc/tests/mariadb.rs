//! The jdbc store against real MariaDB servers started here: the store
//! contract, Java's table read and written both ways, scans in key order,
//! a server killed and restarted, a refused login, the InnoDB gauges and
//! the durability the server runs with.

use mysql::prelude::Queryable;
use ycsb_db::testing::{assert_conforms, record, Contract};
use ycsb_db::{Fields, GaugeKind, Properties, ScanOp, ScanResult, Status, Store};
use ycsb_jdbc::testing::{MariaDb, MARIADB_PASSWORD};
use ycsb_jdbc::JdbcStore;

mod common;

use common::*;

#[test]
fn keeps_the_store_contract() {
    let server = MariaDb::start();
    let store = open(&created(&server, "binary"));
    assert_conforms(&store, &Contract::new().with_table(TABLE));
    let p = created(&server, "binary").with("jdbc.autocommit", "false");
    assert_conforms(&open(&p), &Contract::new().with_table(TABLE));
}

#[test]
fn javas_table_is_read_and_written_both_ways_in_key_order() {
    let server = MariaDb::start();
    let store = open(&created(&server, "text").with("fieldcount", "3"));
    let mut t = thread(&store);
    for key in ["b", "B", "a", "aa", "_", "a_", "Z"] {
        let r = record(&[("field0", key), ("field1", "one")]);
        assert_eq!(t.insert(TABLE, key, &r), Status::Ok);
    }
    assert_eq!(
        t.update(TABLE, "a", &record(&[("field1", "uno")])),
        Status::Ok
    );
    // An update that changes nothing still found its row.
    assert_eq!(
        t.update(TABLE, "a", &record(&[("field1", "uno")])),
        Status::Ok
    );
    assert_eq!(
        t.update(TABLE, "missing", &record(&[("field1", "x")])),
        Status::NotFound
    );
    let mut client = server.client();
    let rows: Vec<(String, Option<String>, Option<String>)> = client
        .query("SELECT YCSB_KEY, FIELD0, FIELD1 FROM usertable WHERE YCSB_KEY = 'a'")
        .unwrap();
    assert_eq!(
        rows,
        [("a".into(), Some("a".into()), Some("uno".into()))],
        "an update writes its columns only"
    );
    client
        .exec_drop(
            "INSERT INTO usertable (YCSB_KEY,field2,field0) VALUES(?,?,?)",
            ("java", "two", "zero"),
        )
        .unwrap();
    let (status, got) = read(&mut *t, "java");
    assert_eq!(status, Status::Ok);
    assert_eq!(got.get("field0"), Some(&b"zero"[..]), "named in lower case");
    assert_eq!(got.len(), 2, "a NULL column is no field");
    let mut out = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, "B", 5, Fields::All), &mut out),
        Status::Ok
    );
    let keys: Vec<&str> = out.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["B", "Z", "_", "a", "a_"]);
    assert_eq!(t.delete(TABLE, "a"), Status::Ok);
    assert_eq!(t.delete(TABLE, "a"), Status::NotFound);
}

#[test]
fn a_wrong_password_fails_to_open_naming_the_server() {
    let server = MariaDb::start();
    let p = server.properties().with("db.passwd", "not-the-password");
    let e = JdbcStore::open(&p).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("cannot open jdbc: {}", server.url()))
            && e.contains("Access denied")
            && e.contains("db.url="),
        "{e}"
    );
    assert!(!e.contains("not-the-password"), "{e}");
    // go-ycsb's names, and the store's default port when none is given.
    let p = Properties::new()
        .with("mysql.port", server.port)
        .with("mysql.user", "ycsb")
        .with("mysql.password", MARIADB_PASSWORD);
    let store = open(&p);
    assert_eq!(store.config().shards[0].url.to_string(), server.url());
}

#[test]
fn gauges_and_engine_info_show_innodb() {
    let server = MariaDb::start();
    let store = open(&created(&server, "text"));
    let info = store.engine_info();
    assert_eq!(info.name, "MariaDB");
    assert!(
        info.version.contains("innodb_flush_log_at_trx_commit=1"),
        "{info:?}"
    );
    let mut t = thread(&store);
    let mut sample = Vec::new();
    store.gauges(&mut sample);
    for i in 0..20 {
        assert_eq!(
            t.insert(TABLE, &format!("g{i}"), &record(&[("field0", "v")])),
            Status::Ok
        );
        let _ = read(&mut *t, &format!("g{i}"));
    }
    sample.clear();
    store.gauges(&mut sample);
    let value = |name: &str| sample.iter().find(|g| g.name == name).map(|g| g.value);
    assert!(value("mysql.rows_written").unwrap() >= 20.0, "{sample:?}");
    assert!(value("mysql.rows_read").unwrap() >= 20.0, "{sample:?}");
    assert!(value("mysql.buffer_pool_read_requests").unwrap() > 0.0);
    let names = store.gauge_names();
    for g in &sample {
        assert!(names.contains(&g.name), "{}", g.name);
        let expected = if g.name.ends_with("ratio") {
            GaugeKind::Ratio
        } else {
            GaugeKind::Count
        };
        assert_eq!(g.kind, expected, "{}", g.name);
    }
}

#[test]
fn a_killed_server_fails_operations_then_is_reconnected() {
    killed_server_reconnects(&mut MariaDb::start(), MARIADB_PASSWORD);
}

#[test]
fn a_refused_statement_is_an_error_and_the_connection_goes_on() {
    refused_statement_leaves_the_connection_usable(&MariaDb::start(), "nosuchfield");
}
