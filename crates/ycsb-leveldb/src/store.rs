//! The `leveldb` store: one database shared by all client threads.

use ycsb_db::codec;
use ycsb_db::{
    batch_status, Assertions, Batch, Content, DirLayout, EngineBuild, EngineFile, EngineInDir,
    EngineInfo, EngineLock, EngineReport, Fields, Gauge, GaugeKind, LockKind, Name, Properties,
    ReadOp, Record, RecordView, ScanOp, ScanResult, Status, Store, StoreError, StoreThread,
    ThreadContext, UpdateMerger, Visit,
};

use crate::ffi::{self, Db, WriteBatch};
use crate::options::{Config, Format};

/// The store's name, as users type it.
const NAME: &str = "leveldb";

/// A key above every YCSB key, as the limit of "the whole key range" for
/// size estimates (keys are compared bytewise).
const KEY_RANGE_LIMIT: [u8; 32] = [0xff; 32];

/// Levels asked for at most; LevelDB has 7, a modified build may have more.
const MAX_LEVELS: usize = 64;

/// Between a record's key and a field's name in a row-layout entry key.
/// NUL sorts below every byte a key holds, so `user1`'s entries sort
/// before `user10`'s, as the keys do, and a scan is in key order.
/// (YCSB-cpp's `:` sorts after the digits: `user10:field0` before
/// `user1:field0`.) Keys holding NUL are refused in this layout.
const ROW_SEPARATOR: u8 = 0;

/// A LevelDB database opened once and shared by all client threads.
///
/// The table name of every operation is ignored, as in YCSB-cpp: all
/// records live in one key space.
#[derive(Debug)]
pub struct LevelStore {
    db: EngineInDir<Db>,
    config: Config,
}

/// Whether a file starts with a record of LevelDB's log format (types 1
/// to 4).
fn is_log_record(start: &[u8]) -> bool {
    ycsb_db::is_log_record(start, 4)
}

/// Whether a file is a `CURRENT`: the name of a MANIFEST and a newline.
fn is_current(start: &[u8]) -> bool {
    start
        .strip_prefix(b"MANIFEST-")
        .and_then(|rest| rest.strip_suffix(b"\n"))
        .is_some_and(|n| !n.is_empty() && n.iter().all(u8::is_ascii_digit))
}

/// What a LevelDB directory holds: `CURRENT`, naming its MANIFEST, makes
/// it a database; `LOCK` (empty, on which LevelDB holds a record lock
/// while a process has the database open), the info LOG and the MANIFEST
/// are recognised by their content and may be there before `CURRENT` (a
/// database being created); logs and tables, which a stopped compaction
/// may leave half written, only beside `CURRENT`. RocksDB's `IDENTITY` and
/// OPTIONS files are not LevelDB's: LevelDB would rewrite a RocksDB
/// database so that RocksDB no longer reads it as its own.
pub(crate) const LAYOUT: DirLayout = DirLayout {
    engine: "LevelDB",
    files: &[
        EngineFile::marker(Name::Exact("CURRENT"), Content::Check(is_current)),
        EngineFile::owned(Name::Exact("LOCK"), Content::Empty),
        EngineFile::owned(Name::Exact("LOG"), Content::Check(ycsb_db::is_dated_log)),
        EngineFile::owned(
            Name::Exact("LOG.old"),
            Content::Check(ycsb_db::is_dated_log),
        ),
        EngineFile::owned(Name::Prefix("MANIFEST-"), Content::Check(is_log_record)),
        EngineFile::owned(Name::Numbered("", ".log"), Content::Unchecked),
        EngineFile::owned(Name::Numbered("", ".ldb"), Content::Unchecked),
        EngineFile::owned(Name::Numbered("", ".sst"), Content::Unchecked),
        EngineFile::owned(Name::Numbered("", ".dbtmp"), Content::Unchecked),
    ],
    locks: &[EngineLock {
        file: "LOCK",
        kind: LockKind::Record,
    }],
};

impl LevelStore {
    /// Opens the LevelDB database in `leveldb.dbname`, created if
    /// missing, with the other [`PROPERTIES`](crate::PROPERTIES).
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for a missing `leveldb.dbname` or an
    /// invalid value; otherwise as [`DirSetting::open_engine`](ycsb_db::DirSetting::open_engine): the guard's
    /// refusals, or [`StoreError::Open`] with LevelDB's message (corruption,
    /// a row-format database whose entries are not this layout's).
    pub fn open(properties: &Properties) -> Result<LevelStore, StoreError> {
        crate::lazy::load().map_err(|e| StoreError::open(NAME, e))?;
        let config = Config::from_properties(properties)?;
        let db = config.dir.open_engine(NAME, &LAYOUT, |path| {
            let db = Db::open(path, &config.engine)?;
            if config.format == Format::Row {
                check_row_layout(&db)?;
            }
            Ok(db)
        })?;
        Ok(LevelStore { db, config })
    }

