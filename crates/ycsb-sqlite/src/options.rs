//! The store's properties, with YCSB-cpp's names and meanings.

use std::path::{Path, PathBuf};

use ycsb_db::{DirSetting, Properties, Property, PropertyDecl, PropertyError};

ycsb_db::choice_property! {
    /// SQLite's `PRAGMA journal_mode` (`sqlite.journal_mode`).
    pub enum JournalMode {
        /// A rollback journal deleted at each commit.
        Delete = "DELETE",
        /// A rollback journal truncated at each commit.
        Truncate = "TRUNCATE",
        /// A rollback journal whose header is zeroed at each commit.
        Persist = "PERSIST",
        /// A rollback journal in memory (a crash can corrupt the database).
        Memory = "MEMORY",
        /// A write-ahead log (YCSB-cpp's default): readers do not block
        /// the writer.
        Wal = "WAL",
        /// No journal (a crash can corrupt the database).
        Off = "OFF",
    }
}

ycsb_db::choice_property! {
    /// SQLite's `PRAGMA synchronous` (`sqlite.synchronous`).
    pub enum Synchronous {
        /// No fsync: commits survive a killed process, not a machine crash.
        Off = "OFF" | "0",
        /// With WAL, fsync at checkpoints only (YCSB-cpp's default).
        Normal = "NORMAL" | "1",
        /// fsync at every commit.
        Full = "FULL" | "2",
        /// FULL, and the journal's directory too.
        Extra = "EXTRA" | "3",
    }
}

ycsb_db::choice_property! {
    /// How a record is laid out in its table (`sqlite.schema`).
    pub enum Schema {
        /// One encoded column for all fields (every embedded binding's
        /// record encoding).
        Blob = "blob",
        /// A `TEXT` column per field, as YCSB-cpp's and Java's JDBC
        /// binding's tables.
        Columns = "columns",
    }
}

/// `sqlite.dbpath`.
pub const DBPATH: Property<PathBuf> = Property::optional(
    "sqlite.dbpath",
    "The database: a directory holding ycsb.sqlite (and its -wal and -shm files), created if \
     missing; or, as YCSB-cpp names it, the database file itself: a path that is an existing \
     file, or a missing one whose last part has an extension (/tmp/ycsb-sqlite.db), is the \
     file, beside which only its own -wal, -shm and -journal files are looked at (and, with \
     sqlite.destroy, removed). Required.",
);

/// `sqlite.cache_size`.
pub const CACHE_SIZE: Property<i64> = Property::new(
    "sqlite.cache_size",
    "-2000",
    "PRAGMA cache_size of each connection: pages if positive, KiB if negative \
     (-2000, SQLite's default, is about 2 MB per client thread).",
)
// SQLite keeps the setting in a C int.
.range(i32::MIN as i128, i32::MAX as i128);

/// `sqlite.page_size`.
pub const PAGE_SIZE: Property<u32> = Property::new(
    "sqlite.page_size",
    "4096",
    "PRAGMA page_size: bytes per B-tree page, a power of two from 512 to 65536. Applies \
     when the database is created.",
)
.range(512, 65536);

/// `sqlite.journal_mode`.
pub const JOURNAL_MODE: Property<JournalMode> = Property::new(
    "sqlite.journal_mode",
    "WAL",
    "PRAGMA journal_mode: DELETE, TRUNCATE, PERSIST, MEMORY, WAL or OFF.",
);

/// `sqlite.synchronous`.
pub const SYNCHRONOUS: Property<Synchronous> = Property::new(
    "sqlite.synchronous",
    "NORMAL",
    "PRAGMA synchronous of each connection: OFF, NORMAL, FULL or EXTRA (or 0-3). With WAL, \
     NORMAL commits survive a killed process; FULL also a machine crash.",
);

/// `sqlite.create_table`.
pub const CREATE_TABLE: Property<bool> = Property::new(
    "sqlite.create_table",
    "true",
    "Create the table of an operation if it does not exist; with false, a missing table \
     makes the operations fail.",
);

/// `sqlite.primary_key`.
pub const PRIMARY_KEY: Property<String> = Property::new(
    "sqlite.primary_key",
    "user_id",
    "The name of the key column (YCSB-cpp's).",
);

