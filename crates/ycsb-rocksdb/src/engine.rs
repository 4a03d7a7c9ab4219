//! Opening the engine from settings, its merge operator, and what it tells
//! about itself (version, gauges).

use std::path::{Path, PathBuf};

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType, Env, MergeOperands,
    Options, DB,
};
use ycsb_db::{
    codec, Content, DataDir, DirLayout, DirSetting, EngineFile, EngineLock, Fields, Gauge,
    GaugeKind, LockKind, Name, Record, StoreError,
};

use crate::config::{
    CompactionPri, Compression, EngineOptions, InfoLogLevel, RocksConfig, Tuning, DBNAME,
};

/// The merge operator's name, as YCSB-cpp's, recorded by RocksDB in the
/// OPTIONS file.
const MERGE_OPERATOR_NAME: &str = "YCSBUpdateMerge";

/// RocksDB's own default block cache size, given to options loaded from a
/// file (the file cannot hold a cache).
const DEFAULT_BLOCK_CACHE: usize = 8 << 20;

/// YCSB-cpp calls `IncreaseParallelism()` and `OptimizeLevelStyleCompaction()`
/// with their C++ default arguments.
const PARALLELISM: i32 = 16;
const LEVEL_STYLE_MEMTABLE_BUDGET: usize = 512 << 20;

/// Integer properties sampled as gauges, with what each measures.
const INT_GAUGES: &[(&str, GaugeKind)] = &[
    ("rocksdb.estimate-num-keys", GaugeKind::Count),
    (
        "rocksdb.estimate-pending-compaction-bytes",
        GaugeKind::Bytes,
    ),
    ("rocksdb.cur-size-all-mem-tables", GaugeKind::Bytes),
    ("rocksdb.size-all-mem-tables", GaugeKind::Bytes),
    ("rocksdb.num-immutable-mem-table", GaugeKind::Count),
    ("rocksdb.num-running-flushes", GaugeKind::Count),
    ("rocksdb.num-running-compactions", GaugeKind::Count),
    ("rocksdb.compaction-pending", GaugeKind::Flag),
    ("rocksdb.live-sst-files-size", GaugeKind::Bytes),
    ("rocksdb.total-sst-files-size", GaugeKind::Bytes),
    ("rocksdb.block-cache-usage", GaugeKind::Bytes),
    (
        "rocksdb.actual-delayed-write-rate",
        GaugeKind::BytesPerSecond,
    ),
    ("rocksdb.is-write-stopped", GaugeKind::Flag),
];

pub(crate) struct Opened {
    pub(crate) db: DB,
    pub(crate) options: Options,
    pub(crate) dir: DataDir,
}

/// Whether a file starts with a record of RocksDB's log format (types 1
/// to 4, or 5 to 8 for recyclable logs).
fn is_log_record(start: &[u8]) -> bool {
    ycsb_db::is_log_record(start, 8)
}

/// Whether a file is RocksDB's `IDENTITY`: a UUID (36 characters of hex
/// digits and dashes), perhaps with a newline.
fn is_identity(start: &[u8]) -> bool {
    let id = start.strip_suffix(b"\n").unwrap_or(start);
    id.len() == 36 && id.iter().all(|b| b.is_ascii_hexdigit() || *b == b'-')
}

/// What a RocksDB directory holds. `IDENTITY` (a UUID, written first when
/// a database is created) and the OPTIONS files (which start with RocksDB's
/// own comment) make it RocksDB's; `CURRENT` and the numbered logs, tables
/// and blob files are accepted only beside them, since LevelDB writes the
/// same names (RocksDB would rewrite a LevelDB database so that LevelDB
/// could no longer read it). `LOCK` is empty and RocksDB holds a record
/// lock on it while a process has the database open.
pub(crate) const LAYOUT: DirLayout = DirLayout {
    engine: "RocksDB",
    files: &[
        EngineFile::marker(Name::Exact("IDENTITY"), Content::Check(is_identity)),
        EngineFile::marker(
            Name::Numbered("OPTIONS-", ""),
            Content::Prefix(b"# This is a RocksDB option file."),
        ),
        EngineFile::owned(Name::Exact("CURRENT"), Content::Unchecked),
        EngineFile::owned(Name::Exact("LOCK"), Content::Empty),
        EngineFile::owned(Name::Exact("LOG"), Content::Check(ycsb_db::is_dated_log)),
        EngineFile::owned(
            Name::Prefix("LOG.old."),
            Content::Check(ycsb_db::is_dated_log),
        ),
        EngineFile::owned(Name::Prefix("MANIFEST-"), Content::Check(is_log_record)),
        EngineFile::owned(Name::Numbered("", ".log"), Content::Unchecked),
        EngineFile::owned(Name::Numbered("", ".sst"), Content::Unchecked),
        EngineFile::owned(Name::Numbered("", ".blob"), Content::Unchecked),
        EngineFile::owned(Name::Numbered("", ".dbtmp"), Content::Unchecked),
        EngineFile::owned(Name::Numbered("OPTIONS-", ".dbtmp"), Content::Unchecked),
        EngineFile::owned(Name::Exact("archive"), Content::Tree),
    ],
    locks: &[EngineLock {
        file: "LOCK",
        kind: LockKind::Record,
    }],
};

