//! The `lmdb` store: a binding to LMDB (Lightning Memory-Mapped Database)
//! through its C API, linked from the system's `liblmdb`.
//!
//! One environment is opened per invocation ([`LmdbStore::open`]) and
//! shared by all client threads. A record is one entry of the
//! environment's unnamed database: the key maps to its fields encoded with
//! [`ycsb_db::codec`], as in every embedded binding. Updates read, merge
//! and write back in one write transaction (LMDB has no merge); reads take
//! the fields straight from the memory map; scans walk a cursor from the
//! start key in key order. The table name is ignored, as in YCSB-cpp.
//!
//! Properties use YCSB-cpp's names, so its `lmdb/lmdb.properties` works
//! unchanged; see [`PROPERTIES`] and `docs/engines-lmdb.md`, which also
//! explains how to link an LMDB of your own.
//!
//! ```no_run
//! use ycsb_db::{Properties, Record, Status, Store, ThreadContext};
//!
//! let props = Properties::new().with("lmdb.dbpath", "/tmp/ycsb-lmdb");
//! let store = ycsb_lmdb::LmdbStore::open(&props)?;
//! let mut thread = store.thread(ThreadContext::new(0, 1))?;
//! let mut record = Record::new();
//! record.push("field0", b"value");
//! assert_eq!(thread.insert("usertable", "user1", &record), Status::Ok);
//! println!("LMDB {}", store.engine_info().version);
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

ycsb_lazylink::bound_on_first_use!(lazy, "lmdb");

pub use options::PROPERTIES;
pub use store::LmdbStore;

use ycsb_db::{Store, StoreContext, StoreDescriptor, StoreError};

fn open(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(LmdbStore::open(context.properties)?))
}

/// How the command line finds this store: the name `lmdb`.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "lmdb",
    "LMDB through its C API: one shared memory-mapped B-tree, one entry per record",
    PROPERTIES,
    open,
)
.with_data_dir(options::DBPATH.decl(), &store::LAYOUT)
.with_durability(ycsb_db::Durability::new("lmdb.nosync", &["false"], "true"))
.with_fresh(&[("lmdb.destroy", "true")])
.with_dbbench(
    &[("--db", "lmdb.dbpath"), ("--mmap_write", "lmdb.writemap")],
    // db_bench writes without syncing unless --sync; LMDB syncs every
    // commit unless told not to (its switch is the inverse of --sync).
    &[("lmdb.nosync", "true")],
)
.with_debian(ycsb_db::DebianPackages::new(
    &["liblmdb-dev"],
    &["liblmdb0"],
    &[],
))
.with_batching(ycsb_db::Batching::Atomic);
