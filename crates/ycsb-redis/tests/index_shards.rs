//! The scan index spread over several sorted sets (`redis.index_shards`):
//! the store contract, the same scans as Java's single `_indices`, and the
//! index's load spread over a cluster's masters.

use ycsb_db::testing::{assert_conforms, Contract, Scans, UpdateMissing};
use ycsb_db::{
    Fields, Properties, Record, ScanOp, ScanResult, Status, Store, StoreContext, ThreadContext,
};
use ycsb_redis::testing::{RedisCluster, RedisServer};
use ycsb_redis::RedisStore;

const TABLE: &str = "usertable";

fn open(properties: &Properties) -> RedisStore {
    RedisStore::open(&StoreContext::new(properties)).expect("store opens")
}

fn standalone(server: &RedisServer, index: &str, shards: usize) -> Properties {
    Properties::new()
        .with("redis.host", "127.0.0.1")
        .with("redis.port", server.port)
        .with("redis.index", index)
        .with("redis.index_shards", shards)
}

fn cluster_props(cluster: &RedisCluster, index: &str, shards: usize) -> Properties {
    Properties::new()
        .with("redis.host", cluster.nodes[0].addr())
        .with("redis.cluster", "true")
        .with("redis.index", index)
        .with("redis.index_shards", shards)
}

fn contract(index: &str) -> Contract {
    let scans = if index == "lex" {
        Scans::KeyOrder
    } else {
        Scans::StoreOrder
    };
    Contract::new()
        .with_scans(scans)
        .with_update_missing(UpdateMissing::Creates)
}

#[test]
fn sharded_indexes_keep_the_store_contract() {
    let server = RedisServer::start(&[]);
    for index in ["lex", "hash"] {
        assert_conforms(&open(&standalone(&server, index, 8)), &contract(index));
    }
    let cluster = RedisCluster::start();
    for index in ["lex", "hash"] {
        assert_conforms(&open(&cluster_props(&cluster, index, 16)), &contract(index));
    }
}

/// The keys of every scan from `starts` of `count` records.
fn scans(store: &dyn Store, starts: &[String], count: usize) -> Vec<Vec<String>> {
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = ScanResult::new();
    starts
        .iter()
        .map(|start| {
            out.clear();
            assert_eq!(
                t.scan(&ScanOp::new(TABLE, start, count, Fields::All), &mut out),
                Status::Ok
            );
            out.iter().map(|(k, _)| k.to_string()).collect()
        })
        .collect()
}

/// The same data indexed once in `_indices` and once in 16 parts: every
/// scan answers the same keys in the same order, for both index orders.
#[test]
fn sharded_scans_answer_what_the_single_index_answers() {
    for index in ["lex", "hash"] {
        let single = RedisServer::start(&[]);
        let sharded = RedisServer::start(&[]);
        let stores = [
            open(&standalone(&single, index, 1)),
            open(&standalone(&sharded, index, 16)),
        ];
        let keys: Vec<String> = (0..400)
            .map(|i| format!("user{}", i * 7919 % 1000))
            .collect();
        for store in &stores {
            let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
            let mut r = Record::new();
            r.push("field0", b"v");
            for key in &keys {
                assert_eq!(t.insert(TABLE, key, &r), Status::Ok);
            }
            for key in keys.iter().step_by(10) {
                assert_eq!(t.delete(TABLE, key), Status::Ok);
            }
        }
        let starts: Vec<String> = keys.iter().step_by(13).cloned().collect();
        let [a, b] = [&stores[0], &stores[1]].map(|s| scans(s, &starts, 25));
        assert_eq!(a, b, "{index}");
        assert!(
            a.iter().any(|rows| rows.len() == 25),
            "{index}: scans return rows"
        );
        // Java's layout with one part: the set is `_indices` itself.
        assert!(single.cli(&["exists", "_indices"]).trim() == "1");
        assert!(sharded.cli(&["exists", "_indices"]).trim() == "0");
    }
}

/// With Java's single index one master gets every insert's ZADD and every
/// scan's ZRANGEBYLEX; with 16 parts over 3 masters (whose slot ranges
/// are thirds of the slot space), each master gets about a third of the
/// ZADDs (the parts of its slot range) and every scan asks each master.
#[test]
fn sixteen_parts_spread_the_index_over_the_masters() {
    let mut shares = Vec::new();
    for shards in [1, 16] {
        let cluster = RedisCluster::start();
        let store = open(&cluster_props(&cluster, "lex", shards));
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        let mut r = Record::new();
        r.push("field0", b"v");
        let inserts = 600;
        for i in 0..inserts {
            assert_eq!(t.insert(TABLE, &format!("user{i}"), &r), Status::Ok);
        }
        let mut out = ScanResult::new();
        for i in 0..60 {
            out.clear();
            assert_eq!(
                t.scan(
                    &ScanOp::new(TABLE, &format!("user{}", i * 10), 10, Fields::All),
                    &mut out
                ),
                Status::Ok
            );
        }
        let zadd: Vec<u64> = cluster.nodes.iter().map(|n| n.calls("zadd")).collect();
        let zrange: Vec<u64> = cluster
            .nodes
            .iter()
            .map(|n| n.calls("zrangebylex"))
            .collect();
        eprintln!(
            "index parts {shards}: ZADD per master {zadd:?}, ZRANGEBYLEX per master {zrange:?}"
        );
        assert_eq!(zadd.iter().sum::<u64>(), inserts);
        let busiest = *zadd.iter().max().unwrap() as f64 / inserts as f64;
        shares.push(busiest);
    }
    assert_eq!(shares[0], 1.0, "one master holds Java's _indices");
    assert!(
        shares[1] < 0.6,
        "16 parts: the busiest master took {:.0} % of the ZADDs",
        shares[1] * 100.0
    );
}
