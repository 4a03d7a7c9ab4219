//! `ycsb report`: the comparison of real RocksDB and LevelDB runs (the
//! demo's report, at a test's scale) as HTML and SVG, and that page as a
//! browser draws it (headless Chromium).

mod browser;
mod common;

use std::path::{Path, PathBuf};

use browser::{chromium, run_chromium};
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
    let out = ycsb()
        .args([
            "-load",
            "-run",
            "-db",
            db,
            "-P",
            "workloads/workloada",
            "-P",
        ])
        .arg(format!("{db}/{db}.properties"))
        .arg("-p")
        .arg(format!("{db}.dbname={}", dir.join(db).display()))
        .args(["-p", &format!("{db}.write_buffer_size=1048576")])
        .args(["-p", "recordcount=8000", "-p", "operationcount=8000"])
        .args(["-threads", "2", "-target", "20000"])
        .args(["-p", "timeseries.granularity=50"])
        .args(["-p", "exporter=json", "-p"])
        .arg(format!("exportfile={}", export.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    export
}

/// The demo's two exports and their comparison page.
fn demo_report(dir: &Path) -> (Vec<PathBuf>, PathBuf) {
    let exports = vec![demo_export(dir, "rocksdb"), demo_export(dir, "leveldb")];
    let html = dir.join("report.html");
    let out = ycsb()
        .arg("report")
        .args(&exports)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
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
        "READ p50 / p99 / p99.9 (µs)",
        "UPDATE p50 / p99 / p99.9 (µs)",
        "errors",
        "stability (run)",
        "write amplification",
        "space amplification",
        "client CPU (mean % of one core)",
        "client peak RSS",
    ] {
        assert!(page.contains(&format!("<tr><th>{row}</th>")), "{row}");
    }
    // One section per phase, each chart overlaying both runs.
    for heading in ["load phase", "run phase"] {
        assert!(page.contains(&format!("<h2>{heading}</h2>")), "{heading}");
    }
    for title in [
        "Throughput",
        "READ latency",
        "Client CPU",
        "Client memory (RSS)",
        "Client disk I/O",
        "Database size on disk",
        "Files per level",
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
    assert!(run.contains(" L0<") || run.contains(" L1<"), "{run}");
    // A chart without data is one line saying why, never an empty box.
    assert!(!page.contains(">no data<"));
    // Each run's command line and configuration, folded.
    assert_eq!(page.matches("<details>").count(), 2);
    assert!(page.contains("<td>recordcount</td><td>8000</td>"));

    // The same comparison as one SVG document.
    let svg = dir.path().join("report.svg");
    let out = ycsb()
        .arg("report")
        .args(&exports)
        .arg("-o")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_eq!(
        text.matches("<svg ").count() - 1,
        page.matches("<figure>").count(),
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
    let out = ycsb()
        .arg("report")
        .arg(&export)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(&html).unwrap();
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

/// What the page checks of itself once parsed: per figure, how many of its
/// lines and dots have a drawn extent, and the chart's size on the page.
const CHECKER: &str = r#"<script>
(function () {
  var lines = [];
  document.querySelectorAll('figure').forEach(function (figure, i) {
    var svg = figure.querySelector('svg');
    var drawn = 0;
    figure.querySelectorAll('svg path, svg circle').forEach(function (shape) {
      var box = shape.getBBox();
      if (box.width > 0 || box.height > 0) { drawn += 1; }
    });
    var size = svg.getBoundingClientRect();
    lines.push('figure ' + i + ' drawn=' + drawn + ' size=' + Math.round(size.width) + 'x' + Math.round(size.height));
  });
  var out = document.createElement('pre');
  out.id = 'render-check';
  out.textContent = lines.join('\n');
  document.body.appendChild(out);
})();
</script>"#;

#[test]
fn the_report_renders_in_chromium_with_every_chart_drawn() {
    let Some(chromium) = chromium() else {
        // CI installs chromium (DEBIAN_PACKAGES): there, its absence fails.
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed (it is in xtask's DEBIAN_PACKAGES)"
        );
        eprintln!("skipped: chromium is not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_, html) = demo_report(dir.path());
    let page = std::fs::read_to_string(&html).unwrap();
    let figures = page.matches("<figure>").count();
    assert!(figures >= 10, "{figures} charts");
    // The page itself has no script; the check is added to a copy.
    let checked = dir.path().join("checked.html");
    std::fs::write(
        &checked,
        page.replace("</body>", &format!("{CHECKER}</body>")),
    )
    .unwrap();
    let url = format!("file://{}", checked.display());
    let (dom, log) = run_chromium(&chromium, dir.path(), &["--dump-dom".into(), url]);
    for line in log.lines() {
        assert!(
            !(line.contains("CONSOLE") || line.contains("Uncaught")),
            "a script error or console message: {line}\n{log}"
        );
    }
    let report = dom
        .split("<pre id=\"render-check\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the check did not run:\n{log}\n{dom}"));
    let rows: Vec<&str> = report.lines().collect();
    assert_eq!(rows.len(), figures, "{report}");
    for row in rows {
        let drawn: usize = row
            .split("drawn=")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(drawn >= 1, "a chart without drawn data: {row}");
        assert!(row.contains(" size=900x"), "drawn at full width: {row}");
    }

    // And the browser's picture of it is not blank.
    let png = dir.path().join("report.png");
    run_chromium(
        &chromium,
        dir.path(),
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=960,1200".into(),
            format!("file://{}", html.display()),
        ],
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
    assert!(bytes.len() > 20_000, "{} bytes: a blank page?", bytes.len());
}
