//! Which read the workload asks a store for: in place unless it keeps the
//! values to verify them, through the runner's error-budget wrapper.

mod common;

use common::{shipped_workload, Asked, Noting};
use ycsb_core::Benchmark;

/// Reads (copied, in place) and VERIFY operations of a run of `workload`.
fn reads(workload: &str, integrity: bool) -> (u64, u64, u64) {
    let props = shipped_workload(workload)
        .with("recordcount", 50)
        .with("operationcount", 400)
        .with("threadcount", 2)
        .with("dataintegrity", integrity);
    let bench = Benchmark::from_properties(&props).unwrap();
    let store = Noting::default();
    bench.load(&store).unwrap();
    store.take();
    let outcome = bench.run(&store).unwrap();
    let verified = outcome
        .report
        .sections
        .iter()
        .find(|s| s.name == "VERIFY")
        .map_or(0, |s| s.operations);
    let (mut copied, mut in_place) = (0, 0);
    for asked in store.take() {
        match asked {
            Asked::Read {
                in_place: false, ..
            } => copied += 1,
            Asked::Read { fields, .. } => {
                in_place += 1;
                if !integrity {
                    // Every record of the core workloads has 10 fields,
                    // all read.
                    assert_eq!(fields, 10);
                }
            }
            Asked::Update { .. } => {}
        }
    }
    (copied, in_place, verified)
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
