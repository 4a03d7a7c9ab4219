//! The `memory` store: a concurrent ordered map in the client's own
//! process.
//!
//! Tables are ordered maps from key to record, so scans return records in
//! key order as a real engine's would. It is meant for tests of the client
//! and for a load and a run in one process without any server; a record is
//! lost when the process ends.
//!
//! Semantics, as the engine bindings of Java YCSB: `insert` writes the
//! whole record (replacing one already there), `update` merges the given
//! fields into the stored record and answers `NOT_FOUND` for a missing key,
//! `read` returns the selected fields that exist, `delete` answers
//! `NOT_FOUND` for a missing key, and `scan` returns up to `count` records
//! from the first key at or after the start key.
//!
//! # Design
//!
//! Each table is a [`crossbeam_skiplist::SkipMap`] from key to a
//! `Mutex`-guarded record. The skip list is lock-free: a scan walking a
//! hundred records never blocks inserts, which a `RwLock<BTreeMap>` would
//! (and key-sharded maps would need a merge for every scan). The per-record
//! mutex makes an update's read-merge-write atomic, so concurrent updates of
//! different fields of one record all survive; it is held only to copy
//! fields. An update that keeps a field's length writes the value in place
//! without allocating. The table map is found through a small per-thread
//! cache, so an operation takes no lock but its record's.
//!
//! # Sharing between phases
//!
//! The runner opens a store once per phase. So that a run phase sees the
//! records its load phase wrote in the same process, [`DESCRIPTOR`] opens a
//! process-wide instance named by `memory.instance` (`default` unless set;
//! an empty name opens a fresh private store). Library users who want their
//! own store create one with [`MemoryStore::new`] and clone it (clones
//! share the data).
//!
//! ```
//! use ycsb_db::{Fields, Record, ScanResult, Status, Store, ThreadContext};
//! use ycsb_memory::MemoryStore;
//!
//! let store = MemoryStore::new();
//! let mut thread = store.thread(ThreadContext::new(0, 1))?;
//! let mut values = Record::new();
//! values.push("field0", b"a");
//! values.push("field1", b"b");
//! assert_eq!(thread.insert("usertable", "user2", &values), Status::Ok);
//! assert_eq!(thread.insert("usertable", "user1", &values), Status::Ok);
//!
//! let mut change = Record::new();
//! change.push("field1", b"B");
//! assert_eq!(thread.update("usertable", "user1", &change), Status::Ok);
//!
//! let mut out = Record::new();
//! assert_eq!(thread.read("usertable", "user1", Fields::All, &mut out), Status::Ok);
//! assert_eq!(out.get("field1"), Some(&b"B"[..]));
//!
//! let mut rows = ScanResult::new();
//! assert_eq!(thread.scan("usertable", "user0", 10, Fields::All, &mut rows), Status::Ok);
//! let keys: Vec<_> = rows.iter().map(|(k, _)| k).collect();
//! assert_eq!(keys, ["user1", "user2"]);
//! assert_eq!(store.len(), 2);
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

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crossbeam_skiplist::SkipMap;
use ycsb_db::StoreContext;
use ycsb_db::{
    EngineInfo, Fields, Gauge, Property, PropertyDecl, Record, ScanResult, Status, Store,
    StoreDescriptor, StoreError, StoreThread, ThreadContext,
};

/// `memory.instance`: which process-wide store [`DESCRIPTOR`] opens.
pub const INSTANCE: Property<String> = Property::new(
    "memory.instance",
    "default",
    "Name of the process-wide memory store to open, so that phases run in one process \
     (load then run) share records; an empty name opens a fresh private store.",
);

/// Every property the memory store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[INSTANCE.decl()];

/// How the command line finds this store: the name `memory`.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "memory",
    "A concurrent ordered map in the client's process, shared by the phases of one run",
    PROPERTIES,
    open,
)
.with_aliases(&["mem"])
// A private instance is empty when opened.
.with_fresh(&[("memory.instance", "")]);

