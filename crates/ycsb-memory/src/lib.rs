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
//! Each table is split into [`SHARDS`] shards by a hash of the key, each an
//! ordered map ([`BTreeMap`]) behind a reader-writer lock of its own. An
//! operation on one key takes one shard's lock, once: a read shares it, an
//! insert, update or delete holds it alone for the few hundred
//! nanoseconds the change takes, so concurrent updates of different fields
//! of one record all survive and a read never sees half an update. With
//! sixteen shards two threads rarely want the same one. A scan read-locks
//! every shard (in shard order, so that scans cannot deadlock each other;
//! writers take one lock at a time) and merges the shards' runs from the
//! start key, so it returns records in key order across the whole table.
//!
//! A key of up to 30 bytes (every YCSB key) is held in the map's node
//! itself, so that a lookup compares bytes in the node it is reading
//! instead of following a pointer per comparison, and an insert allocates
//! no key. A record is one contiguous buffer in the workspace's record
//! encoding ([`ycsb_db::codec`], as the embedded engines store it): an
//! insert allocates that buffer and nothing else; a read shows its fields
//! in place ([`StoreThread::read_in_place`]) or copies them; an update of
//! one field that keeps its length (YCSB's default) overwrites the value
//! in place, and any other update merges into the thread's spare buffer
//! and swaps it in, so no update allocates. The table is found through a
//! small per-thread cache.
//!
//! This replaced a lock-free skip list (crossbeam's `SkipMap` of `String`
//! keys to mutex-guarded records), whose lookups followed about twenty
//! node pointers and a key pointer per node: a cache miss each in a table
//! of a million records. docs/performance.md ("The memory store") has the
//! profiles and figures of both.
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

use std::borrow::{Borrow, Cow};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{
    Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

use ycsb_db::codec::{self, EncodedRecord};
use ycsb_db::StoreContext;
use ycsb_db::{
    EngineInfo, Fields, Gauge, Property, PropertyDecl, Record, RecordView, ScanResult, Status,
    Store, StoreDescriptor, StoreError, StoreThread, ThreadContext,
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

/// Keys up to this many bytes live inside the tree's leaves: YCSB's keys
/// (`user` and up to 20 digits) all do. With the length byte and the
/// variant's tag a key is 32 bytes, two to a cache line.
const INLINE_KEY: usize = 30;

/// A key as the tree holds it: its bytes, ordered as `str` orders text
/// (bytewise), so scans follow the same order as a `BTreeMap<String, _>`.
///
/// A key of up to [`INLINE_KEY`] bytes is stored inline, so that the
/// comparisons of a lookup read the map node they are in instead of following
/// a pointer each (a cache miss each in a large table), and inserting one
/// allocates nothing. Longer keys go to the heap.
#[derive(Clone, Debug)]
enum Key {
    Inline { len: u8, bytes: [u8; INLINE_KEY] },
    Heap(Box<[u8]>),
}

impl Key {
    fn new(key: &str) -> Self {
        let key = key.as_bytes();
        match u8::try_from(key.len()) {
            Ok(len) if key.len() <= INLINE_KEY => {
                let mut bytes = [0; INLINE_KEY];
                bytes[..key.len()].copy_from_slice(key);
                Key::Inline { len, bytes }
            }
            _ => Key::Heap(key.into()),
        }
    }

    #[inline]
    fn as_bytes(&self) -> &[u8] {
        match self {
            Key::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Key::Heap(bytes) => bytes,
        }
    }

    /// The key as text. Keys are made from `&str` only, so the lossy case
    /// never happens; it keeps a bug from becoming a panic.
    fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.as_bytes())
    }
}

