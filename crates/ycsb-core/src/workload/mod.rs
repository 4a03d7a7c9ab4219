//! Java YCSB's CoreWorkload: which operations, on which keys, with which
//! values.
//!
//! [`CoreWorkload`] is built once from the properties and shared by all
//! threads; each thread gets a [`WorkloadThread`] holding its own random
//! generator, key choosers and reusable buffers, so an operation allocates
//! nothing and touches no shared state except the run-phase insert counter.

mod clients;
pub(crate) mod datafile;
mod keychooser;
pub(crate) mod keys;
mod properties;
mod settings;
mod timing;
pub(crate) mod values;

pub(crate) use clients::ClientPartition;
pub use datafile::{DataFileError, DataSetError};
pub(crate) use keys::{build_key_name, key_name, KeyOrder, KEY_PREFIX};
pub(crate) use properties::*;
pub(crate) use values::{build_deterministic_value, ValueRng};

use std::sync::Arc;
use std::time::{Duration, Instant};

use timing::Timing;

use ycsb_db::{
    Batch, Fields, PropertyError, ReadOp, Record, RecordTemplate, ScanOp, ScanResult, Status,
    StoreThread,
};

use crate::clock::Clock;
use crate::generator::{
    seeded_rng, AcknowledgedCounter, Discrete, Exponential, GeneratorError, HistogramGenerator,
    Hotspot, NumberGenerator, Rng64, ScrambledZipfian, Sequential, SkewedLatest, Uniform, Zipfian,
    ZIPFIAN_CONSTANT,
};
use crate::measurement::Recorder;
use keychooser::{Distribution, KeyChooser};
use ycsb_results::Operation;

/// The random stream of a thread's key chooser is this bit or'ed with the
/// thread id; the thread's other draws use the thread id's own stream.
const KEY_STREAM: u64 = 1 << 40;
/// The same for the stream of a thread's field values.
const VALUE_STREAM: u64 = 2 << 40;

/// The [`seeded_rng`] streams of worker thread `thread_id`: the one of its
/// operation, field and length choices, and its key chooser's (see
/// [`crate::runner::run_streams`]).
pub(crate) fn thread_streams(thread_id: usize) -> (u64, u64) {
    (thread_id as u64, KEY_STREAM | thread_id as u64)
}

/// An error building the workload from its properties.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// A property is invalid.
    #[error(transparent)]
    Property(#[from] PropertyError),
    /// A generator could not be built from the properties' values.
    #[error("{property}: {source}")]
    Generator {
        /// The property (or properties) that configure the generator.
        property: &'static str,
        /// What the generator rejected.
        #[source]
        source: GeneratorError,
    },
    /// The `datafile` or `keyfile` cannot be used.
    #[error(transparent)]
    DataFile(#[from] datafile::DataSetError),
}

/// How a load insert ([`WorkloadThread::do_insert`]) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertOutcome {
    /// The record was inserted.
    Inserted,
    /// Every attempt failed (the first and its retries), or the phase was
    /// asked to stop while the insert was being retried.
    Failed {
        /// Inserts tried.
        attempts: u64,
    },
    /// The thread's rows of the `datafile` no longer read as they did when
    /// the workload checked them: the file changed, and the thread stops.
    DataFileChanged,
}

/// A run-phase operation kind, as the operation mix chooses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransactionKind {
    /// Read one record.
    Read,
    /// Update one record.
    Update,
    /// Insert a new record.
    Insert,
    /// Scan a range of records.
    Scan,
    /// Read a record, then update it.
    ReadModifyWrite,
    /// Delete a record.
    Delete,
}

#[derive(Clone, Debug)]
enum FieldLengthSpec {
    Constant(u64),
    Uniform(u64, u64),
    Zipfian(u64, u64),
    Histogram(HistogramGenerator),
}

#[derive(Clone, Debug)]
enum KeySpec {
    Uniform(u64, u64),
    Zipfian {
        min: u64,
        max: u64,
        theta: f64,
    },
    Latest,
    Hotspot {
        lb: u64,
        ub: u64,
        data: f64,
        opn: f64,
    },
    Sequential(u64, u64),
    Exponential {
        percentile: f64,
        range: f64,
    },
}

/// The CoreWorkload's settings, validated, shared by every thread.
#[derive(Debug)]
pub struct CoreWorkload {
    table: String,
    field_names: Vec<String>,
    /// With a constant field length (and only then): every field framed,
    /// for building a whole record of random values in one run.
    record_template: Option<RecordTemplate>,
    field_length: FieldLengthSpec,
    read_all_fields: bool,
    read_all_fields_by_name: bool,
    write_all_fields: bool,
    data_integrity: bool,
    mix: Vec<(f64, TransactionKind)>,
    keys: KeySpec,
    scan_length: (u64, u64, ScanLengthDistribution),
    key_order: KeyOrder,
    zero_padding: usize,
    record_count: u64,
    operation_count: u64,
    /// This client's load range (`insertstart`/`insertcount`, or its
    /// share with several clients).
    load_start: u64,
    load_count: u64,
    /// Java's `recordcount=0` without `insertcount`: the load inserts
    /// until stopped, each thread every `threads`-th key number.
    load_until_stopped: bool,
    clients: ClientPartition,
    retry_limit: u64,
    retry_interval: Duration,
    /// `core_workload_insertion_keep_going_on_error`.
    keep_going_on_error: bool,
    /// `batch.size`: records per store call (1: no batches).
    batch_size: usize,
    inserts: Arc<AcknowledgedCounter>,
    clock: Clock,
    /// Records and keys from `datafile`/`keyfile`.
    data: Option<Arc<datafile::DataSet>>,
    /// Why a run phase would only read keys that were never loaded (no
    /// record in the key range, and operations other than inserts), naming
    /// the property the user set; `None` when it can run.
    empty_key_space: Option<ycsb_db::PropertyError>,
}

