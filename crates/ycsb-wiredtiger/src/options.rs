//! The store's properties, with YCSB-cpp's names, meanings and defaults,
//! and their translation into WiredTiger configuration strings.

use std::path::PathBuf;

use ycsb_db::{
    DirSetting, Properties, Property, PropertyDecl, PropertyError, PropertyKind, PropertyValue,
};

ycsb_db::choice_property! {
    /// How a record is laid out (`wiredtiger.format`).
    pub enum Format {
        /// One entry per record: the key maps to all fields encoded in one
        /// value (`ycsb_db::codec`). Updates read, merge and write back.
        /// YCSB-cpp's WiredTiger binding has only this format.
        Single = "single",
    }
}

ycsb_db::choice_property! {
    /// The kind of table (`wiredtiger.type`).
    pub enum TableType {
        /// A B-tree (`table:` with WiredTiger's default type), as YCSB-cpp.
        Btree = "btree",
        /// A log-structured merge tree (`type=lsm`), configured by the
        /// `wiredtiger.blk_mgr.bloom_*`/`chunk_*` and `wiredtiger.lsm_mgr.*`
        /// properties.
        Lsm = "lsm",
    }
}

ycsb_db::choice_property! {
    /// Block compression (`wiredtiger.blk_mgr.compressor`).
    pub enum Compressor {
        /// No compression.
        None = "none" | "",
        /// Snappy (`libwiredtiger_snappy.so`, shipped by Debian).
        Snappy = "snappy",
        /// zlib (`libwiredtiger_zlib.so`, shipped by Debian).
        Zlib = "zlib",
        /// LZ4, if a `libwiredtiger_lz4.so` extension is installed.
        Lz4 = "lz4",
        /// Zstandard, if a `libwiredtiger_zstd.so` extension is installed.
        Zstd = "zstd",
    }
}

ycsb_db::choice_property! {
    /// Which statistics WiredTiger maintains (`wiredtiger.statistics`).
    pub enum Statistics {
        /// None: no gauges in the time series.
        None = "none",
        /// The cheap counters (WiredTiger's `fast`): the gauges' source.
        Fast = "fast",
        /// Every counter, some of them costly (WiredTiger's `all`).
        All = "all",
    }
}

impl Compressor {
    /// The extension library WiredTiger loads for it.
    fn extension(self) -> Option<&'static str> {
        match self {
            Compressor::None => None,
            Compressor::Snappy => Some("libwiredtiger_snappy.so"),
            Compressor::Zlib => Some("libwiredtiger_zlib.so"),
            Compressor::Lz4 => Some("libwiredtiger_lz4.so"),
            Compressor::Zstd => Some("libwiredtiger_zstd.so"),
        }
    }
}

/// A byte count in WiredTiger's notation (`4KB`, `100MB`, `5GB`: powers
/// of 1024, as YCSB-cpp's property file explains; a plain number is bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl PropertyValue for Bytes {
    const KIND: PropertyKind = PropertyKind::Text;
    fn parse_value(raw: &str) -> Result<Self, String> {
        let expected = || "expected a size such as 4096, 4KB, 100MB or 5GB".to_string();
        let raw = raw.trim();
        let digits = raw.bytes().take_while(u8::is_ascii_digit).count();
        let (number, unit) = raw.split_at(digits);
        let number: u64 = number.parse().map_err(|_| expected())?;
        let unit = unit.trim().to_ascii_uppercase();
        let unit = unit.strip_suffix('B').unwrap_or(&unit);
        let shift = match unit {
            "" => 0,
            "K" => 10,
            "M" => 20,
            "G" => 30,
            "T" => 40,
            "P" => 50,
            _ if unit.is_empty() => 0,
            _ => return Err(expected()),
        };
        number
            .checked_mul(1 << shift)
            .map(Bytes)
            .ok_or_else(|| "expected a size below 2^64 bytes".to_string())
    }

    fn range_point(&self) -> Option<i128> {
        Some(i128::from(self.0))
    }
}

/// Bytes in a kibibyte, mebibyte, gibibyte and tebibyte, for the ranges
/// of WiredTiger's configuration checks (`config_def.c`).
const KB: i128 = 1 << 10;
const MB: i128 = 1 << 20;
const GB: i128 = 1 << 30;
const TB: i128 = 1 << 40;

