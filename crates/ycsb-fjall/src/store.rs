//! The `fjall` store: one database and keyspace shared by all client
//! threads.

use std::path::Path;

use fjall::{AbstractTree, Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use ycsb_db::codec;
use ycsb_db::{
    batch_status, Batch, Content, DirLayout, EngineBuild, EngineFile, EngineInDir, EngineInfo,
    EngineLock, EngineReport, Gauge, LockKind, Name, Properties, ReadOp, Record, ScanOp,
    ScanResult, Status, Store, StoreError, StoreThread, ThreadContext, UpdateMerger, Visit,
};

use crate::options::{Compression, Config};
use crate::ENGINE_VERSION;

/// The store's name, as users type it.
const NAME: &str = "fjall";

/// The keyspace every record lives in: the table name is ignored, as in
/// the other embedded bindings, so that one database holds one data set.
const KEYSPACE: &str = "ycsb";

/// Levels asked for at most; fjall's trees have 7.
const MAX_LEVELS: usize = 16;

/// What a fjall database directory holds: its `version` file (the bytes
/// `FJL` and the format version), the `lock` file fjall holds a `flock` on
/// while it has the database open (empty), its journals (`<n>.jnl`, which
/// may be pre-allocated and hold nothing yet) and the `keyspaces` tree
/// (tables, manifests, versions), accepted only beside the version file.
pub(crate) const LAYOUT: DirLayout = DirLayout {
    engine: "fjall",
    files: &[
        EngineFile::marker(Name::Exact("version"), Content::Prefix(b"FJL")),
        EngineFile::owned(Name::Exact("lock"), Content::Empty),
        EngineFile::owned(Name::Numbered("", ".jnl"), Content::Unchecked),
        EngineFile::owned(Name::Exact("keyspaces"), Content::Tree),
    ],
    locks: &[EngineLock {
        file: "lock",
        kind: LockKind::Flock,
    }],
};

/// A fjall database opened once and shared by all client threads.
#[derive(Debug)]
pub struct FjallStore {
    engine: EngineInDir<Engine>,
    config: Config,
}

/// The database and the keyspace the records live in: both close before
/// the directory is released.
struct Engine {
    db: Database,
    keyspace: Keyspace,
}

impl FjallStore {
    /// Opens the fjall database in `fjall.dir`, created if missing, with
    /// the other [`PROPERTIES`](crate::PROPERTIES).
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for a missing `fjall.dir` or an invalid
    /// value; otherwise as [`DirSetting::open_engine`](ycsb_db::DirSetting::open_engine): the guard's
    /// refusals, or [`StoreError::Open`] with fjall's reason when it cannot
    /// open the database (unreadable, corrupt).
    pub fn open(properties: &Properties) -> Result<FjallStore, StoreError> {
        let config = Config::from_properties(properties)?;
        let engine = config.dir.open_engine(NAME, &LAYOUT, |path| {
            let mut builder = Database::builder(path);
            if let Some(bytes) = config.cache_size {
                builder = builder.cache_size(bytes);
            }
            if let Some(n) = config.worker_threads {
                builder = builder.worker_threads(n);
            }
            let db = builder.open().map_err(|e| describe_error(&e))?;
            let keyspace = db
                .keyspace(KEYSPACE, || keyspace_options(&config))
                .map_err(|e| describe_error(&e))?;
            Ok(Engine { db, keyspace })
        })?;
        Ok(FjallStore { engine, config })
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.config.dir.path
    }

    /// Compacts the keyspace into its last level, blocking until fjall is
    /// done: for a run that should start from a settled tree.
    ///
    /// # Errors
    ///
    /// [`StoreError::Other`] with fjall's reason.
    pub fn compact(&self) -> Result<(), StoreError> {
        self.engine
            .keyspace
            .rotate_memtable_and_wait()
            .and_then(|()| self.engine.keyspace.major_compact())
            .map_err(|e| StoreError::Other(format!("fjall compaction: {}", describe_error(&e))))
    }

    /// Tables per level, for as many levels as the tree has.
    fn level_tables(&self) -> Vec<usize> {
        (0..MAX_LEVELS)
            .map_while(|level| self.engine.keyspace.tree.level_table_count(level))
            .collect()
    }
}

/// The keyspace options of a new database; an existing keyspace keeps the
/// ones it was created with (fjall stores them).
fn keyspace_options(config: &Config) -> KeyspaceCreateOptions {
    use fjall::config::CompressionPolicy;
    use fjall::CompressionType;
    let mut options = KeyspaceCreateOptions::default();
    if let Some(bytes) = config.memtable_size {
        options = options.max_memtable_size(bytes);
    }
    match config.compression {
        Compression::Default => {}
        Compression::None => {
            options = options.data_block_compression_policy(CompressionPolicy::disabled());
        }
        Compression::Lz4 => {
            options =
                options.data_block_compression_policy(CompressionPolicy::all(CompressionType::Lz4));
        }
    }
    options
}

/// fjall's error in words a user can act on.
fn describe_error(e: &fjall::Error) -> String {
    match e {
        fjall::Error::Locked => {
            "the database is locked by another process (its lock file is held)".to_string()
        }
        fjall::Error::Io(io) => format!("I/O error: {io}"),
        fjall::Error::Poisoned => {
            "fjall refuses writes after an earlier journal write failed (Poisoned)".to_string()
        }
        other => format!("{other:?}"),
    }
}

impl Store for FjallStore {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(FjallThread {
            db: &self.engine.db,
            keyspace: &self.engine.keyspace,
            fsync: self.config.fsync,
            value: Vec::new(),
            last_error: None,
            updates: UpdateMerger::new(),
        }))
    }

    /// `fjall.num-files-at-levelN` (tables per level, named as RocksDB's so
    /// that charts draw them alike), `fjall.tables`, `fjall.journal-count`,
    /// `fjall.journal-bytes`, `fjall.disk-bytes` (tables and journals),
    /// `fjall.write-buffer-bytes` (memtables), `fjall.sealed-memtables`,
    /// `fjall.outstanding-flushes`, `fjall.active-compactions`,
    /// `fjall.compactions-completed`, `fjall.compaction-sec` and
    /// `fjall.cache-bytes`.
    fn gauges(&self, out: &mut Vec<Gauge>) {
        for (level, tables) in self.level_tables().into_iter().enumerate() {
            out.push(Gauge::count(
                format!("fjall.num-files-at-level{level}"),
                tables as f64,
            ));
        }
        let ks = &self.engine.keyspace;
        out.push(Gauge::count("fjall.tables", ks.table_count() as f64));
        out.push(Gauge::count(
            "fjall.journal-count",
            self.engine.db.journal_count() as f64,
        ));
        if let Ok(bytes) = self.engine.db.journal_disk_space() {
            out.push(Gauge::bytes("fjall.journal-bytes", bytes as f64));
        }
        if let Ok(bytes) = self.engine.db.disk_space() {
            out.push(Gauge::bytes("fjall.disk-bytes", bytes as f64));
        }
        out.push(Gauge::bytes(
            "fjall.write-buffer-bytes",
            self.engine.db.write_buffer_size() as f64,
        ));
        out.push(Gauge::count(
            "fjall.sealed-memtables",
            ks.sealed_memtable_count() as f64,
        ));
        out.push(Gauge::count(
            "fjall.outstanding-flushes",
            self.engine.db.outstanding_flushes() as f64,
        ));
        out.push(Gauge::count(
            "fjall.active-compactions",
            self.engine.db.active_compactions() as f64,
        ));
        out.push(Gauge::count(
            "fjall.compactions-completed",
            self.engine.db.compactions_completed() as f64,
        ));
        out.push(Gauge::seconds(
            "fjall.compaction-sec",
            self.engine.db.time_compacting().as_secs_f64(),
        ));
        out.push(Gauge::bytes(
            "fjall.cache-bytes",
            self.engine.db.cache_size() as f64,
        ));
    }

    fn engine_build(&self) -> EngineBuild {
        EngineBuild::compiled_in()
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo::new("fjall", ENGINE_VERSION)
    }

    /// `fjall.stats` (the tree's shape, journals, compactions) and
    /// `fjall.options` (the effective settings and the version).
    fn final_reports(&self) -> Vec<EngineReport> {
        let mut stats = String::from("Level  Tables\n");
        for (level, tables) in self.level_tables().into_iter().enumerate() {
            stats.push_str(&format!("L{level:<5} {tables}\n"));
        }
        let ks = &self.engine.keyspace;
        stats.push_str(&format!(
            "tables={}\napproximate_items={}\nkeyspace_disk_bytes={}\njournals={}\n\
             journal_bytes={}\ndisk_bytes={}\nwrite_buffer_bytes={}\ncompactions_completed={}\n\
             compaction_seconds={:.3}\ncache_bytes={}\ncache_capacity={}\n",
            ks.table_count(),
            ks.approximate_len(),
            ks.disk_space(),
            self.engine.db.journal_count(),
            self.engine.db.journal_disk_space().unwrap_or(0),
            self.engine.db.disk_space().unwrap_or(0),
            self.engine.db.write_buffer_size(),
            self.engine.db.compactions_completed(),
            self.engine.db.time_compacting().as_secs_f64(),
            self.engine.db.cache_size(),
            self.engine.db.cache_capacity(),
        ));
        let mut options = self.config.describe();
        options.push_str(&format!(
            "data_block_compression={:?}\nversion={ENGINE_VERSION}\n",
            ks.config.data_block_compression_policy
        ));
        vec![
            EngineReport {
                name: "fjall.stats".to_string(),
                text: stats,
            },
            EngineReport {
                name: "fjall.options".to_string(),
                text: options,
            },
        ]
    }

    /// Syncs the journal, so that everything acknowledged is on disk when
    /// the program ends.
    fn close(&self) -> Result<(), StoreError> {
        self.engine.db.persist(PersistMode::SyncAll).map_err(|e| {
            StoreError::Other(format!(
                "fjall: syncing the journal: {}",
                describe_error(&e)
            ))
        })
    }
}

