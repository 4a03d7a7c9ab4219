//! `ycsb bench`: db_bench's command line and output on any store.
//!
//! Flags are gflags-style as db_bench takes them (`--num=1000`, `--num
//! 1000`, `-num=1000`, `--histogram`, `--nohistogram`,
//! `--histogram=false`). Benchmark flags become
//! `ycsb_dbbench::Settings`; engine flags (`--cache_size`,
//! `--compression_type`, ...) become the store's properties
//! (`rocksdb.cache_size`, `leveldb.compression`, ...) with the flag as the
//! origin, so a bad value is reported naming the flag. `-P file` and `-p
//! key=value` set any other store property (`redis.host`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ycsb_db::{Origin, Properties, PropertyDecl, Store, StoreContext, StoreDescriptor, StoreError};
use ycsb_dbbench::{
    self as dbbench, BenchError, BenchOutcome, BenchmarkKind, IntervalReport, Progress, Settings,
};

use crate::args::PropertySource;
use crate::{build_properties, find_store, warn_unknown, Failure};

/// The store `ycsb bench` uses without `--db-engine`, as db_bench.
const DEFAULT_ENGINE: &str = "rocksdb";

/// One of db_bench's engine flags. Which property it sets is the store's
/// business: [`StoreDescriptor::dbbench_property`].
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
    "--use_existing_db",
    "--sync",
    "--disable_wal",
    "--statistics",
    "--mmap_read",
    "--mmap_write",
    "--use_direct_reads",
];

/// The parsed command line of `ycsb bench`.
#[derive(Debug)]
struct BenchArgs {
    engine: String,
    benchmarks: Vec<BenchmarkKind>,
    settings: Settings,
    use_existing_db: bool,
    /// Engine flags as given: (flag, value).
    engine_flags: Vec<(&'static str, String)>,
    sources: Vec<PropertySource>,
}

fn usage(message: impl std::fmt::Display) -> Failure {
    Failure::usage(message)
}

fn number<T: std::str::FromStr>(flag: &str, value: &str, what: &str) -> Result<T, Failure> {
    value
        .trim()
        .parse()
        .map_err(|_| usage(format!("{flag}: invalid value '{value}': expected {what}")))
}

/// db_bench's "negative means the default" counts.
fn count_or_default(flag: &str, value: &str) -> Result<Option<u64>, Failure> {
    let v: i64 = number(flag, value, "an integer")?;
    Ok(u64::try_from(v).ok())
}

fn boolean(flag: &str, value: &str) -> Result<bool, Failure> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(usage(format!(
            "{flag}: invalid value '{value}': expected true or false"
        ))),
    }
}

fn parse(args: Vec<String>) -> Result<Option<BenchArgs>, Failure> {
    let mut out = BenchArgs {
        engine: DEFAULT_ENGINE.to_string(),
        benchmarks: dbbench::parse_benchmarks("fillseq,fillrandom,overwrite,readrandom")
            .map_err(usage)?,
        settings: Settings::default(),
        use_existing_db: false,
        engine_flags: Vec::new(),
        sources: Vec::new(),
    };
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "-h" | "--help" | "-help" => return Ok(None),
            "-P" => {
                let file = it.next().ok_or_else(|| usage("flag -P needs a value"))?;
                out.sources.push(PropertySource::File(PathBuf::from(file)));
                continue;
            }
            "-p" => {
                let a = it.next().ok_or_else(|| usage("flag -p needs a value"))?;
                let (key, value) = a
                    .split_once('=')
                    .filter(|(k, _)| !k.trim().is_empty())
                    .ok_or_else(|| usage(format!("-p '{a}': expected key=value")))?;
                out.sources.push(PropertySource::Assignment {
                    flag: "-p",
                    key: key.trim().to_string(),
                    value: value.to_string(),
                });
                continue;
            }
            _ => {}
        }
        if !arg.starts_with('-') {
            return Err(usage(format!(
                "unexpected argument '{arg}' for 'ycsb bench' (flags are --name=value)"
            )));
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
        } else if known_flag(&dashed) {
            it.next()
                .ok_or_else(|| usage(format!("flag {dashed} needs a value")))?
        } else {
            String::new()
        };
        let flag = bool_flag.unwrap_or(dashed.as_str());
        apply(&mut out, flag, &value)?;
    }
    Ok(Some(out))
}

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
    "--stats_interval_seconds",
    "--seed",
    "--db-engine",
    "--db_engine",
    "--histogram",
    "--use_existing_db",
];

fn known_flag(flag: &str) -> bool {
    SETTING_FLAGS.contains(&flag) || ENGINE_FLAGS.iter().any(|f| f.flag == flag)
}

