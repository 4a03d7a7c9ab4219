//! Tests of whole reports: pages built from exports (hand-written JSON
//! completed from a template, and synthetic typed exports of 2 to 30
//! runs), their tables, charts parsed back from the rendered SVG, and
//! the true reasons of what they leave out.

use serde_json::{json, Value};
use ycsb_results::RunReport;

use crate::model::{Block, Page, Section};
use crate::testdata::{self, Spec};
use crate::{
    render_html, render_svg, render_svg_page, runs_from_exports, Chart, Comparison, Dash,
    TABLE_COLUMNS, WIDTH,
};

/// three full 1 s intervals and a 10 ms tail.
fn export(store: &str, version: &str, granularity: &str) -> Value {
    let row = |t: f64, ops: u64, p99: u64, l0: f64| {
        json!({
            "time_s": t, "interval_s": if t.fract() == 0.0 { 1.0 } else { 0.01 },
            "throughput": ops as f64, "operations": ops,
            "sections": [
                {"name": "READ", "intended": false, "operations": ops / 2, "throughput": (ops / 2) as f64,
                 "p50_us": 10, "p99_us": p99, "p999_us": p99 * 3},
                {"name": "UPDATE", "intended": false, "operations": 0, "throughput": 0.0,
                 "p50_us": 0, "p99_us": 0, "p999_us": 0},
                {"name": "CLEANUP", "intended": false, "operations": 0},
            ],
            "client": {"cpu_user_pct": 50.0, "cpu_system_pct": 10.0, "rss_bytes": 2_097_152,
                       "peak_rss_bytes": 3_145_728, "read_bytes_per_s": 0.0, "write_bytes_per_s": 2e6},
            "monitor": null,
            "db_size_bytes": 5_000_000,
            "gauges": {"x.num-files-at-level0": l0, "x.num-files-at-level1": 4.0,
                       "x.num-files-at-level2": 0.0}
        })
    };
    let section = |name: &str, errors: u64| {
        json!({"name": name, "intended": false, "operations": 1000,
               "percentiles": [{"percentile": 50.0, "us": 10}, {"percentile": 99.0, "us": 95},
                               {"percentile": 99.9, "us": 12000}],
               "returns": [{"status": "OK", "count": 1000 - errors}, {"status": "ERROR", "count": errors}]})
    };
    json!({
        "metadata": {"store": store, "engine": store.to_uppercase(), "engine_version": version,
                     "command_line": ["ycsb", "-run", "-P", "workloads/workloada", "-p", "a=b c"],
                     "engine_build": {"library": "/usr/lib/libx.so", "assertions": "disabled"}},
        "config": [{"key": "threadcount", "value": "2", "origin": "-threads"},
                   {"key": "recordcount", "value": "1000", "origin": "workloads/workloada:1"},
                   {"key": "timeseries.granularity", "value": granularity, "origin": "default"},
                   {"key": "steadystate.window", "value": "1", "origin": "-p"}],
        "phases": [
            {"phase": "run", "operations": 3100, "throughput": 1033.0,
             "sections": [section("READ", 2), section("UPDATE", 0)],
             "observation": if granularity == "0" { Value::Null } else { json!({
                "granularity_s": 1.0,
                "series": [row(1.0, 1000, 80, 2.0), row(2.0, 1200, 95, 3.0), row(3.0, 900, 400, 1.0),
                           row(3.01, 90_000, 400, 1.0)],
                "stability": {"intervals": 3, "cv": 0.125, "steady_state": {"time_s": 2.0}},
                "amplification": {"write_amplification": 3.5, "space_amplification": 1.25}})}},
            {"phase": "load", "throughput": 5000.0, "sections": []}
        ]
    })
}

