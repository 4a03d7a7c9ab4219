//! Durability after SIGKILL and locking against another process, with a
//! real child process (`src/bin/ack_writer.rs`) writing to the database.

use ycsb_db::testing::durability::{count_readable, AckWriterBinary};

const WRITER: AckWriterBinary = AckWriterBinary::new(
    env!("CARGO_BIN_EXE_ycsb-wiredtiger-ack-writer"),
    &ycsb_wiredtiger::DESCRIPTOR,
);

#[test]
fn synced_inserts_survive_sigkill() {
    WRITER.check_acknowledged_inserts_survive_sigkill(&["sync"], 300);
}

#[test]
fn logged_inserts_survive_sigkill_of_the_process() {
    // With the log written (not synced) at each commit, a killed process
    // (not a crashed machine) loses nothing.
    WRITER.check_acknowledged_inserts_survive_sigkill(&["log"], 20_000);
}

#[test]
fn without_a_log_a_killed_process_loses_what_no_checkpoint_saved() {
    // YCSB-cpp's setting: no log, so what was written since the last
    // checkpoint (here: none) is gone, but the database reopens intact.
    let dir = tempfile::tempdir().unwrap();
    let acked = WRITER.start(dir.path(), &["none"]).kill_after(5_000);
    let store = WRITER.reopen(dir.path());
    let found = count_readable(store.as_ref(), &acked);
    assert!(found < acked.len(), "{found} of {}", acked.len());
}

/// Logged, so that the records acknowledged while the open was refused
/// must all be there afterwards.
#[test]
fn a_database_held_by_another_process_is_an_open_error() {
    WRITER.check_open_refused_while_another_process_holds(&["log"], "in use: another ycsb process");
}