fn open_error(config: &RocksConfig, doing: &str, message: impl std::fmt::Display) -> StoreError {
    StoreError::Open {
        store: "rocksdb".into(),
        message: format!("{doing} {}: {message}", config.path.display()),
    }
}

/// Opens the database `config` describes (its directory set at `origin`),
/// destroying it first if asked.
pub(crate) fn open(config: &RocksConfig, origin: &str) -> Result<Opened, StoreError> {
    let (mut options, families) = match &config.engine {
        EngineOptions::Properties(tuning) if config.dbbench_defaults => dbbench_options(tuning)?,
        EngineOptions::Properties(tuning) if tuning.compaction_pri.is_some() => {
            text_tuned_options(tuning)?
        }
        EngineOptions::Properties(tuning) => (tuned_options(tuning)?, Vec::new()),
        EngineOptions::File(file) => load_options_file(file)?,
    };
    options.create_if_missing(true);
    if config.statistics {
        options.enable_statistics();
    }
    if let Some(level) = config.info_log_level {
        options.set_log_level(match level {
            InfoLogLevel::Debug => rocksdb::LogLevel::Debug,
            InfoLogLevel::Info => rocksdb::LogLevel::Info,
            InfoLogLevel::Warn => rocksdb::LogLevel::Warn,
            InfoLogLevel::Error => rocksdb::LogLevel::Error,
            InfoLogLevel::Fatal => rocksdb::LogLevel::Fatal,
            InfoLogLevel::Header => rocksdb::LogLevel::Header,
        });
    }
    if let (EngineOptions::Properties(_), false, true) =
        (&config.engine, config.dbbench_defaults, families.is_empty())
    {
        // Installed whatever rocksdb.mergeupdate says, so that a database
        // loaded with merge updates stays readable without them.
        options.set_merge_operator_associative(MERGE_OPERATOR_NAME, merge_fields);
    }
    let setting = DirSetting::new(DBNAME.name(), &config.path, origin, config.destroy);
    let dir = DataDir::open("rocksdb", &LAYOUT, &setting)?;
    // The default column family is opened by name (as a plain open does
    // without naming it) so that its handle is there for the batched
    // multi-get of `batch.size` reads.
    let families = if families.is_empty() {
        vec![ColumnFamilyDescriptor::new(
            rocksdb::DEFAULT_COLUMN_FAMILY_NAME,
            options.clone(),
        )]
    } else {
        families
    };
    let db = DB::open_cf_descriptors(&options, &config.path, families)
        .map_err(|e| open_error(config, "opening", e))?;
    Ok(Opened { db, options, dir })
}

fn cache(size: usize) -> Result<Cache, StoreError> {
    Cache::new_lru_cache(size).map_err(|e| StoreError::Other(format!("rocksdb block cache: {e}")))
}

/// RocksDB's name of a compaction priority, as OPTIONS files spell it.
fn compaction_pri_name(pri: CompactionPri) -> Option<&'static str> {
    match pri {
        CompactionPri::Default => None,
        CompactionPri::ByCompensatedSize => Some("kByCompensatedSize"),
        CompactionPri::OldestLargestSeqFirst => Some("kOldestLargestSeqFirst"),
        CompactionPri::OldestSmallestSeqFirst => Some("kOldestSmallestSeqFirst"),
        CompactionPri::MinOverlappingRatio => Some("kMinOverlappingRatio"),
        CompactionPri::RoundRobin => Some("kRoundRobin"),
    }
}

