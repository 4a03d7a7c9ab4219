//! Data integrity sees the whole record: with `dataintegrity=true`, a
//! record read back with a field missing, or with a field the workload
//! never writes, is `UNEXPECTED_STATE`, not a verified read.

use ycsb_core::db::{Properties, Status};
use ycsb_core::Benchmark;
use ycsb_memory::MemoryStore;

fn props(fields: u64) -> Properties {
    Properties::new()
        .with("recordcount", 20)
        .with("operationcount", 200)
        .with("readproportion", 1)
        .with("updateproportion", 0)
        .with("fieldcount", fields)
        .with("fieldlength", 20)
        .with("dataintegrity", true)
        .with("seed", 7)
}

/// VERIFY's Return= counts after loading records of `loaded` fields and
/// reading them as records of `read` fields.
fn verify(loaded: u64, read: u64, extra: &[(&str, &str)]) -> Vec<(Status, u64)> {
    let store = MemoryStore::default();
    Benchmark::from_properties(&props(loaded))
        .unwrap()
        .load(&store)
        .unwrap();
    let mut run = props(read);
    for (k, v) in extra {
        run = run.with(*k, *v);
    }
    let outcome = Benchmark::from_properties(&run)
        .unwrap()
        .run(&store)
        .unwrap();
    let section = outcome
        .report
        .sections
        .iter()
        .find(|s| s.name == "VERIFY")
        .expect("a VERIFY section");
    section
        .returns
        .iter()
        .map(|r| {
            let status = Status::ALL.into_iter().find(|s| s.name() == r.status);
            (status.expect("a known status"), r.count)
        })
        .collect()
}

#[test]
fn whole_records_verify() {
    assert_eq!(verify(4, 4, &[]), vec![(Status::Ok, 200)]);
    assert_eq!(
        verify(4, 4, &[("readallfields", "false")]),
        vec![(Status::Ok, 200)]
    );
}

#[test]
fn a_record_with_an_extra_field_is_unexpected() {
    assert_eq!(verify(4, 3, &[]), vec![(Status::UnexpectedState, 200)]);
}

#[test]
fn a_record_with_a_missing_field_is_unexpected() {
    assert_eq!(verify(3, 4, &[]), vec![(Status::UnexpectedState, 200)]);
    // Asked by name (readallfieldsbyname), the missing one is still seen.
    assert_eq!(
        verify(3, 4, &[("readallfieldsbyname", "true")]),
        vec![(Status::UnexpectedState, 200)]
    );
}
