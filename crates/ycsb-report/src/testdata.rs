//! Synthetic exports for the report's tests: typed `RunReport`s of any
//! store, workload, length and target, with sections, histograms, time
//! series, client resources and gauges of every kind.

use std::collections::BTreeMap;

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use ycsb_results::{
    ConfigEntry, DurabilityEntry, EngineReportEntry, GaugeKind, IntervalPoint, Operation,
    PercentileLatency, PhaseObservation, PhaseReport, ReportFormat, ResourceUsage, RunMetadata,
    RunReport, SectionReport, SeriesRow, SeriesSection, Stability, StatusCount,
};

/// What a synthetic run is.
#[derive(Clone, Debug)]
pub(crate) struct Spec {
    pub(crate) store: &'static str,
    pub(crate) workload: &'static str,
    /// The run phase's length, seconds.
    pub(crate) seconds: f64,
    pub(crate) granularity: f64,
    pub(crate) target: Option<f64>,
    pub(crate) threads: u32,
}

impl Spec {
    pub(crate) fn new(store: &'static str, workload: &'static str, seconds: f64) -> Self {
        Self {
            store,
            workload,
            seconds,
            granularity: 0.2,
            target: None,
            threads: 2,
        }
    }
}

/// A gauge's value at a time into the phase.
type Curve = fn(f64) -> f64;

/// The gauges a store of that name reports: (name, kind, value at a
/// time), as the real stores declare them.
fn gauges(store: &str) -> Vec<(String, GaugeKind, Curve)> {
    let list: Vec<(&str, GaugeKind, Curve)> = match store {
        "rocksdb" => vec![
            ("num-files-at-level0", GaugeKind::Count, |t| {
                (t * 3.0).floor() % 4.0
            }),
            ("num-files-at-level1", GaugeKind::Count, |t| {
                (t / 2.0).floor()
            }),
            ("num-files-at-level2", GaugeKind::Count, |_| 0.0),
            ("estimate-num-keys", GaugeKind::Count, |t| {
                1000.0 + 400.0 * t
            }),
            ("estimate-pending-compaction-bytes", GaugeKind::Bytes, |t| {
                1e6 * (t * 2.0).sin().abs()
            }),
            ("cur-size-all-mem-tables", GaugeKind::Bytes, |t| {
                5e5 + 3e5 * t.sin()
            }),
            ("block-cache-usage", GaugeKind::Bytes, |t| {
                8e6 * (1.0 - (-t).exp())
            }),
            (
                "actual-delayed-write-rate",
                GaugeKind::BytesPerSecond,
                |_| 0.0,
            ),
            ("is-write-stopped", GaugeKind::Flag, |_| 0.0),
            ("compaction-pending", GaugeKind::Flag, |t| {
                f64::from(u8::from(t.sin() > 0.5))
            }),
            ("stall.total", GaugeKind::Count, |t| (t * 0.7).floor()),
            ("stall.level0_slowdown", GaugeKind::Count, |_| 0.0),
            ("num-running-compactions", GaugeKind::Count, |t| {
                f64::from(u8::from(t.cos() > 0.3))
            }),
        ],
        "leveldb" => vec![
            ("num-files-at-level0", GaugeKind::Count, |t| {
                (t * 2.0).floor() % 3.0
            }),
            ("mb-at-level0", GaugeKind::Mebibytes, |t| 2.0 * t),
            ("compaction-sec", GaugeKind::Seconds, |t| 0.05 * t),
            ("approximate-memory-usage", GaugeKind::Bytes, |t| {
                4e6 + 1e5 * t
            }),
        ],
        "lmdb" => vec![
            ("depth", GaugeKind::Count, |_| 3.0),
            ("leaf-pages", GaugeKind::Count, |t| 100.0 + 40.0 * t),
            ("map-use", GaugeKind::Ratio, |t| 0.01 + 0.002 * t),
            ("map-size-bytes", GaugeKind::Bytes, |_| 1_073_741_824.0),
            ("readers", GaugeKind::Count, |_| 2.0),
        ],
        "wiredtiger" => vec![
            ("cache-bytes", GaugeKind::Bytes, |t| {
                2e7 * (1.0 - (-t / 2.0).exp())
            }),
            ("cache-max-bytes", GaugeKind::Bytes, |_| 1e8),
            ("checkpoint-running", GaugeKind::Flag, |t| {
                f64::from(u8::from(t % 3.0 < 0.4))
            }),
            ("pages-read", GaugeKind::Count, |t| 50.0 * t),
        ],
        "sqlite" => vec![
            ("pages", GaugeKind::Count, |t| 500.0 + 100.0 * t),
            ("wal-bytes", GaugeKind::Bytes, |t| 1e6 * (t % 2.0)),
        ],
        "fjall" => vec![
            ("num-files-at-level0", GaugeKind::Count, |t| {
                (t * 2.0).floor() % 5.0
            }),
            ("journal-bytes", GaugeKind::Bytes, |t| 3e6 * (t % 1.5)),
            ("compaction-sec", GaugeKind::Seconds, |t| 0.1 * t),
        ],
        "redb" => vec![
            ("cache-used-bytes", GaugeKind::Bytes, |t| 1e6 * t),
            ("tree-height", GaugeKind::Count, |t| {
                if t < 1.0 {
                    2.0
                } else {
                    3.0
                }
            }),
        ],
        _ => vec![("records", GaugeKind::Count, |t| 100.0 * t)],
    };
    list.into_iter()
        .map(|(n, k, f)| (format!("{store}.{n}"), k, f))
        .collect()
}

