//! `ycsb report`: the comparison of real RocksDB and LevelDB runs (the
//! demo's report, at a test's scale) as HTML and SVG, the demo's 14 runs
//! (every embedded engine on workloads A and C), and those pages as a
//! browser draws them (headless Chromium): every chart drawn, no text
//! clipped or overlapping. With `YCSB_SCREENSHOTS=docs` the screenshots
//! are kept as docs/report-14-runs.png.

mod browser;
mod common;

use std::path::{Path, PathBuf};

use browser::{check_layout, chromium, screenshot, Keep};
use common::*;

/// Loads and runs workload A on `db` as `cargo xtask demo` does (its
/// store's shipped properties, a 0.2 s time series), at a test's scale:
/// write buffers of 1 MiB so that 8 MB of records reach the LSM levels.
/// Each phase is held to 20,000 operations a second, so that it lasts
/// at least 0.4 s, eight points of the 50 ms series however fast the
/// machine: a phase over within one interval has a single point and no
/// line to draw (a run phase of reads that got faster did just that).
/// Returns the export's path (inside `dir`).
fn demo_export(dir: &Path, db: &str) -> PathBuf {
    let export = dir.join(format!("{db}-workloada.json"));
    let out = load_run(db, "workloads/workloada")
        .arg("-P")
        .arg(format!("{db}/{db}.properties"))
        .arg("-p")
        .arg(format!("{db}.dbname={}", dir.join(db).display()))
        .args(["-p", &format!("{db}.write_buffer_size=1048576")])
        .args(["-p", "recordcount=8000", "-p", "operationcount=8000"])
        .args(["-threads", "2", "-target", "20000"])
        .args(["-p", "timeseries.granularity=50"])
        .args(json_export(&export))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    export
}

/// The demo's two exports and their comparison page.
fn demo_report(dir: &Path) -> (Vec<PathBuf>, PathBuf) {
    let exports = vec![demo_export(dir, "rocksdb"), demo_export(dir, "leveldb")];
    let html = dir.join("report.html");
    let out = ycsb_report(&exports, &html);
    assert!(stderr(&out).contains("2 runs"), "{}", stderr(&out));
    (exports, html)
}

#[test]
fn report_compares_runs_in_one_table_and_overlaid_charts() {
    let dir = tempfile::tempdir().unwrap();
    let (exports, html) = demo_report(dir.path());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        !page.contains("<script") && !page.contains("src=") && !page.contains("href="),
        "self-contained"
    );
    // Runs are named by store, version and workload, not by file.
    let rocksdb = page.find("<th>rocksdb ").expect("a rocksdb column");
    let leveldb = page.find("<th>leveldb ").expect("a leveldb column");
    assert!(rocksdb < leveldb, "in the order given");
    assert!(page.contains(" · workloada</th>"));
    for row in [
        "store",
        "engine build",
        "workload",
        "threads",
        "records",
        "load throughput (ops/s)",
        "run throughput (ops/s)",
        "target (ops/s)",
        "READ avg / p50 / p95 / p99 / p99.9 (µs)",
        "READ intended avg / p50 / p95 / p99 / p99.9 (µs)",
        "UPDATE avg / p50 / p95 / p99 / p99.9 (µs)",
        "errors",
        "stability (run)",
        "write amplification",
        "space amplification",
        "client CPU (mean % of one core)",
        "client peak RSS",
    ] {
        assert!(page.contains(&format!("<tr><th>{row}</th>")), "{row}");
    }
    assert!(page.contains("<h3>Engine gauges: rocksdb</h3>"));
    assert!(page.contains("<h3>Engine gauges: leveldb</h3>"));
    // One section per phase, each chart overlaying both runs.
    for heading in ["load phase", "run phase"] {
        assert!(page.contains(&format!("<h2>{heading}</h2>")), "{heading}");
    }
    for title in [
        "Throughput",
        "READ latency",
        "READ intended latency",
        "READ latency distribution",
        "Client CPU",
        "Client memory (RSS)",
        "Client disk I/O",
        "Database size on disk",
        "block-cache-usage",
        "approximate-memory-usage",
    ] {
        let count = page.matches(&format!(">{title}</text>")).count();
        assert!(count >= 1, "{title} drawn in some phase");
    }
    let run = &page[page.find("<h2>run phase</h2>").unwrap()..];
    let throughput = &run[..run.find("</figure>").unwrap()];
    assert_eq!(
        throughput.matches("<path d=\"M").count(),
        2,
        "one throughput line per run"
    );
    // 8 MB through 1 MiB write buffers: files reach some level.
    assert!(run.contains(">L0<") || run.contains(">L1<"), "{run}");
    // A chart without data is one line saying why, never an empty box.
    assert!(!page.contains(">no data<"));
    // Each engine's statistics and each run's command line and
    // configuration, folded.
    assert!(
        page.contains("<details><summary>rocksdb "),
        "rocksdb.stats folded"
    );
    assert!(page.matches("<details>").count() >= 3);
    assert!(page.contains("<th>recordcount</th><td class=\"n\">8000</td>"));

    // The same comparison as one SVG document.
    let svg = dir.path().join("report.svg");
    let text = report_page(&exports, &svg);
    assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_eq!(
        text.matches("<svg ").count() - 1,
        page.matches("<svg ").count(),
        "the same charts"
    );
}

