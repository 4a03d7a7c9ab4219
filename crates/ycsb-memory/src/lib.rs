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
//! Each table is split into [`SHARDS`] shards by a hash of the key, each
//! behind a reader-writer lock of its own. An operation on one key takes
//! one shard's lock, once: a read shares it; an insert, update or delete
//! holds it alone for the copy or swap it makes, so concurrent updates of
//! different fields of one record all survive and a read never sees half
//! an update. With four shards two threads seldom want the same one, and a
//! scan merges only four runs.
//!
//! A shard keeps its records in a slab, found by a hash table of 8-byte
//! slots (32 bits of the key's hash and a slab index), small so that as
//! many as possible stay in the processor's cache. A record is one
//! allocation, its key and then its fields in the workspace's record
//! encoding ([`ycsb_db::codec`], as the embedded engines store it): an
//! insert allocates it and nothing else; a read shows the fields in place
//! ([`StoreThread::read_in_place`]) or copies them; an update of one field
//! that keeps its length (YCSB's default) overwrites the value in place,
//! any other update merges into a new record.
//!
//! Key order is kept lazily, for scans only: an insert pushes its key onto
//! the shard's pending list, and the first scan that follows sorts the
//! pending keys into the shard's ordered map (a [`BTreeMap`] of keys, held
//! inline up to 30 bytes, to slab indexes). A scan read-locks every shard
//! (in shard order, so that scans cannot deadlock each other; writers take
//! one lock at a time) and merges the shards' runs from the start key, so
//! it returns records in key order across the whole table. A workload
//! without scans never pays for the order; the first scan after a large
//! load pays once for all of it.
//!
//! This replaced a lock-free skip list (crossbeam's `SkipMap` of `String`
//! keys to mutex-guarded records of separately allocated fields), whose
//! lookups followed about twenty node pointers and a key pointer per node,
//! a cache miss each in a table of a million records.
//! docs/journal/performance-client.md ("The memory store") has the profiles
//! and figures of both; docs/performance.md the current ones.
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
//! use ycsb_db::{Fields, ReadOp, Record, ScanOp, ScanResult, Status, Store, ThreadContext};
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
//! let read = ReadOp::new("usertable", "user1", Fields::All);
//! assert_eq!(thread.read(&read, &mut out), Status::Ok);
//! assert_eq!(out.get("field1"), Some(&b"B"[..]));
//!
//! let mut rows = ScanResult::new();
//! let scan = ScanOp::new("usertable", "user0", 10, Fields::All);
//! assert_eq!(thread.scan(&scan, &mut rows), Status::Ok);
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

