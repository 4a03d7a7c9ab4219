//! A child process for the crash test of `ycsb-sqlite`.
//!
//! Usage: `ycsb-sqlite-ack-writer DBDIR SYNCHRONOUS`. Opens the `sqlite`
//! store at DBDIR with `sqlite.synchronous=SYNCHRONOUS`, prints `ready`,
//! then inserts records `key0`, `key1`, ... forever (until killed),
//! printing each key on its own line once the insert was acknowledged
//! (committed). Each record holds one field whose value is derived from
//! the key, so a test can check what it reads back.

use std::io::Write;
use std::process::ExitCode;

use ycsb_db::{Properties, Record, Status, Store, ThreadContext};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(synchronous)) = (args.next(), args.next()) else {
        eprintln!("usage: ycsb-sqlite-ack-writer DBDIR SYNCHRONOUS");
        return ExitCode::from(2);
    };
    let props = Properties::new()
        .with("sqlite.dbpath", &dir)
        .with("sqlite.synchronous", &synchronous);
    let store = match ycsb_sqlite::SqliteStore::open(&props) {
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
            eprintln!("insert of {key} failed: {:?}", thread.last_error());
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
