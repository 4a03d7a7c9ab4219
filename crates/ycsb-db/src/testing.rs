//! The store conformance kit, and the helpers store tests share.
//!
//! Enabled by the `testing` feature; bindings take it as a dev-dependency:
//!
//! ```toml
//! [dev-dependencies]
//! ycsb-db = { workspace = true, features = ["testing"] }
//! ```
//!
//! [`check_store`] runs the contract every store promises the workload
//! (read-your-writes, `NOT_FOUND`, field selections, update merging,
//! deletes, scans in key order, [`StoreThread::read_in_place`] showing what
//! `read` copies, and several [`StoreThread`]s of one store working at once
//! from their own OS threads) against a real store, and names the first rule
//! it finds broken with the key and fields involved. What a store does not
//! do (scans without an index, no deletes) is declared in its [`Contract`],
//! so that a missing capability is checked to be reported as such rather
//! than skipped.
//!
//! ```
//! use ycsb_db::testing::{assert_conforms, Contract, ReferenceStore};
//!
//! assert_conforms(&ReferenceStore::new(), &Contract::new());
//! ```
//!
//! For embedded engines (a descriptor with a `data_dir`), [`assert_survives_reopen`],
//! [`assert_refuses_foreign_directory`], [`assert_guards_its_directory`], [`assert_opens_in`],
//! [`unusable_location_errors`] and [`second_open_error`] check what their
//! directory owes users, with [`read_both_ways`], [`scan_keys`], [`gauge`],
//! [`load_property_file`] and [`locked_version`] for the rest of their tests.
//!
//! Every call writes under its own key prefix and table name, so the kit
//! can run against a server other tests share, and deletes what it wrote
//! (when the store deletes).
//!
//! [`durability`] holds both sides of the SIGKILL durability and lock tests
//! of embedded stores: the child that prints each acknowledged insert, and
//! the checks that a killed writer lost none of them.

pub mod durability;
mod options;
mod server;
mod tmpfs;

use crate::{ReadOp, ScanOp};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use crate::batch::Batch;
use crate::record::{Fields, Record, RecordView, ScanResult};
use crate::status::Status;
use crate::store::{Gauge, GaugeKind, Store, StoreError, StoreThread, ThreadContext};

mod embedded;
mod engine_checks;

pub use embedded::{
    assert_guards_its_directory, assert_opens_in, assert_refuses_foreign_directory,
    assert_survives_reopen, gauge, load_property_file, locked_version, read_both_ways, report,
    scan_keys, scan_rows, second_open_error, unusable_location_errors,
};
pub use engine_checks::{
    assert_directory_is_guarded, assert_fresh_open_refused_while_the_engine_holds,
    assert_not_a_record, assert_operations_in_key_order, assert_reports_locked_version,
    assert_second_open_refused, assert_shipped_file_opens, assert_threads_share_one_store,
    assert_unusable_locations_refused, insert_filler_records, shipped_property_file,
};
pub use options::{assert_declared_once, assert_invalid_values};
pub use server::{continue_process, free_port, is_root, stop_process, ServerProcess, ServerSpec};
pub use tmpfs::Tmpfs;

/// A record of text fields, in the given order: `record(&[("field0", "v")])`.
pub fn record(fields: &[(&str, &str)]) -> Record {
    let mut r = Record::new();
    for (name, value) in fields {
        r.push(name, value.as_bytes());
    }
    r
}

/// A record of byte-string fields, for values that are not text:
/// `record_bytes(&[("field0", &[0, 255])])`.
pub fn record_bytes(fields: &[(&str, &[u8])]) -> Record {
    let mut r = Record::new();
    for (name, value) in fields {
        r.push(name, value);
    }
    r
}

/// The fields of `record` as owned text pairs (values decoded lossily),
/// in the record's order, for assertions that print readably.
pub fn text_fields(record: &Record) -> Vec<(String, String)> {
    record
        .iter()
        .map(|f| {
            (
                f.name.to_string(),
                String::from_utf8_lossy(f.value).into_owned(),
            )
        })
        .collect()
}

/// The fields of `record` as owned pairs sorted by name: how the kit
/// compares records, since a store need not keep the order fields were
/// written in (a Redis hash does not) but must hold each name once.
pub fn sorted_fields(record: &Record) -> Vec<(String, Vec<u8>)> {
    let mut fields: Vec<_> = record
        .iter()
        .map(|f| (f.name.to_string(), f.value.to_vec()))
        .collect();
    fields.sort();
    fields
}

/// A name no other call in any process is likely to use: the process id,
/// the time and a counter. The kit's keys and tables start with one.
pub fn unique_name(label: &str) -> String {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{label}{}x{nanos:x}x{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    )
}

/// What a store promises about scans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scans {
    /// Records in key order from the start key (inclusive), at most
    /// `count`, never a deleted one.
    KeyOrder,
    /// Records from the start key (inclusive, first), at most `count`, each
    /// once, in an order of the store's own (the redis store's Java-style
    /// hash index orders by the key's hash).
    StoreOrder,
    /// Every scan answers `NOT_IMPLEMENTED` (the redis store with
    /// `redis.index=none`, the WebDAV http preset).
    NotImplemented,
}

/// What a store promises about deletes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Deletes {
    /// Deleting removes the record; deleting a missing key is `NOT_FOUND`.
    MissingNotFound,
    /// Deleting removes the record; deleting a missing key is `OK` too
    /// (stores whose engine cannot tell, as LevelDB's and RocksDB's
    /// `Delete`).
    MissingOk,
    /// Every delete answers `NOT_IMPLEMENTED`. The kit then cannot remove
    /// what it wrote.
    NotImplemented,
}

/// What a store does with an update of a key that holds no record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpdateMissing {
    /// `NOT_FOUND`, and no record appears.
    NotFound,
    /// `OK`, and a record of the updated fields appears (Redis `HSET`).
    Creates,
}

/// What a store promises: the rules [`check_store`] holds it to.
///
/// [`Contract::new`] is the full contract of an ordered store; the `with_*`
/// methods declare what a store does differently.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Contract {
    /// Scans.
    pub scans: Scans,
    /// Deletes.
    pub deletes: Deletes,
    /// An update of a missing key.
    pub update_missing: UpdateMissing,
    /// How many [`StoreThread`]s the concurrency rule runs at once, each
    /// on its own OS thread.
    pub threads: usize,
    /// The table the kit writes to; `None` (the default) makes a new one
    /// per call. Stores whose server knows only fixed tables need one.
    pub table: Option<String>,
}

impl Default for Contract {
    fn default() -> Self {
        Self::new()
    }
}

impl Contract {
    /// Key-ordered scans, deletes that report missing keys as `NOT_FOUND`,
    /// `NOT_FOUND` for an update of a missing key, four threads, a new
    /// table per call.
    pub fn new() -> Self {
        Self {
            scans: Scans::KeyOrder,
            deletes: Deletes::MissingNotFound,
            update_missing: UpdateMissing::NotFound,
            threads: 4,
            table: None,
        }
    }

    /// What scans do.
    pub fn with_scans(mut self, scans: Scans) -> Self {
        self.scans = scans;
        self
    }

    /// What deletes do.
    pub fn with_deletes(mut self, deletes: Deletes) -> Self {
        self.deletes = deletes;
        self
    }

