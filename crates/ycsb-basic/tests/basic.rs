use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ycsb_basic::{BasicStore, DESCRIPTOR};
use ycsb_db::testing::{check_store, record, Contract, Rule};
use ycsb_db::{
    Fields, Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store, StoreError,
    ThreadContext,
};
use ycsb_db::{OutputSink, StoreContext};

/// Opens a basic store through its descriptor, capturing its output.
fn open(props: &Properties) -> (Box<dyn Store>, Arc<Mutex<Vec<u8>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink: OutputSink = lines.clone();
    let store = (DESCRIPTOR.open)(&StoreContext::new(props).with_output(sink)).unwrap();
    (store, lines)
}

fn text(lines: &Arc<Mutex<Vec<u8>>>) -> String {
    String::from_utf8(lines.lock().unwrap().clone()).unwrap()
}

/// basic is exempt from the store contract: like Java's BasicDB it
/// stores nothing and answers OK to everything, so no read can return what
/// was written. The kit says so at its first rule; what basic does promise
/// (every operation OK, nothing read, from any number of threads) is
/// checked here.
#[test]
fn exempt_from_the_store_contract_it_stores_nothing() {
    let (store, _) = open(&Properties::new());
    let broken = check_store(&*store, &Contract::new()).unwrap_err();
    assert_eq!(broken.rule, Rule::ReadMissing, "{broken}");
    std::thread::scope(|s| {
        for id in 0..4 {
            let store = &store;
            s.spawn(move || {
                let mut t = store.thread(ThreadContext::new(id, 4)).unwrap();
                let values = record(&[("field0", "v")]);
                let key = format!("user{id}");
                assert_eq!(t.insert("usertable", &key, &values), Status::Ok);
                assert_eq!(t.update("usertable", &key, &values), Status::Ok);
                let mut out = Record::new();
                assert_eq!(
                    t.read(&ReadOp::new("usertable", &key, Fields::All), &mut out),
                    Status::Ok
                );
                assert!(out.is_empty());
                let mut rows = ScanResult::new();
                assert_eq!(
                    t.scan(&ScanOp::new("usertable", &key, 5, Fields::All), &mut rows),
                    Status::Ok
                );
                assert!(rows.is_empty());
                assert_eq!(t.delete("usertable", &key), Status::Ok);
            });
        }
    });
}

