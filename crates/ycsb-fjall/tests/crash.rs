//! Durability after SIGKILL and locking against another process, with a
//! real child process (`src/bin/ack_writer.rs`) writing to the database.

use std::path::Path;

use ycsb_db::testing::durability::AckWriterBinary;
use ycsb_db::{Properties, StoreError};
use ycsb_fjall::FjallStore;

const WRITER: AckWriterBinary<FjallStore> =
    AckWriterBinary::new(env!("CARGO_BIN_EXE_ycsb-fjall-ack-writer"), open);

fn open(dir: &Path) -> Result<FjallStore, StoreError> {
    FjallStore::open(&Properties::new().with("fjall.dir", dir.display()))
}

#[test]
fn synced_inserts_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_acknowledged_inserts_survive_sigkill(dir.path(), &["sync"], 300);
}

#[test]
fn unsynced_inserts_survive_sigkill_of_the_process() {
    // Without fsync, fjall still writes each entry to its journal file
    // (into the kernel) before acknowledging it, so a killed process (not
    // a crashed machine) loses nothing.
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_acknowledged_inserts_survive_sigkill(dir.path(), &[], 20_000);
}

#[test]
fn a_database_held_by_another_process_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_open_refused_while_another_process_holds(
        dir.path(),
        &[],
        "in use: another ycsb process",
        || {
            // Nor is it destroyed under the holder.
            let destroy = Properties::new()
                .with("fjall.dir", dir.path().display())
                .with("fjall.destroy", true);
            let err = FjallStore::open(&destroy).expect_err("destroyed a database in use");
            assert!(err.to_string().contains("is in use"), "{err}");
        },
    );
}