    /// What an update of a missing key does.
    pub fn with_update_missing(mut self, update_missing: UpdateMissing) -> Self {
        self.update_missing = update_missing;
        self
    }

    /// How many threads the concurrency rule runs (at least one).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The table to write to.
    pub fn with_table(mut self, table: impl Into<String>) -> Self {
        self.table = Some(table.into());
        self
    }
}

/// A rule of the store contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// [`Store::thread`] opens a thread.
    OpenThread,
    /// An insert answers `OK`.
    Insert,
    /// A read after an insert returns exactly the fields written.
    ReadYourWrites,
    /// A read of a missing key is `NOT_FOUND` and fills nothing.
    ReadMissing,
    /// A read of a field subset returns exactly the stored fields named.
    FieldSubset,
    /// An update replaces the fields it names, adds new ones and keeps the
    /// others.
    UpdateMerges,
    /// An update of a missing key does what the contract says.
    UpdateMissing,
    /// A read after a delete is `NOT_FOUND`.
    DeleteThenRead,
    /// A delete answers as the contract says (`OK`; a missing key's status;
    /// `NOT_IMPLEMENTED`).
    Delete,
    /// `read_in_place` shows once exactly what `read` returns, with the
    /// same status.
    ReadInPlace,
    /// A scan returns records from the start key (inclusive), at most
    /// `count`, in key order, each with the fields stored.
    ScanOrder,
    /// A scan of a field subset returns just those fields of each record.
    ScanFields,
    /// A store without scans answers `NOT_IMPLEMENTED`.
    ScanNotImplemented,
    /// Several threads of one store write and read at once, each seeing
    /// the others' writes afterwards.
    Threads,
    /// Every gauge a sample reports is one [`Store::gauge_names`] lists,
    /// and no name is listed twice (each is a column of the time series).
    GaugeNames,
    /// Every gauge declares what it measures (a [`GaugeKind`] other than
    /// `Number`), the same kind in every sample: reports scale and label
    /// its chart by it.
    GaugeKinds,
    /// A batch of inserts answers `OK` for the batch and each record.
    BatchInsert,
    /// Every record of a batch of inserts reads back exactly as written.
    BatchReadYourWrites,
    /// A batched read answers each key as a read of it would (status and
    /// fields; `NOT_FOUND` and nothing for a missing key).
    BatchRead,
    /// A batch of updates applies each update in order (two of one key
    /// both apply), and a missing key's update answers what the contract
    /// says, its own status beside the others' `OK`.
    BatchUpdate,
    /// A batch of deletes removes each record and answers a missing key's
    /// delete as the contract says.
    BatchDelete,
}

impl Rule {
    /// The rule in words.
    pub fn describe(self) -> &'static str {
        match self {
            Rule::OpenThread => "Store::thread opens a thread",
            Rule::Insert => "an insert answers OK",
            Rule::ReadYourWrites => "a read returns exactly the fields written",
            Rule::ReadMissing => "a read of a missing key is NOT_FOUND and fills nothing",
            Rule::FieldSubset => "a read of a field subset returns exactly those stored fields",
            Rule::UpdateMerges => {
                "an update replaces the fields it names, adds new ones and keeps the others"
            }
            Rule::UpdateMissing => "an update of a missing key does what the contract says",
            Rule::DeleteThenRead => "a read after a delete is NOT_FOUND",
            Rule::Delete => "a delete answers what the contract says",
            Rule::ReadInPlace => "read_in_place shows once exactly what read returns",
            Rule::ScanOrder => {
                "a scan returns records from the start key (inclusive), at most count, \
                 in the promised order, with their stored fields"
            }
            Rule::ScanFields => "a scan of a field subset returns just those fields",
            Rule::ScanNotImplemented => "a store without scans answers NOT_IMPLEMENTED",
            Rule::Threads => "threads of one store see each other's writes",
            Rule::GaugeNames => "every gauge sampled is listed, once, by Store::gauge_names",
            Rule::GaugeKinds => "every gauge declares its kind, the same in every sample",
            Rule::BatchInsert => "a batch of inserts answers OK for the batch and each record",
            Rule::BatchReadYourWrites => "every record of a batch reads back as written",
            Rule::BatchRead => "a batched read answers each key as a read of it would",
            Rule::BatchUpdate => {
                "a batch of updates applies each in order, a missing key answered per record"
            }
            Rule::BatchDelete => {
                "a batch of deletes removes each record, a missing key answered per record"
            }
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// A broken rule: which, on what key, and what the store did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractViolation {
    /// The rule.
    pub rule: Rule,
    /// The key (or scan start key) of the operation that showed it.
    pub key: String,
    /// What was asked and what came back.
    pub detail: String,
}

impl fmt::Display for ContractViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "store contract broken: {} (key {:?}): {}",
            self.rule, self.key, self.detail
        )
    }
}

impl std::error::Error for ContractViolation {}

/// Runs [`check_store`] and panics with the violation, for tests.
///
/// # Panics
///
/// When `store` breaks a rule of `contract`.
#[track_caller]
pub fn assert_conforms(store: &dyn Store, contract: &Contract) {
    if let Err(violation) = check_store(store, contract) {
        panic!("{violation}");
    }
}

/// Checks that `store` keeps `contract`, returning the first rule broken.
///
/// It writes a few records under a new key prefix (and a new table unless
/// the contract names one) and deletes them afterwards when the store
/// deletes, whether or not a rule broke.
///
/// # Errors
///
/// The first [`ContractViolation`] found.
pub fn check_store(store: &dyn Store, contract: &Contract) -> Result<(), ContractViolation> {
    let prefix = unique_name("ck");
    let table = contract
        .table
        .clone()
        .unwrap_or_else(|| unique_name("table"));
    let mut thread = store
        .thread(ThreadContext::new(0, 1))
        .map_err(|e| violation(Rule::OpenThread, "", format!("thread 0 of 1: {e}")))?;
    let mut kit = Kit {
        thread: &mut *thread,
        contract,
        table: &table,
        prefix: &prefix,
        model: BTreeMap::new(),
        written: Vec::new(),
    };
    let mut result = kit.single_thread();
    let mut written = std::mem::take(&mut kit.written);
    if result.is_ok() {
        result = check_threads(store, contract, &table, &prefix, &mut written);
    }
    if result.is_ok() {
        result = check_gauge_names(store);
    }
    if contract.deletes != Deletes::NotImplemented {
        for key in &written {
            let _ = thread.delete(&table, key);
        }
    }
    let _ = thread.cleanup();
    result
}

/// [`Rule::GaugeNames`], over two samples taken after the kit's writes.
fn check_gauge_names(store: &dyn Store) -> Result<(), ContractViolation> {
    let names = store.gauge_names();
    if let Some(twice) = names
        .iter()
        .enumerate()
        .find_map(|(i, n)| names[..i].contains(n).then_some(n))
    {
        return Err(violation(
            Rule::GaugeNames,
            "",
            format!("gauge_names lists {twice} twice: {names:?}"),
        ));
    }
    let mut sample = Vec::new();
    let mut kinds: Vec<(String, GaugeKind)> = Vec::new();
    for _ in 0..2 {
        sample.clear();
        store.gauges(&mut sample);
        if let Some(unlisted) = sample.iter().find(|g| !names.contains(&g.name)) {
            return Err(violation(
                Rule::GaugeNames,
                "",
                format!(
                    "a sample reports {}, which gauge_names does not list: {names:?}",
                    unlisted.name
                ),
            ));
        }
        for gauge in &sample {
            check_gauge_kind(gauge, &mut kinds)?;
        }
    }
    Ok(())
}

