//! The store's properties, with YCSB-cpp's names and meanings, and their
//! translation into engine options.

use std::path::PathBuf;

use ycsb_db::{DirSetting, Properties, Property, PropertyDecl, PropertyError};

use crate::ffi::EngineOptions;

ycsb_db::choice_property! {
    /// How a record is laid out in LevelDB (`leveldb.format`).
    pub enum Format {
        /// One entry per record: the key maps to all fields encoded in one
        /// value (`ycsb_db::codec`). Updates read, merge and write back.
        Single = "single",
        /// One entry per field, keyed `<key>` NUL `<field>`, as YCSB-cpp's
        /// `row` format but for the separator (its `:` sorts `user10`
        /// before `user1`): updates are blind writes of the changed fields.
        Row = "row",
        /// One entry per field, keyed `<field>:<key>` (YCSB-cpp's `column`
        /// format). Not supported: YCSB-cpp implements neither read nor
        /// scan for it, so opening with it is an error.
        Column = "column",
    }
}

ycsb_db::choice_property! {
    /// Block compression (`leveldb.compression`).
    pub enum Compression {
        /// No compression (YCSB-cpp's default).
        No = "no" | "none",
        /// Snappy, if the linked LevelDB was built with it (Debian's is);
        /// otherwise LevelDB silently stores blocks uncompressed.
        Snappy = "snappy",
    }
}

/// `leveldb.dbname`: the database directory.
pub const DBNAME: Property<PathBuf> = Property::optional(
    "leveldb.dbname",
    "The LevelDB database directory, created if missing. Required.",
);

/// `leveldb.format`: the record layout.
pub const FORMAT: Property<Format> = Property::new(
    "leveldb.format",
    "single",
    "Record layout: single (one entry per record, fields encoded in one value), \
     row (one entry per field keyed <key> NUL <field>, YCSB-cpp's row layout with a \
     separator that keeps scans in key order); \
     column is YCSB-cpp's write-only layout and is refused.",
);

/// `leveldb.destroy`: destroy an existing database before opening.
pub const DESTROY: Property<bool> = Property::new(
    "leveldb.destroy",
    "false",
    "Destroy any existing database at leveldb.dbname before opening it.",
);

/// `leveldb.write_buffer_size`.
pub const WRITE_BUFFER_SIZE: Property<u64> = Property::new(
    "leveldb.write_buffer_size",
    "0",
    "Bytes of memtable before it is written to a level-0 file; 0 keeps LevelDB's default (4 MiB).",
)
// LevelDB clips it to 64 KiB..1 GiB (SanitizeOptions): refused outside.
.range(0, 1 << 30);

/// `leveldb.max_file_size`.
pub const MAX_FILE_SIZE: Property<u64> = Property::new(
    "leveldb.max_file_size",
    "0",
    "Target size in bytes of a table file; 0 keeps LevelDB's default (2 MiB).",
)
// LevelDB clips it to 1 MiB..1 GiB (SanitizeOptions): refused outside.
.range(0, 1 << 30);

/// `leveldb.max_open_files`.
pub const MAX_OPEN_FILES: Property<u32> = Property::new(
    "leveldb.max_open_files",
    "0",
    "Table files LevelDB may keep open; 0 keeps LevelDB's default (1000).",
)
// LevelDB clips it to 74..50000 (SanitizeOptions): refused outside.
.range(0, 50000);

/// `leveldb.compression`.
pub const COMPRESSION: Property<Compression> = Property::new(
    "leveldb.compression",
    "no",
    "Block compression: no or snappy. The default is no, as in YCSB-cpp \
     (LevelDB's own default would be snappy).",
);

/// `leveldb.cache_size`.
pub const CACHE_SIZE: Property<u64> = Property::new(
    "leveldb.cache_size",
    "0",
    "Bytes of the LRU block cache; 0 keeps LevelDB's default (an 8 MiB internal cache).",
);

/// `leveldb.filter_bits`.
pub const FILTER_BITS: Property<u32> = Property::new(
    "leveldb.filter_bits",
    "0",
    "Bits per key of a Bloom filter on table files; 0 means no filter.",
)
// A filter is bits-per-key times the keys of a block: 2^31 bits per key
// made every table write allocate gigabytes.
.range(0, 1000);

/// `leveldb.block_size`.
pub const BLOCK_SIZE: Property<u64> = Property::new(
    "leveldb.block_size",
    "0",
    "Uncompressed bytes per table block; 0 keeps LevelDB's default (4 KiB).",
)
// LevelDB clips it to 1 KiB..4 MiB (SanitizeOptions): refused outside.
.range(0, 4 << 20);

/// `leveldb.block_restart_interval`.
pub const BLOCK_RESTART_INTERVAL: Property<u32> = Property::new(
    "leveldb.block_restart_interval",
    "0",
    "Keys between restart points of key delta encoding; 0 keeps LevelDB's default (16).",
)
.range(0, i32::MAX as i128);

