//! A phase's runtime ends with its last client thread, as Java's does, not
//! when the status loop next wakes up.

use std::sync::Mutex;
use std::time::Instant;
use ycsb_db::{ReadOp, ScanOp};

use ycsb_core::db::{
    Properties, Record, ScanResult, Status, Store, StoreError, StoreThread, ThreadContext,
};
use ycsb_core::Benchmark;

/// A store that answers everything at once and notes when each client
/// thread cleaned up, the last thing a client thread does with it.
#[derive(Default)]
struct Quick {
    cleaned_up: Mutex<Vec<Instant>>,
}

struct QuickThread<'a>(&'a Quick);

impl Store for Quick {
    fn thread(&self, _: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(QuickThread(self)))
    }
}

impl StoreThread for QuickThread<'_> {
    fn read(&mut self, _: &ReadOp<'_>, _: &mut Record) -> Status {
        Status::Ok
    }
    fn scan(&mut self, _: &ScanOp<'_>, _: &mut ScanResult) -> Status {
        Status::Ok
    }
    fn update(&mut self, _: &str, _: &str, _: &Record) -> Status {
        Status::Ok
    }
    fn insert(&mut self, _: &str, _: &str, _: &Record) -> Status {
        Status::Ok
    }
    fn delete(&mut self, _: &str, _: &str) -> Status {
        Status::Ok
    }
    fn cleanup(&mut self) -> Result<(), StoreError> {
        self.0.cleaned_up.lock().unwrap().push(Instant::now());
        Ok(())
    }
}

#[test]
fn runtime_ends_with_the_last_client_thread() {
    // Ten operations take microseconds; the status loop naps 20 ms at a
    // time, so a runtime measured when it wakes would be about 20 ms.
    let props = Properties::new()
        .with("recordcount", 10)
        .with("operationcount", 10)
        .with("threadcount", 2)
        .with("readproportion", 1)
        .with("updateproportion", 0);
    let bench = Benchmark::from_properties(&props).unwrap();
    let store = Quick::default();
    let before = Instant::now();
    let outcome = bench.run(&store).unwrap();
    let last_cleanup = *store.cleaned_up.lock().unwrap().iter().max().unwrap();
    // The phase started after `before` and ended just after the last
    // cleanup; 10 ms of slack covers a preempted thread on a busy machine.
    let bound = last_cleanup.duration_since(before) + std::time::Duration::from_millis(10);
    assert!(
        outcome.runtime <= bound,
        "runtime {:?}, last cleanup {:?} after the call",
        outcome.runtime,
        last_cleanup.duration_since(before)
    );
}
