//! The `basic` store: Java YCSB's `site.ycsb.BasicDB`.
//!
//! It stores nothing and answers every operation with `OK`, so a run
//! against it measures the client alone: key choice, value generation,
//! measurement. With `basicdb.verbose=true` it writes one line per
//! operation in Java BasicDB's format to the store's output
//! ([`StoreContext::output`]); `basicdb.simulatedelay` makes every operation
//! sleep, to see how the client behaves against a slow store; and
//! `basicdb.count=true` counts the distinct operations, as Java does, and
//! prints the counts when the last thread ends.
//!
//! One deliberate difference from Java: `basicdb.verbose` defaults to
//! `false`, because printing every operation would make the client's cost
//! the cost of formatting and writing lines.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use ycsb_db::{OutputSink, StoreContext};
//! use ycsb_db::{Fields, Properties, ReadOp, Record, Status, ThreadContext};
//!
//! let lines = Arc::new(Mutex::new(Vec::<u8>::new()));
//! let sink: OutputSink = lines.clone();
//! let props = Properties::new().with("basicdb.verbose", true);
//! let store = (ycsb_basic::DESCRIPTOR.open)(&StoreContext::new(&props).with_output(sink))?;
//! let mut thread = store.thread(ThreadContext::new(0, 1))?;
//!
//! let mut values = Record::new();
//! values.push("field0", b"abc");
//! assert_eq!(thread.update("usertable", "user1", &values), Status::Ok);
//! let read = ReadOp::new("usertable", "user1", Fields::All);
//! assert_eq!(thread.read(&read, &mut Record::new()), Status::Ok);
//!
//! let text = String::from_utf8(lines.lock().unwrap().clone()).unwrap();
//! assert!(text.ends_with(
//!     "UPDATE usertable user1 [ field0=abc ]\nREAD usertable user1 [ <all fields>]\n"
//! ));
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

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use ycsb_db::{
    redact_value, EngineInfo, Fields, Property, PropertyDecl, ReadOp, Record, RecordView, ScanOp,
    ScanResult, Status, Store, StoreDescriptor, StoreError, StoreThread, ThreadContext, Visit,
};
use ycsb_db::{OutputSink, StoreContext};

/// `basicdb.verbose`: print every operation.
pub const VERBOSE: Property<bool> = Property::new(
    "basicdb.verbose",
    "false",
    "Print one line per operation in Java BasicDB's format, and the properties at start. \
     Java's default is true; here it is false so that the basic store costs nothing.",
);

/// `basicdb.simulatedelay`: the longest simulated operation time.
pub const SIMULATE_DELAY: Property<u64> = Property::new(
    "basicdb.simulatedelay",
    "0",
    "Milliseconds every operation sleeps: a random whole number below this value \
     (basicdb.randomizedelay=true) or exactly this value; 0 for none.",
);

/// `basicdb.randomizedelay`: whether the delay is random.
pub const RANDOMIZE_DELAY: Property<bool> = Property::new(
    "basicdb.randomizedelay",
    "true",
    "Sleep a uniformly random whole number of milliseconds below basicdb.simulatedelay \
     instead of exactly that.",
);

/// `basicdb.count`: count distinct operations.
pub const COUNT: Property<bool> = Property::new(
    "basicdb.count",
    "false",
    "Count the distinct reads, scans, updates, inserts and deletes (by Java's hash of table, \
     key and fields) and print `[READS], Uniques, <n>` lines when the last thread ends.",
);

/// Every property the basic store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    VERBOSE.decl(),
    SIMULATE_DELAY.decl(),
    RANDOMIZE_DELAY.decl(),
    COUNT.decl(),
];

/// How the command line finds this store: `basic`, or Java's names.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "basic",
    "Stores nothing and answers OK: measures the client alone (Java's BasicDB)",
    PROPERTIES,
    open,
)
.with_aliases(&["basicdb", "site.ycsb.BasicDB"]);