/// `leveldb.sync`: synchronous writes (not in YCSB-cpp).
pub const SYNC: Property<bool> = Property::new(
    "leveldb.sync",
    "false",
    "Sync the write-ahead log to disk before acknowledging each write. \
     The default false matches YCSB-cpp (writes survive a killed process \
     but not a machine crash).",
);

/// `leveldb.fill_cache`: whether reads fill the block cache (not in
/// YCSB-cpp, which keeps LevelDB's default).
pub const FILL_CACHE: Property<bool> = Property::new(
    "leveldb.fill_cache",
    "true",
    "Whether blocks read by reads and scans are added to the block cache (LevelDB's default true).",
);

/// Every property the `leveldb` store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    DBNAME.decl(),
    FORMAT.decl(),
    DESTROY.decl(),
    WRITE_BUFFER_SIZE.decl(),
    MAX_FILE_SIZE.decl(),
    MAX_OPEN_FILES.decl(),
    COMPRESSION.decl(),
    CACHE_SIZE.decl(),
    FILTER_BITS.decl(),
    BLOCK_SIZE.decl(),
    BLOCK_RESTART_INTERVAL.decl(),
    SYNC.decl(),
    FILL_CACHE.decl(),
];

/// Everything the store is opened with, read and checked from properties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    /// The directory (`DBNAME`) and `destroy`.
    pub dir: DirSetting,
    pub format: Format,
    pub engine: EngineOptions,
}

/// A size property as a `usize`; 0 means "LevelDB's default".
/// A size where 0 keeps LevelDB's default and other values must be at
/// least `min`, the lower end of LevelDB's own range (the upper end is
/// declared on the property).
fn size(p: &Properties, prop: &Property<u64>, min: u64) -> Result<Option<usize>, PropertyError> {
    engine_value(p, prop, min, "expected a size that fits in memory")
}

/// A count property as a C `int`; 0 means "LevelDB's default".
/// A count where 0 keeps LevelDB's default and other values must be at
/// least `min`, as [`size`].
fn count(p: &Properties, prop: &Property<u32>, min: u32) -> Result<Option<i32>, PropertyError> {
    engine_value(p, prop, min, "expected at most 2147483647")
}

/// `prop` as the type LevelDB takes, `None` for 0 (LevelDB's default);
/// a value below `min`, or one the type cannot hold (`too_large` says
/// which fit), is an error naming the property.
fn engine_value<T, E>(
    p: &Properties,
    prop: &Property<T>,
    min: T,
    too_large: &str,
) -> Result<Option<E>, PropertyError>
where
    T: ycsb_db::PropertyValue + Copy + PartialOrd + From<u8> + std::fmt::Display,
    E: TryFrom<T>,
{
    let v = p.get(prop)?;
    if v == T::from(0) {
        return Ok(None);
    }
    if v < min {
        return Err(p.invalid(
            prop.decl(),
            format!("expected 0 (LevelDB's default) or at least {min}: LevelDB raises smaller values to {min}"),
        ));
    }
    E::try_from(v)
        .map(Some)
        .map_err(|_| p.invalid(prop.decl(), too_large))
}

impl Config {
    pub fn from_properties(p: &Properties) -> Result<Config, PropertyError> {
        let dir = DirSetting::from_properties(p, &DBNAME, &DESTROY)?;
        let format = p.get(&FORMAT)?;
        if format == Format::Column {
            return Err(p.invalid(
                FORMAT.decl(),
                "the column format is not supported: YCSB-cpp's stores each field as its own \
                 entry keyed <field>:<key> (inserts and updates write them, deletes remove \
                 field0..fieldcount-1), but its reads and scans answer NOT_IMPLEMENTED, so a \
                 workload with reads would measure nothing; use single or row",
            ));
        }
        let engine = EngineOptions {
            write_buffer_size: size(p, &WRITE_BUFFER_SIZE, 64 << 10)?,
            max_file_size: size(p, &MAX_FILE_SIZE, 1 << 20)?,
            max_open_files: count(p, &MAX_OPEN_FILES, 74)?,
            snappy: p.get(&COMPRESSION)? == Compression::Snappy,
            cache_size: size(p, &CACHE_SIZE, 1)?,
            filter_bits: count(p, &FILTER_BITS, 1)?,
            block_size: size(p, &BLOCK_SIZE, 1 << 10)?,
            block_restart_interval: count(p, &BLOCK_RESTART_INTERVAL, 1)?,
            sync: p.get(&SYNC)?,
            fill_cache: p.get(&FILL_CACHE)?,
        };
        Ok(Config {
            dir,
            format,
            engine,
        })
    }

