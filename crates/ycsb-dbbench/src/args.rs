//! db_bench's command line: gflags-style flags (`--num=1000`, `--num
//! 1000`, `-num=1000`, `--histogram`, `--nohistogram`,
//! `--histogram=false`) into [`Settings`], and db_bench's engine flags
//! (`--cache_size`, `--compression_type`, ...) into a store's properties.
//!
//! Which property an engine flag sets is the store's business
//! ([`StoreDescriptor::dbbench_property`]): this module knows db_bench's
//! flags and defaults, never a store's property names. A property set from
//! a flag has the flag as its origin, so that a bad value is reported
//! naming the flag.

use std::path::PathBuf;
use std::time::Duration;

use ycsb_db::{Origin, Properties, StoreDescriptor};

use crate::{parse_benchmarks, BenchError, BenchmarkKind, Settings};

/// The store `ycsb bench` uses without `--db-engine`: db_bench's engine.
const DEFAULT_ENGINE: &str = "rocksdb";

/// db_bench's default `--benchmarks`.
const DEFAULT_BENCHMARKS: &str = "fillseq,fillrandom,overwrite,readrandom";

/// One of db_bench's engine flags.
struct EngineFlag {
    flag: &'static str,
    /// db_bench's default, applied when the flag is not given and differs
    /// from the binding's default.
    default: Option<&'static str>,
    /// The value meaning "the engine's default", passed as no property.
    unset: Option<&'static str>,
}

const fn flag(flag: &'static str) -> EngineFlag {
    EngineFlag {
        flag,
        default: None,
        unset: None,
    }
}

/// db_bench's engine flags.
const ENGINE_FLAGS: &[EngineFlag] = &[
    flag("--db"),
    flag("--cache_size"),
    EngineFlag {
        // db_bench's -1 means no filter (the table default).
        unset: Some("-1"),
        ..flag("--bloom_bits")
    },
    flag("--write_buffer_size"),
    EngineFlag {
        // db_bench compresses with snappy unless told otherwise; the
        // bindings default to none, as YCSB-cpp.
        default: Some("snappy"),
        ..flag("--compression_type")
    },
    flag("--sync"),
    flag("--disable_wal"),
    flag("--max_background_jobs"),
    flag("--max_write_buffer_number"),
    flag("--target_file_size_base"),
    flag("--max_bytes_for_level_base"),
    flag("--open_files"),
    flag("--level0_file_num_compaction_trigger"),
    flag("--level0_slowdown_writes_trigger"),
    flag("--level0_stop_writes_trigger"),
    flag("--block_size"),
    flag("--statistics"),
    flag("--mmap_read"),
    flag("--mmap_write"),
    flag("--use_direct_reads"),
    flag("--perf_level"),
];

/// Boolean flags: `--name`, `--noname`, `--name=true|false|1|0`.
const BOOL_FLAGS: &[&str] = &[
    "--histogram",
    "--compression",
    "--use_existing_db",
    "--sync",
    "--disable_wal",
    "--statistics",
    "--mmap_read",
    "--mmap_write",
    "--use_direct_reads",
    "--sine_mix_rate",
    "--sine_write_rate",
];

/// The flags that are not engine flags (they take a value unless boolean).
const SETTING_FLAGS: &[&str] = &[
    "--benchmarks",
    "--num",
    "--reads",
    "--writes",
    "--deletes",
    "--threads",
    "--key_size",
    "--value_size",
    "--compression_ratio",
    "--batch_size",
    "--seek_nexts",
    "--duration",
    "--benchmark_write_rate_limit",
    "--readwritepercent",
    "--mix_get_ratio",
    "--mix_put_ratio",
    "--mix_seek_ratio",
    "--mix_max_scan_len",
    "--mix_max_value_size",
    "--keyrange_dist_a",
    "--keyrange_dist_b",
    "--keyrange_dist_c",
    "--keyrange_dist_d",
    "--keyrange_num",
    "--key_dist_a",
    "--key_dist_b",
    "--value_theta",
    "--value_k",
    "--value_sigma",
    "--iter_theta",
    "--iter_k",
    "--iter_sigma",
    "--sine_a",
    "--sine_b",
    "--sine_c",
    "--sine_d",
    "--sine_mix_rate",
    "--sine_mix_rate_interval_milliseconds",
    "--sine_mix_rate_noise",
    "--sine_write_rate",
    "--sine_write_rate_interval_milliseconds",
    "--stats_interval_seconds",
    "--report_interval_seconds",
    "--report_file",
    "--seed",
    "--db-engine",
    "--db_engine",
    "--histogram",
    "--use_existing_db",
];

