//! The redis store against real redis-server processes: standalone, a
//! three-node Redis Cluster, a password, pipelining and a server killed
//! mid-run.

use std::time::{Duration, Instant};

use ycsb_db::testing::{assert_conforms, Contract, Scans, UpdateMissing};
use ycsb_db::StoreContext;
use ycsb_db::{
    Fields, Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store, ThreadContext,
};
use ycsb_redis::testing::{RedisCluster, RedisServer};
use ycsb_redis::RedisStore;

const TABLE: &str = "usertable";

fn open(properties: &Properties) -> RedisStore {
    RedisStore::open(&StoreContext::new(properties)).expect("store opens")
}

fn props(server: &RedisServer) -> Properties {
    Properties::new()
        .with("redis.host", "127.0.0.1")
        .with("redis.port", server.port)
}

fn record(i: usize) -> Record {
    let mut r = Record::new();
    for f in 0..3 {
        r.push(&format!("field{f}"), format!("value-{i}-{f}").as_bytes());
    }
    r
}

fn key(i: usize) -> String {
    format!("user{i:03}")
}

/// Java's `String.hashCode()`, to predict the order of hash-index scans.
fn java_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)))
}

/// Runs every CoreWorkload operation against `store` and checks results.
fn exercise(store: &dyn Store, lex: bool) {
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let n = 60;
    for i in 0..n {
        assert_eq!(
            t.insert(TABLE, &key(i), &record(i)),
            Status::Ok,
            "insert {i}"
        );
    }
    let mut out = Record::new();
    for i in 0..n {
        out.clear();
        assert_eq!(
            t.read(&ReadOp::new(TABLE, &key(i), Fields::All), &mut out),
            Status::Ok
        );
        assert_eq!(out.len(), 3);
        assert_eq!(out.get("field2"), Some(format!("value-{i}-2").as_bytes()));
    }
    let only = vec!["field1".to_string()];
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, &key(5), Fields::Only(&only)), &mut out),
        Status::Ok
    );
    assert_eq!(out.len(), 1);
    assert_eq!(out.get("field1"), Some(&b"value-5-1"[..]));
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "nosuchkey", Fields::All), &mut out),
        Status::NotFound
    );
    assert!(out.is_empty());

    let mut change = Record::new();
    change.push("field1", b"changed");
    assert_eq!(t.update(TABLE, &key(1), &change), Status::Ok);
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, &key(1), Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.get("field1"), Some(&b"changed"[..]));
    assert_eq!(out.get("field0"), Some(&b"value-1-0"[..]));

    assert_eq!(t.delete(TABLE, &key(2)), Status::Ok);
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, &key(2), Fields::All), &mut out),
        Status::NotFound
    );
    assert_eq!(t.delete(TABLE, &key(2)), Status::NotFound);

    // The keys a scan must return: by key (lex index) or by Java hash then
    // key (hash index, Redis orders equal scores by member).
    let mut order: Vec<String> = (0..n).filter(|&i| i != 2).map(key).collect();
    if !lex {
        order.sort_by_key(|k| (java_hash(k), k.clone()));
    }
    let mut scan = ScanResult::new();
    for start in [0usize, 1, 10, 57] {
        let first = order.iter().position(|k| *k == key(start)).unwrap();
        let expected: Vec<&String> = order[first..].iter().take(7).collect();
        scan.clear();
        assert_eq!(
            t.scan(&ScanOp::new(TABLE, &key(start), 7, Fields::All), &mut scan),
            Status::Ok
        );
        let got: Vec<String> = scan.iter().map(|(k, _)| k.to_string()).collect();
        assert_eq!(
            got.iter().collect::<Vec<_>>(),
            expected,
            "scan from {start}"
        );
        for (k, r) in scan.iter() {
            let i: usize = k[4..].parse().unwrap();
            assert_eq!(r.len(), 3);
            assert_eq!(r.get("field0"), Some(format!("value-{i}-0").as_bytes()));
        }
    }
    scan.clear();
    assert_eq!(
        t.scan(
            &ScanOp::new(TABLE, &key(3), 4, Fields::Only(&only)),
            &mut scan
        ),
        Status::Ok
    );
    assert_eq!(scan.len(), 4);
    assert!(scan
        .iter()
        .all(|(_, r)| r.len() == 1 && r.get("field1").is_some()));
    t.cleanup().unwrap();
}

