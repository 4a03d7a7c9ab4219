//! One thread's update and read throughput against a Redis server, to
//! compare with `redis-benchmark -c 1 -P 1 -t set,get -d 3`.
//!
//! `cargo run --release -p ycsb-redis --example throughput -- [port] [ops] [pipeline]`

use std::time::Instant;

use ycsb_db::StoreContext;
use ycsb_db::{Fields, Properties, ReadOp, Record, Status, Store, ThreadContext};
use ycsb_redis::RedisStore;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let port = args.get(1).map_or("6379", String::as_str);
    let ops: usize = args.get(2).map_or(Ok(100_000), |s| s.parse())?;
    let pipeline = args.get(3).map_or("1", String::as_str);
    let p = Properties::new()
        .with("redis.port", port)
        .with("redis.pipeline", pipeline)
        .with("redis.index", "none");
    let store = RedisStore::open(&StoreContext::new(&p))?;
    let mut t = store.thread(ThreadContext::new(0, 1))?;
    let mut values = Record::new();
    values.push("value", b"xxx");
    let mut failed = 0usize;
    let started = Instant::now();
    for i in 0..ops {
        let key = if i % 2 == 0 { "key:a" } else { "key:b" };
        if !t.insert("usertable", key, &values).is_ok() {
            failed += 1;
        }
    }
    t.cleanup()?;
    let secs = started.elapsed().as_secs_f64();
    println!("HMSET (insert, no index): {:.0} ops/sec", ops as f64 / secs);
    let mut t = store.thread(ThreadContext::new(0, 1))?;
    let mut out = Record::new();
    let started = Instant::now();
    for _ in 0..ops {
        out.clear();
        if t.read(&ReadOp::new("usertable", "key:a", Fields::All), &mut out) != Status::Ok {
            failed += 1;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!("HGETALL (read): {:.0} ops/sec", ops as f64 / secs);
    if failed > 0 {
        return Err(format!("{failed} operations failed").into());
    }
    Ok(())
}