/// Every field an export has, with neutral values: what [`complete`]
/// fills in where a test's export leaves a field out.
fn template() -> Value {
    let resources = json!({"cpu_user_pct": 0.0, "cpu_system_pct": 0.0, "rss_bytes": 0,
        "peak_rss_bytes": 0, "read_bytes": null, "write_bytes": null,
        "read_bytes_per_s": null, "write_bytes_per_s": null,
        "voluntary_ctxt_switches": 0, "involuntary_ctxt_switches": 0});
    let point = json!({"time_s": 0.0, "throughput": 0.0});
    json!({
        "metadata": {"tool": "ycsb", "version": "0", "git_revision": null, "host": null,
                     "start_time": "2026-12-04T00:00:00+00:00", "command_line": []},
        "config": [{"key": "", "value": "", "origin": ""}],
        "phases": [{"phase": "run", "runtime_ms": 0, "runtime_ns": 0, "operations": 0,
            "throughput": 0.0,
            "sections": [{"name": "READ", "operation": "READ", "intended": false,
                "operations": 0, "average_us": 0.0, "min_us": 0, "max_us": 0,
                "average_ns": 0.0, "min_ns": 0, "max_ns": 0,
                "percentiles": [{"percentile": 50.0, "us": 0, "ns": 0}],
                "returns": [{"status": "OK", "count": 0}]}],
            "observation": {"granularity_s": 1.0, "start_unix_ms": 0, "warmup": null,
                "series": [{"time_s": 0.0, "unix_ms": 0, "interval_s": 1.0, "warmup": false,
                    "operations": 0, "throughput": 0.0, "errors": 0,
                    "sections": [{"name": "READ", "operation": "READ", "intended": false,
                        "operations": 0, "throughput": 0.0, "errors": 0, "avg_us": 0.0,
                        "min_us": 0, "p50_us": 0, "p99_us": 0, "p999_us": 0, "max_us": 0}],
                    "client": resources, "monitor": null, "db_size_bytes": null,
                    "gauges": {}}],
                "stability": {"intervals": 0, "mean_throughput": 0.0,
                    "stddev_throughput": 0.0, "cv": 0.0, "slowest": point,
                    "fastest": point, "p99_us": [],
                    "steady_state": {"interval": 0, "time_s": 0.0}},
                "amplification": {"user_bytes": 0.0, "write_bytes": null,
                    "write_amplification": null, "data_bytes": 0.0, "db_size_bytes": null,
                    "space_amplification": null}}}]
    })
}

/// Adds what `doc` lacks of `template` (objects key by key, each
/// element of an array from the template's first), but an observation.
fn fill(doc: &mut Value, template: &Value) {
    match (doc, template) {
        (Value::Object(fields), Value::Object(wanted)) => {
            for (key, value) in wanted {
                match fields.get_mut(key) {
                    Some(present) => fill(present, value),
                    // A phase without an observation was not observed.
                    None if key == "observation" => {}
                    None => {
                        fields.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (Value::Array(items), Value::Array(wanted)) if !wanted.is_empty() => {
            for item in items {
                fill(item, &wanted[0]);
            }
        }
        _ => {}
    }
}

/// A test's export, completed and read typed.
fn complete(mut doc: Value) -> RunReport {
    fill(&mut doc, &template());
    serde_json::from_value(doc).unwrap()
}

fn comparison(docs: Vec<(&str, Value)>) -> Comparison {
    Comparison::new(runs_from_exports(
        docs.into_iter()
            .map(|(o, d)| (o.to_string(), complete(d)))
            .collect(),
    ))
}
/// A page's blocks as lines of text: `# heading`, `chart TITLE (n series)`,
/// `missing TITLE: reason`, `note ...`, grids' panels indented.
fn outline(blocks: &[Block]) -> Vec<String> {
    let mut out = Vec::new();
    for block in blocks {
        match block {
            Block::Heading(h) => out.push(format!("# {h}")),
            Block::Note(n) => out.push(format!("note {}", n.text)),
            Block::Table(t) => out.push(format!("table {}x{}", t.rows.len(), t.header.len())),
            Block::Chart(f) => out.push(format!(
                "chart {} ({} series)",
                f.chart.title,
                f.chart.series.len()
            )),
            Block::Bars(b) => out.push(format!("bars {} ({} bars)", b.title, b.bars.len())),
            Block::Grid(g) => {
                for line in outline(&g.panels) {
                    out.push(format!("  {line}"));
                }
            }
            Block::Missing { title, reason } => out.push(format!("missing {title}: {reason}")),
            Block::Fold(f) => out.push(format!("fold {}", f.summary)),
            Block::Text(_) => out.push("text".into()),
        }
    }
    out
}

fn section<'a>(page: &'a Page, heading: &str) -> &'a Section {
    page.sections
        .iter()
        .find(|s| s.heading == heading)
        .unwrap_or_else(|| panic!("no section {heading}"))
}

fn chart<'a>(page: &'a Page, title: &str) -> &'a Chart {
    page.charts()
        .into_iter()
        .find(|c| c.title == title)
        .unwrap_or_else(|| {
            let titles: Vec<&str> = page.charts().iter().map(|c| c.title.as_str()).collect();
            panic!("no chart {title}: {titles:?}")
        })
}