/// Options from the tuning properties, applied in YCSB-cpp's order.
fn tuned_options(t: &Tuning) -> Result<Options, StoreError> {
    let mut o = Options::default();
    o.set_compression_type(match t.compression {
        Compression::No => DBCompressionType::None,
        Compression::Snappy => DBCompressionType::Snappy,
        Compression::Zlib => DBCompressionType::Zlib,
        Compression::Bzip2 => DBCompressionType::Bz2,
        Compression::Lz4 => DBCompressionType::Lz4,
        Compression::Lz4hc => DBCompressionType::Lz4hc,
        Compression::Zstd => DBCompressionType::Zstd,
    });
    if let Some(v) = t.max_background_jobs {
        o.set_max_background_jobs(v);
    }
    if let Some(v) = t.target_file_size_base {
        o.set_target_file_size_base(v);
    }
    if let Some(v) = t.target_file_size_multiplier {
        o.set_target_file_size_multiplier(v);
    }
    if let Some(v) = t.max_bytes_for_level_base {
        o.set_max_bytes_for_level_base(v);
    }
    if let Some(v) = t.write_buffer_size {
        o.set_write_buffer_size(v);
    }
    if let Some(v) = t.max_write_buffer_number {
        o.set_max_write_buffer_number(v);
    }
    if let Some(v) = t.max_open_files {
        o.set_max_open_files(v);
    }
    if let Some(v) = t.level0_file_num_compaction_trigger {
        o.set_level_zero_file_num_compaction_trigger(v);
    }
    if let Some(v) = t.level0_slowdown_writes_trigger {
        o.set_level_zero_slowdown_writes_trigger(v);
    }
    if let Some(v) = t.level0_stop_writes_trigger {
        o.set_level_zero_stop_writes_trigger(v);
    }
    o.set_use_direct_io_for_flush_and_compaction(t.use_direct_io_for_flush_and_compaction);
    o.set_use_direct_reads(t.use_direct_reads);
    o.set_allow_mmap_writes(t.allow_mmap_writes);
    o.set_allow_mmap_reads(t.allow_mmap_reads);

    let mut table = BlockBasedOptions::default();
    if let Some(size) = t.cache_size {
        table.set_block_cache(&cache(size)?);
    }
    if let Some(size) = t.compressed_cache_size {
        table.set_block_cache_compressed(&cache(size)?);
    }
    if let Some(bits) = t.bloom_bits {
        table.set_bloom_filter(f64::from(bits), false);
    }
    o.set_block_based_table_factory(&table);

    if t.increase_parallelism {
        o.increase_parallelism(PARALLELISM);
    }
    if t.optimize_level_style_compaction {
        o.optimize_level_style_compaction(LEVEL_STYLE_MEMTABLE_BUDGET);
    }
    Ok(o)
}

/// db_bench's defaults where they differ from the library's, as
/// `tools/db_bench_tool.cc` of RocksDB 7.8 sets them from its flags' defaults
/// (`--enable_pipelined_write`, `--table_cache_numshardbits`,
/// `--delayed_write_rate`, `--dump_malloc_stats`; `DB::Open` with
/// `create_missing_column_families`), in OPTIONS-file spelling.
const DBBENCH_DB_OPTIONS: &[(&str, &str)] = &[
    ("enable_pipelined_write", "true"),
    ("table_cache_numshardbits", "4"),
    ("delayed_write_rate", "8388608"),
    ("dump_malloc_stats", "true"),
    ("create_missing_column_families", "true"),
];

/// The same for the column family: `--hard_pending_compaction_bytes_limit`
/// (128 GiB), `--fifo_compaction_allow_compaction` (true) and
/// `--fifo_compaction_max_table_files_size_mb` (0), set whatever the
/// compaction style.
const DBBENCH_CF_OPTIONS: &[(&str, &str)] = &[
    ("hard_pending_compaction_bytes_limit", "137438953472"),
    (
        "compaction_options_fifo",
        "{allow_compaction=true;max_table_files_size=0;}",
    ),
];