    /// The database directory.
    pub fn path(&self) -> &std::path::Path {
        &self.config.dir.path
    }

    /// Compacts the whole key range, blocking until LevelDB is done: for a
    /// run that should start from a settled tree.
    pub fn compact(&self) {
        self.db.compact_all();
    }

    /// The LevelDB version linked into this program, as `major.minor`.
    pub fn linked_version() -> String {
        let (major, minor) = ffi::linked_version();
        format!("{major}.{minor}")
    }

    /// How the LevelDB linked into this program was built: its shared
    /// library and whether that imports `__assert_fail`, or, linked
    /// statically, what `build-leveldb.sh` recorded (`build.rs`).
    pub fn linked_build() -> EngineBuild {
        let static_assertions = match env!("YCSB_LEVELDB_STATIC_ASSERTIONS") {
            "enabled" => Assertions::Enabled,
            "disabled" => Assertions::Disabled,
            _ => Assertions::Unknown,
        };
        EngineBuild::of_code(ffi::version_function(), static_assertions)
    }

    /// The file LevelDB was loaded from: the shared library, or this
    /// program when LevelDB is linked statically.
    pub fn linked_library() -> Option<String> {
        ffi::linked_library()
    }

    fn stats_gauges(&self, levels: usize, out: &mut Vec<Gauge>) {
        let Some(stats) = self.db.property("leveldb.stats") else {
            return;
        };
        // Rows are "level files size(MB) time(sec) read(MB) write(MB)",
        // only for levels with files or compaction work.
        let mut size_mb = vec![0.0; levels];
        let (mut seconds, mut read_mb, mut write_mb) = (0.0, 0.0, 0.0);
        for line in stats.lines() {
            let cols: Vec<f64> = match line
                .split_whitespace()
                .map(str::parse::<f64>)
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(cols) if cols.len() == 6 => cols,
                _ => continue,
            };
            let level = cols[0] as usize;
            if let Some(slot) = size_mb.get_mut(level) {
                *slot = cols[2];
            }
            seconds += cols[3];
            read_mb += cols[4];
            write_mb += cols[5];
        }
        for (level, mb) in size_mb.iter().enumerate() {
            out.push(Gauge::new(
                format!("leveldb.mb-at-level{level}"),
                GaugeKind::Mebibytes,
                *mb,
            ));
        }
        out.push(Gauge::seconds("leveldb.compaction-sec", seconds));
        out.push(Gauge::new(
            "leveldb.compaction-read-mb",
            GaugeKind::Mebibytes,
            read_mb,
        ));
        out.push(Gauge::new(
            "leveldb.compaction-write-mb",
            GaugeKind::Mebibytes,
            write_mb,
        ));
    }
}

impl Store for LevelStore {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        let batch = WriteBatch::new().map_err(StoreError::Other)?;
        Ok(Box::new(LevelThread {
            db: &self.db,
            format: self.config.format,
            value: Vec::new(),
            key: Vec::new(),
            batch,
            last_error: None,
            updates: UpdateMerger::new(),
        }))
    }

    /// `leveldb.num-files-at-levelN` for every level,
    /// `leveldb.approximate-memory-usage` (memtables and block cache, in
    /// bytes), `leveldb.approximate-size` (table file bytes over the whole
    /// key range), and from `leveldb.stats`: `leveldb.mb-at-levelN` and the
    /// compaction totals `leveldb.compaction-sec`, `-read-mb`, `-write-mb`.
    fn gauges(&self, out: &mut Vec<Gauge>) {
        let mut levels = 0;
        while levels < MAX_LEVELS {
            let name = format!("leveldb.num-files-at-level{levels}");
            let Some(files) = self.db.property(&name).and_then(|v| v.trim().parse().ok()) else {
                break;
            };
            out.push(Gauge::count(name, files));
            levels += 1;
        }
        if let Some(bytes) = self
            .db
            .property("leveldb.approximate-memory-usage")
            .and_then(|v| v.trim().parse().ok())
        {
            out.push(Gauge::bytes("leveldb.approximate-memory-usage", bytes));
        }
        let size = self.db.approximate_size(b"", &KEY_RANGE_LIMIT);
        out.push(Gauge::bytes("leveldb.approximate-size", size as f64));
        self.stats_gauges(levels, out);
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo::new("LevelDB", Self::linked_version())
    }

    fn engine_build(&self) -> EngineBuild {
        Self::linked_build()
    }

    /// `leveldb.stats` and `leveldb.sstables` (the engine's own texts) and
    /// `leveldb.options`: the effective settings, the version and the
    /// library file linked.
    fn final_reports(&self) -> Vec<EngineReport> {
        let mut reports = Vec::new();
        for name in ["leveldb.stats", "leveldb.sstables"] {
            if let Some(text) = self.db.property(name) {
                reports.push(EngineReport {
                    name: name.to_string(),
                    text,
                });
            }
        }
        let (version, library) = (Self::linked_version(), Self::linked_library());
        let options = EngineReport::linked_options(NAME, self.config.describe(), &version, library);
        reports.push(options);
        reports
    }
}

