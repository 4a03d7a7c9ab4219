//! The `leveldb` store: a binding to LevelDB through its C API.
//!
//! One database is opened per phase ([`LevelStore::open`]) and shared by
//! all client threads; each thread borrows it with reusable buffers. A
//! record is one LevelDB entry: the key maps to its fields encoded with
//! [`ycsb_db::codec`] (`leveldb.format=single`, the default), or one entry
//! per field keyed `<key>` NUL `<field>` (`leveldb.format=row`, YCSB-cpp's
//! row layout with a separator that keeps scans in key order).
//! Updates in the single format read the stored record, merge the changed
//! fields and write it back; scans use an ordered iterator from the start
//! key. The table name is ignored, as in YCSB-cpp.
//!
//! Properties use YCSB-cpp's names, so its `leveldb/leveldb.properties`
//! works unchanged; see [`PROPERTIES`] and `docs/engines-leveldb.md`, which
//! also explains how to link a LevelDB of your own.
//!
//! ```no_run
//! use ycsb_db::{Properties, Record, Status, Store, ThreadContext};
//!
//! let props = Properties::new().with("leveldb.dbname", "/tmp/ycsb-leveldb");
//! let store = ycsb_leveldb::LevelStore::open(&props)?;
//! let mut thread = store.thread(ThreadContext::new(0, 1))?;
//! let mut record = Record::new();
//! record.push("field0", b"value");
//! assert_eq!(thread.insert("usertable", "user1", &record), Status::Ok);
//! println!("LevelDB {}", store.engine_info().version);
//! # Ok::<(), ycsb_db::StoreError>(())
//! ```

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

mod ffi;
pub mod options;
mod store;

ycsb_lazylink::bound_on_first_use!(lazy, "leveldb");

pub use options::{Compression, Format, PROPERTIES};
pub use store::LevelStore;

use ycsb_db::StoreContext;
use ycsb_db::{Store, StoreDescriptor, StoreError};

fn open(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(LevelStore::open(context.properties)?))
}

/// How the command line finds this store: the name `leveldb`.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "leveldb",
    "LevelDB through its C API: one shared database, one entry per record",
    PROPERTIES,
    open,
)
.with_data_dir(options::DBNAME.decl(), &store::LAYOUT)
.with_durability(ycsb_db::Durability::new("leveldb.sync", &["true"], "false"))
.with_fresh(&[("leveldb.destroy", "true")])
.with_batching(ycsb_db::Batching::Atomic)
.with_dbbench(
    &[
        ("--db", "leveldb.dbname"),
        ("--cache_size", "leveldb.cache_size"),
        ("--bloom_bits", "leveldb.filter_bits"),
        ("--write_buffer_size", "leveldb.write_buffer_size"),
        ("--compression_type", "leveldb.compression"),
        ("--sync", "leveldb.sync"),
        ("--target_file_size_base", "leveldb.max_file_size"),
        ("--open_files", "leveldb.max_open_files"),
        ("--block_size", "leveldb.block_size"),
    ],
    &[],
)
.with_debian(ycsb_db::DebianPackages::new(
    &["libleveldb-dev", "libsnappy-dev"],
    &["libleveldb1d", "libsnappy1v5"],
    &[],
));
