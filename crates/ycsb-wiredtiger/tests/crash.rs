//! Durability after SIGKILL and locking against another process, with a
//! real child process (`src/bin/ack_writer.rs`) writing to the database.

use std::path::Path;
use std::process::Command;

use ycsb_db::testing::durability::{
    check_acknowledged_inserts_survive_sigkill, check_open_refused_while_another_process_holds,
    count_readable, AckWriter,
};
use ycsb_db::{Properties, StoreError};
use ycsb_wiredtiger::WiredTigerStore;

fn open(dir: &Path) -> Result<WiredTigerStore, StoreError> {
    WiredTigerStore::open(&Properties::new().with("wiredtiger.home", dir.display()))
}

fn writer(dir: &Path, mode: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ycsb-wiredtiger-ack-writer"));
    cmd.arg(dir).arg(mode);
    cmd
}

#[test]
fn synced_inserts_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    check_acknowledged_inserts_survive_sigkill(&mut writer(dir.path(), "sync"), 300, || {
        open(dir.path())
    });
}

#[test]
fn logged_inserts_survive_sigkill_of_the_process() {
    // With the log written (not synced) at each commit, a killed process
    // (not a crashed machine) loses nothing.
    let dir = tempfile::tempdir().unwrap();
    check_acknowledged_inserts_survive_sigkill(&mut writer(dir.path(), "log"), 20_000, || {
        open(dir.path())
    });
}

#[test]
fn without_a_log_a_killed_process_loses_what_no_checkpoint_saved() {
    // YCSB-cpp's setting: no log, so what was written since the last
    // checkpoint (here: none) is gone, but the database reopens intact.
    let dir = tempfile::tempdir().unwrap();
    let acked = AckWriter::start(&mut writer(dir.path(), "none")).kill_after(5_000);
    let store = open(dir.path()).expect("reopen after the kill (recovery)");
    let found = count_readable(&store, &acked);
    assert!(found < acked.len(), "{found} of {}", acked.len());
}

#[test]
fn a_database_held_by_another_process_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    check_open_refused_while_another_process_holds(
        &mut writer(dir.path(), "none"),
        dir.path(),
        "already being managed by another process",
        || open(dir.path()),
        || {},
    );
}
