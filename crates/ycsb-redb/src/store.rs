//! The `redb` store: one database file shared by all client threads.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use ycsb_db::codec;
use ycsb_db::{
    batch_status, Batch, Content, DirLayout, EngineBuild, EngineFile, EngineInDir, EngineInfo,
    EngineLock, EngineReport, Fields, Gauge, GaugeKind, LockKind, Name, Properties, ReadOp, Record,
    ScanOp, ScanResult, Status, Store, StoreError, StoreThread, ThreadContext, Visit,
};

use crate::options::{Config, Durability};
use crate::ENGINE_VERSION;

/// The store's name, as users type it.
const NAME: &str = "redb";

/// The database file inside `redb.path`.
pub const FILE_NAME: &str = "ycsb.redb";

/// What `redb.path` holds: the database file, recognised by redb's magic
/// number. redb holds byte-range locks on it (and, for files of earlier
/// versions, a `flock`) while it has the database open.
pub(crate) const LAYOUT: DirLayout = DirLayout {
    engine: "redb",
    files: &[EngineFile::marker(
        Name::Exact(FILE_NAME),
        Content::Prefix(b"redb\x1a\x0a\xa9\x0d\x0a"),
    )],
    locks: &[
        EngineLock {
            file: FILE_NAME,
            kind: LockKind::Record,
        },
        EngineLock {
            file: FILE_NAME,
            kind: LockKind::Flock,
        },
    ],
};

/// The one table every record lives in: the table name of operations is
/// ignored, as in the other embedded bindings.
const TABLE: TableDefinition<'static, &'static [u8], &'static [u8]> = TableDefinition::new("ycsb");

/// The tree gauges, in the order the time series takes them, with what
/// each measures.
const TREE_GAUGES: [(&str, GaugeKind); 7] = [
    ("redb.tree-height", GaugeKind::Count),
    ("redb.leaf-pages", GaugeKind::Count),
    ("redb.branch-pages", GaugeKind::Count),
    ("redb.allocated-pages", GaugeKind::Count),
    ("redb.stored-bytes", GaugeKind::Bytes),
    ("redb.metadata-bytes", GaugeKind::Bytes),
    ("redb.fragmented-bytes", GaugeKind::Bytes),
];

/// The gauge every sample has.
const CACHE_GAUGE: &str = "redb.cache-used-bytes";

/// How much of the wall time tree walks may take: a walk is due once the
/// time since the last one ended is this many times what it cost. redb's
/// statistics walk every page of the tree inside a write transaction
/// (20 to 30 ms for 200,000 records of 1 KB in cache, 0.4 s on a freshly
/// opened file), so a walk every time-series interval took several percent
/// of a core and held writers off as long; one walk in 100 bounds both to
/// 1 %.
const WALK_SPACING: u32 = 100;

/// When the last tree walk ended and what it cost.
#[derive(Clone, Copy, Debug)]
struct Walk {
    ended: Instant,
    cost: Duration,
}

/// The last tree walk and the figures it found (none when it failed).
#[derive(Clone, Copy, Debug)]
struct TreeSample {
    walk: Walk,
    values: Option<[f64; TREE_GAUGES.len()]>,
}

/// Whether a tree walk is due at `now`, after `last`.
fn walk_due(last: Option<Walk>, now: Instant) -> bool {
    last.is_none_or(|w| now.saturating_duration_since(w.ended) >= w.cost * WALK_SPACING)
}

/// A redb database opened once and shared by all client threads.
#[derive(Debug)]
pub struct RedbStore {
    db: EngineInDir<Database>,
    file: PathBuf,
    config: Config,
    /// The last tree walk for the gauges (the status thread's alone; the
    /// lock is never contended).
    tree_sample: Mutex<Option<TreeSample>>,
}

impl RedbStore {
    /// Opens the redb database file in `redb.path`, created if missing,
    /// with the other [`PROPERTIES`](crate::PROPERTIES).
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for a missing `redb.path` or an invalid
    /// value; otherwise as [`DirSetting::open_engine`](ycsb_db::DirSetting::open_engine): the guard's
    /// refusals, or [`StoreError::Open`] with redb's reason when it cannot
    /// open the file (held by another program, unwritable).
    pub fn open(properties: &Properties) -> Result<RedbStore, StoreError> {
        let config = Config::from_properties(properties)?;
        let file = config.dir.path.join(FILE_NAME);
        let db = config.dir.open_engine(NAME, &LAYOUT, |path| {
            let mut builder = Database::builder();
            if let Some(bytes) = config.cache_size {
                builder.set_cache_size(bytes);
            }
            // The table exists from the start, so that a read of an empty
            // database is NOT_FOUND rather than a missing table.
            let create = || -> Result<Database, redb::Error> {
                let db = builder.create(path.join(FILE_NAME))?;
                let txn = db.begin_write()?;
                txn.open_table(TABLE)?;
                txn.commit()?;
                Ok(db)
            };
            create().map_err(|e| describe_error(&e))
        })?;
        Ok(RedbStore {
            db,
            file,
            config,
            tree_sample: Mutex::new(None),
        })
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.config.dir.path
    }

