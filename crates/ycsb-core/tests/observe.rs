//! The runner's ticks through a session's time series on a real store:
//! every operation in exactly one row, a time warm-up excluded from the
//! report.

use std::collections::BTreeMap;

use ycsb_core::db::{GaugeKind, Properties};
use ycsb_core::{Observer, StatusUpdate};
use ycsb_core::{Phase, PhaseOutcome, Session, SessionObserver, StopSignal};

#[derive(Default)]
struct Statuses {
    statuses: usize,
    runtime_ns: u128,
}

impl Observer for Statuses {
    fn on_status(&mut self, _: &StatusUpdate<'_>) {
        self.statuses += 1;
    }
}

impl SessionObserver for Statuses {
    fn phase_finished(&mut self, outcome: &PhaseOutcome) {
        self.runtime_ns = outcome.runtime.as_nanos();
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
        .with("timeseries.granularity", 50)
        .with("measurement.warmup", "0.2s")
        .with("status.interval", 0.25);
    let session = Session::new(props, ycsb_basic::DESCRIPTOR).unwrap();
    let store = session.open_store(None).unwrap();
    let mut observer = Statuses::default();
    let report = session
        .execute(store, &[Phase::Run], &StopSignal::new(), &mut observer)
        .unwrap();
    let phase = &report.phases[0];
    let observation = phase.observation.as_ref().unwrap();

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
    let reported: u64 = phase
        .sections
        .iter()
        .filter(|s| s.name == "READ" || s.name == "UPDATE")
        .map(|s| s.operations)
        .sum();
    assert_eq!(reported, 1200 - warm);
    assert_eq!(phase.operations, 1200 - warmup.operations);
    assert!(u128::from(phase.runtime_ns) < observer.runtime_ns);
    let stability = observation.stability.as_ref().unwrap();
    assert!(stability.intervals >= 1 && stability.mean_throughput > 0.0);
    assert!(rows.iter().all(|r| r.client.is_some()));
}

/// Keeps every row the session shows while the phases run.
#[derive(Default)]
struct Rows {
    rows: Vec<(Phase, ycsb_results::SeriesRow)>,
    kinds: BTreeMap<String, GaugeKind>,
}

impl Observer for Rows {
    fn on_status(&mut self, _: &StatusUpdate<'_>) {}
}

impl SessionObserver for Rows {
    fn interval_observed(
        &mut self,
        phase: Phase,
        row: &ycsb_results::SeriesRow,
        gauge_kinds: &BTreeMap<String, GaugeKind>,
    ) {
        self.rows.push((phase, row.clone()));
        self.kinds.clone_from(gauge_kinds);
    }
}

#[test]
fn each_interval_row_is_shown_as_the_report_will_carry_it() {
    let props = Properties::new()
        .with("recordcount", 200)
        .with("operationcount", 400)
        .with("seed", 5)
        .with("basicdb.simulatedelay", 2)
        .with("timeseries.granularity", 50);
    let session = Session::new(props, ycsb_basic::DESCRIPTOR).unwrap();
    let store = session.open_store(None).unwrap();
    let mut observer = Rows::default();
    let report = session
        .execute(
            store,
            &[Phase::Load, Phase::Run],
            &StopSignal::new(),
            &mut observer,
        )
        .unwrap();
    for (phase, report) in [Phase::Load, Phase::Run].into_iter().zip(&report.phases) {
        let shown: Vec<_> = observer
            .rows
            .iter()
            .filter(|(p, _)| *p == phase)
            .map(|(_, r)| r.clone())
            .collect();
        let series = &report.observation.as_ref().unwrap().series;
        assert!(!series.is_empty(), "{phase:?}");
        assert_eq!(&shown, series, "{phase:?}");
    }

    // Gauges come with the kind their store declared, shown while the
    // phase runs and exported with it.
    let props = Properties::new()
        .with("recordcount", 300)
        .with("target", 3000)
        .with("timeseries.granularity", 20);
    let session = Session::new(props, ycsb_memory::DESCRIPTOR).unwrap();
    let store = session.open_store(None).unwrap();
    let mut observer = Rows::default();
    let report = session
        .execute(store, &[Phase::Load], &StopSignal::new(), &mut observer)
        .unwrap();
    let observation = report.phases[0].observation.as_ref().unwrap();
    let declared = BTreeMap::from([("memory.records".to_string(), GaugeKind::Count)]);
    assert_eq!(observation.gauge_kinds, declared);
    assert_eq!(observer.kinds, declared);

    // Without a time series there is nothing to show.
    let props = Properties::new()
        .with("operationcount", 100)
        .with("timeseries.granularity", 0);
    let session = Session::new(props, ycsb_basic::DESCRIPTOR).unwrap();
    let store = session.open_store(None).unwrap();
    let mut observer = Rows::default();
    session
        .execute(store, &[Phase::Load], &StopSignal::new(), &mut observer)
        .unwrap();
    assert!(observer.rows.is_empty());
}
