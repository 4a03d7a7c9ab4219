//! The `wiredtiger` store: one connection shared by all client threads,
//! one session and cursor per thread.

use ycsb_db::codec;
use ycsb_db::{
    batch_status, Assertions, Batch, Content, DirLayout, EngineBuild, EngineFile, EngineInDir,
    EngineInfo, EngineLock, EngineReport, Gauge, GaugeKind, LockKind, Name, Properties, ReadOp,
    Record, ScanOp, ScanResult, Status, Store, StoreError, StoreThread, ThreadContext, Visit,
};

use crate::ffi::{self, Connection, Cursor, WtError, WT_ROLLBACK};
use crate::options::{Config, Statistics, TableType};

/// The store's name, as users type it.
const NAME: &str = "wiredtiger";

/// The table, as YCSB-cpp names it. Its values are `ycsb_db::codec`
/// encodings, not YCSB-cpp's: a database YCSB-cpp loaded opens, but its
/// records read as UNEXPECTED_STATE.
pub(crate) const TABLE_URI: &str = "table:ycsbc";

/// The magic number of WiredTiger's block manager, at the start of every
/// `.wt` file, LSM chunk and Bloom filter (`WT_BLOCK_MAGIC`, 120897).
const BLOCK_MAGIC: [u8; 4] = 120_897_u32.to_le_bytes();

/// The magic number of a WiredTiger log file, in the descriptor record
/// after its 16-byte header (`WT_LOG_MAGIC`, 0x101064).
const LOG_MAGIC: [u8; 4] = 0x0010_1064_u32.to_le_bytes();

/// What a WiredTiger home holds: the version file `WiredTiger` (its first
/// line is the engine's name), its lock, turtle and base configuration
/// (each starts with its own line), block-managed files with the block
/// magic (metadata, lookaside/history stores, this binding's table and its
/// LSM chunks and Bloom filters), and log files with the log magic (a
/// pre-allocated or temporary log, or a turtle being replaced, may hold
/// nothing yet, so those are accepted only beside the version file).
/// WiredTiger holds a record lock on `WiredTiger.lock` while it has the
/// database open.
pub(crate) const LAYOUT: DirLayout = DirLayout {
    engine: "WiredTiger",
    files: &[
        EngineFile::marker(
            Name::Exact("WiredTiger"),
            Content::Prefix(b"WiredTiger\nWiredTiger"),
        ),
        EngineFile::owned(
            Name::Exact("WiredTiger.lock"),
            Content::Prefix(b"WiredTiger lock file"),
        ),
        EngineFile::owned(
            Name::Exact("WiredTiger.turtle"),
            Content::Prefix(b"WiredTiger version string"),
        ),
        EngineFile::owned(
            Name::Exact("WiredTiger.basecfg"),
            Content::Prefix(b"# Do not modify this file."),
        ),
        EngineFile::owned(Name::Exact("WiredTiger.wt"), Content::Prefix(&BLOCK_MAGIC)),
        EngineFile::owned(
            Name::Exact("WiredTigerLAS.wt"),
            Content::Prefix(&BLOCK_MAGIC),
        ),
        EngineFile::owned(
            Name::Exact("WiredTigerHS.wt"),
            Content::Prefix(&BLOCK_MAGIC),
        ),
        EngineFile::owned(Name::Exact("ycsbc.wt"), Content::Prefix(&BLOCK_MAGIC)),
        EngineFile::owned(
            Name::Numbered("ycsbc-", ".lsm"),
            Content::Prefix(&BLOCK_MAGIC),
        ),
        EngineFile::owned(
            Name::Numbered("ycsbc-", ".bf"),
            Content::Prefix(&BLOCK_MAGIC),
        ),
        EngineFile::owned(
            Name::Numbered("WiredTigerLog.", ""),
            Content::At(16, &LOG_MAGIC),
        ),
        EngineFile::owned(Name::Numbered("WiredTigerPreplog.", ""), Content::Unchecked),
        EngineFile::owned(Name::Numbered("WiredTigerTmplog.", ""), Content::Unchecked),
        EngineFile::owned(Name::Prefix("WiredTiger.turtle."), Content::Unchecked),
    ],
    locks: &[EngineLock {
        file: "WiredTiger.lock",
        kind: LockKind::Record,
    }],
};

