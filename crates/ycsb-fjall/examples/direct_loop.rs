//! The engine alone: a minimal loop calling fjall directly, doing the
//! reads and writes of a YCSB load and run phase, to measure what the
//! `fjall` store adds on top (`cargo xtask engine-bench`).
//!
//! The phases, settings and output are shared with the other engines'
//! loops (`crates/ycsb-core/examples/support/direct_loop.rs`); this file
//! opens the database and does one read and one write.
//!
//! The engine options are those of `fjall/fjall.properties` (fjall's
//! defaults): the same keyspace name as the binding, default options.
//!
//! `cargo run --release -p ycsb-fjall --example fjall-direct-loop -- dir=/tmp/x
//!  recordcount=100000 operationcount=100000 threadcount=2 readproportion=0.5`
//!
//! Prints one `phase=<load|run> operations=<n> seconds=<s> throughput=<ops/s>
//! errors=<n> notfound=<n>` line per phase.

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};

#[path = "../../ycsb-core/examples/support/direct_loop.rs"]
mod harness;

#[path = "../../ycsb-db/examples/support/engine_loop.rs"]
mod engine_loop;

use engine_loop::{copy_or_touch, opened_or_exit};

struct Fjall {
    db: Database,
    keyspace: Keyspace,
}

impl harness::DirectEngine for Fjall {
    fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String> {
        match self.keyspace.get(key) {
            Ok(Some(v)) => {
                copy_or_touch(&v, copy_to);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(format!("{e:?}")),
        }
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.keyspace
            .insert(key, value)
            .map_err(|e| format!("{e:?}"))
    }

    fn compact(&self) -> Result<(), String> {
        self.keyspace
            .rotate_memtable_and_wait()
            .and_then(|()| self.keyspace.major_compact())
            .and_then(|()| self.db.persist(PersistMode::SyncAll))
            .map_err(|e| format!("{e:?}"))
    }
}

fn main() {
    let s = harness::settings();
    let opened = Database::builder(&s.dir).open().and_then(|db| {
        let keyspace = db.keyspace("ycsb", KeyspaceCreateOptions::default)?;
        Ok(Fjall { db, keyspace })
    });
    let engine = opened_or_exit(&s.dir, opened.map_err(|e| format!("{e:?}")));
    harness::drive(&engine, &s);
    // As the store's close: everything acknowledged reaches the disk.
    if let Err(e) = engine.db.persist(PersistMode::SyncAll) {
        eprintln!("direct_loop: syncing {}: {e:?}", s.dir.display());
        std::process::exit(1);
    }
}
