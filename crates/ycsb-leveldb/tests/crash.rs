//! Durability after SIGKILL and locking against another process, with a
//! real child process (`src/bin/ack_writer.rs`) writing to the database.

use ycsb_db::testing::durability::AckWriterBinary;

const WRITER: AckWriterBinary = AckWriterBinary::new(
    env!("CARGO_BIN_EXE_ycsb-leveldb-ack-writer"),
    &ycsb_leveldb::DESCRIPTOR,
);

#[test]
fn synced_inserts_survive_sigkill() {
    WRITER.check_acknowledged_inserts_survive_sigkill(&["sync"], 300);
}

#[test]
fn unsynced_inserts_survive_sigkill_of_the_process() {
    // Without sync, LevelDB still hands each write to the kernel before
    // acknowledging it, so a killed process (not a crashed machine) loses
    // nothing; this is the YCSB-cpp default setting.
    WRITER.check_acknowledged_inserts_survive_sigkill(&[], 20_000);
}

#[test]
fn a_database_locked_by_another_process_is_an_open_error() {
    WRITER.check_open_refused_while_another_process_holds(&[], "in use");
}
