//! Durability after SIGKILL and locking against another process, with a
//! real child process (`src/bin/ack_writer.rs`) writing to the database.

use std::path::Path;

use ycsb_db::testing::durability::{count_readable_prefix, AckWriterBinary};
use ycsb_db::{Properties, StoreError};
use ycsb_redb::RedbStore;

const WRITER: AckWriterBinary<RedbStore> =
    AckWriterBinary::new(env!("CARGO_BIN_EXE_ycsb-redb-ack-writer"), open);

fn open(dir: &Path) -> Result<RedbStore, StoreError> {
    RedbStore::open(&Properties::new().with("redb.path", dir.display()))
}

#[test]
fn synced_inserts_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_acknowledged_inserts_survive_sigkill(dir.path(), &["sync"], 300);
}

/// With `redb.durability=none` redb promises nothing for a killed process:
/// what it does promise is a database that opens, consistent (every record
/// it still has is intact, the ones it lost form a suffix of the writes).
#[test]
fn unsynced_inserts_leave_a_consistent_database_after_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let acked = WRITER.start(dir.path(), &[]).kill_after(2_000);
    let store = WRITER.reopen(dir.path());
    let kept = count_readable_prefix(&store, &acked);
    eprintln!(
        "redb durability=none: {kept} of {} acknowledged records kept after SIGKILL",
        acked.len()
    );
}

#[test]
fn a_database_held_by_another_process_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_open_refused_while_another_process_holds(dir.path(), &[], "in use", || {
        // Nor is it destroyed under the holder.
        let destroy = Properties::new()
            .with("redb.path", dir.path().display())
            .with("redb.destroy", true);
        let err = RedbStore::open(&destroy).expect_err("destroyed a database in use");
        assert!(err.to_string().contains("is in use"), "{err}");
    });
}
