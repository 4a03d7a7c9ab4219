//! The engine alone: a minimal loop calling the `rocksdb` crate directly,
//! doing the reads and writes of a YCSB load and run phase, to measure what
//! the `rocksdb` store adds on top (`cargo xtask engine-bench`).
//!
//! It does what `ycsb -load -run -db rocksdb -P workloads/workloada -P
//! rocksdb/rocksdb.properties` asks of the engine and nothing else: one
//! database shared by `threadcount` threads; the load inserts `recordcount`
//! records under Java YCSB's hashed `user<N>` keys, each thread its
//! contiguous share; the run draws `operationcount` operations, keys from
//! the scrambled zipfian over the loaded records, a read with probability
//! `readproportion` and otherwise an update. Values have the encoded size of
//! a record of `fieldcount` fields of `fieldlength` random printable bytes
//! (the same bytes, so the same compressibility); an update reads the
//! record and writes a whole new value, as the binding's read-modify-write
//! does. There is no decoding, no measurement and no status thread.
//!
//! The engine options are those of `rocksdb/rocksdb.properties` (YCSB-cpp's
//! values), written out below.
//!
//! `cargo run --release -p ycsb-rocksdb --example rocksdb-direct-loop -- dir=/tmp/x
//!  recordcount=100000 operationcount=100000 threadcount=2 readproportion=0.5`
//!
//! Prints one `phase=<load|run> operations=<n> seconds=<s> throughput=<ops/s>
//! errors=<n> notfound=<n>` line per phase.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use rand::Rng;
use rocksdb::{BlockBasedOptions, Cache, DBCompressionType, Options, WriteOptions, DB};
use ycsb_core::generator::{seeded_rng, NumberGenerator, Rng64, ScrambledZipfian};
use ycsb_core::workload::{build_key_name, fill_random_printable, split_range, KeyOrder};
use ycsb_db::{codec, Record};

/// Random printable bytes a thread cuts its values from, as db_bench's
/// `RandomGenerator` does: generating values costs the loop next to nothing
/// while the engine sees incompressible-enough data.
const POOL_BYTES: usize = 1 << 20;

struct Settings {
    dir: PathBuf,
    records: u64,
    operations: u64,
    threads: usize,
    read_proportion: f64,
    value_len: usize,
    seed: u64,
}

fn parse_args() -> Result<Settings, String> {
    let mut dir = None;
    let (mut records, mut operations, mut threads) = (1000u64, 1000u64, 1usize);
    let (mut read_proportion, mut fields, mut field_len, mut seed) =
        (0.5f64, 10usize, 100usize, 1u64);
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
    })
}

/// `rocksdb/rocksdb.properties`, as the binding applies it.
fn options() -> Result<Options, rocksdb::Error> {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::Snappy);
    o.set_max_background_jobs(2);
    o.set_target_file_size_base(67_108_864);
    o.set_target_file_size_multiplier(1);
    o.set_max_bytes_for_level_base(268_435_456);
    o.set_write_buffer_size(67_108_864);
    o.set_max_write_buffer_number(2);
    o.set_max_open_files(-1);
    o.set_use_direct_io_for_flush_and_compaction(false);
    o.set_use_direct_reads(false);
    o.set_allow_mmap_writes(false);
    o.set_allow_mmap_reads(false);
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(&Cache::new_lru_cache(8_388_608)?);
    o.set_block_based_table_factory(&table);
    Ok(o)
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

fn report(phase: &str, operations: u64, started: Instant, counts: &[Counts]) {
    let seconds = started.elapsed().as_secs_f64();
    let errors: u64 = counts.iter().map(|c| c.errors).sum();
    let not_found: u64 = counts.iter().map(|c| c.not_found).sum();
    println!(
        "phase={phase} operations={operations} seconds={seconds:.6} throughput={:.1} errors={errors} notfound={not_found}",
        operations as f64 / seconds
    );
}

fn load(db: &DB, s: &Settings, thread: usize) -> Counts {
    let mut rng = seeded_rng(s.seed, thread as u64);
    let mut values = Values::new(&mut rng, s.value_len);
    let write = WriteOptions::default();
    let mut key = String::with_capacity(32);
    let mut counts = Counts::default();
    for number in split_range(0, s.records, thread, s.threads) {
        build_key_name(number, KeyOrder::Hashed, 1, &mut key);
        if db.put_opt(&key, values.next(), &write).is_err() {
            counts.errors += 1;
        }
    }
    counts
}

fn run(db: &DB, s: &Settings, thread: usize) -> Counts {
    let mut rng = seeded_rng(s.seed, 1000 + thread as u64);
    let mut values = Values::new(&mut rng, s.value_len);
    let mut chooser = match ScrambledZipfian::new(0, s.records - 1) {
        Ok(c) => c,
        // records ≥ 1 was checked: the range is not empty.
        Err(e) => unreachable!("{e}"),
    };
    let write = WriteOptions::default();
    let mut key = String::with_capacity(32);
    let mut counts = Counts::default();
    let share = split_range(0, s.operations, thread, s.threads);
    for _ in share {
        let read = rng.random::<f64>() < s.read_proportion;
        build_key_name(chooser.next_value(&mut rng), KeyOrder::Hashed, 1, &mut key);
        match db.get_pinned(&key) {
            Ok(Some(v)) => {
                black_box(&*v);
            }
            Ok(None) => {
                counts.not_found += 1;
                continue;
            }
            Err(_) => {
                counts.errors += 1;
                continue;
            }
        }
        if !read && db.put_opt(&key, values.next(), &write).is_err() {
            counts.errors += 1;
        }
    }
    counts
}

fn main() {
    let s = match parse_args() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("direct_loop: {e}");
            std::process::exit(2);
        }
    };
    let db = match options().and_then(|o| DB::open(&o, &s.dir)) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("direct_loop: opening {}: {e}", s.dir.display());
            std::process::exit(1);
        }
    };
    for phase in ["load", "run"] {
        let started = Instant::now();
        let counts: Vec<Counts> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..s.threads)
                .map(|t| {
                    let (db, s) = (&db, &s);
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
        report(phase, operations, started, &counts);
    }
}