/// `sqlite.schema` (not in YCSB-cpp).
pub const SCHEMA: Property<Schema> = Property::new(
    "sqlite.schema",
    "blob",
    "The table's layout. blob: the key and one column holding all fields encoded, as every \
     embedded binding keeps a record (an update reads, merges and writes it back). columns: \
     YCSB-cpp's and Java's JDBC binding's table, a TEXT column per field beside the key \
     column (sqlite.primary_key: YCSB-cpp's user_id, Java's YCSB_KEY), a column added the \
     first time a field appears; a read of some fields reads their columns, an update writes \
     only its columns in one UPDATE. Tables of the two layouts cannot be read by the other.",
);

/// `sqlite.destroy` (not in YCSB-cpp).
pub const DESTROY: Property<bool> = Property::new(
    "sqlite.destroy",
    "false",
    "Delete the database at sqlite.dbpath before opening (db_bench's fill benchmarks).",
);

/// `sqlite.busy_timeout` (not in YCSB-cpp).
pub const BUSY_TIMEOUT: Property<u64> = Property::new(
    "sqlite.busy_timeout",
    "10000",
    "Milliseconds a connection waits for another one's lock (another client thread's \
     write, another process) before the operation fails with 'database is locked'.",
)
// SQLite's sqlite3_busy_timeout takes the milliseconds as a C int.
.range(0, i32::MAX as i128);

/// Every property the `sqlite` store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    DBPATH.decl(),
    CACHE_SIZE.decl(),
    PAGE_SIZE.decl(),
    JOURNAL_MODE.decl(),
    SYNCHRONOUS.decl(),
    CREATE_TABLE.decl(),
    PRIMARY_KEY.decl(),
    SCHEMA.decl(),
    DESTROY.decl(),
    BUSY_TIMEOUT.decl(),
];

/// Everything the store is opened with, read and checked from properties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    /// The directory or database file (`DBPATH`) and `destroy`.
    pub dir: DirSetting,
    /// Whether `dir` names the database file itself (YCSB-cpp's meaning)
    /// rather than a directory holding [`DB_FILE`](crate::store::DB_FILE).
    pub single_file: bool,
    pub cache_size: i64,
    pub page_size: u32,
    pub journal_mode: JournalMode,
    pub synchronous: Synchronous,
    pub create_table: bool,
    pub primary_key: String,
    pub schema: Schema,
    pub busy_timeout_ms: u64,
}

/// A name SQLite takes unquoted: letters, digits and `_`, not starting
/// with a digit.
pub(crate) fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `sqlite.dbpath` names the database file, as YCSB-cpp's does
/// (`/tmp/ycsb-sqlite.db`), rather than a directory: a path that exists and
/// is not a directory, or a missing one whose last part has an extension
/// and no trailing `/`. A directory keeps its meaning, and a missing path
/// without an extension is made a directory, as before.
pub(crate) fn names_a_file(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(meta) => !meta.is_dir(),
        Err(_) => {
            !path.as_os_str().as_encoded_bytes().ends_with(b"/") && path.extension().is_some()
        }
    }
}

impl Config {
    pub fn from_properties(p: &Properties) -> Result<Config, PropertyError> {
        let dir = DirSetting::from_properties(p, &DBPATH, &DESTROY)?;
        let single_file = names_a_file(&dir.path);
        let page_size = p.get_checked(&PAGE_SIZE, |&s| {
            if s.is_power_of_two() {
                Ok(())
            } else {
                Err("expected a power of two from 512 to 65536".to_string())
            }
        })?;
        let primary_key = p.get_checked(&PRIMARY_KEY, |k| {
            if is_plain_identifier(k) && k != "fields" {
                Ok(())
            } else {
                Err("expected a column name of letters, digits and _ (not 'fields')".to_string())
            }
        })?;
        Ok(Config {
            dir,
            single_file,
            cache_size: p.get(&CACHE_SIZE)?,
            page_size,
            journal_mode: p.get(&JOURNAL_MODE)?,
            synchronous: p.get(&SYNCHRONOUS)?,
            create_table: p.get(&CREATE_TABLE)?,
            primary_key,
            schema: p.get(&SCHEMA)?,
            busy_timeout_ms: p.get(&BUSY_TIMEOUT)?,
        })
    }

    /// The database file.
    pub fn database_file(&self) -> PathBuf {
        if self.single_file {
            self.dir.path.clone()
        } else {
            self.dir.path.join(crate::store::DB_FILE)
        }
    }

