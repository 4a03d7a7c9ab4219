//! The engine-independent half of the direct-engine loops
//! (`crates/ycsb-rocksdb/examples/direct_loop.rs`,
//! `crates/ycsb-leveldb/examples/direct_loop.rs`), which include this file:
//! settings, the load and run phases ycsb would drive, and the result line.
//! An engine only opens its database and implements [`DirectEngine`].
//!
//! The phases do what `ycsb -load -run -db <engine> -P workloads/workloada`
//! asks of the engine and nothing else: `threadcount` threads; the load
//! inserts `recordcount` records under Java YCSB's hashed `user<N>` keys,
//! each thread its contiguous share; the run draws `operationcount`
//! operations from ycsb's own run-phase streams for the seed (`seed=`,
//! `ycsb -p seed=`): keys from Java's scrambled zipfian over the loaded
//! records, so that the engine is asked for the very keys of a ycsb run
//! (`tests/direct_loop_keys.rs`), a read with probability
//! `readproportion` and otherwise an update: a read,
//! then the stored value written back with one field's bytes replaced, as
//! the bindings' read-modify-write of YCSB's one-field update does. Values
//! are records of `fieldcount` fields of `fieldlength` random bytes in
//! Java YCSB's layout (ycsb's own generator), encoded by the shared codec, so the engine stores the same bytes
//! as under ycsb: the same size and, what block compression notices, an
//! updated record that shares all but one field with its previous version
//! (whole new values made LevelDB's snappy find nothing to compress in
//! workload A, where ycsb's versions compress, a difference of 800 M
//! instructions of compaction in 200,000 operations). By default the
//! values are cut from a pool made before the phase, as db_bench does, so
//! that the loop is the engine alone; `values=fresh` makes new ones for
//! every insert and updated field, with ycsb's generator, as a YCSB load
//! and update must. There is no decoding,
//! no measurement and no status thread. The database stays open from the load into the run, as
//! `ycsb -load -run` keeps its store open across phases: the run then
//! reads the same memtable and level-0 tables in both programs (a reopen
//! would recover the log into a table first and change what reads touch).

use std::path::PathBuf;
use std::time::Instant;

use rand::Rng;
use ycsb_core::generator::{seeded_rng, NumberGenerator, Rng64, ScrambledZipfian};
use ycsb_core::internals::{
    build_key_name, fill_random_value, run_streams, split_range, KeyOrder, ValueRng,
};
use ycsb_db::{codec, Record};

/// What a loop needs from an engine: one database shared by the threads.
pub trait DirectEngine: Sync {
    /// Reads `key`; `Ok(true)` when it exists. With `copy_to`, the value is
    /// copied there (an update modifies it); without, it is only looked at.
    fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String>;
    /// Writes `value` at `key`.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String>;
    /// Called first on every loop thread: per-thread engine settings that
    /// the binding makes too (RocksDB's perf level), so that both do the
    /// same engine work.
    fn thread_start(&self) {}
    /// Compacts the whole key range (`compact=true`): a loaded database
    /// settled this way is the same starting state for every client that
    /// runs on a copy of it (`cargo xtask engine-bench --same-files`).
    fn compact(&self) -> Result<(), String>;
}

/// Random field bytes (ycsb's generator) a thread cuts its values from, as db_bench's
/// `RandomGenerator` does: generating values costs the loop next to nothing
/// while the engine sees incompressible-enough data.
const POOL_BYTES: usize = 1 << 20;

/// The loop's settings, from `name=value` arguments.
pub struct Settings {
    /// The database directory.
    pub dir: PathBuf,
    records: u64,
    operations: u64,
    threads: usize,
    read_proportion: f64,
    /// A record encoded by the shared codec, with `'x'` for every value.
    template: Vec<u8>,
    /// Where each field's value lies in `template`.
    spans: Vec<std::ops::Range<usize>>,
    seed: u64,
    /// Whether to load before the run (`load=false`: run on a database
    /// loaded earlier, so that a run phase can be compared with `ycsb -run`
    /// on the very same files).
    load: bool,
    /// Whether to compact the whole database between the load and the run.
    compact: bool,
    /// `values=fresh`: every insert and update gets new random values, as
    /// a YCSB load and Java's update make them (ycsb's own generator,
    /// `ValueRng`); `values=pool` (the default): cut from a pool made
    /// before the phase, as db_bench does, so the loop is the engine
    /// alone.
    fresh_values: bool,
}

