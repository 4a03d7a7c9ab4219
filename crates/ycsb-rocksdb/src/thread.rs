//! One client thread's operations on the shared database.

use std::sync::atomic::{AtomicBool, Ordering};

use rocksdb::perf::PerfStatsLevel;
use rocksdb::{ReadOptions, WriteBatch, WriteOptions, DB};
use ycsb_db::{
    batch_status, codec, Batch, Field, Fields, ReadOp, Record, RecordView, ScanOp, ScanResult,
    Status, StoreThread, UpdateMerger, Visit,
};

use crate::config::{Format, RocksConfig};
use crate::log_reserve::{LogReserve, TOP_UP_EVERY};

/// Per-thread state: options built once and buffers reused by every
/// operation.
pub(crate) struct RocksThread<'a> {
    db: &'a DB,
    /// The store's write fence: raised after an I/O error on a write.
    write_fence: &'a AtomicBool,
    /// The info LOG's reserve, topped up every `TOP_UP_EVERY` writes.
    log_reserve: &'a LogReserve,
    /// Writes since the thread started (wrapping), for the top-ups.
    writes: u32,
    merge_update: bool,
    fill_cache: bool,
    /// `Some(field name)` in the `raw` format: a record is its one field's
    /// bare value.
    raw_field: Option<String>,
    read_options: ReadOptions,
    write_options: WriteOptions,
    /// The encoded value of the record being written.
    value: Vec<u8>,
    /// RocksDB's message for the last failed write.
    last_error: Option<String>,
    /// Merges a batch's updates of one key (`batch.size`).
    updates: UpdateMerger,
}

impl<'a> RocksThread<'a> {
    /// Builds the thread's state; called on the client thread that will use
    /// it (the runner and `ycsb bench` both do), since the perf level it
    /// sets is RocksDB's per-thread setting.
    pub(crate) fn new(
        db: &'a DB,
        write_fence: &'a AtomicBool,
        log_reserve: &'a LogReserve,
        config: &RocksConfig,
    ) -> Self {
        if let Some(level) = config.perf_level {
            // RocksDB counts into a thread-local perf context on every
            // operation unless told not to (its default for a new thread is
            // "count"); db_bench disables it, and nothing here reads it.
            rocksdb::perf::set_perf_stats(match level {
                1 => PerfStatsLevel::Disable,
                2 => PerfStatsLevel::EnableCount,
                3 => PerfStatsLevel::EnableTimeExceptForMutex,
                4 => PerfStatsLevel::EnableTimeAndCPUTimeExceptForMutex,
                // The config admits 1..=5.
                _ => PerfStatsLevel::EnableTime,
            });
        }
        let mut read_options = ReadOptions::default();
        read_options.fill_cache(config.fill_cache);
        let mut write_options = WriteOptions::default();
        write_options.set_sync(config.sync);
        write_options.disable_wal(config.disable_wal);
        Self {
            db,
            write_fence,
            log_reserve,
            writes: 0,
            merge_update: config.merge_update,
            fill_cache: config.fill_cache,
            raw_field: (config.format == Format::Raw).then(|| config.raw_field.clone()),
            read_options,
            write_options,
            value: Vec::with_capacity(1024),
            last_error: None,
            updates: UpdateMerger::new(),
        }
    }

    /// Keeps RocksDB's message of a failed write for
    /// [`StoreThread::last_error`] (a full disk says so) and answers ERROR.
    /// An I/O error (a full disk) also raises the store's write fence.
    #[cold]
    fn failed(&mut self, error: rocksdb::Error) -> Status {
        let message = error.into_string();
        if message.starts_with("IO error") {
            self.write_fence.store(true, Ordering::Release);
        }
        self.last_error = Some(message);
        Status::Error
    }

    /// Whether writes are fenced off after an I/O error; the thread then
    /// answers ERROR without touching the engine. Called before every
    /// write, it also tops up the info LOG's reserve now and then.
    #[inline]
    fn fenced(&mut self) -> bool {
        if !self.write_fence.load(Ordering::Relaxed) {
            self.writes = self.writes.wrapping_add(1);
            if self.writes.is_multiple_of(TOP_UP_EVERY) {
                self.log_reserve.top_up();
            }
            return false;
        }
        if self.last_error.is_none() {
            self.last_error = Some("writes stopped after an I/O error of another thread".into());
        }
        true
    }

    /// Writes the encoded record in `self.value` at `key`.
    fn put(&mut self, key: &str) -> Status {
        let value = std::mem::take(&mut self.value);
        let status = self.put_bytes(key, &value);
        self.value = value;
        status
    }

