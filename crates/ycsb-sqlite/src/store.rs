//! The `sqlite` store: one database, one connection per client thread.

use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::types::ValueRef;
use rusqlite::{ffi, Connection, OpenFlags};
use ycsb_db::codec;
use ycsb_db::{
    batch_status, read_in_place_by_copy, Assertions, Batch, Content, DirLayout, EngineBuild,
    EngineFile, EngineInDir, EngineInfo, EngineLock, EngineReport, Gauge, LockKind, Name,
    Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store, StoreError, StoreThread,
    ThreadContext, Visit,
};

use crate::columns::{self, ColumnTable};
use crate::options::{Config, JournalMode, Schema};

/// The store's name, as users type it.
const NAME: &str = "sqlite";

/// The database file inside `sqlite.dbpath`; SQLite adds `-wal`, `-shm`
/// (WAL mode) or `-journal` beside it.
pub(crate) const DB_FILE: &str = "ycsb.sqlite";

/// What `sqlite.dbpath` holds: the database file, recognised by SQLite's
/// 16-byte header string; its write-ahead log, recognised by the WAL's
/// magic number (either byte order of its checksums); and the WAL index and
/// rollback journal, which SQLite may leave with nothing recognisable (a
/// journal's header is zeroed when it is persisted), so accepted only
/// beside the database. Every connection holds record locks on the
/// database file or the WAL index while it has the database open.
pub(crate) const LAYOUT: DirLayout = DirLayout {
    engine: "SQLite",
    files: &[
        EngineFile::marker(Name::Exact(DB_FILE), Content::Prefix(b"SQLite format 3\0")),
        EngineFile::owned(Name::Exact("ycsb.sqlite-wal"), Content::Check(is_wal)),
        EngineFile::owned(Name::Exact("ycsb.sqlite-shm"), Content::Unchecked),
        EngineFile::owned(Name::Exact("ycsb.sqlite-journal"), Content::Unchecked),
    ],
    locks: &[
        EngineLock {
            file: DB_FILE,
            kind: LockKind::Record,
        },
        EngineLock {
            file: "ycsb.sqlite-shm",
            kind: LockKind::Record,
        },
    ],
};

/// Whether a file starts with the magic number of SQLite's write-ahead log
/// (0x377f0682 or 0x377f0683, big-endian).
fn is_wal(start: &[u8]) -> bool {
    matches!(start.get(..4), Some([0x37, 0x7f, 0x06, 0x82 | 0x83]))
}

/// Operations between two publications of a thread's page cache counters
/// (`sqlite3_db_status` is cheap, but not free).
const PUBLISH_EVERY: u32 = 256;

/// A thread's page cache counters, read by [`Store::gauges`]: written by
/// that thread alone, every [`PUBLISH_EVERY`] operations.
#[derive(Debug, Default)]
struct CacheCounters {
    hits: AtomicU64,
    misses: AtomicU64,
    writes: AtomicU64,
}

/// A SQLite database opened once; each client thread opens its own
/// connection to it (SQLite connections are not shared between threads
/// without its own mutex).
///
/// Each table of the workload is a table of two columns: the key (named
/// by `sqlite.primary_key`, the table's primary key, so SQLite keeps an
/// index ordered by it) and `fields`, the record encoded with
/// [`ycsb_db::codec`] as in every embedded binding.
#[derive(Debug)]
pub struct SqliteStore {
    config: Config,
    file: PathBuf,
    /// A connection for the gauges and the final checkpoint; locked once
    /// per status interval, never by operations. Held with the directory's
    /// guard, which is released only after the connection has closed.
    monitor: EngineInDir<Mutex<Connection>>,
    /// Every client thread's counters (registered when it starts).
    counters: Mutex<Vec<Arc<CacheCounters>>>,
}

