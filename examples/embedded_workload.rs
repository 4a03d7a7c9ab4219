//! Embed a YCSB workload in your own program: read Java's workload file,
//! override properties as `-p` would, run load and run phases against a
//! store with a live observer of the status intervals, and export JSON.
//!
//! `cargo run -p ycsb-examples --example embedded_workload`

use std::error::Error;
use std::path::Path;

use ycsb_core::db::{Origin, Properties};
use ycsb_core::measurement::{JsonExporter, RunMetadata, RunReport};
use ycsb_core::properties::load_file;
use ycsb_core::runner::{Observer, Phase, StatusUpdate, StopSignal};
use ycsb_core::Benchmark;
use ycsb_memory::MemoryStore;

/// Prints one line per status interval.
struct Progress;

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
    ] {
        props.set(key, value, Origin::Api);
    }

    let benchmark = Benchmark::from_properties(&props)?;
    let store = MemoryStore::new();
    let stop = StopSignal::new();
    let mut phases = Vec::new();
    for phase in [Phase::Load, Phase::Run] {
        let outcome = benchmark.phase(phase, &store, &stop, &mut Progress)?;
        println!(
            "{}: {} operations in {:.3} s, {:.0} ops/s",
            phase.name(),
            outcome.operations,
            outcome.runtime.as_secs_f64(),
            outcome.report.throughput
        );
        phases.push(outcome.report);
    }
    assert_eq!(store.len(), 20_000);

    let report = RunReport {
        metadata: RunMetadata::new("embedded_workload", "0", std::env::args(), &[]),
        config: ycsb_core::measurement::effective_config(&props, &ycsb_core::known_properties()),
        phases,
        engine_reports: Vec::new(),
    };
    let mut json = Vec::new();
    ycsb_core::measurement::Exporter::export(&mut JsonExporter::new(&mut json), &report)?;
    let text = String::from_utf8(json)?;
    println!("JSON export: {} bytes", text.len());
    Ok(())
}