impl CoreWorkload {
    /// The number of records in the data set (`recordcount`).
    pub fn record_count(&self) -> u64 {
        self.record_count
    }

    /// The number of run-phase operations (`operationcount`, 0 for no
    /// limit).
    pub fn operation_count(&self) -> u64 {
        self.operation_count
    }

    /// Refuses a run phase that would read, update, scan or delete in a key
    /// range holding no record: every such operation would target a key
    /// that was never loaded, and the run would pass for a measurement.
    /// (Java YCSB fails in its key generators then: a division by zero.)
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] naming the count the
    /// user set (`recordcount`, `insertcount` or `insertstart`).
    pub fn check_run_phase(&self) -> Result<(), ycsb_db::PropertyError> {
        match &self.empty_key_space {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// The number of records this client loads (`insertcount`, or its
    /// share of `recordcount` with several clients); 0 when the load goes
    /// on until stopped ([`CoreWorkload::loads_until_stopped`]).
    pub fn insert_count(&self) -> u64 {
        self.load_count
    }

    /// Whether the load phase inserts until it is stopped (a time limit,
    /// Ctrl-C): Java's load with `recordcount=0` and no `insertcount`.
    pub fn loads_until_stopped(&self) -> bool {
        self.load_until_stopped
    }

    /// Whether a load thread goes on after an insert failed for good
    /// (`core_workload_insertion_keep_going_on_error`), as Java's
    /// `doInsert` then reports success to its client thread.
    pub fn keeps_going_on_error(&self) -> bool {
        self.keep_going_on_error
    }

    /// `batch.size`: the records of one store call (1: every record in
    /// its own call, the single-record path).
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// `core_workload_insertion_retry_limit`: how many times a failed load
    /// insert is retried.
    pub fn insertion_retry_limit(&self) -> u64 {
        self.retry_limit
    }

    /// The first key number this client loads (`insertstart`, or the start
    /// of its share with several clients).
    pub fn insert_start(&self) -> u64 {
        self.load_start
    }

    /// This process's place among several clients (`client.index`,
    /// `client.count`).
    pub fn clients(&self) -> ClientPartition {
        self.clients
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The field names, `field0` to `field<fieldcount-1>`.
    pub fn field_names(&self) -> &[String] {
        &self.field_names
    }

    /// Whether values are deterministic and reads verified.
    pub fn data_integrity(&self) -> bool {
        self.data_integrity
    }

    /// Whether an update writes every field (`writeallfields`) rather
    /// than one.
    pub fn write_all_fields(&self) -> bool {
        self.write_all_fields
    }

    /// The mean length in bytes of a generated field value under the
    /// field length distribution (for estimating the bytes a phase wrote).
    pub fn mean_field_length(&self) -> f64 {
        if let Some(d) = self.data.as_ref().filter(|d| d.has_rows()) {
            return d.mean_field_length();
        }
        match &self.field_length {
            FieldLengthSpec::Constant(n) => *n as f64,
            FieldLengthSpec::Uniform(lb, ub) => (*lb as f64 + *ub as f64) / 2.0,
            FieldLengthSpec::Zipfian(lb, ub) => {
                // Rank r (0-based) has weight (r+1)^-θ; the range is a
                // field length, small enough to sum (capped for safety).
                let n = (ub - lb + 1).min(1_000_000);
                let theta = crate::generator::ZIPFIAN_CONSTANT;
                let (mut weights, mut weighted) = (0.0, 0.0);
                for r in 0..n {
                    let w = ((r + 1) as f64).powf(-theta);
                    weights += w;
                    weighted += r as f64 * w;
                }
                *lb as f64 + weighted / weights
            }
            FieldLengthSpec::Histogram(h) => h.mean(),
        }
    }

    /// The key name of key number `number`, as the workload builds it.
    pub fn key_name(&self, number: u64) -> String {
        if let Some(key) = self.data.as_ref().and_then(|d| d.load_key(number)) {
            return key.to_string();
        }
        key_name(number, self.key_order, self.zero_padding)
    }

    /// The key numbers thread `thread_id` of `thread_count` loads: a
    /// contiguous share of `insertstart..insertstart+insertcount`.
    ///
    /// Java hands out load key numbers from one shared counter; giving
    /// each thread its own range loads the same set of keys without a
    /// shared atomic per insert (with `insertorder=ordered` the interleaving
    /// of inserts in time differs).
    pub fn load_range(&self, thread_id: usize, thread_count: usize) -> std::ops::Range<u64> {
        split_range(self.load_start, self.load_count, thread_id, thread_count)
    }

    /// The state of one client thread, with random streams derived from
    /// `seed` and the thread's number.
    ///
    /// # Errors
    ///
    /// A [`WorkloadError`] when a generator rejects its parameters (these
    /// are checked once by [`CoreWorkload::from_properties`]).
    pub fn thread(
        &self,
        thread_id: usize,
        thread_count: usize,
        seed: u64,
    ) -> Result<WorkloadThread<'_>, WorkloadError> {
        let keys = self.key_chooser(thread_id, thread_count, seed)?;
        let field_length = self.field_length_generator()?;
        let scan_length = self.scan_length_generator()?;
        let range = self.load_range(thread_id, thread_count);
        // A load without an end cannot be split into contiguous shares:
        // thread t of n inserts key numbers start + t, start + t + n, ...,
        // so that the keys inserted when it stops are (but for the last
        // few of each thread) one run from `insertstart`, as Java's shared
        // counter leaves them.
        let (next_load, load_end, load_stride) = if self.load_until_stopped {
            (
                self.load_start.saturating_add(thread_id as u64),
                u64::MAX,
                thread_count.max(1) as u64,
            )
        } else {
            (range.start, range.end, 1)
        };
        Ok(WorkloadThread {
            workload: self,
            origin: (thread_id, thread_count, seed),
            local: false,
            rng: seeded_rng(seed, thread_streams(thread_id).0),
            value_rng: ValueRng::new(rand::RngCore::next_u64(&mut seeded_rng(
                seed,
                VALUE_STREAM | thread_id as u64,
            ))),
            keys,
            operations: Discrete::new(self.mix.clone())
                .map_err(generator_error("readproportion"))?,
            field_chooser: Uniform::new(0, self.field_names.len() as u64 - 1)
                .map_err(generator_error("fieldcount"))?,
            field_length,
            scan_length,
            next_load,
            load_end,
            load_stride,
            timing: Timing::new(self.clock),
            key: String::with_capacity(KEY_PREFIX.len() + 24),
            values: Record::with_capacity(self.field_names.len(), 0),
            read: Record::new(),
            scan: ScanResult::new(),
            expected: Vec::new(),
            pending_acks: Vec::new(),
            batch: BatchBuffers::default(),
            rows: match &self.data {
                Some(d) if d.has_rows() => Some(
                    d.reader(range.start)
                        .map_err(|e| WorkloadError::DataFile(e.into()))?,
                ),
                _ => None,
            },
        })
    }

    /// A thread's key chooser: the request distribution with the thread's
    /// own random stream, naming keys ahead unless they come from a file
    /// or need more digits than the fast path formats.
    fn key_chooser(
        &self,
        thread_id: usize,
        thread_count: usize,
        seed: u64,
    ) -> Result<KeyChooser, WorkloadError> {
        let distribution = match &self.keys {
            KeySpec::Uniform(lb, ub) => Distribution::Uniform(
                Uniform::new(*lb, *ub).map_err(generator_error("requestdistribution"))?,
            ),
            KeySpec::Sequential(lb, ub) => Distribution::Sequential(
                Sequential::new(*lb, *ub, thread_id as u64, thread_count as u64)
                    .map_err(generator_error("requestdistribution"))?,
            ),
            KeySpec::Zipfian { min, max, theta } => {
                let chooser = if *theta == ZIPFIAN_CONSTANT {
                    ScrambledZipfian::new(*min, *max)
                } else {
                    ScrambledZipfian::with_constant(*min, *max, *theta)
                };
                Distribution::Zipfian(chooser.map_err(generator_error("zipfian_const"))?)
            }
            KeySpec::Latest => Distribution::Latest(SkewedLatest::new(self.inserts.clone())),
            KeySpec::Hotspot { lb, ub, data, opn } => Distribution::Hotspot(
                Hotspot::new(*lb, *ub, *data, *opn)
                    .map_err(generator_error("hotspotdatafraction"))?,
            ),
            KeySpec::Exponential { percentile, range } => Distribution::Exponential(
                Exponential::new(*percentile, *range)
                    .map_err(generator_error("exponential.frac"))?,
            ),
        };
        let keys = KeyChooser::new(distribution, seeded_rng(seed, thread_streams(thread_id).1));
        if self.data.is_none() && self.zero_padding <= 20 {
            return Ok(keys.with_names(keychooser::Naming {
                order: self.key_order,
                zero_padding: self.zero_padding,
                clients: self.clients,
                record_count: self.record_count,
            }));
        }
        Ok(keys)
    }

    /// A thread's field length generator; a constant length draws nothing.
    fn field_length_generator(&self) -> Result<FieldLength, WorkloadError> {
        Ok(match &self.field_length {
            FieldLengthSpec::Constant(n) => FieldLength::Constant(*n as usize),
            FieldLengthSpec::Uniform(lb, ub) => FieldLength::Generator(Box::new(
                Uniform::new(*lb, *ub).map_err(generator_error("minfieldlength"))?,
            )),
            FieldLengthSpec::Zipfian(lb, ub) => FieldLength::Generator(Box::new(
                Zipfian::new(*lb, *ub, ZIPFIAN_CONSTANT)
                    .map_err(generator_error("minfieldlength"))?,
            )),
            FieldLengthSpec::Histogram(h) => FieldLength::Generator(Box::new(h.clone())),
        })
    }

    /// A thread's scan length generator.
    fn scan_length_generator(&self) -> Result<Box<dyn NumberGenerator>, WorkloadError> {
        let (min_scan, max_scan, scan_dist) = self.scan_length;
        Ok(match scan_dist {
            ScanLengthDistribution::Uniform => Box::new(
                Uniform::new(min_scan, max_scan).map_err(generator_error("minscanlength"))?,
            ),
            ScanLengthDistribution::Zipfian => Box::new(
                Zipfian::new(min_scan, max_scan, ZIPFIAN_CONSTANT)
                    .map_err(generator_error("minscanlength"))?,
            ),
        })
    }
}

/// Turns a generator's refusal into an error naming the property (or
/// properties) that configured it, which is what the user can change.
fn generator_error(property: &'static str) -> impl Fn(GeneratorError) -> WorkloadError {
    move |source| WorkloadError::Generator { property, source }
}

/// Splits `count` items starting at `start` into `parts` contiguous ranges
/// whose sizes differ by at most one (earlier parts get the remainder, as
/// Java splits operation counts over threads). Not API: see
/// [`crate::internals`].
#[doc(hidden)]
pub fn split_range(start: u64, count: u64, part: usize, parts: usize) -> std::ops::Range<u64> {
    let parts = parts.max(1) as u64;
    let part = part as u64;
    let base = count / parts;
    let extra = count % parts;
    let begin = start + part * base + part.min(extra);
    let len = base + u64::from(part < extra);
    begin..begin + len
}

enum FieldLength {
    Constant(usize),
    Generator(Box<dyn NumberGenerator>),
}

/// One client thread's workload state: random streams, generators and
/// reusable buffers. Not API: the runner's, and the benches' through
/// [`crate::internals`].
#[doc(hidden)]
pub struct WorkloadThread<'w> {
    workload: &'w CoreWorkload,
    /// (thread id, thread count, seed) this state was built for, to build
    /// it again on the thread that runs it.
    origin: (usize, usize, u64),
    /// Whether the state was built by the thread that runs it.
    local: bool,
    rng: Rng64,
    /// The stream field values are drawn from.
    value_rng: ValueRng,
    keys: KeyChooser,
    operations: Discrete<TransactionKind>,
    field_chooser: Uniform,
    field_length: FieldLength,
    scan_length: Box<dyn NumberGenerator>,
    next_load: u64,
    load_end: u64,
    /// The step between this thread's load key numbers: 1 in a
    /// contiguous share, the thread count in a load until stopped.
    load_stride: u64,
    timing: Timing,
    key: String,
    values: Record,
    read: Record,
    scan: ScanResult,
    expected: Vec<u8>,
    pending_acks: Vec<u64>,
    /// The buffers of batched calls (`batch.size` above 1), reused.
    batch: BatchBuffers,
    /// This thread's reader of `datafile` rows, for the load phase.
    rows: Option<datafile::RowReader>,
}

