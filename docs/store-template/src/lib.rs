//! The mystore store: a template for a new ycsb-rs store
//! (docs/adding-a-store.md). Copy this directory to `crates/ycsb-<name>`,
//! rename `mystore` throughout, and add one line to the registry
//! (`crates/ycsb-stores/src/lib.rs`); `cargo xtask stores --write` then
//! writes the lists cargo needs.
//!
//! As shipped it keeps records in an ordered map in the process, with a
//! capacity, so that it keeps the whole store contract: replace the map
//! with your engine's client.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::sync::RwLock;

use ycsb_db::{
    EngineInfo, Fields, Properties, Property, PropertyDecl, ReadOp, Record, ScanOp, ScanResult,
    Status, Store, StoreContext, StoreDescriptor, StoreError, StoreThread, ThreadContext,
};

/// `mystore.capacity`: how many records the store holds.
pub const CAPACITY: Property<u64> = Property::new(
    "mystore.capacity",
    "0",
    "The most records the store holds; an insert beyond it fails (0: no limit).",
);

/// Every property the store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[CAPACITY.decl()];

/// What the registry knows of the store.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "mystore",
    "The template store: an ordered map in the process (docs/adding-a-store.md)",
    PROPERTIES,
    open,
);

fn open(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(MyStore::open(context.properties)?))
}

/// The store: records by table and key, in key order.
#[derive(Debug, Default)]
pub struct MyStore {
    records: RwLock<BTreeMap<(String, String), Record>>,
    /// 0: no limit.
    capacity: u64,
}

impl MyStore {
    /// Opens the store that `properties` describe.
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for an invalid `mystore.capacity`.
    pub fn open(properties: &Properties) -> Result<MyStore, StoreError> {
        Ok(MyStore {
            records: RwLock::default(),
            capacity: properties.get(&CAPACITY)?,
        })
    }
}

impl Store for MyStore {
    fn thread(&self, _: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(MyThread { store: self }))
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo {
            name: "mystore".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// One client thread's handle.
struct MyThread<'a> {
    store: &'a MyStore,
}

fn id(table: &str, key: &str) -> (String, String) {
    (table.to_string(), key.to_string())
}

impl StoreThread for MyThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        let Ok(records) = self.store.records.read() else {
            return Status::Error;
        };
        let Some(record) = records.get(&id(op.table, op.key)) else {
            return Status::NotFound;
        };
        for field in record.iter().filter(|f| op.fields.contains(f.name)) {
            out.push(field.name, field.value);
        }
        Status::Ok
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        let Ok(records) = self.store.records.read() else {
            return Status::Error;
        };
        let rows = records
            .range(id(op.table, op.start_key)..)
            .take_while(|((t, _), _)| t == op.table)
            .take(op.count);
        for ((_, key), record) in rows {
            let row = out.push_row(key);
            for field in record.iter().filter(|f| op.fields.contains(f.name)) {
                row.push(field.name, field.value);
            }
        }
        Status::Ok
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        let Ok(mut records) = self.store.records.write() else {
            return Status::Error;
        };
        match records.get_mut(&id(table, key)) {
            Some(record) => {
                record.merge_from(values);
                Status::Ok
            }
            None => Status::NotFound,
        }
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        let Ok(mut records) = self.store.records.write() else {
            return Status::Error;
        };
        let id = id(table, key);
        let full = self.store.capacity != 0 && records.len() as u64 >= self.store.capacity;
        if full && !records.contains_key(&id) {
            return Status::Error;
        }
        records.insert(id, values.clone());
        Status::Ok
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        let Ok(mut records) = self.store.records.write() else {
            return Status::Error;
        };
        match records.remove(&id(table, key)) {
            Some(_) => Status::Ok,
            None => Status::NotFound,
        }
    }
}
