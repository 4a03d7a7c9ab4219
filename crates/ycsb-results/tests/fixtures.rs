//! Exports of every shape our tool has written read back typed (see
//! fixtures/README.md for where each comes from).

use std::fs::File;
use std::path::PathBuf;

use ycsb_results::{read_export, GaugeKind, MeasurementType, Operation, ResultsError, RunReport};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn read(name: &str) -> RunReport {
    let file = File::open(fixture(name)).unwrap();
    read_export(file).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn the_last_unversioned_export_reads_whole() {
    let report = read("export-028fdfb-run.json");
    assert_eq!(report.schema_version, ycsb_results::SCHEMA_VERSION);
    assert_eq!(report.metadata.store.as_deref(), Some("basic"));
    assert_eq!(report.config_value("operationcount"), Some("3000"));
    let run = report.phase("run").expect("a run phase");
    assert_eq!(run.operations, 3000);
    assert_eq!(
        run.format.measurement_type,
        MeasurementType::HdrHistogramAndHistogram
    );
    assert_eq!(run.format.histogram_buckets, 4);
    let reads = run.section("READ").expect("a READ section");
    assert_eq!(reads.operation, Operation::Read);
    assert!(reads.histogram.is_some());
    assert_eq!(reads.java.as_ref().map(|j| j.buckets.len()), Some(5));
    let ok: u64 = reads
        .returns
        .iter()
        .filter(|r| r.status == "OK")
        .map(|r| r.count)
        .sum();
    assert_eq!(ok, reads.operations);
    assert!(reads.percentile_us(99.0).is_some());
    let observation = run.observation.as_ref().expect("observed");
    assert!(!observation.series.is_empty());
    assert!(observation.series[0].client.is_some());
    assert!(observation.stability.is_some());

    let load = read("export-028fdfb-load.json");
    assert_eq!(load.phase("load").map(|p| p.operations), Some(300));
}

#[test]
fn the_first_exporter_s_shape_reads_with_defaults() {
    let report = read("export-103310f-shape.json");
    assert_eq!(report.metadata.store, None);
    assert!(report.engine_reports.is_empty());
    let run = report.phase("run").expect("a run phase");
    assert_eq!(run.format.measurement_type, MeasurementType::HdrHistogram);
    assert!(run.observation.is_none());
    for s in &run.sections {
        assert!(!s.failed && s.histogram.is_none() && s.java.is_none());
    }
    assert_eq!(run.operations, 3000);
}

#[test]
fn the_first_observed_shape_reads_with_defaults() {
    let report = read("export-e5e760a-shape.json");
    let run = report.phase("run").expect("a run phase");
    assert!(run.sections.iter().all(|s| s.histogram.is_some()));
    let stability = run
        .observation
        .as_ref()
        .and_then(|o| o.stability.as_ref())
        .expect("stability");
    assert_eq!((stability.errors, stability.error_share), (0, 0.0));
}

#[test]
fn what_is_not_an_export_is_refused_with_its_reason() {
    let not_json = read_export(&b"not json"[..]).unwrap_err();
    assert!(
        matches!(not_json, ResultsError::Malformed { line: 1, .. }),
        "{not_json}"
    );
    let array = read_export(&b"[{\"metric\": \"OVERALL\"}]"[..]).unwrap_err();
    assert!(matches!(array, ResultsError::NotAnExport { .. }), "{array}");
    assert!(array.to_string().contains("exporter=json"), "{array}");
    let empty = read_export(&b"{}"[..]).unwrap_err();
    assert!(empty.to_string().contains("missing field"), "{empty}");
    let trailing = std::fs::read(fixture("export-028fdfb-load.json"))
        .unwrap()
        .into_iter()
        .chain(b"{}".iter().copied())
        .collect::<Vec<u8>>();
    let two = read_export(&trailing[..]).unwrap_err();
    assert!(matches!(two, ResultsError::Malformed { .. }), "{two}");
}

#[test]
fn a_newer_schema_is_refused() {
    let text = std::fs::read_to_string(fixture("export-028fdfb-load.json")).unwrap();
    let newer = text.replacen('{', "{\"schema_version\": 2,", 1);
    let refused = read_export(newer.as_bytes()).unwrap_err();
    assert!(
        matches!(
            refused,
            ResultsError::NewerSchema {
                found: 2,
                supported: 1
            }
        ),
        "{refused}"
    );
}

#[test]
fn a_figure_written_as_null_reads_as_nan() {
    // serde_json writes NaN as null: such an export must still read.
    let text = std::fs::read_to_string(fixture("export-028fdfb-run.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let row = &mut value["phases"][0]["observation"]["series"][0];
    row["throughput"] = serde_json::Value::Null;
    row["gauges"] = serde_json::json!({"x.gauge": null});
    let report = read_export(value.to_string().as_bytes()).unwrap();
    let row = &report.phases[0].series()[0];
    assert!(row.throughput.is_nan());
    assert!(row.gauges["x.gauge"].is_nan());
}

#[test]
fn gauge_kinds_are_exported_and_older_exports_infer_them() {
    let mut report = read("export-028fdfb-run.json");
    // The fixture predates kinds: none recorded, so none written back.
    let run = report.phase("run").unwrap().observation.as_ref().unwrap();
    assert!(run.gauge_kinds.is_empty());
    let text = serde_json::to_string(&report).unwrap();
    assert!(
        !text.contains("gauge_kinds"),
        "nothing added to an old export"
    );
    assert_eq!(run.gauge_kind("x.cache-bytes"), GaugeKind::Bytes);
    assert_eq!(run.gauge_kind("x.num-files-at-level0"), GaugeKind::Count);

    // Declared kinds are written and read back, and win over the name.
    let run = report
        .phases
        .iter_mut()
        .find(|p| p.phase == "run")
        .and_then(|p| p.observation.as_mut())
        .unwrap();
    run.series[0].gauges.insert("x.cache-bytes".into(), 7.0);
    run.gauge_kinds
        .insert("x.cache-bytes".into(), GaugeKind::Count);
    run.gauge_kinds.insert("x.use".into(), GaugeKind::Ratio);
    let text = serde_json::to_string(&report).unwrap();
    assert!(text.contains(r#""gauge_kinds":{"x.cache-bytes":"count","x.use":"ratio"}"#));
    let back = read_export(text.as_bytes()).unwrap();
    assert_eq!(back, report);
    let run = back.phase("run").unwrap().observation.as_ref().unwrap();
    assert_eq!(run.gauge_kind("x.cache-bytes"), GaugeKind::Count);
    assert_eq!(run.gauge_names(), ["x.cache-bytes"]);
}
