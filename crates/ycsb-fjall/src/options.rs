//! The store's properties and their translation into fjall's options.

use std::path::PathBuf;

use ycsb_db::{DirSetting, Properties, Property, PropertyDecl, PropertyError};

ycsb_db::choice_property! {
    /// Data block compression (`fjall.compression`).
    pub enum Compression {
        /// fjall's own policy: level 0 and 1 uncompressed (they are
        /// rewritten soon), LZ4 below.
        Default = "default",
        /// No compression on any level.
        None = "none" | "no",
        /// LZ4 on every level. `snappy` is read as `lz4`: db_bench's
        /// default `--compression_type=snappy` asks for the engine's fast
        /// compressor, and LZ4 is fjall's only one.
        Lz4 = "lz4" | "snappy",
    }
}

/// `fjall.dir`: the database directory.
pub const DIR: Property<PathBuf> = Property::optional(
    "fjall.dir",
    "The fjall database directory, created if missing. Required.",
);

/// `fjall.destroy`: remove an existing database before opening.
pub const DESTROY: Property<bool> = Property::new(
    "fjall.destroy",
    "false",
    "Remove the fjall database at fjall.dir before opening it (only a directory \
     that holds a fjall database, or is empty, is removed).",
);

/// `fjall.cache_size`: the block cache.
pub const CACHE_SIZE: Property<u64> = Property::new(
    "fjall.cache_size",
    "0",
    "Bytes of the block cache shared by all keyspaces; 0 keeps fjall's default (32 MiB).",
);

/// `fjall.memtable_size`: the memtable size.
pub const MEMTABLE_SIZE: Property<u64> = Property::new(
    "fjall.memtable_size",
    "0",
    "Bytes of memtable before it is flushed to a level-0 table; 0 keeps fjall's default \
     (64 MiB). Stored with the keyspace when it is created: a reopen keeps the first value.",
);

/// `fjall.compression`: block compression.
pub const COMPRESSION: Property<Compression> = Property::new(
    "fjall.compression",
    "default",
    "Data block compression: default (fjall's: none on levels 0-1, lz4 below), none or lz4 \
     (snappy, db_bench's default, is read as lz4, fjall's only compressor). \
     Stored with the keyspace when it is created: a reopen keeps the first value.",
);

/// `fjall.fsync`: sync the journal before acknowledging each write.
pub const FSYNC: Property<bool> = Property::new(
    "fjall.fsync",
    "false",
    "Sync the journal to disk (fdatasync) before acknowledging each write. With false, \
     fjall's default, each write is handed to the operating system before it is \
     acknowledged: it survives a killed process, not a machine crash.",
);

/// `fjall.worker_threads`: background flush and compaction threads.
pub const WORKER_THREADS: Property<u32> = Property::new(
    "fjall.worker_threads",
    "0",
    "Threads for flushes and compactions, all started at open; 0 keeps fjall's default (the CPU \
     count, at most 4).",
)
// fjall starts every worker when the database opens and aborts the
// process when the operating system refuses one; more than a few per core
// only queue.
.range(0, MAX_WORKER_THREADS as i128);

/// The most `fjall.worker_threads`.
const MAX_WORKER_THREADS: u32 = 256;

/// Every property the `fjall` store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    DIR.decl(),
    DESTROY.decl(),
    CACHE_SIZE.decl(),
    MEMTABLE_SIZE.decl(),
    COMPRESSION.decl(),
    FSYNC.decl(),
    WORKER_THREADS.decl(),
];

/// The smallest memtable fjall handles sensibly; smaller values are refused
/// rather than making a table per few records.
const MIN_MEMTABLE: u64 = 64 * 1024;

/// Everything the store is opened with, read and checked from properties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    /// The directory (`DIR`) and `destroy`.
    pub dir: DirSetting,
    pub cache_size: Option<u64>,
    pub memtable_size: Option<u64>,
    pub compression: Compression,
    pub fsync: bool,
    pub worker_threads: Option<usize>,
}

