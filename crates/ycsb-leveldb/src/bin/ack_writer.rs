//! A child process for the crash and lock tests of `ycsb-leveldb`.
//!
//! Usage: `ycsb-leveldb-ack-writer DBDIR [sync]`. Opens the `leveldb` store
//! at DBDIR (`sync`: leveldb.sync=true), and runs
//! `ycsb_db::testing::durability::run_ack_writer`, which prints `ready`,
//! inserts `key0`, `key1`, ... until killed and prints each key once its
//! insert was acknowledged.

use std::process::ExitCode;

use ycsb_db::testing::durability::run_ack_writer;
use ycsb_db::Properties;

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
    let Err(e) = run_ack_writer(
        || ycsb_leveldb::LevelStore::open(&props),
        &mut std::io::stdout().lock(),
    );
    eprintln!("{e}");
    ExitCode::FAILURE
}