/// Each operation is its own transaction; `overwrite=true` makes insert
/// replace and remove ignore a missing key, as YCSB-cpp's cursor.
const CURSOR_CONFIG: &str = "overwrite=true";

/// How often a write that conflicted with a concurrent one (WiredTiger's
/// WT_ROLLBACK, which asks the application to retry) is tried again
/// before it counts as an error.
const ROLLBACK_RETRIES: usize = 1000;

/// Connection statistics sampled as gauges: WiredTiger's description
/// (stable across 3.x releases; the statistics ids are not), the
/// gauge's name and what it measures (counters count since the
/// connection opened).
const CONNECTION_GAUGES: &[(&str, &str, GaugeKind)] = &[
    (
        "cache: bytes currently in the cache",
        "wiredtiger.cache-bytes",
        GaugeKind::Bytes,
    ),
    (
        "cache: tracked dirty bytes in the cache",
        "wiredtiger.cache-dirty-bytes",
        GaugeKind::Bytes,
    ),
    (
        "cache: maximum bytes configured",
        "wiredtiger.cache-max-bytes",
        GaugeKind::Bytes,
    ),
    (
        "cache: pages evicted by application threads",
        "wiredtiger.app-thread-evictions",
        GaugeKind::Count,
    ),
    (
        "cache: modified pages evicted",
        "wiredtiger.modified-pages-evicted",
        GaugeKind::Count,
    ),
    (
        "cache: unmodified pages evicted",
        "wiredtiger.unmodified-pages-evicted",
        GaugeKind::Count,
    ),
    (
        "cache: pages read into cache",
        "wiredtiger.pages-read",
        GaugeKind::Count,
    ),
    (
        "cache: pages written from cache",
        "wiredtiger.pages-written",
        GaugeKind::Count,
    ),
    (
        "block-manager: bytes read",
        "wiredtiger.block-bytes-read",
        GaugeKind::Bytes,
    ),
    (
        "block-manager: bytes written",
        "wiredtiger.block-bytes-written",
        GaugeKind::Bytes,
    ),
    (
        "log: log bytes written",
        "wiredtiger.log-bytes-written",
        GaugeKind::Bytes,
    ),
    (
        "transaction: transaction checkpoints",
        "wiredtiger.checkpoints",
        GaugeKind::Count,
    ),
    (
        "transaction: transaction checkpoint currently running",
        "wiredtiger.checkpoint-running",
        GaugeKind::Flag,
    ),
    (
        "LSM: tree maintenance operations executed",
        "wiredtiger.lsm-maintenance-ops",
        GaugeKind::Count,
    ),
    (
        "LSM: tree queue hit maximum",
        "wiredtiger.lsm-queue-max-hits",
        GaugeKind::Count,
    ),
];

/// Table statistics sampled as gauges (statistics of `table:ycsbc`).
const TABLE_GAUGES: &[(&str, &str, GaugeKind)] = &[
    (
        "LSM: chunks in the LSM tree",
        "wiredtiger.lsm-chunks",
        GaugeKind::Count,
    ),
    (
        "LSM: highest merge generation in the LSM tree",
        "wiredtiger.lsm-merge-generation",
        GaugeKind::Count,
    ),
    (
        "block-manager: file size in bytes",
        "wiredtiger.file-bytes",
        GaugeKind::Bytes,
    ),
    (
        "btree: maximum tree depth",
        "wiredtiger.btree-depth",
        GaugeKind::Count,
    ),
];

/// A WiredTiger database opened once and shared by all client threads.
///
/// The table name of every operation is ignored, as in YCSB-cpp: all
/// records live in one WiredTiger table, `table:ycsbc`.
#[derive(Debug)]
pub struct WiredTigerStore {
    conn: EngineInDir<Connection>,
    config: Config,
}

