//! YCSB-cpp's rate limits of the run phase: `limit.ops` and the
//! `limit.file` schedule (issue 35 item 5).
//!
//! The bounds on time are wide on purpose. A lower bound cannot fail on a
//! busy machine: the limiter never lets a thread run ahead of its tokens.
//! An upper bound could, so it is several times the expected time: each
//! thread's bucket holds a second of tokens, so stalls of the machine
//! shorter than that are caught up and cost nothing; the bound only
//! catches a limiter much slower than asked.

mod common;

use common::*;
use serde_json::Value;

fn runtime_ms(report: &str, nth: usize) -> u64 {
    report
        .lines()
        .filter_map(|l| l.strip_prefix("[OVERALL], RunTime(ms), "))
        .nth(nth)
        .unwrap_or_else(|| panic!("no RunTime number {nth} in {report}"))
        .parse()
        .unwrap()
}

#[test]
fn limit_ops_paces_the_run_phase_and_not_the_load() {
    // YCSB-cpp's form: both phases in one process; 1000 records would take
    // 5 s at the limit, 300 operations take 1.5 s.
    let o = run(
        "-load -run -db basic -P workloads/workloada -p basicdb.verbose=false \
         -p recordcount=1000 -p operationcount=300 -p limit.ops=200 -threads 2",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let (load, run) = (runtime_ms(&out, 0), runtime_ms(&out, 1));
    assert!(
        load < 2500,
        "the load phase is not limited, as in YCSB-cpp: {load} ms"
    );
    assert!(
        (1450..7500).contains(&run),
        "300 operations at 200/s: {run} ms"
    );
    assert!(
        !out.contains("[Intended-"),
        "a token bucket has no intended start: {out}"
    );
    assert!(
        !stderr(&o).contains("is not read"),
        "limit.ops is read, not warned about: {}",
        stderr(&o)
    );
}

#[test]
fn a_limit_file_changes_the_rate_at_its_second() {
    let dir = tempfile::tempdir().unwrap();
    let rates = dir.path().join("rates.txt");
    // 100 ops/s for the first second, then 1000 ops/s: about 2 s.
    std::fs::write(&rates, "1 1000\n").unwrap();
    let export = dir.path().join("export.json");
    let o = run(&format!(
        "run basic -P workloads/workloadc -p basicdb.verbose=false -p recordcount=100 \
         -p operationcount=1100 -p limit.ops=100 -p limit.file={} \
         -p timeseries.granularity=200 -p exporter=json -p exportfile={}",
        rates.display(),
        export.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let run = export["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == "run")
        .unwrap();
    assert!(
        run["runtime_ms"].as_u64().unwrap() >= 1900,
        "{}",
        run["runtime_ms"]
    );
    let rows = run["observation"]["series"].as_array().unwrap();
    let rate = |r: &Value| r["throughput"].as_f64().unwrap();
    let time = |r: &Value| r["time_s"].as_f64().unwrap();
    // An interval at 100 ops/s holds 20 operations; one that saw a
    // publication of the interval before may show a few more, never 1000/s.
    let slow = rows
        .iter()
        .filter(|r| time(r) <= 1.0)
        .map(rate)
        .fold(0.0, f64::max);
    let fast = rows
        .iter()
        .filter(|r| time(r) > 1.25)
        .map(rate)
        .fold(0.0, f64::max);
    assert!(
        slow > 0.0 && slow < 250.0,
        "before second 1: {slow} ops/s; {rows:?}"
    );
    assert!(
        fast > 500.0,
        "after second 1: {fast} ops/s at most; {rows:?}"
    );
}

#[test]
fn the_limit_stops_with_the_phase() {
    // 1 operation a second with no operation count: only maxexecutiontime
    // ends the run, and a thread waiting for its token must notice.
    let o = run(
        "run basic -P workloads/workloadc -p basicdb.verbose=false -p recordcount=10 \
                 -p operationcount=0 -p limit.ops=1 -p maxexecutiontime=2",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let ms = runtime_ms(&out, 0);
    assert!((1900..8000).contains(&ms), "{ms}");
    let reads: u64 = report_value(&out, "READ", "Operations")
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3).contains(&reads), "{reads} reads at 1/s in 2 s");
}
