//! The `sqlite` store: a binding to SQLite through `rusqlite`, linked to
//! the system's `libsqlite3`.
//!
//! One database is opened per invocation ([`SqliteStore::open`]); each
//! client thread opens its own connection to it (WAL mode by default, so
//! readers never wait for the writer). A workload's table is a SQLite
//! rowid table keyed by `<primary_key> TEXT PRIMARY KEY`, as YCSB-cpp's,
//! one row per record: by default (`sqlite.schema=blob`) the fields in one
//! column encoded with [`ycsb_db::codec`] as in every embedded binding,
//! updates read, merge and write back in one `BEGIN IMMEDIATE`
//! transaction; with `sqlite.schema=columns`, YCSB-cpp's and Java's JDBC
//! layout, a `TEXT` column per field and updates of their columns only.
//! Scans are `WHERE key >= ? ORDER BY key LIMIT ?`.
//!
//! Properties use YCSB-cpp's names, so its `sqlite/sqlite.properties`
//! works unchanged; see [`PROPERTIES`] and `docs/engines-sqlite.md`.
//!
//! ```no_run
//! use ycsb_db::{Properties, Record, Status, Store, ThreadContext};
//!
//! let props = Properties::new().with("sqlite.dbpath", "/tmp/ycsb-sqlite");
//! let store = ycsb_sqlite::SqliteStore::open(&props)?;
//! let mut thread = store.thread(ThreadContext::new(0, 1))?;
//! let mut record = Record::new();
//! record.push("field0", b"value");
//! assert_eq!(thread.insert("usertable", "user1", &record), Status::Ok);
//! println!("SQLite {}", store.engine_info().version);
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

mod columns;
pub mod options;
mod store;

ycsb_lazylink::bound_on_first_use!(lazy, "sqlite");

pub use options::{JournalMode, Schema, Synchronous, PROPERTIES};
pub use store::SqliteStore;

use ycsb_db::{Store, StoreContext, StoreDescriptor, StoreError};

fn open(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(SqliteStore::open(context.properties)?))
}

/// How the command line finds this store: the name `sqlite`.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "sqlite",
    "SQLite: a table per workload table, one row per record, a connection per thread",
    PROPERTIES,
    open,
)
.with_data_dir(options::DBPATH.decl(), &store::LAYOUT)
.with_durability(ycsb_db::Durability::new(
    "sqlite.synchronous",
    &["FULL", "2", "EXTRA", "3"],
    "NORMAL",
))
.with_fresh(&[("sqlite.destroy", "true")])
.with_dbbench(
    // db_bench's other engine flags have no SQLite meaning (its cache is
    // in pages or KiB, its sync is a level): set sqlite.* with -p.
    &[("--db", "sqlite.dbpath")],
    &[],
)
.with_debian(ycsb_db::DebianPackages::new(
    &["libsqlite3-dev", "pkg-config"],
    &["libsqlite3-0"],
    &[],
))
.with_batching(ycsb_db::Batching::Atomic);
