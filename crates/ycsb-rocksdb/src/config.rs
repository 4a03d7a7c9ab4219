//! The `rocksdb.*` properties, with YCSB-cpp's names and defaults, and the
//! settings they turn into.

use std::path::PathBuf;

use ycsb_db::{Properties, Property, PropertyDecl, PropertyError};

ycsb_db::choice_property! {
    /// How records are laid out in the engine (YCSB-cpp's `rocksdb.format`).
    pub enum Format {
        /// One engine key per record, all fields encoded in its value.
        Single = "single",
        /// One engine key per record of exactly one field, whose value is
        /// the engine value as it is, without the field framing: what
        /// db_bench stores, for `ycsb bench` (see `rocksdb.raw_field`).
        Raw = "raw",
    }
}

ycsb_db::choice_property! {
    /// The block compression of SST files (YCSB-cpp's `rocksdb.compression`).
    pub enum Compression {
        /// No compression.
        No = "no" | "none",
        /// Snappy.
        Snappy = "snappy",
        /// zlib.
        Zlib = "zlib",
        /// bzip2.
        Bzip2 = "bzip2",
        /// LZ4.
        Lz4 = "lz4",
        /// LZ4 high compression.
        Lz4hc = "lz4hc",
        /// Zstandard.
        Zstd = "zstd",
    }
}

/// The database directory (YCSB-cpp `rocksdb.dbname`, Java `rocksdb.dir`).
pub const DBNAME: Property<PathBuf> = Property::optional(
    "rocksdb.dbname",
    "Directory of the RocksDB database, created if missing; required.",
)
.aliases(&["rocksdb.dir"]);
/// The record layout; only `single` exists, as in YCSB-cpp.
pub const FORMAT: Property<Format> = Property::new(
    "rocksdb.format",
    "single",
    "Record layout: `single` stores one engine key per record with all fields in its value; `raw` stores records of exactly one field as the bare value (no field framing, as db_bench; an update is then a blind write of the value), reads return it named by rocksdb.raw_field. A database written in one layout is not readable in the other.",
);
/// The field name a `raw` record's value is read back under.
pub const RAW_FIELD: Property<String> = Property::new(
    "rocksdb.raw_field",
    "field0",
    "With rocksdb.format=raw: the name reads give the record's one field (the name written is not stored).",
);
/// Whether to destroy the database before opening it.
pub const DESTROY: Property<bool> = Property::new(
    "rocksdb.destroy",
    "false",
    "Destroy the database (RocksDB DestroyDB) before opening it, in every phase that opens it.",
);
/// Whether every write is synced (`WriteOptions.sync`).
pub const SYNC: Property<bool> = Property::new(
    "rocksdb.sync",
    "false",
    "Sync the WAL on every write (WriteOptions.sync): an acknowledged write survives a crash.",
);
/// Whether writes skip the WAL (`WriteOptions.disableWAL`).
pub const DISABLE_WAL: Property<bool> = Property::new(
    "rocksdb.disable_wal",
    "false",
    "Write without the write-ahead log (WriteOptions.disableWAL); unflushed writes are lost on a crash.",
);
/// Whether reads fill the block cache (`ReadOptions.fill_cache`).
pub const FILL_CACHE: Property<bool> = Property::new(
    "rocksdb.fill_cache",
    "true",
    "Whether blocks read by reads and scans are added to the block cache (ReadOptions.fill_cache).",
);
/// Whether RocksDB statistics are collected and reported at the end.
pub const STATISTICS: Property<bool> = Property::new(
    "rocksdb.statistics",
    "false",
    "Collect RocksDB statistics (Options.statistics) and save them with the results; costs a little speed.",
);
/// RocksDB's perf-context level on the client threads
/// (`rocksdb::SetPerfLevel`, db_bench's `--perf_level`).
pub const PERF_LEVEL: Property<i64> = Property::new(
    "rocksdb.perf_level",
    "1",
    "RocksDB's per-thread perf context level on the client threads (SetPerfLevel; db_bench's --perf_level): 1 disables it, as db_bench does, since nothing reads it; 0 keeps RocksDB's default for new threads (2, count only, about 900 instructions per write on 7.8.3); 2 to 5 count and time more.",
)
.range(0, 5);
ycsb_db::choice_property! {
    /// The least severe messages RocksDB writes to its info LOG.
    pub enum InfoLogLevel {
        /// Debug and above.
        Debug = "debug",
        /// Info and above (RocksDB's default).
        Info = "info",
        /// Warnings and above.
        Warn = "warn",
        /// Errors and above.
        Error = "error",
        /// Fatal errors only.
        Fatal = "fatal",
        /// The header only.
        Header = "header",
    }
}

/// `rocksdb.info_log_level`.
pub const INFO_LOG_LEVEL: Property<InfoLogLevel> = Property::optional(
    "rocksdb.info_log_level",
    "Least severe messages written to RocksDB's info LOG (Options.info_log_level; unset: RocksDB's default, info, or the options file's). A full disk ends the run cleanly at any level: the binding keeps space allocated for the LOG (docs/engines-rocksdb.md, A full disk).",
);

