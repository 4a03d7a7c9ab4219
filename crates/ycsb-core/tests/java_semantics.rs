//! Java CoreWorkload semantics a session keeps, on stores that fail or
//! answer as the test needs: inserts that fail (retried with Java's
//! messages, or gone through with
//! `core_workload_insertion_keep_going_on_error`), `recordcount=0` (a load
//! until stopped, Java's `Integer.MAX_VALUE` key space for the run) and
//! `[SCAN-LATENCY-PER-RECORD]`; and what a session tells its observer
//! besides the figures: a run whose reads nearly all find nothing hints
//! that the store was never loaded.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use ycsb_db::{ReadOp, ScanOp};

use ycsb_core::db::{
    Properties, Record, ScanResult, Status, Store, StoreContext, StoreDescriptor, StoreError,
    StoreThread, ThreadContext,
};
use ycsb_core::{
    Observer, Phase, PhaseError, Session, SessionError, SessionFailure, SessionObserver,
    StatusUpdate, StopSignal,
};
use ycsb_results::{PhaseReport, RunReport, SectionReport};

/// Every key a store was asked to insert, read or scan from, per process
/// (the stores below are opened by descriptor, so they share it): each
/// test uses its own table.
static CALLS: Mutex<Vec<(String, &'static str, String)>> = Mutex::new(Vec::new());
/// Insert attempts per table, for stores that fail every other one.
static ATTEMPTS: AtomicU64 = AtomicU64::new(0);

fn calls(table: &str, call: &str) -> Vec<String> {
    CALLS
        .lock()
        .unwrap()
        .iter()
        .filter(|(t, c, _)| t == table && *c == call)
        .map(|(_, _, key)| key.clone())
        .collect()
}

/// How the test store answers.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Inserts of keys ending in 7 fail.
    FailSevens,
    /// Every other insert attempt fails (first, third, ...).
    FailEveryOther,
    /// Everything succeeds; a scan returns no record for an even length,
    /// `length` records otherwise.
    ScanOddLengths,
}

struct TestStore(Behaviour);
struct TestThread(Behaviour);

impl Store for TestStore {
    fn thread(&self, _: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(TestThread(self.0)))
    }
}

impl StoreThread for TestThread {
    fn read(&mut self, op: &ReadOp<'_>, _: &mut Record) -> Status {
        CALLS
            .lock()
            .unwrap()
            .push((op.table.into(), "read", op.key.into()));
        Status::NotFound
    }
    fn scan(&mut self, op: &ScanOp<'_>, result: &mut ScanResult) -> Status {
        CALLS
            .lock()
            .unwrap()
            .push((op.table.into(), "scan", op.start_key.into()));
        if op.count % 2 == 1 {
            for i in 0..op.count {
                result
                    .push_row(&format!("{}{i}", op.start_key))
                    .push("field0", b"v");
            }
        }
        Status::Ok
    }
    fn update(&mut self, _: &str, _: &str, _: &Record) -> Status {
        Status::Ok
    }
    fn insert(&mut self, table: &str, key: &str, _: &Record) -> Status {
        let fails = match self.0 {
            Behaviour::FailSevens => key.ends_with('7'),
            Behaviour::FailEveryOther => ATTEMPTS.fetch_add(1, Ordering::SeqCst).is_multiple_of(2),
            Behaviour::ScanOddLengths => false,
        };
        if fails {
            return Status::Error;
        }
        CALLS
            .lock()
            .unwrap()
            .push((table.into(), "insert", key.into()));
        Status::Ok
    }
    fn delete(&mut self, _: &str, _: &str) -> Status {
        Status::Ok
    }
    fn last_error(&self) -> Option<&str> {
        Some("no sevens here")
    }
}

fn open_fail_sevens(_: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(TestStore(Behaviour::FailSevens)))
}
fn open_fail_every_other(_: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(TestStore(Behaviour::FailEveryOther)))
}
fn open_scan_odd(_: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(TestStore(Behaviour::ScanOddLengths)))
}

const FAIL_SEVENS: StoreDescriptor = StoreDescriptor::new(
    "sevens",
    "fails inserts of keys ending in 7",
    &[],
    open_fail_sevens,
);
const FAIL_EVERY_OTHER: StoreDescriptor = StoreDescriptor::new(
    "every-other",
    "fails every other insert attempt",
    &[],
    open_fail_every_other,
);
const SCAN_ODD: StoreDescriptor = StoreDescriptor::new(
    "scan-odd",
    "scans return records for odd lengths only",
    &[],
    open_scan_odd,
);

#[derive(Default)]
struct Notices(Vec<String>);