/// What a rendered chart shows, parsed back from its SVG.
#[derive(Debug)]
pub(crate) struct Drawn {
    /// Every text element's content.
    pub(crate) texts: Vec<String>,
    /// Per legend entry, its look (colour, pattern, marker) without its
    /// place.
    pub(crate) styles: Vec<String>,
    /// Per legend entry: left edge, baseline, text.
    pub(crate) legend: Vec<(f64, f64, String)>,
}

pub(crate) fn parse(svg: &str) -> Drawn {
    let texts = svg
        .split("<text")
        .skip(1)
        .map(|t| {
            let t = &t[t.find('>').unwrap() + 1..];
            t[..t.find("</text>").unwrap()].to_string()
        })
        .collect();
    let mut styles = Vec::new();
    let mut legend = Vec::new();
    for g in svg.split("<g><title>").skip(1) {
        let swatch = g
            .split("<text")
            .next()
            .unwrap()
            .split("</title>")
            .nth(1)
            .unwrap();
        let (line, marker) = swatch.split_once("/>").unwrap();
        let attribute = |tag: &str, name: &str| {
            tag.split(&format!(" {name}=\""))
                .nth(1)
                .map(|v| v.split('"').next().unwrap().to_string())
        };
        let kind = marker.split(' ').next().unwrap_or("");
        styles.push(format!(
            "{:?} {:?} {kind} {} {}",
            attribute(line, "stroke"),
            attribute(line, "stroke-dasharray"),
            marker.matches('L').count(),
            marker.contains("fill=\"white\"")
        ));
        let x: f64 = attribute(line, "x1").unwrap().parse().unwrap();
        let text = g.split("<text").nth(1).unwrap();
        let y: f64 = attribute(text, "y").unwrap().parse().unwrap();
        let content = &text[text.find('>').unwrap() + 1..text.find("</text>").unwrap()];
        legend.push((x, y, content.to_string()));
    }
    Drawn {
        texts,
        styles,
        legend,
    }
}

/// Checks of every chart of a page as rendered at `width`: each series
/// drawn, no two alike, legend entries apart and inside the chart.
/// Returns the SVG, for more checks.
pub(crate) fn check_rendered(chart: &Chart, width: u32) -> String {
    let svg = render_svg(chart, width, 260);
    let drawn = parse(&svg);
    assert_eq!(drawn.styles.len(), chart.series.len(), "{}", chart.title);
    for (i, s) in drawn.styles.iter().enumerate() {
        assert!(
            !drawn.styles[..i].contains(s),
            "{}: series {i} ({}) looks like an earlier one",
            chart.title,
            chart.series[i].name
        );
    }
    for (i, a) in drawn.legend.iter().enumerate() {
        let a_end = a.0 + 28.0 + crate::text::text_width(&a.2, 12.0);
        assert!(
            a_end <= f64::from(width),
            "{}: {a:?} leaves the chart",
            chart.title
        );
        for b in &drawn.legend[..i] {
            let b_end = b.0 + 28.0 + crate::text::text_width(&b.2, 12.0);
            let same_row = (a.1 - b.1).abs() < 18.0;
            assert!(
                !same_row || a_end <= b.0 || b_end <= a.0,
                "{}: {a:?} overlaps {b:?}",
                chart.title
            );
        }
    }
    assert!(
        drawn.texts.contains(&chart.x_label)
            || chart.x_label.is_empty()
            || drawn.texts.iter().any(|t| t.ends_with('…')),
        "{}: x label",
        chart.title
    );
    svg
}

#[test]
fn runs_are_named_by_what_tells_them_apart() {
    let runs = runs_from_exports(vec![
        (
            "a/rocks.json".into(),
            complete(export("rocksdb", "7.8.3", "1")),
        ),
        (
            "b/level.json".into(),
            complete(export("leveldb", "1.23", "1")),
        ),
    ]);
    assert_eq!(runs[0].name, "rocksdb 7.8.3 · workloada");
    assert_eq!(runs[1].name, "leveldb 1.23 · workloada");
    // The same engine with and without a patch: the file names tell.
    let runs = runs_from_exports(vec![
        (
            "base.json".into(),
            complete(export("rocksdb", "7.8.3", "1")),
        ),
        (
            "patched.json".into(),
            complete(export("rocksdb", "7.8.3", "1")),
        ),
    ]);
    assert_eq!(runs[0].name, "rocksdb · workloada · base");
    assert_eq!(runs[1].name, "rocksdb · workloada · patched");
}

