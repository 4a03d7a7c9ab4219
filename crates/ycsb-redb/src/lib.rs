//! The `redb` store: redb, the copy-on-write B-tree key-value engine
//! written in Rust, embedded.
//!
//! One database file (`ycsb.redb` in the `redb.path` directory) is opened
//! per invocation ([`RedbStore::open`]) and shared by all client threads;
//! all records live in one table (the table name of operations is ignored,
//! as in the other embedded bindings). A record is one entry: the key maps
//! to its fields encoded with [`ycsb_db::codec`], the encoding every
//! embedded binding shares. Each write is one write transaction (redb
//! runs one at a time); an update reads, merges and writes the record in
//! that transaction, redb having no merge operator. Reads and scans each
//! use a read transaction (a snapshot; they never wait for writers), scans
//! in key order from the start key.
//!
//! See [`PROPERTIES`] and `docs/engines-redb.md`.
//!
//! ```no_run
//! use ycsb_db::{Properties, Record, Status, Store, ThreadContext};
//!
//! let props = Properties::new().with("redb.path", "/tmp/ycsb-redb");
//! let store = ycsb_redb::RedbStore::open(&props)?;
//! let mut thread = store.thread(ThreadContext::new(0, 1))?;
//! let mut record = Record::new();
//! record.push("field0", b"value");
//! assert_eq!(thread.insert("usertable", "user1", &record), Status::Ok);
//! println!("redb {}", store.engine_info().version);
//! # Ok::<(), ycsb_db::StoreError>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]
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

pub mod options;
mod store;

pub use options::{Durability, PROPERTIES};
pub use store::{RedbStore, FILE_NAME};

use ycsb_db::{Store, StoreContext, StoreDescriptor, StoreError};

/// The redb version this crate is built with (the exact version its
/// Cargo.toml pins; a test checks it against Cargo.lock). Rust crates have
/// no run-time version query, and results must name the engine exactly.
pub const ENGINE_VERSION: &str = "4.6.0";

fn open(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(RedbStore::open(context.properties)?))
}

/// How the command line finds this store: the name `redb`.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "redb",
    "redb (B-tree in Rust), embedded: one table, one entry per record",
    PROPERTIES,
    open,
)
.with_data_dir(options::PATH.decl(), &store::LAYOUT)
.with_durability(ycsb_db::Durability::new(
    "redb.durability",
    &["immediate"],
    "none",
))
.with_fresh(&[("redb.destroy", "true")])
.with_dbbench(
    &[("--db", "redb.path"), ("--cache_size", "redb.cache_size")],
    &[],
)
.with_batching(ycsb_db::Batching::Atomic);
