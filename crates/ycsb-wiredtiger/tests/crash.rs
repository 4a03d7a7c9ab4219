//! Durability after SIGKILL and locking against another process, with a
//! real child process (`src/bin/ack_writer.rs`) writing to the database.

use std::path::Path;

use ycsb_db::testing::durability::{count_readable, AckWriterBinary};
use ycsb_db::{Properties, StoreError};
use ycsb_wiredtiger::WiredTigerStore;

const WRITER: AckWriterBinary<WiredTigerStore> =
    AckWriterBinary::new(env!("CARGO_BIN_EXE_ycsb-wiredtiger-ack-writer"), open);

fn open(dir: &Path) -> Result<WiredTigerStore, StoreError> {
    WiredTigerStore::open(&Properties::new().with("wiredtiger.home", dir.display()))
}

#[test]
fn synced_inserts_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_acknowledged_inserts_survive_sigkill(dir.path(), &["sync"], 300);
}

#[test]
fn logged_inserts_survive_sigkill_of_the_process() {
    // With the log written (not synced) at each commit, a killed process
    // (not a crashed machine) loses nothing.
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_acknowledged_inserts_survive_sigkill(dir.path(), &["log"], 20_000);
}

#[test]
fn without_a_log_a_killed_process_loses_what_no_checkpoint_saved() {
    // YCSB-cpp's setting: no log, so what was written since the last
    // checkpoint (here: none) is gone, but the database reopens intact.
    let dir = tempfile::tempdir().unwrap();
    let acked = WRITER.start(dir.path(), &["none"]).kill_after(5_000);
    let store = WRITER.reopen(dir.path());
    let found = count_readable(&store, &acked);
    assert!(found < acked.len(), "{found} of {}", acked.len());
}

#[test]
fn a_database_held_by_another_process_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_open_refused_while_another_process_holds(
        dir.path(),
        &["none"],
        "in use: another ycsb process",
        || {},
    );
}
