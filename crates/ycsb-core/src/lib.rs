//! YCSB's workload engine, faithful to Java YCSB: the CoreWorkload, its
//! generators, measurement and the runner.
//!
//! Implement [`db::Store`] and [`db::StoreThread`] for your engine (the
//! `ycsb-db` crate, re-exported here as [`db`]), then run any workload:
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::sync::Mutex;
//! use ycsb_core::db::{
//!     Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store, StoreError, StoreThread,
//!     ThreadContext,
//! };
//! use ycsb_core::Benchmark;
//!
//! /// A toy engine: one ordered map behind a mutex.
//! #[derive(Default)]
//! struct MyEngine(Mutex<BTreeMap<String, Record>>);
//!
//! struct MyThread<'a>(&'a MyEngine);
//!
//! impl Store for MyEngine {
//!     fn thread(&self, _: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
//!         Ok(Box::new(MyThread(self)))
//!     }
//! }
//!
//! impl StoreThread for MyThread<'_> {
//!     fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
//!         match self.0 .0.lock().unwrap().get(op.key) {
//!             Some(record) => {
//!                 for f in record.iter().filter(|f| op.fields.contains(f.name)) {
//!                     out.push(f.name, f.value);
//!                 }
//!                 Status::Ok
//!             }
//!             None => Status::NotFound,
//!         }
//!     }
//!     fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
//!         let records = self.0 .0.lock().unwrap();
//!         for (key, record) in records.range(op.start_key.to_string()..).take(op.count) {
//!             let row = out.push_row(key);
//!             for f in record.iter().filter(|f| op.fields.contains(f.name)) {
//!                 row.push(f.name, f.value);
//!             }
//!         }
//!         Status::Ok
//!     }
//!     fn update(&mut self, _: &str, key: &str, values: &Record) -> Status {
//!         match self.0 .0.lock().unwrap().get_mut(key) {
//!             Some(record) => {
//!                 record.merge_from(values);
//!                 Status::Ok
//!             }
//!             None => Status::NotFound,
//!         }
//!     }
//!     fn insert(&mut self, _: &str, key: &str, values: &Record) -> Status {
//!         self.0 .0.lock().unwrap().insert(key.to_string(), values.clone());
//!         Status::Ok
//!     }
//!     fn delete(&mut self, _: &str, key: &str) -> Status {
//!         self.0 .0.lock().unwrap().remove(key);
//!         Status::Ok
//!     }
//! }
//!
//! // Workload A (50 % reads, 50 % updates, zipfian keys) at a small scale.
//! let props = Properties::new()
//!     .with("recordcount", 1000)
//!     .with("operationcount", 5000)
//!     .with("readproportion", 0.5)
//!     .with("updateproportion", 0.5)
//!     .with("requestdistribution", "zipfian")
//!     .with("threadcount", 2);
//! let benchmark = Benchmark::from_properties(&props)?;
//! let engine = MyEngine::default();
//! benchmark.load(&engine)?;
//! let run = benchmark.run(&engine)?;
//! assert_eq!(run.operations, 5000);
//!
//! // Java YCSB's text report.
//! let mut text = Vec::new();
//! ycsb_core::measurement::TextExporter::new(&mut text).write_phase(&run.report)?;
//! assert!(String::from_utf8(text)?.contains("[READ], Return=OK"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Two entry points, one semantics: [`Benchmark`] runs phases on any
//! [`Store`](db::Store) (an incomplete load or a spent error budget is a
//! [`PhaseError`]), and [`Session`] is the whole invocation the `ycsb`
//! binary runs on a store with a [`StoreDescriptor`](db::StoreDescriptor):
//! every property checked against one list, the time series, HdrHistogram
//! logs, and the export written before the store closes. What a session
//! shows while it runs goes to a [`SessionObserver`] ([`Observer`] for the
//! status intervals).
//!
//! The modules: [`properties`] (Java `.properties` files), [`generator`]
//! (Java YCSB's distributions), [`workload`] (the CoreWorkload),
//! [`measurement`] (reports and exporters), [`observe`] (the time series,
//! stability and amplification a phase's report carries), [`outputs`] (the
//! rule that keeps outputs off inputs, the database and each other).

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

pub use ycsb_db as db;
/// The results model (`RunReport` and what it holds), which this crate writes.
pub use ycsb_results as results;

mod benchmark;
mod client;
mod session;
pub use benchmark::{
    properties as known_properties, property_groups, Benchmark, ConfigError, PhaseError,
};
pub use client::ClientSettings;
pub use runner::{
    parse_start_at, Observer, Phase, PhaseOutcome, RateFileError, RateLimit, RateStep, RunError,
    RunnerSettings, Silent, StartHold, StatusUpdate, StopSignal, StuckThread, StuckWorkers, Tick,
    LIMIT_FILE, LIMIT_OPS, MAX_START_DELAY, START_AT,
};
pub use session::{
    unknown_properties, Session, SessionError, SessionFailure, SessionObserver, UnknownProperty,
};

mod clock;
pub mod generator;
pub mod measurement;
pub mod observe;
pub mod outputs;
pub mod properties;
pub(crate) mod runner;
pub mod workload;

/// Not part of the API: the per-operation internals that this crate's
/// micro-benchmarks (`benches/hot_path.rs`, `examples/perf_probe.rs`) and
/// the direct-engine loops of the binding crates measure or reuse, so that
/// they time exactly the code a run executes. They may change at any time.
#[doc(hidden)]
pub mod internals {
    pub use crate::clock::{Clock, ClockSource};
    pub use crate::measurement::recorder::{Measurements, Recorder};
    pub use crate::runner::run_streams;
    pub use crate::workload::keys::{build_key_name, decimal_digits, write_20_digits, KeyOrder};
    pub use crate::workload::values::{
        build_deterministic_value, fill_random_value, random_value_chunk, ValueRng,
    };
    pub use crate::workload::{split_range, WorkloadThread};
}