    fn put_bytes(&mut self, key: &str, value: &[u8]) -> Status {
        if self.fenced() {
            return Status::Error;
        }
        match self.db.put_opt(key, value, &self.write_options) {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(e),
        }
    }

    /// Writes `batch` (one `Write`: one WAL record, one sync with
    /// `rocksdb.sync`), turning the OK statuses of the records it holds
    /// into ERROR when it fails. The rocksdb crate consumes a write batch,
    /// so each batched call builds one: one allocation per batch.
    fn write_batch(&mut self, batch: WriteBatch, statuses: &mut [Status]) -> Status {
        if !batch.is_empty() {
            if let Err(e) = self.db.write_opt(batch, &self.write_options) {
                let failed = self.failed(e);
                for status in statuses.iter_mut().filter(|s| s.is_ok()) {
                    *status = failed;
                }
            }
        }
        batch_status(statuses)
    }

    /// A batch of inserts, or of blind updates (`raw`, `merge_update`):
    /// every record put (or merged) in one write batch. A record the
    /// `raw` format cannot store is BAD_REQUEST and the others are written.
    fn put_batch(&mut self, batch: &Batch, statuses: &mut [Status], merge: bool) -> Status {
        if self.fenced() {
            statuses.fill(Status::Error);
            return Status::Error;
        }
        let mut writes = WriteBatch::default();
        for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
            *status = Status::Ok;
            match &self.raw_field {
                Some(_) => match values.field(0) {
                    Some(field) if values.len() == 1 => writes.put(key, field.value),
                    _ => *status = Status::BadRequest,
                },
                None if merge => writes.merge(key, codec::encoded(values)),
                None => writes.put(key, codec::encoded(values)),
            }
        }
        self.write_batch(writes, statuses)
    }

    /// `raw` format: writes the one field of `values` as the bare value (a
    /// record of any other number of fields cannot be stored).
    fn put_raw(&mut self, key: &str, values: &Record) -> Status {
        match values.field(0) {
            Some(field) if values.len() == 1 => self.put_bytes(key, field.value),
            _ => Status::BadRequest,
        }
    }
}

