//! Durability after SIGKILL and locking against another process, with a
//! real child process (`src/bin/ack_writer.rs`) writing to the database.

use ycsb_db::testing::durability::{count_readable_prefix, AckWriterBinary};

const WRITER: AckWriterBinary = AckWriterBinary::new(
    env!("CARGO_BIN_EXE_ycsb-redb-ack-writer"),
    &ycsb_redb::DESCRIPTOR,
);

#[test]
fn synced_inserts_survive_sigkill() {
    WRITER.check_acknowledged_inserts_survive_sigkill(&["sync"], 300);
}

/// With `redb.durability=none` redb promises nothing for a killed process:
/// what it does promise is a database that opens, consistent (every record
/// it still has is intact, the ones it lost form a suffix of the writes).
#[test]
fn unsynced_inserts_leave_a_consistent_database_after_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let acked = WRITER.start(dir.path(), &[]).kill_after(2_000);
    let store = WRITER.reopen(dir.path());
    let kept = count_readable_prefix(store.as_ref(), &acked);
    eprintln!(
        "redb durability=none: {kept} of {} acknowledged records kept after SIGKILL",
        acked.len()
    );
}

/// Synced, so that the records acknowledged while the open was refused
/// must all be there afterwards; nor is the database destroyed under its
/// holder (`redb.destroy`).
#[test]
fn a_database_held_by_another_process_is_an_open_error() {
    WRITER.check_open_refused_while_another_process_holds(&["sync"], "in use");
}