impl WiredTigerStore {
    /// Opens the WiredTiger database in `wiredtiger.home` with the other
    /// [`PROPERTIES`](crate::PROPERTIES), creating the directory and the
    /// table if missing.
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for a missing `wiredtiger.home` or an
    /// invalid value; otherwise as [`DirSetting::open_engine`](ycsb_db::DirSetting::open_engine): the guard's
    /// refusals, or [`StoreError::Open`] with WiredTiger's message (a
    /// compressor whose extension is missing, a table it cannot create).
    pub fn open(properties: &Properties) -> Result<WiredTigerStore, StoreError> {
        crate::lazy::load().map_err(|e| StoreError::open(NAME, e))?;
        let config = Config::from_properties(properties)?;
        let conn = config.dir.open_engine(NAME, &LAYOUT, |path| {
            let conn = Connection::open(path, &config.open).map_err(|e| e.message)?;
            let session = conn.session().map_err(|e| e.message)?;
            session
                .create(TABLE_URI, &config.table)
                .map_err(|e| format!("cannot create {TABLE_URI}: {}", e.message))?;
            drop(session);
            Ok(conn)
        })?;
        Ok(WiredTigerStore { conn, config })
    }

    /// The database directory.
    pub fn home(&self) -> &std::path::Path {
        &self.config.dir.path
    }

    /// Writes a checkpoint: everything written so far is durable and the
    /// log before it can go.
    ///
    /// # Errors
    ///
    /// [`StoreError::Other`] with WiredTiger's message (a full disk).
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let session = self.conn.session().map_err(other)?;
        session.checkpoint().map_err(other)
    }

    /// Compacts the table, returning free space to the file system.
    ///
    /// # Errors
    ///
    /// [`StoreError::Other`] with WiredTiger's message.
    pub fn compact(&self) -> Result<(), StoreError> {
        let session = self.conn.session().map_err(other)?;
        session.compact(TABLE_URI).map_err(other)
    }

    /// The WiredTiger version linked into this program, as
    /// `major.minor.patch`.
    pub fn linked_version() -> String {
        let (major, minor, patch) = ffi::linked_version();
        format!("{major}.{minor}.{patch}")
    }

    /// The file WiredTiger was loaded from: the shared library, or this
    /// program when WiredTiger is linked statically.
    pub fn linked_library() -> Option<String> {
        ffi::linked_library()
    }

    /// Every statistic of `source` (`statistics:` for the connection,
    /// `statistics:table:ycsbc` for the table), in WiredTiger's order.
    fn statistics(&self, source: &str) -> Result<Vec<(String, i64)>, WtError> {
        let mut cursor = self.conn.session()?.cursor(source, "")?;
        let mut all = Vec::new();
        cursor.statistics(|desc, value| all.push((desc.to_string(), value)))?;
        Ok(all)
    }
}

fn other(e: WtError) -> StoreError {
    StoreError::Other(format!("wiredtiger: {}", e.message))
}