/// [`Rule::GaugeKinds`] for one sampled gauge, against the kinds earlier
/// samples declared.
fn check_gauge_kind(
    gauge: &Gauge,
    kinds: &mut Vec<(String, GaugeKind)>,
) -> Result<(), ContractViolation> {
    if gauge.kind == GaugeKind::Number {
        return Err(violation(
            Rule::GaugeKinds,
            "",
            format!(
                "{} declares no kind (bytes, count, flag, ratio, seconds, ...)",
                gauge.name
            ),
        ));
    }
    match kinds.iter().find(|(name, _)| *name == gauge.name) {
        Some((_, kind)) if *kind != gauge.kind => Err(violation(
            Rule::GaugeKinds,
            "",
            format!(
                "{} is reported as {} and as {}",
                gauge.name,
                kind.describe(),
                gauge.kind.describe()
            ),
        )),
        Some(_) => Ok(()),
        None => {
            kinds.push((gauge.name.clone(), gauge.kind));
            Ok(())
        }
    }
}

fn violation(rule: Rule, key: &str, detail: String) -> ContractViolation {
    ContractViolation {
        rule,
        key: key.to_string(),
        detail,
    }
}

/// A record for messages: `{field0="v", field1="\xff"}`, fields sorted.
/// Long values are cut, with their length, so that a message stays
/// readable and values differing only in length still differ.
fn show(fields: &[(String, Vec<u8>)]) -> String {
    const SHOWN: usize = 40;
    let shown: Vec<String> = fields
        .iter()
        .map(|(name, value)| {
            if value.len() <= SHOWN {
                format!("{name}=\"{}\"", value.escape_ascii())
            } else {
                let (head, tail) = (&value[..SHOWN / 2], &value[value.len() - SHOWN / 2..]);
                format!(
                    "{name}=\"{}...{}\" ({} bytes)",
                    head.escape_ascii(),
                    tail.escape_ascii(),
                    value.len()
                )
            }
        })
        .collect();
    format!("{{{}}}", shown.join(", "))
}

fn show_record(record: &Record) -> String {
    show(&sorted_fields(record))
}

/// What one `read_in_place` showed.
#[derive(Debug, PartialEq, Eq)]
struct InPlace {
    status: Status,
    visits: usize,
    fields: Vec<(String, Vec<u8>)>,
}

/// The single-thread rules, with what the store should now hold.
struct Kit<'k, 's> {
    thread: &'k mut (dyn StoreThread + 's),
    contract: &'k Contract,
    table: &'k str,
    prefix: &'k str,
    model: BTreeMap<String, Record>,
    written: Vec<String>,
}

const RECORDS: usize = 8;

impl Kit<'_, '_> {
    fn key(&self, i: usize) -> String {
        format!("{}k{i:02}", self.prefix)
    }

    /// Record `i`: text fields and one of every byte value, so that an
    /// encoding that loses bytes shows.
    fn value(&self, i: usize) -> Record {
        let all_bytes: Vec<u8> = (0..=255u8).rev().collect();
        let mut r = Record::new();
        r.push("field0", format!("{}-{i}-0", self.prefix).as_bytes());
        r.push("field1", format!("value {i} one").as_bytes());
        r.push("field2", &all_bytes[i..]);
        r.push("field3", format!("{i}").repeat(i + 1).as_bytes());
        r
    }

    fn single_thread(&mut self) -> Result<(), ContractViolation> {
        self.missing_reads(&self.key(99))?;
        for i in 0..RECORDS {
            let key = self.key(i);
            let value = self.value(i);
            let status = self.thread.insert(self.table, &key, &value);
            self.written.push(key.clone());
            if status != Status::Ok {
                return Err(violation(
                    Rule::Insert,
                    &key,
                    format!("insert {} answered {status}", show_record(&value)),
                ));
            }
            self.model.insert(key, value);
        }
        for i in 0..RECORDS {
            self.reads(&self.key(i))?;
        }
        self.updates()?;
        self.scans()?;
        self.deletes()?;
        self.batches()
    }

    /// The batch rules: inserts, reads, updates and deletes of several
    /// records in one call each (`batch.size`), with a missing key among
    /// them where the store answers it per record.
    fn batches(&mut self) -> Result<(), ContractViolation> {
        let numbers = 20..25;
        let mut batch = Batch::new();
        for i in numbers.clone() {
            let key = self.key(i);
            batch.push_swap(&key, &mut self.value(i));
            self.written.push(key);
        }
        let mut statuses = vec![Status::Error; batch.len()];
        let status = self.thread.insert_batch(self.table, &batch, &mut statuses);
        if status != Status::Ok || statuses.iter().any(|s| *s != Status::Ok) {
            return Err(violation(
                Rule::BatchInsert,
                batch.key(0),
                format!(
                    "insert of {} records answered {status}, per record {statuses:?}",
                    batch.len()
                ),
            ));
        }
        for (key, value) in batch.iter() {
            self.model.insert(key.to_string(), value.clone());
        }
        for i in numbers {
            self.reads(&self.key(i)).map_err(|mut v| {
                v.rule = Rule::BatchReadYourWrites;
                v
            })?;
        }
        self.batch_reads(&[self.key(20), self.key(99), self.key(22)])?;
        self.batch_updates()?;
        self.batch_deletes()
    }