/// What the redis store promises with each `redis.index`: updates are
/// `HSET`s, which make a missing record.
fn contract(index: &str) -> Contract {
    let scans = match index {
        "hash" => Scans::StoreOrder,
        "lex" => Scans::KeyOrder,
        _ => Scans::NotImplemented,
    };
    Contract::new()
        .with_scans(scans)
        .with_update_missing(UpdateMissing::Creates)
}

#[test]
fn standalone_keeps_the_store_contract() {
    // A server per index: the hash and lex indexes share `_indices`.
    for index in ["hash", "lex", "none"] {
        let server = RedisServer::start(&[]);
        let store = open(&props(&server).with("redis.index", index));
        eprintln!("redis standalone, redis.index={index}");
        assert_conforms(&store, &contract(index));
    }
}

#[test]
fn cluster_keeps_the_store_contract() {
    let cluster = RedisCluster::start();
    for index in ["hash", "lex"] {
        let properties = Properties::new()
            .with("redis.host", cluster.nodes[1].addr())
            .with("redis.cluster", "true")
            .with("redis.index", index);
        eprintln!("redis cluster, redis.index={index}");
        assert_conforms(&open(&properties), &contract(index));
    }
}

#[test]
fn standalone_hash_index_runs_every_operation() {
    let server = RedisServer::start(&[]);
    let store = open(&props(&server));
    assert_eq!(store.engine_info().name, "Redis");
    assert!(!store.engine_info().version.is_empty());
    exercise(&store, false);
    // Java's schema: a hash per record and the _indices sorted set.
    assert_eq!(server.cli(&["type", "user000"]).trim(), "hash");
    assert_eq!(server.cli(&["zcard", "_indices"]).trim(), "59");
    assert_eq!(
        server.cli(&["zscore", "_indices", "user007"]).trim(),
        java_hash("user007").to_string()
    );
}

#[test]
fn standalone_lex_index_scans_in_key_order() {
    let server = RedisServer::start(&[]);
    let store = open(&props(&server).with("redis.index", "lex"));
    exercise(&store, true);
}

#[test]
fn without_index_scans_are_not_implemented() {
    let server = RedisServer::start(&[]);
    let store = open(&props(&server).with("redis.index", "none"));
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert(TABLE, "k", &record(0)), Status::Ok);
    let mut scan = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, "k", 5, Fields::All), &mut scan),
        Status::NotImplemented
    );
    assert_eq!(server.cli(&["exists", "_indices"]).trim(), "0");
}

#[test]
fn cluster_runs_every_operation() {
    let cluster = RedisCluster::start();
    // One seed is enough; the store learns the others from CLUSTER SLOTS.
    let seed = &cluster.nodes[1];
    let properties = Properties::new()
        .with("redis.host", seed.addr())
        .with("redis.cluster", "true");
    let store = open(&properties);
    exercise(&store, false);
    let lex = open(&properties.clone().with("redis.index", "lex"));
    // The lex run shares the keys: start from a clean cluster state.
    for node in &cluster.nodes {
        node.cli(&["flushall"]);
    }
    exercise(&lex, true);
    // The records really are spread over the three masters.
    for node in &cluster.nodes {
        let keys: u64 = node.cli(&["dbsize"]).trim().parse().unwrap();
        assert!(keys > 5, "node {} holds {keys} keys", node.port);
    }
}