/// The flag of `ycsb bench` nearest to the unknown `flag`, if any is near
/// enough to be a misspelling of it.
fn nearest_flag(flag: &str) -> Option<String> {
    let known = SETTING_FLAGS
        .iter()
        .chain(BOOL_FLAGS)
        .copied()
        .chain(ENGINE_FLAGS.iter().map(|f| f.flag))
        .chain(["--help"]);
    ycsb_db::nearest_name(flag, known).map(str::to_string)
}

/// Whether `flag` (with two dashes) is one of db_bench's engine flags.
pub(crate) fn is_engine_flag(flag: &str) -> bool {
    ENGINE_FLAGS.iter().any(|f| f.flag == flag)
}

pub use ycsb_core::properties::PropertySource;

/// A command line that db_bench would not take.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArgsError {
    /// A flag that takes a value came last.
    #[error("flag {flag} needs a value")]
    MissingValue {
        /// The flag.
        flag: String,
    },
    /// A value the flag cannot take.
    #[error("{flag}: invalid value '{value}': expected {expected}")]
    InvalidValue {
        /// The flag.
        flag: String,
        /// The value given.
        value: String,
        /// What the flag takes.
        expected: &'static str,
    },
    /// A flag db_bench's vocabulary does not have.
    #[error(
        "unknown flag '{flag}' for 'ycsb bench'{} (see 'ycsb bench --help')",
        .nearest.as_ref().map(|n| format!("; did you mean '{n}'?")).unwrap_or_default()
    )]
    UnknownFlag {
        /// The flag, with two dashes.
        flag: String,
        /// The known flag nearest to it ([`ycsb_db::nearest_name`], the
        /// rule of unknown properties, stores and `ycsb` flags), if any is
        /// near enough.
        nearest: Option<String>,
    },
    /// A word that is not a flag.
    #[error("unexpected argument '{argument}' for 'ycsb bench' (flags are --name=value)")]
    Unexpected {
        /// The word.
        argument: String,
    },
    /// `-p` without `key=value`.
    #[error("-p '{assignment}': expected key=value")]
    Assignment {
        /// What followed `-p`.
        assignment: String,
    },
    /// An unknown benchmark or a setting out of range.
    #[error(transparent)]
    Settings(#[from] BenchError),
}

/// Something a caller should tell the user, about a command line that
/// still runs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Warning {
    /// An engine flag for a setting the store does not have.
    #[error("{flag} has no meaning for store '{store}'; ignored")]
    IgnoredFlag {
        /// The flag.
        flag: &'static str,
        /// The store's name.
        store: &'static str,
    },
}

/// db_bench's command line, validated: what to run, on which store, and
/// the engine flags that become the store's properties
/// ([`Args::store_properties`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Args {
    /// `--db-engine`: the store's name (default `rocksdb`, as db_bench).
    pub engine: String,
    /// `--benchmarks`, in order.
    pub benchmarks: Vec<BenchmarkKind>,
    /// The benchmark flags.
    pub settings: Settings,
    /// `--use_existing_db`: keep the database, skip the fill benchmarks.
    pub use_existing_db: bool,
    /// `--report_file` (`report.csv`): where the throughput samples of
    /// `--report_interval_seconds` go, as db_bench's CSV
    /// (`secs_elapsed,interval_qps`).
    pub report_file: PathBuf,
    /// `-P` and `-p`, in argv order: the store's other properties.
    pub property_sources: Vec<PropertySource>,
    /// Engine flags as given: (flag, value).
    engine_flags: Vec<(&'static str, String)>,
}

fn invalid(flag: &str, value: &str, expected: &'static str) -> ArgsError {
    ArgsError::InvalidValue {
        flag: flag.to_string(),
        value: value.to_string(),
        expected,
    }
}

fn number<T: std::str::FromStr>(
    flag: &str,
    value: &str,
    expected: &'static str,
) -> Result<T, ArgsError> {
    value
        .trim()
        .parse()
        .map_err(|_| invalid(flag, value, expected))
}

/// db_bench's "negative means the default" counts.
fn count_or_default(flag: &str, value: &str) -> Result<Option<u64>, ArgsError> {
    let v: i64 = number(flag, value, "an integer")?;
    Ok(u64::try_from(v).ok())
}

/// A finite floating-point number (gflags' `DEFINE_double`).
fn real(flag: &str, value: &str) -> Result<f64, ArgsError> {
    let v: f64 = number(flag, value, "a number")?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(invalid(flag, value, "a finite number"))
    }
}

fn boolean(flag: &str, value: &str) -> Result<bool, ArgsError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(invalid(flag, value, "true or false")),
    }
}

