//! The `lmdb` store: one environment shared by all client threads.

use std::path::Path;

use ycsb_db::codec;
use ycsb_db::{
    batch_status, Assertions, Batch, Content, DirLayout, EngineBuild, EngineFile, EngineInDir,
    EngineInfo, EngineLock, EngineReport, Gauge, LockKind, Name, Properties, ReadOp, Record,
    ScanOp, ScanResult, Status, Store, StoreError, StoreThread, ThreadContext, Visit,
};

use crate::ffi::{self, Env, Reader};
use crate::options::Config;

/// The store's name, as users type it.
const NAME: &str = "lmdb";

/// LMDB's magic number, in the meta pages of `data.mdb` (after the
/// 16-byte page header) and at the start of `lock.mdb`.
const MAGIC: [u8; 4] = 0xBEEF_C0DE_u32.to_le_bytes();

/// What an LMDB environment directory holds: `data.mdb`, recognised by the
/// magic number of its first meta page, and `lock.mdb`, whose reader table
/// starts with the same magic and on which every process with the
/// environment open holds a record lock.
pub(crate) const LAYOUT: DirLayout = DirLayout {
    engine: "LMDB",
    files: &[
        EngineFile::marker(Name::Exact("data.mdb"), Content::At(16, &MAGIC)),
        EngineFile::owned(Name::Exact("lock.mdb"), Content::Prefix(&MAGIC)),
    ],
    locks: &[EngineLock {
        file: "lock.mdb",
        kind: LockKind::Record,
    }],
};

/// An LMDB environment opened once and shared by all client threads.
///
/// The table name of every operation is ignored, as in YCSB-cpp: all
/// records live in the environment's unnamed database.
#[derive(Debug)]
pub struct LmdbStore {
    env: EngineInDir<Env>,
    config: Config,
}

impl LmdbStore {
    /// Opens the LMDB environment in `lmdb.dbpath`, created if missing,
    /// with the other [`PROPERTIES`](crate::PROPERTIES).
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for a missing `lmdb.dbpath` or an invalid
    /// value; otherwise as [`DirSetting::open_engine`](ycsb_db::DirSetting::open_engine): the guard's
    /// refusals, or [`StoreError::Open`] with LMDB's message when LMDB
    /// cannot open the environment.
    pub fn open(properties: &Properties) -> Result<LmdbStore, StoreError> {
        crate::lazy::load().map_err(|e| StoreError::open(NAME, e))?;
        let config = Config::from_properties(properties)?;
        let env = config
            .dir
            .open_engine(NAME, &LAYOUT, |path| Env::open(path, &config.env))?;
        Ok(LmdbStore { env, config })
    }

    /// The environment directory.
    pub fn path(&self) -> &Path {
        &self.config.dir.path
    }

    /// Flushes committed transactions to disk (for `lmdb.nosync`).
    ///
    /// # Errors
    ///
    /// LMDB's message when the flush fails.
    pub fn sync(&self) -> Result<(), StoreError> {
        self.env.sync().map_err(StoreError::Other)
    }

    /// The LMDB version linked into this program, `major.minor.patch`.
    pub fn linked_version() -> String {
        ffi::linked_version()
    }

    /// The file LMDB was loaded from: the shared library, or this program
    /// when LMDB is linked statically.
    pub fn linked_library() -> Option<String> {
        ffi::linked_library()
    }
}