/// Whether the engine is opened with db_bench's defaults (`ycsb bench`).
pub const DBBENCH_DEFAULTS: Property<bool> = Property::new(
    "rocksdb.dbbench_defaults",
    "false",
    "Open RocksDB with db_bench's defaults (RocksDB 7.8's tools/db_bench_tool.cc) where they differ from the library's: enable_pipelined_write=true, table_cache_numshardbits=4, delayed_write_rate=8 MiB/s, hard_pending_compaction_bytes_limit=128 GiB, FIFO compaction allowed without a size limit, pin_top_level_index_and_filter=false, index_shortening=kShortenSeparatorsAndSuccessor, dump_malloc_stats=true, create_missing_column_families=true, and no merge operator; the tuning properties apply on top. `ycsb bench` sets it, so that db_bench's command line opens the database db_bench opens. Ignored with rocksdb.optionsfile; not with rocksdb.mergeupdate, rocksdb.compressed_cache_size, rocksdb.increase_parallelism or rocksdb.optimize_level_style_compaction.",
);

/// Whether updates use the merge operator instead of read-modify-write.
pub const MERGEUPDATE: Property<bool> = Property::new(
    "rocksdb.mergeupdate",
    "false",
    "Update by a RocksDB Merge of the changed fields instead of read-modify-write; an update of a missing key then creates it.",
);
/// A RocksDB OPTIONS file to load instead of the tuning properties.
pub const OPTIONSFILE: Property<PathBuf> = Property::optional(
    "rocksdb.optionsfile",
    "RocksDB OPTIONS file to load; when set, the tuning properties (compression to optimize_level_style_compaction) are ignored.",
);
/// SST block compression.
pub const COMPRESSION: Property<Compression> =
    Property::new("rocksdb.compression", "no", "Compression of SST blocks.");
/// `Options.max_background_jobs`.
pub const MAX_BACKGROUND_JOBS: Property<i64> = Property::new(
    "rocksdb.max_background_jobs",
    "0",
    "Options.max_background_jobs; 0 keeps RocksDB's default.",
)
// RocksDB starts the threads at open and aborts the process when the
// system refuses one (100000 did).
.range(0, MAX_BACKGROUND_THREADS);

/// The most `rocksdb.max_background_jobs`.
const MAX_BACKGROUND_THREADS: i128 = 256;
/// The largest value of a C `int` option.
const INT_MAX: i128 = i32::MAX as i128;
/// `Options.target_file_size_base`.
pub const TARGET_FILE_SIZE_BASE: Property<u64> = Property::new(
    "rocksdb.target_file_size_base",
    "0",
    "Options.target_file_size_base in bytes; 0 keeps RocksDB's default.",
);
/// `Options.target_file_size_multiplier`.
pub const TARGET_FILE_SIZE_MULTIPLIER: Property<i64> = Property::new(
    "rocksdb.target_file_size_multiplier",
    "0",
    "Options.target_file_size_multiplier; 0 keeps RocksDB's default.",
)
.range(0, INT_MAX);
/// `Options.max_bytes_for_level_base`.
pub const MAX_BYTES_FOR_LEVEL_BASE: Property<u64> = Property::new(
    "rocksdb.max_bytes_for_level_base",
    "0",
    "Options.max_bytes_for_level_base in bytes; 0 keeps RocksDB's default.",
);
/// `Options.write_buffer_size`.
pub const WRITE_BUFFER_SIZE: Property<u64> = Property::new(
    "rocksdb.write_buffer_size",
    "0",
    "Options.write_buffer_size (memtable size) in bytes; 0 keeps RocksDB's default.",
);
/// `Options.max_write_buffer_number`.
pub const MAX_WRITE_BUFFER_NUMBER: Property<i64> = Property::new(
    "rocksdb.max_write_buffer_number",
    "0",
    "Options.max_write_buffer_number; 0 keeps RocksDB's default.",
)
.range(0, INT_MAX);
ycsb_db::choice_property! {
    /// `Options.compaction_pri` (`rocksdb.compaction_pri`): YCSB-cpp casts
    /// the number to RocksDB's `CompactionPri`; its names are accepted too.
    pub enum CompactionPri {
        /// RocksDB's default (YCSB-cpp's -1: not set).
        Default = "-1",
        /// 0: the file whose compensated size is largest first.
        ByCompensatedSize = "kByCompensatedSize" | "0",
        /// 1: the file whose range was least recently updated first.
        OldestLargestSeqFirst = "kOldestLargestSeqFirst" | "1",
        /// 2: the file whose data is oldest first.
        OldestSmallestSeqFirst = "kOldestSmallestSeqFirst" | "2",
        /// 3: the file overlapping least with the next level first.
        MinOverlappingRatio = "kMinOverlappingRatio" | "3",
        /// 4: round-robin over each level's key range.
        RoundRobin = "kRoundRobin" | "4",
    }
}

