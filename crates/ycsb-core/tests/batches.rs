//! `batch.size` (go-ycsb's): the load inserts N records per store call
//! and the run phase groups N operations of one kind; each record is
//! measured in its operation's section, each call in its `BATCH_*`
//! section, and the phase's operations count records.

use std::collections::BTreeMap;
use std::sync::Mutex;
use ycsb_db::{ReadOp, ScanOp};

use ycsb_core::db::{
    Batch, Fields, Properties, Record, ScanResult, Status, Store, StoreError, StoreThread,
    ThreadContext,
};
use ycsb_core::{Benchmark, PhaseOutcome};

/// A store keeping its records and a log of its calls: the kind and the
/// keys of each. Batch calls are native (logged as one call); a key in
/// `fail_once` fails its first insert.
#[derive(Default)]
struct Logger {
    records: Mutex<BTreeMap<String, Record>>,
    calls: Mutex<Vec<(&'static str, Vec<String>)>>,
    fail_once: Mutex<Vec<String>>,
}

struct LoggerThread<'a>(&'a Logger);

impl Store for Logger {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(LoggerThread(self)))
    }
}

impl LoggerThread<'_> {
    fn log(&self, kind: &'static str, keys: Vec<String>) {
        self.0.calls.lock().unwrap().push((kind, keys));
    }

    fn put(&self, key: &str, values: &Record) -> Status {
        let mut fail = self.0.fail_once.lock().unwrap();
        if let Some(at) = fail.iter().position(|k| k == key) {
            fail.remove(at);
            return Status::Error;
        }
        self.0
            .records
            .lock()
            .unwrap()
            .insert(key.to_string(), values.clone());
        Status::Ok
    }

    fn get(&self, key: &str, out: &mut Record) -> Status {
        match self.0.records.lock().unwrap().get(key) {
            Some(record) => {
                record.iter().for_each(|f| out.push(f.name, f.value));
                Status::Ok
            }
            None => Status::NotFound,
        }
    }
}

fn keys(batch: &Batch) -> Vec<String> {
    batch.iter().map(|(k, _)| k.to_string()).collect()
}

impl StoreThread for LoggerThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        self.log("read", vec![op.key.into()]);
        self.get(op.key, out)
    }

    fn scan(&mut self, _: &ScanOp<'_>, _: &mut ScanResult) -> Status {
        Status::NotImplemented
    }

    fn update(&mut self, _: &str, key: &str, _: &Record) -> Status {
        self.log("update", vec![key.into()]);
        Status::NotImplemented
    }

    fn insert(&mut self, _: &str, key: &str, values: &Record) -> Status {
        self.log("insert", vec![key.into()]);
        self.put(key, values)
    }

    fn delete(&mut self, _: &str, key: &str) -> Status {
        self.log("delete", vec![key.into()]);
        match self.0.records.lock().unwrap().remove(key) {
            Some(_) => Status::Ok,
            None => Status::NotFound,
        }
    }

    fn insert_batch(&mut self, _: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.log("insert_batch", keys(batch));
        for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
            *status = self.put(key, values);
        }
        ycsb_core::db::batch_status(statuses)
    }

    fn update_batch(&mut self, _: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.log("update_batch", keys(batch));
        for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
            *status = match self.0.records.lock().unwrap().get_mut(key) {
                Some(record) => {
                    record.merge_from(values);
                    Status::Ok
                }
                None => Status::NotFound,
            };
        }
        ycsb_core::db::batch_status(statuses)
    }

    fn read_batch(
        &mut self,
        _: &str,
        batch: &Batch,
        _: Fields<'_>,
        out: &mut [Record],
        statuses: &mut [Status],
    ) -> Status {
        self.log("read_batch", keys(batch));
        for ((status, record), (key, _)) in statuses.iter_mut().zip(out).zip(batch.iter()) {
            *status = self.get(key, record);
        }
        ycsb_core::db::batch_status(statuses)
    }
}

fn props(batch_size: u64) -> Properties {
    Properties::new()
        .with("recordcount", 40)
        .with("operationcount", 90)
        .with("readproportion", 0.5)
        .with("updateproportion", 0.5)
        .with("threadcount", 2)
        .with("dataintegrity", "true")
        .with("batch.size", batch_size)
}

/// `(operations, status counts)` of the section named `name`.
fn section(outcome: &PhaseOutcome, name: &str) -> (u64, Vec<(String, u64)>) {
    let section = outcome
        .report
        .sections
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no section {name}"));
    (
        section.operations,
        section
            .returns
            .iter()
            .map(|r| (r.status.clone(), r.count))
            .collect(),
    )
}