    /// One batched read of `keys` against the model, all fields and one.
    fn batch_reads(&mut self, keys: &[String]) -> Result<(), ContractViolation> {
        let mut batch = Batch::new();
        for key in keys {
            batch.push(key);
        }
        let field1 = vec!["field1".to_string()];
        for fields in [Fields::All, Fields::Only(&field1)] {
            let mut out = vec![Record::new(); keys.len()];
            let mut statuses = vec![Status::Error; keys.len()];
            let status =
                self.thread
                    .read_batch(self.table, &batch, fields, &mut out, &mut statuses);
            let mut expected_statuses = Vec::new();
            for ((key, got), got_status) in keys.iter().zip(&out).zip(&statuses) {
                let (expected_status, expected) = match self.model.get(key) {
                    Some(stored) => {
                        let mut expected = stored.clone();
                        expected.retain(fields);
                        (Status::Ok, expected)
                    }
                    None => (Status::NotFound, Record::new()),
                };
                expected_statuses.push(expected_status);
                if *got_status != expected_status || sorted_fields(got) != sorted_fields(&expected)
                {
                    return Err(violation(
                        Rule::BatchRead,
                        key,
                        format!(
                            "batched read of {keys:?} with {fields:?}: this key answered \
                             {got_status} with {}, expected {expected_status} with {}",
                            show_record(got),
                            show_record(&expected)
                        ),
                    ));
                }
            }
            let expected = crate::batch_status(&expected_statuses);
            if status != expected {
                return Err(violation(
                    Rule::BatchRead,
                    &keys[0],
                    format!(
                        "batched read of {keys:?} answered {status}, its records \
                         {statuses:?}: expected {expected}"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A batch of updates: two of one key, a missing key between.
    fn batch_updates(&mut self) -> Result<(), ContractViolation> {
        let (first, missing, other) = (self.key(20), self.key(97), self.key(21));
        let changes = [
            (first.clone(), record(&[("field1", "batched one")])),
            // Two fields: a record the update creates (UpdateMissing::Creates)
            // is read back by field subsets of distinct names.
            (
                missing.clone(),
                record(&[("field1", "batched missing"), ("field2", "too")]),
            ),
            (other.clone(), record(&[("field0", "batched other")])),
            (first.clone(), record(&[("field4", "batched two")])),
        ];
        let mut batch = Batch::new();
        for (key, change) in &changes {
            batch.push(key).merge_from(change);
        }
        let mut statuses = vec![Status::Error; batch.len()];
        let status = self.thread.update_batch(self.table, &batch, &mut statuses);
        let missing_status = match self.contract.update_missing {
            UpdateMissing::NotFound => Status::NotFound,
            UpdateMissing::Creates => {
                self.written.push(missing.clone());
                Status::Ok
            }
        };
        let expected = [Status::Ok, missing_status, Status::Ok, Status::Ok];
        if statuses != expected || status != crate::batch_status(&expected) {
            return Err(violation(
                Rule::BatchUpdate,
                &missing,
                format!(
                    "a batch of updates of {first}, {missing} (missing), {other}, {first} \
                     answered {status}, per record {statuses:?}; expected {expected:?}"
                ),
            ));
        }
        for (key, change) in &changes {
            match self.model.get_mut(key) {
                Some(stored) => stored.merge_from(change),
                None if missing_status == Status::Ok => {
                    self.model.insert(key.clone(), change.clone());
                }
                None => {}
            }
        }
        for key in [&first, &other, &missing] {
            self.reads(key).map_err(|mut v| {
                v.rule = Rule::BatchUpdate;
                v
            })?;
        }
        Ok(())
    }

    /// A batch of deletes: two stored records and a missing key.
    fn batch_deletes(&mut self) -> Result<(), ContractViolation> {
        let keys = [self.key(23), self.key(96), self.key(24)];
        let mut batch = Batch::new();
        for key in &keys {
            batch.push(key);
        }
        let mut statuses = vec![Status::Error; batch.len()];
        let status = self.thread.delete_batch(self.table, &batch, &mut statuses);
        let expected = match self.contract.deletes {
            Deletes::NotImplemented => [Status::NotImplemented; 3],
            Deletes::MissingNotFound => [Status::Ok, Status::NotFound, Status::Ok],
            Deletes::MissingOk => [Status::Ok; 3],
        };
        if statuses != expected || status != crate::batch_status(&expected) {
            return Err(violation(
                Rule::BatchDelete,
                &keys[1],
                format!(
                    "a batch of deletes of {keys:?} (the second missing) answered {status}, \
                     per record {statuses:?}; expected {expected:?}"
                ),
            ));
        }
        if self.contract.deletes != Deletes::NotImplemented {
            self.model.remove(&keys[0]);
            self.model.remove(&keys[2]);
        }
        for key in &keys {
            self.reads(key).map_err(|mut v| {
                v.rule = Rule::BatchDelete;
                v
            })?;
        }
        Ok(())
    }

    /// Reads `key` every way (all fields, subsets, in place) and compares
    /// with the model.
    fn reads(&mut self, key: &str) -> Result<(), ContractViolation> {
        let Some(stored) = self.model.get(key).cloned() else {
            return self.missing_reads(key);
        };
        self.read_matches(key, Fields::All, &stored, Rule::ReadYourWrites)?;
        // No selection names only fields the record lacks: the workload
        // never asks for one, and a store may not tell it from a missing
        // key (Redis `HMGET` answers nils for both).
        let stored_names: Vec<&str> = stored.iter().map(|f| f.name).collect();
        let (first, middle, last) = (
            stored_names[0],
            stored_names[stored_names.len() / 2],
            stored_names[stored_names.len() - 1],
        );
        let selections = [vec![middle], vec![last, first], vec![first, "nofield"]];
        for names in selections {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            self.read_matches(key, Fields::Only(&names), &stored, Rule::FieldSubset)?;
        }
        Ok(())
    }

    /// Reads `key` with `fields`, copied and in place, and compares with
    /// the fields of `stored` that `fields` selects; a difference breaks
    /// `rule`.
    fn read_matches(
        &mut self,
        key: &str,
        fields: Fields<'_>,
        stored: &Record,
        rule: Rule,
    ) -> Result<(), ContractViolation> {
        let got = self.read(key, fields, rule)?;
        let mut expected = stored.clone();
        expected.retain(fields);
        if sorted_fields(&got) != sorted_fields(&expected) {
            let selected = match fields {
                Fields::All => "all fields".to_string(),
                Fields::Only(names) => format!("fields {names:?}"),
            };
            return Err(violation(
                rule,
                key,
                format!(
                    "read of {selected} returned {}, expected {} of stored {}",
                    show_record(&got),
                    show_record(&expected),
                    show_record(stored)
                ),
            ));
        }
        self.in_place_matches(key, fields)
    }

    fn read(
        &mut self,
        key: &str,
        fields: Fields<'_>,
        rule: Rule,
    ) -> Result<Record, ContractViolation> {
        let mut out = Record::new();
        let status = self
            .thread
            .read(&ReadOp::new(self.table, key, fields), &mut out);
        if status != Status::Ok {
            return Err(violation(
                rule,
                key,
                format!("read of {fields:?} answered {status}"),
            ));
        }
        Ok(out)
    }

    fn missing_reads(&mut self, key: &str) -> Result<(), ContractViolation> {
        let only = vec!["field0".to_string()];
        for fields in [Fields::All, Fields::Only(&only)] {
            let mut out = Record::new();
            let status = self
                .thread
                .read(&ReadOp::new(self.table, key, fields), &mut out);
            if status != Status::NotFound || !out.is_empty() {
                return Err(violation(
                    Rule::ReadMissing,
                    key,
                    format!(
                        "read of {fields:?} answered {status} with {}",
                        show_record(&out)
                    ),
                ));
            }
            self.in_place_matches(key, fields)?;
        }
        Ok(())
    }

    /// `read_in_place` against `read`, both called now.
    fn in_place_matches(&mut self, key: &str, fields: Fields<'_>) -> Result<(), ContractViolation> {
        let mut out = Record::new();
        let status = self
            .thread
            .read(&ReadOp::new(self.table, key, fields), &mut out);
        let read = InPlace {
            status,
            visits: usize::from(status.is_ok()),
            fields: if status.is_ok() {
                sorted_fields(&out)
            } else {
                Vec::new()
            },
        };
        let mut visits = 0;
        let mut seen = Record::new();
        let mut scratch = Record::new();
        let status = self.thread.read_in_place(
            &ReadOp::new(self.table, key, fields),
            &mut scratch,
            &mut |view: RecordView<'_>| {
                visits += 1;
                view.copy_to(&mut seen);
            },
        );
        let in_place = InPlace {
            status,
            visits,
            fields: sorted_fields(&seen),
        };
        if in_place != read {
            return Err(violation(
                Rule::ReadInPlace,
                key,
                format!(
                    "fields {fields:?}: read answered {} with {}, read_in_place answered {} \
                     and showed {} {} time(s)",
                    read.status,
                    show(&read.fields),
                    in_place.status,
                    show(&in_place.fields),
                    in_place.visits
                ),
            ));
        }
        Ok(())
    }

    fn updates(&mut self) -> Result<(), ContractViolation> {
        let key = self.key(1);
        let change = record(&[("field1", "changed"), ("field4", "added")]);
        let status = self.thread.update(self.table, &key, &change);
        if status != Status::Ok {
            return Err(violation(
                Rule::UpdateMerges,
                &key,
                format!("update with {} answered {status}", show_record(&change)),
            ));
        }
        let before = self.model[&key].clone();
        self.model
            .get_mut(&key)
            .expect("inserted")
            .merge_from(&change);
        let got = self.read(&key, Fields::All, Rule::UpdateMerges)?;
        if sorted_fields(&got) != sorted_fields(&self.model[&key]) {
            return Err(violation(
                Rule::UpdateMerges,
                &key,
                format!(
                    "record {} updated with {} reads back as {}, expected {}",
                    show_record(&before),
                    show_record(&change),
                    show_record(&got),
                    show_record(&self.model[&key])
                ),
            ));
        }
        self.reads(&key)?;

        let missing = self.key(98);
        let status = self.thread.update(self.table, &missing, &change);
        let expected = match self.contract.update_missing {
            UpdateMissing::NotFound => Status::NotFound,
            UpdateMissing::Creates => {
                self.written.push(missing.clone());
                self.model.insert(missing.clone(), change.clone());
                Status::Ok
            }
        };
        if status != expected {
            return Err(violation(
                Rule::UpdateMissing,
                &missing,
                format!("update of a missing key answered {status}, the contract says {expected}"),
            ));
        }
        self.reads(&missing).map_err(|mut v| {
            v.rule = Rule::UpdateMissing;
            v.detail = format!(
                "after an update of the missing key that answered {status}: {}",
                v.detail
            );
            v
        })?;
        // Scans below expect only the kit's numbered records.
        if self.contract.update_missing == UpdateMissing::Creates
            && self.contract.deletes != Deletes::NotImplemented
        {
            let _ = self.thread.delete(self.table, &missing);
            self.model.remove(&missing);
        }
        Ok(())
    }

    fn deletes(&mut self) -> Result<(), ContractViolation> {
        let key = self.key(0);
        let status = self.thread.delete(self.table, &key);
        if self.contract.deletes == Deletes::NotImplemented {
            if status != Status::NotImplemented {
                return Err(violation(
                    Rule::Delete,
                    &key,
                    format!("delete answered {status}, the contract says NOT_IMPLEMENTED"),
                ));
            }
            return self.reads(&key);
        }
        if status != Status::Ok {
            return Err(violation(
                Rule::Delete,
                &key,
                format!("delete of a stored record answered {status}"),
            ));
        }
        self.model.remove(&key);
        self.missing_reads(&key).map_err(|mut v| {
            v.rule = Rule::DeleteThenRead;
            v
        })?;
        let again = self.thread.delete(self.table, &key);
        let expected = match self.contract.deletes {
            Deletes::MissingNotFound => Status::NotFound,
            _ => Status::Ok,
        };
        if again != expected {
            return Err(violation(
                Rule::Delete,
                &key,
                format!("delete of a deleted key answered {again}, the contract says {expected}"),
            ));
        }
        if self.contract.scans != Scans::NotImplemented {
            // The deleted record must not come back in a scan.
            self.scan_matches(&key, 3, Fields::All)?;
        }
        Ok(())
    }

    fn scans(&mut self) -> Result<(), ContractViolation> {
        let start = self.key(2);
        if self.contract.scans == Scans::NotImplemented {
            let mut out = ScanResult::new();
            let status = self
                .thread
                .scan(&ScanOp::new(self.table, &start, 4, Fields::All), &mut out);
            if status != Status::NotImplemented || !out.is_empty() {
                return Err(violation(
                    Rule::ScanNotImplemented,
                    &start,
                    format!("scan answered {status} with {} rows", out.len()),
                ));
            }
            return Ok(());
        }
        let field0 = vec!["field0".to_string()];
        let pair = vec![
            "field3".to_string(),
            "field1".to_string(),
            "nofield".to_string(),
        ];
        self.scan_matches(&start, 4, Fields::All)?;
        self.scan_matches(&start, 1, Fields::All)?;
        self.scan_matches(&self.key(1), 3, Fields::Only(&field0))?;
        self.scan_matches(&self.key(3), 3, Fields::Only(&pair))?;
        // Past the kit's last record: other keys of a shared store may follow.
        self.scan_matches(&self.key(RECORDS - 2), 5, Fields::All)?;
        if self.contract.scans == Scans::KeyOrder {
            // A start key that holds no record: the scan begins after it.
            self.scan_matches(&format!("{}a", self.key(3)), 2, Fields::All)?;
        }
        Ok(())
    }

    /// One scan against the model. Rows outside the kit's prefix may come
    /// from other users of a shared store; only their order is checked.
    fn scan_matches(
        &mut self,
        start: &str,
        count: usize,
        fields: Fields<'_>,
    ) -> Result<(), ContractViolation> {
        let mut out = ScanResult::new();
        let status = self
            .thread
            .scan(&ScanOp::new(self.table, start, count, fields), &mut out);
        let keys: Vec<&str> = out.iter().map(|(k, _)| k).collect();
        let asked = format!(
            "scan of {count} from {start:?} with {fields:?} answered {status} with keys {keys:?}"
        );
        let broken =
            |why: String| Err(violation(Rule::ScanOrder, start, format!("{asked}: {why}")));
        if status != Status::Ok {
            return broken("expected OK".into());
        }
        if out.len() > count {
            return broken(format!("more than {count} rows"));
        }
        let mut unique: Vec<&str> = keys.clone();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() != keys.len() {
            return broken("a key appears twice".into());
        }
        match self.contract.scans {
            Scans::KeyOrder => {
                let expected: Vec<&str> = self
                    .model
                    .range::<str, _>((std::ops::Bound::Included(start), std::ops::Bound::Unbounded))
                    .map(|(k, _)| k.as_str())
                    .take(count)
                    .collect();
                if !keys.windows(2).all(|w| w[0] < w[1]) || keys.first().is_some_and(|k| *k < start)
                {
                    return broken("not in key order from the start key".into());
                }
                // The kit's keys are contiguous among all keys (one unique
                // prefix), so they lead the result and none is skipped.
                if keys.len() < expected.len() || keys[..expected.len()] != expected[..] {
                    return broken(format!("expected keys {expected:?} first"));
                }
            }
            Scans::StoreOrder => {
                if self.model.contains_key(start) && keys.first() != Some(&start) {
                    return broken("the start key is not the first row".into());
                }
            }
            Scans::NotImplemented => unreachable!("checked by the caller"),
        }
        for (key, got) in out.iter() {
            if !key.starts_with(self.prefix) {
                continue;
            }
            let Some(stored) = self.model.get(key) else {
                return broken(format!("{key:?} holds no record"));
            };
            let mut expected = stored.clone();
            expected.retain(fields);
            if sorted_fields(got) != sorted_fields(&expected) {
                let rule = if fields == Fields::All {
                    Rule::ScanOrder
                } else {
                    Rule::ScanFields
                };
                return Err(violation(
                    rule,
                    key,
                    format!(
                        "{asked}: row {key:?} holds {}, expected {} of stored {}",
                        show_record(got),
                        show_record(&expected),
                        show_record(stored)
                    ),
                ));
            }
        }
        Ok(())
    }
}

const PER_THREAD: usize = 5;

/// The concurrency rule: `contract.threads` threads, each with its own
/// [`StoreThread`] opened on its OS thread, insert at once, wait for each
/// other, then read every thread's records.
fn check_threads(
    store: &dyn Store,
    contract: &Contract,
    table: &str,
    prefix: &str,
    written: &mut Vec<String>,
) -> Result<(), ContractViolation> {
    let n = contract.threads;
    let key = |thread: usize, i: usize| format!("{prefix}t{thread}-{i}");
    let value = |thread: usize, i: usize| {
        record(&[
            ("field0", &format!("thread {thread} record {i}")),
            ("field1", &"x".repeat(thread + i)),
        ])
    };
    for t in 0..n {
        written.extend((0..PER_THREAD).map(|i| key(t, i)));
    }
    // Every thread reaches the barrier even after a failure, so that none
    // waits forever for one that gave up.
    let barrier = Barrier::new(n);
    let results: Vec<Result<(), ContractViolation>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|id| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let mut thread = match store.thread(ThreadContext::new(id, n)) {
                        Ok(t) => t,
                        Err(e) => {
                            barrier.wait();
                            return Err(violation(Rule::OpenThread, "", format!("thread {id} of {n}: {e}")));
                        }
                    };
                    let mut result = Ok(());
                    for i in 0..PER_THREAD {
                        let status = thread.insert(table, &key(id, i), &value(id, i));
                        if status != Status::Ok {
                            result = Err(violation(Rule::Threads, &key(id, i), format!("thread {id} of {n}: insert answered {status}")));
                            break;
                        }
                    }
                    barrier.wait();
                    result?;
                    let mut out = Record::new();
                    for other in (0..n).map(|o| (id + o) % n) {
                        for i in 0..PER_THREAD {
                            out.clear();
                            let status = thread.read(&ReadOp::new(table, &key(other, i), Fields::All), &mut out);
                            let expected = value(other, i);
                            if status != Status::Ok || sorted_fields(&out) != sorted_fields(&expected) {
                                return Err(violation(
                                    Rule::Threads,
                                    &key(other, i),
                                    format!(
                                        "thread {id} of {n} read thread {other}'s record: {status} with {}, expected {}",
                                        show_record(&out),
                                        show_record(&expected)
                                    ),
                                ));
                            }
                        }
                    }
                    let _ = thread.cleanup();
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(violation(Rule::Threads, "", "a thread panicked".into()))
                })
            })
            .collect()
    });
    results.into_iter().collect()
}

