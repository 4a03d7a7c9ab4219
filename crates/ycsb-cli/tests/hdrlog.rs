//! HdrHistogram interval logs (`hdrhistogram.fileoutput=true`), decoded by
//! an independent implementation: the `hdrhistogram` package from PyPI.

mod common;
mod hdr_support;

use common::*;
use hdr_support::decode;

#[test]
fn interval_logs_decode_with_pythons_hdrhistogram_to_the_reported_figures() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    let prefix = format!("{}/logs/", dir.path().display());
    let export = dir.path().join("report.json");
    // A random 0-3 ms delay spreads 2400 operations over about
    // two seconds, so the 1 s status interval gives several log lines.
    let out = ycsb()
        .args(["run", "basic", "-P", "workloads/workloada", "-threads", "2"])
        .args([
            "-p",
            "operationcount=2400",
            "-p",
            "basicdb.simulatedelay=4",
            "-p",
            "status.interval=1",
            "-p",
            "hdrhistogram.fileoutput=true",
            "-p",
            &format!("hdrhistogram.output.path={prefix}"),
            "-p",
            "hdrhistogram.percentiles=50,90,99,99.9,100",
        ])
        .args(json_export(&export))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let read_log = dir.path().join("logs/READ.hdr");
    let update_log = dir.path().join("logs/UPDATE.hdr");
    let text = std::fs::read_to_string(&read_log).unwrap();
    assert!(
        text.starts_with(
            "#[Logging for: READ]\n#[Histogram log format version 1.3]\n#[StartTime: "
        ),
        "{text}"
    );
    assert!(text.contains("\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"));

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let decoded = decode("50,90,99,99.9,100", &[&read_log, &update_log]);
    let sections = report["phases"][0]["sections"].as_array().unwrap();
    for name in ["READ", "UPDATE"] {
        let ours = sections.iter().find(|s| s["name"] == name).unwrap();
        let theirs = &decoded[name];
        assert_eq!(theirs["count"], ours["operations"], "{name}: {theirs}");
        assert!(
            theirs["intervals"].as_u64().unwrap() >= 2,
            "{name}: {theirs}"
        );
        for p in ours["percentiles"].as_array().unwrap() {
            let key = match p["percentile"].as_f64().unwrap() {
                v if v.fract() == 0.0 => format!("{v:.0}"),
                v => v.to_string(),
            };
            // The logs hold whole microseconds, as Java's, and a
            // logged percentile is the top of its bucket: the nanosecond
            // bucket's (at most 0.1 % above), then the microsecond
            // bucket's (0.1 % more). Ours is never above the exact
            // maximum (p100 is the maximum itself), so the logged one is
            // at most 0.2 % above it, as the maximum below.
            let logged = theirs["percentiles"][&key].as_u64().unwrap();
            let us = p["us"].as_u64().unwrap();
            assert!(
                logged >= us && (logged - us) as f64 <= us as f64 * 0.002 + 1.0,
                "{name} p{key}: python {theirs}, ours {p}"
            );
        }
        // The exact maximum falls into the bucket whose top HdrHistogram
        // reports: the nanosecond bucket's top (at most 0.1 % above), in
        // whole microseconds, then the microsecond bucket's top (0.1 %
        // more).
        let max = ours["max_ns"].as_u64().unwrap() / 1_000;
        let top = theirs["max"].as_u64().unwrap();
        assert!(
            top >= max && (top - max) as f64 <= max as f64 * 0.002 + 1.0,
            "{name}: max {max}, python {top}"
        );
    }
}
