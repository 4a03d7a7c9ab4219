//! Every acknowledged synced insert survives a SIGKILL of the loader.
//!
//! The loader is this test binary itself, run as a child process on the
//! ignored test `child_loader`: it inserts synced records forever and
//! prints `ACK <key>` after each acknowledged insert. The parent kills it
//! with SIGKILL mid-load, reopens the database and reads every acked key.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use common::{open, record_for};
use ycsb_db::{Fields, ReadOp, Record, Status, Store, ThreadContext};

const CHILD_DIR: &str = "YCSB_ROCKSDB_CHILD_DIR";
const FIELDS: usize = 10;
const FIELD_LEN: usize = 100;

#[test]
#[ignore = "run by sigkill_mid_load_keeps_every_acked_record as its child process"]
fn child_loader() {
    // Run by hand (or with --include-ignored) it has nothing to do.
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let store = open(std::path::Path::new(&dir), &[("rocksdb.sync", "true")]).unwrap();
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    for i in 0u64.. {
        let key = format!("user{i:08}");
        if t.insert("usertable", &key, &record_for(&key, FIELDS, FIELD_LEN)) == Status::Ok {
            println!("ACK {key}");
        }
    }
}

#[test]
fn sigkill_mid_load_keeps_every_acked_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_loader",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut acked = Vec::new();
    while acked.len() < 500 {
        let line = lines
            .next()
            .expect("the loader stopped before 500 acknowledged inserts")
            .unwrap();
        if let Some(key) = line.strip_prefix("ACK ") {
            acked.push(key.to_string());
        }
    }
    // While the loader runs, another process cannot open the database.
    let err = match open(dir.path(), &[]) {
        Ok(_) => panic!("opened a database locked by the loader"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("is in use"), "{err}");

    // Child::kill sends SIGKILL on Unix: no destructor, no flush runs.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(9),
        "the loader was not killed: {status}"
    );
    // Acks already in the pipe were acknowledged before the kill too.
    for line in lines {
        if let Some(key) = line.unwrap().strip_prefix("ACK ") {
            acked.push(key.to_string());
        }
    }

    let store = open(dir.path(), &[]).unwrap();
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    for key in &acked {
        out.clear();
        assert_eq!(
            t.read(&ReadOp::new("usertable", key, Fields::All), &mut out),
            Status::Ok,
            "acknowledged {key} lost ({} acked)",
            acked.len()
        );
        assert_eq!(out, record_for(key, FIELDS, FIELD_LEN), "{key} differs");
    }
}