fn open(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    let name = context.properties.get(&INSTANCE)?;
    if name.is_empty() {
        Ok(Box::new(MemoryStore::new()))
    } else {
        Ok(Box::new(MemoryStore::named(&name)))
    }
}

/// One stored field. Fields are kept apart (not in one flat buffer like a
/// [`Record`]) so that an update can overwrite a value in place.
#[derive(Debug)]
struct StoredField {
    name: Box<str>,
    value: Vec<u8>,
}

/// A stored record: its fields in the order they were first written.
#[derive(Debug, Default)]
struct StoredRecord {
    fields: Vec<StoredField>,
}

impl StoredRecord {
    fn from_record(values: &Record) -> Self {
        let mut record = Self {
            fields: Vec::with_capacity(values.len()),
        };
        record.merge(values);
        record
    }

    /// Overwrites the fields `values` has and appends the ones it adds.
    fn merge(&mut self, values: &Record) {
        for field in values.iter() {
            match self.fields.iter_mut().find(|f| *f.name == *field.name) {
                Some(stored) => {
                    stored.value.clear();
                    stored.value.extend_from_slice(field.value);
                }
                None => self.fields.push(StoredField {
                    name: field.name.into(),
                    value: field.value.to_vec(),
                }),
            }
        }
    }

    fn copy_to(&self, fields: Fields<'_>, out: &mut Record) {
        for field in &self.fields {
            if fields.contains(&field.name) {
                out.push(&field.name, &field.value);
            }
        }
    }
}

type Table = SkipMap<String, Mutex<StoredRecord>>;

/// Locks a record. A panic while holding the lock can only come from a
/// bug in this crate (copying fields cannot fail otherwise); the record is
/// still whole, so a poisoned lock is used as is.
fn lock(record: &Mutex<StoredRecord>) -> std::sync::MutexGuard<'_, StoredRecord> {
    record.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug, Default)]
struct Tables {
    by_name: SkipMap<String, Arc<Table>>,
}

impl Tables {
    fn table(&self, name: &str) -> Arc<Table> {
        if let Some(entry) = self.by_name.get(name) {
            return entry.value().clone();
        }
        self.by_name
            .get_or_insert_with(name.to_string(), || Arc::new(SkipMap::new()))
            .value()
            .clone()
    }
}

/// A memory store. Clones share the same records.
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    tables: Arc<Tables>,
}

impl MemoryStore {
    /// A new, empty store of its own.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide store called `name`, created empty on first use.
    /// Its records live until the process ends or [`MemoryStore::clear`].
    pub fn named(name: &str) -> Self {
        static INSTANCES: OnceLock<Mutex<BTreeMap<String, MemoryStore>>> = OnceLock::new();
        let mut instances = INSTANCES
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        instances.entry(name.to_string()).or_default().clone()
    }

    /// The number of records in all tables.
    pub fn len(&self) -> usize {
        self.tables
            .by_name
            .iter()
            .map(|table| table.value().len())
            .sum()
    }

    /// Whether no table holds a record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of records in `table` (0 for a table never written).
    pub fn table_len(&self, table: &str) -> usize {
        self.tables
            .by_name
            .get(table)
            .map_or(0, |table| table.value().len())
    }

    /// Removes every record of every table.
    pub fn clear(&self) {
        // Tables stay (threads may hold them); only their records go.
        for table in self.tables.by_name.iter() {
            table.value().clear();
        }
    }
}