impl Observer for Notices {
    fn on_status(&mut self, _: &StatusUpdate<'_>) {}

    fn on_notice(&mut self, notice: &str) {
        self.0.push(notice.to_string());
    }
}

impl SessionObserver for Notices {}

/// Opens `session`'s store and runs `phases` on it: the outcome, and the
/// notices the session gave.
fn execute(session: &Session, phases: &[Phase]) -> (Result<RunReport, SessionError>, Notices) {
    let store = session.open_store(None).unwrap();
    let mut seen = Notices::default();
    let outcome = session.execute(store, phases, &StopSignal::new(), &mut seen);
    (outcome, seen)
}

fn section<'a>(report: &'a PhaseReport, name: &str) -> Option<&'a SectionReport> {
    report.sections.iter().find(|s| s.name == name)
}

fn returns(section: &SectionReport, status: &str) -> u64 {
    section
        .returns
        .iter()
        .filter(|r| r.status == status)
        .map(|r| r.count)
        .sum()
}

fn props(table: &str) -> Properties {
    Properties::new()
        .with("table", table)
        .with("recordcount", 100)
        .with("operationcount", 100)
        .with("insertorder", "ordered")
        .with("threadcount", 2)
        .with("seed", 5)
        .with("core_workload_insertion_retry_limit", 0)
        .with("core_workload_insertion_retry_interval", 0)
}

#[test]
fn a_load_keeps_going_through_failed_inserts_when_asked() {
    let props = props("keep_going").with("core_workload_insertion_keep_going_on_error", true);
    let session = Session::new(props, FAIL_SEVENS).unwrap();
    assert!(
        session.unknown_properties().is_empty(),
        "{:?}",
        session.unknown_properties()
    );
    let (report, seen) = execute(&session, &[Phase::Load, Phase::Run]);
    let report = report.unwrap();
    // user0 .. user99: ten end in 7; every other record is in.
    let load = &report.phases[0];
    assert_eq!(load.operations, 100);
    let insert = section(load, "INSERT").unwrap();
    assert_eq!((returns(insert, "OK"), returns(insert, "ERROR")), (90, 10));
    assert_eq!(calls("keep_going", "insert").len(), 90);
    // Java's words for each failed insert, the store's reason, going on.
    let failed: Vec<&String> = seen
        .0
        .iter()
        .filter(|n| n.contains("Error inserting, not retrying any more"))
        .collect();
    assert!(!failed.is_empty(), "{:?}", seen.0);
    assert!(
        failed.iter().all(|n| n.contains(
            "number of attempts: 1, Insertion Retry Limit: 0 (the store said: no sevens here); going on"
        )),
        "{failed:?}"
    );
    // What the data set lacks is said once, and the run phase ran.
    let missing: Vec<&String> = seen
        .0
        .iter()
        .filter(|n| n.contains("not inserted"))
        .collect();
    assert_eq!(missing.len(), 1, "{:?}", seen.0);
    assert!(
        missing[0].contains("10 of 100 records were not inserted"),
        "{}",
        missing[0]
    );
    assert_eq!(report.phases.len(), 2);
}

#[test]
fn without_keep_going_a_failed_insert_stops_its_thread_and_the_load_is_incomplete() {
    let session = Session::new(props("stop_at_seven"), FAIL_SEVENS).unwrap();
    let (error, seen) = execute(&session, &[Phase::Load, Phase::Run]);
    let error = error.unwrap_err();
    // Thread 0 loads user0..user49 and stops at user7, thread 1 at user57.
    match *error.failure {
        SessionFailure::Phase(PhaseError::IncompleteLoad {
            inserted, expected, ..
        }) => assert_eq!((inserted, expected), (7 + 7, 100)),
        ref other => panic!("{other:?}"),
    }
    let stops: Vec<&String> = seen
        .0
        .iter()
        .filter(|n| n.contains("this load thread stops"))
        .collect();
    assert_eq!(stops.len(), 2, "{:?}", seen.0);
    assert!(stops.iter().all(|n| n.contains("Error inserting")));
}

#[test]
fn retried_inserts_say_so_as_java_and_succeed() {
    // One thread: the store's attempt counter alternates for it alone.
    let props = props("retries")
        .with("core_workload_insertion_retry_limit", 3)
        .with("threadcount", 1);
    let session = Session::new(props, FAIL_EVERY_OTHER).unwrap();
    let (report, seen) = execute(&session, &[Phase::Load]);
    let report = report.unwrap();
    let insert = section(&report.phases[0], "INSERT").unwrap();
    assert_eq!(returns(insert, "OK"), 100);
    assert_eq!(returns(insert, "ERROR"), 100);
    let retries: Vec<&String> = seen
        .0
        .iter()
        .filter(|n| n.ends_with("Retrying insertion, retry count: 1"))
        .collect();
    // Ten lines, then one saying the rest are not shown.
    assert_eq!(retries.len(), 10, "{:?}", seen.0);
    let muted = seen
        .0
        .iter()
        .filter(|n| n.contains("not shown one by one"))
        .count();
    assert_eq!(muted, 1, "{:?}", seen.0);
    assert_eq!(seen.0.len(), 11, "{:?}", seen.0);
}