impl StoreThread for RocksThread<'_> {
    /// RocksDB's batched MultiGet of the batch's keys (one call into the
    /// engine, values pinned as a single read's are), each decoded as
    /// [`read`](StoreThread::read) decodes it.
    fn read_batch(
        &mut self,
        _table: &str,
        batch: &Batch,
        fields: Fields<'_>,
        out: &mut [Record],
        statuses: &mut [Status],
    ) -> Status {
        let Some(family) = self.db.cf_handle(rocksdb::DEFAULT_COLUMN_FAMILY_NAME) else {
            // Not opened by name (cannot happen: the store always does).
            for ((status, record), (key, _)) in
                statuses.iter_mut().zip(out.iter_mut()).zip(batch.iter())
            {
                *status = self.read(
                    &ReadOp {
                        table: "",
                        key,
                        fields,
                    },
                    record,
                );
            }
            return batch_status(&statuses[..batch.len()]);
        };
        let keys = batch.iter().map(|(key, _)| key.as_bytes());
        let values = self
            .db
            .batched_multi_get_cf_opt(family, keys, false, &self.read_options);
        for ((status, record), value) in statuses.iter_mut().zip(out.iter_mut()).zip(values) {
            *status = match value {
                Ok(Some(value)) => match &self.raw_field {
                    Some(name) => {
                        if fields.contains(name) {
                            record.push(name, &value);
                        }
                        Status::Ok
                    }
                    None => codec::read_into(&value, fields, record),
                },
                Ok(None) => Status::NotFound,
                Err(_) => Status::Error,
            };
        }
        batch_status(&statuses[..batch.len()])
    }

    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        match self.db.get_pinned_opt(op.key, &self.read_options) {
            Ok(Some(value)) => match &self.raw_field {
                Some(name) => {
                    if op.fields.contains(name) {
                        out.push(name, &value);
                    }
                    Status::Ok
                }
                None => codec::read_into(&value, op.fields, out),
            },
            Ok(None) => Status::NotFound,
            Err(_) => Status::Error,
        }
    }

    /// The pinned value itself: no copy out of the block cache or memtable
    /// beyond the one RocksDB makes, and no decoding beyond checking it.
    fn read_in_place(&mut self, op: &ReadOp<'_>, _: &mut Record, visit: &mut Visit) -> Status {
        match self.db.get_pinned_opt(op.key, &self.read_options) {
            Ok(Some(value)) => match &self.raw_field {
                Some(name) => {
                    visit(if op.fields.contains(name) {
                        RecordView::single(Field {
                            name,
                            value: &value,
                        })
                    } else {
                        RecordView::empty()
                    });
                    Status::Ok
                }
                None => codec::read_in_place(&value, op.fields, visit),
            },
            Ok(None) => Status::NotFound,
            Err(_) => Status::Error,
        }
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        // The rocksdb crate consumes the ReadOptions of an iterator, so a
        // scan builds its own; the iterator allocates in the engine anyway.
        let mut options = ReadOptions::default();
        options.fill_cache(self.fill_cache);
        let mut iter = self.db.raw_iterator_opt(options);
        iter.seek(op.start_key);
        let mut rows = 0;
        while rows < op.count && iter.valid() {
            let (Some(key), Some(value)) = (iter.key(), iter.value()) else {
                break;
            };
            let Ok(key) = std::str::from_utf8(key) else {
                return Status::Error;
            };
            let row = out.push_row(key);
            match &self.raw_field {
                Some(name) => {
                    if op.fields.contains(name) {
                        row.push(name, value);
                    }
                }
                None => {
                    let status = codec::read_into(value, op.fields, row);
                    if !status.is_ok() {
                        return status;
                    }
                }
            }
            rows += 1;
            iter.next();
        }
        match iter.status() {
            Ok(()) => Status::Ok,
            Err(_) => Status::Error,
        }
    }

    fn update(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        if self.raw_field.is_some() {
            // The record is its one field: the update replaces it, blindly
            // (db_bench's overwrite), creating a missing key.
            return self.put_raw(key, values);
        }
        self.value.clear();
        if self.merge_update {
            if self.fenced() {
                return Status::Error;
            }
            codec::encode(values, &mut self.value);
            return match self.db.merge_opt(key, &self.value, &self.write_options) {
                Ok(()) => Status::Ok,
                Err(e) => self.failed(e),
            };
        }
        // Read-modify-write, as YCSB-cpp and Java: the stored record with
        // the changed fields replaced and new ones appended, merged straight
        // from the pinned engine buffer into the value to write.
        match self.db.get_pinned_opt(key, &self.read_options) {
            Ok(Some(stored)) => {
                if let Err(e) = codec::merge(&stored, values, &mut self.value) {
                    return e.into();
                }
            }
            Ok(None) => return Status::NotFound,
            Err(_) => return Status::Error,
        }
        self.put(key)
    }

    fn insert(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        if self.raw_field.is_some() {
            return self.put_raw(key, values);
        }
        self.value.clear();
        codec::encode(values, &mut self.value);
        self.put(key)
    }

    fn delete(&mut self, _table: &str, key: &str) -> Status {
        if self.fenced() {
            return Status::Error;
        }
        match self.db.delete_opt(key, &self.write_options) {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(e),
        }
    }

    /// One write batch.
    fn insert_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.put_batch(batch, statuses, false)
    }

    /// One write batch of the merged records, read as
    /// [`update`](StoreThread::update) reads them (two updates of one key
    /// both apply); blind puts in the `raw` format, merge operands with
    /// `rocksdb.merge_update`.
    fn update_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        if self.raw_field.is_some() || self.merge_update {
            return self.put_batch(batch, statuses, self.merge_update);
        }
        if self.fenced() {
            statuses.fill(Status::Error);
            return Status::Error;
        }
        let (db, read_options) = (self.db, &self.read_options);
        let mut writes = WriteBatch::default();
        self.updates.merge(
            batch,
            statuses,
            |key, changes, out| match db.get_pinned_opt(key, read_options) {
                Ok(Some(stored)) => match codec::merge(&stored, changes, out) {
                    Ok(()) => Status::Ok,
                    Err(e) => e.into(),
                },
                Ok(None) => Status::NotFound,
                Err(_) => Status::Error,
            },
            |key, value| writes.put(key, value),
        );
        self.write_batch(writes, statuses)
    }

    /// One write batch of deletes (RocksDB cannot tell a missing key: OK).
    fn delete_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        if self.fenced() {
            statuses.fill(Status::Error);
            return Status::Error;
        }
        let mut writes = WriteBatch::default();
        for (status, (key, _)) in statuses.iter_mut().zip(batch.iter()) {
            writes.delete(key);
            *status = Status::Ok;
        }
        self.write_batch(writes, statuses)
    }

    fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}
