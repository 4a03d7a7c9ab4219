//! A child process for the crash and lock tests of `ycsb-wiredtiger`.
//!
//! Usage: `ycsb-wiredtiger-ack-writer HOME [sync|log|none]`. Opens the
//! `wiredtiger` store at HOME (`sync`: wiredtiger.sync=true; `log`:
//! wiredtiger.log=true; `none`: neither, YCSB-cpp's setting), and runs
//! `ycsb_db::testing::durability::run_ack_writer`, which prints `ready`,
//! inserts `key0`, `key1`, ... until killed and prints each key once its
//! insert was acknowledged.

use std::process::ExitCode;

use ycsb_db::testing::durability::run_ack_writer;
use ycsb_db::Properties;

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
    let Err(e) = run_ack_writer(
        || ycsb_wiredtiger::WiredTigerStore::open(&props),
        &mut std::io::stdout().lock(),
    );
    eprintln!("{e}");
    ExitCode::FAILURE
}
