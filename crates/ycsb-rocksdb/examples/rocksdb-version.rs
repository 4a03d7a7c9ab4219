//! Prints the RocksDB version this build links, as the engine reports it,
//! and the build that runs (library file, assertions), to check that a
//! swapped library is really the one in use:
//!
//! ```text
//! cargo run --release -p ycsb-rocksdb --example rocksdb-version
//! ```

use ycsb_db::StoreContext;
use ycsb_db::{Properties, Store};
use ycsb_rocksdb::RocksStore;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let props = Properties::new().with("rocksdb.dbname", dir.path().display());
    let store = RocksStore::open(&StoreContext::new(&props))?;
    let info = store.engine_info();
    println!("{} {}", info.name, info.version);
    println!("{}", store.engine_build());
    Ok(())
}