impl Config {
    pub fn from_properties(p: &Properties) -> Result<Config, PropertyError> {
        let dir = DirSetting::from_properties(p, &DIR, &DESTROY)?;
        let nonzero = |v: u64| (v != 0).then_some(v);
        let memtable_size = nonzero(p.get(&MEMTABLE_SIZE)?);
        if memtable_size.is_some_and(|m| m < MIN_MEMTABLE) {
            return Err(p.invalid(
                MEMTABLE_SIZE.decl(),
                format!("expected 0 (fjall's default) or at least {MIN_MEMTABLE} bytes"),
            ));
        }
        Ok(Config {
            dir,
            cache_size: nonzero(p.get(&CACHE_SIZE)?),
            memtable_size,
            compression: p.get(&COMPRESSION)?,
            fsync: p.get(&FSYNC)?,
            worker_threads: nonzero(u64::from(p.get(&WORKER_THREADS)?)).map(|n| n as usize),
        })
    }

    /// The effective settings as `name=value` lines, for the results.
    pub fn describe(&self) -> String {
        fn or_default(v: Option<impl std::fmt::Display>) -> String {
            v.map_or_else(|| "default".to_string(), |v| v.to_string())
        }
        format!(
            "{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n",
            DIR.name(),
            self.dir.path.display(),
            DESTROY.name(),
            self.dir.destroy,
            CACHE_SIZE.name(),
            or_default(self.cache_size),
            MEMTABLE_SIZE.name(),
            or_default(self.memtable_size),
            COMPRESSION.name(),
            self.compression.name(),
            FSYNC.name(),
            self.fsync,
            WORKER_THREADS.name(),
            or_default(self.worker_threads),
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
    fn defaults_keep_fjalls_defaults() {
        let c = Config::from_properties(&props(&[("fjall.dir", "/x")])).unwrap();
        assert_eq!(c.dir.path, PathBuf::from("/x"));
        assert!(!c.dir.destroy && !c.fsync);
        assert_eq!(c.cache_size, None);
        assert_eq!(c.memtable_size, None);
        assert_eq!(c.worker_threads, None);
        assert_eq!(c.compression, Compression::Default);
    }

    #[test]
    fn dir_is_required() {
        let err = Config::from_properties(&Properties::new()).unwrap_err();
        assert!(err.to_string().starts_with("fjall.dir: required"), "{err}");
    }

    #[test]
    fn values_are_applied() {
        let c = Config::from_properties(&props(&[
            ("fjall.dir", "d"),
            ("fjall.destroy", "true"),
            ("fjall.cache_size", "1000000"),
            ("fjall.memtable_size", "1048576"),
            ("fjall.compression", "lz4"),
            ("fjall.fsync", "true"),
            ("fjall.worker_threads", "2"),
        ]))
        .unwrap();
        assert!(c.dir.destroy && c.fsync);
        assert_eq!(c.cache_size, Some(1_000_000));
        assert_eq!(c.memtable_size, Some(1 << 20));
        assert_eq!(c.compression, Compression::Lz4);
        assert_eq!(c.worker_threads, Some(2));
        let text = c.describe();
        for line in ["fjall.memtable_size=1048576", "fjall.compression=lz4"] {
            assert!(text.lines().any(|l| l == line), "{text}");
        }
    }

    #[test]
    fn errors_name_the_property_and_origin() {
        let cases = [
            ("fjall.cache_size", "32MB", "expected an unsigned integer"),
            (
                "fjall.compression",
                "zstd",
                "expected one of default, none, lz4",
            ),
            ("fjall.memtable_size", "1000", "at least 65536"),
            ("fjall.fsync", "yes", "expected true or false"),
            // 100000 aborted the process when the threads could not start.
            ("fjall.worker_threads", "100000", "expected 0 to 256"),
        ];
        ycsb_db::testing::assert_invalid_values(
            Config::from_properties,
            &[("fjall.dir", "d")],
            &cases,
        );
    }

    #[test]
    fn every_property_is_listed_once() {
        ycsb_db::testing::assert_declared_once(PROPERTIES, "fjall.");
    }
}