/// `Options.compaction_pri`.
pub const COMPACTION_PRI: Property<CompactionPri> = Property::new(
    "rocksdb.compaction_pri",
    "-1",
    "Options.compaction_pri as YCSB-cpp reads it, a number (0 kByCompensatedSize, \
     1 kOldestLargestSeqFirst, 2 kOldestSmallestSeqFirst, 3 kMinOverlappingRatio, 4 kRoundRobin) \
     or the name; -1 keeps RocksDB's default.",
);
/// `Options.max_open_files`.
pub const MAX_OPEN_FILES: Property<i64> = Property::new(
    "rocksdb.max_open_files",
    "-1",
    "Options.max_open_files; -1 means unlimited, 0 keeps RocksDB's default.",
)
.range(-1, INT_MAX);
/// `Options.level0_file_num_compaction_trigger`.
pub const L0_COMPACTION_TRIGGER: Property<i64> = Property::new(
    "rocksdb.level0_file_num_compaction_trigger",
    "0",
    "Options.level0_file_num_compaction_trigger; 0 keeps RocksDB's default.",
)
.range(0, INT_MAX);
/// `Options.level0_slowdown_writes_trigger`.
pub const L0_SLOWDOWN_TRIGGER: Property<i64> = Property::new(
    "rocksdb.level0_slowdown_writes_trigger",
    "0",
    "Options.level0_slowdown_writes_trigger; 0 keeps RocksDB's default.",
)
.range(0, INT_MAX);
/// `Options.level0_stop_writes_trigger`.
pub const L0_STOP_TRIGGER: Property<i64> = Property::new(
    "rocksdb.level0_stop_writes_trigger",
    "0",
    "Options.level0_stop_writes_trigger; 0 keeps RocksDB's default.",
)
.range(0, INT_MAX);
/// `Options.use_direct_io_for_flush_and_compaction`.
pub const USE_DIRECT_IO_FOR_FLUSH_COMPACTION: Property<bool> = Property::new(
    "rocksdb.use_direct_io_for_flush_compaction",
    "false",
    "Options.use_direct_io_for_flush_and_compaction.",
);
/// `Options.use_direct_reads`.
pub const USE_DIRECT_READS: Property<bool> = Property::new(
    "rocksdb.use_direct_reads",
    "false",
    "Options.use_direct_reads.",
);
/// `Options.allow_mmap_writes`.
pub const ALLOW_MMAP_WRITES: Property<bool> = Property::new(
    "rocksdb.allow_mmap_writes",
    "false",
    "Options.allow_mmap_writes.",
);
/// `Options.allow_mmap_reads`.
pub const ALLOW_MMAP_READS: Property<bool> = Property::new(
    "rocksdb.allow_mmap_reads",
    "false",
    "Options.allow_mmap_reads.",
);
/// Block cache capacity.
pub const CACHE_SIZE: Property<u64> = Property::new(
    "rocksdb.cache_size",
    "0",
    "Capacity in bytes of an LRU block cache; 0 keeps RocksDB's default (8 MiB).",
);
/// Compressed block cache capacity.
pub const COMPRESSED_CACHE_SIZE: Property<u64> = Property::new(
    "rocksdb.compressed_cache_size",
    "0",
    "Capacity in bytes of an LRU compressed block cache (block_cache_compressed); 0 means none.",
);
/// Bloom filter bits per key.
pub const BLOOM_BITS: Property<u64> = Property::new(
    "rocksdb.bloom_bits",
    "0",
    "Bits per key of a Bloom filter on SST blocks; 0 means no filter.",
)
.range(0, 1000);
/// `Options::IncreaseParallelism()`.
pub const INCREASE_PARALLELISM: Property<bool> = Property::new(
    "rocksdb.increase_parallelism",
    "false",
    "Call Options::IncreaseParallelism(16), as YCSB-cpp.",
);
/// `Options::OptimizeLevelStyleCompaction()`.
pub const OPTIMIZE_LEVEL_STYLE_COMPACTION: Property<bool> = Property::new(
    "rocksdb.optimize_level_style_compaction",
    "false",
    "Call Options::OptimizeLevelStyleCompaction(512 MiB), as YCSB-cpp; it overrides the memtable and level sizes.",
);

/// Every property the rocksdb store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    DBNAME.decl(),
    FORMAT.decl(),
    RAW_FIELD.decl(),
    DESTROY.decl(),
    SYNC.decl(),
    DISABLE_WAL.decl(),
    FILL_CACHE.decl(),
    STATISTICS.decl(),
    INFO_LOG_LEVEL.decl(),
    PERF_LEVEL.decl(),
    MERGEUPDATE.decl(),
    DBBENCH_DEFAULTS.decl(),
    OPTIONSFILE.decl(),
    COMPRESSION.decl(),
    MAX_BACKGROUND_JOBS.decl(),
    TARGET_FILE_SIZE_BASE.decl(),
    TARGET_FILE_SIZE_MULTIPLIER.decl(),
    MAX_BYTES_FOR_LEVEL_BASE.decl(),
    WRITE_BUFFER_SIZE.decl(),
    MAX_WRITE_BUFFER_NUMBER.decl(),
    COMPACTION_PRI.decl(),
    MAX_OPEN_FILES.decl(),
    L0_COMPACTION_TRIGGER.decl(),
    L0_SLOWDOWN_TRIGGER.decl(),
    L0_STOP_TRIGGER.decl(),
    USE_DIRECT_IO_FOR_FLUSH_COMPACTION.decl(),
    USE_DIRECT_READS.decl(),
    ALLOW_MMAP_WRITES.decl(),
    ALLOW_MMAP_READS.decl(),
    CACHE_SIZE.decl(),
    COMPRESSED_CACHE_SIZE.decl(),
    BLOOM_BITS.decl(),
    INCREASE_PARALLELISM.decl(),
    OPTIMIZE_LEVEL_STYLE_COMPACTION.decl(),
];

