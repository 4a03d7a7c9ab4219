//! End-to-end test of a target sweep with `cargo xtask experiment` and the
//! real `ycsb` binary on the basic and memory stores: the matrix's
//! `target` axis gives the latency-against-throughput figure (one curve
//! per store, a point per target, the knee marked) in the report, the
//! knees in the summary and the points in `sweep-run.csv`; cells this
//! short are said to be too short for their time charts, with the true
//! reason.

mod common;
// The headless-Chromium checks of ycsb-cli's page tests, for this page too.
#[path = "../../crates/ycsb-cli/tests/browser/mod.rs"]
mod browser;

use common::{experiment, read, run_experiment, write_matrix};

/// Targets of 500 and 2000 ops/s, which both stores follow, 10^9, which
/// neither can (the knee), and unthrottled; 300 operations per cell.
#[test]
fn a_target_sweep_draws_latency_against_throughput_with_the_knee() {
    let dir = tempfile::tempdir().unwrap();
    let matrix = write_matrix(
        &dir.path().join("sweep.toml"),
        "workloada",
        r#"name = "sweep"

[properties]
recordcount = 50
operationcount = 300

[axes]
db = ["basic", "memory"]
target = [2000, 500, 1e9, 0]
"#,
    );
    let results = dir.path().join("results");
    let out = experiment(&matrix, &results).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = results.join("sweep");

    // The points: per store and operation, one per target, by increasing
    // target, unthrottled last; the knee at 10^9, which neither follows.
    let csv = read(&results.join("sweep-run.csv"));
    for db in ["basic", "memory"] {
        let rows: Vec<Vec<&str>> = csv
            .lines()
            .filter(|l| l.split(',').nth(1) == Some(db) && l.contains(",READ,"))
            .map(|l| l.split(',').collect())
            .collect();
        let targets: Vec<&str> = rows.iter().map(|r| r[2]).collect();
        assert_eq!(targets, ["500", "2000", "1000000000", "0"], "{csv}");
        let knees: Vec<&str> = rows.iter().map(|r| r[5]).collect();
        assert_eq!(knees, ["false", "false", "true", "false"], "{csv}");
        for r in &rows[..2] {
            assert_eq!(r[4], "true", "{db} follows {}: {csv}", r[2]);
            // A target run records the latency from the intended start.
            assert!(!r[9].is_empty(), "Intended p99 at {}: {csv}", r[2]);
        }
        assert!(rows[3][9].is_empty(), "no intended latency unthrottled");
    }

    // The figure: one chart per operation of workload A, a curve per
    // store whose line has a point per target, and the knee marked.
    let html = read(&results.join("report.html"));
    let run = html
        .find("<section id=\"run\">")
        .expect("the run phase has its section");
    let start = run
        + html[run..]
            .find("<h3>Latency against throughput (target sweep)</h3>")
            .expect("the sweep has its section");
    let end = start
        + 4
        + html[start + 4..]
            .find("<h3>")
            .unwrap_or(html.len() - start - 4);
    let sweep = &html[start..end];
    assert_eq!(sweep.matches("<svg").count(), 2, "READ and UPDATE");
    for op in ["READ", "UPDATE"] {
        assert!(
            sweep.contains(&format!("run {op}: latency against throughput")),
            "{op}"
        );
    }
    let svg = &sweep[sweep.find("<svg").unwrap()..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    for legend in [
        ">basic p50<",
        ">basic p99<",
        ">basic Intended p99<",
        ">memory p50<",
        ">memory p99<",
        ">memory Intended p99<",
        ">basic knee<",
        ">memory knee<",
    ] {
        assert!(svg.contains(legend), "{legend} in {svg}");
    }
    // The first series is basic's p50: a line through the four targets.
    let path = &svg[svg.find("<path d=\"").unwrap() + 9..];
    let path = &path[..path.find('"').unwrap()];
    assert_eq!(path.matches('L').count(), 3, "four points: {path}");
    assert!(sweep.contains("basic: knee at "), "{sweep}");
    assert!(
        sweep.contains("(target 1000000000 not followed)"),
        "{sweep}"
    );

    // The summary says the same.
    let md = read(&results.join("summary.md"));
    assert!(
        md.contains("#### run phase: latency against throughput")
            && md.contains("- memory: knee at "),
        "{md}"
    );
    assert!(stdout.contains("- basic: knee at "), "{stdout}");

    // Cells of well under a second: said to be too short for their time
    // charts, and an empty CPU chart says why, not that /proc is missing.
    assert!(
        html.contains("too short for time charts: ")
            && html.contains("fewer than 5 status intervals of 1 s"),
        "{html}"
    );
    assert!(md.contains("Note: too short for time charts: "), "{md}");
    assert!(!html.contains("/proc/self is needed"));
    // The page reads well: every chart drawn, no text clipped by its
    // chart or overlapping another, nothing wider than the window.
    assert_reads_well(dir.path(), &html, sweep);

    // An empty CPU chart says why: the run was shorter than an interval.
    let cpu = &html[run + html[run..].find("Client CPU").unwrap()..];
    assert!(
        cpu.contains("no data: ")
            && cpu.contains("less than one full interval of 1.0 s to take a rate over"),
        "{cpu}"
    );
}

/// A target that is not a rate is bad input: one line naming file:line,
/// status 2, nothing run or written.
#[test]
fn a_target_that_is_not_a_rate_is_refused_on_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let matrix = dir.path().join("m.toml");
    std::fs::write(
        &matrix,
        "[experiment]\nio_ceiling = \"off\"\n[axes]\ndb = [\"memory\"]\ntarget = [1000,\n  -50]\n",
    )
    .unwrap();
    let results = dir.path().join("results");
    for extra in [&["--check"][..], &[]] {
        let (out, err) = run_experiment(&matrix, &results, extra);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("m.toml:6: axes.target '-50': expected a rate in operations per second, 0 or more (0: unthrottled)"),
            "{err}"
        );
    }
    assert!(!results.exists(), "nothing written");
}

/// Draws the report in headless Chromium (which CI installs; elsewhere its
/// absence skips this part): every chart draws something, no text is
/// clipped or overlaps another, the page fits the window; and the sweep
/// alone makes a picture (docs/experiment-latency-throughput.png is the
/// shipped matrix's, made the same way from a real run).
fn assert_reads_well(dir: &std::path::Path, html: &str, sweep: &str) {
    let Some(chromium) = browser::chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed (it is in xtask's DEBIAN_PACKAGES)"
        );
        eprintln!("skipped: chromium is not installed");
        return;
    };
    let layout = browser::check_layout(&chromium, dir, html);
    assert!(layout.problems.is_empty(), "{:#?}", layout.problems);
    assert!(!layout.charts.is_empty());
    for chart in &layout.charts {
        assert!(
            !chart.contains("shapes=0 "),
            "a chart draws nothing: {chart}"
        );
    }
    // The sweep alone, in the report's own style, for the picture.
    let body = html.find("<body").unwrap();
    let body = body + html[body..].find('>').unwrap() + 1;
    let page = dir.join("sweep.html");
    std::fs::write(&page, format!("{}{sweep}</body></html>", &html[..body])).unwrap();
    let url = format!("file://{}", page.display());
    browser::screenshot(
        &chromium,
        dir,
        &url,
        (1000, 1500),
        "sweep.png",
        browser::Keep::No,
    );
}