/// The same for the block-based table: `--pin_top_level_index_and_filter`
/// (false) and `--index_shortening_mode` (2).
const DBBENCH_TABLE_OPTIONS: &[(&str, &str)] = &[
    ("pin_top_level_index_and_filter", "false"),
    ("index_shortening", "kShortenSeparatorsAndSuccessor"),
];

/// `rocksdb.dbbench_defaults`: db_bench's options with the tuning
/// properties on top, given to RocksDB as an OPTIONS file. Three of
/// db_bench's settings (`delayed_write_rate`, `index_shortening`, FIFO's
/// `allow_compaction`) have no setter in RocksDB 7.8's C API, which the
/// `rocksdb` crate wraps; an options text reaches every option.
fn dbbench_options(t: &Tuning) -> Result<(Options, Vec<ColumnFamilyDescriptor>), StoreError> {
    let text = dbbench_options_text(t);
    load_options_text(
        text.as_bytes(),
        "db_bench's options",
        t.cache_size.unwrap_or(DEFAULT_BLOCK_CACHE),
    )
}

/// The tuning properties with `rocksdb.compaction_pri`, an immutable
/// column-family option the rocksdb crate has no setter for: the whole
/// tuning as an OPTIONS file, loaded with its column family (the setters
/// of [`tuned_options`] would not reach a column family loaded so; the
/// settings an OPTIONS file cannot hold are refused with it, config.rs).
fn text_tuned_options(t: &Tuning) -> Result<(Options, Vec<ColumnFamilyDescriptor>), StoreError> {
    let (mut options, families) = load_options_text(
        options_text(t, false).as_bytes(),
        "the rocksdb.* tuning properties",
        t.cache_size.unwrap_or(DEFAULT_BLOCK_CACHE),
    )?;
    if t.increase_parallelism {
        // A DB option: it reaches the database through these options.
        options.increase_parallelism(PARALLELISM);
    }
    Ok((options, families))
}

/// The OPTIONS file of [`dbbench_options`]: every option not named keeps
/// the library's default, as in any OPTIONS file RocksDB reads.
pub(crate) fn dbbench_options_text(t: &Tuning) -> String {
    options_text(t, true)
}

/// The tuning as an OPTIONS file, on top of db_bench's defaults or of the
/// library's.
fn options_text(t: &Tuning, dbbench: bool) -> String {
    let defaults = |list: &[(&'static str, &'static str)]| -> Vec<(&'static str, String)> {
        if dbbench {
            list.iter().map(|(k, v)| (*k, (*v).to_string())).collect()
        } else {
            Vec::new()
        }
    };
    let mut db = defaults(DBBENCH_DB_OPTIONS);
    let mut cf = defaults(DBBENCH_CF_OPTIONS);
    let mut table = defaults(DBBENCH_TABLE_OPTIONS);
    let compression = match t.compression {
        Compression::No => "kNoCompression",
        Compression::Snappy => "kSnappyCompression",
        Compression::Zlib => "kZlibCompression",
        Compression::Bzip2 => "kBZip2Compression",
        Compression::Lz4 => "kLZ4Compression",
        Compression::Lz4hc => "kLZ4HCCompression",
        Compression::Zstd => "kZSTD",
    };
    cf.push(("compression", compression.to_string()));
    if let Some(name) = t.compaction_pri.and_then(compaction_pri_name) {
        cf.push(("compaction_pri", name.to_string()));
    }
    let some = |to: &mut Vec<(&str, String)>, key, value: Option<String>| {
        if let Some(v) = value {
            to.push((key, v));
        }
    };
    let s = |v: Option<i32>| v.map(|v| v.to_string());
    some(&mut db, "max_background_jobs", s(t.max_background_jobs));
    some(&mut db, "max_open_files", s(t.max_open_files));
    for (key, value) in [
        (
            "use_direct_io_for_flush_and_compaction",
            t.use_direct_io_for_flush_and_compaction,
        ),
        ("use_direct_reads", t.use_direct_reads),
        ("allow_mmap_writes", t.allow_mmap_writes),
        ("allow_mmap_reads", t.allow_mmap_reads),
    ] {
        db.push((key, value.to_string()));
    }
    some(
        &mut cf,
        "write_buffer_size",
        t.write_buffer_size.map(|v| v.to_string()),
    );
    some(
        &mut cf,
        "max_write_buffer_number",
        s(t.max_write_buffer_number),
    );
    some(
        &mut cf,
        "target_file_size_base",
        t.target_file_size_base.map(|v| v.to_string()),
    );
    some(
        &mut cf,
        "target_file_size_multiplier",
        s(t.target_file_size_multiplier),
    );
    some(
        &mut cf,
        "max_bytes_for_level_base",
        t.max_bytes_for_level_base.map(|v| v.to_string()),
    );
    some(
        &mut cf,
        "level0_file_num_compaction_trigger",
        s(t.level0_file_num_compaction_trigger),
    );
    some(
        &mut cf,
        "level0_slowdown_writes_trigger",
        s(t.level0_slowdown_writes_trigger),
    );
    some(
        &mut cf,
        "level0_stop_writes_trigger",
        s(t.level0_stop_writes_trigger),
    );
    // db_bench's NewBloomFilterPolicy(bits, use_block_based_filter=false).
    some(
        &mut table,
        "filter_policy",
        t.bloom_bits.map(|b| format!("bloomfilter:{b}:false")),
    );
    let section = |name: &str, options: &[(&str, String)]| {
        let mut text = format!("[{name}]\n");
        for (k, v) in options {
            text.push_str(&format!("  {k}={v}\n"));
        }
        text.push('\n');
        text
    };
    format!(
        "# {} (ycsb-rs)\n\n{}{}{}{}",
        if dbbench {
            "db_bench's options, rocksdb.dbbench_defaults"
        } else {
            "the rocksdb.* tuning properties"
        },
        section(
            "Version",
            &[
                ("rocksdb_version", "7.8.3".to_string()),
                ("options_file_version", "1.1".to_string())
            ]
        ),
        section("DBOptions", &db),
        section("CFOptions \"default\"", &cf),
        section("TableOptions/BlockBasedTable \"default\"", &table),
    )
}

