//! A child process for the crash and lock tests of `ycsb-leveldb`.
//!
//! Usage: `ycsb-leveldb-ack-writer DBDIR [sync]`. Opens the `leveldb`
//! store at DBDIR, prints `ready`, then inserts records `key0`, `key1`, ...
//! forever (until killed), printing each key on its own line once the
//! insert was acknowledged. Each record holds one field whose value is
//! derived from the key, so a test can check what it reads back.

use std::io::Write;
use std::process::ExitCode;

use ycsb_db::{Properties, Record, Status, Store, ThreadContext};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: ycsb-leveldb-ack-writer DBDIR [sync]");
        return ExitCode::from(2);
    };
    let sync = args.next().as_deref() == Some("sync");
    let props = Properties::new()
        .with("leveldb.dbname", &dir)
        .with("leveldb.sync", sync)
        // Small memtables so that the kill also hits flushes and compactions.
        .with("leveldb.write_buffer_size", 64 * 1024);
    let store = match ycsb_leveldb::LevelStore::open(&props) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let mut thread = match store.thread(ThreadContext::new(0, 1)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    if writeln!(out, "ready").and_then(|()| out.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    let mut record = Record::new();
    for i in 0u64.. {
        let key = format!("key{i}");
        record.clear();
        record.push("field0", ack_writer_value(&key).as_bytes());
        if thread.insert("usertable", &key, &record) != Status::Ok {
            eprintln!("insert of {key} failed");
            return ExitCode::FAILURE;
        }
        if writeln!(out, "{key}").and_then(|()| out.flush()).is_err() {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// The value stored for `key` (the tests compute the same).
fn ack_writer_value(key: &str) -> String {
    format!("value-of-{key}-").repeat(8)
}