/// `wiredtiger.home`: the database directory.
pub const HOME: Property<PathBuf> = Property::optional(
    "wiredtiger.home",
    "The WiredTiger database directory (its home), created if missing. Required.",
);

/// `wiredtiger.format`: the record layout.
pub const FORMAT: Property<Format> = Property::new(
    "wiredtiger.format",
    "single",
    "Record layout: single (one entry per record, fields encoded in one value), \
     the only layout of YCSB-cpp's WiredTiger binding.",
);

/// `wiredtiger.cache_size`.
pub const CACHE_SIZE: Property<Bytes> = Property::new(
    "wiredtiger.cache_size",
    "100MB",
    "Bytes of WiredTiger's cache (pages and their in-memory structures), \
     in WiredTiger's notation (64MB, 1GB). YCSB-cpp's default 100MB.",
)
.range(MB, 10 * TB);

/// `wiredtiger.direct_io`.
pub const DIRECT_IO: Property<String> = Property::new(
    "wiredtiger.direct_io",
    "[]",
    "File types opened with O_DIRECT: a list from checkpoint, data, log, \
     such as [data] or [data,log]; [] for none (the default).",
);

/// `wiredtiger.in_memory`.
pub const IN_MEMORY: Property<bool> = Property::new(
    "wiredtiger.in_memory",
    "false",
    "Keep the database in the cache only, writing nothing to the home \
     directory; cache_size must hold all of it.",
);

/// `wiredtiger.lsm_mgr.merge`.
pub const LSM_MERGE: Property<bool> = Property::new(
    "wiredtiger.lsm_mgr.merge",
    "true",
    "Merge LSM chunks where possible (LSM tables: wiredtiger.type=lsm).",
);

/// `wiredtiger.lsm_mgr.max_workers`.
pub const LSM_MAX_WORKERS: Property<u32> = Property::new(
    "wiredtiger.lsm_mgr.max_workers",
    "4",
    "Threads of the LSM manager (WiredTiger accepts 3 to 20).",
)
.range(3, 20);

/// `wiredtiger.blk_mgr.allocation_size`.
pub const ALLOCATION_SIZE: Property<Bytes> = Property::new(
    "wiredtiger.blk_mgr.allocation_size",
    "4KB",
    "The file unit allocation size; a power of two.",
)
.range(512, 128 * MB);

/// `wiredtiger.blk_mgr.bloom_bit_count`.
pub const BLOOM_BIT_COUNT: Property<u32> = Property::new(
    "wiredtiger.blk_mgr.bloom_bit_count",
    "16",
    "Bits per item of the Bloom filters of LSM chunks.",
)
.range(2, 1000);

/// `wiredtiger.blk_mgr.bloom_hash_count`.
pub const BLOOM_HASH_COUNT: Property<u32> = Property::new(
    "wiredtiger.blk_mgr.bloom_hash_count",
    "8",
    "Hash values per item of the Bloom filters of LSM chunks.",
)
.range(2, 100);

/// `wiredtiger.blk_mgr.chunk_max`.
pub const CHUNK_MAX: Property<Bytes> = Property::new(
    "wiredtiger.blk_mgr.chunk_max",
    "5GB",
    "The largest LSM chunk that is still merged.",
)
.range(100 * MB, 10 * TB);

/// `wiredtiger.blk_mgr.chunk_size`.
pub const CHUNK_SIZE: Property<Bytes> = Property::new(
    "wiredtiger.blk_mgr.chunk_size",
    "10MB",
    "The size of the in-memory chunk of an LSM tree.",
)
.range(512 * KB, 500 * MB);

/// `wiredtiger.blk_mgr.compressor`.
pub const COMPRESSOR: Property<Compressor> = Property::new(
    "wiredtiger.blk_mgr.compressor",
    "snappy",
    "Block compression: snappy (YCSB-cpp's default), zlib, lz4, zstd or none. \
     Each is WiredTiger's extension libwiredtiger_<name>.so, loaded at open; \
     Debian ships snappy and zlib.",
);

/// `wiredtiger.blk_mgr.btree.internal_page_max`.
pub const INTERNAL_PAGE_MAX: Property<Bytes> = Property::new(
    "wiredtiger.blk_mgr.btree.internal_page_max",
    "4KB",
    "The largest internal page, before compression; a multiple of allocation_size.",
)
.range(512, 512 * MB);

