//! A child process for the crash test of `ycsb-sqlite`.
//!
//! Usage: `ycsb-sqlite-ack-writer DBDIR SYNCHRONOUS`. Opens the `sqlite`
//! store at DBDIR with `sqlite.synchronous=SYNCHRONOUS`, and runs
//! `ycsb_db::testing::durability::run_ack_writer`, which prints `ready`,
//! inserts `key0`, `key1`, ... until killed and prints each key once its
//! insert was acknowledged (committed).

use std::process::ExitCode;

use ycsb_db::testing::durability::run_ack_writer;
use ycsb_db::Properties;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(synchronous)) = (args.next(), args.next()) else {
        eprintln!("usage: ycsb-sqlite-ack-writer DBDIR SYNCHRONOUS");
        return ExitCode::from(2);
    };
    let props = Properties::new()
        .with("sqlite.dbpath", &dir)
        .with("sqlite.synchronous", &synchronous);
    let Err(e) = run_ack_writer(
        || ycsb_sqlite::SqliteStore::open(&props),
        &mut std::io::stdout().lock(),
    );
    eprintln!("{e}");
    ExitCode::FAILURE
}