impl Args {
    /// Parses db_bench's flags (the arguments after `bench`); `None` when
    /// help was asked for.
    ///
    /// # Errors
    ///
    /// [`ArgsError`] for the first flag that is unknown, lacks its value or
    /// has a bad one, or that puts a setting out of range.
    pub fn parse<I>(argv: I) -> Result<Option<Self>, ArgsError>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let mut out = Args {
            engine: DEFAULT_ENGINE.to_string(),
            benchmarks: parse_benchmarks(DEFAULT_BENCHMARKS)?,
            settings: Settings::default(),
            use_existing_db: false,
            report_file: PathBuf::from("report.csv"),
            property_sources: Vec::new(),
            engine_flags: Vec::new(),
        };
        let mut it = argv.into_iter().map(Into::into);
        let missing = |flag: &str| ArgsError::MissingValue {
            flag: flag.to_string(),
        };
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "-h" | "--help" | "-help" => return Ok(None),
                "-P" => {
                    let file = it.next().ok_or_else(|| missing("-P"))?;
                    out.property_sources
                        .push(PropertySource::File(PathBuf::from(file)));
                    continue;
                }
                "-p" => {
                    let a = it.next().ok_or_else(|| missing("-p"))?;
                    let source = PropertySource::assignment("-p", &a)
                        .ok_or(ArgsError::Assignment { assignment: a })?;
                    out.property_sources.push(source);
                    continue;
                }
                _ => {}
            }
            if !arg.starts_with('-') {
                return Err(ArgsError::Unexpected { argument: arg });
            }
            // gflags accepts one or two dashes.
            let body = arg.trim_start_matches('-');
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let dashed = format!("--{name}");
            let bool_flag = BOOL_FLAGS
                .iter()
                .find(|f| **f == dashed)
                .or_else(|| {
                    name.strip_prefix("no")
                        .and_then(|n| BOOL_FLAGS.iter().find(|f| f[2..] == *n))
                        .filter(|_| inline.is_none())
                })
                .copied();
            let value = if let Some(flag) = bool_flag {
                let v = match &inline {
                    Some(v) => boolean(flag, v)?,
                    None => dashed == flag,
                };
                v.to_string()
            } else if let Some(v) = inline {
                v
            } else if SETTING_FLAGS.contains(&dashed.as_str()) || is_engine_flag(&dashed) {
                it.next().ok_or_else(|| missing(&dashed))?
            } else {
                String::new()
            };
            out.apply(bool_flag.unwrap_or(dashed.as_str()), &value)?;
        }
        // Checked once all flags are in: some limits involve several flags
        // (the mix ratios, --keyrange_num against --num), whatever their
        // order.
        out.settings.validate()?;
        Ok(Some(out))
    }

    fn apply(&mut self, flag: &str, value: &str) -> Result<(), ArgsError> {
        let s = &mut self.settings;
        match flag {
            "--benchmarks" => self.benchmarks = parse_benchmarks(value)?,
            "--num" => s.num = number(flag, value, "an unsigned integer")?,
            "--reads" => s.reads = count_or_default(flag, value)?,
            "--writes" => s.writes = count_or_default(flag, value)?,
            "--deletes" => s.deletes = count_or_default(flag, value)?,
            "--threads" => s.threads = number(flag, value, "an unsigned integer")?,
            "--key_size" => s.key_size = number(flag, value, "an unsigned integer")?,
            "--value_size" => s.value_size = number(flag, value, "an unsigned integer")?,
            "--compression_ratio" => s.compression_ratio = number(flag, value, "a number")?,
            "--batch_size" => s.batch_size = number(flag, value, "an unsigned integer")?,
            "--seek_nexts" => s.seek_nexts = number(flag, value, "an unsigned integer")?,
            "--seed" => s.seed = number(flag, value, "an unsigned integer")?,
            "--duration" => {
                // db_bench's int32: 0 (and a negative) means by count.
                let secs: i32 = number(flag, value, "an integer")?;
                s.duration = (secs > 0).then(|| Duration::from_secs(secs.unsigned_abs().into()));
            }
            "--benchmark_write_rate_limit" => {
                s.write_rate_limit = number(flag, value, "an unsigned integer")?;
            }
            "--readwritepercent" => {
                s.readwritepercent = number(flag, value, "an integer 0..=100")?;
            }
            "--mix_get_ratio" => s.mixgraph.get_ratio = real(flag, value)?,
            "--mix_put_ratio" => s.mixgraph.put_ratio = real(flag, value)?,
            "--mix_seek_ratio" => s.mixgraph.seek_ratio = real(flag, value)?,
            "--mix_max_scan_len" => {
                s.mixgraph.max_scan_len = number(flag, value, "an unsigned integer")?;
            }
            "--mix_max_value_size" => {
                s.mixgraph.max_value_size = number(flag, value, "an unsigned integer")?;
            }
            "--keyrange_dist_a" => s.mixgraph.keyrange_dist[0] = real(flag, value)?,
            "--keyrange_dist_b" => s.mixgraph.keyrange_dist[1] = real(flag, value)?,
            "--keyrange_dist_c" => s.mixgraph.keyrange_dist[2] = real(flag, value)?,
            "--keyrange_dist_d" => s.mixgraph.keyrange_dist[3] = real(flag, value)?,
            "--keyrange_num" => {
                s.mixgraph.keyrange_num = number(flag, value, "an unsigned integer")?;
            }
            "--key_dist_a" => s.mixgraph.key_dist[0] = real(flag, value)?,
            "--key_dist_b" => s.mixgraph.key_dist[1] = real(flag, value)?,
            "--value_theta" => s.mixgraph.value_pareto.theta = real(flag, value)?,
            "--value_k" => s.mixgraph.value_pareto.k = real(flag, value)?,
            "--value_sigma" => s.mixgraph.value_pareto.sigma = real(flag, value)?,
            "--iter_theta" => s.mixgraph.iter_pareto.theta = real(flag, value)?,
            "--iter_k" => s.mixgraph.iter_pareto.k = real(flag, value)?,
            "--iter_sigma" => s.mixgraph.iter_pareto.sigma = real(flag, value)?,
            "--sine_a" => s.mixgraph.sine[0] = real(flag, value)?,
            "--sine_b" => s.mixgraph.sine[1] = real(flag, value)?,
            "--sine_c" => s.mixgraph.sine[2] = real(flag, value)?,
            "--sine_d" => s.mixgraph.sine[3] = real(flag, value)?,
            "--sine_mix_rate" => s.mixgraph.sine_mix_rate = boolean(flag, value)?,
            "--sine_mix_rate_interval_milliseconds" => {
                s.mixgraph.sine_mix_rate_interval_ms = number(flag, value, "an unsigned integer")?;
            }
            "--sine_mix_rate_noise" => s.mixgraph.sine_mix_rate_noise = real(flag, value)?,
            "--sine_write_rate" => s.mixgraph.sine_write_rate = boolean(flag, value)?,
            "--sine_write_rate_interval_milliseconds" => {
                s.mixgraph.sine_write_rate_interval_ms =
                    number(flag, value, "an unsigned integer")?;
            }
            "--stats_interval_seconds" => {
                let secs: u64 = number(flag, value, "an unsigned integer")?;
                s.stats_interval = (secs > 0).then(|| Duration::from_secs(secs));
            }
            "--histogram" => s.histogram = boolean(flag, value)?,
            "--report_interval_seconds" => {
                let secs: u64 = number(flag, value, "an unsigned integer")?;
                s.report_interval = (secs > 0).then(|| Duration::from_secs(secs));
            }
            "--report_file" => {
                if value.is_empty() {
                    return Err(ArgsError::MissingValue {
                        flag: flag.to_string(),
                    });
                }
                self.report_file = PathBuf::from(value);
            }
            // LevelDB's db_bench: --compression=1 (snappy, its default) or 0.
            "--compression" => {
                let codec = if boolean(flag, value)? {
                    "snappy"
                } else {
                    "none"
                };
                self.engine_flags
                    .push(("--compression_type", codec.to_string()));
            }
            "--use_existing_db" => self.use_existing_db = boolean(flag, value)?,
            "--db-engine" | "--db_engine" => {
                if value.is_empty() {
                    return Err(ArgsError::MissingValue {
                        flag: flag.to_string(),
                    });
                }
                self.engine = value.to_string();
            }
            _ => match ENGINE_FLAGS.iter().find(|f| f.flag == flag) {
                Some(f) => self.engine_flags.push((f.flag, value.to_string())),
                None => {
                    return Err(ArgsError::UnknownFlag {
                        flag: flag.to_string(),
                        nearest: nearest_flag(flag),
                    })
                }
            },
        }
        Ok(())
    }

    /// Whether `--statistics` was given true: the caller prints the
    /// store's statistics after the run (db_bench's `STATISTICS:` block).
    pub fn statistics(&self) -> bool {
        self.engine_flags
            .iter()
            .rev()
            .find(|(flag, _)| *flag == "--statistics")
            .is_some_and(|(_, value)| value == "true")
    }

    /// db_bench's `--seed=0`: replaces a zero seed with one from the clock
    /// and returns it, for the caller to show (db_bench prints it).
    pub fn seed_from_clock(&mut self) -> Option<u64> {
        if self.settings.seed != 0 {
            return None;
        }
        self.settings.seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_micros() as u64);
        Some(self.settings.seed)
    }

    /// The properties to open `store` with: `base` (the store properties
    /// of [`property_sources`](Self::property_sources), which the caller
    /// reads), then the engine flags given and db_bench's defaults for
    /// those not given, the store's `dbbench_properties` unless the user
    /// set one of them, and a data directory under the temporary directory
    /// unless one is set.
    ///
    /// Engine flags the store has no setting for come back as warnings.
    pub fn store_properties(
        &self,
        store: &StoreDescriptor,
        base: Properties,
    ) -> (Properties, Vec<Warning>) {
        let mut props = base;
        let mut warnings = Vec::new();
        for f in ENGINE_FLAGS {
            let property = store.dbbench_property(f.flag);
            let given = self.engine_flags.iter().rev().find(|(n, _)| *n == f.flag);
            match (property, given) {
                (Some(p), Some((_, v))) if Some(v.as_str()) != f.unset => {
                    props.set(p, v.clone(), Origin::Flag(f.flag));
                }
                (Some(_), Some(_)) => {}
                (Some(p), None) => {
                    if let Some(d) = f.default {
                        if !is_set(&props, store, p) {
                            props.set(p, d, Origin::Flag(f.flag));
                        }
                    }
                }
                (None, Some(_)) => warnings.push(Warning::IgnoredFlag {
                    flag: f.flag,
                    store: store.name,
                }),
                (None, None) => {}
            }
        }
        // Each unless the user set it: a layout the user chose keeps the
        // engine defaults db_bench's command line asks for, and the reverse.
        for (property, value) in store.dbbench_properties {
            if !is_set(&props, store, property) {
                props.set(*property, *value, Origin::Api);
            }
        }
        if let Some(dir) = store.data_dir {
            if !props.is_set(dir) {
                // db_bench's default is /tmp/rocksdbtest-<uid>/dbbench.
                let path = std::env::temp_dir().join(format!("ycsb-dbbench-{}", store.name));
                props.set(dir.name, path.display().to_string(), Origin::Flag("--db"));
            }
        }
        (props, warnings)
    }
}