/// A thread's reusable buffers for batched calls: grown to the batch size
/// once, then refilled, so that a batch allocates nothing.
#[derive(Default)]
struct BatchBuffers {
    /// The keys (and records) of the call.
    entries: Batch,
    /// Each entry's status, as the store reports it.
    statuses: Vec<Status>,
    /// Each entry's record read (batched reads).
    reads: Vec<Record>,
    /// The insert counter's number of each entry (run-phase inserts).
    numbers: Vec<u64>,
}

impl BatchBuffers {
    /// Empties the entries and readies `n` statuses.
    fn start(&mut self, n: usize) {
        self.entries.clear();
        self.numbers.clear();
        self.statuses.clear();
        self.statuses.resize(n, Status::Ok);
    }

    /// Readies `n` empty records to read into.
    fn ready_reads(&mut self, n: usize) {
        if self.reads.len() < n {
            self.reads.resize_with(n, Record::new);
        }
        for record in &mut self.reads[..n] {
            record.clear();
        }
    }
}

/// Where the key [`WorkloadThread::draw_key`] drew is.
#[derive(Clone, Copy)]
enum DrawnKey<'w> {
    /// Formatted ahead in the key chooser (its last name).
    Ahead,
    /// A row of the workload's data set.
    Data(&'w str),
    /// Built into the thread's key buffer.
    Built,
}