/// The engine tuning that YCSB-cpp takes from properties when no OPTIONS
/// file is given. `None` keeps RocksDB's default, as YCSB-cpp's `0`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tuning {
    /// SST block compression.
    pub compression: Compression,
    /// `max_background_jobs`.
    pub max_background_jobs: Option<i32>,
    /// `target_file_size_base`.
    pub target_file_size_base: Option<u64>,
    /// `target_file_size_multiplier`.
    pub target_file_size_multiplier: Option<i32>,
    /// `max_bytes_for_level_base`.
    pub max_bytes_for_level_base: Option<u64>,
    /// `write_buffer_size`.
    pub write_buffer_size: Option<usize>,
    /// `max_write_buffer_number`.
    pub max_write_buffer_number: Option<i32>,
    /// `compaction_pri`; `None`: RocksDB's default.
    pub compaction_pri: Option<CompactionPri>,
    /// `max_open_files` (-1: unlimited).
    pub max_open_files: Option<i32>,
    /// `level0_file_num_compaction_trigger`.
    pub level0_file_num_compaction_trigger: Option<i32>,
    /// `level0_slowdown_writes_trigger`.
    pub level0_slowdown_writes_trigger: Option<i32>,
    /// `level0_stop_writes_trigger`.
    pub level0_stop_writes_trigger: Option<i32>,
    /// `use_direct_io_for_flush_and_compaction`.
    pub use_direct_io_for_flush_and_compaction: bool,
    /// `use_direct_reads`.
    pub use_direct_reads: bool,
    /// `allow_mmap_writes`.
    pub allow_mmap_writes: bool,
    /// `allow_mmap_reads`.
    pub allow_mmap_reads: bool,
    /// LRU block cache capacity in bytes.
    pub cache_size: Option<usize>,
    /// LRU compressed block cache capacity in bytes.
    pub compressed_cache_size: Option<usize>,
    /// Bloom filter bits per key.
    pub bloom_bits: Option<u32>,
    /// Whether `IncreaseParallelism(16)` is applied.
    pub increase_parallelism: bool,
    /// Whether `OptimizeLevelStyleCompaction(512 MiB)` is applied.
    pub optimize_level_style_compaction: bool,
}

/// Where the engine options come from.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineOptions {
    /// From the tuning properties.
    Properties(Tuning),
    /// From a RocksDB OPTIONS file (`rocksdb.optionsfile`).
    File(PathBuf),
}

/// The store's settings, read and checked from properties.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RocksConfig {
    /// The database directory.
    pub path: PathBuf,
    /// The record layout.
    pub format: Format,
    /// The field name of a `raw` record.
    pub raw_field: String,
    /// Destroy the database before opening it.
    pub destroy: bool,
    /// Sync every write.
    pub sync: bool,
    /// Write without the WAL.
    pub disable_wal: bool,
    /// Reads fill the block cache.
    pub fill_cache: bool,
    /// Collect RocksDB statistics.
    pub statistics: bool,
    /// The info LOG's level, when set.
    pub info_log_level: Option<InfoLogLevel>,
    /// The perf-context level set on each client thread (1..=5), or
    /// `None` to keep RocksDB's default.
    pub perf_level: Option<i32>,
    /// Update through the merge operator.
    pub merge_update: bool,
    /// Open with db_bench's defaults under the tuning properties.
    pub dbbench_defaults: bool,
    /// Engine options.
    pub engine: EngineOptions,
}

/// Reads an integer that YCSB-cpp passes to an `int` option, where `zero`
/// (0 or -1) means "keep RocksDB's default" and `min` is the smallest value
/// RocksDB accepts.
fn int_option(
    props: &Properties,
    property: &Property<i64>,
    unset: i64,
    min: i64,
) -> Result<Option<i32>, PropertyError> {
    let v = props.get(property)?;
    if v == unset {
        return Ok(None);
    }
    if v < min || v > i64::from(i32::MAX) {
        return Err(props.invalid(
            property.decl(),
            format!(
                "expected {unset} (RocksDB's default) or {min}..={}",
                i32::MAX
            ),
        ));
    }
    // The range check above makes the conversion exact.
    Ok(Some(v as i32))
}

fn nonzero_u64(props: &Properties, property: &Property<u64>) -> Result<Option<u64>, PropertyError> {
    Ok(Some(props.get(property)?).filter(|&v| v != 0))
}

fn nonzero_usize(
    props: &Properties,
    property: &Property<u64>,
) -> Result<Option<usize>, PropertyError> {
    match nonzero_u64(props, property)? {
        None => Ok(None),
        Some(v) => usize::try_from(v)
            .map(Some)
            .map_err(|_| props.invalid(property.decl(), "too large for this machine")),
    }
}