    /// The tree statistics of the committed database.
    fn tree_stats(&self) -> Result<redb::DatabaseStats, redb::Error> {
        let txn = self.db.begin_write()?;
        let stats = txn.stats()?;
        txn.abort()?;
        Ok(stats)
    }
}

/// redb's error in words a user can act on.
fn describe_error(e: &redb::Error) -> String {
    match e {
        redb::Error::DatabaseAlreadyOpen => {
            "the database file is locked: another process (or another store in this one) has it open"
                .to_string()
        }
        other => other.to_string(),
    }
}

impl Store for RedbStore {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(RedbThread {
            db: &self.db,
            durability: match self.config.durability {
                Durability::Immediate => redb::Durability::Immediate,
                Durability::None => redb::Durability::None,
            },
            value: Vec::new(),
            last_error: None,
        }))
    }

    /// `redb.cache-used-bytes` in every sample, and with `redb.tree_gauges`
    /// (the default) the tree's shape: `redb.tree-height`,
    /// `redb.leaf-pages`, `redb.branch-pages`, `redb.allocated-pages`,
    /// `redb.stored-bytes` (user data in leaves), `redb.metadata-bytes` and
    /// `redb.fragmented-bytes` (allocated but unused: what space
    /// amplification of a B-tree is made of). The tree's figures are
    /// those of the last walk, taken when one is due (walks 100 × the
    /// last one's cost apart: at most 1 % of the time walking), so a
    /// time-series interval and the status line closed at the same
    /// moment show the same walk.
    fn gauges(&self, out: &mut Vec<Gauge>) {
        out.push(Gauge::bytes(
            CACHE_GAUGE,
            self.db.cache_stats().used_bytes() as f64,
        ));
        if !self.config.tree_gauges {
            return;
        }
        let mut sample = self.tree_sample.lock().unwrap_or_else(|e| e.into_inner());
        let started = Instant::now();
        if walk_due(sample.map(|s| s.walk), started) {
            let values = self.tree_stats().ok().map(|s| {
                [
                    f64::from(s.tree_height()),
                    s.leaf_pages() as f64,
                    s.branch_pages() as f64,
                    s.allocated_pages() as f64,
                    s.stored_bytes() as f64,
                    s.metadata_bytes() as f64,
                    s.fragmented_bytes() as f64,
                ]
            });
            let ended = Instant::now();
            *sample = Some(TreeSample {
                walk: Walk {
                    ended,
                    cost: ended - started,
                },
                values,
            });
        }
        if let Some(values) = sample.and_then(|s| s.values) {
            out.extend(
                TREE_GAUGES
                    .iter()
                    .zip(values)
                    .map(|((name, kind), value)| Gauge::new(*name, *kind, value)),
            );
        }
    }

    /// Listed without walking the tree: the session asks before the first
    /// phase, and a walk then would also read the whole file into redb's
    /// cache before anything is measured.
    fn gauge_names(&self) -> Vec<String> {
        let mut names = vec![CACHE_GAUGE.to_string()];
        if self.config.tree_gauges {
            names.extend(TREE_GAUGES.iter().map(|(n, _)| n.to_string()));
        }
        names
    }

    fn engine_build(&self) -> EngineBuild {
        EngineBuild::compiled_in()
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo::new("redb", ENGINE_VERSION)
    }

    /// `redb.stats` (the tree's shape and the file's size) and
    /// `redb.options` (the effective settings and the version).
    fn final_reports(&self) -> Vec<EngineReport> {
        let mut stats = String::new();
        match self.tree_stats() {
            Ok(s) => stats.push_str(&format!(
                "tree_height={}\nallocated_pages={}\nleaf_pages={}\nbranch_pages={}\n\
                 stored_bytes={}\nmetadata_bytes={}\nfragmented_bytes={}\npage_size={}\n",
                s.tree_height(),
                s.allocated_pages(),
                s.leaf_pages(),
                s.branch_pages(),
                s.stored_bytes(),
                s.metadata_bytes(),
                s.fragmented_bytes(),
                s.page_size(),
            )),
            Err(e) => stats.push_str(&format!("stats unavailable: {}\n", describe_error(&e))),
        }
        if let Ok(meta) = std::fs::metadata(&self.file) {
            stats.push_str(&format!("file_bytes={}\n", meta.len()));
        }
        stats.push_str(&format!(
            "cache_used_bytes={}\n",
            self.db.cache_stats().used_bytes()
        ));
        let mut options = self.config.describe();
        options.push_str(&format!("version={ENGINE_VERSION}\n"));
        vec![
            EngineReport {
                name: "redb.stats".to_string(),
                text: stats,
            },
            EngineReport {
                name: "redb.options".to_string(),
                text: options,
            },
        ]
    }

    /// Commits durably, so that unsynced commits (`redb.durability=none`)
    /// reach the file now, where a failure (a full disk) is an error the
    /// run reports, rather than when the database is dropped, where redb
    /// could only log it.
    fn close(&self) -> Result<(), StoreError> {
        let commit = || -> Result<(), redb::Error> {
            let mut txn = self.db.begin_write()?;
            txn.set_durability(redb::Durability::Immediate)?;
            txn.commit()?;
            Ok(())
        };
        commit().map_err(|e| {
            StoreError::Other(format!(
                "redb: the final synced commit to {} failed: {}",
                self.file.display(),
                describe_error(&e)
            ))
        })
    }
}

