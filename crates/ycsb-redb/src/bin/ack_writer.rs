//! A child process for the crash and lock tests of `ycsb-redb`.
//!
//! Usage: `ycsb-redb-ack-writer DIR [sync]`. Opens the `redb` store at
//! DIR, prints `ready`, then inserts records `key0`, `key1`, ... forever
//! (until killed), printing each key on its own line once the insert was
//! acknowledged. Each record holds one field whose value is derived from
//! the key, so a test can check what it reads back.

use std::io::Write;
use std::process::ExitCode;

use ycsb_db::{Properties, Record, Status, Store, ThreadContext};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: ycsb-redb-ack-writer DIR [sync]");
        return ExitCode::from(2);
    };
    let sync = args.next().as_deref() == Some("sync");
    let props = Properties::new()
        .with("redb.path", &dir)
        .with("redb.durability", if sync { "immediate" } else { "none" });
    let store = match ycsb_redb::RedbStore::open(&props) {
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
        record.push("field0", format!("value-of-{key}-").repeat(8).as_bytes());
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