/// What a [`ReferenceStore`] fault hook is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Op {
    /// `read` or `read_in_place`.
    Read,
    /// `scan` (the key is the start key).
    Scan,
    /// `update`.
    Update,
    /// `insert`.
    Insert,
    /// `delete`.
    Delete,
}

type Fault = dyn Fn(Op, &str, &str) -> Option<Status> + Send + Sync;

/// A correct store held in memory: an ordered map per table behind one
/// lock. The kit's reference (it keeps the contract of [`Contract::new`]),
/// and a back end for tests that need a store and no engine, such as a
/// server's. A fault hook ([`ReferenceStore::with_fault`]) makes chosen
/// operations fail.
#[derive(Clone, Default)]
pub struct ReferenceStore {
    data: Arc<Mutex<BTreeMap<(String, String), Record>>>,
    threads: Arc<AtomicUsize>,
    fault: Option<Arc<Fault>>,
}

impl fmt::Debug for ReferenceStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReferenceStore")
            .field("records", &self.data.lock().map(|d| d.len()).unwrap_or(0))
            .field("threads", &self.threads())
            .finish_non_exhaustive()
    }
}

impl ReferenceStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Consults `fault` before every operation, with the operation, the
    /// table and the key: `Some(status)` answers that status instead.
    /// A hook may panic, as a buggy store would.
    pub fn with_fault(
        mut self,
        fault: impl Fn(Op, &str, &str) -> Option<Status> + Send + Sync + 'static,
    ) -> Self {
        self.fault = Some(Arc::new(fault));
        self
    }

    /// The record at `key` in `table`, if any.
    pub fn get(&self, table: &str, key: &str) -> Option<Record> {
        self.lock().get(&id(table, key)).cloned()
    }

    /// How many records `table` holds.
    pub fn table_len(&self, table: &str) -> usize {
        self.lock().keys().filter(|(t, _)| t == table).count()
    }

    /// How many threads [`Store::thread`] has opened.
    pub fn threads(&self) -> usize {
        self.threads.load(Ordering::SeqCst)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Record>> {
        // A fault hook that panics poisons nothing the map relies on.
        self.data.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fault(&self, op: Op, table: &str, key: &str) -> Option<Status> {
        self.fault.as_ref().and_then(|f| f(op, table, key))
    }
}

fn id(table: &str, key: &str) -> (String, String) {
    (table.to_string(), key.to_string())
}

impl Store for ReferenceStore {
    fn thread(&self, _: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        self.threads.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(ReferenceThread(self)))
    }
}

