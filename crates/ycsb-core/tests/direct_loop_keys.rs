//! The direct-engine loop (`examples/support/direct_loop.rs`, which
//! `cargo xtask engine-bench` runs beside ycsb) asks the engine for the
//! very keys a ycsb run with the same seed asks for, in the same order,
//! reads and updates alike, and updates the same field: the engine's work
//! is then the same in both, and the instructions between them are the
//! client's alone (issue 37's client share).

mod common;

use std::collections::HashMap;
use std::sync::Mutex;

use common::{shipped_workload, Asked, Noting};
use ycsb_core::db::{codec, Fields, Record};
use ycsb_core::Benchmark;

#[allow(dead_code)]
#[path = "../examples/support/direct_loop.rs"]
mod direct_loop;

const RECORDS: u64 = 300;
const OPERATIONS: u64 = 3_000;
const SEED: u64 = 7;

/// ycsb's run of workload A (one thread, seed `SEED`) against a store that
/// notes every read and update, as (key, the field an update changed).
fn ycsb_asks() -> Vec<(String, Option<String>)> {
    let props = shipped_workload("workloada")
        .with("recordcount", RECORDS)
        .with("operationcount", OPERATIONS)
        .with("threadcount", 1)
        .with("seed", SEED);
    let bench = Benchmark::from_properties(&props).unwrap();
    let store = Noting::default();
    bench.load(&store).unwrap();
    store.take();
    bench.run(&store).unwrap();
    store
        .take()
        .into_iter()
        .map(|asked| match asked {
            Asked::Read { key, .. } => (key, None),
            Asked::Update { key, fields } => {
                assert_eq!(fields.len(), 1, "workload A updates one field");
                (key, fields.into_iter().next())
            }
        })
        .collect()
}

/// The direct loop's load and run of the same workload: the run's reads
/// are gets; its updates a get, then a put of the record with one field
/// changed (the load only puts new records).
fn direct_loop_asks() -> Vec<(String, Option<String>)> {
    #[derive(Default)]
    struct Engine {
        records: Mutex<HashMap<Vec<u8>, Vec<u8>>>,
        asked: Mutex<Vec<(String, Option<String>)>>,
    }
    impl direct_loop::DirectEngine for Engine {
        fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String> {
            let records = self.records.lock().unwrap();
            let Some(value) = records.get(key) else {
                return Ok(false);
            };
            if let Some(out) = copy_to {
                out.clear();
                out.extend_from_slice(value);
            }
            // The load only puts: every get is the run's.
            let key = String::from_utf8(key.to_vec()).unwrap();
            self.asked.lock().unwrap().push((key, None));
            Ok(true)
        }
        fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
            let mut records = self.records.lock().unwrap();
            if let Some(old) = records.get(key) {
                // An update: the field whose value changed.
                let decode = |bytes: &[u8]| {
                    let mut record = Record::new();
                    codec::decode(bytes, Fields::All, &mut record).unwrap();
                    record
                };
                let (old, new) = (decode(old), decode(value));
                let changed: Vec<String> = old
                    .iter()
                    .zip(new.iter())
                    .filter(|(a, b)| a.value != b.value)
                    .map(|(a, _)| a.name.to_string())
                    .collect();
                assert_eq!(changed.len(), 1, "one field changed");
                let mut asked = self.asked.lock().unwrap();
                let last = asked.last_mut().expect("an update reads first");
                assert_eq!(last.0.as_bytes(), key);
                last.1 = changed.into_iter().next();
            }
            records.insert(key.to_vec(), value.to_vec());
            Ok(())
        }
        fn compact(&self) -> Result<(), String> {
            Ok(())
        }
    }

    let args = [
        "dir=unused".to_string(),
        format!("recordcount={RECORDS}"),
        format!("operationcount={OPERATIONS}"),
        "threadcount=1".to_string(),
        format!("seed={SEED}"),
        "values=fresh".to_string(),
    ];
    let engine = Engine::default();
    direct_loop::drive(&engine, &direct_loop::parse_args(args.into_iter()).unwrap());
    engine.asked.into_inner().unwrap()
}

#[test]
fn the_direct_loop_asks_for_what_ycsb_asks_for() {
    let (ycsb, direct) = (ycsb_asks(), direct_loop_asks());
    assert_eq!(ycsb.len() as u64, OPERATIONS);
    let updates = ycsb.iter().filter(|(_, field)| field.is_some()).count();
    assert!(updates > 1_000 && updates < 2_000, "{updates} updates");
    for (n, (y, d)) in ycsb.iter().zip(&direct).enumerate() {
        assert_eq!(y, d, "operation {n}");
    }
    assert_eq!(ycsb.len(), direct.len());
}