#[test]
fn cluster_follows_moved_redirections() {
    let cluster = RedisCluster::start();
    let properties = Properties::new()
        .with("redis.host", cluster.nodes[0].addr())
        .with("redis.cluster", "true");
    let store = open(&properties);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert(TABLE, "user001", &record(1)), Status::Ok);
    // A pipelined store whose slot table will be stale too.
    let piped = open(&properties.clone().with("redis.pipeline", "3"));
    let mut p = piped.thread(ThreadContext::new(0, 1)).unwrap();
    // Move the key's slot to another master behind the store's back: its
    // slot table is now stale and the server answers MOVED.
    let slot = cluster.nodes[0].cli(&["cluster", "keyslot", "user001"]);
    let slot = slot.trim();
    let owner = cluster
        .nodes
        .iter()
        .find(|n| n.cli(&["cluster", "countkeysinslot", slot]).trim() == "1")
        .unwrap();
    let target = cluster.nodes.iter().find(|n| n.port != owner.port).unwrap();
    let target_id = target.cli(&["cluster", "myid"]).trim().to_string();
    let owner_id = owner.cli(&["cluster", "myid"]).trim().to_string();
    let port = target.port.to_string();
    assert!(target
        .cli(&["cluster", "setslot", slot, "importing", &owner_id])
        .contains("OK"));
    assert!(owner
        .cli(&["cluster", "setslot", slot, "migrating", &target_id])
        .contains("OK"));
    let moved = owner.cli(&[
        "migrate",
        "127.0.0.1",
        &port,
        "",
        "0",
        "5000",
        "keys",
        "user001",
    ]);
    assert!(moved.contains("OK"), "{moved}");
    for node in &cluster.nodes {
        node.cli(&["cluster", "setslot", slot, "node", &target_id]);
    }
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user001", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.len(), 3);
    assert_eq!(t.update(TABLE, "user001", &record(9)), Status::Ok);
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user001", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.get("field0"), Some(&b"value-9-0"[..]));
    // Batched writes answered MOVED are sent again to the new owner.
    assert_eq!(p.update(TABLE, "user001", &record(20)), Status::BatchedOk);
    assert_eq!(p.update(TABLE, "user001", &record(21)), Status::BatchedOk);
    assert_eq!(p.insert(TABLE, "user002", &record(2)), Status::Ok);
    p.cleanup().unwrap();
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user001", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.get("field0"), Some(&b"value-21-0"[..]));
    assert_eq!(
        target.cli(&["cluster", "countkeysinslot", slot]).trim(),
        "1"
    );
    assert_eq!(owner.cli(&["cluster", "countkeysinslot", slot]).trim(), "0");
}

#[test]
fn cluster_pipelined_writes_reach_every_node() {
    let cluster = RedisCluster::start();
    let properties = Properties::new()
        .with(
            "redis.host",
            format!("{},{}", cluster.nodes[0].addr(), cluster.nodes[2].addr()),
        )
        .with("redis.cluster", "true")
        .with("redis.pipeline", "16");
    let store = open(&properties);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    for i in 0..100 {
        assert!(t.insert(TABLE, &key(i), &record(i)).is_ok(), "insert {i}");
    }
    // A scan sends the queued writes first, on every node.
    let mut scan = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, &key(0), 100, Fields::All), &mut scan),
        Status::Ok
    );
    let mut first = order_by_hash((0..100).map(key).collect());
    first.retain(|k| java_hash(k) >= java_hash(&key(0)));
    assert_eq!(scan.len(), first.len());
    for i in 0..20 {
        assert!(t.delete(TABLE, &key(i)).is_ok());
    }
    t.cleanup().unwrap();
    let total: u64 = cluster
        .nodes
        .iter()
        .map(|n| n.cli(&["dbsize"]).trim().parse::<u64>().unwrap())
        .sum();
    // 80 hashes and the index.
    assert_eq!(total, 81);
}

fn order_by_hash(mut keys: Vec<String>) -> Vec<String> {
    keys.sort_by_key(|k| (java_hash(k), k.clone()));
    keys
}

#[test]
fn password_is_used_and_never_shown() {
    const PASSWORD: &str = "s3cr3t-Pa55word";
    let server = RedisServer::start(&["--requirepass", PASSWORD]);

    let err = RedisStore::open(&StoreContext::new(&props(&server)))
        .unwrap_err()
        .to_string();
    assert!(err.contains("redis.password"), "{err}");

    let wrong = "wr0ng-Pa55word";
    let p = props(&server).with("redis.password", wrong);
    let err = RedisStore::open(&StoreContext::new(&p)).unwrap_err();
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains(wrong), "{shown}");
    assert!(shown.contains("refused the password"), "{shown}");

    let p = props(&server).with("redis.password", PASSWORD);
    let store = open(&p);
    let shown = format!("{store:?} {:?}", store.config());
    assert!(!shown.contains(PASSWORD), "{shown}");
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert(TABLE, "user1", &record(1)), Status::Ok);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user1", Fields::All), &mut out),
        Status::Ok
    );

    // A password changed under a running store: operations are refused
    // (FORBIDDEN) and reconnections report it without the password.
    server.cli(&[
        "-a",
        PASSWORD,
        "--no-auth-warning",
        "config",
        "set",
        "requirepass",
        "other-pw",
    ]);
    server.cli(&[
        "-a",
        "other-pw",
        "--no-auth-warning",
        "client",
        "kill",
        "type",
        "normal",
    ]);
    out.clear();
    let status = t.read(&ReadOp::new(TABLE, "user1", Fields::All), &mut out);
    assert_eq!(status, Status::ServiceUnavailable);
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user1", Fields::All), &mut out),
        Status::Forbidden
    );
    let err = store
        .thread(ThreadContext::new(1, 2))
        .err()
        .unwrap()
        .to_string();
    assert!(!err.contains(PASSWORD) && err.contains("refused"), "{err}");
}