impl Borrow<[u8]> for Key {
    #[inline]
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq for Key {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

/// How many shards a table has: enough that two or a few threads seldom
/// want the same lock, few enough that a scan's merge of their runs stays
/// cheap. A power of two, so that a hash picks one with a shift.
pub const SHARDS: usize = 16;

/// One shard of a table: its records (each in the [`codec`] encoding) in
/// key order. Aligned to its own cache lines, so that taking one shard's
/// lock does not disturb a thread using the next.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Shard {
    records: RwLock<BTreeMap<Key, Vec<u8>>>,
}

impl Shard {
    /// A poisoned lock means a panic while a change held it. Every change
    /// is one copy, swap or map operation that cannot be left half done,
    /// so the map is whole and used as is.
    fn read(&self) -> RwLockReadGuard<'_, BTreeMap<Key, Vec<u8>>> {
        self.records.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, BTreeMap<Key, Vec<u8>>> {
        self.records.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A table: its records spread over [`SHARDS`] shards by key hash.
#[derive(Debug, Default)]
struct Table {
    shards: [Shard; SHARDS],
}

impl Table {
    #[inline]
    fn shard(&self, key: &[u8]) -> &Shard {
        &self.shards[shard_of(key)]
    }

    fn len(&self) -> usize {
        self.shards.iter().map(|s| s.read().len()).sum()
    }

    fn clear(&self) {
        for shard in &self.shards {
            shard.write().clear();
        }
    }
}

/// Which shard holds `key`: a multiply-xor hash of its 8-byte words, so
/// that keys differing in any byte (sequential or hashed YCSB keys, which
/// differ in their last digits or in all of them) spread over the shards.
#[inline]
fn shard_of(key: &[u8]) -> usize {
    const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut hash = key.len() as u64;
    let mut words = key.chunks_exact(8);
    for word in &mut words {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(word);
        hash = (hash ^ u64::from_le_bytes(bytes)).wrapping_mul(MULTIPLIER);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut bytes = [0; 8];
        bytes[..tail.len()].copy_from_slice(tail);
        hash = (hash ^ u64::from_le_bytes(bytes)).wrapping_mul(MULTIPLIER);
    }
    // The top bits of a product depend on every bit of its input.
    (hash >> (64 - SHARDS.trailing_zeros())) as usize
}

/// Writes an update of a single field into `stored` in place when it can:
/// the record holds that field exactly once, with a value of the same
/// length. Returns whether it did; otherwise `stored` is unchanged and the
/// update must merge. This is YCSB's default update (one field of
/// `fieldlength` bytes), and it copies the new value only, not the record.
fn overwrite_in_place(stored: &mut [u8], changes: &Record) -> bool {
    let mut fields = changes.iter();
    let (Some(change), None) = (fields.next(), fields.next()) else {
        return false;
    };
    let Some(at) = value_offset(stored, change.name, change.value.len()) else {
        return false;
    };
    stored[at..at + change.value.len()].copy_from_slice(change.value);
    true
}

/// Where the value of the only field called `name` starts in `stored`,
/// when that value is `len` bytes long.
fn value_offset(stored: &[u8], name: &str, len: usize) -> Option<usize> {
    let record = EncodedRecord::parse(stored).ok()?;
    let start = stored.as_ptr() as usize;
    let mut found = None;
    for field in record.iter().filter(|f| f.name == name) {
        if found.is_some() || field.value.len() != len {
            return None;
        }
        // The value is a slice of `stored`: its distance from the start.
        found = Some(field.value.as_ptr() as usize - start);
    }
    found
}

#[derive(Debug, Default)]
struct Tables {
    /// Touched only when a thread first uses a table, and by the
    /// whole-store queries ([`MemoryStore::len`], [`MemoryStore::clear`]).
    by_name: Mutex<BTreeMap<String, Arc<Table>>>,
}

impl Tables {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Arc<Table>>> {
        // Nothing that can panic runs under this lock.
        self.by_name.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn table(&self, name: &str) -> Arc<Table> {
        self.lock().entry(name.to_string()).or_default().clone()
    }

    /// The tables at this moment, so that counting or clearing them holds
    /// no lock.
    fn all(&self) -> Vec<Arc<Table>> {
        self.lock().values().cloned().collect()
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
        self.tables.all().iter().map(|table| table.len()).sum()
    }

    /// Whether no table holds a record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of records in `table` (0 for a table never written).
    pub fn table_len(&self, table: &str) -> usize {
        self.tables.lock().get(table).cloned().map_or(0, |t| t.len())
    }

    /// Removes every record of every table.
    pub fn clear(&self) {
        // Tables stay (threads may hold them); only their records go.
        for table in self.tables.all() {
            table.clear();
        }
    }
}

impl Store for MemoryStore {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(MemoryThread {
            tables: &self.tables,
            cache: Vec::new(),
            spare: Vec::new(),
        }))
    }

    fn gauges(&self, out: &mut Vec<Gauge>) {
        out.push(Gauge::new("memory.records", self.len() as f64));
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo {
            name: "memory (sharded BTreeMap)".to_string(),
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
    /// A buffer to encode into: an insert's encoding before it is copied to
    /// a buffer of its exact size, an update's merged record before it is
    /// swapped with the stored one (whose buffer then becomes the spare).
    spare: Vec<u8>,
}

impl MemoryThread<'_> {
    fn table(&mut self, name: &str) -> &Table {
        cached_table(&mut self.cache, self.tables, name)
    }
}

/// The table called `name`, from the thread's `cache` (a function of the
/// cache alone, so that an update can use the thread's spare buffer while
/// it holds the table).
fn cached_table<'c>(
    cache: &'c mut Vec<(String, Arc<Table>)>,
    tables: &Tables,
    name: &str,
) -> &'c Table {
    let index = match cache.iter().position(|(n, _)| n == name) {
        Some(i) => i,
        None => {
            cache.push((name.to_string(), tables.table(name)));
            cache.len() - 1
        }
    };
    &cache[index].1
}

impl StoreThread for MemoryThread<'_> {
    fn read(&mut self, table: &str, key: &str, fields: Fields<'_>, out: &mut Record) -> Status {
        let key = key.as_bytes();
        match self.table(table).shard(key).read().get(key) {
            Some(stored) => codec::read_into(stored, fields, out),
            None => Status::NotFound,
        }
    }

