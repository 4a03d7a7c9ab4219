//! The jdbc store against real PostgreSQL servers started here: the store
//! contract, Java's table read and written both ways, shards, batches,
//! transactions, a server killed and restarted, refused logins and
//! unreachable servers, and the server's figures as gauges.

use std::time::{Duration, Instant};

use ycsb_db::testing::{assert_conforms, record, Contract};
use ycsb_db::{Fields, GaugeKind, Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store};
use ycsb_jdbc::testing::{Postgres, PASSWORD};
use ycsb_jdbc::{shard_of, JdbcStore};

mod common;

use common::*;

/// Rows of `usertable` on `server`, by key, as `(key, field0, field1)`.
fn rows(server: &Postgres) -> Vec<(String, Option<String>, Option<String>)> {
    server
        .client()
        .query("SELECT YCSB_KEY, FIELD0, FIELD1 FROM usertable ORDER BY YCSB_KEY")
        .unwrap()
        .into_iter()
        .map(|r| (r[0].clone().unwrap(), r[1].clone(), r[2].clone()))
        .collect()
}

#[test]
fn keeps_the_store_contract() {
    let server = Postgres::start();
    let store = open(&created(&server, "binary"));
    assert_conforms(&store, &Contract::new().with_table(TABLE));
}

#[test]
fn keeps_the_store_contract_without_autocommit() {
    let server = Postgres::start();
    let p = created(&server, "binary").with("jdbc.autocommit", "false");
    assert_conforms(&open(&p), &Contract::new().with_table(TABLE));
}

/// Java's `JdbcDBCreateTable` table: what this store writes, Java's
/// client reads (plain columns of text), and what Java's writes, this
/// store reads; an update writes only its columns.
#[test]
fn javas_table_is_read_and_written_both_ways() {
    let server = Postgres::start();
    let store = open(&created(&server, "text").with("fieldcount", "3"));
    let columns: Vec<(String, String)> = server
        .client()
        .query(
            "SELECT column_name::text, data_type::text FROM information_schema.columns \
             WHERE table_name = 'usertable' ORDER BY ordinal_position",
        )
        .unwrap()
        .into_iter()
        .map(|r| (r[0].clone().unwrap(), r[1].clone().unwrap()))
        .collect();
    let expected: Vec<(String, String)> = [
        ("ycsb_key", "character varying"),
        ("field0", "text"),
        ("field1", "text"),
        ("field2", "text"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(columns, expected);
    let mut t = thread(&store);
    let r = record(&[("field0", "zero"), ("field1", "one")]);
    assert_eq!(t.insert(TABLE, "user1", &r), Status::Ok);
    assert_eq!(
        rows(&server),
        [("user1".into(), Some("zero".into()), Some("one".into()))]
    );
    // An update writes its columns only.
    assert_eq!(
        t.update(TABLE, "user1", &record(&[("field1", "uno")])),
        Status::Ok
    );
    assert_eq!(
        rows(&server),
        [("user1".into(), Some("zero".into()), Some("uno".into()))]
    );
    // As Java's client inserts a row.
    server
        .client()
        .execute("INSERT INTO usertable (YCSB_KEY,field2,field0) VALUES('user2','two','nul')")
        .unwrap();
    let (status, got) = read(&mut *t, "user2");
    assert_eq!(status, Status::Ok);
    assert_eq!(got.get("field0"), Some(&b"nul"[..]));
    assert_eq!(got.get("field2"), Some(&b"two"[..]));
    assert_eq!(got.len(), 2, "a NULL column is no field");
    // A text column cannot hold bytes that are not UTF-8: ERROR, saying so.
    assert_eq!(
        t.insert(
            TABLE,
            "user3",
            &ycsb_db::testing::record_bytes(&[("field0", b"\xff")])
        ),
        Status::Error
    );
    assert!(
        t.last_error().unwrap().contains("not UTF-8"),
        "{:?}",
        t.last_error()
    );
    // Names that cannot go into SQL unquoted are refused, not sent.
    assert_eq!(
        t.insert(TABLE, "user4", &record(&[("field0; DROP", "x")])),
        Status::Error
    );
    assert_eq!(
        read(&mut *t, "user2").0,
        Status::Ok,
        "the table is still there"
    );
}

/// Java's range query: from the start key, in byte order of the keys
/// (the key column's C collation), at most the count.
#[test]
fn scans_are_javas_range_query_in_key_order() {
    let server = Postgres::start();
    let store = open(&created(&server, "text"));
    let mut t = thread(&store);
    for key in ["b", "B", "a", "aa", "_", "a_", "Z", "ab"] {
        assert_eq!(
            t.insert(TABLE, key, &record(&[("field0", key)])),
            Status::Ok
        );
    }
    let mut out = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, "B", 5, Fields::All), &mut out),
        Status::Ok
    );
    let keys: Vec<&str> = out.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["B", "Z", "_", "a", "a_"]);
    for (key, r) in out.iter() {
        assert_eq!(r.get("field0"), Some(key.as_bytes()));
    }
    let only = vec!["field1".to_string()];
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, "b", 10, Fields::Only(&only)), &mut out),
        Status::Ok
    );
    assert_eq!(out.len(), 1);
    assert!(out.iter().all(|(_, r)| r.is_empty()));
}