/// Loads a RocksDB OPTIONS file with its column families.
fn load_options_file(file: &Path) -> Result<(Options, Vec<ColumnFamilyDescriptor>), StoreError> {
    let io = |doing: &str, source| StoreError::Io {
        context: format!("rocksdb.optionsfile {}: {doing}", file.display()),
        source,
    };
    // A FIFO, a device or a huge file is refused, not read.
    let text = ycsb_db::read_input(file, ycsb_db::CONFIG_FILE_LIMIT)
        .map_err(|e| io("cannot read it", e.into()))?;
    load_options_text(
        &text,
        &format!("rocksdb.optionsfile {}", file.display()),
        DEFAULT_BLOCK_CACHE,
    )
}

/// Loads the text of an OPTIONS file (`what` names it in errors), with a
/// block cache of `cache_size` bytes for its block-based tables.
///
/// The C API only loads the latest OPTIONS file of a database directory, so
/// the text is written into an empty scratch directory under that name.
fn load_options_text(
    text: &[u8],
    what: &str,
    cache_size: usize,
) -> Result<(Options, Vec<ColumnFamilyDescriptor>), StoreError> {
    let io = |doing: &str, source| StoreError::Io {
        context: format!("{what}: {doing}"),
        source,
    };
    let scratch = tempfile::Builder::new()
        .prefix("ycsb-rocksdb-options-")
        .tempdir()
        .map_err(|e| io("cannot create a scratch directory", e))?;
    std::fs::write(scratch.path().join("OPTIONS-000001"), text)
        .map_err(|e| io("cannot copy it to a scratch directory", e))?;
    let env = Env::new().map_err(|e| StoreError::Other(format!("rocksdb environment: {e}")))?;
    Options::load_latest(scratch.path(), env, false, cache(cache_size)?).map_err(|e| {
        StoreError::Open {
            store: "rocksdb".into(),
            message: format!("{what}: {e}"),
        }
    })
}

/// The merge operator behind `rocksdb.mergeupdate`: later operands' fields
/// replace earlier ones, fields missing from an operand are kept. Returning
/// `None` makes RocksDB report the key as corrupt instead of guessing.
fn merge_fields(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut record = Record::new();
    if let Some(value) = existing {
        codec::decode(value, Fields::All, &mut record).ok()?;
    }
    let mut change = Record::new();
    for operand in operands {
        change.clear();
        codec::decode(operand, Fields::All, &mut change).ok()?;
        record.merge_from(&change);
    }
    let mut out = Vec::with_capacity(record.value_bytes() + 16 * record.len());
    codec::encode(&record, &mut out);
    Some(out)
}