/// db_bench's `--use_existing_db=1` on a database that is not there is an
/// error (RocksDB's `create_if_missing` is off then), not a run on an
/// empty database created for it: the store's data directory (from its
/// descriptor) must exist. Stores without a data directory (servers, the
/// memory store) are not checked.
///
/// # Errors
///
/// [`BenchError::Invalid`] naming `--use_existing_db`, the directory and
/// the property (with its origin) that names it.
pub fn check_existing_db(
    use_existing_db: bool,
    store: &StoreDescriptor,
    props: &Properties,
) -> Result<(), BenchError> {
    let (true, Some(dir), Some(property)) =
        (use_existing_db, store.data_dir_in(props), store.data_dir)
    else {
        return Ok(());
    };
    if dir.exists() {
        return Ok(());
    }
    let origin = props
        .raw(property)
        .map(|r| format!("{}, {}", r.key, r.origin))
        .unwrap_or_else(|| property.name.to_string());
    Err(BenchError::Invalid {
        setting: "--use_existing_db",
        reason: format!(
            "the database {} ({origin}) does not exist; fill it first (a fill benchmark without --use_existing_db) or point --db at an existing one",
            dir.display()
        ),
    })
}

/// `props` with the store's properties that make it open an empty database
/// (for db_bench's fill benchmarks), which `--use_existing_db` turns off.
pub fn fresh_properties(store: &StoreDescriptor, props: &Properties) -> Properties {
    let mut props = props.clone();
    for (property, value) in store.fresh {
        props.set(*property, *value, Origin::Flag("--use_existing_db"));
    }
    props
}

