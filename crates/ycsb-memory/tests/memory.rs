use std::sync::atomic::{AtomicBool, Ordering};

use ycsb_db::testing::{assert_conforms, record, Contract};
use ycsb_db::StoreContext;
use ycsb_db::{
    Fields, Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store, ThreadContext,
};
use ycsb_memory::{MemoryStore, DESCRIPTOR};

fn read(t: &mut dyn ycsb_db::StoreThread, key: &str, fields: Fields<'_>) -> (Status, Record) {
    let mut out = Record::new();
    let status = t.read(&ReadOp::new("t", key, fields), &mut out);
    (status, out)
}

fn scan_keys(t: &mut dyn ycsb_db::StoreThread, start: &str, count: usize) -> Vec<String> {
    let mut rows = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new("t", start, count, Fields::All), &mut rows),
        Status::Ok
    );
    rows.iter().map(|(k, _)| k.to_string()).collect()
}

#[test]
fn every_operation_and_missing_keys() {
    let store = MemoryStore::new();
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let t = t.as_mut();

    assert_eq!(read(t, "k1", Fields::All).0, Status::NotFound);
    assert_eq!(
        t.update("t", "k1", &record(&[("a", "1")])),
        Status::NotFound
    );
    assert_eq!(t.delete("t", "k1"), Status::NotFound);
    assert!(scan_keys(t, "", 10).is_empty());

    let values = record(&[("a", "1"), ("b", "2"), ("c", "3")]);
    assert_eq!(t.insert("t", "k1", &values), Status::Ok);
    assert_eq!(read(t, "k1", Fields::All), (Status::Ok, values.clone()));
    // Tables are separate.
    assert_eq!(
        t.read(&ReadOp::new("other", "k1", Fields::All), &mut Record::new()),
        Status::NotFound
    );

    // Field selection: only selected fields that exist, in stored order.
    let only = vec!["c".to_string(), "a".to_string(), "zz".to_string()];
    assert_eq!(
        read(t, "k1", Fields::Only(&only)),
        (Status::Ok, record(&[("a", "1"), ("c", "3")]))
    );
    let none = vec!["zz".to_string()];
    assert_eq!(
        read(t, "k1", Fields::Only(&none)),
        (Status::Ok, Record::new())
    );

    // Update merges: replaces b (longer and shorter values), adds d.
    assert_eq!(
        t.update("t", "k1", &record(&[("b", "twenty"), ("d", "4")])),
        Status::Ok
    );
    assert_eq!(t.update("t", "k1", &record(&[("c", "")])), Status::Ok);
    assert_eq!(
        read(t, "k1", Fields::All).1,
        record(&[("a", "1"), ("b", "twenty"), ("c", ""), ("d", "4")])
    );

    // Insert over an existing key replaces the whole record.
    assert_eq!(t.insert("t", "k1", &record(&[("x", "9")])), Status::Ok);
    assert_eq!(read(t, "k1", Fields::All).1, record(&[("x", "9")]));

    assert_eq!(t.delete("t", "k1"), Status::Ok);
    assert_eq!(read(t, "k1", Fields::All).0, Status::NotFound);
    assert_eq!(t.delete("t", "k1"), Status::NotFound);
    assert_eq!(store.len(), 0);
    assert!(store.is_empty());
}

#[test]
fn scans_follow_key_order_from_the_start_key() {
    let store = MemoryStore::new();
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let t = t.as_mut();
    for key in ["user5", "user1", "user3", "user20", "user4"] {
        t.insert("t", key, &record(&[("f", key), ("g", "x")]));
    }
    assert_eq!(scan_keys(t, "user2", 3), ["user20", "user3", "user4"]);
    assert_eq!(scan_keys(t, "user3", 100), ["user3", "user4", "user5"]);
    assert_eq!(scan_keys(t, "", 2), ["user1", "user20"]);
    assert!(scan_keys(t, "user6", 5).is_empty());
    assert!(scan_keys(t, "user1", 0).is_empty());

    let only = vec!["f".to_string()];
    let mut rows = ScanResult::new();
    t.scan(
        &ScanOp::new("t", "user4", 5, Fields::Only(&only)),
        &mut rows,
    );
    let got: Vec<_> = rows
        .iter()
        .map(|(k, r)| (k.to_string(), r.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("user4".to_string(), record(&[("f", "user4")])),
            ("user5".to_string(), record(&[("f", "user5")])),
        ]
    );
    assert_eq!(store.table_len("t"), 5);
    assert_eq!(store.table_len("nope"), 0);
}

#[test]
fn concurrent_updates_of_different_fields_all_survive() {
    const THREADS: usize = 16;
    const ROUNDS: usize = 300;
    let store = MemoryStore::new();
    store
        .thread(ThreadContext::new(0, 1))
        .unwrap()
        .insert("t", "hot", &record(&[("base", "b")]));
    std::thread::scope(|s| {
        for id in 0..THREADS {
            let store = &store;
            s.spawn(move || {
                let mut t = store.thread(ThreadContext::new(id, THREADS)).unwrap();
                let name = format!("f{id}");
                for round in 0..ROUNDS {
                    let value = format!("{id}:{round}");
                    let status = t.update("t", "hot", &record(&[(&name, &value)]));
                    assert_eq!(status, Status::Ok);
                }
            });
        }
    });
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let (_, out) = read(t.as_mut(), "hot", Fields::All);
    assert_eq!(out.len(), THREADS + 1);
    for id in 0..THREADS {
        let expected = format!("{id}:{}", ROUNDS - 1);
        assert_eq!(
            out.get(&format!("f{id}")),
            Some(expected.as_bytes()),
            "f{id}"
        );
    }
}

