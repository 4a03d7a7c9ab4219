//! The memcached store against real memcached servers started here: the
//! store contract in both protocols and over several servers, Java's
//! layout byte for byte, keys spread as spymemcached spreads them, the
//! failure modes, a server killed and restarted, unanswered writes, and
//! the server's figures as gauges.

use std::time::{Duration, Instant};

use ycsb_db::testing::{assert_conforms, record, Contract, Scans};
use ycsb_db::{
    Fields, Gauge, GaugeKind, Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store,
    StoreThread, ThreadContext,
};
use ycsb_memcached::testing::Memcached;
use ycsb_memcached::{server_of, MemcachedStore};

const TABLE: &str = "usertable";

fn props(servers: &[&Memcached]) -> Properties {
    let hosts: Vec<String> = servers.iter().map(|s| s.addr()).collect();
    Properties::new().with("memcached.hosts", hosts.join(","))
}

fn open(properties: &Properties) -> MemcachedStore {
    MemcachedStore::open(properties).expect("store opens")
}

fn thread(store: &MemcachedStore) -> Box<dyn StoreThread + '_> {
    store.thread(ThreadContext::new(0, 1)).unwrap()
}

/// The gauge called `name` in `sample`, if it is there.
fn gauge(sample: &[Gauge], name: &str) -> Option<f64> {
    sample.iter().find(|g| g.name == name).map(|g| g.value)
}

fn contract() -> Contract {
    // memcached keeps no order: scans are NOT_IMPLEMENTED, as in Java.
    Contract::new().with_scans(Scans::NotImplemented)
}

fn read(t: &mut dyn StoreThread, key: &str) -> (Status, Record) {
    let mut out = Record::new();
    let status = t.read(&ReadOp::new(TABLE, key, Fields::All), &mut out);
    (status, out)
}

#[test]
fn keeps_the_store_contract_over_text() {
    let server = Memcached::start();
    assert_conforms(&open(&props(&[&server])), &contract());
}

#[test]
fn keeps_the_store_contract_over_binary() {
    let server = Memcached::start();
    let p = props(&[&server]).with("memcached.protocol", "binary");
    assert_conforms(&open(&p), &contract());
}

#[test]
fn keeps_the_store_contract_over_three_servers() {
    let servers = [Memcached::start(), Memcached::start(), Memcached::start()];
    let all: Vec<&Memcached> = servers.iter().collect();
    assert_conforms(&open(&props(&all)), &contract());
    let p = props(&all).with("memcached.protocol", "binary");
    assert_conforms(&open(&p), &contract());
}

/// A batched read over three servers (one `get k1 k2 ...` per server in
/// the text protocol): each key's own status and record, a missing key
/// among them and a key asked twice; the same over the binary protocol.
#[test]
fn batched_reads_answer_each_key_over_three_servers() {
    let servers = [Memcached::start(), Memcached::start(), Memcached::start()];
    let all: Vec<&Memcached> = servers.iter().collect();
    for protocol in ["text", "binary"] {
        let store = open(&props(&all).with("memcached.protocol", protocol));
        let mut t = thread(&store);
        let stored: Vec<String> = (0..12).map(|i| format!("{protocol}-batched{i}")).collect();
        for (i, key) in stored.iter().enumerate() {
            let values = record(&[("field0", &format!("v{i}"))]);
            assert!(t.insert(TABLE, key, &values).is_ok());
        }
        let mut batch = ycsb_db::Batch::new();
        let asked = [0, 99, 3, 7, 0, 11, 5];
        for i in asked {
            batch.push(&format!("{protocol}-batched{i}"));
        }
        let mut out = vec![Record::new(); asked.len()];
        let mut statuses = vec![Status::Error; asked.len()];
        let status = t.read_batch(TABLE, &batch, Fields::All, &mut out, &mut statuses);
        assert_eq!(status, Status::NotFound, "{protocol}: {statuses:?}");
        for ((i, got), status) in asked.iter().zip(&out).zip(&statuses) {
            if *i == 99 {
                assert_eq!((*status, got.len()), (Status::NotFound, 0), "{protocol}");
            } else {
                assert_eq!(*status, Status::Ok, "{protocol}: {i}");
                assert_eq!(
                    got.get("field0"),
                    Some(format!("v{i}").as_bytes()),
                    "{protocol}: {i}"
                );
            }
        }
    }
}