/// One client thread: borrows the shared database and owns its encode
/// buffer.
struct FjallThread<'a> {
    db: &'a Database,
    keyspace: &'a Keyspace,
    fsync: bool,
    /// The encoded value to write.
    value: Vec<u8>,
    /// fjall's message for the last failed write.
    last_error: Option<String>,
    /// Merges a batch's updates of one key (`batch.size`).
    updates: UpdateMerger,
}

impl FjallThread<'_> {
    /// Keeps fjall's message of a failed operation for
    /// [`StoreThread::last_error`] (a full disk says so) and answers ERROR.
    #[cold]
    fn failed(&mut self, e: &fjall::Error) -> Status {
        self.last_error = Some(describe_error(e));
        Status::Error
    }

    /// Writes `self.value` at `key`, synced with `fjall.fsync`.
    fn put(&mut self, key: &str) -> Status {
        let value = std::mem::take(&mut self.value);
        let status = self.put_value(key, &value);
        self.value = value;
        status
    }

    fn put_value(&mut self, key: &str, value: &[u8]) -> Status {
        let written = self
            .keyspace
            .insert(key.as_bytes(), value)
            .and_then(|()| self.sync());
        match written {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(&e),
        }
    }

    /// Commits `batch` (one journal write, one sync with `fjall.fsync`),
    /// turning the OK statuses of the records it holds into ERROR when it
    /// fails.
    fn commit(&mut self, batch: fjall::OwnedWriteBatch, statuses: &mut [Status]) -> Status {
        let durability = self.fsync.then_some(PersistMode::SyncData);
        if let Err(e) = batch.durability(durability).commit() {
            let failed = self.failed(&e);
            for status in statuses.iter_mut().filter(|s| s.is_ok()) {
                *status = failed;
            }
        }
        batch_status(statuses)
    }

    fn sync(&self) -> fjall::Result<()> {
        if self.fsync {
            self.db.persist(PersistMode::SyncData)
        } else {
            Ok(())
        }
    }
}

