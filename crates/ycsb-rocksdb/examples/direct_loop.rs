//! The engine alone: a minimal loop calling the `rocksdb` crate directly,
//! doing the reads and writes of a YCSB load and run phase, to measure what
//! the `rocksdb` store adds on top (`cargo xtask engine-bench`).
//!
//! The phases, settings and output are shared with the LevelDB loop
//! (`crates/ycsb-core/examples/support/direct_loop.rs`); this file opens
//! the database and does one read and one write.
//!
//! The engine options are those of `rocksdb/rocksdb.properties` (YCSB-cpp's
//! values), written out below.
//!
//! `cargo run --release -p ycsb-rocksdb --example rocksdb-direct-loop -- dir=/tmp/x
//!  recordcount=100000 operationcount=100000 threadcount=2 readproportion=0.5`
//!
//! Prints one `phase=<load|run> operations=<n> seconds=<s> throughput=<ops/s>
//! errors=<n> notfound=<n>` line per phase.

use rocksdb::{BlockBasedOptions, Cache, DBCompressionType, Options, WriteOptions, DB};

#[path = "../../ycsb-core/examples/support/direct_loop.rs"]
mod harness;

#[path = "../../ycsb-db/examples/support/engine_loop.rs"]
mod engine_loop;

use engine_loop::{copy_or_keep, opened_or_exit};

/// `rocksdb/rocksdb.properties`, as the binding applies it.
fn options() -> Result<Options, rocksdb::Error> {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::Snappy);
    o.set_max_background_jobs(2);
    o.set_target_file_size_base(67_108_864);
    o.set_target_file_size_multiplier(1);
    o.set_max_bytes_for_level_base(268_435_456);
    o.set_write_buffer_size(67_108_864);
    o.set_max_write_buffer_number(2);
    o.set_max_open_files(-1);
    o.set_use_direct_io_for_flush_and_compaction(false);
    o.set_use_direct_reads(false);
    o.set_allow_mmap_writes(false);
    o.set_allow_mmap_reads(false);
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(&Cache::new_lru_cache(8_388_608)?);
    o.set_block_based_table_factory(&table);
    Ok(o)
}

/// The database and the write options every write uses.
struct Rocks {
    db: DB,
    write: WriteOptions,
}

impl harness::DirectEngine for Rocks {
    fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String> {
        match self.db.get_pinned(key) {
            Ok(Some(v)) => {
                copy_or_keep(&v, copy_to);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(e.into_string()),
        }
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.db
            .put_opt(key, value, &self.write)
            .map_err(|e| e.into_string())
    }

    /// The binding's default `rocksdb.perf_level=1`: RocksDB's thread-local
    /// perf context off (its default for a new thread counts on every
    /// operation).
    fn thread_start(&self) {
        rocksdb::perf::set_perf_stats(rocksdb::perf::PerfStatsLevel::Disable);
    }

    fn compact(&self) -> Result<(), String> {
        // Flushes the memtable first, then compacts every level.
        self.db.compact_range(None::<&[u8]>, None::<&[u8]>);
        Ok(())
    }
}

fn main() {
    let s = harness::settings();
    let db = opened_or_exit(&s.dir, options().and_then(|o| DB::open(&o, &s.dir)));
    let engine = Rocks {
        db,
        write: WriteOptions::default(),
    };
    harness::drive(&engine, &s);
}
