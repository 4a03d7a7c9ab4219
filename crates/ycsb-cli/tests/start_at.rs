//! `start.at`: the first phase is held until a wall-clock time, the hold is
//! not part of the phase, a past time starts at once with a warning, and a
//! malformed or far-future value is one clear line with exit status 2.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn export_start(path: &std::path::Path) -> f64 {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let start = json["metadata"]["start_time"].as_str().unwrap().to_string();
    chrono::DateTime::parse_from_rfc3339(&start)
        .unwrap()
        .timestamp_millis() as f64
        / 1000.0
}

#[test]
fn both_phases_start_after_start_at_and_the_second_follows_the_first() {
    let dir = tempfile::tempdir().unwrap();
    // Whole seconds four to five seconds ahead: long enough for a debug
    // binary to start on a loaded machine, so the hold is observed
    // (ordering, not duration, is asserted).
    let at = unix_now().ceil() + 4.0;
    let export = dir.path().join("export.json");
    let out = load_run("memory", "workloads/workloada")
        .args(["-p", "recordcount=100", "-p", "operationcount=100"])
        .arg("-p")
        .arg(format!("start.at={at}"))
        .args(json_export(&export))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let finished = unix_now();
    assert_eq!(
        err.matches("start.at: holding until").count(),
        1,
        "one hold, before the first phase only: {err}"
    );
    assert!(!err.contains("warning"), "{err}");
    // The export's start is the end of the hold, not the launch: merged
    // clients are checked for overlap from it.
    let started = export_start(&export);
    assert!(started >= at - 0.001, "started {started} before {at}");
    assert!(started <= finished, "{started} > {finished}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let phases = json["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0]["operations"], 100);
    assert_eq!(phases[1]["operations"], 100);
}

#[test]
fn rfc3339_in_the_past_starts_at_once_with_one_warning() {
    let out = ycsb()
        .args(["run", "memory", "-p", "recordcount=10", "-p"])
        .args([
            "operationcount=10",
            "-p",
            "start.at=2020-01-01T00:00:00+02:00",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let warnings: Vec<_> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].starts_with("ycsb: warning: start.at 2019-12-31T22:00:00.000Z passed")
            && warnings[0].ends_with("s ago; starting at once"),
        "{err}"
    );
    assert!(!err.contains("holding"), "{err}");
}

#[test]
fn bad_values_are_one_line_naming_the_flag_and_exit_2() {
    let a_week = (unix_now() + Duration::from_secs(7 * 86_400).as_secs_f64()) as u64;
    let millis = (unix_now() * 1000.0) as u64;
    for (value, reason) in [
        (
            "soon".to_string(),
            "expected Unix seconds or an RFC 3339 time",
        ),
        ("2026-01-01T00:00:00".to_string(), "RFC 3339"),
        ("-5".to_string(), "RFC 3339"),
        (a_week.to_string(), "more than 24 hours from now"),
        (millis.to_string(), "not milliseconds"),
    ] {
        let out = ycsb()
            .args(["run", "memory", "-p"])
            .arg(format!("start.at={value}"))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{value}: {err}");
        assert_eq!(err.lines().count(), 1, "{value}: {err}");
        assert!(
            err.starts_with(&format!(
                "ycsb: error: start.at: invalid value '{value}' (-p flag): "
            )) && err.contains(reason),
            "{value}: {err}"
        );
    }
}
