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

use std::hint::black_box;

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};

#[path = "../../ycsb-core/examples/support/direct_loop.rs"]
mod harness;

struct Fjall {
    db: Database,
    keyspace: Keyspace,
}

impl harness::DirectEngine for Fjall {
    fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String> {
        match self.keyspace.get(key) {
            Ok(Some(v)) => {
                match copy_to {
                    Some(out) => {
                        out.clear();
                        out.extend_from_slice(&v);
                    }
                    None => {
                        read_value(&v);
                    }
                }
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

/// Reads a value as any reader of it would touch it: one load from each
/// 64-byte cache line. `black_box` of the slice alone never reads its
/// bytes, and an engine that hands out its own memory (LMDB's map, a
/// cached page) need not have read them either; the loop's reads then cost
/// no memory traffic for the value where ycsb's, which check every field's
/// framing, miss the cache on each line (LMDB C: 1.4 more last-level misses
/// a read under cachegrind's simulation). The per-field work itself stays
/// ycsb's own.
fn read_value(bytes: &[u8]) {
    let mut seen = 0u8;
    for line in bytes.chunks(64) {
        seen ^= line[0];
    }
    black_box(seen);
}

fn main() {
    let s = harness::settings();
    let opened = Database::builder(&s.dir).open().and_then(|db| {
        let keyspace = db.keyspace("ycsb", KeyspaceCreateOptions::default)?;
        Ok(Fjall { db, keyspace })
    });
    let engine = match opened {
        Ok(engine) => engine,
        Err(e) => {
            eprintln!("direct_loop: opening {}: {e:?}", s.dir.display());
            std::process::exit(1);
        }
    };
    harness::drive(&engine, &s);
    // As the store's close: everything acknowledged reaches the disk.
    if let Err(e) = engine.db.persist(PersistMode::SyncAll) {
        eprintln!("direct_loop: syncing {}: {e:?}", s.dir.display());
        std::process::exit(1);
    }
}
