//! A child process for the crash test of `ycsb-lmdb`.
//!
//! Usage: `ycsb-lmdb-ack-writer DBDIR [nosync]`. Opens the `lmdb` store at
//! DBDIR (`nosync`: lmdb.nosync=true), and runs
//! `ycsb_db::testing::durability::run_ack_writer`, which prints `ready`,
//! inserts `key0`, `key1`, ... until killed and prints each key once its
//! insert was acknowledged (committed).

use std::process::ExitCode;

use ycsb_db::testing::durability::run_ack_writer;
use ycsb_db::Properties;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: ycsb-lmdb-ack-writer DBDIR [nosync]");
        return ExitCode::from(2);
    };
    let nosync = args.next().as_deref() == Some("nosync");
    let props = Properties::new()
        .with("lmdb.dbpath", &dir)
        .with("lmdb.mapsize", 256u64 << 20)
        .with("lmdb.nosync", nosync);
    let Err(e) = run_ack_writer(
        || ycsb_lmdb::LmdbStore::open(&props),
        &mut std::io::stdout().lock(),
    );
    eprintln!("{e}");
    ExitCode::FAILURE
}
