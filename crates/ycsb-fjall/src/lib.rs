//! The `fjall` store: fjall, the log-structured (LSM) key-value engine
//! written in Rust, embedded.
//!
//! One database is opened per invocation ([`FjallStore::open`]) and shared
//! by all client threads; all records live in one keyspace (the table name
//! is ignored, as in the other embedded bindings). A record is one entry:
//! the key maps to its fields encoded with [`ycsb_db::codec`], the encoding
//! every embedded binding shares. fjall has no merge operator, so an update
//! reads the record, merges the changed fields and writes it back; scans
//! read fjall's ordered range from the start key.
//!
//! See [`PROPERTIES`] and `docs/engines-fjall.md` (options, gauges, and how
//! to build against another fjall).
//!
//! ```no_run
//! use ycsb_db::{Properties, Record, Status, Store, ThreadContext};
//!
//! let props = Properties::new().with("fjall.dir", "/tmp/ycsb-fjall");
//! let store = ycsb_fjall::FjallStore::open(&props)?;
//! let mut thread = store.thread(ThreadContext::new(0, 1))?;
//! let mut record = Record::new();
//! record.push("field0", b"value");
//! assert_eq!(thread.insert("usertable", "user1", &record), Status::Ok);
//! println!("fjall {}", store.engine_info().version);
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

pub use options::{Compression, PROPERTIES};
pub use store::FjallStore;

use ycsb_db::{Store, StoreContext, StoreDescriptor, StoreError};

/// The fjall version this crate is built with (the exact version its
/// Cargo.toml pins; a test checks it against Cargo.lock). Rust crates have
/// no run-time version query, and results must name the engine exactly.
pub const ENGINE_VERSION: &str = "3.1.13";

fn open(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(FjallStore::open(context.properties)?))
}

/// How the command line finds this store: the name `fjall`.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "fjall",
    "fjall (LSM tree in Rust), embedded: one keyspace, one entry per record",
    PROPERTIES,
    open,
)
.with_data_dir(options::DIR.decl(), &store::LAYOUT)
.with_durability(ycsb_db::Durability::new("fjall.fsync", &["true"], "false"))
.with_fresh(&[("fjall.destroy", "true")])
.with_dbbench(
    &[
        ("--db", "fjall.dir"),
        ("--cache_size", "fjall.cache_size"),
        ("--write_buffer_size", "fjall.memtable_size"),
        ("--compression_type", "fjall.compression"),
        ("--sync", "fjall.fsync"),
    ],
    &[],
)
.with_batching(ycsb_db::Batching::Atomic);