    fn read_in_place(
        &mut self,
        table: &str,
        key: &str,
        fields: Fields<'_>,
        _scratch: &mut Record,
        visit: &mut dyn FnMut(RecordView<'_>),
    ) -> Status {
        let key = key.as_bytes();
        match self.table(table).shard(key).read().get(key) {
            Some(stored) => codec::read_in_place(stored, fields, visit),
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
        if count == 0 {
            return Status::Ok;
        }
        let table = self.table(table);
        // Every shard at once, in shard order: while the scan merges, no
        // shard changes under it.
        let shards: [_; SHARDS] = std::array::from_fn(|i| table.shards[i].read());
        let start = (Bound::Included(start_key.as_bytes()), Bound::Unbounded);
        let mut runs: [_; SHARDS] = std::array::from_fn(|i| shards[i].range::<[u8], _>(start));
        let mut merge = Merge::new(&mut runs);
        for _ in 0..count {
            let Some((key, stored)) = merge.next() else {
                break;
            };
            let row = out.push_row(&key.text());
            let status = codec::read_into(stored, fields, row);
            if !status.is_ok() {
                return status;
            }
        }
        Status::Ok
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        let key = key.as_bytes();
        let table = cached_table(&mut self.cache, self.tables, table);
        let mut shard = table.shard(key).write();
        let Some(stored) = shard.get_mut(key) else {
            return Status::NotFound;
        };
        if overwrite_in_place(stored, values) {
            return Status::Ok;
        }
        self.spare.clear();
        if let Err(e) = codec::merge(stored, values, &mut self.spare) {
            return e.into();
        }
        std::mem::swap(stored, &mut self.spare);
        Status::Ok
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        self.spare.clear();
        codec::encode(values, &mut self.spare);
        // Exactly the record's size: the spare's capacity is the largest
        // record seen, which every record would keep.
        let encoded = self.spare.as_slice().to_vec();
        let key_bytes = key.as_bytes();
        let mut shard = self.table(table).shard(key_bytes).write();
        // An existing record is replaced where it is: the key is never
        // missing for a reader, and its node keeps its key.
        match shard.get_mut(key_bytes) {
            Some(stored) => *stored = encoded,
            None => {
                shard.insert(Key::new(key), encoded);
            }
        }
        Status::Ok
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        let key = key.as_bytes();
        match self.table(table).shard(key).write().remove(key) {
            Some(_) => Status::Ok,
            None => Status::NotFound,
        }
    }
}

/// The merge of the shards' runs in key order, for a scan.
///
/// `order` holds the shards whose run is not exhausted, sorted by their
/// next key, so that the next record is always at the front: taking it
/// and putting its shard back in place costs a binary search over at most
/// [`SHARDS`] keys, not a comparison with every shard.
struct Merge<'r, 'm, I> {
    runs: &'r mut [I; SHARDS],
    heads: [Option<(&'m Key, &'m Vec<u8>)>; SHARDS],
    order: [usize; SHARDS],
    active: usize,
}

impl<'r, 'm, I: Iterator<Item = (&'m Key, &'m Vec<u8>)>> Merge<'r, 'm, I> {
    fn new(runs: &'r mut [I; SHARDS]) -> Self {
        let mut merge = Merge {
            heads: std::array::from_fn(|i| runs[i].next()),
            runs,
            order: [0; SHARDS],
            active: 0,
        };
        for shard in 0..SHARDS {
            merge.place(shard);
        }
        merge
    }

    /// Puts `shard` into `order` after the shards with smaller next keys,
    /// unless its run is exhausted. Keys are in one shard only, so no two
    /// heads are equal.
    fn place(&mut self, shard: usize) {
        let Some((key, _)) = self.heads[shard] else {
            return;
        };
        let active = &self.order[..self.active];
        let at = active.partition_point(|&s| self.heads[s].is_some_and(|(k, _)| k < key));
        self.order.copy_within(at..self.active, at + 1);
        self.order[at] = shard;
        self.active += 1;
    }

    fn next(&mut self) -> Option<(&'m Key, &'m Vec<u8>)> {
        if self.active == 0 {
            return None;
        }
        let shard = self.order[0];
        let head = self.heads[shard];
        self.order.copy_within(1..self.active, 0);
        self.active -= 1;
        self.heads[shard] = self.runs[shard].next();
        self.place(shard);
        head
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
    fn an_update_of_one_field_of_the_same_length_writes_in_place() {
        let store = MemoryStore::new();
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        t.insert("t", "k", &record(&[("a", "111"), ("b", "2")]));
        let table = store.tables.table("t");
        let buffer = || table.shard(b"k").read().get(&b"k"[..]).unwrap().as_ptr();
        let before = buffer();
        assert_eq!(t.update("t", "k", &record(&[("a", "999")])), Status::Ok);
        // Same length: the stored buffer was written, not replaced.
        assert_eq!(buffer(), before);
        let mut out = Record::new();
        t.read("t", "k", Fields::All, &mut out);
        assert_eq!(out, record(&[("a", "999"), ("b", "2")]));
        // Another length, or a new field: merged into a new buffer.
        assert_eq!(t.update("t", "k", &record(&[("a", "12")])), Status::Ok);
        assert_eq!(t.update("t", "k", &record(&[("c", "3")])), Status::Ok);
        out.clear();
        t.read("t", "k", Fields::All, &mut out);
        assert_eq!(out, record(&[("a", "12"), ("b", "2"), ("c", "3")]));
    }

    /// Keys spread over every shard (sequential and YCSB-hashed ones, and
    /// keys that differ only in one middle byte), and a scan merges them
    /// back into key order from any start key.
    #[test]
    fn shards_spread_keys_and_scans_merge_them_in_order() {
        let sequential: Vec<String> = (0..400).map(|i| format!("user{i:010}")).collect();
        let hashed: Vec<String> = (0..400u64)
            .map(|i| format!("user{}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 4))
            .collect();
        let middle: Vec<String> = (0..400).map(|i| format!("aaaaaaaaaa{i:03}aaaaaaaaaaaaa")).collect();
        for keys in [&sequential, &hashed, &middle] {
            let mut used = [0; SHARDS];
            for key in keys.iter() {
                used[shard_of(key.as_bytes())] += 1;
            }
            // 400 keys, 25 a shard on average: none may be near empty.
            assert!(used.iter().all(|&n| n >= 8), "{used:?} {:?}", &keys[..2]);
        }
        let store = MemoryStore::new();
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        for key in &hashed {
            t.insert("t", key, &record(&[("f", key)]));
        }
        let mut sorted = hashed.clone();
        sorted.sort();
        let mut rows = ScanResult::new();
        for (start, count) in [("", 1000), ("", 7), ("user5", 60), (sorted[17].as_str(), 3), ("v", 5)] {
            rows.clear();
            assert_eq!(t.scan("t", start, count, Fields::All, &mut rows), Status::Ok);
            let expected: Vec<&str> = sorted
                .iter()
                .map(String::as_str)
                .filter(|k| *k >= start)
                .take(count)
                .collect();
            let got: Vec<&str> = rows.iter().map(|(k, _)| k).collect();
            assert_eq!(got, expected, "scan from {start:?}, {count}");
            for (key, row) in rows.iter() {
                assert_eq!(row.get("f"), Some(key.as_bytes()));
            }
        }
    }

    #[test]
    fn in_place_updates_only_of_one_field_held_once_at_its_length() {
        let mut stored = Vec::new();
        codec::encode(&record(&[("a", "11"), ("b", "22"), ("b", "33")]), &mut stored);
        let before = stored.clone();
        for changes in [
            record(&[("a", "1")]),               // another length
            record(&[("b", "44")]),              // stored twice
            record(&[("z", "44")]),              // not stored
            record(&[("a", "44"), ("a", "55")]), // two changes
            Record::new(),
        ] {
            assert!(!overwrite_in_place(&mut stored, &changes), "{changes:?}");
            assert_eq!(stored, before);
        }
        assert!(overwrite_in_place(&mut stored, &record(&[("a", "44")])));
        let mut out = Record::new();
        codec::decode(&stored, Fields::All, &mut out).unwrap();
        assert_eq!(out, record(&[("a", "44"), ("b", "22"), ("b", "33")]));
    }

    #[test]
    fn keys_order_as_text_inline_or_not() {
        let long = "k".repeat(INLINE_KEY + 1);
        let at_limit = "k".repeat(INLINE_KEY);
        let texts = ["", "a", "ab", "b", "user1", "user10", "user2", &at_limit, &long, "\u{e9}"];
        for a in texts {
            let key = Key::new(a);
            assert_eq!(key.text(), a);
            assert_eq!(
                matches!(key, Key::Inline { .. }),
                a.len() <= INLINE_KEY,
                "{a}"
            );
            for b in texts {
                assert_eq!(Key::new(a).cmp(&Key::new(b)), a.cmp(b), "{a} {b}");
            }
        }
        assert_eq!(std::mem::size_of::<Key>(), 32);
        assert_eq!(Key::new("abc").borrow() as &[u8], b"abc");
    }
}
