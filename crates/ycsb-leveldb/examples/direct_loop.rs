//! The engine alone: a minimal loop calling LevelDB's C API directly,
//! doing the reads and writes of a YCSB load and run phase, to measure what
//! the `leveldb` store adds on top (`cargo xtask engine-bench`).
//!
//! It does what `ycsb -load -run -db leveldb -P workloads/workloada -P
//! leveldb/leveldb.properties` asks of the engine and nothing else: one
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
//! The engine options are those of `leveldb/leveldb.properties` (YCSB-cpp's
//! values), written out below.
//!
//! `cargo run --release -p ycsb-leveldb --example leveldb-direct-loop -- dir=/tmp/x
//!  recordcount=100000 operationcount=100000 threadcount=2 readproportion=0.5`
//!
//! Prints one `phase=<load|run> operations=<n> seconds=<s> throughput=<ops/s>
//! errors=<n> notfound=<n>` line per phase.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;

use leveldb_sys as sys;
use rand::Rng;
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

/// LevelDB's C objects: the database and the options it was opened with.
struct Db {
    db: *mut sys::leveldb_t,
    options: *mut sys::leveldb_options_t,
    cache: *mut sys::leveldb_cache_t,
    filter: *mut sys::leveldb_filterpolicy_t,
    read: *mut sys::leveldb_readoptions_t,
    write: *mut sys::leveldb_writeoptions_t,
}

// SAFETY: leveldb::DB is documented as safe for concurrent use without
// external synchronisation; the option objects are only read after open.
unsafe impl Sync for Db {}

extern "C" {
    // In LevelDB's C API since 1.21, missing from leveldb-sys 2.0.9.
    fn leveldb_options_set_max_file_size(o: *mut sys::leveldb_options_t, size: libc::size_t);
}

/// Takes a C error string: `Err` with its text when one was set.
fn check(err: *mut c_char) -> Result<(), String> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null errptr is a NUL-terminated string LevelDB
    // allocated; copied, then freed once.
    let text = unsafe { CStr::from_ptr(err) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: allocated by LevelDB, not used again.
    unsafe { sys::leveldb_free(err.cast::<c_void>()) };
    Err(text)
}

impl Db {
    /// Opens `dir` with `leveldb/leveldb.properties`, as the binding applies it.
    fn open(dir: &std::path::Path) -> Result<Db, String> {
        use std::os::unix::ffi::OsStrExt;
        let name = CString::new(dir.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: the create functions have no preconditions; every setter
        // gets a live object; the cache and filter outlive the database
        // (freed in Drop after close).
        unsafe {
            let options = sys::leveldb_options_create();
            let cache = sys::leveldb_cache_create_lru(134_217_728);
            let filter = sys::leveldb_filterpolicy_create_bloom(10);
            sys::leveldb_options_set_create_if_missing(options, 1);
            sys::leveldb_options_set_compression(options, sys::Compression::Snappy);
            sys::leveldb_options_set_write_buffer_size(options, 67_108_864);
            leveldb_options_set_max_file_size(options, 67_108_864);
            sys::leveldb_options_set_max_open_files(options, 1000);
            sys::leveldb_options_set_block_size(options, 4096);
            sys::leveldb_options_set_block_restart_interval(options, 16);
            sys::leveldb_options_set_cache(options, cache);
            sys::leveldb_options_set_filter_policy(options, filter);
            let read = sys::leveldb_readoptions_create();
            let write = sys::leveldb_writeoptions_create();
            let mut err = ptr::null_mut();
            let db = sys::leveldb_open(options, name.as_ptr(), &mut err);
            check(err)?;
            if db.is_null() {
                return Err("leveldb_open returned no database".into());
            }
            Ok(Db {
                db,
                options,
                cache,
                filter,
                read,
                write,
            })
        }
    }

    /// Reads `key`; `Ok(true)` when it exists.
    fn get(&self, key: &[u8]) -> Result<bool, String> {
        let mut len = 0;
        let mut err = ptr::null_mut();
        // SAFETY: live database and read options, `key` valid for its
        // length, valid out-pointers; a returned value is LevelDB's malloc'd
        // copy, freed once here.
        unsafe {
            let value = sys::leveldb_get(
                self.db,
                self.read,
                key.as_ptr().cast(),
                key.len(),
                &mut len,
                &mut err,
            );
            check(err)?;
            if value.is_null() {
                return Ok(false);
            }
            black_box(std::slice::from_raw_parts(value.cast::<u8>(), len));
            sys::leveldb_free(value.cast::<c_void>());
            Ok(true)
        }
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: live database and write options, slices valid for their
        // lengths (LevelDB copies them).
        unsafe {
            sys::leveldb_put(
                self.db,
                self.write,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut err,
            );
        }
        check(err)
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        // SAFETY: every object was created in `open` and is freed once, the
        // database first since it refers to the others.
        unsafe {
            sys::leveldb_close(self.db);
            sys::leveldb_readoptions_destroy(self.read);
            sys::leveldb_writeoptions_destroy(self.write);
            sys::leveldb_options_destroy(self.options);
            sys::leveldb_cache_destroy(self.cache);
            sys::leveldb_filterpolicy_destroy(self.filter);
        }
    }
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

fn load(db: &Db, s: &Settings, thread: usize) -> Counts {
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

fn run(db: &Db, s: &Settings, thread: usize) -> Counts {
    let mut rng = seeded_rng(s.seed, 1000 + thread as u64);
    let mut values = Values::new(&mut rng, s.value_len);
    let mut chooser = match ScrambledZipfian::new(0, s.records - 1) {
        Ok(c) => c,
        // records ≥ 1 was checked: the range is not empty.
        Err(e) => unreachable!("{e}"),
    };
    let mut key = String::with_capacity(32);
    let mut counts = Counts::default();
    let share = split_range(0, s.operations, thread, s.threads);
    for _ in share {
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

fn main() {
    let s = match parse_args() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("direct_loop: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&s.dir) {
        eprintln!("direct_loop: creating {}: {e}", s.dir.display());
        std::process::exit(1);
    }
    let db = match Db::open(&s.dir) {
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