/// A base64 V2 HdrHistogram of nanosecond latencies around `median_us`.
fn histogram(median_us: f64, tail: f64) -> String {
    let mut h = hdrhistogram::Histogram::<u64>::new(3).expect("a histogram");
    for k in 1..=2000u64 {
        let q = k as f64 / 2001.0;
        // A log-normal-ish spread with a heavier tail.
        let us = median_us * (1.0 + tail * (q / (1.0 - q)).ln().max(-0.9) * 0.3).max(0.1);
        h.record((us * 1000.0) as u64).expect("recorded");
    }
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&h, &mut bytes)
        .expect("serialized");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn section(op: Operation, intended: bool, operations: u64, median_us: f64) -> SectionReport {
    let percentile = |p: f64, us: f64| PercentileLatency {
        percentile: p,
        us: us as u64,
        ns: (us * 1000.0) as u64,
    };
    SectionReport {
        name: if intended {
            op.intended_name().to_string()
        } else {
            op.name().to_string()
        },
        operation: op,
        intended,
        failed: false,
        operations,
        average_us: median_us * 1.3,
        min_us: (median_us / 4.0) as u64,
        max_us: (median_us * 300.0) as u64,
        average_ns: median_us * 1300.0,
        min_ns: (median_us * 250.0) as u64,
        max_ns: (median_us * 300_000.0) as u64,
        percentiles: vec![
            percentile(50.0, median_us),
            percentile(95.0, median_us * 3.0),
            percentile(99.0, median_us * 8.0),
            percentile(99.9, median_us * 40.0),
        ],
        histogram: Some(histogram(median_us, if intended { 3.0 } else { 1.0 })),
        returns: vec![StatusCount {
            status: "OK".into(),
            count: operations,
        }],
        java: None,
    }
}

/// The operations of a core workload.
fn operations(workload: &str, phase: &str) -> Vec<Operation> {
    match (phase, workload) {
        ("load", _) => vec![Operation::Insert],
        (_, "workloadc") => vec![Operation::Read],
        (_, "workloade") => vec![Operation::Scan, Operation::Insert],
        _ => vec![Operation::Read, Operation::Update],
    }
}

fn phase(spec: &Spec, name: &str, seconds: f64, rate: f64, median_us: f64) -> PhaseReport {
    let ops = operations(spec.workload, name);
    let intended = spec.target.is_some();
    let gauges = gauges(spec.store);
    let steps = (seconds / spec.granularity).ceil().max(1.0) as usize;
    let mut rows = Vec::new();
    for k in 1..=steps {
        let t = (k as f64 * spec.granularity).min(seconds);
        let interval = t - (k - 1) as f64 * spec.granularity;
        let wobble = 1.0 + 0.15 * (t * 1.7 + median_us).sin();
        let operations = (rate * wobble * interval) as u64;
        let mut row = SeriesRow::empty(t, interval, false);
        row.operations = operations;
        row.throughput = operations as f64 / interval;
        for op in &ops {
            for twin in [false, true] {
                if twin && !intended {
                    continue;
                }
                let n = operations / ops.len() as u64;
                let p50 = (median_us * wobble * if twin { 2.0 } else { 1.0 }) as u64;
                row.sections.push(SeriesSection {
                    name: if twin { op.intended_name() } else { op.name() }.to_string(),
                    operation: op.name().to_string(),
                    intended: twin,
                    operations: n,
                    throughput: n as f64 / interval,
                    errors: 0,
                    avg_us: p50 as f64 * 1.2,
                    min_us: p50 / 3,
                    p50_us: p50,
                    p99_us: p50 * 8,
                    p999_us: p50 * 30,
                    max_us: p50 * 200,
                });
            }
        }
        row.client = Some(ResourceUsage {
            cpu_user_pct: 80.0 * wobble,
            cpu_system_pct: 20.0 * wobble,
            rss_bytes: (30e6 + 1e6 * t) as u64,
            peak_rss_bytes: (31e6 + 1e6 * t) as u64,
            read_bytes: Some(0),
            write_bytes: Some((2e6 * interval) as u64),
            read_bytes_per_s: Some(1e5 * wobble),
            write_bytes_per_s: Some(2e6 * wobble),
            voluntary_ctxt_switches: 10,
            involuntary_ctxt_switches: 1,
        });
        row.db_size_bytes = Some((5e6 + 1e6 * t) as u64);
        for (gauge, _, value) in &gauges {
            row.gauges.insert(gauge.clone(), value(t));
        }
        rows.push(row);
    }
    let total: u64 = rows.iter().map(|r| r.operations).sum();
    let mut sections = Vec::new();
    for op in &ops {
        sections.push(section(*op, false, total / ops.len() as u64, median_us));
    }
    if intended {
        for op in &ops {
            sections.push(section(
                *op,
                true,
                total / ops.len() as u64,
                median_us * 2.0,
            ));
        }
    }
    let point = IntervalPoint {
        time_s: spec.granularity,
        throughput: rate,
    };
    PhaseReport {
        phase: name.to_string(),
        runtime_ms: (seconds * 1000.0) as u64,
        runtime_ns: (seconds * 1e9) as u64,
        operations: total,
        throughput: total as f64 / seconds,
        sections,
        format: ReportFormat::default(),
        observation: Some(PhaseObservation {
            granularity_s: spec.granularity,
            start_unix_ms: 1_795_000_000_000,
            warmup: None,
            stability: Some(Stability {
                intervals: rows.len(),
                mean_throughput: rate,
                stddev_throughput: rate * 0.1,
                cv: 0.1,
                slowest: point.clone(),
                fastest: point,
                p99_us: Vec::new(),
                steady_state: None,
                errors: 0,
                error_share: 0.0,
            }),
            amplification: None,
            gauge_kinds: gauges
                .iter()
                .map(|(n, k, _)| (n.clone(), *k))
                .collect::<BTreeMap<_, _>>(),
            series: rows,
        }),
    }
}

