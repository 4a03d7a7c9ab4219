use super::*;
use crate::{DurabilityEntry, Operation, SeriesUnit};

const STATUSES: &[&str] = &["OK", "ERROR", "NOT_FOUND"];

fn metadata(start_time: &str) -> RunMetadata {
    RunMetadata {
        host: Some("h1".into()),
        command_line: vec!["ycsb".into(), "run".into()],
        store: Some("redis".into()),
        engine: Some("Redis".into()),
        engine_version: Some("7.0".into()),
        ..RunMetadata::new("ycsb", "0.1.0", start_time)
    }
}

fn section(name: &str, latency_ns: u64, count: u64) -> SectionReport {
    let mut histogram = Histogram::<u64>::new(3).unwrap();
    histogram.record_n(latency_ns, count).unwrap();
    SectionReport {
        name: name.into(),
        operation: Operation::Read,
        intended: false,
        failed: name.ends_with("-FAILED"),
        operations: count,
        average_us: latency_ns as f64 / 1e3,
        min_us: latency_ns / 1_000,
        max_us: latency_ns / 1_000,
        average_ns: latency_ns as f64,
        min_ns: latency_ns,
        max_ns: latency_ns,
        percentiles: [50.0, 99.0]
            .into_iter()
            .map(|percentile| PercentileLatency {
                percentile,
                us: latency_ns / 1_000,
                ns: latency_ns,
            })
            .collect(),
        histogram: Some(encode_histogram(&histogram)),
        returns: vec![StatusCount {
            status: "OK".into(),
            count,
        }],
        java: None,
    }
}

/// One client's export of a run phase reading `count` times at
/// `latency_ns`, client `index` of a run started at `start_time`.
fn client(index: u32, latency_ns: u64, count: u64, start_time: &str) -> RunReport {
    RunReport {
        schema_version: crate::SCHEMA_VERSION,
        metadata: metadata(start_time),
        config: vec![
            ConfigEntry {
                key: "recordcount".into(),
                value: "1000".into(),
                origin: "-p flag".into(),
            },
            ConfigEntry {
                key: "client.index".into(),
                value: index.to_string(),
                origin: "-p flag".into(),
            },
        ],
        phases: vec![PhaseReport {
            phase: "run".into(),
            runtime_ms: 1_000,
            runtime_ns: 1_000_000_000 + u64::from(index),
            operations: count,
            throughput: count as f64,
            sections: vec![section("READ", latency_ns, count)],
            format: ReportFormat::default(),
            observation: None,
        }],
        engine_reports: Vec::new(),
    }
}

const T0: &str = "2026-11-29T22:38:16+00:00";

fn merged(inputs: Vec<RunReport>) -> RunReport {
    let mut merge = Merge::new(STATUSES);
    for (i, report) in inputs.into_iter().enumerate() {
        merge.add(format!("c{i}.json"), report).unwrap();
    }
    assert_eq!(merge.mismatches(), Vec::<String>::new());
    merge.finish(metadata(T0))
}

#[test]
fn percentiles_come_from_the_summed_histograms_not_averages() {
    // 1000 fast reads on one client, 10 slow ones on another: the p99 of
    // all 1010 is the 1000th value, a fast one (averaging the two p99s
    // would say 50 ms).
    let report = merged(vec![
        client(0, 1_000_000, 1_000, T0),
        client(1, 100_000_000, 10, T0),
    ]);
    let run = report.phase("run").unwrap();
    assert_eq!(run.operations, 1_010);
    assert_eq!(run.throughput, 1_010.0);
    assert_eq!(run.runtime_ns, 1_000_000_001, "the longest client");
    let read = &run.sections[0];
    assert_eq!(read.operations, 1_010);
    assert_eq!(
        read.returns,
        vec![StatusCount {
            status: "OK".into(),
            count: 1_010
        }]
    );
    assert_eq!((read.min_ns, read.max_ns), (1_000_000, 100_000_000));
    let p99 = read.percentiles[1].ns;
    assert!((1_000_000..1_001_000).contains(&p99), "p99 {p99}");
    let expected_mean = (1_000.0 * 1e6 + 10.0 * 1e8) / 1_010.0;
    assert!((read.average_ns - expected_mean).abs() < 1e-3);
    // The merged export can be merged again.
    let again = decode_histogram(read.histogram.as_deref().unwrap(), "merged").unwrap();
    assert_eq!(again.len(), 1_010);
}

