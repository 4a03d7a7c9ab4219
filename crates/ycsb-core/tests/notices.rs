//! What a session tells its observer besides the figures: a run whose
//! reads nearly all find nothing hints that the store was never loaded.

use ycsb_core::db::Properties;
use ycsb_core::{Observer, Phase, Session, SessionObserver, StatusUpdate, StopSignal};

#[derive(Default)]
struct Notices(Vec<String>);

impl Observer for Notices {
    fn on_status(&mut self, _: &StatusUpdate<'_>) {}

    fn on_notice(&mut self, notice: &str) {
        self.0.push(notice.to_string());
    }
}

impl SessionObserver for Notices {}

/// The memory store is one per process: each test has its own table.
fn notices(table: &str, phases: &[Phase]) -> Vec<String> {
    let props = Properties::new()
        .with("table", table)
        .with("recordcount", 100)
        .with("operationcount", 200)
        .with("seed", 3);
    let session = Session::new(props, ycsb_memory::DESCRIPTOR).unwrap();
    let store = session.open_store(None).unwrap();
    let mut seen = Notices::default();
    session
        .execute(store, phases, &StopSignal::new(), &mut seen)
        .unwrap();
    seen.0
}

#[test]
fn a_run_on_a_store_never_loaded_says_so_once() {
    let seen = notices("never_loaded", &[Phase::Run]);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].contains("NOT_FOUND"), "{}", seen[0]);
    assert!(seen[0].contains("never have been loaded"), "{}", seen[0]);
}

#[test]
fn a_run_on_a_loaded_store_says_nothing() {
    assert_eq!(
        notices("loaded", &[Phase::Load, Phase::Run]),
        Vec::<String>::new()
    );
}