impl Store for WiredTigerStore {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        let cursor = self
            .conn
            .session()
            .and_then(|s| s.cursor(TABLE_URI, CURSOR_CONFIG))
            .map_err(other)?;
        Ok(Box::new(WiredTigerThread {
            cursor,
            value: Vec::new(),
            last_error: None,
        }))
    }

    /// From the connection's statistics: the cache's bytes, dirty bytes
    /// and evictions (`wiredtiger.cache-bytes`, ...), the block manager's
    /// bytes read and written, log bytes, checkpoints, LSM maintenance;
    /// from the table's: `wiredtiger.lsm-chunks` and
    /// `wiredtiger.lsm-merge-generation` (LSM tables),
    /// `wiredtiger.file-bytes`. None with `wiredtiger.statistics=none`.
    fn gauges(&self, out: &mut Vec<Gauge>) {
        if self.config.statistics == Statistics::None {
            return;
        }
        let mut push = |source: &str, wanted: &[(&str, &str, GaugeKind)]| {
            let Ok(stats) = self.statistics(source) else {
                return;
            };
            for (desc, name, kind) in wanted {
                if let Some((_, value)) = stats.iter().find(|(d, _)| d == desc) {
                    out.push(Gauge::new(*name, *kind, *value as f64));
                }
            }
        };
        push("statistics:", CONNECTION_GAUGES);
        let table_gauges: &[(&str, &str, GaugeKind)] = match self.config.table_type {
            TableType::Lsm => &TABLE_GAUGES[..2],
            TableType::Btree => &TABLE_GAUGES[2..],
        };
        push(&format!("statistics:{TABLE_URI}"), table_gauges);
    }

    fn engine_build(&self) -> EngineBuild {
        EngineBuild::of_code(crate::ffi::library_code(), Assertions::Unknown)
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo::new("WiredTiger", Self::linked_version())
    }

    /// `wiredtiger.stats` (every connection statistic, `description:
    /// value` per line, then the table's) and `wiredtiger.options`: the
    /// effective configuration strings, the version and the library file.
    fn final_reports(&self) -> Vec<EngineReport> {
        let mut reports = Vec::new();
        if self.config.statistics != Statistics::None {
            let mut text = String::new();
            for (title, source) in [
                ("connection", "statistics:".to_string()),
                ("table", format!("statistics:{TABLE_URI}")),
            ] {
                if let Ok(stats) = self.statistics(&source) {
                    text.push_str(&format!("# {title} ({source})\n"));
                    for (desc, value) in stats {
                        text.push_str(&format!("{desc}: {value}\n"));
                    }
                }
            }
            reports.push(EngineReport {
                name: "wiredtiger.stats".to_string(),
                text,
            });
        }
        let (version, library) = (Self::linked_version(), Self::linked_library());
        let options = EngineReport::linked_options(NAME, self.config.describe(), &version, library);
        reports.push(options);
        reports
    }

    /// A checkpoint, so that a full disk at the end is reported; closing
    /// the connection (on drop) checkpoints again, cheaply. After a failed
    /// write (a full disk) the first error, without trying: WiredTiger 3.2
    /// can wait forever for a log write then.
    fn close(&self) -> Result<(), StoreError> {
        if let Some(first) = self.conn.write_failure() {
            return Err(StoreError::Other(format!(
                "wiredtiger: a write failed, the database was not closed (the next open recovers it): {first}"
            )));
        }
        self.checkpoint()
    }
}

/// One client thread: its own session and cursor (WiredTiger's sessions
/// are single-threaded) and a reusable value buffer.
struct WiredTigerThread<'a> {
    cursor: Cursor<'a>,
    /// The encoded value to write.
    value: Vec<u8>,
    /// WiredTiger's message for the last failed write.
    last_error: Option<String>,
}

impl WiredTigerThread<'_> {
    /// Keeps WiredTiger's message of a failed write for
    /// [`StoreThread::last_error`] (a full disk says so) and answers ERROR.
    #[cold]
    fn failed(&mut self, error: WtError) -> Status {
        self.last_error = Some(error.message);
        Status::Error
    }

    /// Writes `self.value` at `key`, retrying conflicts.
    fn put_value(&mut self, key: &str) -> Status {
        let mut tries = 0;
        loop {
            match self.cursor.put(key.as_bytes(), &self.value) {
                Ok(()) => return Status::Ok,
                Err(e) if e.code == WT_ROLLBACK && tries < ROLLBACK_RETRIES => tries += 1,
                Err(e) => return self.failed(e),
            }
        }
    }
}

