//! The engine alone: a minimal loop calling redb directly, doing the reads
//! and writes of a YCSB load and run phase, to measure what the `redb`
//! store adds on top (`cargo xtask engine-bench`).
//!
//! The phases, settings and output are shared with the other engines'
//! loops (`crates/ycsb-core/examples/support/direct_loop.rs`); this file
//! opens the database and does one read (a read transaction) and one write
//! (a write transaction, committed).
//!
//! The engine options are those of `redb/redb.properties` (redb's
//! defaults: a 1 GiB cache, every commit durable), in the same file and
//! table as the binding.
//!
//! `cargo run --release -p ycsb-redb --example redb-direct-loop -- dir=/tmp/x
//!  recordcount=100000 operationcount=100000 threadcount=2 readproportion=0.5`
//!
//! Prints one `phase=<load|run> operations=<n> seconds=<s> throughput=<ops/s>
//! errors=<n> notfound=<n>` line per phase.

use redb::{Database, ReadableDatabase, TableDefinition};

#[path = "../../ycsb-core/examples/support/direct_loop.rs"]
mod harness;

#[path = "../../ycsb-db/examples/support/engine_loop.rs"]
mod engine_loop;

use engine_loop::{copy_or_touch, opened_or_exit};

const TABLE: TableDefinition<'static, &'static [u8], &'static [u8]> = TableDefinition::new("ycsb");

struct Redb {
    db: Database,
}

impl harness::DirectEngine for Redb {
    fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String> {
        let read = || -> Result<bool, redb::Error> {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(TABLE)?;
            let Some(v) = table.get(key)? else {
                return Ok(false);
            };
            copy_or_touch(v.value(), copy_to);
            Ok(true)
        };
        read().map_err(|e| e.to_string())
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let write = || -> Result<(), redb::Error> {
            let txn = self.db.begin_write()?;
            txn.open_table(TABLE)?.insert(key, value)?;
            txn.commit()?;
            Ok(())
        };
        write().map_err(|e| e.to_string())
    }

    /// A B-tree has no flush or compaction pending: a loaded database is
    /// already settled. (redb's `compact` only returns free pages to the
    /// file system; it does not change what reads touch.)
    fn compact(&self) -> Result<(), String> {
        Ok(())
    }
}

fn main() {
    let s = harness::settings();
    let opened = std::fs::create_dir_all(&s.dir)
        .map_err(redb::Error::from)
        .and_then(|()| Ok(Database::create(s.dir.join("ycsb.redb"))?))
        .and_then(|db| {
            let txn = db.begin_write()?;
            txn.open_table(TABLE)?;
            txn.commit()?;
            Ok(Redb { db })
        });
    let engine = opened_or_exit(&s.dir, opened);
    harness::drive(&engine, &s);
}