use hashbrown::HashTable;
use std::ops::Bound;
use std::sync::{
    Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

use ycsb_db::codec;
use ycsb_db::StoreContext;
use ycsb_db::{
    EngineInfo, Gauge, Property, PropertyDecl, ReadOp, Record, ScanOp, ScanResult, Status, Store,
    StoreDescriptor, StoreError, StoreThread, ThreadContext, Visit,
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

/// Keys up to this many bytes live inside the ordered map's nodes: YCSB's keys
/// (`user` and up to 20 digits) all do. With the length byte and the
/// variant's tag a key is 32 bytes, two to a cache line.
const INLINE_KEY: usize = 30;

/// A key as the ordered map holds it: its bytes, ordered as `str` orders text
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
/// cheap. A power of two, so that a hash picks one with a shift. Four
/// against sixteen, alternated on a quiet machine: workload E 1.32×, loads
/// and workload A on one and two threads within the runs' spread
/// (docs/journal/performance-client.md, the memory store).
pub const SHARDS: usize = 4;

/// A stored record: its key and its fields in the [`codec`] encoding, in
/// one allocation, `[key length: usize LE][key][encoding]`. The key is
/// beside the fields so that the hash index need not hold it, and the
/// comparison that confirms a lookup reads the line the read or update
/// goes on to use.
#[derive(Debug)]
struct Stored(Box<[u8]>);

const KEY_LENGTH: usize = std::mem::size_of::<usize>();

impl Stored {
    fn new(key: &[u8], encoding: &[u8], buffer: &mut Vec<u8>) -> Self {
        buffer.clear();
        buffer.extend_from_slice(&key.len().to_le_bytes());
        buffer.extend_from_slice(key);
        buffer.extend_from_slice(encoding);
        Stored(buffer.as_slice().into())
    }

    #[inline]
    fn key_end(&self) -> usize {
        let mut len = [0; KEY_LENGTH];
        len.copy_from_slice(&self.0[..KEY_LENGTH]);
        KEY_LENGTH + usize::from_le_bytes(len)
    }

    #[inline]
    fn key(&self) -> &[u8] {
        &self.0[KEY_LENGTH..self.key_end()]
    }

    #[inline]
    fn encoding(&self) -> &[u8] {
        &self.0[self.key_end()..]
    }

    #[inline]
    fn encoding_mut(&mut self) -> &mut [u8] {
        let at = self.key_end();
        &mut self.0[at..]
    }
}

/// One shard's records, kept in a slab and indexed twice: by hash for the
/// operations on one key, in key order for scans.
///
/// The hash index's slots are 8 bytes (32 bits of the key's hash and the
/// record's slab index) and the slab's 16 (a pointer and a length): small,
/// so that as many as possible stay in the processor's cache (for 10^6
/// records they are 16 MB each, and on a shared machine they still miss,
/// see docs/performance.md). The record's key is compared in the line the
/// operation goes on to read. A scan walks the ordered index to slab
/// indexes, with no hash lookup per row.
///
/// The ordered index is kept lazily. An insert adds its key to `pending`
/// (a push onto a vector) rather than to `ordered` (a B-tree search that
/// misses the cache at every level of a large table); the first scan that
/// needs the shard sorts `pending` into `ordered`. A workload without scans
/// never pays for the order. Invariants, under the shard's lock: each
/// record is in `slots` once and in `ordered` or `pending` (with its slab
/// index) until deleted; `ordered` holds only live records; `pending` may
/// also hold entries of records deleted since (their slab index empty or
/// reused by another key, dropped when settled) and an entry twice.
#[derive(Debug, Default)]
struct ShardData {
    slots: HashTable<u64>,
    slab: Vec<Option<Stored>>,
    /// Slab indexes of deleted records, for the next inserts.
    free: Vec<u32>,
    ordered: BTreeMap<Key, u32>,
    pending: Vec<(Key, u32)>,
    /// Whether a record was deleted since `pending` was last settled: if
    /// not, every pending entry is live and there once, and settling need
    /// not look each one up (a cache miss each, after a large load).
    deleted_since_settle: bool,
}

/// A slot of the hash index: the key hash's low 32 bits (see [`hash_key`])
/// above the record's slab index.
fn slot(hash: u64, index: u32) -> u64 {
    (hash << 32) | u64::from(index)
}

fn slot_index(slot: u64) -> usize {
    (slot & 0xffff_ffff) as usize
}

/// The hash the index's table files a slot under, from the 32 bits the slot
/// keeps (so that growing the table needs no record): a multiply spreads
/// them to the top bits, its tag, and keeps the low bits, its bucket,
/// as uniform as they were.
#[inline]
fn table_hash(hash32: u64) -> u64 {
    (hash32 & 0xffff_ffff).wrapping_mul(MULTIPLIER)
}

impl ShardData {
    /// The slab index of the record at `key`, whose [`hash_key`] is `hash`.
    #[inline]
    fn find(&self, hash: u64, key: &[u8]) -> Option<usize> {
        let slab = &self.slab;
        let low = hash & 0xffff_ffff;
        self.slots
            .find(table_hash(hash), |&s| {
                s >> 32 == low && slab[slot_index(s)].as_ref().is_some_and(|r| r.key() == key)
            })
            .map(|&s| slot_index(s))
    }

    #[inline]
    fn get(&self, hash: u64, key: &[u8]) -> Option<&Stored> {
        self.slab[self.find(hash, key)?].as_ref()
    }

    #[inline]
    fn get_mut(&mut self, hash: u64, key: &[u8]) -> Option<&mut Stored> {
        let index = self.find(hash, key)?;
        self.slab[index].as_mut()
    }

    /// Files a new record (its key has none) and returns its slab index.
    fn insert_new(&mut self, hash: u64, stored: Stored) -> u32 {
        let index = match self.free.pop() {
            Some(index) => {
                self.slab[index as usize] = Some(stored);
                index
            }
            None => {
                // A shard of more than 4 × 10^9 records would need more
                // memory than a machine has for them.
                let index = u32::try_from(self.slab.len()).unwrap_or(u32::MAX);
                self.slab.push(Some(stored));
                index
            }
        };
        self.slots
            .insert_unique(table_hash(hash), slot(hash, index), |&s| {
                table_hash(s >> 32)
            });
        index
    }

    /// Removes the record at `key`; false when there is none.
    fn remove(&mut self, hash: u64, key: &[u8]) -> bool {
        let slab = &self.slab;
        let low = hash & 0xffff_ffff;
        let Ok(entry) = self.slots.find_entry(table_hash(hash), |&s| {
            s >> 32 == low && slab[slot_index(s)].as_ref().is_some_and(|r| r.key() == key)
        }) else {
            return false;
        };
        let (slot, _) = entry.remove();
        let index = slot_index(slot);
        self.slab[index] = None;
        self.free.push(index as u32);
        self.ordered.remove(key);
        self.deleted_since_settle = true;
        true
    }

    /// Whether the pending entry `(key, index)` is a live record.
    fn is_live(&self, key: &Key, index: u32) -> bool {
        self.slab
            .get(index as usize)
            .and_then(Option::as_ref)
            .is_some_and(|r| r.key() == key.as_bytes())
    }

    /// Moves the pending entries of live records into `ordered`.
    fn settle(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_unstable();
        let check = std::mem::take(&mut self.deleted_since_settle);
        if check {
            pending.dedup();
        }
        let large = pending_is_large(pending.len(), self.ordered.len());
        // A large batch (a load's keys, at the first scan after it) is built
        // into a tree of its own, bottom up, and merged in one pass; a few
        // keys go in one by one.
        let mut batch: BTreeMap<Key, u32> = pending
            .drain(..)
            .filter(|(k, i)| !check || self.is_live(k, *i))
            .collect();
        if large {
            self.ordered.append(&mut batch);
        } else {
            self.ordered.extend(batch);
        }
        // Keep the allocation for the next inserts.
        self.pending = pending;
    }

    /// Drops pending entries of deleted records once they outnumber the
    /// records: a workload that inserts and deletes without ever scanning
    /// would otherwise grow `pending` without bound.
    fn bound_pending(&mut self) {
        if self.pending.len() > 2 * self.slots.len() + 1024 {
            let mut pending = std::mem::take(&mut self.pending);
            pending.retain(|(k, i)| self.is_live(k, *i));
            self.pending = pending;
        }
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.slab.clear();
        self.free.clear();
        self.ordered.clear();
        self.pending.clear();
        self.deleted_since_settle = false;
    }
}

/// Whether `pending` keys are many against `ordered` ones, so that merging
/// two trees beats inserting each key.
fn pending_is_large(pending: usize, ordered: usize) -> bool {
    pending.saturating_mul(8) > ordered
}

/// One shard of a table behind its lock, aligned to its own cache lines so
/// that taking one shard's lock does not disturb a thread using the next.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Shard {
    data: RwLock<ShardData>,
}

impl Shard {
    /// A poisoned lock means a panic while a change held it. Every change
    /// is one copy, swap or map operation that cannot be left half done,
    /// so the data is whole and used as is.
    fn read(&self) -> RwLockReadGuard<'_, ShardData> {
        self.data.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, ShardData> {
        self.data.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A table: its records spread over [`SHARDS`] shards by key hash.
#[derive(Debug, Default)]
struct Table {
    shards: [Shard; SHARDS],
}

impl Table {
    /// The shard of a key whose hash is `hash`.
    #[inline]
    fn shard(&self, hash: u64) -> &Shard {
        &self.shards[shard_of(hash)]
    }

    fn len(&self) -> usize {
        self.shards.iter().map(|s| s.read().slots.len()).sum()
    }

    fn clear(&self) {
        for shard in &self.shards {
            shard.write().clear();
        }
    }
}

const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

/// A multiply-xor hash of `bytes`' 8-byte words, so that keys differing
/// in any byte (sequential or hashed YCSB keys, which differ in their last
/// digits or in all of them) differ in the hash's top bits.
#[inline]
fn fold(mut hash: u64, bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut buf = [0; 8];
        buf.copy_from_slice(word);
        hash = (hash ^ u64::from_le_bytes(buf)).wrapping_mul(MULTIPLIER);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut buf = [0; 8];
        buf[..tail.len()].copy_from_slice(tail);
        hash = (hash ^ u64::from_le_bytes(buf)).wrapping_mul(MULTIPLIER);
    }
    hash
}

/// The hash of a key: [`fold`], then mixed so that the low bits (the
/// table's bucket), the top bits (its tag) and the bits [`shard_of`] takes
/// all depend on the whole key. The standard SipHash costs several times
/// more for a 24-byte key and guards against chosen keys, which a
/// benchmark's own generated keys are not.
#[inline]
fn hash_key(key: &[u8]) -> u64 {
    let h = fold(key.len() as u64, key);
    let h = (h ^ (h >> 32)).wrapping_mul(MULTIPLIER);
    h ^ (h >> 29)
}

/// Which shard holds the key whose hash is `hash`: bits of the hash that
/// the hash table's bucket (low bits) and tag (top 7 bits) do not use, so
/// that the keys of one shard still spread over its table.
#[inline]
fn shard_of(hash: u64) -> usize {
    (hash >> 32) as usize & (SHARDS - 1)
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
/// when that value is `len` bytes long; `None` when there is no such field,
/// several, another length, or `stored` is not a whole encoding.
///
/// One pass over the encoding ([`codec`]'s layout: for each field a
/// varint name length, the name, a varint value length, the value) that
/// compares each name where it lies: an update is on the path of half of
/// workload A's operations, and checking the whole record first
/// ([`codec::EncodedRecord::parse`]) and then walking it again cost twice as much.
/// The name needs no UTF-8 check: it is compared with one that is text.
fn value_offset(stored: &[u8], name: &str, len: usize) -> Option<usize> {
    let name = name.as_bytes();
    let mut pos = 0;
    let mut found = None;
    while pos < stored.len() {
        let name_len = varint(stored, &mut pos)?;
        let name_at = pos;
        let name_end = name_at.checked_add(name_len)?;
        let field_name = stored.get(name_at..name_end)?;
        pos = name_end;
        let value_len = varint(stored, &mut pos)?;
        let value_at = pos;
        pos = value_at.checked_add(value_len)?;
        if pos > stored.len() {
            return None;
        }
        if field_name == name {
            if found.is_some() || value_len != len {
                return None;
            }
            found = Some(value_at);
        }
    }
    found
}

/// Reads a LEB128 varint at `*pos` and moves past it.
#[inline]
fn varint(bytes: &[u8], pos: &mut usize) -> Option<usize> {
    let mut value = 0usize;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*pos)?;
        *pos += 1;
        value |= usize::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
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
        self.tables
            .lock()
            .get(table)
            .cloned()
            .map_or(0, |t| t.len())
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
            spare_record: Vec::new(),
        }))
    }

    fn gauges(&self, out: &mut Vec<Gauge>) {
        out.push(Gauge::count("memory.records", self.len() as f64));
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo {
            name: "memory (sharded hash maps, ordered on scan)".to_string(),
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
    /// Buffers reused across operations: `spare` for a record's encoding
    /// (an insert's, or an update's merge), `spare_record` to lay out key
    /// and encoding before they are copied to a [`Stored`] of their exact
    /// size.
    spare: Vec<u8>,
    spare_record: Vec<u8>,
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
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        let key = op.key.as_bytes();
        let hash = hash_key(key);
        match self.table(op.table).shard(hash).read().get(hash, key) {
            Some(stored) => codec::read_into(stored.encoding(), op.fields, out),
            None => Status::NotFound,
        }
    }

    fn read_in_place(&mut self, op: &ReadOp<'_>, _: &mut Record, visit: &mut Visit) -> Status {
        let key = op.key.as_bytes();
        let hash = hash_key(key);
        match self.table(op.table).shard(hash).read().get(hash, key) {
            Some(stored) => codec::read_in_place(stored.encoding(), op.fields, visit),
            None => Status::NotFound,
        }
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        if op.count == 0 {
            return Status::Ok;
        }
        let table = self.table(op.table);
        for shard in &table.shards {
            if !shard.read().pending.is_empty() {
                shard.write().settle();
            }
        }
        // Every shard at once, in shard order (so scans cannot deadlock
        // one another; writers hold one shard at a time): while the scan
        // merges, no shard changes under it. A key inserted since its
        // shard was settled is in `pending`, not seen: it is concurrent
        // with the scan.
        let shards: [_; SHARDS] = std::array::from_fn(|i| table.shards[i].read());
        let start = (Bound::Included(op.start_key.as_bytes()), Bound::Unbounded);
        let mut runs: [_; SHARDS] =
            std::array::from_fn(|i| shards[i].ordered.range::<[u8], _>(start));
        let mut merge = Merge::new(&mut runs);
        let mut rows = 0;
        while rows < op.count {
            let Some((shard, key, index)) = merge.next() else {
                break;
            };
            // Always there: `ordered` holds only live records.
            let Some(stored) = shards[shard].slab[index as usize].as_ref() else {
                continue;
            };
            let row = out.push_row(&key.text());
            let status = codec::read_into(stored.encoding(), op.fields, row);
            if !status.is_ok() {
                return status;
            }
            rows += 1;
        }
        Status::Ok
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        let key = key.as_bytes();
        let hash = hash_key(key);
        let table = cached_table(&mut self.cache, self.tables, table);
        let mut shard = table.shard(hash).write();
        let Some(stored) = shard.get_mut(hash, key) else {
            return Status::NotFound;
        };
        if overwrite_in_place(stored.encoding_mut(), values) {
            return Status::Ok;
        }
        self.spare.clear();
        if let Err(e) = codec::merge(stored.encoding(), values, &mut self.spare) {
            return e.into();
        }
        *stored = Stored::new(key, &self.spare, &mut self.spare_record);
        Status::Ok
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        self.spare.clear();
        codec::encode(values, &mut self.spare);
        let key_bytes = key.as_bytes();
        let stored = Stored::new(key_bytes, &self.spare, &mut self.spare_record);
        let hash = hash_key(key_bytes);
        let table = cached_table(&mut self.cache, self.tables, table);
        let mut shard = table.shard(hash).write();
        // An existing record is replaced where it is, so that the key is
        // never missing for a reader.
        if let Some(old) = shard.get_mut(hash, key_bytes) {
            *old = stored;
            return Status::Ok;
        }
        let index = shard.insert_new(hash, stored);
        shard.pending.push((Key::new(key), index));
        shard.bound_pending();
        Status::Ok
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        let key = key.as_bytes();
        let hash = hash_key(key);
        if self.table(table).shard(hash).write().remove(hash, key) {
            Status::Ok
        } else {
            Status::NotFound
        }
    }
}

