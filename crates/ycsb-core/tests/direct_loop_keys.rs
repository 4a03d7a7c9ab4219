//! The direct-engine loop (`examples/support/direct_loop.rs`, which
//! `cargo xtask engine-bench` runs beside ycsb) asks the engine for the
//! very keys a ycsb run with the same seed asks for, in the same order,
//! reads and updates alike, and updates the same field: the engine's work
//! is then the same in both, and the instructions between them are the
//! client's alone (issue 37's client share).

use std::collections::HashMap;
use std::sync::Mutex;

use ycsb_core::db::{
    codec, Fields, Properties, Record, RecordView, ScanResult, Status, Store, StoreError,
    StoreThread, ThreadContext,
};
use ycsb_core::properties::load_file;
use ycsb_core::Benchmark;
use ycsb_memory::MemoryStore;

#[allow(dead_code)]
#[path = "../examples/support/direct_loop.rs"]
mod direct_loop;

/// What one run-phase operation asked of the engine: the key, and for an
/// update the field it changed.
#[derive(Debug, PartialEq)]
struct Asked {
    key: String,
    updated_field: Option<String>,
}

const RECORDS: u64 = 300;
const OPERATIONS: u64 = 3_000;
const SEED: u64 = 7;

/// ycsb's run of workload A (one thread, seed `SEED`) against a memory
/// store that notes every read and update.
fn ycsb_asks() -> Vec<Asked> {
    #[derive(Default)]
    struct Noting {
        inner: MemoryStore,
        asked: Mutex<Vec<Asked>>,
    }
    struct NotingThread<'a> {
        store: &'a Noting,
        inner: Box<dyn StoreThread + 'a>,
    }
    impl Store for Noting {
        fn thread(&self, context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
            Ok(Box::new(NotingThread {
                store: self,
                inner: self.inner.thread(context)?,
            }))
        }
    }
    impl NotingThread<'_> {
        fn note(&self, key: &str, updated_field: Option<String>) {
            let key = key.to_string();
            self.store
                .asked
                .lock()
                .unwrap()
                .push(Asked { key, updated_field });
        }
    }
    impl StoreThread for NotingThread<'_> {
        fn read(&mut self, table: &str, key: &str, fields: Fields<'_>, out: &mut Record) -> Status {
            self.note(key, None);
            self.inner.read(table, key, fields, out)
        }
        fn read_in_place(
            &mut self,
            table: &str,
            key: &str,
            fields: Fields<'_>,
            scratch: &mut Record,
            visit: &mut dyn FnMut(RecordView<'_>),
        ) -> Status {
            self.note(key, None);
            self.inner.read_in_place(table, key, fields, scratch, visit)
        }
        fn scan(
            &mut self,
            table: &str,
            start_key: &str,
            count: usize,
            fields: Fields<'_>,
            out: &mut ScanResult,
        ) -> Status {
            self.inner.scan(table, start_key, count, fields, out)
        }
        fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
            let names: Vec<String> = values.iter().map(|f| f.name.to_string()).collect();
            assert_eq!(names.len(), 1, "workload A updates one field");
            self.note(key, names.into_iter().next());
            self.inner.update(table, key, values)
        }
        fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
            self.inner.insert(table, key, values)
        }
        fn delete(&mut self, table: &str, key: &str) -> Status {
            self.inner.delete(table, key)
        }
    }

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/workloada");
    let mut props = Properties::new();
    load_file(&path, &mut props).unwrap();
    let props = props
        .with("recordcount", RECORDS)
        .with("operationcount", OPERATIONS)
        .with("threadcount", 1)
        .with("seed", SEED);
    let bench = Benchmark::from_properties(&props).unwrap();
    let store = Noting::default();
    bench.load(&store).unwrap();
    store.asked.lock().unwrap().clear();
    bench.run(&store).unwrap();
    store.asked.into_inner().unwrap()
}

/// The direct loop's load and run of the same workload: the run's reads
/// are gets; its updates a get, then a put of the record with one field
/// changed (the load only puts new records).
fn direct_loop_asks() -> Vec<Asked> {
    #[derive(Default)]
    struct Engine {
        records: Mutex<HashMap<Vec<u8>, Vec<u8>>>,
        asked: Mutex<Vec<Asked>>,
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
            self.asked.lock().unwrap().push(Asked {
                key,
                updated_field: None,
            });
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
                assert_eq!(last.key.as_bytes(), key);
                last.updated_field = changed.into_iter().next();
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
    let updates = ycsb.iter().filter(|a| a.updated_field.is_some()).count();
    assert!(updates > 1_000 && updates < 2_000, "{updates} updates");
    for (n, (y, d)) in ycsb.iter().zip(&direct).enumerate() {
        assert_eq!(y, d, "operation {n}");
    }
    assert_eq!(ycsb.len(), direct.len());
}
