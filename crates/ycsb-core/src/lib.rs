//! YCSB's workload engine.
pub use ycsb_db as db;

pub mod generator;
pub mod measurement;
pub mod properties;
pub mod runner;
pub mod workload;