impl Tuning {
    /// Reads the tuning properties.
    ///
    /// # Errors
    ///
    /// [`PropertyError::Invalid`] naming the property, its value and origin
    /// when a value does not parse or is out of RocksDB's range.
    pub fn from_properties(props: &Properties) -> Result<Self, PropertyError> {
        let compaction_pri = match props.get(&COMPACTION_PRI)? {
            CompactionPri::Default => None,
            pri => Some(pri),
        };
        let bloom_bits = match props.get(&BLOOM_BITS)? {
            0 => None,
            v => Some(
                u32::try_from(v)
                    .ok()
                    .filter(|&b| b <= 1000)
                    .ok_or_else(|| {
                        props.invalid(BLOOM_BITS.decl(), "expected 0..=1000 bits per key")
                    })?,
            ),
        };
        let max_open_files = match props.get(&MAX_OPEN_FILES)? {
            0 => None,
            -1 => Some(-1),
            _ => int_option(props, &MAX_OPEN_FILES, 0, 1)?,
        };
        Ok(Self {
            compression: props.get(&COMPRESSION)?,
            max_background_jobs: int_option(props, &MAX_BACKGROUND_JOBS, 0, 1)?,
            target_file_size_base: nonzero_u64(props, &TARGET_FILE_SIZE_BASE)?,
            target_file_size_multiplier: int_option(props, &TARGET_FILE_SIZE_MULTIPLIER, 0, 1)?,
            max_bytes_for_level_base: nonzero_u64(props, &MAX_BYTES_FOR_LEVEL_BASE)?,
            write_buffer_size: nonzero_usize(props, &WRITE_BUFFER_SIZE)?,
            max_write_buffer_number: int_option(props, &MAX_WRITE_BUFFER_NUMBER, 0, 1)?,
            compaction_pri,
            max_open_files,
            level0_file_num_compaction_trigger: int_option(props, &L0_COMPACTION_TRIGGER, 0, 1)?,
            level0_slowdown_writes_trigger: int_option(props, &L0_SLOWDOWN_TRIGGER, 0, 1)?,
            level0_stop_writes_trigger: int_option(props, &L0_STOP_TRIGGER, 0, 1)?,
            use_direct_io_for_flush_and_compaction: props
                .get(&USE_DIRECT_IO_FOR_FLUSH_COMPACTION)?,
            use_direct_reads: props.get(&USE_DIRECT_READS)?,
            allow_mmap_writes: props.get(&ALLOW_MMAP_WRITES)?,
            allow_mmap_reads: props.get(&ALLOW_MMAP_READS)?,
            cache_size: nonzero_usize(props, &CACHE_SIZE)?,
            compressed_cache_size: nonzero_usize(props, &COMPRESSED_CACHE_SIZE)?,
            bloom_bits,
            increase_parallelism: props.get(&INCREASE_PARALLELISM)?,
            optimize_level_style_compaction: props.get(&OPTIMIZE_LEVEL_STYLE_COMPACTION)?,
        })
    }
}

impl RocksConfig {
    /// Reads and checks every `rocksdb.*` property.
    ///
    /// # Errors
    ///
    /// [`PropertyError::Missing`] when `rocksdb.dbname` is not set,
    /// [`PropertyError::Invalid`] naming the property, value and origin for
    /// a bad value, [`PropertyError::Conflict`] for `rocksdb.mergeupdate`
    /// with `rocksdb.optionsfile` or `rocksdb.sync` with
    /// `rocksdb.disable_wal`.
    pub fn from_properties(props: &Properties) -> Result<Self, PropertyError> {
        let format = props.get(&FORMAT)?;
        let path = props.require(&DBNAME)?;
        let merge_update = props.get(&MERGEUPDATE)?;
        check_compaction_pri(props, merge_update)?;
        if format == Format::Raw && merge_update {
            // A merge operand is a set of fields; a raw value has no room
            // for the framing that would tell them apart.
            return Err(PropertyError::Conflict {
                message: format!(
                    "rocksdb.mergeupdate=true ({}) cannot be used with rocksdb.format=raw ({}): \
                     a raw value holds one field and is overwritten, not merged",
                    origin_of(props, MERGEUPDATE.decl()),
                    origin_of(props, FORMAT.decl()),
                ),
            });
        }
        let sync = props.get(&SYNC)?;
        let disable_wal = props.get(&DISABLE_WAL)?;
        let dbbench_defaults = props.get(&DBBENCH_DEFAULTS)?;
        if dbbench_defaults && merge_update {
            // db_bench's options are loaded as an options file, which the
            // merge operator cannot be added to (below).
            return Err(PropertyError::Conflict {
                message: format!(
                    "rocksdb.mergeupdate=true ({}) cannot be used with rocksdb.dbbench_defaults=true ({}): \
                     db_bench's options have no merge operator",
                    origin_of(props, MERGEUPDATE.decl()),
                    origin_of(props, DBBENCH_DEFAULTS.decl()),
                ),
            });
        }
        let engine = match props.get_opt(&OPTIONSFILE)? {
            Some(file) => {
                if merge_update {
                    // The loaded column-family options cannot be given our
                    // merge operator through the rocksdb crate (YCSB-cpp
                    // fails the same way, at the first update).
                    return Err(PropertyError::Conflict {
                        message: format!(
                            "rocksdb.mergeupdate=true ({}) cannot be used with rocksdb.optionsfile ({}): \
                             the merge operator cannot be added to options loaded from a file",
                            origin_of(props, MERGEUPDATE.decl()),
                            origin_of(props, OPTIONSFILE.decl()),
                        ),
                    });
                }
                check_options_file(props, &file)?;
                EngineOptions::File(file)
            }
            None => {
                let tuning = Tuning::from_properties(props)?;
                if dbbench_defaults {
                    check_dbbench_tuning(props, &tuning)?;
                }
                EngineOptions::Properties(tuning)
            }
        };
        if sync && disable_wal {
            return Err(PropertyError::Conflict {
                message: format!(
                    "rocksdb.sync=true ({}) cannot be used with rocksdb.disable_wal=true ({}): \
                     RocksDB rejects synced writes without a WAL",
                    origin_of(props, SYNC.decl()),
                    origin_of(props, DISABLE_WAL.decl()),
                ),
            });
        }
        Ok(Self {
            path,
            format,
            raw_field: props.get(&RAW_FIELD)?,
            destroy: props.get(&DESTROY)?,
            sync,
            disable_wal,
            fill_cache: props.get(&FILL_CACHE)?,
            statistics: props.get(&STATISTICS)?,
            info_log_level: props.get_opt(&INFO_LOG_LEVEL)?,
            // The declared range is 0 to 5.
            perf_level: Some(props.get(&PERF_LEVEL)? as i32).filter(|&v| v != 0),
            merge_update,
            dbbench_defaults,
            engine,
        })
    }
}