impl Store for MemoryStore {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(MemoryThread {
            tables: &self.tables,
            cache: Vec::new(),
        }))
    }

    fn gauges(&self, out: &mut Vec<Gauge>) {
        out.push(Gauge::new("memory.records", self.len() as f64));
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo {
            name: "memory (crossbeam-skiplist)".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// One client thread of a memory store.
struct MemoryThread<'a> {
    tables: &'a Tables,
    /// The tables this thread has used, found by a linear search: workloads
    /// use one or a few tables, and comparing a short name is cheaper than
    /// touching the shared table map.
    cache: Vec<(String, Arc<Table>)>,
}

impl MemoryThread<'_> {
    fn table(&mut self, name: &str) -> &Table {
        let index = match self.cache.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.cache.push((name.to_string(), self.tables.table(name)));
                self.cache.len() - 1
            }
        };
        &self.cache[index].1
    }
}

impl StoreThread for MemoryThread<'_> {
    fn read(&mut self, table: &str, key: &str, fields: Fields<'_>, out: &mut Record) -> Status {
        match self.table(table).get(key) {
            Some(entry) => {
                lock(entry.value()).copy_to(fields, out);
                Status::Ok
            }
            None => Status::NotFound,
        }
    }

    fn scan(
        &mut self,
        table: &str,
        start_key: &str,
        count: usize,
        fields: Fields<'_>,
        out: &mut ScanResult,
    ) -> Status {
        let range = (Bound::Included(start_key), Bound::Unbounded);
        for entry in self.table(table).range::<str, _>(range).take(count) {
            let row = out.push_row(entry.key());
            lock(entry.value()).copy_to(fields, row);
        }
        Status::Ok
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        match self.table(table).get(key) {
            Some(entry) => {
                lock(entry.value()).merge(values);
                Status::Ok
            }
            None => Status::NotFound,
        }
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        let record = StoredRecord::from_record(values);
        let table = self.table(table);
        // Overwrite an existing record in place: SkipMap::insert unlinks the
        // old entry before linking the new one, so a concurrent read of the
        // key could find nothing.
        if let Some(entry) = table.get(key) {
            *lock(entry.value()) = record;
            return Status::Ok;
        }
        table.insert(key.to_string(), Mutex::new(record));
        Status::Ok
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        match self.table(table).remove(key) {
            Some(_) => Status::Ok,
            None => Status::NotFound,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ycsb_db::testing::record;

    #[test]
    fn overwriting_never_hides_the_key_from_readers() {
        let store = MemoryStore::new();
        let mut values = Record::new();
        values.push("f", b"0");
        store
            .thread(ThreadContext::new(0, 2))
            .unwrap()
            .insert("t", "k", &values);
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut writer = store.thread(ThreadContext::new(0, 2)).unwrap();
                let mut values = Record::new();
                for i in 0..20_000u32 {
                    values.clear();
                    values.push("f", i.to_string().as_bytes());
                    assert_eq!(writer.insert("t", "k", &values), Status::Ok);
                }
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            let mut reader = store.thread(ThreadContext::new(1, 2)).unwrap();
            let mut out = Record::new();
            let mut reads = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || reads == 0 {
                out.clear();
                assert_eq!(reader.read("t", "k", Fields::All, &mut out), Status::Ok);
                reads += 1;
            }
        });
    }

    #[test]
    fn merge_overwrites_in_place_and_appends() {
        let mut stored = StoredRecord::from_record(&record(&[("a", "111"), ("b", "2")]));
        let a_ptr = stored.fields[0].value.as_ptr();
        stored.merge(&record(&[("a", "999"), ("c", "3")]));
        // Same length: the old buffer was reused.
        assert_eq!(stored.fields[0].value.as_ptr(), a_ptr);
        let mut out = Record::new();
        stored.copy_to(Fields::All, &mut out);
        assert_eq!(out, record(&[("a", "999"), ("b", "2"), ("c", "3")]));
    }

    #[test]
    fn duplicate_fields_in_an_insert_keep_the_last_value() {
        let stored = StoredRecord::from_record(&record(&[("a", "1"), ("a", "2")]));
        assert_eq!(stored.fields.len(), 1);
        assert_eq!(stored.fields[0].value, b"2");
    }
}