fn open(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(BasicStore::open(context)?))
}

/// The operation kinds Java BasicDB counts, in the order it prints them.
const COUNTED: [&str; 5] = ["READS", "SCANS", "UPDATES", "INSERTS", "DELETES"];
const READS: usize = 0;
const SCANS: usize = 1;
const UPDATES: usize = 2;
const INSERTS: usize = 3;
const DELETES: usize = 4;

/// The settings of a basic store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Settings {
    verbose: bool,
    delay_ms: u64,
    randomize_delay: bool,
    count: bool,
    /// None of the above does anything: every operation only answers OK.
    /// One test instead of three per operation, which is most of what a
    /// call costs when the store is there to measure the client.
    silent: bool,
}

/// Distinct-operation counts gathered from the threads that have ended.
#[derive(Debug, Default)]
struct Counts {
    /// The phase's thread count, from the threads' contexts.
    expected: usize,
    /// Threads whose counts were merged.
    merged: usize,
    uniques: [HashSet<i32>; 5],
}

/// The basic store, shared by the client threads.
pub struct BasicStore {
    settings: Settings,
    output: OutputSink,
    counts: Mutex<Counts>,
}

impl std::fmt::Debug for BasicStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicStore")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl BasicStore {
    /// Opens a basic store with the `basicdb.*` properties of `context`,
    /// writing its output to `context.output`. With `basicdb.verbose` the
    /// properties are printed first, secrets redacted, as Java does (once
    /// per store here, not once per thread).
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] when a `basicdb.*` property is invalid.
    pub fn open(context: &StoreContext<'_>) -> Result<Self, StoreError> {
        let props = context.properties;
        let (verbose, delay_ms, count) = (
            props.get(&VERBOSE)?,
            props.get(&SIMULATE_DELAY)?,
            props.get(&COUNT)?,
        );
        let settings = Settings {
            verbose,
            delay_ms,
            randomize_delay: props.get(&RANDOMIZE_DELAY)?,
            count,
            silent: !verbose && delay_ms == 0 && !count,
        };
        let store = Self {
            settings,
            output: context.output.clone(),
            counts: Mutex::new(Counts::default()),
        };
        if settings.verbose {
            let mut text = Vec::new();
            text.extend_from_slice(b"***************** properties *****************\n");
            for (key, value, _) in props.iter() {
                let value = redact_value(key, value, PROPERTIES);
                // Writing to a Vec cannot fail.
                let _ = writeln!(text, "\"{key}\"=\"{value}\"");
            }
            text.extend_from_slice(b"**********************************************\n");
            store.write(&text);
        }
        Ok(store)
    }

    /// Writes finished lines to the output. Output errors (a closed pipe)
    /// are not the store's operations failing, so they are ignored, as
    /// Java's `System.out` does.
    fn write(&self, bytes: &[u8]) {
        let mut out = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = out.write_all(bytes);
        let _ = out.flush();
    }

    /// Merges one thread's counts; the last thread prints them all.
    fn merge_counts(&self, uniques: &mut [HashSet<i32>; 5]) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        for (total, local) in counts.uniques.iter_mut().zip(uniques.iter_mut()) {
            total.extend(local.drain());
        }
        counts.merged += 1;
        // Java prints when its count of live threads drops to zero, which
        // can happen early when a thread ends before another starts; the
        // phase's thread count avoids that.
        if counts.merged == counts.expected.max(1) {
            let mut text = Vec::new();
            for (name, set) in COUNTED.iter().zip(&counts.uniques) {
                let _ = writeln!(text, "[{name}], Uniques, {}", set.len());
            }
            drop(counts);
            self.write(&text);
        }
    }
}