/// Refuses the tuning properties that db_bench's options (an options
/// text, see `engine::dbbench_options`) cannot carry: a second cache and
/// the two option presets, which are functions, not settings.
fn check_dbbench_tuning(props: &Properties, tuning: &Tuning) -> Result<(), PropertyError> {
    let refused = [
        (
            tuning.compressed_cache_size.is_some(),
            COMPRESSED_CACHE_SIZE.decl(),
        ),
        (tuning.increase_parallelism, INCREASE_PARALLELISM.decl()),
        (
            tuning.optimize_level_style_compaction,
            OPTIMIZE_LEVEL_STYLE_COMPACTION.decl(),
        ),
    ];
    match refused.into_iter().find(|(set, _)| *set) {
        None => Ok(()),
        Some((_, decl)) => Err(PropertyError::Conflict {
            message: format!(
                "{} ({}) cannot be used with rocksdb.dbbench_defaults=true ({}): \
                 db_bench's options are given to RocksDB as an options text, which cannot hold it",
                decl.name,
                origin_of(props, decl),
                origin_of(props, DBBENCH_DEFAULTS.decl()),
            ),
        }),
    }
}

/// The options an OPTIONS file may not set, each with the value that
/// keeps what the binding relies on (`None`: the option must be absent or
/// `nullptr`) and why: keys stored in byte order and read back as written,
/// scans in that order over every key.
const REFUSED_OPTIONS: &[(&str, Option<&str>, &str)] = &[
    (
        "comparator",
        Some("leveldb.BytewiseComparator"),
        "another key order makes scans return other records than YCSB's byte-ordered ones",
    ),
    (
        "prefix_extractor",
        None,
        "with a prefix extractor, a scan's seek only sees keys of its start key's prefix: \
         scans silently miss records",
    ),
    (
        "compaction_filter",
        None,
        "a compaction filter drops or changes records behind the benchmark's back",
    ),
    (
        "compaction_filter_factory",
        None,
        "a compaction filter drops or changes records behind the benchmark's back",
    ),
];

/// Refuses an OPTIONS file that sets one of [`REFUSED_OPTIONS`] in a
/// column family, naming `rocksdb.optionsfile`, where it was set, the line
/// and why. A file that cannot be read is left to the engine's open, which
/// says why.
fn check_options_file(props: &Properties, file: &std::path::Path) -> Result<(), PropertyError> {
    let Ok(text) = ycsb_db::read_input_to_string(file, ycsb_db::CONFIG_FILE_LIMIT) else {
        return Ok(());
    };
    check_options_text(&text).map_err(|reason| props.invalid(OPTIONSFILE.decl(), reason))
}

/// What is wrong with an OPTIONS text, as `line N sets key=value: why`.
pub(crate) fn check_options_text(text: &str) -> Result<(), String> {
    let mut in_column_family = false;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            in_column_family = line.starts_with("[CFOptions");
            continue;
        }
        if !in_column_family || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        let Some((_, keeps, why)) = REFUSED_OPTIONS.iter().find(|(name, ..)| *name == key) else {
            continue;
        };
        let harmless = match keeps {
            // Newer RocksDB writes a customizable option as {id=...;...}.
            Some(keeps) => value == *keeps || value.contains(&format!("id={keeps};")),
            None => value.is_empty() || value == "nullptr",
        };
        if !harmless {
            return Err(format!("line {} sets {key}={value}: {why}", index + 1));
        }
    }
    Ok(())
}

/// `rocksdb.compaction_pri` is set through an OPTIONS file of the tuning
/// (the rocksdb crate has no setter for it), which holds neither a merge
/// operator, nor a compressed block cache, nor what
/// `OptimizeLevelStyleCompaction` sets: those are refused beside it rather
/// than silently dropped. An OPTIONS file (`rocksdb.optionsfile`) names its
/// own `compaction_pri` and db_bench's options take it as the others.
fn check_compaction_pri(props: &Properties, merge_update: bool) -> Result<(), PropertyError> {
    if props.get(&COMPACTION_PRI)? == CompactionPri::Default
        || props.get_opt(&OPTIONSFILE)?.is_some()
    {
        return Ok(());
    }
    let conflict = if merge_update {
        Some(MERGEUPDATE.decl())
    } else if props.get(&OPTIMIZE_LEVEL_STYLE_COMPACTION)? {
        Some(OPTIMIZE_LEVEL_STYLE_COMPACTION.decl())
    } else if props.get(&COMPRESSED_CACHE_SIZE)? != 0 {
        Some(COMPRESSED_CACHE_SIZE.decl())
    } else {
        None
    };
    match conflict {
        None => Ok(()),
        Some(other) => Err(PropertyError::Conflict {
            message: format!(
                "rocksdb.compaction_pri ({}) cannot be used with {} ({}): compaction_pri is set \
                 through an OPTIONS file of the tuning, which cannot hold the other",
                origin_of(props, COMPACTION_PRI.decl()),
                other.name,
                origin_of(props, other),
            ),
        }),
    }
}