impl Store for LmdbStore {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        let reader = self.env.reader().map_err(|e| StoreError::Open {
            store: NAME.to_string(),
            message: format!("a client thread's read transaction: {e}"),
        })?;
        Ok(Box::new(LmdbThread {
            env: &self.env,
            path: &self.config.dir.path,
            reader,
            value: Vec::new(),
            last_error: None,
        }))
    }

    /// From `mdb_env_stat`: `lmdb.depth` (of the B-tree),
    /// `lmdb.branch-pages`, `lmdb.leaf-pages`, `lmdb.overflow-pages`,
    /// `lmdb.entries`; from `mdb_env_info`: `lmdb.map-used-pages` (pages
    /// up to the last used one, free ones included) and in bytes
    /// `lmdb.map-used-bytes`, `lmdb.map-size-bytes`, `lmdb.map-use`
    /// (their ratio), `lmdb.readers` (reader slots in use).
    fn gauges(&self, out: &mut Vec<Gauge>) {
        let stat = self.env.stat();
        if let Some(s) = stat {
            out.push(Gauge::count("lmdb.depth", f64::from(s.ms_depth)));
            out.push(Gauge::count("lmdb.branch-pages", s.ms_branch_pages as f64));
            out.push(Gauge::count("lmdb.leaf-pages", s.ms_leaf_pages as f64));
            out.push(Gauge::count(
                "lmdb.overflow-pages",
                s.ms_overflow_pages as f64,
            ));
            out.push(Gauge::count("lmdb.entries", s.ms_entries as f64));
        }
        if let (Some(info), Some(s)) = (self.env.info(), stat) {
            let used = (info.me_last_pgno as f64 + 1.0) * f64::from(s.ms_psize);
            out.push(Gauge::count(
                "lmdb.map-used-pages",
                info.me_last_pgno as f64 + 1.0,
            ));
            out.push(Gauge::bytes("lmdb.map-used-bytes", used));
            out.push(Gauge::bytes("lmdb.map-size-bytes", info.me_mapsize as f64));
            out.push(Gauge::ratio("lmdb.map-use", used / info.me_mapsize as f64));
            out.push(Gauge::count("lmdb.readers", f64::from(info.me_numreaders)));
        }
    }

    fn engine_build(&self) -> EngineBuild {
        EngineBuild::of_code(crate::ffi::library_code(), Assertions::Unknown)
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo::new("LMDB", Self::linked_version())
    }

    /// `lmdb.stat` (the B-tree and the map, as `mdb_stat -e` shows them)
    /// and `lmdb.options`: the effective settings, the version and the
    /// library file linked.
    fn final_reports(&self) -> Vec<EngineReport> {
        let mut reports = Vec::new();
        if let (Some(s), Some(info)) = (self.env.stat(), self.env.info()) {
            reports.push(EngineReport {
                name: "lmdb.stat".to_string(),
                text: format!(
                    "Environment Info\n  Map size: {}\n  Number of pages used: {}\n  \
                     Last transaction ID: {}\n  Max readers: {}\n  Number of readers used: {}\n\
                     Status of Main DB\n  Tree depth: {}\n  Branch pages: {}\n  Leaf pages: {}\n  \
                     Overflow pages: {}\n  Entries: {}\n  Page size: {}\n",
                    info.me_mapsize,
                    info.me_last_pgno + 1,
                    info.me_last_txnid,
                    info.me_maxreaders,
                    info.me_numreaders,
                    s.ms_depth,
                    s.ms_branch_pages,
                    s.ms_leaf_pages,
                    s.ms_overflow_pages,
                    s.ms_entries,
                    s.ms_psize,
                ),
            });
        }
        let (version, library) = (Self::linked_version(), Self::linked_library());
        let options = EngineReport::linked_options(NAME, self.config.describe(), &version, library);
        reports.push(options);
        reports
    }

    /// Flushes a `lmdb.nosync` environment, so that a load in one process
    /// is on disk before the run of the next starts.
    fn close(&self) -> Result<(), StoreError> {
        self.sync()
    }
}

/// One client thread: borrows the shared environment, keeps its own read
/// transaction (renewed per read, so no allocation) and value buffer.
struct LmdbThread<'a> {
    env: &'a Env,
    /// `lmdb.dbpath`, to tell a full file system behind an I/O error.
    path: &'a std::path::Path,
    reader: Reader<'a>,
    /// The encoded value to write.
    value: Vec<u8>,
    /// LMDB's message for the last failed operation.
    last_error: Option<String>,
}

impl LmdbThread<'_> {
    /// Keeps LMDB's message of a failure for [`StoreThread::last_error`]
    /// (a full map or disk says so) and answers ERROR.
    #[cold]
    fn failed(&mut self, what: &str, code: std::ffi::c_int) -> Status {
        let mut message = format!("{what}: {}", ffi::error_message(code));
        // Writing dirty pages of a memory map to a full tmpfs (or other
        // file system) can surface as EIO rather than ENOSPC: say which.
        if code == libc::EIO && ffi::file_system_is_full(self.path) {
            message.push_str(" (No space left on device: the file system of lmdb.dbpath is full)");
        }
        self.last_error = Some(message);
        Status::Error
    }

    /// Runs `write` in a write transaction and commits it.
    fn write_txn(
        &mut self,
        write: impl FnOnce(&mut ffi::Writer<'_>, &mut Vec<u8>) -> Result<Status, (&'static str, i32)>,
    ) -> Status {
        let mut txn = match self.env.write() {
            Ok(txn) => txn,
            Err(rc) => return self.failed("mdb_txn_begin", rc),
        };
        match write(&mut txn, &mut self.value) {
            Ok(Status::Ok) => match txn.commit() {
                Ok(()) => Status::Ok,
                Err(rc) => self.failed("mdb_txn_commit", rc),
            },
            // Nothing to commit; the drop aborts.
            Ok(status) => status,
            Err((what, rc)) => self.failed(what, rc),
        }
    }
}

