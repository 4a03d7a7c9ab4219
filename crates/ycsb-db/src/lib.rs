//! The contract between ycsb-rs and key-value stores.
//!
//! An engine binding depends on this crate alone. It implements [`Store`]
//! (opened once per invocation, used by every phase, shared by threads)
//! and [`StoreThread`] (one per client thread), declares its [`Property`]
//! constants, and exposes a [`StoreDescriptor`]: what programs know of the
//! store, found by name in the `ycsb-stores` registry.
//!
//! Operations exchange reusable [`Record`] and [`ScanResult`] buffers and
//! report [`Status`] values, so that a store and the workload need no
//! allocation per operation and a failing store never crashes a run.
//!
//! ```
//! use ycsb_db::{
//!     Fields, ReadOp, Record, ScanOp, ScanResult, Status, Store, StoreError, StoreThread,
//!     ThreadContext,
//! };
//!
//! /// A store that accepts everything and finds nothing.
//! struct Sink;
//! struct SinkThread;
//!
//! impl Store for Sink {
//!     fn thread(&self, _: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
//!         Ok(Box::new(SinkThread))
//!     }
//! }
//!
//! impl StoreThread for SinkThread {
//!     fn read(&mut self, _: &ReadOp<'_>, _: &mut Record) -> Status {
//!         Status::NotFound
//!     }
//!     fn scan(&mut self, _: &ScanOp<'_>, _: &mut ScanResult) -> Status {
//!         Status::Ok
//!     }
//!     fn update(&mut self, _: &str, _: &str, _: &Record) -> Status { Status::Ok }
//!     fn insert(&mut self, _: &str, _: &str, _: &Record) -> Status { Status::Ok }
//!     fn delete(&mut self, _: &str, _: &str) -> Status { Status::Ok }
//! }
//!
//! let store = Sink;
//! let mut thread = store.thread(ThreadContext::new(0, 1)).unwrap();
//! let mut out = Record::new();
//! let read = ReadOp::new("usertable", "user1", Fields::All);
//! assert_eq!(thread.read(&read, &mut out), Status::NotFound);
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

mod address;
mod batch;
pub mod codec;
mod datadir;
mod decl;
mod field;
mod files;
mod names;
mod properties;
mod provenance;
mod record;
mod request;
mod secrets;
mod status;
mod store;
mod wire;
// The crate's own unit tests use the helpers without the feature.
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use address::host_port;
pub use batch::{batch_status, Batch, UpdateMerger};
pub use datadir::{
    is_dated_log, is_log_record, Content, DataDir, DataDirError, DirLayout, DirSetting, EngineFile,
    EngineInDir, EngineLock, LockKind, Name, Refusal,
};
pub use files::{
    open_input, read_input, read_input_to_string, InputError, CONFIG_FILE_LIMIT, RESULT_FILE_LIMIT,
};
pub use names::nearest_name;
pub use properties::{
    Choice, Origin, Properties, Property, PropertyDecl, PropertyError, PropertyKind, PropertyValue,
    RawValue, ValueRange, MAX_SECONDS,
};

/// The most client threads a program asks a store for (`threadcount`,
/// `ycsb bench --threads`): more would only exhaust the machine, and a
/// store may size per-thread state by it.
pub const MAX_CLIENT_THREADS: usize = 4096;
pub use provenance::{
    assertions_of_library, imports_symbol, loaded_from, Assertions, EngineBuild, EngineLibrary,
    ASSERTIONS_WARNING, ASSERT_SYMBOL,
};
pub use record::{
    Field, Fields, Record, RecordFields, RecordTemplate, RecordView, ScanResult, ViewFields,
};
pub use request::{ReadOp, ScanOp, Visit};
pub use secrets::{is_secret, redact_argument, redact_text, redact_value, REDACTED};
pub use status::Status;
pub use store::{
    read_in_place_by_copy, Batching, DebianPackages, Durability, DurabilitySetting, EngineInfo,
    EngineReport, Gauge, GaugeKind, OutputSink, Protocol, ServerAddress, ServerClient, ServerFor,
    Store, StoreContext, StoreDescriptor, StoreError, StoreThread, ThreadContext,
};
