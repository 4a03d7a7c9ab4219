//! YCSB's workload engine.
pub use ycsb_db as db;
