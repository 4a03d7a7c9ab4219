//! The `wiredtiger` store: a binding to WiredTiger through its C API.
//!
//! One connection is opened per process ([`WiredTigerStore::open`]) and
//! shared by all client threads; each thread has its own WiredTiger
//! session and cursor (sessions are single-threaded). A record is one
//! entry of the table `table:ycsbc` (YCSB-cpp's), a B-tree or, with
//! `wiredtiger.type=lsm`, an LSM tree: the key maps to its fields encoded
//! with [`ycsb_db::codec`]. Updates read the stored record, merge the
//! changed fields and write it back; scans walk a cursor from the start
//! key, in key order. The table name is ignored, as in YCSB-cpp.
//!
//! Properties use YCSB-cpp's names and defaults, so its
//! `wiredtiger/wiredtiger.properties` works unchanged; see [`PROPERTIES`]
//! and `docs/engines-wiredtiger.md`, which also explains how to link a
//! WiredTiger of your own.
//!
//! ```no_run
//! use ycsb_db::{Properties, Record, Status, Store, ThreadContext};
//!
//! let props = Properties::new().with("wiredtiger.home", "/tmp/ycsb-wiredtiger");
//! let store = ycsb_wiredtiger::WiredTigerStore::open(&props)?;
//! let mut thread = store.thread(ThreadContext::new(0, 1))?;
//! let mut record = Record::new();
//! record.push("field0", b"value");
//! assert_eq!(thread.insert("usertable", "user1", &record), Status::Ok);
//! println!("WiredTiger {}", store.engine_info().version);
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

ycsb_lazylink::bound_on_first_use!(lazy, "wiredtiger");
mod sys;

pub use options::{Bytes, Compressor, Format, Statistics, TableType, PROPERTIES};
pub use store::WiredTigerStore;

use ycsb_db::StoreContext;
use ycsb_db::{Store, StoreDescriptor, StoreError};

fn open(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(WiredTigerStore::open(context.properties)?))
}

/// How the command line finds this store: the name `wiredtiger`.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "wiredtiger",
    "WiredTiger through its C API: one connection, a session and cursor per thread, a B-tree or LSM table",
    PROPERTIES,
    open,
)
.with_data_dir(options::HOME.decl(), &store::LAYOUT)
.with_durability(ycsb_db::Durability::new("wiredtiger.sync", &["true"], "false"))
.with_fresh(&[("wiredtiger.destroy", "true")])
.with_dbbench(
    &[
        ("--db", "wiredtiger.home"),
        ("--cache_size", "wiredtiger.cache_size"),
        ("--compression_type", "wiredtiger.blk_mgr.compressor"),
        ("--sync", "wiredtiger.sync"),
        ("--block_size", "wiredtiger.blk_mgr.btree.leaf_page_max"),
        ("--bloom_bits", "wiredtiger.blk_mgr.bloom_bit_count"),
        ("--write_buffer_size", "wiredtiger.blk_mgr.chunk_size"),
    ],
    &[],
)
.with_debian(ycsb_db::DebianPackages::new(
    &["libwiredtiger-dev"],
    &["libwiredtiger0"],
    &[],
))
.with_batching(ycsb_db::Batching::Atomic);