/// What a batched call does to one record in the batch's transaction.
type BatchStep<'s> =
    dyn FnMut(&mut Cursor<'_>, &mut Vec<u8>, &str, &Record) -> Result<Status, WtError> + 's;

impl WiredTigerThread<'_> {
    /// Runs `step` for every record of `batch` in one transaction,
    /// committed once (one log sync with `wiredtiger.sync`): every record
    /// written or none. A conflict with another thread's transaction rolls
    /// the batch back and runs it again, as single writes retry.
    fn in_transaction(
        &mut self,
        batch: &Batch,
        statuses: &mut [Status],
        step: &mut BatchStep<'_>,
    ) -> Status {
        for _ in 0..=ROLLBACK_RETRIES {
            if let Err(e) = self.cursor.begin_transaction() {
                let failed = self.failed(e);
                statuses.fill(failed);
                return failed;
            }
            let mut error = None;
            for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
                match step(&mut self.cursor, &mut self.value, key, values) {
                    Ok(done) => *status = done,
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            let error = match error {
                None => match self.cursor.commit_transaction() {
                    Ok(()) => return batch_status(statuses),
                    Err(e) => e,
                },
                Some(e) => {
                    let _ = self.cursor.rollback_transaction();
                    e
                }
            };
            if error.code != WT_ROLLBACK {
                let failed = self.failed(error);
                statuses.fill(failed);
                return failed;
            }
        }
        statuses.fill(Status::Error);
        Status::Error
    }
}

impl StoreThread for WiredTigerThread<'_> {
    /// One transaction.
    fn insert_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.in_transaction(batch, statuses, &mut |cursor, _, key, values| {
            cursor.put(key.as_bytes(), codec::encoded(values))?;
            Ok(Status::Ok)
        })
    }

    /// One transaction; each update reads what the transaction wrote
    /// before it.
    fn update_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.in_transaction(batch, statuses, &mut |cursor, value, key, values| {
            let merged = cursor.get(key.as_bytes(), |stored| {
                value.clear();
                codec::merge(stored, values, value)
            })?;
            match merged {
                Some(Ok(())) => {}
                Some(Err(e)) => return Ok(e.into()),
                None => return Ok(Status::NotFound),
            }
            cursor.put(key.as_bytes(), value)?;
            Ok(Status::Ok)
        })
    }

    /// One transaction (WiredTiger's overwriting remove cannot tell a
    /// missing key: OK, as a single delete).
    fn delete_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.in_transaction(batch, statuses, &mut |cursor, _, key, _| {
            cursor.remove(key.as_bytes())?;
            Ok(Status::Ok)
        })
    }

    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        match self.cursor.get(op.key.as_bytes(), |value| {
            codec::read_into(value, op.fields, out)
        }) {
            Ok(Some(status)) => status,
            Ok(None) => Status::NotFound,
            Err(_) => Status::Error,
        }
    }

    /// WiredTiger's own buffer of the value itself: no copy and no
    /// decoding beyond checking it.
    fn read_in_place(&mut self, op: &ReadOp<'_>, _: &mut Record, visit: &mut Visit) -> Status {
        match self.cursor.get(op.key.as_bytes(), |value| {
            codec::read_in_place(value, op.fields, visit)
        }) {
            Ok(Some(status)) => status,
            Ok(None) => Status::NotFound,
            Err(_) => Status::Error,
        }
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        if op.count == 0 {
            return Status::Ok;
        }
        let mut rows = codec::ScanRows::new(out, op.fields);
        let scanned = self
            .cursor
            .scan_from(op.start_key.as_bytes(), |key, value| {
                rows.push(key, value) && rows.taken() < op.count
            });
        match scanned {
            Ok(()) => rows.status(),
            Err(_) => Status::Error,
        }
    }

    /// Read, merge and write back (WiredTiger has no merge operator), as
    /// YCSB-cpp; a conflict with a concurrent write retries the whole
    /// read-modify-write.
    fn update(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        for _ in 0..=ROLLBACK_RETRIES {
            let Self { cursor, value, .. } = self;
            // Merged straight from WiredTiger's buffer into the value to
            // write: each stored byte copied once.
            let merged = cursor.get(key.as_bytes(), |stored| {
                value.clear();
                codec::merge(stored, values, value)
            });
            match merged {
                Ok(Some(Ok(()))) => {}
                Ok(Some(Err(e))) => return e.into(),
                Ok(None) => return Status::NotFound,
                Err(e) => return self.failed(e),
            }
            match self.cursor.put(key.as_bytes(), &self.value) {
                Ok(()) => return Status::Ok,
                Err(e) if e.code == WT_ROLLBACK => continue,
                Err(e) => return self.failed(e),
            }
        }
        Status::Error
    }

    fn insert(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        self.value.clear();
        codec::encode(values, &mut self.value);
        self.put_value(key)
    }

    fn delete(&mut self, _table: &str, key: &str) -> Status {
        let mut tries = 0;
        loop {
            match self.cursor.remove(key.as_bytes()) {
                Ok(()) => return Status::Ok,
                Err(e) if e.code == WT_ROLLBACK && tries < ROLLBACK_RETRIES => tries += 1,
                Err(e) => return self.failed(e),
            }
        }
    }

    fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}