#[test]
fn failed_sections_statuses_and_java_figures_add_up() {
    let with_failures = |index: u32, buckets: Vec<u64>, series: Vec<(u64, u64, u64)>| {
        let mut c = client(index, 2_000_000, 4, T0);
        let phase = &mut c.phases[0];
        let mut failed = section("READ-FAILED", 700_000, 1);
        failed.returns.clear();
        phase.sections[0].returns.push(StatusCount {
            status: "NOT_FOUND".into(),
            count: 1,
        });
        phase.sections[0].java = Some(JavaSection {
            sum_us: 8_000,
            sum_sq_us: 16_000_000.0,
            buckets,
            series: series
                .into_iter()
                .map(|(time_ms, operations, sum_us)| SeriesUnit {
                    time_ms,
                    operations,
                    sum_us,
                })
                .collect(),
            raw: Vec::new(),
        });
        // Listed first, as a client never would: merge sorts.
        phase.sections.insert(0, failed);
        c
    };
    let mut b = with_failures(1, vec![0, 1, 3], vec![(1_000, 4, 8_000)]);
    // ERROR before NOT_FOUND in the contract's order, whatever the order
    // the inputs list them in.
    b.phases[0].sections[1].returns.push(StatusCount {
        status: "ERROR".into(),
        count: 2,
    });
    let report = merged(vec![
        with_failures(0, vec![0, 0, 4, 0], vec![(0, 3, 6_000), (1_000, 1, 2_000)]),
        b,
    ]);
    let sections = &report.phases[0].sections;
    let names: Vec<(&str, bool, u64)> = sections
        .iter()
        .map(|m| (m.name.as_str(), m.failed, m.operations))
        .collect();
    assert_eq!(names, [("READ", false, 8), ("READ-FAILED", true, 2)]);
    let statuses: Vec<(&str, u64)> = sections[0]
        .returns
        .iter()
        .map(|r| (r.status.as_str(), r.count))
        .collect();
    assert_eq!(statuses, [("OK", 8), ("ERROR", 2), ("NOT_FOUND", 2)]);
    let java = sections[0].java.as_ref().unwrap();
    assert_eq!((java.sum_us, java.sum_sq_us), (16_000, 32_000_000.0));
    assert_eq!(java.buckets, [0, 1, 7, 0]);
    let series: Vec<(u64, u64, u64)> = java
        .series
        .iter()
        .map(|u| (u.time_ms, u.operations, u.sum_us))
        .collect();
    assert_eq!(series, [(0, 3, 6_000), (1_000, 5, 10_000)]);
    assert!(sections[1].returns.is_empty());
}

#[test]
fn the_merged_export_names_its_inputs_store_and_agreed_durability() {
    let durable = |d: bool| {
        Some(DurabilityEntry {
            property: "redis.sync".into(),
            value: d.to_string(),
            durable: d,
        })
    };
    let mut a = client(0, 1_000, 1, T0);
    let mut b = client(1, 1_000, 1, T0);
    a.metadata.durability = durable(true);
    b.metadata.durability = durable(true);
    let mut fresh = metadata(T0);
    fresh.tool = "ycsb merge".into();
    fresh.store = None;
    let mut merge = Merge::new(STATUSES);
    merge.add("a.json", a.clone()).unwrap();
    merge.add("b.json", b.clone()).unwrap();
    let report = merge.finish(fresh.clone());
    assert_eq!(report.metadata.tool, "ycsb merge");
    assert_eq!(report.metadata.store.as_deref(), Some("redis"));
    assert_eq!(report.metadata.engine_version.as_deref(), Some("7.0"));
    assert_eq!(report.metadata.durability, durable(true));
    assert_eq!(report.config_value("recordcount"), Some("1000"));
    assert_eq!(report.config[0].origin, "-p flag (a.json)");
    assert_eq!(
        report.config_value("merge.input.1"),
        Some(format!("b.json on h1 at {T0}").as_str())
    );
    // Clients that disagree: the merge claims neither.
    b.metadata.durability = durable(false);
    let mut merge = Merge::new(STATUSES);
    merge.add("a.json", a).unwrap();
    merge.add("b.json", b).unwrap();
    assert_eq!(merge.finish(fresh).metadata.durability, None);
}

#[test]
fn exports_that_are_not_one_runs_clients_are_named_with_every_reason() {
    let mut other_store = client(1, 1_000, 1, T0);
    other_store.metadata.store = Some("memory".into());
    other_store.config[0].value = "2000".into();
    let same_index = client(0, 1_000, 1, T0);
    let mut late = client(2, 1_000, 1, "2026-11-29T23:38:16+00:00");
    late.phases[0].phase = "load".into();
    let mut merge = Merge::new(STATUSES);
    merge.add("a.json", client(0, 1_000, 1, T0)).unwrap();
    merge.add("b.json", other_store).unwrap();
    merge.add("c.json", same_index).unwrap();
    merge.add("d.json", late).unwrap();
    let problems = merge.mismatches().join("\n");
    for expected in [
        "b.json ran against store 'memory' but a.json against 'redis'",
        "b.json has recordcount=2000 (-p flag) but a.json has recordcount=1000 (-p flag): not the same workload",
        "c.json and a.json are both client.index=0",
        "d.json has phases [load] but a.json has [run]",
        "d.json started 3599 s after",
    ] {
        assert!(problems.contains(expected), "{expected}:\n{problems}");
    }
    // Numbers compare as numbers.
    assert!(same_value("0", "0.0") && !same_value("0.5", "0.95"));
    assert!(same_value("zipfian", "Zipfian") && !same_value("zipfian", "uniform"));
}