/// One client thread: borrows the shared database and owns its encode
/// buffer.
struct RedbThread<'a> {
    db: &'a Database,
    durability: redb::Durability,
    /// The encoded value to write.
    value: Vec<u8>,
    /// redb's message for the last failed operation.
    last_error: Option<String>,
}

impl RedbThread<'_> {
    /// Keeps redb's message of a failed operation for
    /// [`StoreThread::last_error`] (a full disk says so) and answers ERROR.
    #[cold]
    fn failed(&mut self, e: &redb::Error) -> Status {
        self.last_error = Some(describe_error(e));
        Status::Error
    }

    /// Runs `write` on the table in one write transaction committed with
    /// the store's durability; `write`'s status decides whether it commits.
    fn write(
        &mut self,
        write: impl FnOnce(
            &mut redb::Table<'_, &'static [u8], &'static [u8]>,
            &mut Vec<u8>,
        ) -> Result<Status, redb::Error>,
    ) -> Status {
        let mut value = std::mem::take(&mut self.value);
        let result = (|| {
            let mut txn = self.db.begin_write()?;
            txn.set_durability(self.durability)?;
            let status = {
                let mut table = txn.open_table(TABLE)?;
                write(&mut table, &mut value)?
            };
            if status.is_ok() {
                txn.commit()?;
            } else {
                txn.abort()?;
            }
            Ok::<Status, redb::Error>(status)
        })();
        self.value = value;
        match result {
            Ok(status) => status,
            Err(e) => self.failed(&e),
        }
    }

    /// Runs `step` for every record of `batch` in one write transaction,
    /// committed once (one sync with the durability in force): every
    /// record written or, when redb fails, none.
    fn write_batch(
        &mut self,
        batch: &Batch,
        statuses: &mut [Status],
        mut step: impl FnMut(
            &mut redb::Table<'_, &'static [u8], &'static [u8]>,
            &mut Vec<u8>,
            &str,
            &Record,
        ) -> Result<Status, redb::Error>,
    ) -> Status {
        let mut value = std::mem::take(&mut self.value);
        let result = (|| {
            let mut txn = self.db.begin_write()?;
            txn.set_durability(self.durability)?;
            {
                let mut table = txn.open_table(TABLE)?;
                for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
                    *status = step(&mut table, &mut value, key, values)?;
                }
            }
            txn.commit()?;
            Ok::<(), redb::Error>(())
        })();
        self.value = value;
        match result {
            Ok(()) => batch_status(statuses),
            Err(e) => {
                let failed = self.failed(&e);
                statuses.fill(failed);
                failed
            }
        }
    }

    /// Shows the stored value of `key` to `visit`.
    fn with_value(&mut self, key: &str, visit: impl FnOnce(&[u8]) -> Status) -> Status {
        let result = (|| {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(TABLE)?;
            let status = match table.get(key.as_bytes())? {
                Some(value) => visit(value.value()),
                None => Status::NotFound,
            };
            Ok::<Status, redb::Error>(status)
        })();
        match result {
            Ok(status) => status,
            Err(e) => self.failed(&e),
        }
    }
}