/// A thread of a [`ReferenceStore`].
struct ReferenceThread<'a>(&'a ReferenceStore);

impl StoreThread for ReferenceThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        if let Some(status) = self.0.fault(Op::Read, op.table, op.key) {
            return status;
        }
        match self.0.lock().get(&id(op.table, op.key)) {
            Some(stored) => {
                for field in stored.iter().filter(|f| op.fields.contains(f.name)) {
                    out.push(field.name, field.value);
                }
                Status::Ok
            }
            None => Status::NotFound,
        }
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        if let Some(status) = self.0.fault(Op::Scan, op.table, op.start_key) {
            return status;
        }
        let data = self.0.lock();
        for ((_, key), stored) in data
            .range(id(op.table, op.start_key)..)
            .take_while(|((t, _), _)| t == op.table)
            .take(op.count)
        {
            let row = out.push_row(key);
            for field in stored.iter().filter(|f| op.fields.contains(f.name)) {
                row.push(field.name, field.value);
            }
        }
        Status::Ok
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if let Some(status) = self.0.fault(Op::Update, table, key) {
            return status;
        }
        match self.0.lock().get_mut(&id(table, key)) {
            Some(stored) => {
                stored.merge_from(values);
                Status::Ok
            }
            None => Status::NotFound,
        }
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if let Some(status) = self.0.fault(Op::Insert, table, key) {
            return status;
        }
        self.0.lock().insert(id(table, key), values.clone());
        Status::Ok
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        if let Some(status) = self.0.fault(Op::Delete, table, key) {
            return status;
        }
        match self.0.lock().remove(&id(table, key)) {
            Some(_) => Status::Ok,
            None => Status::NotFound,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Visit;

    #[test]
    fn the_reference_store_conforms_and_is_left_empty() {
        let store = ReferenceStore::new();
        for threads in [1, 4] {
            check_store(&store, &Contract::new().with_threads(threads)).unwrap();
        }
        assert_eq!(store.lock().len(), 0, "the kit deletes what it wrote");
        // One fixed table, twice: the key prefixes keep calls apart.
        let contract = Contract::new().with_table("usertable");
        check_store(&store, &contract).unwrap();
        check_store(&store, &contract).unwrap();
    }

    /// A bug a store could have.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Bug {
        UpdateReplaces,
        UpdateMissingCreates,
        ReadIgnoresSubset,
        ReadMissingIsOk,
        ReadDropsByte,
        InPlaceIgnoresSubset,
        InPlaceShowsTwice,
        ScanReversed,
        ScanExclusive,
        ScanOneTooMany,
        ScanIgnoresSubset,
        ScanNotImplemented,
        DeleteKeeps,
        DeleteMissingIsOk,
        ThreadsIsolated,
        GaugeUnlisted,
        GaugeListedTwice,
        GaugeWithoutKind,
        GaugeChangesKind,
        /// A batch of inserts that loses its last record.
        BatchInsertDropsLast,
        /// A batched read answering OK for a missing key.
        BatchReadMissingIsOk,
        /// A batch of updates that reads every record before writing any
        /// (a naive write batch: the second update of a key undoes the
        /// first).
        BatchUpdateReadsFirst,
        /// A batch of deletes answering OK for every key.
        BatchDeleteMissingIsOk,
    }

    /// The reference store with one bug.
    struct Broken(ReferenceStore, Bug);

    struct BrokenThread<'a> {
        inner: Box<dyn StoreThread + 'a>,
        bug: Bug,
        id: usize,
    }

    impl Store for Broken {
        fn thread(&self, context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
            Ok(Box::new(BrokenThread {
                inner: self.0.thread(context)?,
                bug: self.1,
                id: context.thread_id,
            }))
        }

        fn gauges(&self, out: &mut Vec<Gauge>) {
            let kind = if self.1 == Bug::GaugeWithoutKind {
                GaugeKind::Number
            } else {
                GaugeKind::Count
            };
            out.push(Gauge::new("broken.listed", kind, 1.0));
            if self.1 == Bug::GaugeUnlisted {
                out.push(Gauge::count("broken.unlisted", 2.0));
            }
            if self.1 == Bug::GaugeChangesKind {
                out.push(Gauge::bytes("broken.listed", 1.0));
            }
        }

        fn gauge_names(&self) -> Vec<String> {
            let mut names = vec!["broken.listed".to_string()];
            if self.1 == Bug::GaugeListedTwice {
                names.push("broken.listed".to_string());
            }
            names
        }
    }

    impl BrokenThread<'_> {
        /// Each thread but the first its own key space, for the isolation
        /// bug (the first thread's scans then still work).
        fn key(&self, key: &str) -> String {
            if self.bug == Bug::ThreadsIsolated && self.id > 0 {
                format!("{}/{key}", self.id)
            } else {
                key.to_string()
            }
        }
    }

    impl StoreThread for BrokenThread<'_> {
        fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
            let key = self.key(op.key);
            let fields = match self.bug {
                Bug::ReadIgnoresSubset => Fields::All,
                _ => op.fields,
            };
            let status = self.inner.read(
                &ReadOp {
                    key: &key,
                    fields,
                    ..*op
                },
                out,
            );
            match (self.bug, status) {
                (Bug::ReadMissingIsOk, Status::NotFound) => Status::Ok,
                (Bug::ReadDropsByte, Status::Ok) => {
                    let mut cut = Record::new();
                    for f in out.iter() {
                        cut.push(f.name, &f.value[..f.value.len().saturating_sub(1)]);
                    }
                    *out = cut;
                    status
                }
                _ => status,
            }
        }

        fn read_in_place(
            &mut self,
            op: &ReadOp<'_>,
            buf: &mut Record,
            visit: &mut Visit,
        ) -> Status {
            let (fields, times) = match self.bug {
                Bug::InPlaceIgnoresSubset => (Fields::All, 1),
                Bug::InPlaceShowsTwice => (op.fields, 2),
                _ => return crate::read_in_place_by_copy(buf, visit, |out| self.read(op, out)),
            };
            let key = self.key(op.key);
            let status = self.inner.read(
                &ReadOp {
                    key: &key,
                    fields,
                    ..*op
                },
                buf,
            );
            if status.is_ok() {
                for _ in 0..times {
                    visit(RecordView::from(&*buf));
                }
            }
            status
        }

        fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
            let (count, fields) = match self.bug {
                Bug::ScanNotImplemented => return Status::NotImplemented,
                Bug::ScanOneTooMany | Bug::ScanExclusive => (op.count + 1, op.fields),
                Bug::ScanIgnoresSubset => (op.count, Fields::All),
                _ => (op.count, op.fields),
            };
            let mut rows = ScanResult::new();
            let status = self.inner.scan(
                &ScanOp {
                    count,
                    fields,
                    ..*op
                },
                &mut rows,
            );
            let mut rows: Vec<_> = rows.iter().collect();
            match self.bug {
                Bug::ScanReversed => rows.reverse(),
                Bug::ScanExclusive if rows.first().is_some_and(|(k, _)| *k == op.start_key) => {
                    rows.remove(0);
                }
                Bug::ScanExclusive => {
                    rows.pop();
                }
                _ => {}
            }
            for (key, record) in rows {
                out.push_row(key).clone_from(record);
            }
            status
        }

        fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
            let key = self.key(key);
            match self.bug {
                Bug::UpdateReplaces => {
                    let _ = self.inner.delete(table, &key);
                    self.inner.insert(table, &key, values)
                }
                Bug::UpdateMissingCreates => match self.inner.update(table, &key, values) {
                    Status::NotFound => self.inner.insert(table, &key, values),
                    status => status,
                },
                _ => self.inner.update(table, &key, values),
            }
        }

        fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
            let key = self.key(key);
            self.inner.insert(table, &key, values)
        }

        fn delete(&mut self, table: &str, key: &str) -> Status {
            let key = self.key(key);
            match (self.bug, self.inner.delete(table, &key)) {
                (Bug::DeleteKeeps, Status::Ok) => {
                    let mut stored = Record::new();
                    stored.push("field0", b"resurrected");
                    self.inner.insert(table, &key, &stored);
                    Status::Ok
                }
                (Bug::DeleteMissingIsOk, Status::NotFound) => Status::Ok,
                (_, status) => status,
            }
        }

        fn insert_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
            for (index, (key, values)) in batch.iter().enumerate() {
                statuses[index] = Status::Ok;
                if self.bug != Bug::BatchInsertDropsLast || index + 1 < batch.len() {
                    statuses[index] = self.insert(table, key, values);
                }
            }
            crate::batch_status(statuses)
        }

        fn read_batch(
            &mut self,
            table: &str,
            batch: &Batch,
            fields: Fields<'_>,
            out: &mut [Record],
            statuses: &mut [Status],
        ) -> Status {
            for (index, (key, _)) in batch.iter().enumerate() {
                statuses[index] = match self.read(&ReadOp::new(table, key, fields), &mut out[index])
                {
                    Status::NotFound if self.bug == Bug::BatchReadMissingIsOk => Status::Ok,
                    status => status,
                };
            }
            crate::batch_status(statuses)
        }

        fn update_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
            if self.bug != Bug::BatchUpdateReadsFirst {
                for (index, (key, values)) in batch.iter().enumerate() {
                    statuses[index] = self.update(table, key, values);
                }
                return crate::batch_status(statuses);
            }
            let mut merged = Vec::new();
            for (index, (key, values)) in batch.iter().enumerate() {
                let mut stored = Record::new();
                statuses[index] = self.read(&ReadOp::new(table, key, Fields::All), &mut stored);
                stored.merge_from(values);
                merged.push(stored);
            }
            for (index, (key, _)) in batch.iter().enumerate() {
                if statuses[index].is_ok() {
                    let _ = self.delete(table, key);
                    statuses[index] = self.insert(table, key, &merged[index]);
                }
            }
            crate::batch_status(statuses)
        }

        fn delete_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
            for (index, (key, _)) in batch.iter().enumerate() {
                statuses[index] = match self.delete(table, key) {
                    Status::NotFound if self.bug == Bug::BatchDeleteMissingIsOk => Status::Ok,
                    status => status,
                };
            }
            crate::batch_status(statuses)
        }
    }

    fn broken(bug: Bug, contract: &Contract) -> ContractViolation {
        let store = Broken(ReferenceStore::new(), bug);
        check_store(&store, contract).expect_err(&format!("{bug:?} went unnoticed"))
    }

    #[test]
    fn every_bug_is_caught_by_its_rule() {
        let contract = Contract::new();
        for (bug, rule) in [
            (Bug::UpdateReplaces, Rule::UpdateMerges),
            (Bug::UpdateMissingCreates, Rule::UpdateMissing),
            (Bug::ReadIgnoresSubset, Rule::FieldSubset),
            (Bug::ReadMissingIsOk, Rule::ReadMissing),
            (Bug::ReadDropsByte, Rule::ReadYourWrites),
            (Bug::InPlaceIgnoresSubset, Rule::ReadInPlace),
            (Bug::InPlaceShowsTwice, Rule::ReadInPlace),
            (Bug::ScanReversed, Rule::ScanOrder),
            (Bug::ScanExclusive, Rule::ScanOrder),
            (Bug::ScanOneTooMany, Rule::ScanOrder),
            (Bug::ScanIgnoresSubset, Rule::ScanFields),
            (Bug::ScanNotImplemented, Rule::ScanOrder),
            (Bug::DeleteKeeps, Rule::DeleteThenRead),
            (Bug::DeleteMissingIsOk, Rule::Delete),
            (Bug::ThreadsIsolated, Rule::Threads),
            (Bug::GaugeUnlisted, Rule::GaugeNames),
            (Bug::GaugeListedTwice, Rule::GaugeNames),
            (Bug::GaugeWithoutKind, Rule::GaugeKinds),
            (Bug::GaugeChangesKind, Rule::GaugeKinds),
            (Bug::BatchInsertDropsLast, Rule::BatchReadYourWrites),
            (Bug::BatchReadMissingIsOk, Rule::BatchRead),
            (Bug::BatchUpdateReadsFirst, Rule::BatchUpdate),
            (Bug::BatchDeleteMissingIsOk, Rule::BatchDelete),
        ] {
            let v = broken(bug, &contract);
            assert_eq!(v.rule, rule, "{bug:?}: {v}");
        }
    }

    #[test]
    fn violations_name_the_key_and_fields() {
        let v = broken(Bug::UpdateReplaces, &Contract::new());
        assert!(v.key.ends_with("k01"), "{v}");
        let text = v.to_string();
        assert!(text.contains("keeps the others"), "{text}");
        assert!(text.contains("field4=\"added\""), "{text}");
        assert!(text.contains("field0="), "{text}");
        let v = broken(Bug::ReadIgnoresSubset, &Contract::new());
        assert!(v.to_string().contains("[\"field2\"]"), "{v}");
    }

    #[test]
    fn declared_capabilities_are_checked_not_skipped() {
        let store = Broken(ReferenceStore::new(), Bug::ScanNotImplemented);
        check_store(&store, &Contract::new().with_scans(Scans::NotImplemented)).unwrap();
        // A store that scans after all breaks a contract saying it does not.
        let v = check_store(
            &ReferenceStore::new(),
            &Contract::new().with_scans(Scans::NotImplemented),
        )
        .unwrap_err();
        assert_eq!(v.rule, Rule::ScanNotImplemented, "{v}");
        let v = check_store(
            &ReferenceStore::new(),
            &Contract::new().with_deletes(Deletes::NotImplemented),
        )
        .unwrap_err();
        assert_eq!(v.rule, Rule::Delete, "{v}");
        let v = check_store(
            &ReferenceStore::new(),
            &Contract::new().with_update_missing(UpdateMissing::Creates),
        )
        .unwrap_err();
        assert_eq!(v.rule, Rule::UpdateMissing, "{v}");
        // Store order checks contents and the start row, not the order.
        let store = Broken(ReferenceStore::new(), Bug::ScanReversed);
        let v = check_store(&store, &Contract::new().with_scans(Scans::StoreOrder)).unwrap_err();
        assert_eq!(v.rule, Rule::ScanOrder, "{v}");
        assert!(v.detail.contains("start key"), "{v}");
        let store = Broken(ReferenceStore::new(), Bug::UpdateMissingCreates);
        check_store(
            &store,
            &Contract::new().with_update_missing(UpdateMissing::Creates),
        )
        .unwrap();
        let store = Broken(ReferenceStore::new(), Bug::DeleteMissingIsOk);
        check_store(&store, &Contract::new().with_deletes(Deletes::MissingOk)).unwrap();
    }

    #[test]
    fn faults_answer_in_place_of_the_store() {
        let store = ReferenceStore::new().with_fault(|op, _, key| {
            (op == Op::Insert && key.starts_with("fail")).then_some(Status::Error)
        });
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        assert_eq!(
            t.insert("t", "fail1", &record(&[("f", "v")])),
            Status::Error
        );
        assert_eq!(t.insert("t", "ok", &record(&[("f", "v")])), Status::Ok);
        assert_eq!(store.get("t", "ok"), Some(record(&[("f", "v")])));
        assert_eq!(store.table_len("t"), 1);
        assert_eq!(store.threads(), 1);
        let v = check_store(
            &store
                .clone()
                .with_fault(|op, _, _| (op == Op::Insert).then_some(Status::Error)),
            &Contract::new(),
        )
        .unwrap_err();
        assert_eq!(v.rule, Rule::Insert, "{v}");
    }

    #[test]
    fn record_helpers() {
        let r = record(&[("a", "1"), ("b", "22")]);
        assert_eq!(
            text_fields(&r),
            [("a".into(), "1".into()), ("b".into(), "22".into())]
        );
        assert_eq!(record_bytes(&[("a", b"1"), ("b", b"22")]), r);
        let swapped = record(&[("b", "22"), ("a", "1")]);
        assert_eq!(sorted_fields(&swapped), sorted_fields(&r));
        assert_ne!(unique_name("x"), unique_name("x"));
    }
}