/// One client thread: borrows the shared database and owns reusable
/// buffers, so steady-state operations allocate only inside LevelDB.
struct LevelThread<'a> {
    db: &'a Db,
    format: Format,
    /// The encoded value to write.
    value: Vec<u8>,
    /// A composite `<key>` NUL `<field>` key (row format).
    key: Vec<u8>,
    batch: WriteBatch,
    /// LevelDB's message for the last failed write.
    last_error: Option<String>,
    /// Merges a batch's updates of one key (`batch.size`).
    updates: UpdateMerger,
}

impl LevelThread<'_> {
    /// Keeps LevelDB's message of a failed write for
    /// [`StoreThread::last_error`] (a full disk says so) and answers ERROR.
    #[cold]
    fn failed(&mut self, message: String) -> Status {
        self.last_error = Some(message);
        Status::Error
    }

    /// Sets `self.key` to `<key>` NUL, the prefix of a record's row
    /// entries.
    fn row_prefix(&mut self, key: &str) {
        self.key.clear();
        self.key.extend_from_slice(key.as_bytes());
        self.key.push(ROW_SEPARATOR);
    }

    fn read_single(&mut self, key: &str, fields: Fields<'_>, out: &mut Record) -> Status {
        match self.db.get(key.as_bytes()) {
            Ok(Some(value)) => codec::read_into(&value, fields, out),
            Ok(None) => Status::NotFound,
            Err(_) => Status::Error,
        }
    }

    fn scan_single(
        &mut self,
        start_key: &str,
        count: usize,
        fields: Fields<'_>,
        out: &mut ScanResult,
    ) -> Status {
        let Ok(mut it) = self.db.iter() else {
            return Status::Error;
        };
        it.seek(start_key.as_bytes());
        let mut rows = codec::ScanRows::new(out, fields);
        while rows.taken() < count && it.valid() {
            if !rows.push(it.key(), it.value()) {
                return rows.status();
            }
            it.next();
        }
        match it.status() {
            Ok(()) => rows.status(),
            Err(_) => Status::Error,
        }
    }

    fn update_single(&mut self, key: &str, values: &Record) -> Status {
        let stored = match self.db.get(key.as_bytes()) {
            Ok(Some(v)) => v,
            Ok(None) => return Status::NotFound,
            Err(_) => return Status::Error,
        };
        // Merged straight from LevelDB's buffer into the value to write:
        // no intermediate records, each stored byte copied once.
        self.value.clear();
        if let Err(e) = codec::merge(&stored, values, &mut self.value) {
            return e.into();
        }
        drop(stored);
        match self.db.put(key.as_bytes(), &self.value) {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(e),
        }
    }

    fn insert_single(&mut self, key: &str, values: &Record) -> Status {
        self.value.clear();
        codec::encode(values, &mut self.value);
        match self.db.put(key.as_bytes(), &self.value) {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(e),
        }
    }

    fn write_row(&mut self, key: &str, values: &Record) -> Status {
        if key.as_bytes().contains(&ROW_SEPARATOR) {
            self.last_error = Some(format!(
                "key {key:?} holds a NUL byte, which separates a key from its fields in \
                 leveldb.format=row"
            ));
            return Status::BadRequest;
        }
        self.batch.clear();
        for field in values.iter() {
            self.row_prefix(key);
            self.key.extend_from_slice(field.name.as_bytes());
            self.batch.put(&self.key, field.value);
        }
        match self.db.write(&mut self.batch) {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(e),
        }
    }

    fn read_row(&mut self, key: &str, fields: Fields<'_>, out: &mut Record) -> Status {
        self.row_prefix(key);
        let Ok(mut it) = self.db.iter() else {
            return Status::Error;
        };
        it.seek(&self.key);
        let mut found = false;
        while it.valid() {
            let Some(field) = it.key().strip_prefix(self.key.as_slice()) else {
                break;
            };
            found = true;
            let Ok(field) = std::str::from_utf8(field) else {
                return Status::UnexpectedState;
            };
            if fields.contains(field) {
                out.push(field, it.value());
            }
            it.next();
        }
        match it.status() {
            Err(_) => Status::Error,
            Ok(()) if found => Status::Ok,
            Ok(()) => Status::NotFound,
        }
    }

    fn scan_row(
        &mut self,
        start_key: &str,
        count: usize,
        fields: Fields<'_>,
        out: &mut ScanResult,
    ) -> Status {
        let Ok(mut it) = self.db.iter() else {
            return Status::Error;
        };
        it.seek(start_key.as_bytes());
        // The record key of the row being filled, in `self.key`.
        self.key.clear();
        let mut rows = 0;
        let mut row: Option<&mut Record> = None;
        while it.valid() {
            let entry = it.key();
            // The record key ends at the first separator (keys hold none).
            let Some(end) = entry.iter().position(|&b| b == ROW_SEPARATOR) else {
                return Status::UnexpectedState;
            };
            let (record_key, field) = (&entry[..end], &entry[end + 1..]);
            let (Ok(record_key), Ok(field)) =
                (std::str::from_utf8(record_key), std::str::from_utf8(field))
            else {
                return Status::UnexpectedState;
            };
            if row.is_none() || self.key != record_key.as_bytes() {
                if rows == count {
                    break;
                }
                rows += 1;
                self.key.clear();
                self.key.extend_from_slice(record_key.as_bytes());
                row = Some(out.push_row(record_key));
            }
            if fields.contains(field) {
                if let Some(r) = row.as_deref_mut() {
                    r.push(field, it.value());
                }
            }
            it.next();
        }
        match it.status() {
            Ok(()) => Status::Ok,
            Err(_) => Status::Error,
        }
    }

    /// Writes `self.batch` (one `Write`: one log record, one sync with
    /// `leveldb.sync`), turning the OK statuses of the records it holds
    /// into ERROR when it fails.
    fn write_batch(&mut self, statuses: &mut [Status]) -> Status {
        if let Err(e) = self.db.write(&mut self.batch) {
            let failed = self.failed(e);
            for status in statuses.iter_mut().filter(|s| s.is_ok()) {
                *status = failed;
            }
        }
        batch_status(statuses)
    }

    /// Adds the row entries of `values` at `key` to `self.batch` (row
    /// format); BAD_REQUEST for a key holding the separator.
    fn batch_row(&mut self, key: &str, values: &Record) -> Status {
        if key.as_bytes().contains(&ROW_SEPARATOR) {
            return Status::BadRequest;
        }
        for field in values.iter() {
            self.row_prefix(key);
            self.key.extend_from_slice(field.name.as_bytes());
            self.batch.put(&self.key, field.value);
        }
        Status::Ok
    }

    /// Inserts, or row-format updates (blind writes of the fields), of a
    /// whole batch in one write batch.
    fn put_batch(&mut self, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.batch.clear();
        for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
            *status = match self.format {
                Format::Row => self.batch_row(key, values),
                Format::Single | Format::Column => {
                    self.batch.put(key.as_bytes(), codec::encoded(values));
                    Status::Ok
                }
            };
        }
        self.write_batch(statuses)
    }

    fn delete_row(&mut self, key: &str) -> Status {
        self.row_prefix(key);
        let Ok(mut it) = self.db.iter() else {
            return Status::Error;
        };
        self.batch.clear();
        it.seek(&self.key);
        while it.valid() && it.key().starts_with(&self.key) {
            self.batch.delete(it.key());
            it.next();
        }
        if it.status().is_err() {
            return Status::Error;
        }
        drop(it);
        match self.db.write(&mut self.batch) {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(e),
        }
    }
}

