//! The `rocksdb` store: RocksDB through the `rocksdb` crate, compatible
//! with YCSB-cpp's `rocksdb` binding and its property files.
//!
//! Each record is one engine key (the record key) whose value holds every
//! field in [`ycsb_db::codec`]'s encoding. The table name is ignored, as in
//! YCSB-cpp: all tables share one keyspace. The database is opened once per
//! phase and shared by all client threads; each thread keeps its own read
//! and write options and encode buffers, so an operation allocates nothing
//! in the binding once the buffers have grown.
//!
//! Updates either read, merge and write the record (the default) or, with
//! `rocksdb.mergeupdate=true`, hand the changed fields to a RocksDB merge
//! operator that merges them at read and compaction time.
//!
//! See `docs/engines-rocksdb.md` for the properties, the gauges and how to
//! link another RocksDB build.

#![deny(missing_docs)]
// Only the programs print or exit; a library reports through its return
// values, and a bug is a typed error, not a panic (tests may do both).
#![cfg_attr(
    not(test),
    deny(
        clippy::print_stdout,
        clippy::print_stderr,
        clippy::exit,
        clippy::unwrap_used
    )
)]

pub mod config;
mod engine;
mod log_reserve;
mod thread;

ycsb_lazylink::bound_on_first_use!(lazy, "rocksdb");

/// Loads librocksdb if it is bound lazily and not loaded yet.
///
/// # Errors
///
/// [`StoreError::Open`] naming the library when it cannot be loaded.
pub fn load_engine() -> Result<(), StoreError> {
    lazy::load().map_err(|e| StoreError::open("rocksdb", e))
}

use std::path::Path;

use rocksdb::DB;
use ycsb_db::StoreContext;
use ycsb_db::{
    Assertions, EngineBuild, EngineInfo, EngineReport, Gauge, Store, StoreDescriptor, StoreError,
    StoreThread, ThreadContext,
};

pub use config::{
    CompactionPri, Compression, EngineOptions, Format, RocksConfig, Tuning, PROPERTIES,
};

/// How the command line finds this store.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "rocksdb",
    "RocksDB, embedded (YCSB-cpp compatible properties)",
    PROPERTIES,
    open_boxed,
)
.with_aliases(&["site.ycsb.db.rocksdb.RocksDBClient"])
.with_data_dir(config::DBNAME.decl(), &engine::LAYOUT)
.with_durability(ycsb_db::Durability::new("rocksdb.sync", &["true"], "false"))
.with_fresh(&[("rocksdb.destroy", "true")])
.with_batching(ycsb_db::Batching::Atomic)
.with_dbbench(
    &[
        ("--db", "rocksdb.dbname"),
        ("--cache_size", "rocksdb.cache_size"),
        ("--bloom_bits", "rocksdb.bloom_bits"),
        ("--write_buffer_size", "rocksdb.write_buffer_size"),
        ("--compression_type", "rocksdb.compression"),
        ("--sync", "rocksdb.sync"),
        ("--disable_wal", "rocksdb.disable_wal"),
        ("--max_background_jobs", "rocksdb.max_background_jobs"),
        (
            "--max_write_buffer_number",
            "rocksdb.max_write_buffer_number",
        ),
        ("--target_file_size_base", "rocksdb.target_file_size_base"),
        (
            "--max_bytes_for_level_base",
            "rocksdb.max_bytes_for_level_base",
        ),
        ("--open_files", "rocksdb.max_open_files"),
        (
            "--level0_file_num_compaction_trigger",
            "rocksdb.level0_file_num_compaction_trigger",
        ),
        (
            "--level0_slowdown_writes_trigger",
            "rocksdb.level0_slowdown_writes_trigger",
        ),
        (
            "--level0_stop_writes_trigger",
            "rocksdb.level0_stop_writes_trigger",
        ),
        ("--statistics", "rocksdb.statistics"),
        ("--mmap_read", "rocksdb.allow_mmap_reads"),
        ("--mmap_write", "rocksdb.allow_mmap_writes"),
        ("--use_direct_reads", "rocksdb.use_direct_reads"),
        ("--perf_level", "rocksdb.perf_level"),
    ],
    // db_bench's values, byte for byte: the value stored bare, without the
    // record framing (which also costs RocksDB more in WAL checksums), and
    // read back under the bench's field name (`v`); and db_bench's own
    // option defaults, so that its command line opens the database
    // db_bench opens (the same OPTIONS file).
    &[
        ("rocksdb.format", "raw"),
        ("rocksdb.raw_field", "v"),
        ("rocksdb.dbbench_defaults", "true"),
    ],
)
.with_debian(ycsb_db::DebianPackages::new(
    &["librocksdb-dev", "libsnappy-dev", "clang", "libclang-dev"],
    &["librocksdb7.8", "libsnappy1v5"],
    &["rocksdb-tools"],
));

fn open_boxed(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(RocksStore::open(context)?))
}

/// A RocksDB database opened for a benchmark phase.
pub struct RocksStore {
    // Dropped (closed) by hand in `Drop`, before the options and caches it
    // was opened with, and not at all once a write has failed with an I/O
    // error (see `write_fence`).
    db: std::mem::ManuallyDrop<DB>,
    /// Raised by the first write that fails with an I/O error (a full
    /// disk): from then on no thread writes and the database is not closed.
    /// RocksDB before 9.1 built with assertions (Debian's 7.8.3) aborts the
    /// process when a write file is used again after a failed write
    /// (facebook/rocksdb#12448); fencing writes keeps the process alive to
    /// report what happened. Threads only read it until it is raised.
    write_fence: std::sync::atomic::AtomicBool,
    /// Blocks kept past the end of the info LOG (see `log_reserve`).
    log_reserve: log_reserve::LogReserve,
    options: rocksdb::Options,
    config: RocksConfig,
    engine: EngineInfo,
    /// Held until the database is closed, after `db` in `Drop` (or for the
    /// rest of the process when a failed write fenced it).
    dir: std::mem::ManuallyDrop<ycsb_db::DataDir>,
}