#[test]
fn pipelined_writes_are_batched_and_flushed() {
    let server = RedisServer::start(&[]);
    let store = open(&props(&server).with("redis.pipeline", "4"));
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let checker = open(&props(&server));
    let mut check = checker.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    for i in 0..3 {
        assert_eq!(t.insert(TABLE, &key(i), &record(i)), Status::BatchedOk);
    }
    out.clear();
    assert_eq!(
        check.read(&ReadOp::new(TABLE, &key(0), Fields::All), &mut out),
        Status::NotFound
    );
    assert_eq!(t.insert(TABLE, &key(3), &record(3)), Status::Ok);
    for i in 0..4 {
        out.clear();
        assert_eq!(
            check.read(&ReadOp::new(TABLE, &key(i), Fields::All), &mut out),
            Status::Ok,
            "{i}"
        );
    }
    // A read sends the queued writes with it, so it sees them.
    assert_eq!(t.insert(TABLE, &key(4), &record(4)), Status::BatchedOk);
    assert_eq!(t.delete(TABLE, &key(0)), Status::BatchedOk);
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, &key(4), Fields::All), &mut out),
        Status::Ok
    );
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, &key(0), Fields::All), &mut out),
        Status::NotFound
    );
    // Cleanup sends what is left.
    assert_eq!(t.update(TABLE, &key(1), &record(11)), Status::BatchedOk);
    t.cleanup().unwrap();
    out.clear();
    assert_eq!(
        check.read(&ReadOp::new(TABLE, &key(1), Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.get("field0"), Some(&b"value-11-0"[..]));
    // 5 inserts + 1 update went as HMSET, each insert with a ZADD.
    let stats = server.cli(&["info", "commandstats"]);
    assert!(stats.contains("cmdstat_hmset:calls=6"), "{stats}");
    assert!(stats.contains("cmdstat_zadd:calls=5"), "{stats}");
}

/// The server's `total_reads_processed`: how many times it read from a
/// client socket (a pipeline arrives in one read, or a few).
fn reads_processed(server: &RedisServer) -> u64 {
    let stats = server.cli(&["info", "stats"]);
    stats
        .lines()
        .find_map(|l| l.strip_prefix("total_reads_processed:"))
        .unwrap_or_else(|| panic!("{stats}"))
        .trim()
        .parse()
        .unwrap()
}

/// A batch (`batch.size`) is one pipeline: 200 inserts and 200 reads in
/// batches of 50 reach the server in a few socket reads per batch, where
/// one by one they take one each; every record has its own status.
#[test]
fn a_batch_is_one_pipeline() {
    let server = RedisServer::start(&[]);
    let store = open(&props(&server));
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let before = reads_processed(&server);
    for chunk in 0..4 {
        let mut batch = ycsb_db::Batch::new();
        for i in chunk * 50..chunk * 50 + 50 {
            batch.push(&key(i)).merge_from(&record(i));
        }
        let mut statuses = vec![Status::Error; 50];
        assert_eq!(t.insert_batch(TABLE, &batch, &mut statuses), Status::Ok);
        assert!(statuses.iter().all(|s| *s == Status::Ok), "{statuses:?}");
        let mut batch = ycsb_db::Batch::new();
        for i in chunk * 50..chunk * 50 + 50 {
            batch.push(&key(if i % 10 == 9 { 1000 + i } else { i }));
        }
        let mut out = vec![Record::new(); 50];
        assert_eq!(
            t.read_batch(TABLE, &batch, Fields::All, &mut out, &mut statuses),
            Status::NotFound
        );
        for (i, status) in statuses.iter().enumerate() {
            let expected = if i % 10 == 9 {
                Status::NotFound
            } else {
                Status::Ok
            };
            assert_eq!(*status, expected, "{i}");
        }
        assert_eq!(out[0].get("field0"), record(chunk * 50).get("field0"));
    }
    // Eight batches, and the INFO calls' own reads.
    let batched = reads_processed(&server) - before;
    assert!(batched < 40, "{batched} socket reads for 8 batches of 50");
    let before = reads_processed(&server);
    for i in 0..50 {
        assert_eq!(t.insert(TABLE, &key(i), &record(i)), Status::Ok);
    }
    let single = reads_processed(&server) - before;
    assert!(single >= 50, "{single} socket reads for 50 single inserts");
}

#[test]
fn lost_batched_writes_are_counted() {
    let mut server = RedisServer::start(&[]);
    let store = open(&props(&server).with("redis.pipeline", "4"));
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert(TABLE, &key(0), &record(0)), Status::BatchedOk);
    assert_eq!(t.insert(TABLE, &key(1), &record(1)), Status::BatchedOk);
    server.kill();
    assert_eq!(t.insert(TABLE, &key(2), &record(2)), Status::BatchedOk);
    // The batch fails as a whole: this write reports the first loss ...
    assert_eq!(
        t.insert(TABLE, &key(3), &record(3)),
        Status::ServiceUnavailable
    );
    // ... and cleanup the three not yet reported.
    let err = t.cleanup().unwrap_err().to_string();
    assert!(err.contains("3 batched writes failed"), "{err}");
}