/// What a batched call does to one record in the batch's transaction.
type BatchStep<'s> = dyn FnMut(&mut ffi::Writer<'_>, &mut Vec<u8>, &str, &Record) -> Result<Status, (&'static str, i32)>
    + 's;

impl LmdbThread<'_> {
    /// Runs `step` for every record of `batch` in one write transaction
    /// and commits it once (one sync unless `lmdb.nosync`): every record
    /// written or, when a step or the commit fails, none.
    fn batch_txn(
        &mut self,
        batch: &Batch,
        statuses: &mut [Status],
        step: &mut BatchStep<'_>,
    ) -> Status {
        let env = self.env;
        let mut txn = match env.write() {
            Ok(txn) => txn,
            Err(rc) => {
                let failed = self.failed("mdb_txn_begin", rc);
                statuses.fill(failed);
                return failed;
            }
        };
        for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
            match step(&mut txn, &mut self.value, key, values) {
                Ok(done) => *status = done,
                Err((what, rc)) => {
                    // The drop aborts: nothing of the batch is written.
                    drop(txn);
                    let failed = self.failed(what, rc);
                    statuses.fill(failed);
                    return failed;
                }
            }
        }
        if let Err(rc) = txn.commit() {
            let failed = self.failed("mdb_txn_commit", rc);
            statuses.fill(failed);
            return failed;
        }
        batch_status(statuses)
    }
}

impl StoreThread for LmdbThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        let snapshot = match self.reader.snapshot() {
            Ok(s) => s,
            Err(_) => return Status::Error,
        };
        match snapshot.get(op.key.as_bytes()) {
            Ok(Some(value)) => codec::read_into(value, op.fields, out),
            Ok(None) => Status::NotFound,
            Err(_) => Status::Error,
        }
    }

    /// The fields straight from the memory map: no copy at all.
    fn read_in_place(&mut self, op: &ReadOp<'_>, _: &mut Record, visit: &mut Visit) -> Status {
        let snapshot = match self.reader.snapshot() {
            Ok(s) => s,
            Err(_) => return Status::Error,
        };
        match snapshot.get(op.key.as_bytes()) {
            Ok(Some(value)) => codec::read_in_place(value, op.fields, visit),
            Ok(None) => Status::NotFound,
            Err(_) => Status::Error,
        }
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        if op.count == 0 {
            return Status::Ok;
        }
        let snapshot = match self.reader.snapshot() {
            Ok(s) => s,
            Err(_) => return Status::Error,
        };
        let mut rows = codec::ScanRows::new(out, op.fields);
        let scanned = snapshot.scan_from(op.start_key.as_bytes(), |key, value| {
            rows.push(key, value) && rows.taken() < op.count
        });
        match scanned {
            Ok(()) => rows.status(),
            Err(_) => Status::Error,
        }
    }

    /// Read-modify-write in one write transaction: LMDB has no merge, and
    /// the single writer makes the merge atomic.
    fn update(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        self.write_txn(|txn, buf| {
            buf.clear();
            match txn.get(key.as_bytes()) {
                Ok(Some(stored)) => {
                    if let Err(e) = codec::merge(stored, values, buf) {
                        return Ok(e.into());
                    }
                }
                Ok(None) => return Ok(Status::NotFound),
                Err(rc) => return Err(("mdb_get", rc)),
            }
            txn.put(key.as_bytes(), buf).map_err(|rc| ("mdb_put", rc))?;
            Ok(Status::Ok)
        })
    }

    fn insert(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        self.write_txn(|txn, _| {
            txn.put(key.as_bytes(), codec::encoded(values))
                .map_err(|rc| ("mdb_put", rc))?;
            Ok(Status::Ok)
        })
    }

    fn delete(&mut self, _table: &str, key: &str) -> Status {
        self.write_txn(|txn, _| match txn.delete(key.as_bytes()) {
            Ok(true) => Ok(Status::Ok),
            Ok(false) => Ok(Status::NotFound),
            Err(rc) => Err(("mdb_del", rc)),
        })
    }

    /// One write transaction.
    fn insert_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.batch_txn(batch, statuses, &mut |txn, _, key, values| {
            txn.put(key.as_bytes(), codec::encoded(values))
                .map_err(|rc| ("mdb_put", rc))?;
            Ok(Status::Ok)
        })
    }

    /// One write transaction; each update reads what the transaction
    /// wrote before it.
    fn update_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.batch_txn(batch, statuses, &mut |txn, buf, key, values| {
            buf.clear();
            match txn.get(key.as_bytes()) {
                Ok(Some(stored)) => {
                    if let Err(e) = codec::merge(stored, values, buf) {
                        return Ok(e.into());
                    }
                }
                Ok(None) => return Ok(Status::NotFound),
                Err(rc) => return Err(("mdb_get", rc)),
            }
            txn.put(key.as_bytes(), buf).map_err(|rc| ("mdb_put", rc))?;
            Ok(Status::Ok)
        })
    }

    /// One write transaction.
    fn delete_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.batch_txn(
            batch,
            statuses,
            &mut |txn, _, key, _| match txn.delete(key.as_bytes()) {
                Ok(true) => Ok(Status::Ok),
                Ok(false) => Ok(Status::NotFound),
                Err(rc) => Err(("mdb_del", rc)),
            },
        )
    }

    fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}