/// 64 threads at once: each inserts its own keys, updates its own field of
/// shared records, deletes some of its keys and scans across everything.
/// Afterwards every count must add up and no update may be lost.
#[test]
fn sixty_four_threads_scan_insert_update_delete() {
    const THREADS: usize = 64;
    const SHARED: usize = 200;
    const INSERTS: usize = 400;
    const SCANS: usize = 100;
    let store = MemoryStore::new();
    {
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        for i in 0..SHARED {
            t.insert("t", &format!("s{i:04}"), &record(&[("base", "b")]));
        }
    }
    let failed = AtomicBool::new(false);
    std::thread::scope(|s| {
        for id in 0..THREADS {
            let (store, failed) = (&store, &failed);
            s.spawn(move || {
                let mut t = store.thread(ThreadContext::new(id, THREADS)).unwrap();
                let field = format!("f{id:02}");
                let value = record(&[("v", "x")]);
                let mut rows = ScanResult::new();
                for i in 0..INSERTS {
                    assert_eq!(
                        t.insert("t", &format!("i{id:02}-{i:04}"), &value),
                        Status::Ok
                    );
                    let shared = format!("s{:04}", (i * 7 + id) % SHARED);
                    let change = record(&[(&field, &i.to_string())]);
                    assert_eq!(t.update("t", &shared, &change), Status::Ok);
                    if i % 4 == 0 {
                        // Delete the key inserted just before: its own, so
                        // it must be there.
                        assert_eq!(t.delete("t", &format!("i{id:02}-{i:04}")), Status::Ok);
                    }
                    if i % (INSERTS / SCANS) == 0 {
                        rows.clear();
                        let start = format!("i{:02}", (id + 1) % THREADS);
                        assert_eq!(
                            t.scan(&ScanOp::new("t", &start, 50, Fields::All), &mut rows),
                            Status::Ok
                        );
                        let keys: Vec<_> = rows.iter().map(|(k, _)| k).collect();
                        // Strictly increasing, never before the start key,
                        // and always full: the shared keys ("s…") sort
                        // after every inserted key ("i…") and are never
                        // deleted.
                        if keys.len() != 50
                            || keys[0] < start.as_str()
                            || keys.windows(2).any(|w| w[0] >= w[1])
                        {
                            failed.store(true, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    assert!(!failed.load(Ordering::Relaxed), "a scan returned bad rows");
    let deleted_per_thread = INSERTS.div_ceil(4);
    assert_eq!(
        store.len(),
        SHARED + THREADS * (INSERTS - deleted_per_thread)
    );
    // Every thread's field is on every shared record it updated, with the
    // value of its last update there.
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut fields_seen = 0;
    for i in 0..SHARED {
        let (status, out) = read(t.as_mut(), &format!("s{i:04}"), Fields::All);
        assert_eq!(status, Status::Ok);
        for id in 0..THREADS {
            let last = (0..INSERTS).rev().find(|r| (r * 7 + id) % SHARED == i);
            let got = out.get(&format!("f{id:02}"));
            assert_eq!(
                got,
                last.map(|r| r.to_string()).as_deref().map(str::as_bytes)
            );
            fields_seen += usize::from(got.is_some());
        }
    }
    assert_eq!(fields_seen, THREADS * SHARED.min(INSERTS));
}

#[test]
fn descriptor_opens_a_shared_instance_across_phases() {
    let props = Properties::new().with("memory.instance", "phases-test");
    let load = (DESCRIPTOR.open)(&StoreContext::new(&props)).unwrap();
    load.thread(ThreadContext::new(0, 1)).unwrap().insert(
        "usertable",
        "user1",
        &record(&[("f", "v")]),
    );
    drop(load);
    let run = (DESCRIPTOR.open)(&StoreContext::new(&props)).unwrap();
    let mut t = run.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new("usertable", "user1", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(MemoryStore::named("phases-test").len(), 1);
    MemoryStore::named("phases-test").clear();
    assert_eq!(
        t.read(
            &ReadOp::new("usertable", "user1", Fields::All),
            &mut Record::new()
        ),
        Status::NotFound
    );
    // The table survives a clear, so a thread's cached handle still works.
    assert_eq!(t.insert("usertable", "user2", &record(&[])), Status::Ok);
    assert_eq!(MemoryStore::named("phases-test").table_len("usertable"), 1);

    let private = Properties::new().with("memory.instance", "");
    let a = (DESCRIPTOR.open)(&StoreContext::new(&private)).unwrap();
    a.thread(ThreadContext::new(0, 1))
        .unwrap()
        .insert("usertable", "user1", &record(&[]));
    let b = (DESCRIPTOR.open)(&StoreContext::new(&private)).unwrap();
    assert_eq!(
        b.thread(ThreadContext::new(0, 1)).unwrap().read(
            &ReadOp::new("usertable", "user1", Fields::All),
            &mut Record::new()
        ),
        Status::NotFound
    );
    assert!(DESCRIPTOR.matches("memory"));
    assert_eq!(DESCRIPTOR.properties[0].name, "memory.instance");
}

#[test]
fn clones_share_records() {
    let a = MemoryStore::new();
    let b = a.clone();
    a.thread(ThreadContext::new(0, 1))
        .unwrap()
        .insert("t", "k", &record(&[]));
    assert_eq!(b.len(), 1);
    let mut gauges = Vec::new();
    b.gauges(&mut gauges);
    assert_eq!(gauges, [ycsb_db::Gauge::count("memory.records", 1.0)]);
    assert!(MemoryStore::new().is_empty());
}

#[test]
fn keeps_the_store_contract() {
    let store = MemoryStore::new();
    assert_conforms(&store, &Contract::new());
    assert_conforms(
        &store,
        &Contract::new().with_table("usertable").with_threads(8),
    );
}