    /// The effective settings as `name=value` lines, for the results.
    pub fn describe(&self) -> String {
        fn or_default<T: std::fmt::Display>(v: Option<T>) -> String {
            v.map_or_else(|| "default".to_string(), |v| v.to_string())
        }
        let e = &self.engine;
        format!(
            "{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n",
            DBNAME.name(),
            self.dir.path.display(),
            FORMAT.name(),
            self.format.name(),
            DESTROY.name(),
            self.dir.destroy,
            WRITE_BUFFER_SIZE.name(),
            or_default(e.write_buffer_size),
            MAX_FILE_SIZE.name(),
            or_default(e.max_file_size),
            MAX_OPEN_FILES.name(),
            or_default(e.max_open_files),
            COMPRESSION.name(),
            if e.snappy { "snappy" } else { "no" },
            CACHE_SIZE.name(),
            or_default(e.cache_size),
            FILTER_BITS.name(),
            e.filter_bits.map_or_else(|| "none".to_string(), |b| b.to_string()),
            BLOCK_SIZE.name(),
            or_default(e.block_size),
            BLOCK_RESTART_INTERVAL.name(),
            or_default(e.block_restart_interval),
            SYNC.name(),
            e.sync,
            FILL_CACHE.name(),
            e.fill_cache,
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
    fn defaults_keep_leveldb_defaults_like_ycsb_cpp() {
        let c = Config::from_properties(&props(&[("leveldb.dbname", "/tmp/x")])).unwrap();
        assert_eq!(c.dir.path, PathBuf::from("/tmp/x"));
        assert_eq!(c.format, Format::Single);
        assert!(!c.dir.destroy);
        assert_eq!(
            c.engine,
            EngineOptions {
                fill_cache: true,
                ..EngineOptions::default()
            }
        );
    }

    #[test]
    fn dbname_is_required() {
        let err = Config::from_properties(&Properties::new()).unwrap_err();
        assert!(
            err.to_string().starts_with("leveldb.dbname: required"),
            "{err}"
        );
    }

    #[test]
    fn values_are_applied() {
        let c = Config::from_properties(&props(&[
            ("leveldb.dbname", "d"),
            ("leveldb.format", "row"),
            ("leveldb.destroy", "true"),
            ("leveldb.write_buffer_size", "1048576"),
            ("leveldb.max_file_size", "2097152"),
            ("leveldb.max_open_files", "500"),
            ("leveldb.compression", "snappy"),
            ("leveldb.cache_size", "1000"),
            ("leveldb.filter_bits", "10"),
            ("leveldb.block_size", "8192"),
            ("leveldb.block_restart_interval", "8"),
            ("leveldb.sync", "true"),
            ("leveldb.fill_cache", "false"),
        ]))
        .unwrap();
        assert_eq!(c.format, Format::Row);
        assert!(c.dir.destroy);
        assert_eq!(
            c.engine,
            EngineOptions {
                write_buffer_size: Some(1 << 20),
                max_file_size: Some(2 << 20),
                max_open_files: Some(500),
                snappy: true,
                cache_size: Some(1000),
                filter_bits: Some(10),
                block_size: Some(8192),
                block_restart_interval: Some(8),
                sync: true,
                fill_cache: false,
            }
        );
        assert!(c.describe().contains("leveldb.filter_bits=10\n"));
    }

    #[test]
    fn errors_name_the_property_and_origin() {
        let cases = [
            (
                "leveldb.write_buffer_size",
                "64MB",
                "expected an unsigned integer",
            ),
            ("leveldb.compression", "zstd", "expected one of no, snappy"),
            (
                "leveldb.format",
                "wide",
                "expected one of single, row, column",
            ),
            ("leveldb.format", "column", "not supported"),
            (
                "leveldb.max_open_files",
                "3000000000",
                "expected 0 to 50000",
            ),
            ("leveldb.sync", "yes", "expected true or false"),
            // 2^31-1 bits per key made each table write allocate gigabytes.
            ("leveldb.filter_bits", "2147483647", "expected 0 to 1000"),
            // Values LevelDB would silently clip into its ranges.
            ("leveldb.write_buffer_size", "1000", "at least 65536"),
            (
                "leveldb.write_buffer_size",
                "18446744073709551615",
                "expected 0 to 1073741824",
            ),
            (
                "leveldb.max_file_size",
                "4294967296",
                "expected 0 to 1073741824",
            ),
            ("leveldb.max_open_files", "10", "at least 74"),
            ("leveldb.block_size", "100", "at least 1024"),
            (
                "leveldb.block_size",
                "18446744073709551615",
                "expected 0 to 4194304",
            ),
        ];
        for (key, value, reason) in cases {
            let err = Config::from_properties(&props(&[("leveldb.dbname", "d"), (key, value)]))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("{key}: invalid value '{value}' (-p flag)")),
                "{err}"
            );
            assert!(err.contains(reason), "{err}");
        }
    }

    #[test]
    fn every_property_is_listed_once() {
        let mut names: Vec<_> = PROPERTIES.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PROPERTIES.len());
        assert!(names.iter().all(|n| n.starts_with("leveldb.")));
    }
}