#[test]
fn a_batched_load_writes_the_same_records_in_calls_of_batch_size_records() {
    let single = Logger::default();
    let bench = Benchmark::from_properties(&props(1)).unwrap();
    let load = bench.load(&single).unwrap();
    assert!(single
        .calls
        .lock()
        .unwrap()
        .iter()
        .all(|(k, _)| *k == "insert"));
    assert!(!load
        .report
        .sections
        .iter()
        .any(|s| s.name == "BATCH_INSERT"));

    let batched = Logger::default();
    let bench = Benchmark::from_properties(&props(7)).unwrap();
    let load = bench.load(&batched).unwrap();
    // Each thread's 20 records in calls of 7, 7 and 6.
    let mut sizes: Vec<usize> = batched
        .calls
        .lock()
        .unwrap()
        .iter()
        .map(|(kind, keys)| {
            assert_eq!(*kind, "insert_batch");
            keys.len()
        })
        .collect();
    sizes.sort_unstable();
    assert_eq!(sizes, [6, 6, 7, 7, 7, 7]);
    // The same keys with the same values as one record per call.
    assert_eq!(
        *batched.records.lock().unwrap(),
        *single.records.lock().unwrap()
    );
    assert_eq!(load.operations, 40);
    assert_eq!(section(&load, "INSERT"), (40, vec![("OK".to_string(), 40)]));
    assert_eq!(
        section(&load, "BATCH_INSERT"),
        (6, vec![("OK".to_string(), 6)])
    );
}

#[test]
fn a_batched_run_groups_operations_of_one_kind_and_verifies_each_record() {
    let store = Logger::default();
    let bench = Benchmark::from_properties(&props(10)).unwrap();
    bench.load(&store).unwrap();
    store.calls.lock().unwrap().clear();
    let run = bench.run(&store).unwrap();
    assert_eq!(run.operations, 90);
    let calls = store.calls.lock().unwrap();
    let records: usize = calls.iter().map(|(_, keys)| keys.len()).sum();
    assert_eq!(records, 90);
    // Each thread's 45 operations: four calls of 10 and one of 5.
    assert!(calls
        .iter()
        .all(|(kind, keys)| kind.ends_with("_batch") && (keys.len() == 10 || keys.len() == 5)));
    let (reads, _) = section(&run, "READ");
    let (updates, _) = section(&run, "UPDATE");
    assert_eq!(reads + updates, 90);
    let (verified, statuses) = section(&run, "VERIFY");
    assert_eq!(verified, reads);
    assert_eq!(statuses, vec![("OK".to_string(), reads)]);
    let batch_reads = calls.iter().filter(|(k, _)| *k == "read_batch").count() as u64;
    assert_eq!(section(&run, "BATCH_READ").0, batch_reads);
}

#[test]
fn a_failed_batch_retries_only_its_failed_records() {
    let store = Logger::default();
    let key = Benchmark::from_properties(&props(5))
        .unwrap()
        .workload()
        .key_name(2);
    store.fail_once.lock().unwrap().push(key.clone());
    let props = props(5)
        .with("threadcount", 1)
        .with("core_workload_insertion_retry_limit", 1)
        .with("core_workload_insertion_retry_interval", 0);
    let load = Benchmark::from_properties(&props)
        .unwrap()
        .load(&store)
        .unwrap();
    let calls = store.calls.lock().unwrap();
    assert_eq!(calls[0].1.len(), 5);
    assert_eq!(calls[1], ("insert_batch", vec![key]));
    assert_eq!(store.records.lock().unwrap().len(), 40);
    assert_eq!(
        section(&load, "INSERT").1,
        vec![("OK".to_string(), 40), ("ERROR".to_string(), 1)]
    );
    assert_eq!(
        section(&load, "BATCH_INSERT").1,
        vec![("OK".to_string(), 8), ("ERROR".to_string(), 1)]
    );
}

#[test]
fn the_error_budget_keeps_the_store_s_batch_and_counts_its_records() {
    let store = Logger::default();
    let props = props(4).with("errorbudget", 100);
    Benchmark::from_properties(&props)
        .unwrap()
        .load(&store)
        .unwrap();
    assert!(store
        .calls
        .lock()
        .unwrap()
        .iter()
        .all(|(k, _)| *k == "insert_batch"));
}

#[test]
fn batch_size_zero_is_refused_naming_the_property() {
    let error = Benchmark::from_properties(&props(0)).err().unwrap();
    assert!(error.to_string().contains("batch.size"), "{error}");
}

/// A target rate counts records: a batch of N records takes N ticks of
/// the schedule, so batches do not multiply the rate asked for.
#[test]
fn a_target_rate_counts_the_records_of_batches() {
    let store = ycsb_memory::MemoryStore::new();
    let props = Properties::new()
        .with("recordcount", 100)
        .with("operationcount", 400)
        .with("readproportion", 1.0)
        .with("updateproportion", 0.0)
        .with("threadcount", 1)
        .with("target", 2000)
        .with("batch.size", 20);
    let bench = Benchmark::from_properties(&props).unwrap();
    bench.load(&store).unwrap();
    let run = bench.run(&store).unwrap();
    assert_eq!(run.operations, 400);
    // 400 records at 2000 per second: 0.2 s (the first batch starts at
    // once, the last is due at 380 ticks of 0.5 ms).
    assert!(
        run.runtime >= std::time::Duration::from_millis(180),
        "{:?}",
        run.runtime
    );
}