#[test]
fn a_bad_export_is_refused_naming_the_field_and_changes_nothing() {
    let mut merge = Merge::new(STATUSES);
    merge.add("a.json", client(0, 1_000, 1, T0)).unwrap();
    let mut missing = client(1, 1_000, 1, T0);
    missing.phases[0].sections[0].histogram = None;
    let e = merge.add("b.json", missing).unwrap_err();
    assert_eq!(
        e.to_string(),
        "b.json: phases[0].sections[0].histogram is missing: exact merging needs the histogram that exports of this ycsb carry"
    );
    let mut garbled = client(1, 1_000, 1, T0);
    garbled.phases[0].sections[0].histogram = Some("not base64!".into());
    let e = merge.add("b.json", garbled).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("b.json: phases[0].sections[0].histogram: not a base64"),
        "{e}"
    );
    let mut unknown = client(1, 1_000, 1, T0);
    unknown.phases[0].sections[0].returns[0].status = "TEAPOT".into();
    let e = merge.add("b.json", unknown).unwrap_err();
    assert_eq!(
        e.to_string(),
        "b.json: phases[0].sections[0].returns: unknown status 'TEAPOT'"
    );
    let report = merge.finish(metadata(T0));
    assert_eq!(report.phases[0].operations, 1, "only a.json was merged");
    assert_eq!(report.config_value("merge.input.1"), None);
}

#[test]
fn time_series_line_up_by_wall_clock() {
    let observed = |start_unix_ms: u64, rows: &[(u64, u64)]| PhaseObservation {
        granularity_s: 1.0,
        start_unix_ms,
        warmup: None,
        series: rows
            .iter()
            .map(|&(unix_ms, operations)| {
                let mut row = SeriesRow::empty(0.0, 1.0, false);
                row.unix_ms = unix_ms;
                row.operations = operations;
                row
            })
            .collect(),
        stability: None,
        amplification: None,
        gauge_kinds: Default::default(),
    };
    let mut a = client(0, 1_000, 1, T0);
    a.phases[0].observation = Some(observed(10_000, &[(11_000, 100), (12_000, 100)]));
    let mut b = client(1, 1_000, 1, T0);
    // 300 ms later: its rows belong to the same wall-clock seconds.
    b.phases[0].observation = Some(observed(10_300, &[(11_300, 50), (12_300, 60)]));
    let report = merged(vec![a, b]);
    let rows: Vec<(f64, u64, f64)> = report.phases[0]
        .series()
        .iter()
        .map(|r| (r.time_s, r.operations, r.throughput))
        .collect();
    assert_eq!(rows, [(1.0, 150, 150.0), (2.0, 160, 160.0)]);
}

#[test]
fn merged_percentiles_never_pass_the_exact_extremes() {
    // 21.781 ms lies in a bucket whose value is 21.789... ms: the bucket's
    // value as the p99 would stand above Max=21781.
    let report = merged(vec![
        client(0, 21_781_000, 1, T0),
        client(1, 21_700_000, 1, T0),
    ]);
    let read = &report.phase("run").unwrap().sections[0];
    assert_eq!(read.max_us, 21_781);
    for p in &read.percentiles {
        assert!(
            (read.min_ns..=read.max_ns).contains(&p.ns),
            "p{} = {} ns outside [{}, {}]",
            p.percentile,
            p.ns,
            read.min_ns,
            read.max_ns
        );
    }
    assert_eq!(read.percentiles[1].us, 21_781);
}

#[test]
fn the_gauges_kinds_travel_into_the_merged_series() {
    let observed = |index: u32, kinds: &[(&str, crate::GaugeKind)]| {
        let mut c = client(index, 1_000, 1, T0);
        let mut row = SeriesRow::empty(1.0, 1.0, false);
        row.unix_ms = 1_000;
        for (name, _) in kinds {
            row.gauges.insert((*name).to_string(), 1.0);
        }
        c.phases[0].observation = Some(PhaseObservation {
            granularity_s: 1.0,
            start_unix_ms: 0,
            warmup: None,
            series: vec![row],
            stability: None,
            amplification: None,
            gauge_kinds: kinds.iter().map(|(n, k)| ((*n).to_string(), *k)).collect(),
        });
        c
    };
    let a = observed(0, &[("x.cache-bytes", crate::GaugeKind::Bytes)]);
    let b = observed(
        1,
        &[
            ("x.cache-bytes", crate::GaugeKind::Bytes),
            ("x.files", crate::GaugeKind::Count),
        ],
    );
    let report = merged(vec![a, b]);
    let kinds: Vec<(&str, crate::GaugeKind)> = report.phases[0]
        .observation
        .as_ref()
        .unwrap()
        .gauge_kinds
        .iter()
        .map(|(n, k)| (n.as_str(), *k))
        .collect();
    assert_eq!(
        kinds,
        [
            ("x.cache-bytes", crate::GaugeKind::Bytes),
            ("x.files", crate::GaugeKind::Count)
        ]
    );
}