fn apply(out: &mut BenchArgs, flag: &str, value: &str) -> Result<(), Failure> {
    let s = &mut out.settings;
    match flag {
        "--benchmarks" => out.benchmarks = dbbench::parse_benchmarks(value).map_err(usage)?,
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
        "--stats_interval_seconds" => {
            let secs: u64 = number(flag, value, "an unsigned integer")?;
            s.stats_interval = (secs > 0).then(|| Duration::from_secs(secs));
        }
        "--histogram" => s.histogram = boolean(flag, value)?,
        "--use_existing_db" => out.use_existing_db = boolean(flag, value)?,
        "--db-engine" | "--db_engine" => {
            if value.is_empty() {
                return Err(usage(format!("flag {flag} needs a value")));
            }
            out.engine = value.to_string();
        }
        _ => match ENGINE_FLAGS.iter().find(|f| f.flag == flag) {
            Some(f) => out.engine_flags.push((f.flag, value.to_string())),
            None => {
                return Err(usage(format!(
                    "unknown flag '{flag}' for 'ycsb bench' (see 'ycsb bench --help')"
                )))
            }
        },
    }
    s.validate().map_err(usage)
}

/// Builds the store's properties: `-P`/`-p`, then the engine flags (and
/// db_bench's defaults for the flags not given).
fn store_properties(args: &BenchArgs, store: &StoreDescriptor) -> Result<Properties, Failure> {
    let mut props = build_properties(&args.sources)?;
    for f in ENGINE_FLAGS {
        let property = store.dbbench_property(f.flag);
        let given = args.engine_flags.iter().rev().find(|(n, _)| *n == f.flag);
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
            (None, Some(_)) => eprintln!(
                "ycsb bench: warning: {} has no meaning for store '{}'; ignored",
                f.flag, store.name
            ),
            (None, None) => {}
        }
    }
    if !store
        .dbbench_properties
        .iter()
        .any(|(p, _)| is_set(&props, store, p))
    {
        for (property, value) in store.dbbench_properties {
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
    Ok(props)
}

/// Whether `name` or one of its aliases (`rocksdb.dir`) is set.
fn is_set(props: &Properties, store: &StoreDescriptor, name: &str) -> bool {
    props.contains_key(name)
        || store
            .properties
            .iter()
            .filter(|d| d.name == name)
            .flat_map(|d| d.aliases.iter())
            .any(|a| props.contains_key(a))
}

fn open(
    descriptor: &StoreDescriptor,
    props: &Properties,
    fresh: bool,
) -> Result<Box<dyn Store>, Failure> {
    let mut props = props.clone();
    if fresh {
        for (property, value) in descriptor.fresh {
            props.set(*property, *value, Origin::Flag("--use_existing_db"));
        }
    }
    let output: ycsb_db::OutputSink = Arc::new(Mutex::new(std::io::stdout()));
    let context = StoreContext::new(&props).with_output(output);
    (descriptor.open)(&context).map_err(|e| match e {
        StoreError::Property(_) => usage(e),
        other => Failure::runtime(other),
    })
}

struct StderrProgress;

impl Progress for StderrProgress {
    fn interval(&self, report: &IntervalReport) {
        eprintln!("{report}");
    }
}

fn header(args: &BenchArgs, descriptor: &StoreDescriptor, store: &dyn Store) {
    let s = &args.settings;
    let info = store.engine_info();
    let engine = if info.name.is_empty() {
        String::new()
    } else {
        format!(" ({} {})", info.name, info.version)
    };
    let compressed = (s.value_size as f64 * s.compression_ratio + 0.5) as u64;
    let mb = |bytes: f64| bytes * s.num as f64 / 1_048_576.0;
    println!("Store:      {}{engine}", descriptor.name);
    println!(
        "Date:       {}",
        chrono::Local::now().format("%a %b %e %H:%M:%S %Y")
    );
    println!("Keys:       {} bytes each", s.key_size);
    println!(
        "Values:     {} bytes each ({compressed} bytes after compression)",
        s.value_size
    );
    println!("Entries:    {}", s.num);
    println!(
        "RawSize:    {:.1} MB (estimated)",
        mb((s.key_size + s.value_size) as f64)
    );
    println!(
        "FileSize:   {:.1} MB (estimated)",
        mb(s.key_size as f64 + s.value_size as f64 * s.compression_ratio)
    );
    println!("------------------------------------------------");
}

/// Runs `ycsb bench` with the arguments after `bench`.
pub fn run(args: Vec<String>) -> Result<u8, Failure> {
    let Some(mut args) = parse(args)? else {
        print!("{}", help_text());
        return Ok(0);
    };
    let descriptor = find_store(&args.engine)?;
    let props = store_properties(&args, &descriptor)?;
    let known: Vec<&PropertyDecl> = descriptor.properties.to_vec();
    warn_unknown(&props, &known);
    let fresh_possible = descriptor.can_start_fresh();
    if !fresh_possible && !args.use_existing_db {
        eprintln!(
            "ycsb bench: note: store '{}' cannot be emptied; benchmarks run on its existing data",
            descriptor.name
        );
    }
    let mut store = open(&descriptor, &props, !args.use_existing_db)?;
    // Whether the open store is empty and untouched, so that a fresh
    // benchmark need not reopen it.
    let mut untouched = !args.use_existing_db;
    if args.settings.seed == 0 {
        // db_bench derives a seed from the clock when --seed is 0.
        args.settings.seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_micros() as u64);
        println!("Set seed to {} because --seed was 0", args.settings.seed);
    }
    header(&args, &descriptor, store.as_ref());
    for &kind in &args.benchmarks {
        if kind.needs_fresh_db() {
            if args.use_existing_db {
                println!("{:<12} : skipped (--use_existing_db is true)", kind.name());
                continue;
            }
            if !untouched && fresh_possible {
                store.close().map_err(Failure::runtime)?;
                drop(store);
                store = open(&descriptor, &props, true)?;
            }
        }
        untouched = false;
        let outcome = dbbench::run(store.as_ref(), kind, &args.settings, &StderrProgress).map_err(
            |e| match e {
                BenchError::Invalid { .. } | BenchError::UnknownBenchmark { .. } => usage(e),
                other => Failure::runtime(other),
            },
        )?;
        args.settings.first_stream += dbbench::thread_streams(kind, &args.settings);
        match outcome {
            BenchOutcome::Measured(report) => {
                println!("{}", report.line());
                if let Some(h) = report.histogram_text() {
                    println!("{h}");
                }
            }
            BenchOutcome::Stats(text) => print!("{text}"),
            _ => {}
        }
    }
    store.close().map_err(Failure::runtime)?;
    Ok(0)
}

