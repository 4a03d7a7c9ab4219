use std::path::Path;

use ycsb_results::{
    Operation, PercentileLatency, PhaseReport, ReportFormat, RunMetadata, RunReport, SectionReport,
};

use super::*;
use crate::cells;
use crate::matrix::parse;

fn matrix(axes: &str, repeats: u32) -> Matrix {
    let text = format!(
        "[experiment]\nname = \"t\"\nrepeats = {repeats}\nphases = [\"run\"]\n[axes]\n{axes}"
    );
    parse(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../matrices/test.toml"),
        &text,
    )
    .unwrap()
}

fn section(name: &str, intended: bool, p50_us: f64, p99_us: f64) -> SectionReport {
    let p = |percentile: f64, us: f64| PercentileLatency {
        percentile,
        us: us as u64,
        ns: (us * 1000.0) as u64,
    };
    SectionReport {
        name: name.into(),
        operation: Operation::Read,
        intended,
        failed: false,
        operations: 100,
        average_us: p50_us,
        min_us: 0,
        max_us: 0,
        average_ns: p50_us * 1000.0,
        min_ns: 0,
        max_ns: 0,
        percentiles: vec![p(50.0, p50_us), p(99.0, p99_us)],
        histogram: None,
        returns: Vec::new(),
        java: None,
    }
}

/// The result of cell `id` achieving `throughput` with READ latencies
/// p50/p99 and an intended p99 (none: unthrottled).
fn result(
    m: &Matrix,
    id: &str,
    throughput: f64,
    (p50, p99): (f64, f64),
    intended_p99: Option<f64>,
) -> CellResult {
    let cell = cells::expand(m).into_iter().find(|c| c.id == id).unwrap();
    let mut sections = vec![section("READ", false, p50, p99)];
    if let Some(i) = intended_p99 {
        sections.push(section("Intended-READ", true, p50, i));
    }
    let export = RunReport {
        schema_version: ycsb_results::SCHEMA_VERSION,
        metadata: RunMetadata::new("ycsb", "0", "2026-12-04T00:00:00+00:00"),
        config: Vec::new(),
        phases: vec![PhaseReport {
            phase: "run".into(),
            runtime_ms: 1000,
            runtime_ns: 1_000_000_000,
            operations: throughput as u64,
            throughput,
            sections,
            format: ReportFormat::default(),
            observation: None,
        }],
        engine_reports: Vec::new(),
    };
    CellResult {
        cell,
        export,
        series: Vec::new(),
        io_ceiling: None,
    }
}

fn point(target: f64, throughput: f64) -> Point {
    Point {
        target,
        label: target.to_string(),
        throughput,
        latency: BTreeMap::new(),
    }
}

#[test]
fn the_knee_is_the_first_target_not_followed_or_the_unthrottled_point() {
    let followed = [point(1000.0, 1000.0), point(5000.0, 4600.0)];
    assert_eq!(knee(&followed), None);
    let with_unthrottled = [
        point(1000.0, 1000.0),
        point(5000.0, 4600.0),
        point(0.0, 30_000.0),
    ];
    assert_eq!(knee(&with_unthrottled), Some(2));
    let saturated = [
        point(1000.0, 999.0),
        // 4400 of 5000 is 88 %: below 90 %.
        point(5000.0, 4400.0),
        point(20_000.0, 4500.0),
        point(0.0, 4700.0),
    ];
    assert_eq!(knee(&saturated), Some(1));
    assert!(saturated[0].follows() && !saturated[3].follows());
}