    /// The effective settings as `name=value` lines, for the results.
    pub fn describe(&self) -> String {
        format!(
            "{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n",
            DBPATH.name(),
            self.dir.path.display(),
            CACHE_SIZE.name(),
            self.cache_size,
            PAGE_SIZE.name(),
            self.page_size,
            JOURNAL_MODE.name(),
            self.journal_mode.name(),
            SYNCHRONOUS.name(),
            self.synchronous.name(),
            CREATE_TABLE.name(),
            self.create_table,
            PRIMARY_KEY.name(),
            self.primary_key,
            SCHEMA.name(),
            self.schema.name(),
            DESTROY.name(),
            self.dir.destroy,
            BUSY_TIMEOUT.name(),
            self.busy_timeout_ms,
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
    fn defaults_are_ycsb_cpp_s() {
        let c = Config::from_properties(&props(&[("sqlite.dbpath", "/x")])).unwrap();
        assert_eq!(c.cache_size, -2000);
        assert_eq!(c.page_size, 4096);
        assert_eq!(c.journal_mode, JournalMode::Wal);
        assert_eq!(c.synchronous, Synchronous::Normal);
        assert!(c.create_table);
        assert_eq!(c.primary_key, "user_id");
        assert!(!c.dir.destroy);
    }

    #[test]
    fn values_are_applied_case_insensitively() {
        let c = Config::from_properties(&props(&[
            ("sqlite.dbpath", "d"),
            ("sqlite.cache_size", "1000"),
            ("sqlite.page_size", "8192"),
            ("sqlite.journal_mode", "delete"),
            ("sqlite.synchronous", "2"),
            ("sqlite.create_table", "false"),
            ("sqlite.primary_key", "ycsb_key"),
        ]))
        .unwrap();
        assert_eq!(c.cache_size, 1000);
        assert_eq!(c.page_size, 8192);
        assert_eq!(c.journal_mode, JournalMode::Delete);
        assert_eq!(c.synchronous, Synchronous::Full);
        assert!(!c.create_table);
        assert!(c.describe().contains("sqlite.primary_key=ycsb_key\n"));
    }

    #[test]
    fn errors_name_the_property_and_origin() {
        for (key, value, reason) in [
            ("sqlite.page_size", "5000", "power of two"),
            ("sqlite.journal_mode", "wall", "expected one of DELETE"),
            ("sqlite.synchronous", "4", "expected one of OFF"),
            ("sqlite.primary_key", "user id", "column name"),
            ("sqlite.primary_key", "x;drop", "column name"),
            ("sqlite.cache_size", "2MB", "expected an integer"),
            ("sqlite.page_size", "131072", "expected 512 to 65536"),
            // rusqlite panicked on a timeout beyond a C int of milliseconds.
            (
                "sqlite.busy_timeout",
                "2147483648",
                "expected 0 to 2147483647",
            ),
            (
                "sqlite.cache_size",
                "2147483648",
                "expected -2147483648 to 2147483647",
            ),
        ] {
            let err = Config::from_properties(&props(&[("sqlite.dbpath", "d"), (key, value)]))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("{key}: invalid value '{value}' (-p flag)")),
                "{err}"
            );
            assert!(err.contains(reason), "{err}");
        }
        let err = Config::from_properties(&Properties::new()).unwrap_err();
        assert!(
            err.to_string().starts_with("sqlite.dbpath: required"),
            "{err}"
        );
    }

    #[test]
    fn a_path_with_an_extension_or_an_existing_file_is_the_database_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("existing");
        std::fs::write(&file, "").unwrap();
        let db_dir = dir.path().join("dir.d");
        std::fs::create_dir(&db_dir).unwrap();
        for (path, is_file) in [
            (PathBuf::from("/nowhere/a-database.db"), true),
            (dir.path().join("missing.sqlite3"), true),
            (file, true),
            (PathBuf::from("/nowhere/a-directory"), false),
            (dir.path().join("missing"), false),
            (db_dir, false),
            (PathBuf::from("/nowhere/x.db/"), false),
        ] {
            assert_eq!(names_a_file(&path), is_file, "{}", path.display());
            let c =
                Config::from_properties(&props(&[("sqlite.dbpath", &path.display().to_string())]))
                    .unwrap();
            assert_eq!(c.single_file, is_file);
            let expected = if is_file {
                path.clone()
            } else {
                path.join("ycsb.sqlite")
            };
            assert_eq!(c.database_file(), expected);
        }
    }

    #[test]
    fn every_property_is_listed_once() {
        let mut names: Vec<_> = PROPERTIES.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PROPERTIES.len());
        assert!(names.iter().all(|n| n.starts_with("sqlite.")));
    }
}
