//! What the PostgreSQL and MariaDB tests share: opening the store on a
//! server started here, and the checks whose steps are the same on both
//! servers (each server's file adds what only it does).

#![allow(dead_code)]

use std::time::{Duration, Instant};

use ycsb_db::testing::record;
use ycsb_db::{Fields, Properties, ReadOp, Record, Status, Store, StoreThread, ThreadContext};
use ycsb_jdbc::testing::{MariaDb, Postgres};
use ycsb_jdbc::JdbcStore;

pub const TABLE: &str = "usertable";

/// A database server the tests start, kill and restart.
pub trait TestServer {
    /// The store properties that reach it (URL, user, password).
    fn properties(&self) -> Properties;
    /// Its loopback port.
    fn port(&self) -> u16;
    /// Kills it (SIGKILL): connections break mid-run.
    fn kill(&mut self);
    /// Starts it again on the same port and data.
    fn restart(&mut self);
}

impl TestServer for Postgres {
    fn properties(&self) -> Properties {
        Postgres::properties(self)
    }
    fn port(&self) -> u16 {
        self.port
    }
    fn kill(&mut self) {
        Postgres::kill(self);
    }
    fn restart(&mut self) {
        Postgres::restart(self);
    }
}

impl TestServer for MariaDb {
    fn properties(&self) -> Properties {
        MariaDb::properties(self)
    }
    fn port(&self) -> u16 {
        self.port
    }
    fn kill(&mut self) {
        MariaDb::kill(self);
    }
    fn restart(&mut self) {
        MariaDb::restart(self);
    }
}

pub fn open(properties: &Properties) -> JdbcStore {
    JdbcStore::open(properties).unwrap_or_else(|e| panic!("store opens: {e}"))
}

pub fn thread(store: &JdbcStore) -> Box<dyn StoreThread + '_> {
    store.thread(ThreadContext::new(0, 1)).unwrap()
}

pub fn read(t: &mut dyn StoreThread, key: &str) -> (Status, Record) {
    let mut out = Record::new();
    let status = t.read(&ReadOp::new(TABLE, key, Fields::All), &mut out);
    (status, out)
}

/// Properties that create Java's table with `field_type` columns.
pub fn created(server: &impl TestServer, field_type: &str) -> Properties {
    server
        .properties()
        .with("jdbc.createtable", "true")
        .with("jdbc.fieldtype", field_type)
}

/// A killed server fails each operation quickly as unavailable, with an
/// error naming the server and not its password; once it is back, the
/// thread reconnects by itself and what was committed is there.
pub fn killed_server_reconnects(server: &mut impl TestServer, password: &str) {
    let store = open(&created(&*server, "text"));
    let mut t = thread(&store);
    assert_eq!(
        t.insert(TABLE, "k0", &record(&[("field0", "v")])),
        Status::Ok
    );
    server.kill();
    for _ in 0..5 {
        let started = Instant::now();
        assert_eq!(read(&mut *t, "k0").0, Status::ServiceUnavailable);
        assert_eq!(
            t.insert(TABLE, "k1", &record(&[("field0", "v")])),
            Status::ServiceUnavailable
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }
    let e = t.last_error().unwrap().to_string();
    assert!(e.contains(&format!("127.0.0.1:{}", server.port())), "{e}");
    assert!(!e.contains(password), "{e}");
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match t.insert(TABLE, "k1", &record(&[("field0", "v")])) {
            Status::Ok => break,
            Status::ServiceUnavailable => {}
            other => panic!("unexpected {other}: {:?}", t.last_error()),
        }
        assert!(Instant::now() < deadline, "no reconnection");
        std::thread::sleep(Duration::from_millis(20));
    }
    // What was committed survived the crash.
    assert_eq!(read(&mut *t, "k0").0, Status::Ok);
    assert_eq!(read(&mut *t, "k1").0, Status::Ok);
}

/// With and without autocommit, a statement the server refuses is an error
/// whose message contains `refusal`, and the connection goes on: earlier
/// writes are still there, and a batch whose second insert repeats a key
/// keeps none of its rows (the connection left the failed transaction).
pub fn refused_statement_leaves_the_connection_usable(server: &impl TestServer, refusal: &str) {
    for autocommit in ["true", "false"] {
        let store = open(&created(server, "text").with("jdbc.autocommit", autocommit));
        let mut t = thread(&store);
        assert_eq!(
            t.insert(TABLE, "a", &record(&[("field0", "x")])),
            Status::Ok
        );
        // No such column: the server refuses the statement.
        assert_eq!(
            t.update(TABLE, "a", &record(&[("nosuchfield", "y")])),
            Status::Error
        );
        let e = t.last_error().unwrap();
        assert!(e.contains(refusal), "{e}");
        let (status, got) = read(&mut *t, "a");
        assert_eq!(status, Status::Ok, "{autocommit}");
        assert_eq!(got.get("field0"), Some(&b"x"[..]));
        let mut batch = ycsb_db::Batch::new();
        batch.push("b1").push("field0", b"1");
        batch.push("a").push("field0", b"dup");
        let mut statuses = [Status::Ok; 2];
        assert_eq!(t.insert_batch(TABLE, &batch, &mut statuses), Status::Error);
        assert_eq!(read(&mut *t, "b1").0, Status::NotFound, "{autocommit}");
        assert_eq!(read(&mut *t, "a").1.get("field0"), Some(&b"x"[..]));
        assert_eq!(t.delete(TABLE, "a"), Status::Ok);
        t.cleanup().unwrap();
    }
}
