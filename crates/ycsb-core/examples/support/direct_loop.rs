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
//! operations, keys from the scrambled zipfian over the loaded records, a
//! read with probability `readproportion` and otherwise an update (a read,
//! then a whole new value, as the bindings' read-modify-write). Values have
//! the encoded size of a record of `fieldcount` fields of `fieldlength`
//! random printable bytes. There is no decoding, no measurement and no
//! status thread. The database stays open from the load into the run, as
//! `ycsb -load -run` keeps its store open across phases: the run then
//! reads the same memtable and level-0 tables in both programs (a reopen
//! would recover the log into a table first and change what reads touch).

use std::path::PathBuf;
use std::time::Instant;

use rand::Rng;
use ycsb_core::generator::{seeded_rng, NumberGenerator, Rng64, ScrambledZipfian};
use ycsb_core::workload::{build_key_name, fill_random_printable, split_range, KeyOrder};
use ycsb_db::{codec, Record};

/// What a loop needs from an engine: one database shared by the threads.
pub trait DirectEngine: Sync {
    /// Reads `key`; `Ok(true)` when it exists.
    fn get(&self, key: &[u8]) -> Result<bool, String>;
    /// Writes `value` at `key`.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String>;
    /// Called first on every loop thread: per-thread engine settings that
    /// the binding makes too (RocksDB's perf level), so that both do the
    /// same engine work.
    fn thread_start(&self) {}
}

/// Random printable bytes a thread cuts its values from, as db_bench's
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
    value_len: usize,
    seed: u64,
    /// Whether to load before the run (`load=false`: run on a database
    /// loaded earlier, so that a run phase can be compared with `ycsb -run`
    /// on the very same files).
    load: bool,
}

/// Reads the settings from the command line; exits with status 2 and a
/// message on a bad argument.
pub fn settings() -> Settings {
    match parse_args() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("direct_loop: {e}");
            std::process::exit(2);
        }
    }
}

fn parse_args() -> Result<Settings, String> {
    let mut dir = None;
    let (mut records, mut operations, mut threads) = (1000u64, 1000u64, 1usize);
    let (mut read_proportion, mut fields, mut field_len, mut seed) =
        (0.5f64, 10usize, 100usize, 1u64);
    let mut load = true;
    for arg in std::env::args().skip(1) {
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
            _ => return Err(format!("{arg}: unknown setting")),
        }
    }
    if records == 0 || threads == 0 {
        return Err("recordcount and threadcount must be at least 1".into());
    }
    // The size the binding stores: the record encoded by the shared codec.
    let mut record = Record::new();
    let filler = vec![b'x'; field_len];
    for i in 0..fields {
        record.push(&format!("field{i}"), &filler);
    }
    let mut encoded = Vec::new();
    codec::encode(&record, &mut encoded);
    Ok(Settings {
        dir: dir.ok_or("dir=<database directory> is required")?,
        records,
        operations,
        threads,
        read_proportion,
        value_len: encoded.len(),
        seed,
        load,
    })
}

/// One thread's source of values.
struct Values {
    pool: Vec<u8>,
    at: usize,
    len: usize,
}

impl Values {
    fn new(rng: &mut Rng64, len: usize) -> Self {
        let mut pool = vec![0; POOL_BYTES + len];
        fill_random_printable(rng, &mut pool);
        Values { pool, at: 0, len }
    }

    fn next(&mut self) -> &[u8] {
        // An odd stride keeps consecutive values from sharing their bytes.
        self.at = (self.at + 4099) % POOL_BYTES;
        &self.pool[self.at..self.at + self.len]
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
    let mut values = Values::new(&mut rng, s.value_len);
    let mut key = String::with_capacity(32);
    let mut counts = Counts::default();
    for number in split_range(0, s.records, thread, s.threads) {
        build_key_name(number, KeyOrder::Hashed, 1, &mut key);
        if db.put(key.as_bytes(), values.next()).is_err() {
            counts.errors += 1;
        }
    }
    counts
}

fn run(db: &impl DirectEngine, s: &Settings, thread: usize) -> Counts {
    db.thread_start();
    let mut rng = seeded_rng(s.seed, 1000 + thread as u64);
    let mut values = Values::new(&mut rng, s.value_len);
    let mut chooser = match ScrambledZipfian::new(0, s.records - 1) {
        Ok(c) => c,
        // records ≥ 1 was checked: the range is not empty.
        Err(e) => unreachable!("{e}"),
    };
    let mut key = String::with_capacity(32);
    let mut counts = Counts::default();
    for _ in split_range(0, s.operations, thread, s.threads) {
        let read = rng.random::<f64>() < s.read_proportion;
        build_key_name(chooser.next_value(&mut rng), KeyOrder::Hashed, 1, &mut key);
        match db.get(key.as_bytes()) {
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
        if !read && db.put(key.as_bytes(), values.next()).is_err() {
            counts.errors += 1;
        }
    }
    counts
}

/// Runs the load (unless `load=false`), then the run phase on `db`, printing one
/// `phase=<load|run> operations=<n> seconds=<s> throughput=<ops/s>
/// errors=<n> notfound=<n>` line per phase.
pub fn drive(db: &impl DirectEngine, s: &Settings) {
    for phase in ["load", "run"] {
        if phase == "load" && !s.load {
            continue;
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