/// An export of `spec`: a load of a second and the run phase.
pub(crate) fn report(spec: &Spec) -> RunReport {
    let config = |key: &str, value: String| ConfigEntry {
        key: key.into(),
        value,
        origin: "-p".into(),
    };
    let mut entries = vec![
        config("threadcount", spec.threads.to_string()),
        config("recordcount", "10000".into()),
        config(
            "timeseries.granularity",
            format!("{}", spec.granularity * 1000.0),
        ),
    ];
    if let Some(target) = spec.target {
        entries.push(config("target", format!("{target}")));
    }
    let speed = STORES.iter().position(|s| *s == spec.store).unwrap_or(7) as f64 + 1.0;
    RunReport {
        schema_version: ycsb_results::SCHEMA_VERSION,
        metadata: RunMetadata {
            command_line: vec![
                "ycsb".into(),
                "-load".into(),
                "-run".into(),
                "-db".into(),
                spec.store.into(),
                "-P".into(),
                format!("workloads/{}", spec.workload),
            ],
            store: Some(spec.store.into()),
            engine: Some(spec.store.to_uppercase()),
            engine_version: Some("1.0".into()),
            durability: Some(DurabilityEntry {
                property: format!("{}.sync", spec.store),
                value: "false".into(),
                durable: false,
            }),
            ..RunMetadata::new("ycsb", "0.1.0", "2026-12-04T00:00:00+00:00")
        },
        config: entries,
        phases: vec![
            phase(spec, "load", 1.0, 5000.0 * speed, 20.0 + speed),
            phase(
                spec,
                "run",
                spec.seconds,
                8000.0 * speed,
                10.0 + speed * 2.0,
            ),
        ],
        engine_reports: vec![EngineReportEntry {
            name: format!("{}.stats", spec.store),
            text: format!(
                "** {} stats **\nLevel Files Size\n  L0  2  1.0 MB\n",
                spec.store
            ),
        }],
    }
}

/// The demo's engines.
pub(crate) const STORES: [&str; 7] = [
    "rocksdb",
    "leveldb",
    "wiredtiger",
    "lmdb",
    "sqlite",
    "fjall",
    "redb",
];

/// `n` runs as `ycsb report` would name them: the demo's stores over
/// workloads A, C (then B, D, F), redb's runs much longer than the rest.
pub(crate) fn runs(n: usize) -> Vec<crate::Run> {
    let workloads = [
        "workloada",
        "workloadc",
        "workloadb",
        "workloadd",
        "workloadf",
    ];
    let per_workload = n.min(STORES.len());
    let specs: Vec<Spec> = (0..n)
        .map(|i| {
            let store = STORES[i % per_workload];
            let workload = workloads[(i / per_workload) % workloads.len()];
            let seconds = if store == "redb" {
                40.0
            } else {
                2.0 + (i % 3) as f64
            };
            Spec::new(store, workload, seconds)
        })
        .collect();
    crate::runs_from_exports(
        specs
            .iter()
            .map(|s| (format!("{}-{}.json", s.store, s.workload), report(s)))
            .collect(),
    )
}