#[test]
fn charts_overlay_two_runs_per_phase() {
    let c = comparison(vec![
        ("r.json", export("rocksdb", "7.8.3", "1")),
        ("l.json", export("leveldb", "1.23", "1")),
    ]);
    let page = c.page("t");
    let headings: Vec<&str> = page.sections.iter().map(|s| s.heading.as_str()).collect();
    assert_eq!(
        headings,
        [
            "Summary",
            "run phase",
            "load phase",
            "Command lines and configurations"
        ]
    );
    let run = outline(&section(&page, "run phase").blocks);
    assert_eq!(
        run,
        [
            "note Rate charts (throughput, CPU, disk I/O) leave out each run's last, partial interval: a few milliseconds' rate is not an interval's.",
            "chart Throughput (2 series)",
            "chart READ latency (6 series)",
            "missing UPDATE latency: no interval performed it",
            "chart READ latency distribution (2 series)",
            "chart UPDATE latency distribution (2 series)",
            "chart Client CPU (4 series)",
            "chart Client memory (RSS) (2 series)",
            "chart Client disk I/O (4 series)",
            "chart Database size on disk (2 series)",
            "# Files per level",
            "  chart Files per level: rocksdb 7.8.3 · workloada (2 series)",
            "  chart Files per level: leveldb 1.23 · workloada (2 series)",
        ],
        "{run:#?}"
    );
    // One line per run, in the run's colour, named by what differs; the
    // 10 ms tail left out of rates.
    let throughput = chart(&page, "Throughput");
    assert_eq!(throughput.series[1].name, "leveldb");
    assert_eq!(throughput.series[1].colour, Some(1));
    assert_eq!(throughput.series[0].points.len(), 3);
    // Files per level: steps; L2 never held a file.
    let levels = chart(&page, "Files per level: rocksdb 7.8.3 · workloada");
    assert!(levels.step && levels.integer_y);
    let names: Vec<_> = levels.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["L0", "L1"]);
    // The load phase has no series: every chart is one line saying why.
    let load = &section(&page, "load phase").blocks;
    assert!(
        load.iter().all(
            |b| matches!(b, Block::Missing { reason, .. } if reason.contains("no time series"))
        ),
        "{:#?}",
        outline(load)
    );
}

#[test]
fn assertion_enabled_engines_are_warned_about() {
    let mut debian = export("rocksdb", "7.8.3", "1");
    debian["metadata"]["engine_build"] = json!({"library": "/usr/lib/librocksdb.so.7.8",
        "assertions": "enabled", "evidence": "imports __assert_fail"});
    let mut release = export("rocksdb", "7.9.2", "1");
    release["metadata"]["engine_build"] =
        json!({"library": "/cache/librocksdb.so", "assertions": "disabled"});
    let c = comparison(vec![("d.json", debian), ("r.json", release)]);
    assert!(c.runs[0].assertions_enabled() && !c.runs[1].assertions_enabled());
    let html = c.to_html("t");
    assert_eq!(html.matches(crate::ASSERTIONS_WARNING).count(), 1);
    assert!(html.contains("rocksdb 7.8.3 · workloada: WARNING"));
    assert!(
        html.contains("assertions: enabled"),
        "the build row shows it"
    );
}