/// `wiredtiger.blk_mgr.btree.leaf_key_max`.
pub const LEAF_KEY_MAX: Property<Bytes> = Property::new(
    "wiredtiger.blk_mgr.btree.leaf_key_max",
    "0",
    "Keys larger than this are stored as overflow items; 0 means a tenth of a leaf page.",
)
.range(0, 4 * GB - 1);

/// `wiredtiger.blk_mgr.btree.leaf_value_max`.
pub const LEAF_VALUE_MAX: Property<Bytes> = Property::new(
    "wiredtiger.blk_mgr.btree.leaf_value_max",
    "0",
    "Values larger than this are stored as overflow items; 0 means half a leaf page.",
)
.range(0, 4 * GB - 1);

/// `wiredtiger.blk_mgr.btree.leaf_page_max`.
pub const LEAF_PAGE_MAX: Property<Bytes> = Property::new(
    "wiredtiger.blk_mgr.btree.leaf_page_max",
    "32KB",
    "The largest leaf page, before compression; a multiple of allocation_size.",
)
.range(512, 512 * MB);

/// `wiredtiger.type` (not in YCSB-cpp, whose table is always a B-tree).
pub const TYPE: Property<TableType> = Property::new(
    "wiredtiger.type",
    "btree",
    "The table: btree (as YCSB-cpp) or lsm. Fixed when the table is created.",
);

/// `wiredtiger.destroy` (not in YCSB-cpp).
pub const DESTROY: Property<bool> = Property::new(
    "wiredtiger.destroy",
    "false",
    "Remove an existing WiredTiger database at wiredtiger.home before opening it.",
);

/// `wiredtiger.log` (not in YCSB-cpp).
pub const LOG: Property<bool> = Property::new(
    "wiredtiger.log",
    "false",
    "Write-ahead logging: each write is in the log file (the operating \
     system's buffers) when acknowledged, so it survives a killed process. \
     The default false is YCSB-cpp's: writes are durable only at checkpoints \
     and at close.",
);

/// `wiredtiger.sync` (not in YCSB-cpp).
pub const SYNC: Property<bool> = Property::new(
    "wiredtiger.sync",
    "false",
    "Sync the log to disk (fsync) before acknowledging each write, so it \
     survives a machine crash; implies wiredtiger.log=true.",
);

/// `wiredtiger.statistics` (not in YCSB-cpp, which keeps none).
pub const STATISTICS: Property<Statistics> = Property::new(
    "wiredtiger.statistics",
    "fast",
    "Statistics WiredTiger keeps: none, fast (the cheap counters the gauges \
     of the time series read) or all.",
);

/// `wiredtiger.config` (not in YCSB-cpp).
pub const CONFIG: Property<String> = Property::new(
    "wiredtiger.config",
    "",
    "More wiredtiger_open configuration, appended last (for example \
     checkpoint=(wait=60)). Settings that would silently change what a write \
     leaves behind are refused: in_memory, log and transaction_sync (set \
     wiredtiger.in_memory, wiredtiger.log and wiredtiger.sync).",
);

/// `wiredtiger.table_config` (not in YCSB-cpp).
pub const TABLE_CONFIG: Property<String> = Property::new(
    "wiredtiger.table_config",
    "",
    "More configuration of the table's creation, appended last. Settings that \
     change how keys and values are stored or ordered, which the binding relies on, \
     are refused: key_format, value_format, columns, colgroups, collator, type (set \
     wiredtiger.type) and log (set wiredtiger.log).",
);

/// Every property the `wiredtiger` store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    HOME.decl(),
    FORMAT.decl(),
    CACHE_SIZE.decl(),
    DIRECT_IO.decl(),
    IN_MEMORY.decl(),
    LSM_MERGE.decl(),
    LSM_MAX_WORKERS.decl(),
    ALLOCATION_SIZE.decl(),
    BLOOM_BIT_COUNT.decl(),
    BLOOM_HASH_COUNT.decl(),
    CHUNK_MAX.decl(),
    CHUNK_SIZE.decl(),
    COMPRESSOR.decl(),
    INTERNAL_PAGE_MAX.decl(),
    LEAF_KEY_MAX.decl(),
    LEAF_VALUE_MAX.decl(),
    LEAF_PAGE_MAX.decl(),
    TYPE.decl(),
    DESTROY.decl(),
    LOG.decl(),
    SYNC.decl(),
    STATISTICS.decl(),
    CONFIG.decl(),
    TABLE_CONFIG.decl(),
];