impl<'w> WorkloadThread<'w> {
    /// The fields a read asks for, as Java's `doTransactionRead`: one
    /// random field unless `readallfields`; every field by name when values
    /// are verified or `readallfieldsbyname` is set; otherwise all fields.
    fn read_selection(&mut self) -> Fields<'w> {
        let workload: &'w CoreWorkload = self.workload;
        if !workload.read_all_fields {
            let index = self.random_field();
            Fields::Only(std::slice::from_ref(&workload.field_names[index]))
        } else if workload.data_integrity && !workload.read_all_fields_by_name {
            // The whole record, so that verification sees a field the
            // record should not have (Java names the fields here).
            Fields::All
        } else if workload.read_all_fields_by_name {
            Fields::Only(&workload.field_names)
        } else {
            Fields::All
        }
    }

    /// The fields a read-modify-write reads, as Java's
    /// `doTransactionReadModifyWrite`: one random field unless
    /// `readallfields`, else all fields (Java passes `null`: neither
    /// `readallfieldsbyname` nor `dataintegrity` names them here).
    fn read_modify_write_selection(&mut self) -> Fields<'w> {
        let workload: &'w CoreWorkload = self.workload;
        if workload.read_all_fields {
            Fields::All
        } else {
            let index = self.random_field();
            Fields::Only(std::slice::from_ref(&workload.field_names[index]))
        }
    }

    /// The fields a scan asks for: all, or one random field.
    fn scan_selection(&mut self) -> Fields<'w> {
        let workload: &'w CoreWorkload = self.workload;
        if workload.read_all_fields {
            Fields::All
        } else {
            let index = self.random_field();
            Fields::Only(std::slice::from_ref(&workload.field_names[index]))
        }
    }
}

impl<'w> WorkloadThread<'w> {
    /// Builds this state again on the calling thread before its first
    /// operation. The runner builds every thread's state up front (so that
    /// errors surface before any thread starts), which packs the buffers of
    /// all threads next to each other in its own heap: a key buffer written
    /// on every operation could then share a cache line with another
    /// thread's data, and the line would bounce between cores on every
    /// operation. Built again here, the buffers come from the running
    /// thread's own malloc arena.
    #[inline]
    fn make_local(&mut self) {
        if !self.local {
            self.relocate();
        }
    }

    #[cold]
    #[inline(never)]
    fn relocate(&mut self) {
        let (thread_id, thread_count, seed) = self.origin;
        // Nothing has been drawn yet, so the new state is the same state;
        // building it succeeded once already.
        if let Ok(fresh) = self.workload.thread(thread_id, thread_count, seed) {
            *self = fresh;
        }
        self.local = true;
    }