impl StoreThread for RedbThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        self.with_value(op.key, |value| codec::read_into(value, op.fields, out))
    }

    /// The value in redb's page, without a copy.
    fn read_in_place(&mut self, op: &ReadOp<'_>, _: &mut Record, visit: &mut Visit) -> Status {
        self.with_value(op.key, |value| {
            codec::read_in_place(value, op.fields, visit)
        })
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        let result = (|| {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(TABLE)?;
            let mut rows = codec::ScanRows::new(out, op.fields);
            for entry in table.range(op.start_key.as_bytes()..)?.take(op.count) {
                let (key, value) = entry?;
                if !rows.push(key.value(), value.value()) {
                    break;
                }
            }
            Ok::<Status, redb::Error>(rows.status())
        })();
        match result {
            Ok(status) => status,
            Err(e) => self.failed(&e),
        }
    }

    /// Reads the record, merges the changed fields and writes it back in
    /// one write transaction: redb has no merge operator.
    fn update(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        self.write(|table, value| {
            value.clear();
            {
                let Some(stored) = table.get(key.as_bytes())? else {
                    return Ok(Status::NotFound);
                };
                if let Err(e) = codec::merge(stored.value(), values, value) {
                    return Ok(e.into());
                }
            }
            table.insert(key.as_bytes(), value.as_slice())?;
            Ok(Status::Ok)
        })
    }

    fn insert(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        self.write(|table, _| {
            table.insert(key.as_bytes(), codec::encoded(values))?;
            Ok(Status::Ok)
        })
    }

    fn delete(&mut self, _table: &str, key: &str) -> Status {
        self.write(|table, _| {
            Ok(match table.remove(key.as_bytes())? {
                Some(_) => Status::Ok,
                None => Status::NotFound,
            })
        })
    }

    /// Every key in one read transaction (one snapshot).
    fn read_batch(
        &mut self,
        _table: &str,
        batch: &Batch,
        fields: Fields<'_>,
        out: &mut [Record],
        statuses: &mut [Status],
    ) -> Status {
        let result = (|| {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(TABLE)?;
            for ((status, record), (key, _)) in
                statuses.iter_mut().zip(out.iter_mut()).zip(batch.iter())
            {
                *status = match table.get(key.as_bytes())? {
                    Some(value) => codec::read_into(value.value(), fields, record),
                    None => Status::NotFound,
                };
            }
            Ok::<(), redb::Error>(())
        })();
        match result {
            Ok(()) => batch_status(statuses),
            Err(e) => {
                let failed = self.failed(&e);
                statuses.fill(failed);
                failed
            }
        }
    }

    /// One write transaction.
    fn insert_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.write_batch(batch, statuses, |table, _, key, values| {
            table.insert(key.as_bytes(), codec::encoded(values))?;
            Ok(Status::Ok)
        })
    }

    /// One write transaction; each update reads what the transaction
    /// wrote before it.
    fn update_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.write_batch(batch, statuses, |table, value, key, values| {
            value.clear();
            {
                let Some(stored) = table.get(key.as_bytes())? else {
                    return Ok(Status::NotFound);
                };
                if let Err(e) = codec::merge(stored.value(), values, value) {
                    return Ok(e.into());
                }
            }
            table.insert(key.as_bytes(), value.as_slice())?;
            Ok(Status::Ok)
        })
    }

    /// One write transaction.
    fn delete_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.write_batch(batch, statuses, |table, _, key, _| {
            Ok(match table.remove(key.as_bytes())? {
                Some(_) => Status::Ok,
                None => Status::NotFound,
            })
        })
    }

    fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_is_due_first_then_after_a_hundred_times_its_cost() {
        let start = Instant::now();
        assert!(walk_due(None, start));
        let last = Some(Walk {
            ended: start,
            cost: Duration::from_millis(20),
        });
        for (after_ms, due) in [(0, false), (1_000, false), (1_999, false), (2_000, true)] {
            let now = start + Duration::from_millis(after_ms);
            assert_eq!(walk_due(last, now), due, "{after_ms} ms after a 20 ms walk");
        }
        // A clock read before the walk ended (another thread's) is not due.
        let later = Some(Walk {
            ended: start + Duration::from_secs(1),
            cost: Duration::from_millis(1),
        });
        assert!(!walk_due(later, start));
        assert!(walk_due(later, start + Duration::from_millis(1_100)));
    }
}