/// SQLite's message for `e`, with the operating system's reason when
/// SQLite recorded one, so that a full disk says so: SQLite's own words
/// for it, "database or disk is full", also cover its page limit, and a
/// short write (how a full tmpfs answers) leaves no errno.
fn describe(e: &rusqlite::Error, conn: &Connection) -> String {
    if let Some(file) = conn.path() {
        if cannot_write(e) && on_read_only_file_system(Path::new(file)) {
            return format!("{e}: {READ_ONLY}");
        }
    }
    // SAFETY: a live connection handle, only read.
    let errno = unsafe { ffi::sqlite3_system_errno(conn.handle()) };
    if errno != 0 {
        return format!("{e} ({})", std::io::Error::from_raw_os_error(errno));
    }
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
        if let Some(free) = conn.path().and_then(free_bytes) {
            if free < DISK_FULL_BELOW {
                return format!(
                    "{e} ({}: {free} bytes free on its file system)",
                    std::io::Error::from_raw_os_error(libc::ENOSPC)
                );
            }
        }
    }
    e.to_string()
}

/// Free bytes below which SQLITE_FULL is the file system's, not SQLite's
/// page limit: less than a few pages' worth.
const DISK_FULL_BELOW: u64 = 1 << 20;

/// Bytes an unprivileged writer may still use on the file system of
/// `path`.
fn free_bytes(path: &str) -> Option<u64> {
    let st = file_system_of(Path::new(path))?;
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

/// `statvfs` of the file system holding `path`.
fn file_system_of(path: &Path) -> Option<libc::statvfs> {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: a NUL-terminated path and a valid out-pointer.
    if unsafe { libc::statvfs(c_path.as_ptr(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statvfs succeeded and filled it.
    Some(unsafe { st.assume_init() })
}

/// What a database on a read-only mount is told. SQLite itself says
/// "unable to open database file" and, having fallen back to opening
/// read-only, the errno of the last file it looked for (ENOENT for a
/// missing -wal or database file), never EROFS.
const READ_ONLY: &str = "its directory is on a file system mounted read-only \
                         (Read-only file system); sqlite.dbpath must be writable";

/// Whether SQLite's error is one a read-only file would cause.
fn cannot_write(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
    )
}

/// Whether the database file `file` is in a directory on a file system
/// mounted read-only.
fn on_read_only_file_system(file: &Path) -> bool {
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    file_system_of(dir).is_some_and(|st| st.f_flag & libc::ST_RDONLY != 0)
}

impl SqliteStore {
    /// Opens (creating if missing) the database in the directory, or the
    /// database file, that `properties` name (`sqlite.dbpath` and the
    /// other [`PROPERTIES`](crate::PROPERTIES)).
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for a missing `sqlite.dbpath` or an invalid
    /// value, naming the property and where it was set;
    /// [`StoreError::Open`] for a directory holding something else than
    /// this store's database (nothing is changed then), or with SQLite's
    /// message when it cannot open the database (a file that is not a
    /// database, a database another process keeps locked longer than
    /// `sqlite.busy_timeout`, a directory that cannot be written).
    pub fn open(properties: &Properties) -> Result<SqliteStore, StoreError> {
        crate::lazy::load().map_err(|e| StoreError::open(NAME, e))?;
        let config = Config::from_properties(properties)?;
        let fail = |message: String| config.dir.open_error(NAME, message);
        let dir = if config.single_file {
            config.dir.open_file(NAME, &LAYOUT)?
        } else {
            config.dir.open(NAME, &LAYOUT)?
        };
        let file = config.database_file();
        let monitor = open_connection(&file, &config).map_err(&fail)?;
        let setup = || -> rusqlite::Result<String> {
            // Only takes effect while the database is empty (or on VACUUM).
            monitor.pragma_update(None, "page_size", config.page_size)?;
            // Also the first read of the file: a file that is not a
            // database says so here.
            monitor.query_row(
                &format!("PRAGMA journal_mode = {}", config.journal_mode.name()),
                [],
                |row| row.get::<_, String>(0),
            )
        };
        let mode = setup().map_err(|e| fail(describe(&e, &monitor)))?;
        if !mode.eq_ignore_ascii_case(config.journal_mode.name())
            && config.journal_mode != JournalMode::Memory
        {
            return Err(fail(format!(
                "sqlite.journal_mode={} was not applied: SQLite kept {mode}",
                config.journal_mode.name()
            )));
        }
        Ok(SqliteStore {
            file,
            monitor: EngineInDir::new(Mutex::new(monitor), dir),
            counters: Mutex::new(Vec::new()),
            config,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// The SQLite version linked into this program.
    pub fn linked_version() -> String {
        rusqlite::version().to_string()
    }

    /// The file SQLite was loaded from: the shared library, or this
    /// program when SQLite is linked statically.
    pub fn linked_library() -> Option<String> {
        ycsb_db::loaded_from(library_code())
    }

    /// `PRAGMA page_count` and `freelist_count`, read by the monitor
    /// connection.
    fn pages(&self) -> Option<(i64, i64)> {
        let conn = self.monitor.lock().ok()?;
        let pages = conn
            .query_row("PRAGMA page_count", [], |r| r.get::<_, i64>(0))
            .ok()?;
        let free = conn
            .query_row("PRAGMA freelist_count", [], |r| r.get::<_, i64>(0))
            .ok()?;
        Some((pages, free))
    }

    fn cache_totals(&self) -> (u64, u64, u64) {
        let Ok(counters) = self.counters.lock() else {
            return (0, 0, 0);
        };
        counters.iter().fold((0, 0, 0), |(h, m, w), c| {
            (
                h + c.hits.load(Ordering::Relaxed),
                m + c.misses.load(Ordering::Relaxed),
                w + c.writes.load(Ordering::Relaxed),
            )
        })
    }
}

/// The state of a connection's busy handler.
struct BusyWait {
    timeout: Duration,
    since: std::cell::Cell<Option<Instant>>,
}

/// Waits for another connection's lock: yields at first (a client
/// thread's write takes microseconds, SQLite's own handler would sleep a
/// millisecond or more), then sleeps briefly, until `sqlite.busy_timeout`.
unsafe extern "C" fn busy_wait(state: *mut c_void, count: c_int) -> c_int {
    // SAFETY: `state` is the BusyWait the connection was given, which
    // outlives it (see `Conn`).
    let state = unsafe { &*state.cast::<BusyWait>() };
    let now = Instant::now();
    if count == 0 {
        state.since.set(Some(now));
    }
    let since = state.since.get().unwrap_or(now);
    if now.duration_since(since) >= state.timeout {
        return 0;
    }
    if count < 100 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(200));
    }
    1
}

/// Opens a connection with the per-connection settings.
fn open_connection(file: &Path, config: &Config) -> Result<Connection, String> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(file, flags).map_err(|e| {
        if cannot_write(&e) && on_read_only_file_system(file) {
            format!("{e}: {READ_ONLY}")
        } else {
            e.to_string()
        }
    })?;
    let settings = || -> rusqlite::Result<()> {
        conn.busy_timeout(Duration::from_millis(config.busy_timeout_ms))?;
        // A column per field makes a statement per field selection.
        conn.set_prepared_statement_cache_capacity(64);
        conn.pragma_update(None, "cache_size", config.cache_size)?;
        conn.pragma_update(None, "synchronous", config.synchronous.name())?;
        Ok(())
    };
    settings().map_err(|e| describe(&e, &conn))?;
    Ok(conn)
}

impl Store for SqliteStore {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        let open_error = |message: String| StoreError::Open {
            store: NAME.to_string(),
            message: format!(
                "a client thread's connection to {}: {message}",
                self.file.display()
            ),
        };
        let conn = open_connection(&self.file, &self.config).map_err(open_error)?;
        let busy = Box::new(BusyWait {
            timeout: Duration::from_millis(self.config.busy_timeout_ms),
            since: std::cell::Cell::new(None),
        });
        // SAFETY: a live connection; the state is boxed (a stable address)
        // and dropped after the connection (field order of `Conn`).
        let rc = unsafe {
            ffi::sqlite3_busy_handler(
                conn.handle(),
                Some(busy_wait),
                std::ptr::from_ref::<BusyWait>(&busy).cast_mut().cast(),
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(open_error(format!("sqlite3_busy_handler failed ({rc})")));
        }
        let counters = Arc::new(CacheCounters::default());
        if let Ok(mut all) = self.counters.lock() {
            all.push(Arc::clone(&counters));
        }
        Ok(Box::new(SqliteThread {
            conn: Conn { conn, _busy: busy },
            config: &self.config,
            sql: None,
            columns: None,
            value: Vec::new(),
            counters,
            until_publish: PUBLISH_EVERY,
            last_error: None,
            in_batch: false,
        }))
    }

    /// `sqlite.pages` and `sqlite.free-pages` (pages of the
    /// database file, and of them the unused ones), `sqlite.db-bytes`,
    /// `sqlite.wal-bytes` (the write-ahead log's file),
    /// `sqlite.memory-used` (SQLite's heap, all connections), and the
    /// page cache counters of all client connections:
    /// `sqlite.cache-hits`, `sqlite.cache-misses`, `sqlite.cache-writes`.
    fn gauges(&self, out: &mut Vec<Gauge>) {
        if let Some((pages, free)) = self.pages() {
            out.push(Gauge::count("sqlite.pages", pages as f64));
            out.push(Gauge::count("sqlite.free-pages", free as f64));
            out.push(Gauge::bytes(
                "sqlite.db-bytes",
                pages as f64 * f64::from(self.config.page_size),
            ));
        }
        let mut wal = self.file.clone().into_os_string();
        wal.push("-wal");
        let wal_bytes = std::fs::metadata(wal).map_or(0, |m| m.len());
        out.push(Gauge::bytes("sqlite.wal-bytes", wal_bytes as f64));
        let (mut current, mut high) = (0i64, 0i64);
        // SAFETY: valid out-pointers; SQLITE_STATUS_MEMORY_USED is global
        // and thread-safe.
        if unsafe {
            ffi::sqlite3_status64(ffi::SQLITE_STATUS_MEMORY_USED, &mut current, &mut high, 0)
        } == ffi::SQLITE_OK
        {
            out.push(Gauge::bytes("sqlite.memory-used", current as f64));
        }
        let (hits, misses, writes) = self.cache_totals();
        out.push(Gauge::count("sqlite.cache-hits", hits as f64));
        out.push(Gauge::count("sqlite.cache-misses", misses as f64));
        out.push(Gauge::count("sqlite.cache-writes", writes as f64));
    }

    fn engine_build(&self) -> EngineBuild {
        EngineBuild::of_code(library_code(), Assertions::Unknown)
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo::new("SQLite", Self::linked_version())
    }

    /// `sqlite.stats` (pages, free pages, the client connections' page
    /// cache counters) and `sqlite.options`: the effective settings, the
    /// version and the library file linked.
    fn final_reports(&self) -> Vec<EngineReport> {
        let mut reports = Vec::new();
        if let Some((pages, free)) = self.pages() {
            let (hits, misses, writes) = self.cache_totals();
            reports.push(EngineReport {
                name: "sqlite.stats".to_string(),
                text: format!(
                    "page_size={}\npage_count={pages}\nfreelist_count={free}\n\
                     cache_hits={hits}\ncache_misses={misses}\ncache_writes={writes}\n",
                    self.config.page_size
                ),
            });
        }
        let (version, library) = (Self::linked_version(), Self::linked_library());
        let options = EngineReport::linked_options(NAME, self.config.describe(), &version, library);
        reports.push(options);
        reports
    }

    /// Checkpoints the write-ahead log into the database file, so that the
    /// database is one file again when the last connection closes.
    fn close(&self) -> Result<(), StoreError> {
        if self.config.journal_mode != JournalMode::Wal {
            return Ok(());
        }
        let conn = self
            .monitor
            .lock()
            .map_err(|_| StoreError::Other("sqlite: the monitor connection is poisoned".into()))?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|e| StoreError::Other(format!("sqlite checkpoint: {}", describe(&e, &conn))))
    }
}

/// A connection and its busy handler's state, dropped in that order.
struct Conn {
    conn: Connection,
    _busy: Box<BusyWait>,
}

/// The statements of one table, as SQL (prepared once, cached by the
/// connection).
struct TableSql {
    table: String,
    read: String,
    scan: String,
    insert: String,
    update_read: String,
    update_write: String,
    delete: String,
}

impl TableSql {
    fn new(table: &str, key: &str) -> TableSql {
        let t = format!("\"{}\"", table.replace('"', "\"\""));
        TableSql {
            table: table.to_string(),
            read: format!("SELECT fields FROM {t} WHERE {key} = ?1"),
            scan: format!(
                "SELECT {key}, fields FROM {t} WHERE {key} >= ?1 ORDER BY {key} LIMIT ?2"
            ),
            // As YCSB-cpp: an insert of an existing key replaces it.
            insert: format!("INSERT OR REPLACE INTO {t} ({key}, fields) VALUES (?1, ?2)"),
            update_read: format!("SELECT fields FROM {t} WHERE {key} = ?1"),
            update_write: format!("UPDATE {t} SET fields = ?2 WHERE {key} = ?1"),
            delete: format!("DELETE FROM {t} WHERE {key} = ?1"),
        }
    }

    /// A rowid table, as YCSB-cpp's, not `WITHOUT ROWID`: a record of
    /// YCSB's default size (about 1,080 bytes encoded) is more than an
    /// index B-tree keeps on a 4 KiB page (about 1,000 bytes), so every
    /// row of a `WITHOUT ROWID` table would spill into an overflow page
    /// (measured: 2 to 3 times slower loads and reads).
    fn create(table: &str, key: &str) -> String {
        let t = format!("\"{}\"", table.replace('"', "\"\""));
        format!(
            "CREATE TABLE IF NOT EXISTS {t} ({key} TEXT PRIMARY KEY NOT NULL, fields BLOB NOT NULL)"
        )
    }
}

/// One client thread: its own connection, the statements of the table it
/// last used, a reusable value buffer.
struct SqliteThread<'a> {
    conn: Conn,
    config: &'a Config,
    sql: Option<TableSql>,
    /// With `sqlite.schema=columns`: the statements and columns of the
    /// table last used.
    columns: Option<ColumnTable>,
    value: Vec<u8>,
    counters: Arc<CacheCounters>,
    until_publish: u32,
    last_error: Option<String>,
    /// Inside a batch's transaction: an update opens none of its own.
    in_batch: bool,
}

/// What an operation's body returns: a status, or SQLite's error.
type OpResult = rusqlite::Result<Status>;

impl SqliteThread<'_> {
    /// The statements of `table`, creating it first (once per thread and
    /// table) when `sqlite.create_table` says so.
    fn use_table(&mut self, table: &str) -> rusqlite::Result<()> {
        if self.sql.as_ref().is_some_and(|s| s.table == table) {
            return Ok(());
        }
        if self.config.create_table {
            self.conn
                .conn
                .execute_batch(&TableSql::create(table, &self.config.primary_key))?;
        }
        self.sql = Some(TableSql::new(table, &self.config.primary_key));
        Ok(())
    }

    /// Runs `body` on `table`'s statements; keeps SQLite's message of a
    /// failure for [`StoreThread::last_error`] (a full disk says so).
    fn op(
        &mut self,
        table: &str,
        body: impl FnOnce(&Connection, &TableSql, &mut Vec<u8>) -> OpResult,
    ) -> Status {
        self.until_publish -= 1;
        if self.until_publish == 0 {
            self.publish_counters();
        }
        let result = self.use_table(table).and_then(|()| match &self.sql {
            Some(sql) => body(&self.conn.conn, sql, &mut self.value),
            None => Ok(Status::Error),
        });
        match result {
            Ok(status) => status,
            Err(e) => {
                self.last_error = Some(describe(&e, &self.conn.conn));
                Status::Error
            }
        }
    }

    /// Runs `body` on `table` laid out a column per field
    /// (`sqlite.schema=columns`), as [`Self::op`] does for the blob
    /// layout; `body` is told whether it may add columns.
    fn op_columns(
        &mut self,
        table: &str,
        body: impl FnOnce(&Connection, &mut ColumnTable, bool) -> OpResult,
    ) -> Status {
        self.until_publish -= 1;
        if self.until_publish == 0 {
            self.publish_counters();
        }
        let conn = &self.conn.conn;
        let create = self.config.create_table;
        let result = (|| {
            if self.columns.as_ref().is_none_or(|t| t.table != table) {
                self.columns = Some(ColumnTable::open(
                    conn,
                    table,
                    &self.config.primary_key,
                    create,
                )?);
            }
            match self.columns.as_mut() {
                Some(t) => body(conn, t, create),
                None => Ok(Status::Error),
            }
        })();
        match result {
            Ok(status) => status,
            Err(e) => {
                self.last_error = Some(describe(&e, &self.conn.conn));
                Status::Error
            }
        }
    }

    fn columns(&self) -> bool {
        self.config.schema == Schema::Columns
    }

    /// Copies this connection's page cache counters where the gauges read
    /// them.
    #[cold]
    fn publish_counters(&mut self) {
        self.until_publish = PUBLISH_EVERY;
        // SAFETY: the raw handle of this thread's connection, used below
        // while the connection lives.
        let handle = unsafe { self.conn.conn.handle() };
        let read = |op: c_int| {
            let (mut current, mut high) = (0, 0);
            // SAFETY: this thread's live connection, valid out-pointers.
            unsafe { ffi::sqlite3_db_status(handle, op, &mut current, &mut high, 0) };
            u64::try_from(current).unwrap_or(0)
        };
        let c = &self.counters;
        c.hits
            .store(read(ffi::SQLITE_DBSTATUS_CACHE_HIT), Ordering::Relaxed);
        c.misses
            .store(read(ffi::SQLITE_DBSTATUS_CACHE_MISS), Ordering::Relaxed);
        c.writes
            .store(read(ffi::SQLITE_DBSTATUS_CACHE_WRITE), Ordering::Relaxed);
    }
}