/// Several URLs are shards: each key is on the server Java would put it.
#[test]
fn keys_are_sharded_over_the_urls_as_java_shards_them() {
    let servers = [Postgres::start(), Postgres::start()];
    let p = created(&servers[0], "text").with(
        "db.url",
        format!("{}, {}", servers[0].url(), servers[1].url()),
    );
    let store = open(&p);
    let mut t = thread(&store);
    let keys: Vec<String> = (0..40).map(|i| format!("user{i}")).collect();
    for key in &keys {
        assert_eq!(
            t.insert(TABLE, key, &record(&[("field0", key)])),
            Status::Ok
        );
    }
    for (s, server) in servers.iter().enumerate() {
        let mut held: Vec<String> = rows(server).into_iter().map(|r| r.0).collect();
        let mut expected: Vec<String> = keys
            .iter()
            .filter(|k| shard_of(k, 2) == s)
            .cloned()
            .collect();
        held.sort();
        expected.sort();
        assert_eq!(held, expected);
        assert!(held.len() > 5, "{held:?}");
    }
    for key in &keys {
        assert_eq!(read(&mut *t, key).0, Status::Ok);
        assert_eq!(t.delete(TABLE, key), Status::Ok);
        assert_eq!(read(&mut *t, key).0, Status::NotFound);
    }
}

/// `jdbc.batchupdateapi` with `db.batchsize`: inserts answer BATCHED_OK
/// until a batch is full, which is sent in one transaction; cleanup
/// sends the rest.
#[test]
fn batched_inserts_are_sent_by_the_batch_and_at_cleanup() {
    let server = Postgres::start();
    let p = created(&server, "text")
        .with("jdbc.batchupdateapi", "true")
        .with("db.batchsize", "4");
    let store = open(&p);
    let mut t = thread(&store);
    let mut statuses = Vec::new();
    for i in 0..10 {
        statuses.push(t.insert(TABLE, &format!("k{i}"), &record(&[("field0", "v")])));
        let expected_rows = (i + 1) / 4 * 4;
        assert_eq!(rows(&server).len(), expected_rows, "after insert {i}");
    }
    use Status::{BatchedOk as B, Ok as K};
    assert_eq!(statuses, [B, B, B, K, B, B, B, K, B, B]);
    t.cleanup().unwrap();
    assert_eq!(rows(&server).len(), 10);
}

/// Without autocommit, writes are committed every `db.batchsize` writes
/// and by cleanup; other sessions see only what was committed.
#[test]
fn without_autocommit_writes_commit_by_the_batch_size() {
    let server = Postgres::start();
    let p = created(&server, "text")
        .with("jdbc.autocommit", "false")
        .with("db.batchsize", "3");
    let store = open(&p);
    let mut t = thread(&store);
    for i in 0..5 {
        assert_eq!(
            t.insert(TABLE, &format!("k{i}"), &record(&[("field0", "v")])),
            Status::Ok
        );
    }
    assert_eq!(rows(&server).len(), 3);
    // The thread reads its own uncommitted write.
    assert_eq!(read(&mut *t, "k4").0, Status::Ok);
    t.cleanup().unwrap();
    assert_eq!(rows(&server).len(), 5);
}