/// Whether `name` or one of the aliases the store declares for it is set.
fn is_set(props: &Properties, store: &StoreDescriptor, name: &str) -> bool {
    props.contains_key(name)
        || store
            .properties
            .iter()
            .filter(|d| d.name == name)
            .flat_map(|d| d.aliases.iter())
            .any(|a| props.contains_key(a))
}

/// `ycsb bench --help`, listing for each engine flag the property it sets
/// on each of `stores`.
pub fn help_text(stores: &[StoreDescriptor]) -> String {
    let names: Vec<&str> = BenchmarkKind::names().collect();
    let engine_flags: Vec<String> = ENGINE_FLAGS
        .iter()
        .map(|f| {
            let to: Vec<&str> = stores
                .iter()
                .filter_map(|store| store.dbbench_property(f.flag))
                .collect();
            format!("  {:<38} {}", f.flag, to.join(", "))
        })
        .collect();
    format!(
        "ycsb bench: db_bench's benchmarks and output on any store

Usage:
  ycsb bench [--db-engine <store>] --benchmarks=<list> [--flag=value ...] [-P file] [-p k=v]

Benchmarks (--benchmarks, comma-separated; default {DEFAULT_BENCHMARKS}):
  {names}

Benchmark flags (db_bench's names and defaults):
  --db-engine=<store>          the store (default {DEFAULT_ENGINE}); 'ycsb stores' lists them
  --num=1000000                keys in the database
  --reads=-1 --writes=-1 --deletes=-1
                               operations per thread (negative: --num)
  --threads=1                  threads; every thread does the whole count, as db_bench
  --key_size=16                key digits (zero-padded decimal key numbers)
  --value_size=100             value bytes
  --compression_ratio=0.5      values compress to this fraction (db_bench's generator)
  --batch_size=1               writes per timed operation of the fills and deletes
                               (separate writes: the store contract has no atomic
                               batch); fillbatch always writes 1000 per batch
  --seek_nexts=0               records read after each seek (seekrandom)
  --duration=0                 seconds for the random benchmarks instead of their count
                               (checked every 1000 operations; not fillseq, fillbatch,
                               readseq, readreverse, deleteseq)
  --benchmark_write_rate_limit=0
                               bytes/s of key and value for all writers of a benchmark
                               (readwhilewriting's writer: its own limiter)
  --readwritepercent=90        readrandomwriterandom: reads in each 100 operations
  --statistics                 after the run, the engine's statistics (STATISTICS:);
                               on stores without them, warned about and ignored
  --histogram                  print latency histograms
  --stats_interval_seconds=0   per-thread progress lines on standard error
  --report_interval_seconds=0  every N seconds, the operations of all threads over the
                               interval to --report_file (db_bench's CSV:
                               secs_elapsed,interval_qps; the count, not divided by N)
  --report_file=report.csv     where --report_interval_seconds writes
  --seed=0                     base seed (0: from the clock)
  --use_existing_db            keep the database; fill benchmarks are skipped

mixgraph (db_bench's names and defaults; RocksDB wiki, \"RocksDB Trace, Replay,
Analyzer, and Workload Generation\"):
  --mix_get_ratio=1 --mix_put_ratio=0 --mix_seek_ratio=0   the query mix
  --mix_max_value_size=1024 --mix_max_scan_len=10000
  --key_dist_a=0 --key_dist_b=0                            key hotness a*x^b (0: uniform)
  --keyrange_dist_a/b/c/d=0 --keyrange_num=1               key-range hotness
                                                           a*exp(b*x)+c*exp(d*x)
  --value_theta=0 --value_k=0.2615 --value_sigma=25.45     value sizes (Pareto)
  --iter_theta=0 --iter_k=2.517 --iter_sigma=14.236        scan lengths (Pareto)
  --sine_a=1 --sine_b=1 --sine_c=0 --sine_d=1              QPS A*sin(B*x+C)+D
  --sine_mix_rate --sine_mix_rate_interval_milliseconds=10000
  --sine_mix_rate_noise=0                                  mixgraph's QPS follows the sine
  --sine_write_rate --sine_write_rate_interval_milliseconds=10000
                                                           the fills' write limit follows it

Engine flags (set the store's properties; warned about and ignored elsewhere):
{engine_flags}
  --db defaults to ycsb-dbbench-<store> in the temporary directory
  ({tmp}/ycsb-dbbench-rocksdb for rocksdb; db_bench's default is
  /tmp/rocksdbtest-<uid>/dbbench); each benchmark prints its \"DB path: [...]\" line.
  --compression_type defaults to snappy, as in db_bench; LevelDB's db_bench
  --compression=1|0 means --compression_type=snappy|none.

Fill benchmarks start on an empty database where the store can give one
({fresh}); the others keep their data.

Exit status: 0 done; 2 bad input (a misspelt flag or benchmark is answered
with the nearest one) or a store that cannot be used, one line, nothing run;
1 a failure while a benchmark ran.
",
        names = names.join(", "),
        fresh = stores
            .iter()
            .filter(|s| s.can_start_fresh())
            .map(|s| s.name)
            .collect::<Vec<_>>()
            .join(", "),
        engine_flags = engine_flags.join("\n"),
        tmp = std::env::temp_dir().display(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> Result<Args, String> {
        Args::parse(line.split_whitespace())
            .map(|o| o.expect("not help"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn gflags_forms() {
        let a = parsed(
            "--benchmarks=fillseq,readrandom -num 500 --reads=-1 -threads=2 --histogram \
             --nouse_existing_db --sync=false --cache_size=1048576 --db /tmp/x --db-engine memory",
        )
        .unwrap();
        assert_eq!(
            a.benchmarks,
            vec![BenchmarkKind::FillSeq, BenchmarkKind::ReadRandom]
        );
        assert_eq!(a.settings.num, 500);
        assert_eq!(a.settings.reads, None);
        assert_eq!(a.settings.threads, 2);
        assert!(a.settings.histogram && !a.use_existing_db);
        assert_eq!(a.engine, "memory");
        assert_eq!(
            a.engine_flags,
            vec![
                ("--sync", "false".to_string()),
                ("--cache_size", "1048576".to_string()),
                ("--db", "/tmp/x".to_string())
            ]
        );
        assert!(Args::parse(["--num=5", "--help"]).unwrap().is_none());
    }

    #[test]
    fn property_sources_keep_argv_order() {
        let a = parsed("-p a=1 -P f.properties -p b=x=y").unwrap();
        assert_eq!(
            a.property_sources,
            vec![
                PropertySource::Assignment {
                    flag: "-p",
                    key: "a".into(),
                    value: "1".into()
                },
                PropertySource::File("f.properties".into()),
                PropertySource::Assignment {
                    flag: "-p",
                    key: "b".into(),
                    value: "x=y".into()
                },
            ]
        );
    }

    #[test]
    fn bad_flags_name_the_flag() {
        for (line, expected) in [
            ("--num=ten", "--num: invalid value 'ten'"),
            ("--num=0", "--num: must be at least 1"),
            ("--benchmarks=fillseq,bogus", "unknown benchmark 'bogus'"),
            (
                "--frobnicate=1",
                "unknown flag '--frobnicate' for 'ycsb bench' (see",
            ),
            // Misspellings get the nearest flag, with either dash count.
            (
                "--threds=2",
                "unknown flag '--threds' for 'ycsb bench'; did you mean '--threads'?",
            ),
            ("-benchmark=fillseq", "did you mean '--benchmarks'?"),
            ("--cache_sise=1", "did you mean '--cache_size'?"),
            ("--db_engin=memory", "did you mean '--db_engine'?"),
            ("--histogram=maybe", "--histogram: invalid value 'maybe'"),
            ("--compression_ratio=2", "--compression_ratio"),
            ("--threads", "flag --threads needs a value"),
            ("--db-engine=", "flag --db-engine needs a value"),
            ("stray", "unexpected argument 'stray'"),
            ("-p novalue", "-p 'novalue'"),
            ("-P", "flag -P needs a value"),
            ("--duration=soon", "--duration: invalid value 'soon'"),
            ("--duration=99999999999", "--duration: invalid value"),
            (
                "--benchmark_write_rate_limit=-5",
                "--benchmark_write_rate_limit: invalid value '-5'",
            ),
            ("--readwritepercent=101", "--readwritepercent: must be 0..=100"),
            ("--mix_put_ratio=-1", "--mix_put_ratio: must be a finite number"),
            ("--mix_seek_ratio=inf", "--mix_seek_ratio: invalid value 'inf'"),
            (
                "--mix_get_ratio=0",
                "--mix_get_ratio: --mix_get_ratio, --mix_put_ratio and --mix_seek_ratio must not all be 0",
            ),
            ("--keyrange_num=0", "--keyrange_num: must be at least 1"),
            (
                "--num=10 --keyrange_num=20 --keyrange_dist_a=1",
                "--keyrange_num: must be at most --num",
            ),
            (
                "--keyrange_dist_a=1e-20 --keyrange_num=5",
                "--keyrange_dist_a: --keyrange_dist_a/b/c/d give no key range",
            ),
            ("--mix_max_scan_len=0", "--mix_max_scan_len: must be at least 1"),
            ("--sine_mix_rate_noise=2", "--sine_mix_rate_noise: must be 0..=1"),
            ("--sine_mix_rate=perhaps", "--sine_mix_rate: invalid value"),
            ("--value_k=x", "--value_k: invalid value 'x'"),
        ] {
            let err = parsed(line).expect_err(line);
            assert!(err.contains(expected), "{line}: {err}");
        }
    }

    #[test]
    fn run_control_and_mixgraph_flags() {
        let a = parsed(
            "--duration=5 --benchmark_write_rate_limit=1048576 --readwritepercent=70 \
             --mix_get_ratio=0.83 --mix_put_ratio=0.14 --mix_seek_ratio=0.03 \
             --keyrange_dist_a=14.18 --keyrange_dist_b=-2.917 --keyrange_dist_c=0.0164 \
             --keyrange_dist_d=-0.08082 --keyrange_num=30 --key_dist_a=0.002312 \
             --key_dist_b=0.3467 --value_theta=0 --value_k=0.2615 --value_sigma=25.45 \
             --iter_theta=0 --iter_k=2.517 --iter_sigma=14.236 --sine_a=1000 --sine_b=0.000073 \
             --sine_c=0 --sine_d=4500 --sine_mix_rate --sine_mix_rate_interval_milliseconds=5000 \
             --sine_mix_rate_noise=0.5 --nosine_write_rate --mix_max_scan_len=100 \
             --mix_max_value_size=512 --statistics",
        )
        .unwrap();
        let s = &a.settings;
        assert_eq!(s.duration, Some(Duration::from_secs(5)));
        assert_eq!(s.write_rate_limit, 1_048_576);
        assert_eq!(s.readwritepercent, 70);
        let m = &s.mixgraph;
        assert_eq!((m.get_ratio, m.put_ratio, m.seek_ratio), (0.83, 0.14, 0.03));
        assert_eq!(m.keyrange_dist, [14.18, -2.917, 0.0164, -0.08082]);
        assert_eq!(m.keyrange_num, 30);
        assert_eq!(m.key_dist, [0.002312, 0.3467]);
        assert_eq!(m.iter_pareto.sigma, 14.236);
        assert_eq!(m.sine, [1000.0, 0.000073, 0.0, 4500.0]);
        assert!(m.sine_mix_rate && !m.sine_write_rate);
        assert_eq!(m.sine_mix_rate_interval_ms, 5000);
        assert_eq!((m.max_scan_len, m.max_value_size), (100, 512));
        assert!(a.statistics());
        // db_bench's 0 (or negative) duration means "by count".
        assert_eq!(parsed("--duration=0").unwrap().settings.duration, None);
        assert_eq!(parsed("--duration=-3").unwrap().settings.duration, None);
        assert!(!parsed("--statistics=false").unwrap().statistics());
        // Flags checked together are order-independent.
        assert!(parsed("--mix_get_ratio=0 --mix_put_ratio=1").is_ok());
        assert!(parsed("--keyrange_num=20 --keyrange_dist_a=1 --num=100").is_ok());
    }

    #[test]
    fn zero_seed_comes_from_the_clock() {
        let mut a = parsed("--seed=0").unwrap();
        let seed = a.seed_from_clock().unwrap();
        assert!(seed != 0 && a.settings.seed == seed);
        assert_eq!(a.seed_from_clock(), None, "chosen once");
    }

    #[test]
    fn engine_flags_become_properties_with_the_flag_as_origin() {
        let a =
            parsed("--cache_size=1024 --bloom_bits=-1 --disable_wal --block_size=4096").unwrap();
        let rocks = ycsb_stores::find("rocksdb").unwrap();
        let (p, warnings) = a.store_properties(&rocks, Properties::new());
        assert_eq!(p.get_str("rocksdb.cache_size"), Some("1024"));
        assert_eq!(
            p.origin("rocksdb.cache_size"),
            Some(&Origin::Flag("--cache_size"))
        );
        assert!(!p.contains_key("rocksdb.bloom_bits"));
        assert_eq!(p.get_str("rocksdb.disable_wal"), Some("true"));
        assert_eq!(p.get_str("rocksdb.compression"), Some("snappy"));
        assert_eq!(p.get_str("rocksdb.format"), Some("raw"));
        assert!(p.contains_key("rocksdb.dbname"));
        assert_eq!(
            warnings,
            vec![Warning::IgnoredFlag {
                flag: "--block_size",
                store: "rocksdb"
            }]
        );
    }

    #[test]
    fn leveldb_db_bench_compression_flag() {
        let leveldb = ycsb_stores::find("leveldb").unwrap();
        for (line, codec) in [
            ("--compression=0", "none"),
            ("--compression=1", "snappy"),
            ("--nocompression", "none"),
            ("--compression", "snappy"),
        ] {
            let a = parsed(&format!("--db-engine=leveldb {line}")).unwrap();
            let (p, warnings) = a.store_properties(&leveldb, Properties::new());
            assert_eq!(p.get_str("leveldb.compression"), Some(codec), "{line}");
            assert!(warnings.is_empty(), "{line}: {warnings:?}");
        }
        assert!(parsed("--compression=2").is_err());
    }

    #[test]
    fn the_users_properties_win_over_db_bench_defaults() {
        let a = parsed("").unwrap();
        let rocks = ycsb_stores::find("rocksdb").unwrap();
        let mut base = Properties::new();
        base.set("rocksdb.compression", "zstd", Origin::Flag("-p"));
        base.set("rocksdb.format", "record", Origin::Flag("-p"));
        base.set("rocksdb.dir", "/somewhere", Origin::Flag("-p"));
        let (p, _) = a.store_properties(&rocks, base);
        assert_eq!(p.get_str("rocksdb.compression"), Some("zstd"));
        assert_eq!(p.get_str("rocksdb.format"), Some("record"));
        // The user's layout keeps db_bench's engine defaults.
        assert_eq!(p.get_str("rocksdb.dbbench_defaults"), Some("true"));
        let mut base = Properties::new();
        base.set("rocksdb.dbbench_defaults", "false", Origin::Flag("-p"));
        let (p, _) = a.store_properties(&rocks, base);
        assert_eq!(p.get_str("rocksdb.dbbench_defaults"), Some("false"));
        assert_eq!(p.get_str("rocksdb.format"), Some("raw"));
        let fresh = fresh_properties(&rocks, &p);
        assert_eq!(fresh.get_str("rocksdb.destroy"), Some("true"));
        assert!(!p.contains_key("rocksdb.destroy"));
    }

    #[test]
    fn help_lists_each_stores_property_for_each_flag() {
        let help = help_text(ycsb_stores::STORES);
        assert!(
            help.contains("rocksdb.cache_size, leveldb.cache_size"),
            "{help}"
        );
        for name in BenchmarkKind::names() {
            assert!(help.contains(name), "{name}");
        }
    }
}
