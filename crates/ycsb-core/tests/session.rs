//! The rules of a run live in the library: a library user gets the same
//! semantics as the `ycsb` binary (incomplete loads refused, the error
//! budget, the target rule, the known-property set, the export written
//! before the store closes).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use ycsb_db::{ReadOp, ScanOp};

use ycsb_core::db::{
    Properties, Record, ScanResult, Status, Store, StoreContext, StoreDescriptor, StoreError,
    StoreThread, ThreadContext,
};
use ycsb_core::{Benchmark, Phase, PhaseError, Session, SessionFailure, Silent, StopSignal};

/// A store that refuses every insert and update, and records whether the
/// export file existed when it was closed.
struct Refusing {
    export: Option<PathBuf>,
    export_existed_at_close: Arc<AtomicBool>,
}

struct RefusingThread;

impl Store for Refusing {
    fn thread(&self, _: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(RefusingThread))
    }

    fn close(&self) -> Result<(), StoreError> {
        let existed = self.export.as_ref().is_some_and(|p| p.is_file());
        self.export_existed_at_close
            .store(existed, Ordering::SeqCst);
        Err(StoreError::Other("the disk is full".into()))
    }
}

impl StoreThread for RefusingThread {
    fn read(&mut self, _: &ReadOp<'_>, _: &mut Record) -> Status {
        Status::NotFound
    }
    fn scan(&mut self, _: &ScanOp<'_>, _: &mut ScanResult) -> Status {
        Status::Ok
    }
    fn update(&mut self, _: &str, _: &str, _: &Record) -> Status {
        Status::Error
    }
    fn insert(&mut self, _: &str, _: &str, _: &Record) -> Status {
        Status::Error
    }
    fn delete(&mut self, _: &str, _: &str) -> Status {
        Status::Ok
    }
}

thread_local! {
    static CLOSED_WITH_EXPORT: Arc<AtomicBool> = Arc::new(AtomicBool::new(false));
}

fn open_refusing(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(Refusing {
        export: context.properties.get_str("exportfile").map(PathBuf::from),
        export_existed_at_close: CLOSED_WITH_EXPORT.with(Arc::clone),
    }))
}

const REFUSING: StoreDescriptor =
    StoreDescriptor::new("refusing", "refuses every write", &[], open_refusing);

fn small() -> Properties {
    Properties::new()
        .with("recordcount", 1000)
        .with("operationcount", 1000)
        .with("seed", 11)
        .with("core_workload_insertion_retry_limit", 0)
}

#[test]
fn a_load_that_inserts_nothing_is_refused_by_the_library() {
    let bench = Benchmark::from_properties(&small()).unwrap();
    let store = open_refusing(&StoreContext::new(&Properties::new())).unwrap();
    match bench.load(store.as_ref()) {
        Err(PhaseError::IncompleteLoad {
            inserted: 0,
            expected: 1000,
            outcome,
        }) => {
            // The figures of what was tried are not lost.
            let insert = outcome
                .report
                .sections
                .iter()
                .find(|s| s.name == "INSERT")
                .expect("an INSERT section");
            assert_eq!(insert.returns[0].status.to_string(), "ERROR");
        }
        other => panic!("expected an incomplete load, got {other:?}"),
    }
}

#[test]
fn a_session_stops_after_an_incomplete_load_and_exports_before_closing() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    let props = small()
        .with("exporter", "json")
        .with("exportfile", export.display().to_string());
    let session = Session::new(props, REFUSING).unwrap();
    let store = session.open_store(None).unwrap();
    let error = session
        .execute(
            store,
            &[Phase::Load, Phase::Run],
            &StopSignal::new(),
            &mut Silent,
        )
        .unwrap_err();
    assert!(
        matches!(
            *error.failure,
            SessionFailure::Phase(PhaseError::IncompleteLoad { inserted: 0, .. })
        ),
        "{error}"
    );
    assert!(error.to_string().contains("0 of 1000 records"), "{error}");
    // The run phase never ran against the data set with holes.
    assert_eq!(error.report.phases.len(), 1);
    assert!(CLOSED_WITH_EXPORT.with(|c| c.load(Ordering::SeqCst)));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(json["phases"][0]["phase"], "load");
}

#[test]
fn the_error_budget_stops_a_phase_and_says_so() {
    let props = small()
        .with("updateproportion", 1.0)
        .with("readproportion", 0.0)
        .with("errorbudget", 5);
    let bench = Benchmark::from_properties(&props).unwrap();
    let store = open_refusing(&StoreContext::new(&Properties::new())).unwrap();
    match bench.run(store.as_ref()) {
        Err(PhaseError::ErrorBudgetSpent {
            phase: Phase::Run,
            failed,
            budget: 5,
            outcome,
        }) => {
            assert!(failed > 5);
            assert!(outcome.operations < 1000);
        }
        other => panic!("expected the budget to stop the run, got {other:?}"),
    }
}