/// Reads the settings from the command line; exits with status 2 and a
/// message on a bad argument.
pub fn settings() -> Settings {
    match parse_args(std::env::args().skip(1)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("direct_loop: {e}");
            std::process::exit(2);
        }
    }
}

/// The settings from `name=value` arguments (what [`settings`] reads from
/// the command line; `tests/direct_loop_keys.rs` passes its own).
///
/// # Errors
///
/// The message naming the bad argument.
pub fn parse_args(args: impl Iterator<Item = String>) -> Result<Settings, String> {
    let mut dir = None;
    let (mut records, mut operations, mut threads) = (1000u64, 1000u64, 1usize);
    let (mut read_proportion, mut fields, mut field_len, mut seed) =
        (0.5f64, 10usize, 100usize, 1u64);
    let (mut load, mut compact, mut fresh_values) = (true, false, false);
    for arg in args {
        let (name, value) = arg
            .split_once('=')
            .ok_or_else(|| format!("{arg}: expected name=value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{arg}: {e}");
        match name {
            "dir" => dir = Some(PathBuf::from(value)),
            "recordcount" => records = value.parse().map_err(|e| bad(&e))?,
            "operationcount" => operations = value.parse().map_err(|e| bad(&e))?,
            "threadcount" => threads = value.parse().map_err(|e| bad(&e))?,
            "readproportion" => read_proportion = value.parse().map_err(|e| bad(&e))?,
            "fieldcount" => fields = value.parse().map_err(|e| bad(&e))?,
            "fieldlength" => field_len = value.parse().map_err(|e| bad(&e))?,
            "seed" => seed = value.parse().map_err(|e| bad(&e))?,
            "load" => load = value.parse().map_err(|e| bad(&e))?,
            "compact" => compact = value.parse().map_err(|e| bad(&e))?,
            "values" => {
                fresh_values = match value {
                    "fresh" => true,
                    "pool" => false,
                    _ => return Err(format!("{arg}: expected values=fresh or values=pool")),
                }
            }
            _ => return Err(format!("{arg}: unknown setting")),
        }
    }
    if records == 0 || threads == 0 {
        return Err("recordcount and threadcount must be at least 1".into());
    }
    // What the binding stores: the record encoded by the shared codec,
    // field by field so that each value's place is known.
    let filler = vec![b'x'; field_len];
    let mut encoded = Vec::new();
    let mut spans = Vec::with_capacity(fields);
    for i in 0..fields {
        let mut one = Record::new();
        one.push(&format!("field{i}"), &filler);
        codec::encode(&one, &mut encoded);
        spans.push(encoded.len() - field_len..encoded.len());
    }
    Ok(Settings {
        dir: dir.ok_or("dir=<database directory> is required")?,
        records,
        operations,
        threads,
        read_proportion,
        template: encoded,
        spans,
        seed,
        load,
        compact,
        fresh_values,
    })
}

/// Distinct records in a thread's pool: records repeat after this many
/// inserts, too far apart to meet in one engine block.
const POOL_RECORDS: usize = 1024;

/// One thread's source of values: a pool of whole encoded records for
/// inserts, and random field bytes for the replaced field of an update;
/// with `values=fresh`, new values instead.
struct Values {
    records: Vec<u8>,
    record_len: usize,
    next_record: usize,
    bytes: Vec<u8>,
    at: usize,
    fresh: Option<Fresh>,
}

/// New values for every record and field (`values=fresh`), filled as the
/// workload fills them: the whole record's values in one call into a copy
/// of the encoded template, whose frames are then written back (the
/// fill's stores may run past each value).
struct Fresh {
    rng: ValueRng,
    record: Vec<u8>,
    /// Where each value starts in the record (`fill_at` takes a slice).
    starts: Vec<usize>,
    len: usize,
}

impl Fresh {
    /// The next record: new values in `s`'s template.
    fn record(&mut self, s: &Settings) -> &[u8] {
        self.rng.fill_at(&mut self.record, &self.starts, self.len);
        let mut at = 0;
        for span in &s.spans {
            self.record[at..span.start].copy_from_slice(&s.template[at..span.start]);
            at = span.end;
        }
        self.record[at..].copy_from_slice(&s.template[at..]);
        &self.record
    }
}

impl Values {
    fn new(rng: &mut Rng64, s: &Settings) -> Self {
        let record_len = s.template.len();
        // Fresh values need no pool.
        let pooled = if s.fresh_values { 0 } else { POOL_RECORDS };
        let mut records = Vec::with_capacity(pooled * record_len);
        let mut value = vec![0; s.spans.iter().map(|r| r.len()).max().unwrap_or(0)];
        for _ in 0..pooled {
            let start = records.len();
            records.extend_from_slice(&s.template);
            for span in &s.spans {
                fill_random_value(rng, &mut value[..span.len()]);
                records[start + span.start..start + span.end].copy_from_slice(&value[..span.len()]);
            }
        }
        let mut bytes = vec![0; if s.fresh_values { 0 } else { POOL_BYTES }];
        fill_random_value(rng, &mut bytes);
        // All fields have `fieldlength` bytes, as the workload's values.
        let len = s.spans.first().map_or(0, |r| r.len());
        let fresh = s.fresh_values.then(|| Fresh {
            rng: ValueRng::new(rng.random()),
            record: s.template.clone(),
            starts: s.spans.iter().map(|r| r.start).collect(),
            len,
        });
        Values {
            records,
            record_len,
            next_record: 0,
            bytes,
            at: 0,
            fresh,
        }
    }

    /// The next whole record to insert (a fresh one in `s`'s template).
    fn record(&mut self, s: &Settings) -> &[u8] {
        if let Some(fresh) = &mut self.fresh {
            return fresh.record(s);
        }
        let i = self.next_record;
        self.next_record = (i + 1) % POOL_RECORDS;
        &self.records[i * self.record_len..(i + 1) * self.record_len]
    }

    /// `len` fresh bytes for an updated field.
    fn field(&mut self, len: usize) -> &[u8] {
        // An odd stride keeps consecutive values from sharing their bytes.
        self.at = (self.at + 4099) % (POOL_BYTES - len.min(POOL_BYTES));
        &self.bytes[self.at..self.at + len]
    }
}

#[derive(Default)]
struct Counts {
    errors: u64,
    not_found: u64,
}

fn load(db: &impl DirectEngine, s: &Settings, thread: usize) -> Counts {
    db.thread_start();
    let mut rng = seeded_rng(s.seed, thread as u64);
    let mut values = Values::new(&mut rng, s);
    let mut key = String::with_capacity(32);
    let mut counts = Counts::default();
    for number in split_range(0, s.records, thread, s.threads) {
        build_key_name(number, KeyOrder::Hashed, 1, &mut key);
        if db.put(key.as_bytes(), values.record(s)).is_err() {
            counts.errors += 1;
        }
    }
    counts
}

fn run(db: &impl DirectEngine, s: &Settings, thread: usize) -> Counts {
    db.thread_start();
    // ycsb's streams for the thread, so that the engine is asked for the
    // very keys, in the same order, as by `ycsb -run -p seed=<seed>`
    // (and, in workload A, reads and updates the same records): the
    // engine's work is then the same to the instruction, and what differs
    // is the client alone. The values come from a stream of their own.
    let (mut rng, mut key_rng) = run_streams(s.seed, thread);
    let mut values = Values::new(&mut seeded_rng(s.seed, 1000 + thread as u64), s);
    // ycsb's (Java's) zipfian range: insertstart to insertstart +
    // insertcount, one past the last loaded record, which a read draws
    // again (no inserts are expected here).
    let mut chooser = match ScrambledZipfian::new(0, s.records) {
        Ok(c) => c,
        // records ≥ 1 was checked: the range is not empty.
        Err(e) => unreachable!("{e}"),
    };
    let mut key = String::with_capacity(32);
    let mut stored = Vec::with_capacity(s.template.len());
    let mut counts = Counts::default();
    for _ in split_range(0, s.operations, thread, s.threads) {
        // Java's `DiscreteGenerator` over {read, update}: one draw, read
        // first.
        let read = rng.random::<f64>() < s.read_proportion;
        let number = loop {
            let number = chooser.next_value(&mut key_rng);
            if number < s.records {
                break number;
            }
        };
        build_key_name(number, KeyOrder::Hashed, 1, &mut key);
        match db.get(key.as_bytes(), (!read).then_some(&mut stored)) {
            Ok(true) => {}
            Ok(false) => {
                counts.not_found += 1;
                continue;
            }
            Err(_) => {
                counts.errors += 1;
                continue;
            }
        }
        if read || s.spans.is_empty() {
            continue;
        }
        // YCSB's update: one field, chosen uniformly, gets a new value; the
        // rest of the record is written back as it was.
        // As ycsb's field chooser, `UniformLongGenerator` over the fields.
        let field = rng.random_range(0..=(s.spans.len() as u64 - 1)) as usize;
        let span = s.spans[field].clone();
        if let Some(field) = stored.get_mut(span.clone()) {
            match &mut values.fresh {
                Some(fresh) => fresh.rng.fill_values(field, span.len()),
                None => field.copy_from_slice(values.field(span.len())),
            }
        }
        if db.put(key.as_bytes(), &stored).is_err() {
            counts.errors += 1;
        }
    }
    counts
}

/// Runs the load (unless `load=false`), compacts (with `compact=true`),
/// then runs the run phase on `db`, printing one
/// `phase=<load|run> operations=<n> seconds=<s> throughput=<ops/s>
/// errors=<n> notfound=<n>` line per phase.
pub fn drive(db: &impl DirectEngine, s: &Settings) {
    for phase in ["load", "run"] {
        if phase == "load" && !s.load {
            continue;
        }
        if phase == "run" && s.compact {
            if let Err(e) = db.compact() {
                eprintln!("direct_loop: compacting {}: {e}", s.dir.display());
                std::process::exit(1);
            }
        }
        let started = Instant::now();
        let counts: Vec<Counts> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..s.threads)
                .map(|t| {
                    scope.spawn(move || {
                        if phase == "load" {
                            load(db, s, t)
                        } else {
                            run(db, s, t)
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        let operations = if phase == "load" {
            s.records
        } else {
            s.operations
        };
        let seconds = started.elapsed().as_secs_f64();
        let errors: u64 = counts.iter().map(|c| c.errors).sum();
        let not_found: u64 = counts.iter().map(|c| c.not_found).sum();
        println!(
            "phase={phase} operations={operations} seconds={seconds:.6} throughput={:.1} errors={errors} notfound={not_found}",
            operations as f64 / seconds
        );
    }
}

#[cfg(test)]
mod tests {
    //! The loop's records, checked in memory: each engine's example runs
    //! these (examples are tests under `cargo test --all-targets`), so the
    //! bench's yardstick is proved to store what ycsb stores.

    use std::collections::{HashMap, HashSet};
    use std::sync::Mutex;

    use ycsb_db::{codec, Fields, Record};

    use super::{drive, parse_args, DirectEngine, Settings, POOL_RECORDS};

    /// An engine of one map: what the loop writes, as it wrote it.
    #[derive(Default)]
    struct InMemory(Mutex<HashMap<Vec<u8>, Vec<u8>>>);

    impl DirectEngine for InMemory {
        fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String> {
            let map = self.0.lock().map_err(|e| e.to_string())?;
            match (map.get(key), copy_to) {
                (Some(value), Some(out)) => {
                    out.clear();
                    out.extend_from_slice(value);
                    Ok(true)
                }
                (found, _) => Ok(found.is_some()),
            }
        }

        fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
            let mut map = self.0.lock().map_err(|e| e.to_string())?;
            map.insert(key.to_vec(), value.to_vec());
            Ok(())
        }

        fn compact(&self) -> Result<(), String> {
            Ok(())
        }
    }

    fn settings(line: &str) -> Settings {
        parse_args(line.split_whitespace().map(str::to_string)).unwrap()
    }

    /// `engine` after the loop ran with the settings of `line`.
    fn driven(engine: InMemory, line: &str) -> InMemory {
        drive(&engine, &settings(line));
        engine
    }

    /// Every stored record decodes as the workload's: `fieldcount` fields
    /// named `field<i>` of `fieldlength` bytes. Returns the records.
    fn records_of(engine: &InMemory) -> Vec<Record> {
        let map = engine.0.lock().unwrap();
        map.values()
            .map(|bytes| {
                let mut record = Record::new();
                codec::decode(bytes, Fields::All, &mut record).unwrap();
                assert_eq!(record.len(), 10);
                for i in 0..10 {
                    let value = record.get(&format!("field{i}")).unwrap();
                    assert_eq!(value.len(), 100, "field{i}");
                }
                record
            })
            .collect()
    }

    #[test]
    fn fresh_values_are_whole_records_never_repeated() {
        let engine = driven(
            InMemory::default(),
            "dir=unused recordcount=3000 operationcount=3000 values=fresh",
        );
        let records = records_of(&engine);
        assert_eq!(records.len(), 3000);
        // Every field of every record is new: 30,000 distinct values
        // (two equal 100-byte random values have odds of about 2^-600).
        let values: HashSet<&[u8]> = records
            .iter()
            .flat_map(|r| (0..10).map(move |i| r.get(&format!("field{i}")).unwrap()))
            .collect();
        assert_eq!(values.len(), 30_000);
    }

    #[test]
    fn pooled_values_repeat_after_the_pool() {
        // Only a load: updates would replace fields with the pool's bytes.
        let engine = driven(
            InMemory::default(),
            "dir=unused recordcount=3000 operationcount=0",
        );
        let records = records_of(&engine);
        let firsts: HashSet<&[u8]> = records.iter().map(|r| r.get("field0").unwrap()).collect();
        assert_eq!(firsts.len(), POOL_RECORDS);
    }

    #[test]
    fn updates_replace_one_field_and_keep_the_frames() {
        for values in ["fresh", "pool"] {
            let engine = driven(
                InMemory::default(),
                &format!("dir=unused recordcount=500 operationcount=0 values={values}"),
            );
            let before: HashMap<Vec<u8>, Vec<u8>> = engine.0.lock().unwrap().clone();
            // Updates only: records stay decodable and differ from their
            // loaded version in the updated fields alone.
            let engine = driven(
                engine,
                &format!(
                    "dir=unused recordcount=500 operationcount=2000 readproportion=0 load=false values={values}"
                ),
            );
            let after = engine.0.lock().unwrap().clone();
            records_of(&engine);
            let (mut changed, mut fields_changed) = (0, 0);
            for (key, now) in &after {
                let (mut old, mut new) = (Record::new(), Record::new());
                codec::decode(&before[key], Fields::All, &mut old).unwrap();
                codec::decode(now, Fields::All, &mut new).unwrap();
                let differing = (0..10)
                    .filter(|i| {
                        let name = format!("field{i}");
                        old.get(&name) != new.get(&name)
                    })
                    .count();
                changed += usize::from(differing > 0);
                fields_changed += differing;
            }
            // The zipfian chooser returns to hot keys, so a record may
            // differ in several fields, but never in more than its updates.
            assert!(changed > 100, "{values}: {changed} records changed");
            assert!(
                fields_changed <= 2000,
                "{values}: {fields_changed} fields changed by 2000 updates"
            );
        }
    }
}
