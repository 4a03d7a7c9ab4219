//! Many threads through the `ycsb` binary: 64 client threads scanning,
//! inserting and deleting at once on the memory store, bounded by a
//! timeout (no deadlock), with every acknowledged insert and delete
//! accounted for in the store's record count.

mod common;
mod rel_support;

use std::process::Stdio;
use std::time::Duration;

use common::*;
use rel_support::*;

/// The `memory.records` gauge of a status line.
fn records_gauge(line: &str) -> Option<u64> {
    let (_, rest) = line.split_once("[memory.records=")?;
    rest.split(']')
        .next()?
        .parse::<f64>()
        .ok()
        .map(|v| v as u64)
}

fn figure(out: &str, section: &str, name: &str) -> u64 {
    report_value(out, section, name).map_or(0, |v| v.parse().unwrap())
}

#[test]
fn sixty_four_threads_scan_insert_and_delete_without_losing_a_record() {
    const RECORDS: u64 = 5_000;
    const OPERATIONS: u64 = 64_000;
    let mut child = load_run("memory", "workloads/workloade")
        .args(["-threads", "64", "-p", &format!("recordcount={RECORDS}")])
        .args(["-p", &format!("operationcount={OPERATIONS}")])
        .args(["-p", "scanproportion=0.7", "-p", "insertproportion=0.2"])
        .args(["-p", "deleteproportion=0.1", "-p", "maxscanlength=50"])
        .args([
            "-s",
            "-p",
            "status.interval=1",
            "-p",
            "status.gauges=memory.records",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    let mut stdout_pipe = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        std::io::Read::read_to_string(&mut stdout_pipe, &mut out).unwrap();
        out
    });
    let mut lines = StderrLines::new(child.stderr.take().unwrap());
    // A debug build does this in a few seconds; two minutes means a
    // deadlock, not a slow machine.
    let status = wait_bounded(&mut child, Duration::from_secs(120), "64-thread run");
    let err = lines.rest();
    let out = reader.join().unwrap();
    assert!(status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    // Counts add up: every operation is in exactly one section.
    assert!(
        out.contains(&format!("Load operations(ops): {RECORDS}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("Run operations(ops): {OPERATIONS}")),
        "{out}"
    );
    let run_report = out.split("Load throughput").nth(1).unwrap();
    let scans = figure(run_report, "SCAN", "Operations");
    let inserts = figure(run_report, "INSERT", "Operations");
    // Deletes that found no record are failures in Java's DBWrapper:
    // their latencies are in DELETE-FAILED, their statuses under DELETE.
    let deletes = figure(run_report, "DELETE", "Operations")
        + figure(run_report, "DELETE-FAILED", "Operations");
    let failed = figure(run_report, "SCAN-FAILED", "Operations")
        + figure(run_report, "INSERT-FAILED", "Operations");
    assert_eq!(failed, 0, "{run_report}");
    assert_eq!(scans + inserts + deletes, OPERATIONS, "{run_report}");
    assert!(scans > 0 && inserts > 0 && deletes > 0, "{run_report}");
    assert_eq!(
        figure(run_report, "SCAN", "Return=OK"),
        scans,
        "{run_report}"
    );
    assert_eq!(
        figure(run_report, "INSERT", "Return=OK"),
        inserts,
        "{run_report}"
    );
    let deleted = figure(run_report, "DELETE", "Return=OK");
    assert_eq!(
        deleted + figure(run_report, "DELETE", "Return=NOT_FOUND"),
        deletes,
        "{run_report}"
    );

    // No lost insert, no phantom delete: the store's own count after the
    // last operation is the load plus the inserts minus the deletes that
    // found their record.
    let run_start = err.find("run phase:").expect("run phase line");
    let gauge_at_end = |text: &str| {
        text.lines()
            .rev()
            .filter(|l| l.contains(" sec: "))
            .filter_map(records_gauge)
            .next()
            .unwrap_or_else(|| panic!("no status line with the gauge: {err}"))
    };
    assert_eq!(gauge_at_end(&err[..run_start]), RECORDS, "{err}");
    let last = gauge_at_end(&err[run_start..]);
    assert_eq!(last, RECORDS + inserts - deleted, "{err}\n{run_report}");
    eprintln!(
        "64 threads: {scans} scans, {inserts} inserts, {deletes} deletes ({deleted} found); {last} records at the end = {RECORDS} + {inserts} - {deleted}"
    );
}