#[test]
fn a_disabled_time_series_is_named_as_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("off.json");
    let out = ycsb()
        .args(["-run", "-db", "memory", "-P", "workloads/workloadc"])
        .args(["-p", "timeseries.granularity=0", "-p", "exporter=json"])
        .arg("-p")
        .arg(format!("exportfile={}", export.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let html = dir.path().join("r.html");
    let page = report_page(&[&export], &html);
    assert!(
        page.contains(
            "<b>Throughput</b>: no data: timeseries.granularity=0 turns the time series off"
        ),
        "{page}"
    );
    assert!(!page.contains("<figure>"));
    assert!(
        !page.contains("ycsb that records"),
        "no blame on the version"
    );
}

/// Chromium, or `None` (with a note) where it is not installed; on CI its
/// absence fails.
fn chromium_or_skip() -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        // CI installs chromium (DEBIAN_PACKAGES): there, its absence fails.
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed (it is in xtask's DEBIAN_PACKAGES)"
        );
        eprintln!("skipped: chromium is not installed");
    }
    found
}

/// Asserts that every chart of the page is drawn and no text of it is
/// clipped or overlaps another; returns the number of charts.
fn assert_clean_layout(chromium: &Path, dir: &Path, html: &Path) -> usize {
    let page = std::fs::read_to_string(html).unwrap();
    let layout = check_layout(chromium, dir, &page);
    assert!(
        layout.problems.is_empty(),
        "{} layout problems:\n{}",
        layout.problems.len(),
        layout.problems.join("\n")
    );
    for chart in &layout.charts {
        let shapes: usize = chart
            .split("shapes=")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(shapes >= 1, "a chart without drawn data: {chart}");
    }
    layout.charts.len()
}

#[test]
fn the_report_renders_in_chromium_with_every_chart_drawn() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_, html) = demo_report(dir.path());
    let charts = assert_clean_layout(&chromium, dir.path(), &html);
    assert!(charts >= 10, "{charts} charts");
    // And the browser's picture of it is not blank.
    let bytes = screenshot(
        &chromium,
        dir.path(),
        &format!("file://{}", html.display()),
        (960, 1200),
        "report-2-runs.png",
        Keep::No,
    );
    assert!(bytes.len() > 20_000, "{} bytes: a blank page?", bytes.len());
}

/// The stores the demo runs: every embedded engine (a data directory and
/// a durability setting on its descriptor).
fn demo_stores() -> impl Iterator<Item = &'static ycsb_db::StoreDescriptor> {
    ycsb_stores::STORES
        .iter()
        .filter(|s| s.data_dir.is_some() && s.durability.is_some())
}

/// The demo's runs at a test's scale: every embedded engine (the stores
/// with a data directory and a durability setting, each at its relaxed
/// value, as `cargo xtask demo` runs them) on workloads A and C, each
/// phase held to 4000 operations a second so that it lasts about half a
/// second: five points of the 0.1 s series. Returns the exports' paths.
fn demo_exports(dir: &Path) -> Vec<PathBuf> {
    let mut exports = Vec::new();
    for store in demo_stores() {
        let (Some(data_dir), Some(durability)) = (store.data_dir, store.durability) else {
            continue;
        };
        for workload in ["workloada", "workloadc"] {
            let export = dir.join(format!("{}-{workload}.json", store.name));
            let out = ycsb()
                .args(["-load", "-run", "-db", store.name, "-P"])
                .arg(format!("workloads/{workload}"))
                .arg("-P")
                .arg(format!("{0}/{0}.properties", store.name))
                .arg("-p")
                .arg(format!(
                    "{}={}",
                    data_dir.name,
                    dir.join(format!("{}-{workload}", store.name)).display()
                ))
                .arg("-p")
                .arg(format!("{}={}", durability.property, durability.relaxed))
                .args(["-p", "recordcount=2000", "-p", "operationcount=2000"])
                .args(["-threads", "2", "-target", "4000"])
                .args(["-p", "timeseries.granularity=100"])
                .args(json_export(&export))
                .output()
                .unwrap();
            assert!(out.status.success(), "{}: {}", store.name, stderr(&out));
            exports.push(export);
        }
    }
    exports
}

/// The demo's 14 runs in one report: a short title, tables that fit the
/// page, small multiples, every engine's gauges; drawn by Chromium with
/// every chart drawn and no label clipped or overlapping.
#[test]
fn a_report_of_the_demo_s_14_runs_reads_well() {
    let dir = tempfile::tempdir().unwrap();
    let exports = demo_exports(dir.path());
    assert_eq!(exports.len(), 14, "seven engines, two workloads");
    let html = dir.path().join("report-14.html");
    let page = report_page(&exports, &html);
    assert!(
        page.contains("<title>ycsb report: 7 stores × workloads A, C</title>"),
        "{}",
        &page[..300]
    );
    // Tables fit: at most six figures beside the run's name.
    for table in page.split("<table class=\"summary\">").skip(1) {
        let header = &table[..table.find("</tr>").unwrap()];
        assert!(header.matches("<th>").count() <= 7, "{header}");
    }
    for store in demo_stores() {
        assert!(
            page.contains(&format!("<h3>Engine gauges: {}</h3>", store.name)),
            "{}'s gauges",
            store.name
        );
    }
    assert!(
        page.contains("READ p99 intended latency"),
        "a target was set"
    );
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let charts = assert_clean_layout(&chromium, dir.path(), &html);
    assert!(charts >= 40, "{charts} charts");
    let bytes = screenshot(
        &chromium,
        dir.path(),
        &format!("file://{}", html.display()),
        (960, 5600),
        "report-14-runs.png",
        Keep::AsDocs,
    );
    assert!(
        bytes.len() > 100_000,
        "{} bytes: a blank page?",
        bytes.len()
    );
}