#[test]
fn a_target_records_intended_latency_unless_told_otherwise() {
    let store = ycsb_memory::MemoryStore::new();
    let props = small().with("target", 20000).with("operationcount", 200);
    let run = Benchmark::from_properties(&props)
        .unwrap()
        .run(&store)
        .unwrap();
    assert!(run.report.sections.iter().any(|s| s.intended));
    let props = props.with("measurement.interval", "op");
    let run = Benchmark::from_properties(&props)
        .unwrap()
        .run(&store)
        .unwrap();
    assert!(!run.report.sections.iter().any(|s| s.intended));
}

#[test]
fn the_known_properties_are_every_component_s_and_the_store_s() {
    let props = small()
        .with("measurement.warmup", "10ops")
        .with("timeseries.granularity", 500)
        .with("memory.instance", "")
        .with("recordcout", 5);
    let session = Session::new(props, ycsb_memory::DESCRIPTOR).unwrap();
    let unknown = session.unknown_properties();
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert_eq!(unknown[0].key, "recordcout");
    assert_eq!(unknown[0].suggestion, Some("recordcount"));
    assert_eq!(unknown[0].instead, None);
}

#[test]
fn other_ycsbs_settings_point_to_what_does_their_job_here() {
    let props = small().with("measurement.trackjvm", "true");
    let session = Session::new(props, ycsb_memory::DESCRIPTOR).unwrap();
    let unknown = session.unknown_properties();
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    let text = unknown[0].to_string();
    assert!(
        text.starts_with("property 'measurement.trackjvm' (")
            && text.ends_with(
                "is not read by the workload, the runner or this store; here the client's CPU, memory and I/O are sampled into the time series (timeseries.granularity)"
            ),
        "{text}"
    );
}

#[test]
fn an_export_that_cannot_be_created_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let props = small().with(
        "exportfile",
        dir.path().join("missing/out.json").display().to_string(),
    );
    let error = Session::new(props, ycsb_memory::DESCRIPTOR).unwrap_err();
    assert!(error.to_string().contains("does not exist"), "{error}");
}

/// Stops the session as soon as the load phase has finished.
struct StopAfterLoad(StopSignal);

impl ycsb_core::Observer for StopAfterLoad {
    fn on_status(&mut self, _: &ycsb_core::StatusUpdate<'_>) {}
}

impl ycsb_core::SessionObserver for StopAfterLoad {
    fn phase_finished(&mut self, outcome: &ycsb_core::PhaseOutcome) {
        if outcome.phase == Phase::Load {
            self.0.stop();
        }
    }
}

/// YCSB-cpp's `sleepafterload` waits before the run phase, and a stop
/// request (Ctrl-C) ends the wait instead of sitting out the hour. The
/// minute allowed is a liveness bound, hundreds of times the milliseconds
/// the stop takes, so that a wait that ignores the stop fails the test
/// instead of hanging it.
#[test]
fn a_stop_ends_the_wait_after_the_load_and_the_run_phase_never_starts() {
    let props = small().with("sleepafterload", 3600);
    let session = Session::new(props, ycsb_memory::DESCRIPTOR).unwrap();
    assert_eq!(
        session.client_settings().sleep_after_load,
        std::time::Duration::from_secs(3600)
    );
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stop = StopSignal::new();
        let store = session.open_store(None).unwrap();
        let report = session
            .execute(
                store,
                &[Phase::Load, Phase::Run],
                &stop,
                &mut StopAfterLoad(stop.clone()),
            )
            .unwrap();
        done.send(report.phases.len()).unwrap();
    });
    let phases = finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the stop ended the wait");
    assert_eq!(phases, 1, "only the load phase ran");
}

/// Without a stop the session does wait: a lower bound, which a sleep
/// guarantees however loaded the machine is (no upper bound is asserted).
#[test]
fn the_run_phase_starts_after_sleepafterload() {
    let props = small().with("sleepafterload", 1);
    let session = Session::new(props, ycsb_memory::DESCRIPTOR).unwrap();
    let store = session.open_store(None).unwrap();
    let start = std::time::Instant::now();
    let report = session
        .execute(
            store,
            &[Phase::Load, Phase::Run],
            &StopSignal::new(),
            &mut Silent,
        )
        .unwrap();
    assert_eq!(report.phases.len(), 2);
    assert!(start.elapsed() >= std::time::Duration::from_secs(1));
}

/// A store that fails to close (an engine that makes its writes durable
/// then, on a full disk) fails a session whose phases all succeeded: what
/// it acknowledged may not be on disk. The report and export are kept.
#[test]
fn a_store_that_fails_to_close_fails_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    let props = small()
        .with("readproportion", 1.0)
        .with("updateproportion", 0.0)
        .with("exporter", "json")
        .with("exportfile", export.display().to_string());
    let session = Session::new(props, REFUSING).unwrap();
    let store = session.open_store(None).unwrap();
    let error = session
        .execute(store, &[Phase::Run], &StopSignal::new(), &mut Silent)
        .unwrap_err();
    assert!(
        matches!(*error.failure, SessionFailure::Close(_)),
        "{error}"
    );
    assert_eq!(
        error.failure.to_string(),
        "closing the store: the disk is full"
    );
    assert_eq!(error.report.phases.len(), 1);
    assert!(export.is_file());
}