/// The client answers every login the server may ask for: trust (no
/// password), cleartext password, MD5 and SCRAM-SHA-256 (the cluster's
/// default over TCP); a wrong password or a missing one is refused as a
/// line naming the server.
#[test]
fn every_login_method_is_answered() {
    let server = Postgres::start();
    server
        .client()
        .execute(
            "CREATE USER trusted; CREATE USER clear PASSWORD 'clear-pw'; \
             CREATE USER scram PASSWORD 'scram-pw'; SET password_encryption = 'md5'; \
             CREATE USER md5user PASSWORD 'md5-pw'; \
             GRANT ALL ON SCHEMA public TO trusted, clear, scram, md5user",
        )
        .unwrap();
    server.add_hba_rules(&[
        "host all trusted 127.0.0.1/32 trust",
        "host all clear 127.0.0.1/32 password",
        "host all md5user 127.0.0.1/32 md5",
    ]);
    let login = |user: &str, password: Option<&str>| {
        let mut p = Properties::new()
            .with("db.url", server.url())
            .with("db.user", user)
            .with("jdbc.createtable", "true")
            .with("table", format!("t_{user}"));
        if let Some(password) = password {
            p = p.with("db.passwd", password);
        }
        JdbcStore::open(&p).map(|store| {
            let mut t = thread(&store);
            let table = format!("t_{user}");
            assert_eq!(
                t.insert(&table, "k", &record(&[("field0", "v")])),
                Status::Ok
            );
            let mut out = Record::new();
            assert_eq!(
                t.read(&ReadOp::new(&table, "k", Fields::All), &mut out),
                Status::Ok
            );
            assert_eq!(out.get("field0"), Some(&b"v"[..]));
        })
    };
    for (user, password) in [
        ("trusted", None),
        ("clear", Some("clear-pw")),
        ("md5user", Some("md5-pw")),
        ("scram", Some("scram-pw")),
    ] {
        if let Err(e) = login(user, password) {
            panic!("{user} does not log in: {e}");
        }
    }
    for user in ["clear", "md5user", "scram"] {
        let e = login(user, Some("wrong")).unwrap_err().to_string();
        assert!(e.contains("password authentication failed"), "{user}: {e}");
        assert!(e.contains(&server.url()), "{user}: {e}");
        let e = login(user, None).unwrap_err().to_string();
        assert!(
            e.contains("asks for a password and none is given"),
            "{user}: {e}"
        );
    }
    // The harness's own client logs in by SCRAM too, and a refusal says why.
    let e = server.client_as("scram", Some("wrong")).err().unwrap();
    assert!(
        e.starts_with("FATAL: password authentication failed"),
        "{e}"
    );
    assert!(server.client_as("scram", Some("scram-pw")).is_ok());
}

/// Values larger than one read of the socket (a megabyte of bytes, which
/// arrives in many pieces) go and come back whole, and a read after them
/// still finds its own row.
#[test]
fn large_values_arrive_whole() {
    let server = Postgres::start();
    let store = open(&created(&server, "binary"));
    let mut t = thread(&store);
    let big: Vec<u8> = (0..1 << 20).map(|i: u32| (i * 7 % 251) as u8).collect();
    let r = ycsb_db::testing::record_bytes(&[("field0", &big), ("field1", b"small")]);
    assert_eq!(t.insert(TABLE, "big", &r), Status::Ok);
    assert_eq!(
        t.insert(TABLE, "small", &record(&[("field0", "s")])),
        Status::Ok
    );
    for _ in 0..3 {
        let (status, got) = read(&mut *t, "big");
        assert_eq!(status, Status::Ok);
        assert_eq!(got.get("field0"), Some(&big[..]));
        assert_eq!(got.get("field1"), Some(&b"small"[..]));
        let (status, got) = read(&mut *t, "small");
        assert_eq!(status, Status::Ok);
        assert_eq!(got.get("field0"), Some(&b"s"[..]));
    }
}