#[test]
fn killed_server_gives_error_statuses_then_reconnects() {
    let mut server = RedisServer::start(&[]);
    let store = open(&props(&server).with("redis.timeout", "500"));
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    for i in 0..20 {
        assert_eq!(t.insert(TABLE, &key(i), &record(i)), Status::Ok);
    }
    server.kill();
    let mut failed = 0;
    for i in 0..20 {
        out.clear();
        let status = t.read(&ReadOp::new(TABLE, &key(i), Fields::All), &mut out);
        assert!(!status.is_ok() && status != Status::NotFound, "{status}");
        failed += 1;
    }
    let mut scan = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, &key(0), 5, Fields::All), &mut scan),
        Status::ServiceUnavailable
    );
    assert_eq!(
        t.update(TABLE, &key(0), &record(0)),
        Status::ServiceUnavailable
    );
    assert_eq!(t.delete(TABLE, &key(0)), Status::ServiceUnavailable);
    assert_eq!(failed, 20);

    server.restart();
    // The store reconnects after its backoff (at most a second).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match t.insert(TABLE, &key(100), &record(100)) {
            Status::Ok => break,
            Status::ServiceUnavailable => {}
            other => panic!("unexpected {other}"),
        }
        assert!(Instant::now() < deadline, "no reconnection");
        std::thread::sleep(Duration::from_millis(10));
    }
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, &key(100), Fields::All), &mut out),
        Status::Ok
    );
    // The restarted server kept nothing (no persistence): a clean miss.
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, &key(1), Fields::All), &mut out),
        Status::NotFound
    );
    t.cleanup().unwrap();
}

#[test]
fn stalled_server_times_out_then_recovers() {
    let server = RedisServer::start(&[]);
    let store = open(&props(&server).with("redis.timeout", "200"));
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert(TABLE, "k", &record(0)), Status::Ok);
    ycsb_db::testing::stop_process(server.child().id());
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "k", Fields::All), &mut out),
        Status::ServiceUnavailable
    );
    ycsb_db::testing::continue_process(server.child().id());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        out.clear();
        if t.read(&ReadOp::new(TABLE, "k", Fields::All), &mut out) == Status::Ok {
            break;
        }
        assert!(Instant::now() < deadline, "no recovery after SIGCONT");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn unreachable_server_fails_to_open_with_its_address() {
    let port = ycsb_redis::testing::free_port(false);
    let p = Properties::new()
        .with("redis.port", port)
        .with("redis.timeout", "300");
    let err = RedisStore::open(&StoreContext::new(&p))
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
}