/// The merge of the shards' ordered indexes, for a scan.
///
/// `order` holds the shards whose run is not exhausted, sorted by their
/// next key, so that the next key is always at the front: taking it and
/// putting its shard back in place costs a binary search over at most
/// [`SHARDS`] keys, not a comparison with every shard.
struct Merge<'r, 'm, I> {
    runs: &'r mut [I; SHARDS],
    heads: [Option<(&'m Key, &'m u32)>; SHARDS],
    order: [usize; SHARDS],
    active: usize,
}

impl<'r, 'm, I: Iterator<Item = (&'m Key, &'m u32)>> Merge<'r, 'm, I> {
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
    /// unless its run is exhausted. A key is in one shard only, so no two
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

    /// The next key in order, with its shard and slab index.
    fn next(&mut self) -> Option<(usize, &'m Key, u32)> {
        if self.active == 0 {
            return None;
        }
        let shard = self.order[0];
        let (key, index) = self.heads[shard]?;
        self.order.copy_within(1..self.active, 0);
        self.active -= 1;
        self.heads[shard] = self.runs[shard].next();
        self.place(shard);
        Some((shard, key, *index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ycsb_db::testing::record;
    use ycsb_db::Fields;

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
                assert_eq!(
                    reader.read(&ReadOp::new("t", "k", Fields::All), &mut out),
                    Status::Ok
                );
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
        let hash = hash_key(b"k");
        let buffer = || table.shard(hash).read().get(hash, b"k").unwrap().0.as_ptr();
        let before = buffer();
        assert_eq!(t.update("t", "k", &record(&[("a", "999")])), Status::Ok);
        // Same length: the stored buffer was written, not replaced.
        assert_eq!(buffer(), before);
        let mut out = Record::new();
        t.read(&ReadOp::new("t", "k", Fields::All), &mut out);
        assert_eq!(out, record(&[("a", "999"), ("b", "2")]));
        // Another length, or a new field: merged into a new buffer.
        assert_eq!(t.update("t", "k", &record(&[("a", "12")])), Status::Ok);
        assert_eq!(t.update("t", "k", &record(&[("c", "3")])), Status::Ok);
        out.clear();
        t.read(&ReadOp::new("t", "k", Fields::All), &mut out);
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
        let middle: Vec<String> = (0..400)
            .map(|i| format!("aaaaaaaaaa{i:03}aaaaaaaaaaaaa"))
            .collect();
        for keys in [&sequential, &hashed, &middle] {
            let mut used = [0; SHARDS];
            for key in keys.iter() {
                used[shard_of(hash_key(key.as_bytes()))] += 1;
            }
            // 400 keys, 100 a shard on average: none may be near empty.
            assert!(used.iter().all(|&n| n >= 50), "{used:?} {:?}", &keys[..2]);
        }
        let store = MemoryStore::new();
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        for key in &hashed {
            t.insert("t", key, &record(&[("f", key)]));
        }
        let mut sorted = hashed.clone();
        sorted.sort();
        let mut rows = ScanResult::new();
        for (start, count) in [
            ("", 1000),
            ("", 7),
            ("user5", 60),
            (sorted[17].as_str(), 3),
            ("v", 5),
        ] {
            rows.clear();
            assert_eq!(
                t.scan(&ScanOp::new("t", start, count, Fields::All), &mut rows),
                Status::Ok
            );
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
        codec::encode(
            &record(&[("a", "11"), ("b", "22"), ("b", "33")]),
            &mut stored,
        );
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
        // A prefix cut inside a field is not written into; one cut after
        // the first "b" (10 bytes: two fields of 5) holds "b" once.
        for cut in 0..stored.len() {
            let written = overwrite_in_place(&mut stored[..cut].to_vec(), &record(&[("b", "44")]));
            assert_eq!(written, cut == 10, "prefix of {cut} bytes");
        }
        assert!(!overwrite_in_place(
            &mut [0xff; 12],
            &record(&[("a", "44")])
        ));
        // Values across the one-byte length limit are found.
        let long = "x".repeat(300);
        let mut big = Vec::new();
        codec::encode(&record(&[("n", &long), ("a", "11")]), &mut big);
        let new_long = "y".repeat(300);
        assert!(overwrite_in_place(&mut big, &record(&[("n", &new_long)])));
        let mut out = Record::new();
        codec::decode(&big, Fields::All, &mut out).unwrap();
        assert_eq!(out, record(&[("n", &new_long), ("a", "11")]));
        assert!(overwrite_in_place(&mut stored, &record(&[("a", "44")])));
        let mut out = Record::new();
        codec::decode(&stored, Fields::All, &mut out).unwrap();
        assert_eq!(out, record(&[("a", "44"), ("b", "22"), ("b", "33")]));
    }

    /// The ordered index is settled by scans: keys inserted, deleted and
    /// inserted again before or after a scan appear exactly when they hold
    /// a record, once each; without scans the pending keys stay bounded.
    #[test]
    fn scans_see_exactly_the_live_keys_however_they_came_and_went() {
        let store = MemoryStore::new();
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        let v = record(&[("f", "v")]);
        let keys = |t: &mut Box<dyn StoreThread + '_>| {
            let mut rows = ScanResult::new();
            assert_eq!(
                t.scan(&ScanOp::new("t", "", 100, Fields::All), &mut rows),
                Status::Ok
            );
            rows.iter().map(|(k, _)| k.to_string()).collect::<Vec<_>>()
        };
        for k in ["k1", "k2", "k3", "k4"] {
            t.insert("t", k, &v);
        }
        t.delete("t", "k2"); // pending, deleted before settling
        t.insert("t", "k2", &v); // pending twice
        t.insert("t", "k4", &v); // overwrite: not pending again
        assert_eq!(keys(&mut t), ["k1", "k2", "k3", "k4"]);
        t.delete("t", "k3"); // settled, deleted
        t.insert("t", "k5", &v);
        t.delete("t", "k5"); // pending, deleted
        t.insert("t", "k0", &v);
        assert_eq!(keys(&mut t), ["k0", "k1", "k2", "k4"]);
        t.insert("t", "k3", &v); // settled before, deleted, back
        assert_eq!(keys(&mut t), ["k0", "k1", "k2", "k3", "k4"]);

        for i in 0..50_000 {
            let key = format!("x{i}");
            t.insert("t", &key, &v);
            t.delete("t", &key);
        }
        let table = store.tables.table("t");
        let pending: usize = table.shards.iter().map(|s| s.read().pending.len()).sum();
        // Each shard drops its dead keys past 2 × records + 1024.
        assert!(pending <= SHARDS * (2 * 5 + 1025), "{pending}");
        assert_eq!(keys(&mut t), ["k0", "k1", "k2", "k3", "k4"]);
    }

    #[test]
    fn keys_order_as_text_inline_or_not() {
        let long = "k".repeat(INLINE_KEY + 1);
        let at_limit = "k".repeat(INLINE_KEY);
        let texts = [
            "", "a", "ab", "b", "user1", "user10", "user2", &at_limit, &long, "\u{e9}",
        ];
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