/// Everything the store is opened with, read and checked from properties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    /// The directory (`HOME`) and `destroy`.
    pub dir: DirSetting,
    pub table_type: TableType,
    pub statistics: Statistics,
    /// The `wiredtiger_open` configuration string.
    pub open: String,
    /// The `WT_SESSION::create` configuration of the table.
    pub table: String,
}

/// The direct_io list, checked: WiredTiger's own error would not name the
/// property.
fn direct_io(p: &Properties) -> Result<String, PropertyError> {
    let raw = p.get(&DIRECT_IO)?;
    let inner = raw
        .trim()
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(|| p.invalid(DIRECT_IO.decl(), "expected a list such as [] or [data,log]"))?;
    let mut kinds = Vec::new();
    for kind in inner.split(',').map(str::trim).filter(|k| !k.is_empty()) {
        if !["checkpoint", "data", "log"].contains(&kind) {
            return Err(p.invalid(
                DIRECT_IO.decl(),
                format!("unknown file type {kind:?} (expected checkpoint, data or log)"),
            ));
        }
        kinds.push(kind);
    }
    Ok(format!("[{}]", kinds.join(",")))
}

/// A size that must be a power of two (WiredTiger's rule for allocation).
fn power_of_two(p: &Properties, prop: &Property<Bytes>) -> Result<u64, PropertyError> {
    let Bytes(v) = p.get(prop)?;
    if v.is_power_of_two() {
        Ok(v)
    } else {
        Err(p.invalid(prop.decl(), "expected a power of two"))
    }
}

/// A configuration string that cannot break out of its place in the
/// comma-separated list (WiredTiger parses brackets and quotes).
fn balanced(p: &Properties, prop: &Property<String>) -> Result<String, PropertyError> {
    let text = p.get(prop)?;
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '\0' => return Err(p.invalid(prop.decl(), "contains a NUL byte")),
            _ => {}
        }
        if depth < 0 {
            break;
        }
    }
    if depth != 0 {
        return Err(p.invalid(prop.decl(), "unbalanced brackets"));
    }
    Ok(text.trim().trim_matches(',').to_string())
}

/// The `wiredtiger_open` keys `wiredtiger.config` may not set, and why:
/// appended last, each would silently replace what a typed property
/// promises about the data (an appended `log=(file_max=1GB)` turns the
/// log off, since the last `log` wins whole).
const REFUSED_OPEN_KEYS: &[(&str, &str)] = &[
    (
        "in_memory",
        "in_memory would keep the database out of wiredtiger.home: what is written is \
         gone at close; set wiredtiger.in_memory",
    ),
    (
        "log",
        "log replaces the write-ahead log setting of wiredtiger.log and wiredtiger.sync \
         whole (enabled is false unless said): acknowledged writes could be lost; set \
         wiredtiger.log or wiredtiger.sync",
    ),
    (
        "transaction_sync",
        "transaction_sync replaces when commits reach the log, which wiredtiger.log and \
         wiredtiger.sync set; set those",
    ),
];

/// The table creation keys `wiredtiger.table_config` may not set, and
/// why: the binding reads and writes raw byte strings (`key_format=u`,
/// `value_format=u`) in byte order, so another format or order makes
/// acknowledged writes unreadable (`key_format=S` read back nothing) or
/// scans wrong.
const REFUSED_TABLE_KEYS: &[(&str, &str)] = &[
    (
        "key_format",
        "key_format: the binding stores keys as raw bytes (key_format=u); another format \
         makes written records unreadable",
    ),
    (
        "value_format",
        "value_format: the binding stores each record as raw bytes (value_format=u); \
         another format makes written records unreadable",
    ),
    (
        "columns",
        "columns: the binding stores one raw key and one raw value per record",
    ),
    (
        "colgroups",
        "colgroups: the binding stores one raw key and one raw value per record",
    ),
    (
        "collator",
        "collator: another key order makes scans return other records than YCSB's \
         byte-ordered ones",
    ),
    (
        "type",
        "type: the kind of table is wiredtiger.type, which the binding's statistics \
         follow; set wiredtiger.type",
    ),
    (
        "log",
        "log: a table's own log setting would override wiredtiger.log and wiredtiger.sync \
         (log=(enabled=false) loses acknowledged writes); set those",
    ),
];