impl StoreThread for FjallThread<'_> {
    /// One atomic write batch.
    fn insert_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        let mut writes = self.db.batch();
        for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
            writes.insert(self.keyspace, key.as_bytes(), codec::encoded(values));
            *status = Status::Ok;
        }
        self.commit(writes, statuses)
    }

    /// One atomic write batch of the merged records (two updates of one
    /// key both apply).
    fn update_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        let keyspace = self.keyspace;
        let mut writes = self.db.batch();
        self.updates.merge(
            batch,
            statuses,
            |key, changes, out| match keyspace.get(key.as_bytes()) {
                Ok(Some(stored)) => match codec::merge(&stored, changes, out) {
                    Ok(()) => Status::Ok,
                    Err(e) => e.into(),
                },
                Ok(None) => Status::NotFound,
                Err(_) => Status::Error,
            },
            |key, value| writes.insert(keyspace, key.as_bytes(), value),
        );
        self.commit(writes, statuses)
    }

    /// One atomic write batch of removals (fjall cannot tell a missing
    /// key: OK).
    fn delete_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        let mut writes = self.db.batch();
        for (status, (key, _)) in statuses.iter_mut().zip(batch.iter()) {
            writes.remove(self.keyspace, key.as_bytes());
            *status = Status::Ok;
        }
        self.commit(writes, statuses)
    }

    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        match self.keyspace.get(op.key.as_bytes()) {
            Ok(Some(value)) => codec::read_into(&value, op.fields, out),
            Ok(None) => Status::NotFound,
            Err(e) => self.failed(&e),
        }
    }

    /// fjall's own buffer of the value, without a second copy.
    fn read_in_place(&mut self, op: &ReadOp<'_>, _: &mut Record, visit: &mut Visit) -> Status {
        match self.keyspace.get(op.key.as_bytes()) {
            Ok(Some(value)) => codec::read_in_place(&value, op.fields, visit),
            Ok(None) => Status::NotFound,
            Err(e) => self.failed(&e),
        }
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        let mut rows = codec::ScanRows::new(out, op.fields);
        for guard in self
            .keyspace
            .range(op.start_key.as_bytes()..)
            .take(op.count)
        {
            let (key, value) = match guard.into_inner() {
                Ok(kv) => kv,
                Err(e) => return self.failed(&e),
            };
            if !rows.push(&key, &value) {
                break;
            }
        }
        rows.status()
    }

    /// Reads the record, merges the changed fields and writes it back:
    /// fjall has no merge operator.
    fn update(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        let stored = match self.keyspace.get(key.as_bytes()) {
            Ok(Some(v)) => v,
            Ok(None) => return Status::NotFound,
            Err(e) => return self.failed(&e),
        };
        self.value.clear();
        if let Err(e) = codec::merge(&stored, values, &mut self.value) {
            return e.into();
        }
        drop(stored);
        self.put(key)
    }

    fn insert(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        self.put_value(key, codec::encoded(values))
    }

    fn delete(&mut self, _table: &str, key: &str) -> Status {
        let removed = self
            .keyspace
            .remove(key.as_bytes())
            .and_then(|()| self.sync());
        match removed {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(&e),
        }
    }

    fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}
