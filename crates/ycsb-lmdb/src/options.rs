//! The store's properties, with YCSB-cpp's names and meanings, and their
//! translation into environment options.

use std::path::PathBuf;

use ycsb_db::{DirSetting, Properties, Property, PropertyDecl, PropertyError};

use crate::ffi::{
    EnvOptions, MDB_MAPASYNC, MDB_NOMETASYNC, MDB_NORDAHEAD, MDB_NOSYNC, MDB_WRITEMAP,
};

/// `lmdb.dbpath`: the environment directory.
pub const DBPATH: Property<PathBuf> = Property::optional(
    "lmdb.dbpath",
    "The LMDB environment directory (data.mdb and lock.mdb), created if missing. Required.",
);

/// `lmdb.mapsize`: the size of the memory map, the database's limit.
pub const MAPSIZE: Property<i64> = Property::new(
    "lmdb.mapsize",
    "1073741824",
    "Bytes of the memory map, the largest the database may grow to (a write beyond it \
     fails with MDB_MAP_FULL). The default is the 1 GiB of YCSB-cpp's lmdb.properties. \
     -1 is YCSB-cpp's \"use default\": LMDB's own size (an existing database's stored \
     size, else LMDB's default of 1 MiB); YCSB-cpp's code itself turns -1 into a size LMDB \
     cannot map. With lmdb.writemap, all of the map is allocated on disk at open.",
)
// The map is a file's length (an off_t) with lmdb.writemap; -1 leaves it
// to LMDB.
.range(-1, i64::MAX as i128);

/// `lmdb.nosync`.
pub const NOSYNC: Property<bool> = Property::new(
    "lmdb.nosync",
    "false",
    "MDB_NOSYNC: do not fsync when a write transaction commits. Commits still reach the \
     file (they survive a killed process) but not a machine crash.",
);

/// `lmdb.nometasync`.
pub const NOMETASYNC: Property<bool> = Property::new(
    "lmdb.nometasync",
    "false",
    "MDB_NOMETASYNC: fsync the data but not the meta page at commit (the last commit may \
     be lost in a machine crash, the database stays consistent).",
);

/// `lmdb.noreadahead`.
pub const NOREADAHEAD: Property<bool> = Property::new(
    "lmdb.noreadahead",
    "false",
    "MDB_NORDAHEAD: turn off the operating system's readahead on the map (helps random \
     reads of a database larger than memory).",
);

/// `lmdb.writemap`.
pub const WRITEMAP: Property<bool> = Property::new(
    "lmdb.writemap",
    "false",
    "MDB_WRITEMAP: write through a writable memory map instead of write(2). Faster writes. \
     The whole map (lmdb.mapsize) is allocated in data.mdb at open, and the open refused \
     when the file system cannot hold it: a page written into a hole of a full file system \
     would kill the process with SIGBUS.",
);

/// `lmdb.mapasync`.
pub const MAPASYNC: Property<bool> = Property::new(
    "lmdb.mapasync",
    "false",
    "MDB_MAPASYNC: with lmdb.writemap, flush asynchronously (msync(MS_ASYNC)).",
);

/// `lmdb.destroy`: start from an empty database (not in YCSB-cpp).
pub const DESTROY: Property<bool> = Property::new(
    "lmdb.destroy",
    "false",
    "Delete data.mdb and lock.mdb at lmdb.dbpath before opening (db_bench's fill benchmarks).",
);

/// `lmdb.maxreaders`: reader slots (not in YCSB-cpp).
pub const MAXREADERS: Property<u32> = Property::new(
    "lmdb.maxreaders",
    "1024",
    "Reader slots in the lock file: each client thread holds one (LMDB's default is 126).",
)
.range(1, u32::MAX as i128);

/// Every property the `lmdb` store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    DBPATH.decl(),
    MAPSIZE.decl(),
    NOSYNC.decl(),
    NOMETASYNC.decl(),
    NOREADAHEAD.decl(),
    WRITEMAP.decl(),
    MAPASYNC.decl(),
    DESTROY.decl(),
    MAXREADERS.decl(),
];

/// Everything the store is opened with, read and checked from properties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    /// The directory (`DBPATH`) and `destroy`.
    pub dir: DirSetting,
    pub env: EnvOptions,
}

