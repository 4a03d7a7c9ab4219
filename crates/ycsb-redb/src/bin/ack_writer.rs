//! A child process for the crash and lock tests of `ycsb-redb`.
//!
//! Usage: `ycsb-redb-ack-writer DIR [sync]`. Opens the `redb` store at DIR
//! (`sync`: redb.durability=immediate, else none), and runs
//! `ycsb_db::testing::durability::run_ack_writer`, which prints `ready`,
//! inserts `key0`, `key1`, ... until killed and prints each key once its
//! insert was acknowledged.

use std::process::ExitCode;

use ycsb_db::testing::durability::run_ack_writer;
use ycsb_db::Properties;

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
    let Err(e) = run_ack_writer(
        || ycsb_redb::RedbStore::open(&props),
        &mut std::io::stdout().lock(),
    );
    eprintln!("{e}");
    ExitCode::FAILURE
}