#[test]
fn every_gauge_is_charted_by_its_kind_and_still_ones_are_named() {
    let mut lmdb = export("lmdb", "0.9.24", "1");
    for (i, row) in lmdb["phases"][0]["observation"]["series"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        row["gauges"]["lmdb.leaf-pages"] = json!(10.0 * (i + 1) as f64);
        row["gauges"]["lmdb.branch-pages"] = json!(1.0);
        row["gauges"]["lmdb.map-used-bytes"] = json!(3.0 * 1_048_576.0 * (i + 1) as f64);
        row["gauges"]["lmdb.idle"] = json!(0.0);
    }
    // Declared kinds win over names: map-use is declared a ratio.
    lmdb["phases"][0]["observation"]["gauge_kinds"] = json!({"lmdb.leaf-pages": "count", "lmdb.branch-pages": "count",
               "lmdb.map-used-bytes": "bytes", "lmdb.idle": "flag"});
    let page = comparison(vec![("m.json", lmdb)]).page("t");
    let run = outline(&section(&page, "run phase").blocks);
    let gauges = &run[run
        .iter()
        .position(|l| l == "# Engine gauges: lmdb")
        .unwrap()..];
    assert_eq!(
        gauges,
        [
            "# Engine gauges: lmdb",
            "note The 4 gauges lmdb reports, each charted by its kind (sizes in binary units, counts and flags in whole numbers); 2 moved.",
            "  chart map-used-bytes (1 series)",
            "  chart leaf-pages (1 series)",
            "note Stayed 0 throughout, not charted: idle.",
            "note Held one value throughout, not charted: branch-pages = 1.",
        ]
    );
    let bytes = chart(&page, "map-used-bytes");
    assert!(bytes.y_bytes);
    let svg = render_svg(bytes, 440, 260);
    assert!(
        parse(&svg).texts.contains(&"size (MiB)".to_string()),
        "{svg}"
    );
    let pages = chart(&page, "leaf-pages");
    assert!(pages.integer_y && pages.step);
    assert_eq!(pages.series[0].points[1], (2.0, 20.0));
}

#[test]
fn older_exports_get_their_gauges_kinds_from_their_names() {
    let mut wt = export("wiredtiger", "3.2.1", "1");
    for (i, row) in wt["phases"][0]["observation"]["series"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        row["gauges"]["wiredtiger.cache-bytes"] = json!(1e6 * i as f64);
        row["gauges"]["wiredtiger.idle-bytes"] = json!(0.0);
    }
    let page = comparison(vec![
        ("w.json", wt),
        ("l.json", export("leveldb", "1.23", "1")),
    ])
    .page("t");
    let cache = chart(&page, "cache-bytes");
    assert!(cache.y_bytes, "an export without kinds: -bytes is bytes");
    assert_eq!(cache.series[0].points[1].1, 1e6);
    let run = outline(&section(&page, "run phase").blocks);
    assert!(
        run.contains(&"note Stayed 0 throughout, not charted: idle-bytes.".to_string()),
        "{run:#?}"
    );
}

#[test]
fn runs_of_different_durability_are_shown_and_warned_about() {
    let mut synced = export("rocksdb", "7.8.3", "1");
    synced["metadata"]["durability"] =
        json!({"property": "rocksdb.sync", "value": "true", "durable": true});
    let mut unsynced = export("leveldb", "1.23", "1");
    unsynced["metadata"]["durability"] =
        json!({"property": "leveldb.sync", "value": "false", "durable": false});
    let unknown = export("leveldb", "1.23", "1");
    let c = comparison(vec![
        ("s.json", synced.clone()),
        ("u.json", unsynced),
        ("x.json", unknown),
    ]);
    let summary = c.summary();
    let row = summary.iter().find(|r| r.0 == "writes synced").unwrap();
    assert_eq!(
        row.1,
        ["yes (rocksdb.sync=true)", "no (leveldb.sync=false)", "—"]
    );
    let warning = c.durability_warning().unwrap();
    assert!(warning.contains("differ in durability"), "{warning}");
    assert!(c.to_html("t").contains(&crate::escape(&warning)));
    // Runs that agree, or whose durability is not known: no warning.
    let same = comparison(vec![("a.json", synced.clone()), ("b.json", synced)]);
    assert_eq!(same.durability_warning(), None);
}

#[test]
fn a_disabled_series_is_named_as_the_reason() {
    let c = comparison(vec![
        ("r.json", export("rocksdb", "7.8.3", "1")),
        ("off.json", export("rocksdb", "7.8.3", "0")),
    ]);
    let page = c.page("t");
    let Some(Block::Chart(figure)) = section(&page, "run phase")
        .blocks
        .iter()
        .find(|b| matches!(b, Block::Chart(f) if f.chart.title == "Throughput"))
    else {
        panic!()
    };
    assert_eq!(
        figure.remark.as_deref(),
        Some("no data for off: timeseries.granularity=0 turns the time series off")
    );
    let summary = c.summary();
    let stability = summary.iter().find(|r| r.0 == "stability (run)").unwrap();
    assert_eq!(stability.1[0], "CV 12.5 %, settled at 2.0 s");
    assert_eq!(
        stability.1[1],
        "not measured: timeseries.granularity=0 turns the time series off"
    );
}

