//! Durability after SIGKILL and locking against another process, with a
//! real child process (`src/bin/ack_writer.rs`) writing to the database.

use std::path::Path;

use ycsb_db::testing::durability::AckWriterBinary;
use ycsb_db::{Properties, StoreError};
use ycsb_leveldb::LevelStore;

const WRITER: AckWriterBinary<LevelStore> =
    AckWriterBinary::new(env!("CARGO_BIN_EXE_ycsb-leveldb-ack-writer"), open);

fn open(dir: &Path) -> Result<LevelStore, StoreError> {
    LevelStore::open(&Properties::new().with("leveldb.dbname", dir.display()))
}

#[test]
fn synced_inserts_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_acknowledged_inserts_survive_sigkill(dir.path(), &["sync"], 300);
}

#[test]
fn unsynced_inserts_survive_sigkill_of_the_process() {
    // Without sync, LevelDB still hands each write to the kernel before
    // acknowledging it, so a killed process (not a crashed machine) loses
    // nothing; this is the YCSB-cpp default setting.
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_acknowledged_inserts_survive_sigkill(dir.path(), &[], 20_000);
}

#[test]
fn a_database_locked_by_another_process_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    WRITER.check_open_refused_while_another_process_holds(dir.path(), &[], "in use", || {});
}