    /// The workload this thread's state belongs to.
    pub fn workload(&self) -> &'w CoreWorkload {
        self.workload
    }

    /// The number of load inserts left for this thread.
    pub fn load_remaining(&self) -> u64 {
        self.load_end.saturating_sub(self.next_load)
    }

    /// Lets `recorder` publish if its period has passed by the end of the
    /// last operation (checked cheaply; call it after each operation).
    #[inline]
    pub fn publish_if_due(&mut self, recorder: &mut Recorder) {
        self.timing.publish_if_due(recorder);
    }

    /// Loads the next record of this thread's range (Java's `doInsert`),
    /// retrying as `core_workload_insertion_retry_limit` says and calling
    /// `retrying` with the retry's number (1, 2, ...) before each retry's
    /// wait, where Java prints "Retrying insertion, retry count: N".
    ///
    /// A phase asked to stop retries no more. Whether the thread goes on
    /// after a failed insert is [`CoreWorkload::keeps_going_on_error`]'s
    /// answer: Java's load thread stops at the first insert that fails for
    /// good unless `core_workload_insertion_keep_going_on_error` is set.
    pub fn do_insert(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        retrying: &mut dyn FnMut(u64),
    ) -> InsertOutcome {
        self.make_local();
        if !self.next_load_record() {
            return InsertOutcome::DataFileChanged;
        }
        let mut attempts = 0;
        loop {
            let (workload, key, values) = (self.workload, &self.key, &self.values);
            let status = self.timing.measure(recorder, Operation::Insert, None, || {
                db.insert(&workload.table, key, values)
            });
            attempts += 1;
            if status.is_ok() {
                return InsertOutcome::Inserted;
            }
            if !self.wait_to_retry_insert(attempts, retrying) {
                return InsertOutcome::Failed { attempts };
            }
        }
    }

    /// Makes the next record of this thread's load range in `key` and
    /// `values`: generated, or the data file's next row. False when the
    /// file no longer reads: it was checked when the workload was built,
    /// so it changed, and the load stops there.
    // Always inlined: a call here cost the load path 15 instructions a
    // record (`cargo xtask instructions`, load_insert).
    #[inline(always)]
    fn next_load_record(&mut self) -> bool {
        let number = self.next_load;
        self.next_load += self.load_stride;
        build_key_name(
            number,
            self.workload.key_order,
            self.workload.zero_padding,
            &mut self.key,
        );
        if let Some(rows) = &mut self.rows {
            rows.next_row(&mut self.key, &mut self.values).is_ok()
        } else {
            self.build_values(true);
            true
        }
    }

    /// After an insert's attempt number `attempts` failed: false when no
    /// retry is left (`core_workload_insertion_retry_limit`, or the phase
    /// was asked to stop); otherwise calls `retrying` and waits Java's
    /// jittered `core_workload_insertion_retry_interval` first.
    #[cold]
    fn wait_to_retry_insert(&mut self, attempts: u64, retrying: &mut dyn FnMut(u64)) -> bool {
        if attempts > self.workload.retry_limit || crate::runner::interrupt::stopped() {
            return false;
        }
        retrying(attempts);
        let jitter = 0.8 + 0.4 * rand::Rng::random::<f64>(&mut self.rng);
        crate::runner::interrupt::pause(self.workload.retry_interval.mul_f64(jitter));
        true
    }

    /// Loads the next `records` records of this thread's range in one
    /// batched call (`batch.size`; at least one, at most what the range
    /// has left), retrying the records that failed as
    /// [`do_insert`](Self::do_insert) retries one. Returns the outcome and
    /// the records the batch held: each counts as an operation, as go-ycsb
    /// counts a batch's records.
    pub fn do_insert_batch(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        retrying: &mut dyn FnMut(u64),
        records: u64,
    ) -> (InsertOutcome, u64) {
        self.make_local();
        let n = records.min(self.load_remaining()).max(1);
        self.batch.start(n as usize);
        for _ in 0..n {
            if !self.next_load_record() {
                return (InsertOutcome::DataFileChanged, 0);
            }
            self.batch.entries.push_swap(&self.key, &mut self.values);
        }
        let mut attempts = 0;
        loop {
            let workload = self.workload;
            let batch = &mut self.batch;
            let len = batch.entries.len();
            let (entries, statuses) = (&batch.entries, &mut batch.statuses[..len]);
            let status = self.timing.measure_batch(
                recorder,
                (Operation::BatchInsert, Operation::Insert),
                None,
                statuses,
                |statuses| db.insert_batch(&workload.table, entries, statuses),
            );
            attempts += 1;
            if status.is_ok() {
                return (InsertOutcome::Inserted, n);
            }
            // Only the records that failed are sent again.
            batch.entries.retain_failed(&batch.statuses);
            if !self.wait_to_retry_insert(attempts, retrying) {
                return (InsertOutcome::Failed { attempts }, n);
            }
        }
    }

    /// Performs `records` run-phase operations (at least one) of one kind
    /// chosen by the operation mix, as go-ycsb's `DoBatchTransaction`:
    /// reads, updates, inserts and deletes in one batched call each;
    /// scans and read-modify-writes, which have no batch form, one by one
    /// (go-ycsb refuses scans and skips read-modify-writes). Returns the
    /// kind and the operations performed.
    pub fn do_transaction_batch(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended_start: Option<Instant>,
        records: u64,
    ) -> (TransactionKind, u64) {
        self.make_local();
        let n = records.max(1);
        let kind = self.operations.next(&mut self.rng);
        match kind {
            TransactionKind::Read => self.batch_read(db, recorder, intended_start, n as usize),
            TransactionKind::Update => self.batch_update(db, recorder, intended_start, n as usize),
            TransactionKind::Insert => self.batch_insert(db, recorder, intended_start, n as usize),
            TransactionKind::Delete => self.batch_delete(db, recorder, intended_start, n as usize),
            TransactionKind::Scan => {
                for _ in 0..n {
                    self.transaction_scan(db, recorder, intended_start);
                }
            }
            TransactionKind::ReadModifyWrite => {
                for _ in 0..n {
                    self.transaction_read_modify_write(db, recorder, intended_start);
                }
            }
        }
        (kind, n)
    }

    /// `n` reads in one call, each verified when values are.
    fn batch_read(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
        n: usize,
    ) {
        let workload = self.workload;
        let fields = self.read_selection();
        self.batch.start(n);
        for _ in 0..n {
            self.next_key();
            self.batch.entries.push(&self.key);
        }
        self.batch.ready_reads(n);
        let batch = &mut self.batch;
        let (entries, reads) = (&batch.entries, &mut batch.reads[..n]);
        self.timing.measure_batch(
            recorder,
            (Operation::BatchRead, Operation::Read),
            intended,
            &mut batch.statuses[..n],
            |statuses| db.read_batch(&workload.table, entries, fields, reads, statuses),
        );
        if workload.data_integrity {
            for index in 0..n {
                self.key.clear();
                self.key.push_str(self.batch.entries.key(index));
                std::mem::swap(&mut self.read, &mut self.batch.reads[index]);
                self.verify(recorder, fields);
                std::mem::swap(&mut self.read, &mut self.batch.reads[index]);
            }
        }
    }

    /// `n` updates in one call.
    fn batch_update(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
        n: usize,
    ) {
        let workload = self.workload;
        self.batch.start(n);
        for _ in 0..n {
            self.next_key();
            self.build_values(workload.write_all_fields);
            self.batch.entries.push_swap(&self.key, &mut self.values);
        }
        let batch = &mut self.batch;
        let entries = &batch.entries;
        self.timing.measure_batch(
            recorder,
            (Operation::BatchUpdate, Operation::Update),
            intended,
            &mut batch.statuses[..n],
            |statuses| db.update_batch(&workload.table, entries, statuses),
        );
    }

    /// `n` inserts of new records in one call, each acknowledged after it
    /// (whatever its outcome, as one insert is).
    fn batch_insert(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
        n: usize,
    ) {
        let workload = self.workload;
        self.batch.start(n);
        for _ in 0..n {
            let number = workload.inserts.next();
            build_key_name(
                workload.clients.key_number(workload.record_count, number),
                workload.key_order,
                workload.zero_padding,
                &mut self.key,
            );
            self.build_values(true);
            self.batch.entries.push_swap(&self.key, &mut self.values);
            self.batch.numbers.push(number);
        }
        let batch = &mut self.batch;
        let entries = &batch.entries;
        self.timing.measure_batch(
            recorder,
            (Operation::BatchInsert, Operation::Insert),
            intended,
            &mut batch.statuses[..n],
            |statuses| db.insert_batch(&workload.table, entries, statuses),
        );
        for index in 0..n {
            let number = self.batch.numbers[index];
            self.acknowledge(number);
        }
    }

    /// `n` deletes in one call.
    fn batch_delete(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
        n: usize,
    ) {
        let workload = self.workload;
        self.batch.start(n);
        for _ in 0..n {
            self.next_key();
            self.batch.entries.push(&self.key);
        }
        let batch = &mut self.batch;
        let entries = &batch.entries;
        self.timing.measure_batch(
            recorder,
            (Operation::BatchDelete, Operation::Delete),
            intended,
            &mut batch.statuses[..n],
            |statuses| db.delete_batch(&workload.table, entries, statuses),
        );
    }

    /// Performs one run-phase operation chosen by the operation mix
    /// (Java's `doTransaction`). `intended_start` is when the operation
    /// was scheduled to start under a target rate; its latency is then also
    /// recorded from that moment (coordinated-omission correction).
    pub fn do_transaction(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended_start: Option<Instant>,
    ) -> TransactionKind {
        self.make_local();
        let kind = self.operations.next(&mut self.rng);
        match kind {
            TransactionKind::Read => self.transaction_read(db, recorder, intended_start),
            TransactionKind::Update => self.transaction_update(db, recorder, intended_start),
            TransactionKind::Insert => self.transaction_insert(db, recorder, intended_start),
            TransactionKind::Scan => self.transaction_scan(db, recorder, intended_start),
            TransactionKind::ReadModifyWrite => {
                self.transaction_read_modify_write(db, recorder, intended_start)
            }
            TransactionKind::Delete => self.transaction_delete(db, recorder, intended_start),
        }
        kind
    }

    /// Chooses the key of the next run-phase operation into `self.key`:
    /// drawn from the request distribution, never beyond the last
    /// acknowledged insert.
    fn next_key(&mut self) {
        let drawn = self.draw_key();
        self.keep_key(drawn);
    }

    /// Copies the key [`draw_key`](Self::draw_key) drew into `self.key`,
    /// where it is not already.
    fn keep_key(&mut self, drawn: DrawnKey<'w>) {
        let name = match drawn {
            DrawnKey::Ahead => Some(self.keys.last_name()),
            DrawnKey::Data(key) => Some(key),
            DrawnKey::Built => None,
        };
        if let Some(name) = name {
            self.key.clear();
            self.key.push_str(name);
        }
    }

    /// Draws the next run-phase key without copying it anywhere: see
    /// [`current_key`](Self::current_key). Against the basic store,
    /// copying each name into `self.key` was a tenth of a read.
    #[inline(always)]
    fn draw_key(&mut self) -> DrawnKey<'w> {
        let workload: &'w CoreWorkload = self.workload;
        let limit = workload.inserts.limit().unwrap_or(0);
        let drawn = self.keys.next(limit);
        if self.keys.has_names() {
            return DrawnKey::Ahead;
        }
        let number = workload.clients.key_number(workload.record_count, drawn);
        if let Some(key) = workload.data.as_ref().and_then(|d| d.run_key(number)) {
            return DrawnKey::Data(key);
        }
        build_key_name(
            number,
            workload.key_order,
            workload.zero_padding,
            &mut self.key,
        );
        DrawnKey::Built
    }

    /// The key [`draw_key`](Self::draw_key) drew.
    #[inline]
    fn current_key<'s>(keys: &'s KeyChooser, drawn: DrawnKey<'s>, built: &'s str) -> &'s str {
        match drawn {
            DrawnKey::Ahead => keys.last_name(),
            DrawnKey::Data(key) => key,
            DrawnKey::Built => built,
        }
    }

    fn random_field(&mut self) -> usize {
        self.field_chooser.next_value(&mut self.rng) as usize
    }

    fn next_field_length(&mut self) -> usize {
        match &mut self.field_length {
            FieldLength::Constant(n) => *n,
            FieldLength::Generator(g) => g.next_value(&mut self.rng) as usize,
        }
    }

    /// Fills `self.values` for the current key: every field, or one random
    /// field.
    fn build_values(&mut self, all_fields: bool) {
        self.values.clear();
        let workload = self.workload;
        if all_fields {
            match &workload.record_template {
                // The common case, every field the same length and random:
                // one generation run for the whole record, in place.
                Some(template) if !workload.data_integrity => {
                    let rng = &mut self.value_rng;
                    self.values.push_template(template, |area, starts| {
                        rng.fill_at(area, starts, template.value_len())
                    });
                }
                _ => {
                    for index in 0..workload.field_names.len() {
                        self.push_value(index);
                    }
                }
            }
        } else {
            let index = self.random_field();
            self.push_value(index);
        }
    }

    fn push_value(&mut self, index: usize) {
        let name = &self.workload.field_names[index];
        let length = self.next_field_length();
        if self.workload.data_integrity {
            build_deterministic_value(&self.key, name, length, &mut self.expected);
            self.values.push(name, &self.expected);
        } else {
            let rng = &mut self.value_rng;
            self.values
                .push_with(name, length, |value| rng.fill_value(value));
        }
    }

    fn transaction_read(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        let workload = self.workload;
        if self.keys.has_names() && !workload.data_integrity {
            // The usual case, settled by these two tests: the key is the
            // name formatted ahead, and the values read are not kept.
            // Going through `draw_key`'s cases cost a few percent of a
            // read against the `basic` store.
            self.keys.next_named(workload.inserts.limit().unwrap_or(0));
            let fields = self.read_selection();
            self.read.clear();
            let (key, read) = (self.keys.last_name(), &mut self.read);
            self.timing
                .measure(recorder, Operation::Read, intended, || {
                    read_record(db, &workload.table, key, fields, read, false)
                });
            return;
        }
        let drawn = self.draw_key();
        if workload.data_integrity {
            // Verification reads the key from `self.key`.
            self.keep_key(drawn);
        }
        let fields = self.read_selection();
        self.read.clear();
        let key = Self::current_key(&self.keys, drawn, &self.key);
        let read = &mut self.read;
        self.timing
            .measure(recorder, Operation::Read, intended, || {
                read_record(
                    db,
                    &workload.table,
                    key,
                    fields,
                    read,
                    workload.data_integrity,
                )
            });
        if workload.data_integrity {
            self.verify(recorder, fields);
        }
    }

    /// Java's `verifyRow`: every field read must equal its deterministic
    /// value; an empty read is an error. Unlike Java, the record must also
    /// hold exactly the fields asked for (`fields`, all of them when
    /// reading all): a missing field or one the workload never writes is
    /// `UNEXPECTED_STATE` too.
    fn verify(&mut self, recorder: &mut Recorder, fields: Fields<'_>) {
        let start = self.timing.now();
        let status = if self.read.is_empty() {
            Status::Error
        } else if !self.has_expected_fields(fields) {
            Status::UnexpectedState
        } else {
            let mut status = Status::Ok;
            for index in 0..self.read.len() {
                let Some(field) = self.read.field(index) else {
                    break;
                };
                build_deterministic_value(
                    &self.key,
                    field.name,
                    self.constant_length(),
                    &mut self.expected,
                );
                if self.expected != field.value {
                    status = Status::UnexpectedState;
                    break;
                }
            }
            status
        };
        recorder.record(Operation::Verify, status, self.timing.since(start));
    }

    /// Whether the record read holds each field asked for exactly once
    /// and nothing else. Stores usually answer in the order asked, so the
    /// common case is one comparison per field.
    fn has_expected_fields(&self, fields: Fields<'_>) -> bool {
        let expected: &[String] = match fields {
            Fields::All => &self.workload.field_names,
            Fields::Only(names) => names,
        };
        if self.read.len() != expected.len() {
            return false;
        }
        if self.read.iter().zip(expected).all(|(f, n)| f.name == n) {
            return true;
        }
        // Out of order: with equal counts, every field read being an
        // expected one and no name read twice means none is missing.
        self.read.iter().enumerate().all(|(index, field)| {
            expected.iter().any(|n| n == field.name)
                && !self.read.iter().take(index).any(|f| f.name == field.name)
        })
    }

    fn constant_length(&self) -> usize {
        match self.field_length {
            FieldLength::Constant(n) => n,
            FieldLength::Generator(_) => 0,
        }
    }

    fn transaction_update(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        let workload = self.workload;
        if self.keys.has_names() && !workload.data_integrity {
            // The usual case, as in `transaction_read`: the key is the
            // name formatted ahead, and the values do not depend on it.
            self.keys.next_named(workload.inserts.limit().unwrap_or(0));
            self.build_values(workload.write_all_fields);
            let (key, values) = (self.keys.last_name(), &self.values);
            self.timing
                .measure(recorder, Operation::Update, intended, || {
                    db.update(&workload.table, key, values)
                });
            return;
        }
        let drawn = self.draw_key();
        if workload.data_integrity {
            // Deterministic values are built from `self.key`.
            self.keep_key(drawn);
        }
        self.build_values(workload.write_all_fields);
        let key = Self::current_key(&self.keys, drawn, &self.key);
        let values = &self.values;
        self.timing
            .measure(recorder, Operation::Update, intended, || {
                db.update(&workload.table, key, values)
            });
    }

    fn transaction_insert(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        let inserts = &self.workload.inserts;
        let number = inserts.next();
        build_key_name(
            // Acknowledged below by its counter number; the key number
            // keeps clients' inserts apart.
            self.workload
                .clients
                .key_number(self.workload.record_count, number),
            self.workload.key_order,
            self.workload.zero_padding,
            &mut self.key,
        );
        self.build_values(true);
        let (workload, key, values) = (self.workload, &self.key, &self.values);
        self.timing
            .measure(recorder, Operation::Insert, intended, || {
                db.insert(&workload.table, key, values)
            });
        // Java acknowledges whatever the outcome, so that one failed insert
        // does not freeze the readable key range.
        self.acknowledge(number);
    }

    /// Acknowledges a run-phase insert. When one slow insert holds the
    /// oldest unacknowledged number, the others can run a whole window
    /// ahead and their acknowledgements overflow it (Java throws then);
    /// such numbers are kept and retried on this thread's later inserts
    /// and at its end, so the readable limit never stays stuck.
    fn acknowledge(&mut self, number: u64) {
        let inserts = &self.workload.inserts;
        self.pending_acks.retain(|&pending| {
            matches!(
                inserts.acknowledge(pending),
                Err(GeneratorError::WindowOverflow { .. })
            )
        });
        if let Err(GeneratorError::WindowOverflow { .. }) = inserts.acknowledge(number) {
            self.pending_acks.push(number);
        }
    }

    /// Retries acknowledgements that overflowed the window; the runner
    /// calls it when the thread ends, waiting for slower threads to catch
    /// up.
    pub fn finish(&mut self) {
        let inserts = &self.workload.inserts;
        let mut rounds = 0u32;
        while !self.pending_acks.is_empty() && rounds < 10_000 {
            self.pending_acks.retain(|&pending| {
                matches!(
                    inserts.acknowledge(pending),
                    Err(GeneratorError::WindowOverflow { .. })
                )
            });
            if !self.pending_acks.is_empty() {
                std::thread::sleep(Duration::from_millis(1));
            }
            rounds += 1;
        }
    }

    fn transaction_scan(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        self.next_key();
        let length = self.scan_length.next_value(&mut self.rng) as usize;
        let workload = self.workload;
        let fields = self.scan_selection();
        self.scan.clear();
        let (key, scan) = (&self.key, &mut self.scan);
        self.timing
            .measure(recorder, Operation::Scan, intended, || {
                db.scan(
                    &ScanOp {
                        table: &workload.table,
                        start_key: key,
                        count: length,
                        fields,
                    },
                    scan,
                )
            });
        // Java master's SCAN-LATENCY-PER-RECORD: the scan's time over the
        // records it returned, whatever its status, with no status of its
        // own. Dividing nanoseconds and truncating to microseconds later
        // gives Java's figure (its microseconds divided by the count),
        // since floor(floor(t / 1000) / n) = floor(floor(t / n) / 1000).
        // A scan that returned no record has no latency per record: Java
        // divides by zero there (and its client thread ends the JVM); we
        // record nothing.
        let records = self.scan.len() as u64;
        if let Some(per_record) = self.timing.last_latency().checked_div(records) {
            recorder.record(Operation::ScanLatencyPerRecord, Status::Ok, per_record);
        }
    }

    fn transaction_read_modify_write(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        self.next_key();
        let workload = self.workload;
        let fields = self.read_modify_write_selection();
        self.build_values(workload.write_all_fields);
        let start = self.timing.now();
        self.read.clear();
        let (key, read, values) = (&self.key, &mut self.read, &self.values);
        let read_status = self
            .timing
            .measure(recorder, Operation::Read, intended, || {
                read_record(
                    db,
                    &workload.table,
                    key,
                    fields,
                    read,
                    workload.data_integrity,
                )
            });
        let update_status = self
            .timing
            .measure(recorder, Operation::Update, intended, || {
                db.update(&workload.table, key, values)
            });
        // Java measures the whole read-modify-write from the start of the
        // read to the end of the update and reports no status for it; we
        // report the first failing step's status (OK when both succeed).
        let status = if read_status.is_ok() {
            update_status
        } else {
            read_status
        };
        self.timing.record_span(
            recorder,
            Operation::ReadModifyWrite,
            status,
            intended,
            start,
        );
        if workload.data_integrity {
            self.verify(recorder, fields);
        }
    }

    fn transaction_delete(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        self.next_key();
        let (workload, key) = (self.workload, &self.key);
        self.timing
            .measure(recorder, Operation::Delete, intended, || {
                db.delete(&workload.table, key)
            });
    }
}

/// A read as the workload needs it: copied into `out` when the values are
/// kept to be verified, and otherwise looked at in place, as Java's
/// `CoreWorkload` drops the values it read unless `dataintegrity` is on.
#[inline(always)]
fn read_record(
    db: &mut dyn StoreThread,
    table: &str,
    key: &str,
    fields: Fields<'_>,
    out: &mut Record,
    keep_values: bool,
) -> Status {
    let op = ReadOp { table, key, fields };
    if keep_values {
        db.read(&op, out)
    } else {
        db.read_in_place(&op, out, &mut |_| {})
    }
}
