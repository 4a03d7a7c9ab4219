//! Durability after SIGKILL and locking against another process, with a
//! real child process (`src/bin/ack_writer.rs`) writing to the database.

use ycsb_db::testing::durability::AckWriterBinary;

const WRITER: AckWriterBinary = AckWriterBinary::new(
    env!("CARGO_BIN_EXE_ycsb-fjall-ack-writer"),
    &ycsb_fjall::DESCRIPTOR,
);

#[test]
fn synced_inserts_survive_sigkill() {
    WRITER.check_acknowledged_inserts_survive_sigkill(&["sync"], 300);
}

#[test]
fn unsynced_inserts_survive_sigkill_of_the_process() {
    // Without fsync, fjall still writes each entry to its journal file
    // (into the kernel) before acknowledging it, so a killed process (not
    // a crashed machine) loses nothing.
    WRITER.check_acknowledged_inserts_survive_sigkill(&[], 20_000);
}

/// Nor is it destroyed under the holder (`fjall.destroy`).
#[test]
fn a_database_held_by_another_process_is_an_open_error() {
    WRITER.check_open_refused_while_another_process_holds(&[], "in use: another ycsb process");
}