impl Store for BasicStore {
    fn thread(&self, context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        if self.settings.count {
            let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
            counts.expected = counts.expected.max(context.thread_count);
        }
        Ok(Box::new(BasicThread {
            store: self,
            settings: self.settings,
            // Seeded by thread number so that simulated delays repeat from
            // run to run (Java's are unseeded).
            rng: SmallRng::seed_from_u64(0x5eed_ba51c ^ context.thread_id as u64),
            line: Vec::new(),
            order: Vec::new(),
            uniques: Default::default(),
            merged: !self.settings.count,
        }))
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo {
            name: "BasicDB".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// One client thread of the basic store.
struct BasicThread<'a> {
    store: &'a BasicStore,
    /// A copy, so the operation path reads the settings from this thread's
    /// own memory.
    settings: Settings,
    rng: SmallRng,
    /// The verbose line being built, reused for every operation.
    line: Vec<u8>,
    /// Field indexes in name order, for Java's hash; reused.
    order: Vec<usize>,
    uniques: [HashSet<i32>; 5],
    /// Whether the counts were handed to the store (or are not kept).
    merged: bool,
}

impl BasicThread<'_> {
    fn delay(&mut self) {
        let max = self.settings.delay_ms;
        if max == 0 {
            return;
        }
        let ms = if self.settings.randomize_delay {
            // Java's `nextInt(delay)`: 0 to delay − 1, and no sleep at 0.
            self.rng.random_range(0..max)
        } else {
            max
        };
        if ms > 0 {
            std::thread::sleep(Duration::from_millis(ms));
        }
    }

    /// Starts a verbose line: `OP table key`.
    fn begin(&mut self, op: &str, table: &str, key: &str) {
        self.line.clear();
        self.line.extend_from_slice(op.as_bytes());
        self.line.push(b' ');
        self.line.extend_from_slice(table.as_bytes());
        self.line.push(b' ');
        self.line.extend_from_slice(key.as_bytes());
    }

    fn push_fields(&mut self, fields: Fields<'_>) {
        self.line.extend_from_slice(b" [ ");
        match fields {
            Fields::All => self.line.extend_from_slice(b"<all fields>"),
            Fields::Only(names) => {
                for name in names {
                    self.line.extend_from_slice(name.as_bytes());
                    self.line.push(b' ');
                }
            }
        }
        self.line.extend_from_slice(b"]\n");
    }

    fn push_values(&mut self, values: &Record) {
        self.line.extend_from_slice(b" [ ");
        for field in values.iter() {
            self.line.extend_from_slice(field.name.as_bytes());
            self.line.push(b'=');
            self.line.extend_from_slice(field.value);
            self.line.push(b' ');
        }
        self.line.extend_from_slice(b"]\n");
    }

    fn fields_hash(&mut self, table: &str, key: &str, fields: Fields<'_>) -> i32 {
        let mut hash = java_hash(java_hash(0, table), key);
        if let Fields::Only(names) = fields {
            self.order.clear();
            self.order.extend(0..names.len());
            self.order
                .sort_unstable_by(|&a, &b| names[a].cmp(&names[b]));
            for &i in &self.order {
                hash = java_hash(hash, &names[i]);
            }
        }
        hash
    }

    fn values_hash(&mut self, table: &str, key: &str, values: &Record) -> i32 {
        let mut hash = java_hash(java_hash(0, table), key);
        self.order.clear();
        self.order.extend(0..values.len());
        let name = |i: usize| values.field(i).map_or("", |f| f.name);
        self.order.sort_unstable_by(|&a, &b| name(a).cmp(name(b)));
        for &i in &self.order {
            if let Some(field) = values.field(i) {
                hash = java_hash(hash, field.name);
                // Java hashes the value decoded as UTF-8 (malformed bytes
                // become U+FFFD).
                for chunk in field.value.utf8_chunks() {
                    hash = java_hash(hash, chunk.valid());
                    if !chunk.invalid().is_empty() {
                        hash = java_hash(hash, "\u{fffd}");
                    }
                }
            }
        }
        hash
    }

    fn finish(&mut self) {
        if !self.merged {
            self.merged = true;
            self.store.merge_counts(&mut self.uniques);
        }
    }
}

/// Continues Java's `String.hashCode` over `text`'s UTF-16 units, so that
/// hashing pieces one after another equals hashing their concatenation.
fn java_hash(mut hash: i32, text: &str) -> i32 {
    for unit in text.encode_utf16() {
        hash = hash.wrapping_mul(31).wrapping_add(i32::from(unit));
    }
    hash
}

impl StoreThread for BasicThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, _out: &mut Record) -> Status {
        if self.settings.silent {
            return Status::Ok;
        }
        self.delay();
        if self.settings.verbose {
            self.begin("READ", op.table, op.key);
            self.push_fields(op.fields);
            self.store.write(&self.line);
        }
        if self.settings.count {
            let hash = self.fields_hash(op.table, op.key, op.fields);
            self.uniques[READS].insert(hash);
        }
        Status::Ok
    }

    /// What [`read`](StoreThread::read) does, shown as the empty record it
    /// reads, without touching `scratch`.
    fn read_in_place(&mut self, op: &ReadOp<'_>, buf: &mut Record, visit: &mut Visit) -> Status {
        if !self.settings.silent {
            self.read(op, buf);
        }
        visit(RecordView::empty());
        Status::Ok
    }

    fn scan(&mut self, op: &ScanOp<'_>, _out: &mut ScanResult) -> Status {
        if self.settings.silent {
            return Status::Ok;
        }
        self.delay();
        if self.settings.verbose {
            self.begin("SCAN", op.table, op.start_key);
            // Writing to a Vec cannot fail.
            let _ = write!(self.line, " {}", op.count);
            self.push_fields(op.fields);
            self.store.write(&self.line);
        }
        if self.settings.count {
            let hash = self.fields_hash(op.table, op.start_key, op.fields);
            self.uniques[SCANS].insert(hash);
        }
        Status::Ok
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if self.settings.silent {
            return Status::Ok;
        }
        self.delay();
        if self.settings.verbose {
            self.begin("UPDATE", table, key);
            self.push_values(values);
            self.store.write(&self.line);
        }
        if self.settings.count {
            let hash = self.values_hash(table, key, values);
            self.uniques[UPDATES].insert(hash);
        }
        Status::Ok
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if self.settings.silent {
            return Status::Ok;
        }
        self.delay();
        if self.settings.verbose {
            self.begin("INSERT", table, key);
            self.push_values(values);
            self.store.write(&self.line);
        }
        if self.settings.count {
            let hash = self.values_hash(table, key, values);
            self.uniques[INSERTS].insert(hash);
        }
        Status::Ok
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        if self.settings.silent {
            return Status::Ok;
        }
        self.delay();
        if self.settings.verbose {
            self.begin("DELETE", table, key);
            self.line.push(b'\n');
            self.store.write(&self.line);
        }
        if self.settings.count {
            self.uniques[DELETES].insert(java_hash(java_hash(0, table), key));
        }
        Status::Ok
    }

    fn cleanup(&mut self) -> Result<(), StoreError> {
        self.finish();
        Ok(())
    }
}

impl Drop for BasicThread<'_> {
    fn drop(&mut self) {
        // A thread dropped without cleanup (a failed phase) still counts,
        // so the last thread's summary is complete.
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_matches_string_hash_code() {
        // Values of Java's "...".hashCode().
        assert_eq!(java_hash(0, ""), 0);
        assert_eq!(java_hash(0, "a"), 97);
        assert_eq!(java_hash(0, "usertableuser1"), 1_571_843_267);
        assert_eq!(java_hash(0, "usertableuser1field0abc"), 1_666_391_241);
        assert_eq!(
            java_hash(java_hash(0, "usertable"), "user1"),
            java_hash(0, "usertableuser1")
        );
        // A non-BMP character hashes as its two UTF-16 units.
        assert_eq!(java_hash(0, "\u{1f600}"), 0xD83D * 31 + 0xDE00);
    }
}