impl SqliteThread<'_> {
    /// Runs `each` for every record of `batch` in one `BEGIN IMMEDIATE`
    /// transaction, committed once (one sync of the journal): every record
    /// written or, when one fails with an SQLite error (ERROR) or the
    /// commit fails, none.
    fn batch_txn(
        &mut self,
        batch: &Batch,
        statuses: &mut [Status],
        mut each: impl FnMut(&mut Self, &str, &Record) -> Status,
    ) -> Status {
        if let Err(e) = self
            .conn
            .conn
            .prepare_cached("BEGIN IMMEDIATE")
            .and_then(|mut s| s.execute([]))
        {
            self.last_error = Some(describe(&e, &self.conn.conn));
            statuses.fill(Status::Error);
            return Status::Error;
        }
        self.in_batch = true;
        for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
            *status = each(self, key, values);
        }
        self.in_batch = false;
        let end = if statuses.contains(&Status::Error) {
            "ROLLBACK"
        } else {
            "COMMIT"
        };
        let ended = self
            .conn
            .conn
            .prepare_cached(end)
            .and_then(|mut s| s.execute([]));
        if let Err(e) = ended {
            self.last_error = Some(describe(&e, &self.conn.conn));
            let _ = self.conn.conn.execute_batch("ROLLBACK");
            statuses.fill(Status::Error);
            return Status::Error;
        }
        if end == "ROLLBACK" {
            // Nothing of the batch was written.
            statuses.fill(Status::Error);
        }
        batch_status(statuses)
    }
}

