//! The records the workload hands a store: every field, in order, with
//! a value of Java's layout and the configured length, for a constant
//! length (the record framed once and filled in one run) and a varying
//! one (field by field), and one-field updates.

use std::sync::Mutex;
use ycsb_db::{ReadOp, ScanOp};

use ycsb_core::db::{
    Properties, Record, ScanResult, Status, Store, StoreError, StoreThread, ThreadContext,
};
use ycsb_core::Benchmark;

/// A store that keeps a copy of every record written to it.
#[derive(Default)]
struct Keeper {
    inserts: Mutex<Vec<Record>>,
    updates: Mutex<Vec<Record>>,
}

struct KeeperThread<'a>(&'a Keeper);

impl Store for Keeper {
    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(KeeperThread(self)))
    }
}

impl StoreThread for KeeperThread<'_> {
    fn read(&mut self, _: &ReadOp<'_>, _: &mut Record) -> Status {
        Status::Ok
    }

    fn scan(&mut self, _: &ScanOp<'_>, _: &mut ScanResult) -> Status {
        Status::Ok
    }

    fn update(&mut self, _: &str, _: &str, values: &Record) -> Status {
        self.0.updates.lock().unwrap().push(values.clone());
        Status::Ok
    }

    fn insert(&mut self, _: &str, _: &str, values: &Record) -> Status {
        self.0.inserts.lock().unwrap().push(values.clone());
        Status::Ok
    }

    fn delete(&mut self, _: &str, _: &str) -> Status {
        Status::Ok
    }
}

/// Whether `value` is Java's `RandomByteIterator` layout: groups of six
/// bytes from the masks 31, 63, 95, 31, 63, 95 plus `' '`.
fn java_layout(value: &[u8]) -> bool {
    value.iter().enumerate().all(|(i, &b)| match i % 6 {
        0 | 3 => (32..64).contains(&b),
        1 | 4 => (32..96).contains(&b),
        _ => (32..64).contains(&b) || (96..128).contains(&b),
    })
}

/// The inserts and updates of a load of 40 records and 200 workload A
/// operations with `extra` properties.
fn written(extra: &[(&str, &str)]) -> (Vec<Record>, Vec<Record>) {
    let mut props = Properties::new()
        .with("recordcount", 40)
        .with("operationcount", 200)
        .with("readproportion", 0.5)
        .with("updateproportion", 0.5)
        .with("threadcount", 2);
    for (name, value) in extra {
        props = props.with(*name, *value);
    }
    let bench = Benchmark::from_properties(&props).unwrap();
    let keeper = Keeper::default();
    bench.load(&keeper).unwrap();
    bench.run(&keeper).unwrap();
    (
        keeper.inserts.into_inner().unwrap(),
        keeper.updates.into_inner().unwrap(),
    )
}

#[test]
fn constant_length_records_have_every_field_of_java_s_layout() {
    // Ten fields of 100 bytes (the default), twelve fields (names of two
    // lengths, field0 to field11) of lengths around a step of the value
    // stream and the one-byte length limit, and empty values.
    for (count, length) in [
        (10, 100),
        (12, 1),
        (12, 23),
        (12, 24),
        (12, 29),
        (3, 127),
        (3, 128),
        (2, 0),
    ] {
        let (count_s, length_s) = (count.to_string(), length.to_string());
        let (inserts, updates) = written(&[
            ("fieldcount", count_s.as_str()),
            ("fieldlength", length_s.as_str()),
        ]);
        assert_eq!(inserts.len(), 40, "{count} × {length}");
        for record in &inserts {
            let names: Vec<&str> = record.iter().map(|f| f.name).collect();
            let expected: Vec<String> = (0..count).map(|i| format!("field{i}")).collect();
            assert_eq!(names, expected, "{count} × {length}");
            for field in record.iter() {
                assert_eq!(field.value.len(), length, "{count} × {length}");
                assert!(
                    java_layout(field.value),
                    "{count} × {length}: {:?}",
                    field.value
                );
            }
            assert_eq!(record.value_bytes(), count * length);
        }
        if length >= 8 {
            // Values are random: no two fields of a record alike.
            let record = &inserts[0];
            for (i, a) in record.iter().enumerate() {
                for b in record.iter().skip(i + 1) {
                    assert_ne!(a.value, b.value, "{count} × {length}");
                }
            }
        }
        assert!(!updates.is_empty());
        for update in &updates {
            assert_eq!(update.len(), 1, "{count} × {length}: one field an update");
            let field = update.field(0).unwrap();
            assert_eq!(field.value.len(), length);
            assert!(java_layout(field.value));
        }
    }
}

#[test]
fn varying_length_records_have_every_field_of_java_s_layout() {
    let (inserts, _) = written(&[
        ("fieldcount", "5"),
        ("fieldlengthdistribution", "uniform"),
        ("minfieldlength", "1"),
        ("fieldlength", "300"),
    ]);
    let mut lengths = std::collections::BTreeSet::new();
    for record in &inserts {
        assert_eq!(record.len(), 5);
        for field in record.iter() {
            assert!((1..=300).contains(&field.value.len()));
            assert!(java_layout(field.value));
            lengths.insert(field.value.len());
        }
    }
    assert!(lengths.len() > 50, "lengths vary: {lengths:?}");
}