/// What Java's binding stores: `usertable-<key>`, flags 0, the fields as a
/// JSON object of strings; and what it would store is read back.
#[test]
fn records_are_laid_out_as_javas_binding_lays_them_out() {
    let server = Memcached::start();
    let store = open(&props(&[&server]).with("memcached.objectExpirationTime", "0"));
    let mut t = thread(&store);
    let r = record(&[("field0", "a\"b\\c"), ("field1", "x\ty")]);
    assert_eq!(t.insert(TABLE, "user1", &r), Status::Ok);
    let (flags, value) = server.get("usertable-user1").expect("stored at Java's key");
    assert_eq!(flags, 0);
    assert_eq!(
        String::from_utf8(value).unwrap(),
        r#"{"field0":"a\"b\\c","field1":"x\ty"}"#
    );
    // As Jackson writes a record Java's binding inserts (HashMap order).
    server.set(
        "usertable-user2",
        0,
        br#"{"field1":"one","field0":"zero \u00e9","field2":null}"#,
    );
    let (status, got) = read(&mut *t, "user2");
    assert_eq!(status, Status::Ok);
    assert_eq!(got.get("field0"), Some(&b"zero \xe9"[..]));
    assert_eq!(got.get("field1"), Some(&b"one"[..]));
    assert_eq!(got.len(), 2);
    // Something else at a record's key is not a record.
    server.set("usertable-user3", 0, b"plain text");
    assert_eq!(read(&mut *t, "user3").0, Status::UnexpectedState);
    assert!(t.last_error().unwrap().contains("usertable-user3"));
    server.set("usertable-user4", 2, b"{}");
    assert_eq!(read(&mut *t, "user4").0, Status::UnexpectedState);
    assert!(t.last_error().unwrap().contains("flags 2"));
    // Java answers scans NOT_IMPLEMENTED, and so does this store.
    let mut rows = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, "user1", 10, Fields::All), &mut rows),
        Status::NotImplemented
    );
}

#[test]
fn keys_are_spread_over_the_servers_as_spymemcached_spreads_them() {
    let servers = [Memcached::start(), Memcached::start(), Memcached::start()];
    let all: Vec<&Memcached> = servers.iter().collect();
    for protocol in ["text", "binary"] {
        let store = open(&props(&all).with("memcached.protocol", protocol));
        let mut t = thread(&store);
        let mut per_server = [0usize; 3];
        for i in 0..60 {
            let key = format!("{protocol}{i}");
            assert_eq!(t.insert(TABLE, &key, &record(&[("f", "v")])), Status::Ok);
            let qualified = format!("{TABLE}-{key}");
            let home = server_of(&qualified, 3);
            per_server[home] += 1;
            for (s, server) in servers.iter().enumerate() {
                assert_eq!(server.get(&qualified).is_some(), s == home, "{qualified}");
            }
        }
        assert!(per_server.iter().all(|&n| n > 5), "{per_server:?}");
    }
}

#[test]
fn javas_replace_update_keeps_only_the_updated_fields() {
    let server = Memcached::start();
    let store = open(&props(&[&server]).with("memcached.update", "replace"));
    let mut t = thread(&store);
    let full = record(&[("field0", "a"), ("field1", "b")]);
    assert_eq!(t.insert(TABLE, "k", &full), Status::Ok);
    assert_eq!(
        t.update(TABLE, "k", &record(&[("field1", "c")])),
        Status::Ok
    );
    let (status, got) = read(&mut *t, "k");
    assert_eq!(status, Status::Ok);
    assert_eq!(got.get("field0"), None, "Java's update drops the others");
    assert_eq!(got.get("field1"), Some(&b"c"[..]));
    assert_eq!(
        t.update(TABLE, "missing", &record(&[("f", "v")])),
        Status::NotFound
    );
}

/// Merged updates from several threads at once lose none of each other's
/// fields: the `cas` of a record changed since its `gets` is retried.
#[test]
fn concurrent_merged_updates_keep_every_field() {
    let server = Memcached::start();
    let store = open(&props(&[&server]));
    let mut t = thread(&store);
    assert_eq!(
        t.insert(TABLE, "hot", &record(&[("base", "x")])),
        Status::Ok
    );
    let threads = 4;
    let rounds = 50;
    std::thread::scope(|s| {
        for n in 0..threads {
            let store = &store;
            s.spawn(move || {
                let mut t = store.thread(ThreadContext::new(n, threads)).unwrap();
                for r in 0..rounds {
                    let name = format!("t{n}r{r}");
                    assert_eq!(
                        t.update(TABLE, "hot", &record(&[(name.as_str(), "v")])),
                        Status::Ok
                    );
                }
            });
        }
    });
    let (status, got) = read(&mut *t, "hot");
    assert_eq!(status, Status::Ok);
    assert_eq!(got.len(), 1 + threads * rounds);
}