#[test]
fn verbose_lines_match_java_basicdb() {
    let props = Properties::new()
        .with("basicdb.verbose", "true")
        .with("recordcount", 10)
        .with("redis.password", "hunter2");
    let (store, lines) = open(&props);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let only = vec!["field1".to_string(), "field3".to_string()];
    let mut out = Record::new();
    let mut rows = ScanResult::new();
    assert_eq!(
        t.read(&ReadOp::new("usertable", "user1", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(
        t.read(
            &ReadOp::new("usertable", "user2", Fields::Only(&only)),
            &mut out
        ),
        Status::Ok
    );
    assert_eq!(
        t.scan(
            &ScanOp::new("usertable", "user3", 7, Fields::All),
            &mut rows
        ),
        Status::Ok
    );
    assert_eq!(
        t.scan(
            &ScanOp::new("usertable", "user4", 2, Fields::Only(&only)),
            &mut rows
        ),
        Status::Ok
    );
    let values = record(&[("field0", "a b"), ("field9", "")]);
    assert_eq!(t.update("usertable", "user5", &values), Status::Ok);
    assert_eq!(t.insert("usertable", "user6", &values), Status::Ok);
    assert_eq!(t.insert("usertable", "user7", &Record::new()), Status::Ok);
    assert_eq!(t.delete("usertable", "user8"), Status::Ok);
    t.cleanup().unwrap();
    assert!(out.is_empty() && rows.is_empty());
    assert_eq!(
        text(&lines),
        "***************** properties *****************\n\
         \"basicdb.verbose\"=\"true\"\n\
         \"recordcount\"=\"10\"\n\
         \"redis.password\"=\"<redacted>\"\n\
         **********************************************\n\
         READ usertable user1 [ <all fields>]\n\
         READ usertable user2 [ field1 field3 ]\n\
         SCAN usertable user3 7 [ <all fields>]\n\
         SCAN usertable user4 2 [ field1 field3 ]\n\
         UPDATE usertable user5 [ field0=a b field9= ]\n\
         INSERT usertable user6 [ field0=a b field9= ]\n\
         INSERT usertable user7 [ ]\n\
         DELETE usertable user8\n"
    );
}

#[test]
fn quiet_by_default() {
    let (store, lines) = open(&Properties::new());
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert("t", "k", &record(&[("f", "v")])), Status::Ok);
    assert_eq!(
        t.read(&ReadOp::new("t", "k", Fields::All), &mut Record::new()),
        Status::Ok
    );
    t.cleanup().unwrap();
    drop(t);
    assert_eq!(text(&lines), "");
}

#[test]
fn counts_distinct_operations_over_threads() {
    let props = Properties::new().with("basicdb.count", "true");
    let (store, lines) = open(&props);
    let f1 = vec!["b".to_string(), "a".to_string()];
    let f2 = vec!["a".to_string(), "b".to_string()];
    std::thread::scope(|s| {
        for id in 0..2 {
            let store = &store;
            let (f1, f2) = (&f1, &f2);
            s.spawn(move || {
                let mut t = store.thread(ThreadContext::new(id, 2)).unwrap();
                let mut out = Record::new();
                // Both threads read the same three distinct (key, fields)
                // combinations; the field order does not matter (Java sorts).
                t.read(&ReadOp::new("t", "k1", Fields::All), &mut out);
                t.read(&ReadOp::new("t", "k1", Fields::Only(f1)), &mut out);
                t.read(&ReadOp::new("t", "k1", Fields::Only(f2)), &mut out);
                t.read(&ReadOp::new("t", "k2", Fields::All), &mut out);
                t.scan(
                    &ScanOp::new("t", "k1", 5, Fields::All),
                    &mut ScanResult::new(),
                );
                // Distinct per thread: different keys.
                t.update("t", &format!("u{id}"), &record(&[("f", "1")]));
                t.insert("t", "i", &record(&[("f", "1"), ("g", "2")]));
                t.insert("t", "i", &record(&[("g", "2"), ("f", "1")]));
                t.delete("t", &format!("d{id}"));
                t.delete("t", "shared");
                // Before the last thread ends nothing is printed.
                t.cleanup().unwrap();
            });
        }
    });
    assert_eq!(
        text(&lines),
        "[READS], Uniques, 3\n\
         [SCANS], Uniques, 1\n\
         [UPDATES], Uniques, 2\n\
         [INSERTS], Uniques, 1\n\
         [DELETES], Uniques, 3\n"
    );
}

#[test]
fn counts_print_once_even_when_threads_are_dropped_without_cleanup() {
    let props = Properties::new().with("basicdb.count", "true");
    let (store, lines) = open(&props);
    let mut a = store.thread(ThreadContext::new(0, 2)).unwrap();
    let b = store.thread(ThreadContext::new(1, 2)).unwrap();
    a.delete("t", "k");
    a.cleanup().unwrap();
    assert_eq!(text(&lines), "");
    drop(a);
    drop(b);
    assert!(text(&lines).contains("[DELETES], Uniques, 1\n"));
    assert_eq!(text(&lines).matches("[READS]").count(), 1);
}

#[test]
fn fixed_delay_sleeps_at_least_the_delay() {
    // A lower bound only: `thread::sleep` never returns early, so this
    // cannot fail on a slow machine.
    let props = Properties::new()
        .with("basicdb.simulatedelay", 5)
        .with("basicdb.randomizedelay", false);
    let (store, _) = open(&props);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let start = Instant::now();
    for _ in 0..3 {
        assert_eq!(t.delete("t", "k"), Status::Ok);
    }
    assert!(start.elapsed() >= Duration::from_millis(15));
}

#[test]
fn random_delay_works_with_a_one_millisecond_bound() {
    // Java's nextInt(1) is always 0: no sleep, and no panic on the range.
    let props = Properties::new().with("basicdb.simulatedelay", 1);
    let (store, _) = open(&props);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    for _ in 0..100 {
        assert_eq!(t.delete("t", "k"), Status::Ok);
    }
}

#[test]
fn invalid_properties_are_errors_naming_the_property() {
    let props = Properties::new().with("basicdb.simulatedelay", "-3");
    let err = BasicStore::open(&StoreContext::new(&props)).unwrap_err();
    assert!(matches!(err, StoreError::Property(_)));
    assert_eq!(
        err.to_string(),
        "basicdb.simulatedelay: invalid value '-3' (set by the program): expected an unsigned integer"
    );
}

#[test]
fn descriptor_names_and_properties() {
    for name in ["basic", "BasicDB", "site.ycsb.BasicDB"] {
        assert!(DESCRIPTOR.matches(name), "{name}");
    }
    assert!(!DESCRIPTOR.matches("memory"));
    let names: Vec<_> = DESCRIPTOR.properties.iter().map(|d| d.name).collect();
    assert_eq!(
        names,
        [
            "basicdb.verbose",
            "basicdb.simulatedelay",
            "basicdb.randomizedelay",
            "basicdb.count"
        ]
    );
}

/// Reads in place (how the workload reads) show the empty record once,
/// and do what `read` does: silent by default, a verbose line, a counted
/// read. The silent store skips its settings on every operation; the
/// others must still see each one.
#[test]
fn reads_in_place_show_an_empty_record_and_keep_lines_and_counts() {
    let read_in_place = |t: &mut dyn ycsb_db::StoreThread, key: &str| {
        let mut visits = 0;
        let status = t.read_in_place(
            &ReadOp::new("t", key, Fields::All),
            &mut Record::new(),
            &mut |view| {
                assert!(view.is_empty());
                visits += 1;
            },
        );
        assert_eq!((status, visits), (Status::Ok, 1));
    };
    let (store, lines) = open(&Properties::new());
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    read_in_place(&mut *t, "k1");
    t.cleanup().unwrap();
    assert_eq!(text(&lines), "");

    let (store, lines) = open(&Properties::new().with("basicdb.verbose", "true"));
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    read_in_place(&mut *t, "k1");
    assert!(
        text(&lines).ends_with("READ t k1 [ <all fields>]\n"),
        "{}",
        text(&lines)
    );

    let (store, lines) = open(&Properties::new().with("basicdb.count", "true"));
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    read_in_place(&mut *t, "k1");
    read_in_place(&mut *t, "k2");
    read_in_place(&mut *t, "k1");
    t.cleanup().unwrap();
    assert!(
        text(&lines).contains("[READS], Uniques, 2\n"),
        "{}",
        text(&lines)
    );
}