fn origin_of(props: &Properties, decl: &PropertyDecl) -> String {
    props
        .raw(decl)
        .map(|r| format!("{}, {}", r.key, r.origin))
        .unwrap_or_else(|| decl.name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ycsb_db::Origin;

    fn base() -> Properties {
        Properties::new().with("rocksdb.dbname", "/tmp/x")
    }

    #[test]
    fn defaults_are_ycsb_cpp_defaults() {
        let c = RocksConfig::from_properties(&base()).unwrap();
        assert!(!c.destroy && !c.sync && !c.disable_wal && c.fill_cache);
        assert!(!c.merge_update && !c.statistics);
        assert_eq!(c.perf_level, Some(1));
        assert_eq!(c.format, Format::Single);
        let EngineOptions::Properties(t) = c.engine else {
            panic!("expected property tuning");
        };
        assert_eq!(t.compression, Compression::No);
        assert_eq!(t.max_open_files, Some(-1));
        assert_eq!(t.max_background_jobs, None);
        assert_eq!(t.write_buffer_size, None);
        assert_eq!(t.cache_size, None);
        assert_eq!(t.bloom_bits, None);
    }

    #[test]
    fn raw_format_excludes_merge_updates() {
        let c = RocksConfig::from_properties(&base().with("rocksdb.format", "raw")).unwrap();
        assert_eq!((c.format, c.raw_field.as_str()), (Format::Raw, "field0"));
        let err = RocksConfig::from_properties(
            &base()
                .with("rocksdb.format", "raw")
                .with("rocksdb.mergeupdate", "true"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("rocksdb.format=raw"), "{err}");
    }

    #[test]
    fn perf_level_range() {
        let level = |v: &str| {
            RocksConfig::from_properties(&base().with("rocksdb.perf_level", v))
                .map(|c| c.perf_level)
        };
        assert_eq!(level("0").unwrap(), None);
        assert_eq!(level("5").unwrap(), Some(5));
        let err = level("6").unwrap_err();
        assert!(err.to_string().contains("rocksdb.perf_level"), "{err}");
    }

    #[test]
    fn java_dir_is_an_alias() {
        let p = Properties::new().with("rocksdb.dir", "/data/db");
        assert_eq!(
            RocksConfig::from_properties(&p).unwrap().path,
            PathBuf::from("/data/db")
        );
    }

    #[test]
    fn missing_dbname_is_named() {
        let err = RocksConfig::from_properties(&Properties::new()).unwrap_err();
        assert!(err.to_string().contains("rocksdb.dbname"), "{err}");
    }

    #[test]
    fn bad_values_name_property_and_origin() {
        let mut p = base();
        p.set("rocksdb.compression", "gzip", Origin::Flag("-p"));
        let err = RocksConfig::from_properties(&p).unwrap_err().to_string();
        assert!(
            err.starts_with("rocksdb.compression: invalid value 'gzip' (-p flag)"),
            "{err}"
        );
        let mut p = base();
        p.set("rocksdb.max_background_jobs", "-3", Origin::Flag("-p"));
        let err = RocksConfig::from_properties(&p).unwrap_err().to_string();
        assert!(err.contains("rocksdb.max_background_jobs"), "{err}");
        let mut p = base();
        p.set("rocksdb.write_buffer_size", "64MB", Origin::Flag("-p"));
        let err = RocksConfig::from_properties(&p).unwrap_err().to_string();
        assert!(err.contains("rocksdb.write_buffer_size"), "{err}");
        let p = base().with("rocksdb.compaction_pri", "5");
        let err = RocksConfig::from_properties(&p).unwrap_err().to_string();
        assert!(
            err.starts_with("rocksdb.compaction_pri: invalid value '5'")
                && err.contains("kMinOverlappingRatio"),
            "{err}"
        );
    }

    #[test]
    fn compaction_pri_refuses_what_an_options_file_cannot_hold() {
        for (key, value) in [
            ("rocksdb.mergeupdate", "true"),
            ("rocksdb.optimize_level_style_compaction", "true"),
            ("rocksdb.compressed_cache_size", "1048576"),
        ] {
            let p = base().with("rocksdb.compaction_pri", "1").with(key, value);
            let err = RocksConfig::from_properties(&p).unwrap_err().to_string();
            assert!(
                err.contains("rocksdb.compaction_pri") && err.contains(key),
                "{err}"
            );
            let default = base().with("rocksdb.compaction_pri", "-1").with(key, value);
            RocksConfig::from_properties(&default).unwrap();
        }
    }

    /// YCSB-cpp's numbers and RocksDB's names of `CompactionPri`.
    #[test]
    fn compaction_pri_reads_ycsb_cpp_s_numbers_and_the_names() {
        let pri = |value: &str| {
            let p = base().with("rocksdb.compaction_pri", value);
            match RocksConfig::from_properties(&p).unwrap().engine {
                EngineOptions::Properties(t) => t.compaction_pri,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(pri("-1"), None);
        assert_eq!(pri("0"), Some(CompactionPri::ByCompensatedSize));
        assert_eq!(pri("3"), Some(CompactionPri::MinOverlappingRatio));
        assert_eq!(pri("kRoundRobin"), Some(CompactionPri::RoundRobin));
        assert_eq!(pri("2"), Some(CompactionPri::OldestSmallestSeqFirst));
        assert_eq!(
            pri("kOldestLargestSeqFirst"),
            Some(CompactionPri::OldestLargestSeqFirst)
        );
    }

    #[test]
    fn conflicts_are_errors() {
        let p = base()
            .with("rocksdb.mergeupdate", "true")
            .with("rocksdb.optionsfile", "/tmp/OPTIONS");
        let err = RocksConfig::from_properties(&p).unwrap_err().to_string();
        assert!(err.contains("rocksdb.mergeupdate"), "{err}");
        let p = base()
            .with("rocksdb.sync", "true")
            .with("rocksdb.disable_wal", "true");
        let err = RocksConfig::from_properties(&p).unwrap_err().to_string();
        assert!(err.contains("rocksdb.disable_wal"), "{err}");
    }

    #[test]
    fn dbbench_defaults_refuse_what_an_options_text_cannot_hold() {
        let db_bench = || base().with("rocksdb.dbbench_defaults", "true");
        assert!(
            RocksConfig::from_properties(&db_bench())
                .unwrap()
                .dbbench_defaults
        );
        for (property, value) in [
            ("rocksdb.mergeupdate", "true"),
            ("rocksdb.compressed_cache_size", "1048576"),
            ("rocksdb.increase_parallelism", "true"),
            ("rocksdb.optimize_level_style_compaction", "true"),
        ] {
            let err = RocksConfig::from_properties(&db_bench().with(property, value))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(property) && err.contains("rocksdb.dbbench_defaults"),
                "{err}"
            );
            // Without db_bench's defaults each is fine.
            RocksConfig::from_properties(&base().with(property, value)).unwrap();
        }
    }

    /// Issue 33 item 3: options that change the key order or hide records
    /// from the binding are refused, naming the file's property and line.
    #[test]
    fn options_files_that_break_scans_or_records_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("OPTIONS");
        let options = |cf: &str| {
            format!(
                "[Version]\n  rocksdb_version=7.8.3\n[DBOptions]\n  comparator=ignored\n\
                 [CFOptions \"default\"]\n  write_buffer_size=67108864\n{cf}\n\
                 [TableOptions/BlockBasedTable \"default\"]\n  block_size=4096\n"
            )
        };
        for (line, refused) in [
            (
                "  comparator=rocksdb.ReverseBytewiseComparator",
                "comparator",
            ),
            (
                "  prefix_extractor=rocksdb.FixedPrefix.4",
                "prefix_extractor",
            ),
            (
                "  compaction_filter=RemoveEmptyValueCompactionFilter",
                "compaction_filter",
            ),
            (
                "  compaction_filter_factory=Custom",
                "compaction_filter_factory",
            ),
        ] {
            std::fs::write(&file, options(line)).unwrap();
            let mut p = base();
            p.set(
                "rocksdb.optionsfile",
                file.display().to_string(),
                Origin::Flag("-p"),
            );
            let err = RocksConfig::from_properties(&p).unwrap_err().to_string();
            assert!(
                err.starts_with("rocksdb.optionsfile: invalid value")
                    && err.contains("(-p flag): line 7 sets ")
                    && err.contains(refused),
                "{err}"
            );
        }
        for line in [
            "  comparator=leveldb.BytewiseComparator",
            "  prefix_extractor=nullptr",
            "  compaction_filter=nullptr",
            "  merge_operator=nullptr",
        ] {
            assert_eq!(check_options_text(&options(line)), Ok(()), "{line}");
        }
    }

    #[test]
    fn declared_ranges_refuse_what_rocksdb_cannot_take() {
        for (property, value, expected) in [
            ("rocksdb.max_background_jobs", "100000", "expected 0 to 256"),
            (
                "rocksdb.max_write_buffer_number",
                "2147483648",
                "expected 0 to 2147483647",
            ),
            ("rocksdb.max_open_files", "-2", "expected -1 to 2147483647"),
            ("rocksdb.bloom_bits", "1001", "expected 0 to 1000"),
            ("rocksdb.perf_level", "6", "expected 0 to 5"),
        ] {
            let err = RocksConfig::from_properties(&base().with(property, value))
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(property) && err.contains(expected), "{err}");
        }
    }

    #[test]
    fn options_file_replaces_tuning() {
        let p = base()
            .with("rocksdb.optionsfile", "/etc/opts")
            .with("rocksdb.compression", "snappy");
        let c = RocksConfig::from_properties(&p).unwrap();
        assert_eq!(c.engine, EngineOptions::File("/etc/opts".into()));
    }

    #[test]
    fn every_property_is_listed_once() {
        let mut names: Vec<_> = PROPERTIES.iter().map(|d| d.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len());
        assert!(names.iter().all(|n| n.starts_with("rocksdb.")));
    }
}