#[test]
fn unanswered_writes_report_ok_and_cleanup_waits_for_them() {
    let server = Memcached::start();
    for protocol in ["text", "binary"] {
        let p = props(&[&server])
            .with("memcached.checkOperationStatus", "false")
            .with("memcached.protocol", protocol);
        let store = open(&p);
        let mut t = thread(&store);
        let key = format!("quiet-{protocol}");
        assert_eq!(t.insert(TABLE, &key, &record(&[("f", "1")])), Status::Ok);
        // An add of a key that exists is not stored, and not reported
        // (Java's checkOperationStatus=false); the failure of a binary
        // quiet command arrives later and is skipped.
        assert_eq!(t.insert(TABLE, &key, &record(&[("f", "2")])), Status::Ok);
        assert_eq!(t.delete(TABLE, "never-written"), Status::Ok);
        assert_eq!(t.update(TABLE, &key, &record(&[("g", "3")])), Status::Ok);
        let mut out = Record::new();
        assert_eq!(
            t.read(&ReadOp::new(TABLE, &key, Fields::All), &mut out),
            Status::Ok
        );
        assert_eq!(out.get("f"), Some(&b"1"[..]));
        assert_eq!(out.get("g"), Some(&b"3"[..]));
        for i in 0..200 {
            let k = format!("{key}-{i}");
            assert_eq!(t.insert(TABLE, &k, &record(&[("f", "v")])), Status::Ok);
        }
        t.cleanup().unwrap();
        assert!(server.get(&format!("{TABLE}-{key}-199")).is_some());
    }
}

#[test]
fn a_killed_server_fails_operations_then_is_reconnected() {
    for protocol in ["text", "binary"] {
        let mut server = Memcached::start();
        let store = open(&props(&[&server]).with("memcached.protocol", protocol));
        let mut t = thread(&store);
        assert_eq!(t.insert(TABLE, "k0", &record(&[("f", "v")])), Status::Ok);
        server.kill();
        for _ in 0..10 {
            assert_eq!(read(&mut *t, "k0").0, Status::ServiceUnavailable);
            assert_eq!(
                t.insert(TABLE, "k1", &record(&[("f", "v")])),
                Status::ServiceUnavailable
            );
        }
        assert!(t.last_error().unwrap().contains(&server.addr()));
        server.restart();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match t.insert(TABLE, "k1", &record(&[("f", "v")])) {
                Status::Ok => break,
                Status::ServiceUnavailable => {}
                other => panic!("unexpected {other}"),
            }
            assert!(Instant::now() < deadline, "no reconnection");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(read(&mut *t, "k1").0, Status::Ok);
        // memcached kept nothing across the restart.
        assert_eq!(read(&mut *t, "k0").0, Status::NotFound);
    }
}

#[test]
fn a_stalled_server_times_out_then_recovers() {
    let server = Memcached::start();
    let store = open(&props(&[&server]).with("memcached.opTimeoutMillis", "200"));
    let mut t = thread(&store);
    assert_eq!(t.insert(TABLE, "k", &record(&[("f", "v")])), Status::Ok);
    ycsb_db::testing::stop_process(server.child().id());
    let started = Instant::now();
    assert_eq!(read(&mut *t, "k").0, Status::ServiceUnavailable);
    assert!(started.elapsed() < Duration::from_secs(5));
    ycsb_db::testing::continue_process(server.child().id());
    let deadline = Instant::now() + Duration::from_secs(5);
    while read(&mut *t, "k").0 != Status::Ok {
        assert!(Instant::now() < deadline, "no recovery after SIGCONT");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Two servers, the second killed: where the keys of the dead server go
/// under each of spymemcached's failure modes.
#[test]
fn failure_modes_decide_where_a_dead_servers_keys_go() {
    let alive = Memcached::start();
    let mut dead = Memcached::start();
    let p = props(&[&alive, &dead]).with("memcached.opTimeoutMillis", "300");
    // Keys whose server is the second one.
    let keys_of_dead = |prefix: &str| -> Vec<String> {
        (0..)
            .map(|i| format!("{prefix}k{i}"))
            .filter(|k| server_of(&format!("{TABLE}-{k}"), 2) == 1)
            .take(5)
            .collect()
    };
    let stores: Vec<(&str, MemcachedStore)> = ["Redistribute", "Cancel", "Retry"]
        .into_iter()
        .map(|mode| (mode, open(&p.clone().with("memcached.failureMode", mode))))
        .collect();
    dead.kill();
    for (mode, store) in &stores {
        let mut t = thread(store);
        for key in &keys_of_dead(mode) {
            let started = Instant::now();
            let status = t.insert(TABLE, key, &record(&[("f", "v")]));
            let took = started.elapsed();
            match *mode {
                // Java's default: the next server that is up takes it.
                "Redistribute" => assert_eq!(status, Status::Ok, "{key}"),
                "Cancel" => {
                    assert_eq!(status, Status::ServiceUnavailable);
                    assert!(took < Duration::from_millis(250), "{took:?}");
                }
                _ => {
                    // Waits for the server up to the operation timeout.
                    assert_eq!(status, Status::ServiceUnavailable);
                    assert!(took >= Duration::from_millis(250), "{took:?}");
                }
            }
        }
    }
    // The keys of the dead server went to the live one.
    for key in keys_of_dead("Redistribute") {
        assert!(alive.get(&format!("{TABLE}-{key}")).is_some(), "{key}");
    }
    // Retry: a server back within the timeout takes the operation.
    let (_, retry) = &stores[2];
    let mut t = thread(retry);
    let key = keys_of_dead("back")[0].clone();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(100));
            dead.restart();
        });
        let started = Instant::now();
        let status = loop {
            let status = t.insert(TABLE, &key, &record(&[("f", "v")]));
            if status == Status::Ok || started.elapsed() > Duration::from_secs(5) {
                break status;
            }
        };
        assert_eq!(status, Status::Ok);
    });
}