#[test]
fn curves_per_store_and_panel_with_targets_in_order_and_means_over_repeats() {
    let m = matrix(
        "db = [\"memory\", \"basic\"]\ntarget = [5000, 1000, 0]\nthreadcount = [1, 2]\n",
        2,
    );
    let mut results = Vec::new();
    for threads in [1, 2] {
        for r in [1, 2] {
            // memory saturates at 4000 ops/s (4400 with two threads);
            // basic follows every target. Repeats differ by 100 ops/s and
            // 2 µs.
            let extra = f64::from(r - 1);
            let base = if threads == 1 { 4000.0 } else { 4400.0 };
            for (db, t, achieved, lat, intended) in [
                ("memory", "5000", base, (10.0, 900.0), Some(50_000.0)),
                ("memory", "1000", 1000.0, (10.0, 100.0), Some(120.0)),
                ("memory", "0", base + 100.0, (12.0, 1000.0), None),
                ("basic", "5000", 5000.0, (1.0, 2.0), Some(3.0)),
                ("basic", "1000", 1000.0, (1.0, 2.0), Some(3.0)),
                ("basic", "0", 1_234_500.0, (1.0, 2.0), None),
            ] {
                results.push(result(
                    &m,
                    &format!("db={db},target={t},threadcount={threads},r{r}"),
                    achieved + 100.0 * extra,
                    (lat.0 + 2.0 * extra, lat.1),
                    intended,
                ));
            }
        }
    }
    let panels = panels(&m, &results, "run");
    let keys: Vec<&str> = panels.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, ["threadcount=1", "threadcount=2"]);
    let one = &panels[0];
    let dbs: Vec<(&str, usize)> = one
        .curves
        .iter()
        .map(|c| (c.db.as_str(), c.colour))
        .collect();
    assert_eq!(
        dbs,
        [("memory", 0), ("basic", 1)],
        "db axis order and colours"
    );
    let memory = &one.curves[0];
    let targets: Vec<&str> = memory.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(
        targets,
        ["1000", "5000", "0"],
        "increasing load, unthrottled last"
    );
    assert_eq!(memory.points[1].throughput, 4050.0, "mean of the repeats");
    assert_eq!(memory.points[1].latency["READ"].p50, 11.0);
    assert_eq!(memory.points[1].latency["READ"].intended_p99, 50_000.0);
    assert!(memory.points[2].latency["READ"].intended_p99.is_nan());
    assert_eq!(memory.knee, Some(1), "5000 ops/s not followed");
    assert_eq!(one.curves[1].knee, Some(2), "basic: the unthrottled point");
    assert_eq!(panels[1].curves[0].points[1].throughput, 4450.0);

    // Drawn: one chart per panel and operation, a curve per store with
    // its knee marked, and the knees in words.
    let html = html(&m, &results, "run");
    assert_eq!(html.matches("<svg").count(), 2, "{html}");
    assert!(html.contains("run READ: latency against throughput (threadcount=1)"));
    for legend in [
        "memory p50",
        "memory p99",
        "memory Intended p99",
        "memory knee",
        "basic knee",
    ] {
        assert!(html.contains(legend), "{legend}");
    }
    assert!(html.contains("memory (threadcount=1): knee at 4050 ops/s (target 5000 not followed)"));
    assert!(html.contains(
        "basic (threadcount=2): knee at 1234.5k ops/s (unthrottled; every target followed)"
    ));
    let md = markdown(&m, &results, "run");
    assert!(
        md.contains("- memory (threadcount=2): knee at 4450 ops/s (target 5000 not followed)"),
        "{md}"
    );
    let csv = csv(&m, &results, "run").unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 2 * 3, "{csv}");
    assert!(
        csv.contains("\"threadcount=1\",memory,5000,4050,false,true,READ,11,900,50000\n"),
        "{csv}"
    );
    assert!(
        csv.contains("\"threadcount=1\",memory,0,4150,false,false,READ,13,1000,\n"),
        "{csv}"
    );
}

#[test]
fn no_sweep_without_a_target_axis_of_several_values() {
    let m = matrix("db = [\"memory\"]\nthreadcount = [1, 2]\n", 1);
    let results = vec![result(
        &m,
        "db=memory,threadcount=1,r1",
        10.0,
        (1.0, 2.0),
        None,
    )];
    assert!(panels(&m, &results, "run").is_empty());
    assert!(blocks(&m, &results, "run").is_empty());
    assert_eq!(markdown(&m, &results, "run"), "");
    assert_eq!(csv(&m, &results, "run"), None);
    let m = matrix("db = [\"memory\"]\ntarget = [100]\n", 1);
    let results = vec![result(
        &m,
        "db=memory,target=100,r1",
        10.0,
        (1.0, 2.0),
        None,
    )];
    assert!(panels(&m, &results, "run").is_empty());
}

/// The sweep's blocks as the report renders them.
fn html(m: &Matrix, results: &[CellResult], phase: &str) -> String {
    let mut section = ycsb_report::Section::new("sweep");
    section.blocks = blocks(m, results, phase);
    let mut page = ycsb_report::Page::new("sweep");
    page.sections.push(section);
    ycsb_report::render_html(&page)
}