#[test]
fn a_run_shorter_than_an_interval_is_named_as_the_reason() {
    // One 0.3 s interval of a 1 s granularity: no full interval to take a
    // rate over, though /proc was read.
    let mut short = export("rocksdb", "7.8.3", "1");
    let series = short["phases"][0]["observation"]["series"]
        .as_array_mut()
        .unwrap();
    series.truncate(1);
    series[0]["time_s"] = json!(0.3);
    series[0]["interval_s"] = json!(0.3);
    let page = comparison(vec![("s.json", short)]).page("t");
    let run = outline(&section(&page, "run phase").blocks);
    for title in ["Throughput", "Client CPU", "Client disk I/O"] {
        let line = format!("missing {title}: the phase lasted 0.3 s, less than one full interval of 1.0 s to take a rate over");
        assert!(run.contains(&line), "{title}: {run:#?}");
    }
    assert!(!run.iter().any(|l| l.contains("/proc")), "{run:#?}");
}

#[test]
fn the_summary_has_every_figure_per_run() {
    let mut short = export("leveldb", "1.23", "1");
    short["config"][3]["value"] = json!("5");
    let c = comparison(vec![
        ("r.json", export("rocksdb", "7.8.3", "1")),
        ("l.json", short),
    ]);
    let summary = c.summary();
    let cell = |label: &str, run: usize| {
        summary
            .iter()
            .find(|r| r.0 == label)
            .unwrap_or_else(|| panic!("{label}: {summary:?}"))
            .1[run]
            .clone()
    };
    assert_eq!(cell("export", 1), "l.json");
    assert_eq!(cell("store", 0), "rocksdb (ROCKSDB 7.8.3)");
    assert_eq!(
        cell("engine build", 0),
        "library: /usr/lib/libx.so\nassertions: disabled"
    );
    assert_eq!(cell("workload", 0), "workloada");
    assert_eq!(cell("threads", 0), "2");
    assert_eq!(cell("records", 0), "1000");
    assert_eq!(cell("target (ops/s)", 0), "none (unthrottled)");
    assert_eq!(cell("operations", 0), "3100");
    assert_eq!(cell("load throughput (ops/s)", 0), "5000");
    assert_eq!(cell("run throughput (ops/s)", 0), "1033");
    // p95 is not among this export's percentiles.
    assert_eq!(
        cell("READ avg / p50 / p95 / p99 / p99.9 (µs)", 0),
        "0.0 / 10 / ? / 95 / 12000"
    );
    assert_eq!(cell("errors", 0), "2 (ERROR 2)");
    // Three intervals judge nothing when the window is five.
    assert_eq!(
        cell("stability (run)", 1),
        "too short to judge: 3 intervals of 1.0 s (3.0 s in all); judging needs 10 (2 windows of steadystate.window=5)"
    );
    assert_eq!(cell("write amplification", 0), "run 3.50");
    assert_eq!(cell("space amplification", 0), "run 1.25");
    assert_eq!(cell("client CPU (mean % of one core)", 0), "run 60 %");
    assert_eq!(cell("client peak RSS", 0), "3.0 MiB");

    let html = c.to_html("a & b");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<title>a &amp; b</title>"));
    assert!(!html.contains("<script") && !html.contains("src="));
    // The table comes first, the folds last.
    let table = html.find("<table class=\"summary\"").unwrap();
    assert!(table < html.find("<svg").unwrap());
    assert!(html.find("<details>").unwrap() > html.rfind("<svg").unwrap());
    assert!(html.contains("<th>rocksdb 7.8.3 · workloada</th>"));
    assert!(html.contains("ycsb -run -P workloads/workloada -p &#39;a=b c&#39;"));
    assert!(html.contains("<th>threadcount</th><td class=\"n\">2</td><td>-threads</td>"));
    assert!(html.contains("<b>UPDATE latency</b>: no data: no interval performed it"));
    assert!(
        !html.contains(">no data<"),
        "no empty chart boxes: {}",
        &html[html.find(">no data<").unwrap_or(0).saturating_sub(3000)..][..3000]
    );
    let svg = render_svg_page(&c.page("t"));
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    assert!(svg.contains("UPDATE latency: no data"));
}

