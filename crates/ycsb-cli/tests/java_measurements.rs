//! Java's measurement types, failed-operation sections and exporters in
//! real runs of the `ycsb` binary.

mod common;

use common::*;

#[test]
fn javas_workload_template_runs_verbatim() {
    // The file is Java's own (measurementtype=histogram, histogram.buckets,
    // maxscanrate, scanoptimelimit, timeseries.granularity=1000); only its
    // sizes are overridden, as a Java user would with -p.
    let o = run("-load -run -db basic -P workloads/workload_template \
         -p recordcount=100 -p operationcount=200 -p basicdb.verbose=false -p seed=1");
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains("unknown"), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let out = stdout(&o);
    // OneMeasurementHistogram's figures.
    assert!(out.contains("[INSERT], LatencyVariance(us), "), "{out}");
    assert!(out.contains("[READ], LatencyVariance(us), "), "{out}");
    assert!(out.contains("[READ], 95thPercentileLatency(us), "), "{out}");
    // Java prints no Return= lines for CLEANUP.
    assert!(out.contains("[CLEANUP], Operations, "), "{out}");
    assert!(!out.contains("[CLEANUP], Return="), "{out}");
}

#[test]
fn reads_of_missing_records_are_measured_as_failed() {
    // No load phase: every read is NOT_FOUND, a failure in Java's DBWrapper.
    let o = run("run memory -p recordcount=50 -p operationcount=40 \
         -p readproportion=1 -p updateproportion=0 -p seed=3");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        report_value(&out, "READ", "Operations").as_deref(),
        Some("0"),
        "{out}"
    );
    assert_eq!(
        report_value(&out, "READ", "Return=NOT_FOUND").as_deref(),
        Some("40"),
        "{out}"
    );
    assert_eq!(
        report_value(&out, "READ-FAILED", "Operations").as_deref(),
        Some("40"),
        "{out}"
    );
    assert!(!out.contains("[READ-FAILED], Return="), "{out}");

    let o = run("run memory -p recordcount=50 -p operationcount=40 \
         -p readproportion=1 -p updateproportion=0 -p seed=3 \
         -p latencytrackederrors=NOT_FOUND");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        report_value(&out, "READ-NOT_FOUND", "Operations").as_deref(),
        Some("40"),
        "{out}"
    );
}

#[test]
fn raw_type_appends_every_latency_to_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.csv");
    let o = run(&format!(
        "load basic -p recordcount=30 -p basicdb.verbose=false -p measurementtype=raw \
         -p measurement.raw.output_file={}",
        raw.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&raw).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("INSERT latency raw data: op, timestamp(ms), latency(us)")
    );
    let inserts = lines
        .clone()
        .take_while(|l| l.starts_with("INSERT,"))
        .count();
    assert_eq!(inserts, 30, "{text}");
    let out = stdout(&o);
    assert_eq!(
        report_value(&out, "INSERT", "Total Operations").as_deref(),
        Some("30"),
        "{out}"
    );
}

#[test]
fn javas_json_exporter_class_writes_concatenated_objects() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    let o = run(&format!(
        "load basic -p recordcount=10 -p basicdb.verbose=false \
         -p exporter=site.ycsb.measurements.exporter.JSONMeasurementsExporter -p exportfile={}",
        export.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&export).unwrap();
    assert!(
        text.starts_with(
            "{\n  \"metric\" : \"OVERALL\",\n  \"measurement\" : \"RunTime(ms)\",\n  \"value\" : "
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "} {\n  \"metric\" : \"OVERALL\",\n  \"measurement\" : \"Throughput(ops/sec)\""
        ),
        "{text}"
    );
    assert!(text.ends_with('}'), "{text}");
    // Every object parses; together they are a stream, not one document.
    let objects: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&text)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(objects
        .iter()
        .any(|o| o["metric"] == "INSERT" && o["value"] == 10));
}