#[test]
fn recordcount_zero_loads_until_stopped_and_runs_on_javas_key_space() {
    let props = props("unbounded")
        .with("recordcount", 0)
        .with("maxexecutiontime", 1)
        .with("target", 2000);
    let session = Session::new(props.clone(), SCAN_ODD).unwrap();
    let report = execute(&session, &[Phase::Load]).0.unwrap();
    // Inserted until the time limit, from key number 0 on, the two
    // threads taking every other number: each thread's numbers are an
    // unbroken run of its own (how far each got depends on the machine's
    // scheduling, so the holes at the end are not counted).
    let loaded = report.phases[0].operations;
    assert!(loaded > 100, "{loaded}");
    let numbers: BTreeSet<u64> = calls("unbounded", "insert")
        .iter()
        .map(|k| k.trim_start_matches("user").parse().unwrap())
        .collect();
    assert_eq!(numbers.len() as u64, loaded);
    for thread in 0..2u64 {
        let own: Vec<u64> = numbers
            .iter()
            .copied()
            .filter(|n| n % 2 == thread)
            .collect();
        let unbroken: Vec<u64> = (0..own.len() as u64).map(|i| thread + 2 * i).collect();
        assert_eq!(own, unbroken, "thread {thread}");
        assert!(own.len() > 50, "thread {thread} inserted {}", own.len());
    }

    // The run phase reads among Java's 2^31 - 1 records (uniform: almost
    // all beyond the few loaded), and inserts from there on.
    let props = props
        .with("table", "unbounded_run")
        .with("maxexecutiontime", 0)
        .with("requestdistribution", "uniform")
        .with("readproportion", 0.5)
        .with("updateproportion", 0)
        .with("insertproportion", 0.5)
        .with("operationcount", 400);
    let session = Session::new(props, SCAN_ODD).unwrap();
    execute(&session, &[Phase::Run]).0.unwrap();
    let reads: Vec<u64> = calls("unbounded_run", "read")
        .iter()
        .map(|k| k.trim_start_matches("user").parse().unwrap())
        .collect();
    assert!(reads.len() > 100, "{}", reads.len());
    assert!(reads.iter().all(|&n| n < i32::MAX as u64));
    assert!(reads.iter().any(|&n| n > 1_000_000_000), "{reads:?}");
    let inserts: BTreeSet<u64> = calls("unbounded_run", "insert")
        .iter()
        .map(|k| k.trim_start_matches("user").parse().unwrap())
        .collect();
    assert_eq!(inserts.iter().next(), Some(&(i32::MAX as u64)));
}

#[test]
fn scan_latency_per_record_as_java_master_without_empty_scans() {
    let props = props("scans")
        .with("readproportion", 0)
        .with("updateproportion", 0)
        .with("scanproportion", 1)
        .with("maxscanlength", 10)
        .with("operationcount", 500);
    let session = Session::new(props, SCAN_ODD).unwrap();
    let report = execute(&session, &[Phase::Run]).0.unwrap();
    let run = &report.phases[0];
    let scan = section(run, "SCAN").unwrap();
    let per_record = section(run, "SCAN-LATENCY-PER-RECORD").expect("the section");
    assert_eq!(scan.operations, 500);
    // Scans of an even length returned nothing: no latency per record.
    assert!(
        per_record.operations > 100 && per_record.operations < 400,
        "{}",
        per_record.operations
    );
    assert!(per_record.returns.is_empty(), "no status of its own");
    assert!(per_record.average_ns <= scan.average_ns * 1.0001);
    // Not an operation of its own: the phase counted the scans only.
    assert_eq!(run.operations, 500);
    assert!(section(run, "Intended-SCAN-LATENCY-PER-RECORD").is_none());
}

/// The notices of `phases` on the memory store, which is one per process:
/// each test has its own table.
fn memory_notices(table: &str, phases: &[Phase]) -> Vec<String> {
    let props = Properties::new()
        .with("table", table)
        .with("recordcount", 100)
        .with("operationcount", 200)
        .with("seed", 3);
    let session = Session::new(props, ycsb_memory::DESCRIPTOR).unwrap();
    let (report, seen) = execute(&session, phases);
    report.unwrap();
    seen.0
}

#[test]
fn a_run_on_a_store_never_loaded_says_so_once() {
    let seen = memory_notices("never_loaded", &[Phase::Run]);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].contains("NOT_FOUND"), "{}", seen[0]);
    assert!(seen[0].contains("never have been loaded"), "{}", seen[0]);
}

#[test]
fn a_run_on_a_loaded_store_says_nothing() {
    assert_eq!(
        memory_notices("loaded", &[Phase::Load, Phase::Run]),
        Vec::<String>::new()
    );
}
