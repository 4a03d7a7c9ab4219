//! Embed a YCSB workload in your own program: read Java's workload file,
//! override properties as `-p` would, run load and run phases through a
//! `Session` (the same path the `ycsb` binary takes) with a live observer of
//! the status intervals, and export JSON.
//!
//! `cargo run -p ycsb-examples --example embedded_workload`

use std::error::Error;
use std::io::Write;
use std::path::Path;

use ycsb_core::db::{Origin, Properties};
use ycsb_core::properties::load_file;
use ycsb_core::{Observer, StatusUpdate};
use ycsb_core::{Phase, PhaseOutcome, Session, SessionObserver, StopSignal};

/// Prints one line per status interval and per phase, and keeps the JSON
/// export.
#[derive(Default)]
struct Progress {
    json: Vec<u8>,
}

impl Observer for Progress {
    fn on_status(&mut self, update: &StatusUpdate<'_>) {
        eprintln!(
            "{} {:>5.1}s: {} operations",
            update.phase.name(),
            update.elapsed.as_secs_f64(),
            update.operations
        );
    }
}

impl SessionObserver for Progress {
    fn phase_finished(&mut self, outcome: &PhaseOutcome) {
        println!(
            "{}: {} operations in {:.3} s, {:.0} ops/s",
            outcome.phase.name(),
            outcome.operations,
            outcome.runtime.as_secs_f64(),
            outcome.report.throughput
        );
    }

    fn export_output(&mut self) -> Option<&mut dyn Write> {
        Some(&mut self.json)
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let workloads = Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads");
    let mut props = Properties::new();
    load_file(&workloads.join("workloadb"), &mut props)?;
    // What `-p` does on the command line: later settings win.
    for (key, value) in [
        ("recordcount", "20000"),
        ("operationcount", "200000"),
        ("threadcount", "2"),
        ("status.interval", "0.1"),
        ("exporter", "json"),
    ] {
        props.set(key, value, Origin::Api);
    }

    let session = Session::new(props, ycsb_memory::DESCRIPTOR)?;
    for unknown in session.unknown_properties() {
        eprintln!("warning: {unknown}");
    }
    let store = session.open_store(None)?;
    let mut progress = Progress::default();
    let report = session.execute(
        store,
        &[Phase::Load, Phase::Run],
        &StopSignal::new(),
        &mut progress,
    )?;
    assert_eq!(report.phases[0].operations, 20_000);
    println!("JSON export: {} bytes", progress.json.len());
    Ok(())
}
