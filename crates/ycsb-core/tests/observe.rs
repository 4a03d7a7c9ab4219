//! The runner's ticks through a `Collector` on a real store: every
//! operation in exactly one row, a time warm-up excluded from the report.

use std::time::Duration;

use ycsb_basic::BasicStore;
use ycsb_core::db::{Properties, StoreContext};
use ycsb_core::measurement::MeasurementSettings;
use ycsb_core::observe::{Collector, ObserveSettings, Warmup};
use ycsb_core::runner::{self, Observer, Phase, RunnerSettings, StatusUpdate, StopSignal, Tick};
use ycsb_core::workload::CoreWorkload;

struct Ticks {
    collector: Collector,
    statuses: usize,
}

impl Observer for Ticks {
    fn on_status(&mut self, _: &StatusUpdate<'_>) {
        self.statuses += 1;
    }

    fn on_tick(&mut self, tick: &Tick<'_>) {
        self.collector.on_tick(tick);
    }
}

#[test]
fn ticks_cover_every_operation_and_the_warmup_is_left_out() {
    // About 1 ms per operation (random sleeps below 2 ms) on two threads.
    let props = Properties::new()
        .with("recordcount", 100)
        .with("operationcount", 1200)
        .with("threadcount", 2)
        .with("seed", 3)
        .with("basicdb.simulatedelay", 2)
        .with("timeseries.granularity", 0.05)
        .with("measurement.warmup", "0.2s")
        .with("status.interval", 0.25);
    let store = BasicStore::open(&StoreContext::new(&props)).unwrap();
    let workload = CoreWorkload::from_properties(&props).unwrap();
    let settings = RunnerSettings::from_properties(&props).unwrap();
    assert_eq!(settings.granularity, Some(Duration::from_millis(50)));
    assert_eq!(settings.warmup, Warmup::Time(Duration::from_millis(200)));
    let measurement = MeasurementSettings::from_properties(&props).unwrap();
    let observe = ObserveSettings::from_properties(&props, None).unwrap();
    let mut observer = Ticks {
        collector: Collector::new(&observe, false, Vec::new()).unwrap(),
        statuses: 0,
    };
    observer.collector.start_phase(Phase::Run);
    let outcome = runner::run_phase(
        Phase::Run,
        &workload,
        &store,
        &settings,
        &measurement,
        &StopSignal::new(),
        &mut observer,
    )
    .unwrap();
    let observation = observer.collector.finish_phase(&outcome, &workload);

    let rows = &observation.series;
    // Rows are far more frequent than status lines.
    assert!(rows.len() > 2 * observer.statuses, "{} rows", rows.len());
    let total: u64 = rows.iter().map(|r| r.operations).sum();
    assert_eq!(total, 1200);
    let warm: u64 = rows.iter().filter(|r| r.warmup).map(|r| r.operations).sum();
    let warmup = observation.warmup.as_ref().unwrap();
    let last_warm = rows.iter().rev().find(|r| r.warmup).unwrap();
    assert_eq!(last_warm.time_s, warmup.end_s);
    // The status loop wakes at the warm-up's end; a loaded machine may
    // delay it a little.
    assert!(warmup.end_s >= 0.2 && warmup.end_s < 0.6, "{warmup:?}");
    // The report holds exactly what the rows after the warm-up hold.
    let reported: u64 = outcome
        .report
        .sections
        .iter()
        .filter(|s| s.name == "READ" || s.name == "UPDATE")
        .map(|s| s.operations)
        .sum();
    assert_eq!(reported, 1200 - warm);
    assert_eq!(outcome.report.operations, 1200 - warmup.operations);
    assert!(outcome.report.runtime_ns < u64::try_from(outcome.runtime.as_nanos()).unwrap());
    let stability = observation.stability.unwrap();
    assert!(stability.intervals >= 1 && stability.mean_throughput > 0.0);
    assert!(rows.iter().all(|r| r.client.is_some()));
}