#[test]
fn a_wrong_password_or_a_closed_port_fails_to_open_naming_the_server() {
    let server = Postgres::start();
    let wrong = server.properties().with("db.passwd", "not-the-password");
    let e = JdbcStore::open(&wrong).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("cannot open jdbc: {}", server.url()))
            && e.contains("password authentication failed")
            && e.contains("db.url="),
        "{e}"
    );
    assert!(!e.contains("not-the-password"), "{e}");
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = Properties::new()
        .with("pg.host", "127.0.0.1")
        .with("pg.port", closed)
        .with("pg.password", PASSWORD);
    let e = JdbcStore::open(&p).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "cannot open jdbc: jdbc:postgresql://127.0.0.1:{closed}/test:"
        )) && e.contains("pg.port="),
        "{e}"
    );
    assert!(!e.contains(PASSWORD), "{e}");
    // A password in the URL is not shown either.
    let p = Properties::new().with(
        "db.url",
        format!("jdbc:postgresql://127.0.0.1:{closed}/d?password={PASSWORD}"),
    );
    let e = JdbcStore::open(&p).unwrap_err().to_string();
    assert!(!e.contains(PASSWORD), "{e}");
}

#[test]
fn gauges_show_commits_blocks_and_the_table_size() {
    let server = Postgres::start();
    let store = open(&created(&server, "text"));
    let mut t = thread(&store);
    let mut sample = Vec::new();
    store.gauges(&mut sample);
    let value = |sample: &[ycsb_db::Gauge], name: &str| {
        sample.iter().find(|g| g.name == name).map(|g| g.value)
    };
    let commits_before = value(&sample, "pg.xact_commit").unwrap();
    for i in 0..50 {
        assert_eq!(
            t.insert(TABLE, &format!("g{i}"), &record(&[("field0", "v")])),
            Status::Ok
        );
    }
    // The server publishes its statistics within about a second.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        sample.clear();
        store.gauges(&mut sample);
        if value(&sample, "pg.xact_commit").unwrap() >= commits_before + 50.0 {
            break;
        }
        assert!(Instant::now() < deadline, "{sample:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(value(&sample, "pg.table_bytes").unwrap() > 8192.0);
    assert!(value(&sample, "pg.blks_hit").unwrap() > 0.0);
    let names = store.gauge_names();
    for g in &sample {
        assert!(names.contains(&g.name), "{}", g.name);
        let expected = match g.name.as_str() {
            "pg.table_bytes" => GaugeKind::Bytes,
            "pg.buffer_hit_ratio" => GaugeKind::Ratio,
            _ => GaugeKind::Count,
        };
        assert_eq!(g.kind, expected, "{}", g.name);
    }
}

/// The server's version and what its commits promise are recorded, and
/// `pg.synchronous_commit` sets the sessions' setting.
#[test]
fn engine_info_records_the_durability_in_force() {
    let server = Postgres::start();
    let store = open(&server.properties());
    let info = store.engine_info();
    assert_eq!(info.name, "PostgreSQL");
    assert!(
        info.version.starts_with("15") || info.version.starts_with('1'),
        "{info:?}"
    );
    assert!(info.version.contains("synchronous_commit=on"), "{info:?}");
    assert!(info.version.contains("fsync=off"), "{info:?}");
    let relaxed = open(&server.properties().with("pg.synchronous_commit", "off"));
    assert!(
        relaxed
            .engine_info()
            .version
            .contains("synchronous_commit=off"),
        "{:?}",
        relaxed.engine_info()
    );
    let d = ycsb_jdbc::DESCRIPTOR;
    let setting = d
        .durability_in(&Properties::new().with("pg.synchronous_commit", "off"))
        .unwrap();
    assert!(!setting.durable);
    assert!(d.durability_in(&Properties::new()).unwrap().durable);
}

#[test]
fn a_killed_server_fails_operations_then_is_reconnected() {
    killed_server_reconnects(&mut Postgres::start(), PASSWORD);
}

#[test]
fn a_refused_statement_is_an_error_and_the_connection_goes_on() {
    refused_statement_leaves_the_connection_usable(
        &Postgres::start(),
        "ERROR: column \"nosuchfield\"",
    );
}
