//! A child process for the crash and lock tests of `ycsb-wiredtiger`.
//!
//! Usage: `ycsb-wiredtiger-ack-writer HOME [sync|log|none]`. Opens the
//! `wiredtiger` store at HOME (`sync`: wiredtiger.sync=true; `log`:
//! wiredtiger.log=true; `none`: neither, YCSB-cpp's setting), prints
//! `ready`, then inserts records `key0`, `key1`, ... forever (until
//! killed), printing each key on its own line once the insert was
//! acknowledged. Each record holds one field whose value is derived from
//! the key, so a test can check what it reads back.

use std::io::Write;
use std::process::ExitCode;

use ycsb_db::{Properties, Record, Status, Store, ThreadContext};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: ycsb-wiredtiger-ack-writer HOME [sync|log|none]");
        return ExitCode::from(2);
    };
    let mode = args.next().unwrap_or_else(|| "none".to_string());
    let props = Properties::new()
        .with("wiredtiger.home", &dir)
        .with("wiredtiger.sync", mode == "sync")
        .with("wiredtiger.log", mode == "log")
        // A small cache, so that the kill also hits eviction.
        .with("wiredtiger.cache_size", "2MB");
    let store = match ycsb_wiredtiger::WiredTigerStore::open(&props) {
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
            eprintln!(
                "insert of {key} failed: {}",
                thread.last_error().unwrap_or("")
            );
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