impl Config {
    pub fn from_properties(p: &Properties) -> Result<Config, PropertyError> {
        let dir = DirSetting::from_properties(p, &DBPATH, &DESTROY)?;
        let map_size =
            match p.get(&MAPSIZE)? {
                -1 => None,
                0 => return Err(p.invalid(MAPSIZE.decl(), "expected a size in bytes, or -1")),
                size => Some(usize::try_from(size).map_err(|_| {
                    p.invalid(MAPSIZE.decl(), "expected a size that fits in memory")
                })?),
            };
        let max_readers = p.get(&MAXREADERS)?;
        let mut flags = 0;
        for (prop, flag) in [
            (&NOSYNC, MDB_NOSYNC),
            (&NOMETASYNC, MDB_NOMETASYNC),
            (&NOREADAHEAD, MDB_NORDAHEAD),
            (&WRITEMAP, MDB_WRITEMAP),
            (&MAPASYNC, MDB_MAPASYNC),
        ] {
            if p.get(prop)? {
                flags |= flag;
            }
        }
        Ok(Config {
            dir,
            env: EnvOptions {
                map_size,
                max_readers,
                flags,
            },
        })
    }

    /// The effective settings as `name=value` lines, for the results.
    pub fn describe(&self) -> String {
        let flag = |f| self.env.flags & f != 0;
        let mut out = format!(
            "{}={}\n{}={}\n{}={}\n",
            DBPATH.name(),
            self.dir.path.display(),
            MAPSIZE.name(),
            self.env.map_size.map_or(-1, |size| size as i64),
            MAXREADERS.name(),
            self.env.max_readers,
        );
        for (prop, f) in [
            (&NOSYNC, MDB_NOSYNC),
            (&NOMETASYNC, MDB_NOMETASYNC),
            (&NOREADAHEAD, MDB_NORDAHEAD),
            (&WRITEMAP, MDB_WRITEMAP),
            (&MAPASYNC, MDB_MAPASYNC),
        ] {
            out.push_str(&format!("{}={}\n", prop.name(), flag(f)));
        }
        out.push_str(&format!("{}={}\n", DESTROY.name(), self.dir.destroy));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        Properties::new().with_flags(pairs)
    }

    #[test]
    fn defaults_are_the_shipped_map_size_and_synced_commits() {
        let c = Config::from_properties(&props(&[("lmdb.dbpath", "/x")])).unwrap();
        assert_eq!(c.dir.path, PathBuf::from("/x"));
        assert_eq!(
            c.env,
            EnvOptions {
                map_size: Some(1 << 30),
                max_readers: 1024,
                flags: 0
            }
        );
        assert!(!c.dir.destroy);
    }

    #[test]
    fn mapsize_minus_one_leaves_the_size_to_lmdb_as_ycsb_cpp_documents() {
        let c = Config::from_properties(&props(&[("lmdb.dbpath", "d"), ("lmdb.mapsize", "-1")]))
            .unwrap();
        assert_eq!(c.env.map_size, None);
        assert!(
            c.describe().contains("lmdb.mapsize=-1\n"),
            "{}",
            c.describe()
        );
        for bad in ["0", "-2"] {
            let err =
                Config::from_properties(&props(&[("lmdb.dbpath", "d"), ("lmdb.mapsize", bad)]))
                    .unwrap_err()
                    .to_string();
            assert!(err.contains("lmdb.mapsize") && err.contains(bad), "{err}");
        }
    }

    #[test]
    fn every_flag_is_applied() {
        let c = Config::from_properties(&props(&[
            ("lmdb.dbpath", "d"),
            ("lmdb.mapsize", "4096000"),
            ("lmdb.nosync", "true"),
            ("lmdb.nometasync", "true"),
            ("lmdb.noreadahead", "true"),
            ("lmdb.writemap", "true"),
            ("lmdb.mapasync", "true"),
            ("lmdb.destroy", "true"),
        ]))
        .unwrap();
        assert_eq!(c.env.map_size, Some(4_096_000));
        assert_eq!(
            c.env.flags,
            MDB_NOSYNC | MDB_NOMETASYNC | MDB_NORDAHEAD | MDB_WRITEMAP | MDB_MAPASYNC
        );
        assert!(c.dir.destroy);
        assert!(c.describe().contains("lmdb.writemap=true\n"));
    }

    #[test]
    fn errors_name_the_property_and_origin() {
        ycsb_db::testing::assert_invalid_values(
            Config::from_properties,
            &[("lmdb.dbpath", "d")],
            &[
                ("lmdb.mapsize", "-2", "expected -1 to 9223372036854775807"),
                ("lmdb.mapsize", "0", "expected a size in bytes, or -1"),
                (
                    "lmdb.mapsize",
                    "9223372036854775808",
                    "expected -1 to 9223372036854775807",
                ),
                ("lmdb.nosync", "yes", "expected true or false"),
                ("lmdb.maxreaders", "0", "expected 1 to 4294967295"),
            ],
        );
        let err = Config::from_properties(&Properties::new()).unwrap_err();
        assert!(
            err.to_string().starts_with("lmdb.dbpath: required"),
            "{err}"
        );
    }

    #[test]
    fn every_property_is_listed_once() {
        ycsb_db::testing::assert_declared_once(PROPERTIES, "lmdb.");
    }
}