/// The demo's stores over workloads at a target rate: intended latency
/// in the summary and charts.
#[test]
fn intended_latency_is_charted_and_summed_up_where_measured() {
    let mut throttled = Spec::new("rocksdb", "workloada", 3.0);
    throttled.target = Some(5000.0);
    let free = Spec::new("leveldb", "workloada", 3.0);
    let c = Comparison::new(runs_from_exports(vec![
        ("t.json".into(), testdata::report(&throttled)),
        ("f.json".into(), testdata::report(&free)),
    ]));
    let summary = c.summary();
    let row = summary
        .iter()
        .find(|r| r.0 == "READ intended avg / p50 / p95 / p99 / p99.9 (µs)")
        .unwrap_or_else(|| panic!("{summary:?}"));
    assert_ne!(row.1[0], "—");
    assert_eq!(row.1[1], "—");
    let target = summary.iter().find(|r| r.0 == "target (ops/s)").unwrap();
    assert_eq!(target.1, ["5000", "none (unthrottled)"]);
    let page = c.page("t");
    let intended = chart(&page, "READ intended latency");
    assert_eq!(
        intended.series.len(),
        3,
        "p50, p99, p99.9 of the throttled run"
    );
    let run = outline(&section(&page, "run phase").blocks);
    assert!(run
        .iter()
        .any(|l| l.starts_with("chart READ intended latency")));
    let figure = section(&page, "run phase")
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::Chart(f) if f.chart.title == "READ intended latency" => Some(f),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        figure.remark.as_deref(),
        Some("no data for leveldb · unthrottled: it ran without a target rate (-target), so no intended latency was measured")
    );
    let cdf = chart(&page, "READ latency distribution");
    let names: Vec<&str> = cdf.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "rocksdb · target 5000/s",
            "rocksdb · target 5000/s intended",
            "leveldb · unthrottled"
        ]
    );
    assert_eq!(cdf.series[1].dash, Dash::Dashed);
}

/// What must hold of a page of `n` runs.
fn check_scaled_page(n: usize) -> (Page, String) {
    let runs = testdata::runs(n);
    let c = Comparison::new(runs);
    let title = c.title();
    assert!(!title.contains(" vs "), "{title}");
    assert!(title.chars().count() <= 60, "{title}");
    let page = c.page(&title);
    let html = render_html(&page);
    // Every table fits the page: at most TABLE_COLUMNS figures beside its
    // key column, every run in each.
    for table in html.split("<table class=\"summary\">").skip(1) {
        let header = &table[..table.find("</tr>").unwrap()];
        assert!(
            header.matches("<th>").count() <= TABLE_COLUMNS + 1,
            "{header}"
        );
    }
    let summary = section(&page, "Summary");
    let Block::Table(table) = &summary.blocks[0] else {
        panic!()
    };
    let parts = table.fitted(TABLE_COLUMNS);
    for run in &c.runs {
        assert!(
            parts
                .iter()
                .all(|t| t.rows.iter().any(|r| r[0] == run.name) || t.header.contains(&run.name)),
            "{} missing from a part of the summary",
            run.name
        );
    }
    // Every chart: drawn distinguishably with legends apart, and no run
    // squeezed by a much longer one on a shared time axis.
    for grid_or_chart in page.blocks() {
        let (charts, width): (Vec<&Chart>, u32) = match grid_or_chart {
            Block::Chart(f) => (vec![&f.chart], WIDTH),
            Block::Grid(g) => (
                g.panels
                    .iter()
                    .filter_map(|p| match p {
                        Block::Chart(f) => Some(&f.chart),
                        _ => None,
                    })
                    .collect(),
                crate::panel_size(g.columns).0,
            ),
            _ => continue,
        };
        for chart in charts {
            check_rendered(chart, width);
            if chart.x_label == "time (s)" {
                let ends: Vec<f64> = chart
                    .series
                    .iter()
                    .filter_map(|s| s.points.iter().rev().find(|p| p.1.is_finite()).map(|p| p.0))
                    .collect();
                let (lo, hi) = (
                    ends.iter().copied().fold(f64::INFINITY, f64::min),
                    ends.iter().copied().fold(0.0, f64::max),
                );
                assert!(
                    hi <= 4.0 * lo.max(0.05) + 0.2,
                    "{}: runs ending at {lo} s and {hi} s share an axis",
                    chart.title
                );
            }
        }
    }
    // Deterministic.
    assert_eq!(render_html(&c.page(&title)), html);
    (page, html)
}