impl Drop for RocksStore {
    fn drop(&mut self) {
        if !self.write_fence.load(std::sync::atomic::Ordering::Acquire) {
            // SAFETY: `db` is dropped exactly once, here, and never used
            // after: `self` is being dropped.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.db) };
            self.log_reserve.release();
            // SAFETY: as `db`: dropped once, here, after the database
            // closed; with the handle left open the lock stays with it.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.dir) };
        }
        // Otherwise the handle is left open on purpose (see `write_fence`):
        // the process exits soon and the OS releases its files.
    }
}

impl std::fmt::Debug for RocksStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksStore")
            .field("config", &self.config)
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

impl RocksStore {
    /// Opens (creating if missing) the database the `rocksdb.*` properties
    /// describe.
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for an invalid or missing property and
    /// [`StoreError::Open`] with RocksDB's message when the engine cannot
    /// open the database (directory not writable, locked by another
    /// process, corrupt OPTIONS file).
    pub fn open(context: &StoreContext<'_>) -> Result<Self, StoreError> {
        load_engine()?;
        let config = RocksConfig::from_properties(context.properties)?;
        let origin = context
            .properties
            .raw(config::DBNAME.decl())
            .map(|raw| raw.origin.to_string())
            .unwrap_or_default();
        Self::open_at(config, &origin)
    }

    /// Opens the database with already checked settings.
    ///
    /// # Errors
    ///
    /// As [`RocksStore::open`], without the property errors.
    pub fn open_config(config: RocksConfig) -> Result<Self, StoreError> {
        Self::open_at(config, "set by the program")
    }

    fn open_at(config: RocksConfig, origin: &str) -> Result<Self, StoreError> {
        load_engine()?;
        let opened = engine::open(&config, origin)?;
        let engine = EngineInfo {
            name: "RocksDB".to_string(),
            version: engine::linked_version(&config.path).unwrap_or_else(|| "unknown".into()),
        };
        let log_reserve = log_reserve::LogReserve::new(&config.path);
        log_reserve.top_up();
        Ok(Self {
            db: std::mem::ManuallyDrop::new(opened.db),
            write_fence: std::sync::atomic::AtomicBool::new(false),
            log_reserve,
            options: opened.options,
            config,
            engine,
            dir: std::mem::ManuallyDrop::new(opened.dir),
        })
    }

    /// The settings the store was opened with.
    pub fn config(&self) -> &RocksConfig {
        &self.config
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.config.path
    }

    /// The underlying database, for tools and tests that need the engine
    /// itself (for example to flush memtables).
    pub fn db(&self) -> &DB {
        &self.db
    }
}

extern "C" {
    // Only its address is taken: it says which loaded file holds RocksDB.
    fn rocksdb_options_create() -> *mut std::ffi::c_void;
}

/// How the RocksDB linked into this program was built: its shared library
/// and whether that imports `__assert_fail`, or, linked statically, what
/// the build script knew (`build.rs`).
pub fn linked_build() -> EngineBuild {
    let static_assertions = match env!("YCSB_ROCKSDB_STATIC_ASSERTIONS") {
        "enabled" => Assertions::Enabled,
        "disabled" => Assertions::Disabled,
        _ => Assertions::Unknown,
    };
    let code =
        lazy::address(c"rocksdb_options_create").unwrap_or(rocksdb_options_create as *const ());
    EngineBuild::of_code(code, static_assertions)
}

impl Store for RocksStore {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(thread::RocksThread::new(
            &self.db,
            &self.write_fence,
            &self.log_reserve,
            &self.config,
        )))
    }

    fn gauges(&self, out: &mut Vec<Gauge>) {
        engine::gauges(&self.db, out);
    }

    fn engine_info(&self) -> EngineInfo {
        self.engine.clone()
    }

    fn engine_build(&self) -> EngineBuild {
        linked_build()
    }

    fn final_reports(&self) -> Vec<EngineReport> {
        let mut reports = Vec::new();
        if let Ok(Some(text)) = self.db.property_value("rocksdb.stats") {
            reports.push(EngineReport {
                name: "rocksdb.stats".into(),
                text,
            });
        }
        if self.config.statistics {
            if let Some(text) = self.options.get_statistics() {
                reports.push(EngineReport {
                    name: "rocksdb.statistics".into(),
                    text,
                });
            }
        }
        if let Some(text) = engine::latest_options_file(&self.config.path)
            .and_then(|p| std::fs::read_to_string(p).ok())
        {
            reports.push(EngineReport {
                name: "rocksdb.OPTIONS".into(),
                text,
            });
        }
        reports
    }

    fn close(&self) -> Result<(), StoreError> {
        if self.write_fence.load(std::sync::atomic::Ordering::Acquire) {
            return Err(StoreError::Other(format!(
                "rocksdb at {} left unclosed after a failed write (an I/O error such as a full disk); what was acknowledged before it is in the write-ahead log",
                self.config.path.display()
            )));
        }
        // Without a WAL the memtables hold the only copy of recent writes;
        // with one, syncing it makes every acknowledged write durable.
        let result = if self.config.disable_wal {
            self.db.flush()
        } else {
            self.db.flush_wal(true)
        };
        result.map_err(|e| StoreError::Open {
            store: "rocksdb".into(),
            message: format!("closing {}: {e}", self.config.path.display()),
        })
    }
}