/// The newest `OPTIONS-<number>` file RocksDB wrote in `dir`.
pub(crate) fn latest_options_file(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let number: u64 = name.to_str()?.strip_prefix("OPTIONS-")?.parse().ok()?;
            Some((number, entry.path()))
        })
        .max_by_key(|(number, _)| *number)
        .map(|(_, path)| path)
}

/// The version of the RocksDB library that opened the database in `dir`,
/// as the library itself wrote it into the OPTIONS file (or, failing that,
/// the LOG). Asked of the running engine, not of headers seen at build time,
/// so that a swapped library is reported truthfully.
pub(crate) fn linked_version(dir: &Path) -> Option<String> {
    let from_options = latest_options_file(dir)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.trim().strip_prefix("rocksdb_version="))
                .map(|v| v.trim().to_string())
        });
    from_options.or_else(|| {
        let log = std::fs::read_to_string(dir.join("LOG")).ok()?;
        log.lines().find_map(|l| {
            let (_, v) = l.split_once("RocksDB version: ")?;
            Some(v.trim().to_string())
        })
    })
}

/// Appends the engine gauges: files per level, integer properties, and the
/// cumulative write-stall counters.
pub(crate) fn gauges(db: &DB, out: &mut Vec<Gauge>) {
    // A level past the configured number of levels is not a property, which
    // ends the loop; the bound only guards against a misbehaving engine.
    for level in 0..64 {
        let name = format!("rocksdb.num-files-at-level{level}");
        let Some(count) = db
            .property_value(name.as_str())
            .ok()
            .flatten()
            .and_then(|v| v.trim().parse::<f64>().ok())
        else {
            break;
        };
        out.push(Gauge::count(name, count));
    }
    for &(name, kind) in INT_GAUGES {
        if let Ok(Some(v)) = db.property_int_value(name) {
            out.push(Gauge::new(name, kind, v as f64));
        }
    }
    // The non-periodic CF stats leave the interval snapshots that the
    // periodic stats dump (and the final rocksdb.stats) rely on untouched.
    if let Ok(Some(text)) = db.property_value("rocksdb.cfstats-no-file-histogram") {
        stall_gauges(&text, out);
    }
}

/// Parses `Stalls(count): 0 level0_slowdown, 0 level0_numfiles, ...,
/// interval 0 total count` into `rocksdb.stall.<cause>` gauges and their
/// sum `rocksdb.stall.total`.
pub(crate) fn stall_gauges(cfstats: &str, out: &mut Vec<Gauge>) {
    let Some(line) = cfstats
        .lines()
        .find_map(|l| l.trim().strip_prefix("Stalls(count):"))
    else {
        return;
    };
    let mut total = 0.0;
    for part in line.split(',') {
        let part = part.trim();
        if part.starts_with("interval") {
            continue;
        }
        let Some((count, cause)) = part.split_once(' ') else {
            continue;
        };
        let Ok(count) = count.parse::<f64>() else {
            continue;
        };
        total += count;
        out.push(Gauge::count(
            format!("rocksdb.stall.{}", cause.trim().replace(' ', "_")),
            count,
        ));
    }
    out.push(Gauge::count("rocksdb.stall.total", total));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_line_parses() {
        let text = "junk\nStalls(count): 1 level0_slowdown, 0 level0_slowdown_with_compaction, \
                    2 level0_numfiles, 0 level0_numfiles_with_compaction, 3 stop for pending_compaction_bytes, \
                    0 slowdown for pending_compaction_bytes, 0 memtable_compaction, 4 memtable_slowdown, \
                    interval 9 total count\nmore\n";
        let mut g = Vec::new();
        stall_gauges(text, &mut g);
        let get = |n: &str| g.iter().find(|x| x.name == n).map(|x| x.value);
        assert_eq!(get("rocksdb.stall.level0_slowdown"), Some(1.0));
        assert_eq!(
            get("rocksdb.stall.stop_for_pending_compaction_bytes"),
            Some(3.0)
        );
        assert_eq!(get("rocksdb.stall.memtable_slowdown"), Some(4.0));
        assert_eq!(get("rocksdb.stall.total"), Some(10.0));
        assert_eq!(g.len(), 9);
    }
}
