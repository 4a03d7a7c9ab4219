//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::Path;

use ycsb_db::StoreContext;
use ycsb_db::{Properties, Record, StoreError};
use ycsb_rocksdb::RocksStore;

/// Properties for a database in `dir` plus `extra` settings.
pub fn props(dir: &Path, extra: &[(&str, &str)]) -> Properties {
    Properties::new()
        .with("rocksdb.dbname", dir.display())
        .with_flags(extra)
}

/// Opens a store in `dir` with `extra` settings.
pub fn open(dir: &Path, extra: &[(&str, &str)]) -> Result<RocksStore, StoreError> {
    RocksStore::open(&StoreContext::new(&props(dir, extra)))
}

/// A record with fields `field0..fieldN` whose values are derived from the
/// key, so that a reader can check what it got.
pub fn record_for(key: &str, fields: usize, len: usize) -> Record {
    let mut r = Record::new();
    for i in 0..fields {
        let name = format!("field{i}");
        let seed = format!("{key}:{name}:");
        let value: Vec<u8> = seed.bytes().cycle().take(len).collect();
        r.push(&name, &value);
    }
    r
}