/// `ycsb bench --help`.
pub fn help_text() -> String {
    let names: Vec<&str> = BenchmarkKind::names().collect();
    let engine_flags: Vec<String> = ENGINE_FLAGS
        .iter()
        .map(|f| {
            let to: Vec<&str> = ycsb_stores::STORES
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

Benchmarks (--benchmarks, comma-separated; default fillseq,fillrandom,overwrite,readrandom):
  {names}

Benchmark flags (db_bench's names and defaults):
  --db-engine=<store>          the store (default rocksdb); 'ycsb stores' lists them
  --num=1000000                keys in the database
  --reads=-1 --writes=-1 --deletes=-1
                               operations per thread (negative: --num)
  --threads=1                  threads; every thread does the whole count, as db_bench
  --key_size=16                key digits (zero-padded decimal key numbers)
  --value_size=100             value bytes
  --compression_ratio=0.5      values compress to this fraction (db_bench's generator)
  --batch_size=1               writes per timed operation (separate writes: the store
                               contract has no atomic batch)
  --seek_nexts=0               records read after each seek (seekrandom)
  --histogram                  print latency histograms
  --stats_interval_seconds=0   per-thread progress lines on standard error
  --seed=0                     base seed (0: from the clock)
  --use_existing_db            keep the database; fill benchmarks are skipped

Engine flags (set the store's properties; warned about and ignored elsewhere):
{engine_flags}
  --compression_type defaults to snappy, as in db_bench.

Fill benchmarks start on an empty database where the store can give one
({fresh}); the others keep their data.
",
        names = names.join(", "),
        fresh = ycsb_stores::STORES
            .iter()
            .filter(|s| s.can_start_fresh())
            .map(|s| s.name)
            .collect::<Vec<_>>()
            .join(", "),
        engine_flags = engine_flags.join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> Result<BenchArgs, String> {
        parse(line.split_whitespace().map(String::from).collect())
            .map(|o| o.expect("not help"))
            .map_err(|f| f.message)
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
    }

    #[test]
    fn bad_flags_name_the_flag() {
        for (line, expected) in [
            ("--num=ten", "--num: invalid value 'ten'"),
            ("--num=0", "--num: must be at least 1"),
            ("--benchmarks=fillseq,bogus", "unknown benchmark 'bogus'"),
            ("--frobnicate=1", "unknown flag '--frobnicate'"),
            ("--histogram=maybe", "--histogram: invalid value 'maybe'"),
            ("--compression_ratio=2", "--compression_ratio"),
            ("--threads", "flag --threads needs a value"),
            ("stray", "unexpected argument 'stray'"),
            ("-p novalue", "-p 'novalue'"),
        ] {
            let err = parsed(line).expect_err(line);
            assert!(err.contains(expected), "{line}: {err}");
        }
    }

    #[test]
    fn engine_flags_become_properties_with_the_flag_as_origin() {
        let a = parsed("--cache_size=1024 --bloom_bits=-1 --disable_wal").unwrap();
        let rocks = ycsb_stores::find("rocksdb").unwrap();
        let p = store_properties(&a, &rocks).unwrap_or_else(|f| panic!("{}", f.message));
        assert_eq!(p.get_str("rocksdb.cache_size"), Some("1024"));
        assert_eq!(
            p.origin("rocksdb.cache_size"),
            Some(&Origin::Flag("--cache_size"))
        );
        assert!(!p.contains_key("rocksdb.bloom_bits"));
        assert_eq!(p.get_str("rocksdb.disable_wal"), Some("true"));
        assert_eq!(p.get_str("rocksdb.compression"), Some("snappy"));
        assert!(p.contains_key("rocksdb.dbname"));
    }
}