/// The top-level keys of a WiredTiger configuration string: its
/// comma-separated entries outside brackets and quotes, each up to its `=`
/// or `:`.
fn top_level_keys(config: &str) -> Vec<&str> {
    let mut entries = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in config.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' if !quoted => depth += 1,
            ')' | ']' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                entries.push(&config[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    entries.push(&config[start..]);
    entries
        .into_iter()
        .filter_map(|entry| {
            let key = entry
                .split(['=', ':'])
                .next()?
                .trim()
                .trim_matches('"')
                .trim();
            (!key.is_empty()).then_some(key)
        })
        .collect()
}

/// Refuses a configuration string that sets one of `refused`, naming the
/// property, where it was set and why.
fn refuse_keys(
    p: &Properties,
    prop: &Property<String>,
    config: &str,
    refused: &[(&str, &str)],
) -> Result<(), PropertyError> {
    for key in top_level_keys(config) {
        if let Some((_, why)) = refused.iter().find(|(name, _)| *name == key) {
            return Err(p.invalid(prop.decl(), format!("sets {why}")));
        }
    }
    Ok(())
}

impl Config {
    pub fn from_properties(p: &Properties) -> Result<Config, PropertyError> {
        let dir = DirSetting::from_properties(p, &HOME, &DESTROY)?;
        let Format::Single = p.get(&FORMAT)?;
        let workers = p.get(&LSM_MAX_WORKERS)?;
        let sync = p.get(&SYNC)?;
        let log = p.get(&LOG)? || sync;
        let in_memory = p.get(&IN_MEMORY)?;
        let statistics = p.get(&STATISTICS)?;
        let compressor = p.get(&COMPRESSOR)?;

        let mut open = format!(
            "create,cache_size={},direct_io={},in_memory={in_memory},\
             lsm_manager=(merge={},worker_thread_max={workers}),statistics=({})",
            p.get(&CACHE_SIZE)?.0,
            direct_io(p)?,
            p.get(&LSM_MERGE)?,
            statistics.name(),
        );
        if let Some(extension) = compressor.extension() {
            open.push_str(&format!(",extensions=[{extension}]"));
        }
        if log {
            // The log file is written (method=none: to the operating
            // system) or synced (fsync) at each commit; each operation is
            // its own transaction.
            let method = if sync { "fsync" } else { "none" };
            open.push_str(&format!(
                ",log=(enabled=true),transaction_sync=(enabled=true,method={method})"
            ));
        }
        let extra = balanced(p, &CONFIG)?;
        refuse_keys(p, &CONFIG, &extra, REFUSED_OPEN_KEYS)?;
        if !extra.is_empty() {
            open.push(',');
            open.push_str(&extra);
        }

        let allocation = power_of_two(p, &ALLOCATION_SIZE)?;
        let table_type = p.get(&TYPE)?;
        let mut table = format!(
            "key_format=u,value_format=u,allocation_size={allocation},block_compressor={},\
             internal_page_max={},leaf_key_max={},leaf_value_max={},leaf_page_max={}",
            match compressor {
                Compressor::None => "",
                other => other.name(),
            },
            p.get(&INTERNAL_PAGE_MAX)?.0,
            p.get(&LEAF_KEY_MAX)?.0,
            p.get(&LEAF_VALUE_MAX)?.0,
            p.get(&LEAF_PAGE_MAX)?.0,
        );
        // Read (and checked) whatever the table type, so that a bad value
        // is refused before the table it would matter to is made.
        let lsm = format!(
            ",type=lsm,lsm=(bloom_bit_count={},bloom_hash_count={},chunk_max={},chunk_size={})",
            p.get(&BLOOM_BIT_COUNT)?,
            p.get(&BLOOM_HASH_COUNT)?,
            p.get(&CHUNK_MAX)?.0,
            p.get(&CHUNK_SIZE)?.0,
        );
        if table_type == TableType::Lsm {
            table.push_str(&lsm);
        }
        let extra = balanced(p, &TABLE_CONFIG)?;
        refuse_keys(p, &TABLE_CONFIG, &extra, REFUSED_TABLE_KEYS)?;
        if !extra.is_empty() {
            table.push(',');
            table.push_str(&extra);
        }
        Ok(Config {
            dir,
            table_type,
            statistics,
            open,
            table,
        })
    }

    /// The effective settings as `name=value` lines, for the results.
    pub fn describe(&self) -> String {
        format!(
            "{}={}\n{}={}\n{}={}\nwiredtiger_open={}\ntable={}\n",
            HOME.name(),
            self.dir.path.display(),
            TYPE.name(),
            self.table_type.name(),
            DESTROY.name(),
            self.dir.destroy,
            self.open,
            self.table,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        Properties::new().with_flags(pairs)
    }

    #[test]
    fn defaults_are_ycsb_cpps() {
        let c = Config::from_properties(&props(&[("wiredtiger.home", "/tmp/x")])).unwrap();
        assert_eq!(c.dir.path, PathBuf::from("/tmp/x"));
        assert_eq!(c.table_type, TableType::Btree);
        assert!(!c.dir.destroy);
        assert_eq!(
            c.open,
            "create,cache_size=104857600,direct_io=[],in_memory=false,\
             lsm_manager=(merge=true,worker_thread_max=4),statistics=(fast),\
             extensions=[libwiredtiger_snappy.so]"
        );
        assert_eq!(
            c.table,
            "key_format=u,value_format=u,allocation_size=4096,block_compressor=snappy,\
             internal_page_max=4096,leaf_key_max=0,leaf_value_max=0,leaf_page_max=32768"
        );
    }

    #[test]
    fn home_is_required() {
        let err = Config::from_properties(&Properties::new()).unwrap_err();
        assert!(
            err.to_string().starts_with("wiredtiger.home: required"),
            "{err}"
        );
    }

    #[test]
    fn values_are_applied() {
        let c = Config::from_properties(&props(&[
            ("wiredtiger.home", "d"),
            ("wiredtiger.type", "lsm"),
            ("wiredtiger.cache_size", "64MB"),
            ("wiredtiger.direct_io", "[ data , log ]"),
            ("wiredtiger.in_memory", "true"),
            ("wiredtiger.lsm_mgr.merge", "false"),
            ("wiredtiger.lsm_mgr.max_workers", "8"),
            ("wiredtiger.blk_mgr.allocation_size", "8k"),
            ("wiredtiger.blk_mgr.bloom_bit_count", "10"),
            ("wiredtiger.blk_mgr.bloom_hash_count", "4"),
            ("wiredtiger.blk_mgr.chunk_max", "1GB"),
            ("wiredtiger.blk_mgr.chunk_size", "2MB"),
            ("wiredtiger.blk_mgr.compressor", "none"),
            ("wiredtiger.sync", "true"),
            ("wiredtiger.statistics", "none"),
            ("wiredtiger.config", "checkpoint=(wait=60)"),
            ("wiredtiger.table_config", "memory_page_max=10MB"),
        ]))
        .unwrap();
        assert_eq!(
            c.open,
            "create,cache_size=67108864,direct_io=[data,log],in_memory=true,\
             lsm_manager=(merge=false,worker_thread_max=8),statistics=(none),\
             log=(enabled=true),transaction_sync=(enabled=true,method=fsync),\
             checkpoint=(wait=60)"
        );
        assert_eq!(
            c.table,
            "key_format=u,value_format=u,allocation_size=8192,block_compressor=,\
             internal_page_max=4096,leaf_key_max=0,leaf_value_max=0,leaf_page_max=32768,\
             type=lsm,lsm=(bloom_bit_count=10,bloom_hash_count=4,chunk_max=1073741824,\
             chunk_size=2097152),memory_page_max=10MB"
        );
    }

    #[test]
    fn log_without_sync_writes_to_the_operating_system() {
        let c = Config::from_properties(&props(&[
            ("wiredtiger.home", "d"),
            ("wiredtiger.log", "true"),
        ]))
        .unwrap();
        assert!(
            c.open
                .contains(",log=(enabled=true),transaction_sync=(enabled=true,method=none)"),
            "{}",
            c.open
        );
    }

    #[test]
    fn sizes_use_wiredtigers_notation() {
        for (raw, bytes) in [
            ("0", 0),
            ("500B", 500),
            ("4KB", 4096),
            ("4k", 4096),
            ("100MB", 100 << 20),
            ("5GB", 5 << 30),
            ("1T", 1 << 40),
        ] {
            assert_eq!(Bytes::parse_value(raw), Ok(Bytes(bytes)), "{raw}");
        }
        for raw in ["", "MB", "4XB", "-1", "4.5MB", "99999999999PB"] {
            assert!(Bytes::parse_value(raw).is_err(), "{raw}");
        }
    }

    #[test]
    fn errors_name_the_property_and_origin() {
        let cases = [
            ("wiredtiger.cache_size", "lots", "expected a size"),
            (
                "wiredtiger.blk_mgr.compressor",
                "lzma",
                "expected one of none",
            ),
            ("wiredtiger.format", "row", "expected one of single"),
            ("wiredtiger.type", "hash", "expected one of btree, lsm"),
            ("wiredtiger.lsm_mgr.max_workers", "2", "3 to 20"),
            // WiredTiger's own checks refused these without naming the property.
            (
                "wiredtiger.cache_size",
                "16TB",
                "expected 1048576 to 10995116277760",
            ),
            (
                "wiredtiger.blk_mgr.allocation_size",
                "1GB",
                "expected 512 to 134217728",
            ),
            (
                "wiredtiger.blk_mgr.btree.leaf_page_max",
                "1GB",
                "expected 512 to 536870912",
            ),
            (
                "wiredtiger.blk_mgr.bloom_bit_count",
                "100000",
                "expected 2 to 1000",
            ),
            ("wiredtiger.blk_mgr.allocation_size", "3KB", "power of two"),
            ("wiredtiger.direct_io", "data", "expected a list"),
            ("wiredtiger.direct_io", "[disk]", "unknown file type"),
            ("wiredtiger.config", "log=(enabled=true", "unbalanced"),
            ("wiredtiger.sync", "yes", "expected true or false"),
        ];
        ycsb_db::testing::assert_invalid_values(
            Config::from_properties,
            &[("wiredtiger.home", "d")],
            &cases,
        );
    }

    /// Issue 33 item 3: `table_config=key_format=S` acknowledged inserts
    /// that read back NOT_FOUND; settings that change the formats, the
    /// order or the durability the binding relies on are refused, with the
    /// property, its origin and why.
    #[test]
    fn settings_that_break_the_data_are_refused() {
        for (key, value, why) in [
            ("wiredtiger.table_config", "key_format=S", "key_format"),
            (
                "wiredtiger.table_config",
                "memory_page_max=10MB,value_format=S",
                "value_format",
            ),
            (
                "wiredtiger.table_config",
                "\"collator\"=reverse",
                "collator",
            ),
            ("wiredtiger.table_config", "columns=(k,v)", "columns"),
            ("wiredtiger.table_config", "colgroups=(a)", "colgroups"),
            ("wiredtiger.table_config", "type=lsm", "wiredtiger.type"),
            (
                "wiredtiger.table_config",
                "log=(enabled=false)",
                "wiredtiger.log",
            ),
            (
                "wiredtiger.config",
                "in_memory=true",
                "wiredtiger.in_memory",
            ),
            (
                "wiredtiger.config",
                "checkpoint=(wait=60), log=(file_max=1GB)",
                "wiredtiger.sync",
            ),
            (
                "wiredtiger.config",
                "transaction_sync=(enabled=false)",
                "wiredtiger.log",
            ),
        ] {
            let err = Config::from_properties(&props(&[("wiredtiger.home", "d"), (key, value)]))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("{key}: invalid value '{value}' (-p flag): sets ")),
                "{err}"
            );
            assert!(err.contains(why) && !err.contains('\n'), "{err}");
        }
        // Keys inside a category, and settings that keep the data as it
        // is, pass.
        for (key, value) in [
            (
                "wiredtiger.table_config",
                "memory_page_max=10MB,lsm=(merge_max=10)",
            ),
            ("wiredtiger.table_config", "app_metadata=\"key_format=S\""),
            (
                "wiredtiger.config",
                "checkpoint=(wait=60,log_size=0),eviction=(threads_max=4)",
            ),
        ] {
            Config::from_properties(&props(&[("wiredtiger.home", "d"), (key, value)]))
                .unwrap_or_else(|e| panic!("{value}: {e}"));
        }
    }

    #[test]
    fn top_level_keys_skip_categories_and_quotes() {
        assert_eq!(
            top_level_keys("a=1, b=(c=2,d=[e,f]),\"g\"=\"h,i\",j"),
            vec!["a", "b", "g", "j"]
        );
    }

    #[test]
    fn every_property_is_listed_once() {
        ycsb_db::testing::assert_declared_once(PROPERTIES, "wiredtiger.");
    }
}