impl Drop for SqliteThread<'_> {
    fn drop(&mut self) {
        self.publish_counters();
    }
}

/// The encoded record of the first row of `rows`, if any, to `visit`.
fn first_blob<T>(
    rows: &mut rusqlite::Rows<'_>,
    visit: impl FnOnce(&[u8]) -> T,
) -> rusqlite::Result<Option<T>> {
    match rows.next()? {
        Some(row) => match row.get_ref(0)? {
            ValueRef::Blob(b) => Ok(Some(visit(b))),
            _ => Err(rusqlite::Error::InvalidColumnType(
                0,
                "fields".into(),
                rusqlite::types::Type::Blob,
            )),
        },
        None => Ok(None),
    }
}

impl StoreThread for SqliteThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        if self.columns() {
            return self.op_columns(op.table, |conn, t, _| {
                columns::read(conn, t, op.key, op.fields, out)
            });
        }
        self.op(op.table, |conn, sql, _| {
            let mut stmt = conn.prepare_cached(&sql.read)?;
            let mut rows = stmt.query([op.key])?;
            Ok(
                first_blob(&mut rows, |b| codec::read_into(b, op.fields, out))?
                    .unwrap_or(Status::NotFound),
            )
        })
    }

    /// The fields straight from SQLite's page cache.
    fn read_in_place(&mut self, op: &ReadOp<'_>, buf: &mut Record, visit: &mut Visit) -> Status {
        if self.columns() {
            // Column values are read one by one; copying them is the read.
            return read_in_place_by_copy(buf, visit, |out| self.read(op, out));
        }
        self.op(op.table, |conn, sql, _| {
            let mut stmt = conn.prepare_cached(&sql.read)?;
            let mut rows = stmt.query([op.key])?;
            Ok(
                first_blob(&mut rows, |b| codec::read_in_place(b, op.fields, visit))?
                    .unwrap_or(Status::NotFound),
            )
        })
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        if self.columns() {
            return self.op_columns(op.table, |conn, t, _| {
                columns::scan(conn, t, op.start_key, op.count, op.fields, out)
            });
        }
        let limit = i64::try_from(op.count).unwrap_or(i64::MAX);
        self.op(op.table, |conn, sql, _| {
            let mut stmt = conn.prepare_cached(&sql.scan)?;
            let mut rows = stmt.query(rusqlite::params![op.start_key, limit])?;
            let mut scanned = codec::ScanRows::new(out, op.fields);
            while let Some(row) = rows.next()? {
                let (ValueRef::Text(key), ValueRef::Blob(value)) =
                    (row.get_ref(0)?, row.get_ref(1)?)
                else {
                    return Ok(Status::UnexpectedState);
                };
                if !scanned.push(key, value) {
                    break;
                }
            }
            Ok(scanned.status())
        })
    }

    /// Read-modify-write in one immediate transaction: SQLite has no merge
    /// of its own, and the write lock taken first makes the merge atomic.
    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if self.columns() {
            return self.op_columns(table, |conn, t, create| {
                columns::update(conn, t, key, values, create)
            });
        }
        let in_batch = self.in_batch;
        self.op(table, |conn, sql, buf| {
            if !in_batch {
                conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
            }
            let mut body = || -> OpResult {
                buf.clear();
                let mut read = conn.prepare_cached(&sql.update_read)?;
                let mut rows = read.query([key])?;
                let merged = first_blob(&mut rows, |stored| codec::merge(stored, values, buf))?;
                drop(rows);
                match merged {
                    None => return Ok(Status::NotFound),
                    Some(Err(e)) => return Ok(e.into()),
                    Some(Ok(())) => {}
                }
                conn.prepare_cached(&sql.update_write)?
                    .execute(rusqlite::params![key, &buf[..]])?;
                Ok(Status::Ok)
            };
            match body() {
                // The batch's transaction commits or rolls back.
                result if in_batch => result,
                Ok(Status::Ok) => {
                    conn.prepare_cached("COMMIT")?.execute([])?;
                    Ok(Status::Ok)
                }
                other => {
                    conn.prepare_cached("ROLLBACK")?.execute([])?;
                    other
                }
            }
        })
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if self.columns() {
            return self.op_columns(table, |conn, t, create| {
                columns::insert(conn, t, key, values, create)
            });
        }
        self.op(table, |conn, sql, buf| {
            buf.clear();
            codec::encode(values, buf);
            conn.prepare_cached(&sql.insert)?
                .execute(rusqlite::params![key, &buf[..]])?;
            Ok(Status::Ok)
        })
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        if self.columns() {
            return self.op_columns(table, |conn, t, _| columns::delete(conn, t, key));
        }
        self.op(table, |conn, sql, _| {
            let deleted = conn.prepare_cached(&sql.delete)?.execute([key])?;
            Ok(if deleted == 0 {
                Status::NotFound
            } else {
                Status::Ok
            })
        })
    }

    /// One transaction.
    fn insert_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.batch_txn(batch, statuses, |t, key, values| {
            t.insert(table, key, values)
        })
    }

    /// One transaction; each update reads what the transaction wrote
    /// before it.
    fn update_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.batch_txn(batch, statuses, |t, key, values| {
            t.update(table, key, values)
        })
    }

    /// One transaction.
    fn delete_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.batch_txn(batch, statuses, |t, key, _| t.delete(table, key))
    }

    fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}

/// A function of libsqlite3, whose address says which file holds SQLite's
/// code (the library bound on first use, see build.rs); never called
/// through this pointer.
fn library_code() -> *const () {
    crate::lazy::address(c"sqlite3_libversion")
        .unwrap_or(rusqlite::ffi::sqlite3_libversion as *const ())
}