impl StoreThread for LevelThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        match self.format {
            Format::Row => self.read_row(op.key, op.fields, out),
            Format::Single | Format::Column => self.read_single(op.key, op.fields, out),
        }
    }

    /// LevelDB's own copy of the value itself, in the one-value formats:
    /// no second copy and no decoding beyond checking it.
    fn read_in_place(&mut self, op: &ReadOp<'_>, buf: &mut Record, visit: &mut Visit) -> Status {
        if let Format::Row = self.format {
            let status = self.read_row(op.key, op.fields, buf);
            if status.is_ok() {
                visit(RecordView::from(&*buf));
            }
            return status;
        }
        match self.db.get(op.key.as_bytes()) {
            Ok(Some(value)) => codec::read_in_place(&value, op.fields, visit),
            Ok(None) => Status::NotFound,
            Err(_) => Status::Error,
        }
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        match self.format {
            Format::Row => self.scan_row(op.start_key, op.count, op.fields, out),
            Format::Single | Format::Column => {
                self.scan_single(op.start_key, op.count, op.fields, out)
            }
        }
    }

    fn update(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        match self.format {
            // As YCSB-cpp: a blind write of the changed fields.
            Format::Row => self.write_row(key, values),
            Format::Single | Format::Column => self.update_single(key, values),
        }
    }

    fn insert(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        match self.format {
            Format::Row => self.write_row(key, values),
            Format::Single | Format::Column => self.insert_single(key, values),
        }
    }

    fn delete(&mut self, _table: &str, key: &str) -> Status {
        match self.format {
            Format::Row => self.delete_row(key),
            Format::Single | Format::Column => match self.db.delete(key.as_bytes()) {
                Ok(()) => Status::Ok,
                Err(e) => self.failed(e),
            },
        }
    }

    /// One write batch.
    fn insert_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.put_batch(batch, statuses)
    }

    /// One write batch: the row format's blind writes, or each record read
    /// and merged as [`update`](StoreThread::update) does (two updates of
    /// one key both apply).
    fn update_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        if let Format::Row = self.format {
            return self.put_batch(batch, statuses);
        }
        self.batch.clear();
        let (db, writes) = (self.db, &mut self.batch);
        self.updates.merge(
            batch,
            statuses,
            |key, changes, out| match db.get(key.as_bytes()) {
                Ok(Some(stored)) => match codec::merge(&stored, changes, out) {
                    Ok(()) => Status::Ok,
                    Err(e) => e.into(),
                },
                Ok(None) => Status::NotFound,
                Err(_) => Status::Error,
            },
            |key, value| writes.put(key.as_bytes(), value),
        );
        self.write_batch(statuses)
    }

    /// One write batch of deletes (every entry of each record in the row
    /// format); LevelDB cannot tell a missing key: OK.
    fn delete_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.batch.clear();
        for (status, (key, _)) in statuses.iter_mut().zip(batch.iter()) {
            *status = Status::Ok;
            match self.format {
                Format::Single | Format::Column => self.batch.delete(key.as_bytes()),
                Format::Row => {
                    self.row_prefix(key);
                    let Ok(mut it) = self.db.iter() else {
                        *status = Status::Error;
                        continue;
                    };
                    it.seek(&self.key);
                    while it.valid() && it.key().starts_with(&self.key) {
                        self.batch.delete(it.key());
                        it.next();
                    }
                    if it.status().is_err() {
                        *status = Status::Error;
                    }
                }
            }
        }
        self.write_batch(statuses)
    }

    fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}

/// Refuses, for `leveldb.format=row`, a database whose first entry is not
/// a row-layout entry: one written in the single layout, or in the
/// `<key>:<field>` row layout of earlier versions (YCSB-cpp's), whose
/// scans came out of key order. Every entry of a row-layout database
/// holds the separator, so the first one tells; an empty database is fine.
fn check_row_layout(db: &Db) -> Result<(), String> {
    let mut it = db.iter()?;
    it.seek(b"");
    if !it.valid() {
        return it.status();
    }
    let first = it.key();
    if first.contains(&ROW_SEPARATOR) {
        return Ok(());
    }
    let shown = String::from_utf8_lossy(first);
    let layout = if first.contains(&b':') {
        "written in the single layout, or in the row layout of earlier ycsb-rs versions \
         and YCSB-cpp ('<key>:<field>' entries, whose scans are out of key order where \
         a key is a prefix of another)"
    } else {
        "written in the single layout (leveldb.format=single)"
    };
    Err(format!(
        "leveldb.format=row: the database is not in the row layout (its first entry \
         {shown:?} holds no NUL separator): {layout}; nothing was changed (open it with \
         leveldb.format=single, or load it again into another leveldb.dbname or with \
         leveldb.destroy=true)"
    ))
}
