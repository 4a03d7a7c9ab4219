//! Benchmark your own engine: implement the two store traits, then run
//! Java YCSB's workload A against it and print Java's report.
//!
//! `cargo run -p ycsb-examples --example own_store`

use std::collections::HashMap;
use std::error::Error;
use std::sync::RwLock;
use ycsb_db::{ReadOp, ScanOp};

use ycsb_core::db::{
    EngineInfo, Properties, Record, ScanResult, Status, Store, StoreError, StoreThread,
    ThreadContext,
};
use ycsb_core::measurement::TextExporter;
use ycsb_core::Benchmark;

/// The engine under test: a hash map behind a read-write lock. It has no
/// key order, so it does not implement scans.
#[derive(Default)]
struct HashEngine {
    records: RwLock<HashMap<String, Record>>,
}

/// One client thread's handle; this engine needs no per-thread state.
struct HashThread<'a> {
    engine: &'a HashEngine,
}

impl Store for HashEngine {
    fn thread(&self, _: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(HashThread { engine: self }))
    }

    fn engine_info(&self) -> EngineInfo {
        EngineInfo {
            name: "HashEngine".into(),
            version: "1.0".into(),
        }
    }
}

impl StoreThread for HashThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        let Ok(records) = self.engine.records.read() else {
            return Status::Error;
        };
        let Some(record) = records.get(op.key) else {
            return Status::NotFound;
        };
        for field in record.iter().filter(|f| op.fields.contains(f.name)) {
            out.push(field.name, field.value);
        }
        Status::Ok
    }

    fn scan(&mut self, _: &ScanOp<'_>, _: &mut ScanResult) -> Status {
        Status::NotImplemented
    }

    fn update(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        let Ok(mut records) = self.engine.records.write() else {
            return Status::Error;
        };
        match records.get_mut(key) {
            Some(record) => {
                record.merge_from(values);
                Status::Ok
            }
            None => Status::NotFound,
        }
    }

    fn insert(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        let Ok(mut records) = self.engine.records.write() else {
            return Status::Error;
        };
        records.insert(key.to_string(), values.clone());
        Status::Ok
    }

    fn delete(&mut self, _table: &str, key: &str) -> Status {
        let Ok(mut records) = self.engine.records.write() else {
            return Status::Error;
        };
        match records.remove(key) {
            Some(_) => Status::Ok,
            None => Status::NotFound,
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    // Workload A's mix, at a size that runs in a moment.
    let props = Properties::new()
        .with("recordcount", 10_000)
        .with("operationcount", 100_000)
        .with("readproportion", 0.5)
        .with("updateproportion", 0.5)
        .with("requestdistribution", "zipfian")
        .with("threadcount", 2)
        .with("seed", 1);
    let benchmark = Benchmark::from_properties(&props)?;
    let engine = HashEngine::default();

    let load = benchmark.load(&engine)?;
    let run = benchmark.run(&engine)?;
    let mut out = std::io::stdout().lock();
    let mut report = TextExporter::new(&mut out);
    report.write_phase(&load.report)?;
    report.write_phase(&run.report)?;

    let stored = engine.records.read().map(|r| r.len()).unwrap_or(0);
    assert_eq!(stored, 10_000, "every loaded record is in the engine");
    assert_eq!(run.operations, 100_000);
    Ok(())
}