#[test]
fn gauges_show_the_servers_items_bytes_and_hit_ratio() {
    let servers = [Memcached::start(), Memcached::start()];
    let store = open(&props(&[&servers[0], &servers[1]]));
    let mut t = thread(&store);
    let mut sample = Vec::new();
    store.gauges(&mut sample);
    assert_eq!(gauge(&sample, "memcached.servers_up"), Some(2.0));
    assert_eq!(gauge(&sample, "memcached.curr_items"), Some(0.0));
    for i in 0..40 {
        let key = format!("g{i}");
        assert_eq!(t.insert(TABLE, &key, &record(&[("f", "v")])), Status::Ok);
    }
    // 40 hits and 10 misses since the first sample.
    for i in 0..50 {
        let _ = read(&mut *t, &format!("g{i}"));
    }
    sample.clear();
    store.gauges(&mut sample);
    assert_eq!(gauge(&sample, "memcached.curr_items"), Some(40.0));
    assert!(gauge(&sample, "memcached.bytes").unwrap() > 40.0 * 10.0);
    assert_eq!(gauge(&sample, "memcached.evictions"), Some(0.0));
    assert_eq!(gauge(&sample, "memcached.hit_ratio"), Some(0.8));
    let ratio = sample.iter().find(|g| g.name == "memcached.hit_ratio");
    assert_eq!(ratio.map(|g| g.kind), Some(GaugeKind::Ratio));
    // No gets since: no ratio in this sample.
    sample.clear();
    store.gauges(&mut sample);
    assert_eq!(gauge(&sample, "memcached.hit_ratio"), None);
    let names = store.gauge_names();
    assert!(sample.iter().all(|g| names.contains(&g.name)));
    let kind = |name: &str| sample.iter().find(|g| g.name == name).map(|g| g.kind);
    assert_eq!(kind("memcached.bytes"), Some(GaugeKind::Bytes));
    assert_eq!(kind("memcached.curr_items"), Some(GaugeKind::Count));
    assert_eq!(kind("memcached.evictions"), Some(GaugeKind::Count));
    assert_eq!(kind("memcached.servers_up"), Some(GaugeKind::Count));
    assert_eq!(store.engine_info().name, "memcached");
    assert!(
        store.engine_info().version.starts_with("1."),
        "{:?}",
        store.engine_info()
    );
}

#[test]
fn an_unreachable_server_fails_to_open_naming_it() {
    let server = Memcached::start();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = Properties::new().with(
        "memcached.hosts",
        format!("{},127.0.0.1:{closed}", server.addr()),
    );
    let e = MemcachedStore::open(&p).unwrap_err().to_string();
    assert!(
        e.starts_with("cannot open memcached: cannot connect to 127.0.0.1:")
            && e.contains(&closed.to_string()),
        "{e}"
    );
}

/// A server that answers, but not in the protocol asked for, is named.
#[test]
fn a_server_speaking_another_protocol_is_refused_at_open() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let talker = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 64];
        let _ = s.read(&mut buf);
        let _ = s.write_all(b"-ERR unknown command\r\n");
    });
    let p = Properties::new().with("memcached.hosts", format!("127.0.0.1:{port}"));
    let e = MemcachedStore::open(&p).unwrap_err().to_string();
    assert!(
        e.contains("does not answer as a memcached server speaking the text protocol"),
        "{e}"
    );
    talker.join().unwrap();
}