#[test]
fn a_report_of_2_runs_overlays_them() {
    let (page, _) = check_scaled_page(2);
    assert_eq!(page.title, "ycsb report: rocksdb, leveldb · workload A");
    let run = section(&page, "run phase");
    assert!(
        matches!(run.blocks.iter().find(|b| matches!(b, Block::Chart(_))), Some(Block::Chart(f)) if f.chart.title == "Throughput" && f.chart.series.len() == 2)
    );
}

#[test]
fn a_report_of_6_runs_keeps_them_readable() {
    let (page, html) = check_scaled_page(6);
    assert_eq!(page.title, "ycsb report: 6 stores · workload A");
    // Six runs: a column each.
    let Block::Table(table) = &section(&page, "Summary").blocks[0] else {
        panic!()
    };
    assert_eq!(table.header.len(), 7);
    assert_eq!(table.header[1], "rocksdb · workloada");
    assert!(html.contains("Throughput by workload") || html.contains("run throughput: workload A"));
}

#[test]
fn a_report_of_14_runs_groups_them_by_workload_and_length() {
    let (page, html) = check_scaled_page(14);
    assert_eq!(page.title, "ycsb report: 7 stores × workloads A, C");
    // Small multiples: per workload, redb's 40 s runs apart from the
    // others' 2 to 4 s.
    let run_phase = Page {
        sections: vec![section(&page, "run phase").clone()],
        ..Page::default()
    };
    let throughput: Vec<&str> = run_phase
        .charts()
        .into_iter()
        .filter(|c| c.title.starts_with("Throughput: "))
        .map(|c| c.title.as_str())
        .collect();
    assert_eq!(
        throughput,
        [
            "Throughput: workload A · runs of up to 4.0 s",
            "Throughput: workload A · runs of up to 40 s",
            "Throughput: workload C · runs of up to 4.0 s",
            "Throughput: workload C · runs of up to 40 s",
        ]
    );
    // Every store's gauges, by kind.
    for store in testdata::STORES {
        assert!(
            html.contains(&format!("<h3>Engine gauges: {store}</h3>")),
            "{store}"
        );
    }
    let cache = chart(&page, "block-cache-usage");
    assert!(cache.y_bytes && cache.series.len() == 2);
    assert!(
        html.contains("Stayed 0 throughout, not charted: num-files-at-level2")
            || html.contains("stall.level0_slowdown")
    );
    // Engine statistics behind folds.
    assert!(
        html.contains("<details><summary>rocksdb · workloada: rocksdb.stats (3 lines)</summary>"),
        "{}",
        &html[html.find("Engine statistics").unwrap()..][..400]
    );
    // Per-workload throughput bars, a bar per store.
    assert!(html.contains(">run throughput: workload C<"));
    // The SVG page has the same charts.
    let svg = render_svg_page(&page);
    assert_eq!(
        svg.matches("<svg ").count() - 1,
        html.matches("<svg ").count()
    );
}

#[test]
fn a_report_of_30_runs_still_fits() {
    let (page, _) = check_scaled_page(30);
    // Thirty runs: a row each, the figures split into tables.
    assert_eq!(page.title, "ycsb report: 7 stores × 5 workloads");
    let Block::Table(table) = &section(&page, "Summary").blocks[0] else {
        panic!()
    };
    assert_eq!(table.rows.len(), 30);
    assert!(table.fitted(TABLE_COLUMNS).len() >= 2);
    // What every run shares is said once.
    let shared = outline(&section(&page, "Summary").blocks)
        .into_iter()
        .find(|l| l.starts_with("note Every run: "))
        .unwrap();
    assert!(
        shared.contains("threads: 2; records: 10000; target (ops/s): none (unthrottled)"),
        "{shared}"
    );
}

/// A phase still running (the live view's) has rows but no final
/// figures: its latency distribution says so, not that nothing ran.
#[test]
fn a_running_phase_says_its_distribution_comes_at_its_end() {
    let mut report = testdata::report(&Spec::new("memory", "workloadc", 2.0));
    let run = report.phases.iter_mut().find(|p| p.phase == "run").unwrap();
    run.operations = 0;
    for section in &mut run.sections {
        section.operations = 0;
    }
    let page = Comparison::new(runs_from_exports(vec![("live".into(), report)])).page("t");
    let run = outline(&section(&page, "run phase").blocks);
    assert!(
        run.contains(&"missing READ latency distribution: the phase is still running: its distribution comes with its final figures".to_string()),
        "{run:#?}"
    );
}
