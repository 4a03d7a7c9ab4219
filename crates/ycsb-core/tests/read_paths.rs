//! Which read the workload asks a store for: in place unless it keeps the
//! values to verify them, through the runner's error-budget wrapper.

use std::sync::atomic::{AtomicU64, Ordering};

use ycsb_core::db::{
    Fields, Properties, Record, RecordView, ScanResult, Status, Store, StoreError, StoreThread,
    ThreadContext,
};
use ycsb_core::properties::load_file;
use ycsb_core::Benchmark;
use ycsb_memory::MemoryStore;

/// A memory store that counts the two kinds of reads.
#[derive(Default)]
struct Spy {
    inner: MemoryStore,
    copied: AtomicU64,
    in_place: AtomicU64,
    fields_seen: AtomicU64,
}

struct SpyThread<'a> {
    spy: &'a Spy,
    inner: Box<dyn StoreThread + 'a>,
}

impl Store for Spy {
    fn thread(&self, context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(SpyThread {
            spy: self,
            inner: self.inner.thread(context)?,
        }))
    }
}

impl StoreThread for SpyThread<'_> {
    fn read(&mut self, table: &str, key: &str, fields: Fields<'_>, out: &mut Record) -> Status {
        self.spy.copied.fetch_add(1, Ordering::Relaxed);
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
        self.spy.in_place.fetch_add(1, Ordering::Relaxed);
        let mut record = Record::new();
        let status = self.inner.read(table, key, fields, &mut record);
        if status.is_ok() {
            self.spy
                .fields_seen
                .fetch_add(record.len() as u64, Ordering::Relaxed);
            assert!(scratch.is_empty(), "scratch arrives empty");
            visit(RecordView::from(&record));
        }
        status
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
        self.inner.update(table, key, values)
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        self.inner.insert(table, key, values)
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        self.inner.delete(table, key)
    }
}

/// Reads (copied, in place) and VERIFY operations of a run of `workload`.
fn reads(workload: &str, integrity: bool) -> (u64, u64, u64) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../workloads")
        .join(workload);
    let mut props = Properties::new();
    load_file(&path, &mut props).unwrap();
    let props = props
        .with("recordcount", 50)
        .with("operationcount", 400)
        .with("threadcount", 2)
        .with("dataintegrity", integrity);
    let bench = Benchmark::from_properties(&props).unwrap();
    let spy = Spy::default();
    bench.load(&spy).unwrap();
    let outcome = bench.run(&spy).unwrap();
    let verified = outcome
        .report
        .sections
        .iter()
        .find(|s| s.name == "VERIFY")
        .map_or(0, |s| s.operations);
    if !integrity {
        // Every record of the core workloads has 10 fields, all read.
        assert_eq!(
            spy.fields_seen.load(Ordering::Relaxed),
            10 * spy.in_place.load(Ordering::Relaxed)
        );
    }
    (
        spy.copied.load(Ordering::Relaxed),
        spy.in_place.load(Ordering::Relaxed),
        verified,
    )
}

#[test]
fn reads_are_in_place_unless_values_are_verified() {
    // Workload C reads only; F reads and read-modify-writes half and half.
    for workload in ["workloadc", "workloadf"] {
        let (copied, in_place, verified) = reads(workload, false);
        assert_eq!((copied, in_place, verified), (0, 400, 0), "{workload}");
        let (copied, in_place, verified) = reads(workload, true);
        assert_eq!((copied, in_place, verified), (400, 0, 400), "{workload}");
    }
}
