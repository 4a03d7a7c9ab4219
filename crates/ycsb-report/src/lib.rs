//! Charts of ycsb-rs results.
//!
//! [`charts_from_export`] turns a JSON export (`-p exporter=json`) into,
//! per phase, line charts over time of the throughput, the latency
//! percentiles, the client's (and a monitored server's) CPU and the
//! engine's files per LSM level, from the time series the export carries
//! (`phases[].observation.series`). [`render_svg`] draws one chart as
//! hand-written SVG (linear or logarithmic axes), [`render_bars`] a bar
//! chart with error bars in the same palette, [`render_html`] a
//! self-contained page embedding them all, [`render_svg_page`] all of them
//! stacked in one SVG document. `ycsb report` and the experiment matrices
//! (`ycsb-experiment`) draw with it.
//!
//! ```
//! use ycsb_report::{render_svg, Chart, Series};
//!
//! let mut chart = Chart::new("throughput", "time (s)", "ops/s");
//! chart.series.push(Series::new("run", vec![(1.0, 980.0), (2.0, 1010.0)]));
//! assert!(render_svg(&chart, 640, 320).contains("<path"));
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]
// Only the programs print or exit; a library reports through its return
// values, and a bug is a typed error, not a panic (tests may do both).
#![cfg_attr(
    not(test),
    deny(
        clippy::print_stdout,
        clippy::print_stderr,
        clippy::exit,
        clippy::unwrap_used
    )
)]

mod svg;

use serde_json::Value;

pub use svg::{escape, format_value, render_bars, render_svg, Bar, BarChart, Chart, Dash, Series};

/// Chart width in pixels.
pub const WIDTH: u32 = 900;
/// Chart height in pixels (legend rows come on top).
pub const HEIGHT: u32 = 320;

/// An error reading an export.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The document is not a ycsb JSON export.
    #[error("{origin}: not a ycsb JSON export (exporter=json): {reason}")]
    NotAnExport {
        /// The file or source.
        origin: String,
        /// What is missing.
        reason: String,
    },
}

/// The charts of one phase of one export.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartGroup {
    /// A heading (`run phase`, `client-0.json: run phase`).
    pub heading: String,
    /// A note on what the data lacks, if anything.
    pub note: Option<String>,
    /// The charts.
    pub charts: Vec<Chart>,
}

/// Sections that are bookkeeping, not workload operations.
const SKIPPED_SECTIONS: [&str; 2] = ["CLEANUP", "VERIFY"];

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// The charts of every phase of an export; `origin` names it in errors,
/// `label` (empty for one export) prefixes the headings.
///
/// # Errors
///
/// [`ReportError::NotAnExport`] when `doc` has no `phases` array.
pub fn charts_from_export(
    doc: &Value,
    origin: &str,
    label: &str,
) -> Result<Vec<ChartGroup>, ReportError> {
    let phases =
        doc.get("phases")
            .and_then(Value::as_array)
            .ok_or_else(|| ReportError::NotAnExport {
                origin: origin.to_string(),
                reason: "no \"phases\" array".into(),
            })?;
    Ok(phases
        .iter()
        .map(|phase| {
            let name = phase.get("phase").and_then(Value::as_str).unwrap_or("?");
            let heading = if label.is_empty() {
                format!("{name} phase")
            } else {
                format!("{label}: {name} phase")
            };
            phase_charts(phase, heading)
        })
        .collect())
}

/// The charts of one phase object of an export.
pub fn phase_charts(phase: &Value, heading: String) -> ChartGroup {
    let empty = Vec::new();
    let rows = phase
        .pointer("/observation/series")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let note = rows.is_empty().then(|| {
        "this export has no time series (phases[].observation.series): charts need a ycsb that records them".to_string()
    });
    let time = |row: &Value| number(&row["time_s"]);
    // A phase's last interval is usually a fragment (the tail after the
    // last full interval): its rates, over a few milliseconds, are noise
    // that would dwarf the chart, so rate charts leave it out.
    let granularity = phase
        .pointer("/observation/granularity_s")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let full: Vec<&Value> = rows
        .iter()
        .filter(|r| {
            r["interval_s"]
                .as_f64()
                .is_none_or(|l| l >= granularity * 0.5)
        })
        .collect();

    // Throughput: the total and, with several operations, each one.
    let mut throughput = Chart::new("Throughput", "time (s)", "operations/s");
    throughput.series.push(Series::new(
        "all operations",
        full.iter()
            .map(|r| (time(r), number(&r["throughput"])))
            .collect(),
    ));
    let operations = section_names(rows);
    if operations.len() > 1 {
        for op in &operations {
            throughput.series.push(Series::new(
                op.clone(),
                full.iter()
                    .map(|r| {
                        (
                            time(r),
                            section(r, op).map_or(0.0, |s| number(&s["throughput"])),
                        )
                    })
                    .collect(),
            ));
        }
    }

    // Latency percentiles per operation, log scale: p99.9 can be decades
    // above the median.
    let mut latency = Chart::new("Latency percentiles", "time (s)", "latency (µs)");
    latency.log_y = true;
    // One colour per operation (as in the throughput chart, where the
    // total takes the first), one pattern per percentile.
    for (colour, op) in operations.iter().enumerate() {
        for (key, label, dash) in [
            ("p50_us", "p50", Dash::Solid),
            ("p99_us", "p99", Dash::Dashed),
            ("p999_us", "p99.9", Dash::Dotted),
        ] {
            latency.series.push(
                Series::new(
                    format!("{op} {label}"),
                    rows.iter()
                        .map(|r| {
                            // An idle interval has no latency: a gap, not 0.
                            let y = section(r, op)
                                .filter(|s| s["operations"].as_u64().unwrap_or(0) > 0)
                                .map_or(f64::NAN, |s| number(&s[key]));
                            (time(r), y)
                        })
                        .collect(),
                )
                // The operation's colour in the throughput chart.
                .styled(colour + 1, dash),
            );
        }
    }

    // CPU of the client and of the monitored process, like pidstat -u.
    let mut cpu = Chart::new("CPU", "time (s)", "% of one core");
    for (who, key) in [("client", "client"), ("server", "monitor")] {
        if rows.iter().all(|r| r[key].is_null()) {
            continue;
        }
        for (figure, label) in [("cpu_user_pct", "user"), ("cpu_system_pct", "system")] {
            cpu.series.push(Series::new(
                format!("{who} {label}"),
                full.iter()
                    .map(|r| (time(r), number(&r[key][figure])))
                    .collect(),
            ));
        }
    }

    // Files per LSM level, from the engine gauges (`rocksdb.num-files-at-level0`).
    let mut levels = Chart::new("Files per level", "time (s)", "files");
    let mut level_gauges: Vec<(u32, String)> = Vec::new();
    for row in rows {
        if let Some(gauges) = row["gauges"].as_object() {
            for name in gauges.keys() {
                if let Some(level) = level_of(name) {
                    if !level_gauges.iter().any(|(_, n)| n == name) {
                        level_gauges.push((level, name.clone()));
                    }
                }
            }
        }
    }
    level_gauges.sort();
    // Levels that never held a file would only stack flat lines at 0.
    level_gauges.retain(|(_, name)| rows.iter().any(|r| number(&r["gauges"][name]) > 0.0));
    for (level, name) in &level_gauges {
        levels.series.push(Series::new(
            format!("L{level}"),
            rows.iter()
                .map(|r| (time(r), number(&r["gauges"][name])))
                .collect(),
        ));
    }

    let mut charts = vec![throughput, latency, cpu, levels];
    // Pages of a B-tree engine by kind, from the gauges named `...pages`
    // (`lmdb.leaf-pages`, `sqlite.free-pages`): only for engines that
    // report them.
    let mut pages = Chart::new("Pages", "time (s)", "pages");
    let mut page_gauges: Vec<String> = Vec::new();
    for row in rows {
        for name in row["gauges"].as_object().into_iter().flat_map(|g| g.keys()) {
            if name.ends_with("pages") && !page_gauges.contains(name) {
                page_gauges.push(name.clone());
            }
        }
    }
    page_gauges.sort();
    for name in &page_gauges {
        pages.series.push(Series::new(
            name.clone(),
            rows.iter()
                .map(|r| (time(r), number(&r["gauges"][name])))
                .collect(),
        ));
    }
    if !pages.series.is_empty() {
        charts.push(pages);
    }

    ChartGroup {
        heading,
        note,
        charts,
    }
}

/// The level of a files-per-level gauge name (`...num-files-at-level3`).
fn level_of(gauge: &str) -> Option<u32> {
    gauge
        .rsplit_once("files-at-level")
        .and_then(|(_, level)| level.parse().ok())
}

/// The workload operation sections seen in the rows, in first-seen order.
fn section_names(rows: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for row in rows {
        for s in row["sections"].as_array().into_iter().flatten() {
            let Some(name) = s["name"].as_str() else {
                continue;
            };
            if s["intended"].as_bool() == Some(true) || SKIPPED_SECTIONS.contains(&name) {
                continue;
            }
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

fn section<'a>(row: &'a Value, name: &str) -> Option<&'a Value> {
    row["sections"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name && s["intended"].as_bool() != Some(true))
}

/// A self-contained HTML page (no scripts, no external files) with every
/// group's charts as inline SVG.
pub fn render_html(title: &str, groups: &[ChartGroup]) -> String {
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title>\
         <style>body{{font-family:sans-serif;margin:24px;color:#222}}\
         section{{margin-bottom:32px}}figure{{margin:0 0 16px 0}}\
         .note{{color:#a33}}</style></head><body><h1>{0}</h1>\n",
        escape(title)
    );
    for group in groups {
        html.push_str(&format!("<section><h2>{}</h2>\n", escape(&group.heading)));
        if let Some(note) = &group.note {
            html.push_str(&format!("<p class=\"note\">{}</p>\n", escape(note)));
        }
        for chart in &group.charts {
            html.push_str("<figure>");
            html.push_str(&render_svg(chart, WIDTH, HEIGHT));
            html.push_str("</figure>\n");
        }
        html.push_str("</section>\n");
    }
    html.push_str("</body></html>\n");
    html
}

/// Every group's charts stacked in one SVG document, each group under its
/// heading.
pub fn render_svg_page(title: &str, groups: &[ChartGroup]) -> String {
    let mut body = String::new();
    let mut y = 40.0;
    for group in groups {
        body.push_str(&format!(
            r#"<text x="10" y="{:.0}" font-size="16" font-weight="bold">{}</text>"#,
            y + 18.0,
            escape(&group.heading)
        ));
        y += 28.0;
        if let Some(note) = &group.note {
            body.push_str(&format!(
                r##"<text x="10" y="{:.0}" fill="#a33">{}</text>"##,
                y + 14.0,
                escape(note)
            ));
            y += 22.0;
        }
        for chart in &group.charts {
            let svg = render_svg(chart, WIDTH, HEIGHT);
            let height = svg_height(&svg).unwrap_or(f64::from(HEIGHT));
            // A nested <svg> keeps each chart's own coordinates.
            body.push_str(&svg.replacen("<svg ", &format!("<svg x=\"0\" y=\"{y:.0}\" "), 1));
            y += height + 12.0;
        }
    }
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{y:.0}" viewBox="0 0 {WIDTH} {y:.0}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/><text x="10" y="24" font-size="18" font-weight="bold">{}</text>{body}</svg>"#,
        escape(title)
    )
}

fn svg_height(svg: &str) -> Option<f64> {
    let start = svg.find(" height=\"")? + " height=\"".len();
    let end = start + svg[start..].find('"')?;
    svg[start..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn export() -> Value {
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
                "client": {"cpu_user_pct": 50.0, "cpu_system_pct": 10.0},
                "monitor": null,
                "gauges": {"rocksdb.num-files-at-level0": l0, "rocksdb.num-files-at-level1": 4.0,
                           "rocksdb.num-files-at-level2": 0.0,
                           "rocksdb.estimate-pending-compaction-bytes": 0.0}
            })
        };
        // The last row is a 10 ms tail fragment.
        json!({"phases": [{"phase": "run", "observation": {"granularity_s": 1.0, "series": [
            row(1.0, 1000, 80, 2.0), row(2.0, 1200, 95, 3.0), row(3.0, 900, 400, 1.0),
            row(3.01, 90_000, 400, 1.0)
        ]}}, {"phase": "load"}]})
    }

    #[test]
    fn an_export_gives_four_charts_per_phase() {
        let groups = charts_from_export(&export(), "x.json", "").unwrap();
        assert_eq!(groups.len(), 2);
        let run = &groups[0];
        assert_eq!(run.heading, "run phase");
        assert!(run.note.is_none());
        let titles: Vec<_> = run.charts.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "Throughput",
                "Latency percentiles",
                "CPU",
                "Files per level"
            ]
        );
        let names = |c: &Chart| c.series.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&run.charts[0]), ["all operations", "READ", "UPDATE"]);
        assert_eq!(run.charts[0].series[0].points[1], (2.0, 1200.0));
        // The tail fragment's rate is left out of the rate charts.
        assert_eq!(run.charts[0].series[0].points.len(), 3);
        assert_eq!(run.charts[2].series[0].points.len(), 3);
        assert_eq!(run.charts[1].series[0].points.len(), 4);
        assert_eq!(
            run.charts[1].series.len(),
            6,
            "READ and UPDATE x 3, no CLEANUP"
        );
        // UPDATE was idle: its latency points are gaps.
        assert!(run.charts[1].series[3].points.iter().all(|p| p.1.is_nan()));
        assert_eq!(run.charts[1].series[1].points[2], (3.0, 400.0));
        assert_eq!(names(&run.charts[2]), ["client user", "client system"]);
        // L2 never held a file.
        assert_eq!(names(&run.charts[3]), ["L0", "L1"]);
        assert_eq!(run.charts[3].series[0].points[2], (3.0, 1.0));
        // The load phase has no series: a note, empty charts.
        assert!(groups[1].note.is_some());
        assert!(groups[1].charts.iter().all(Chart::is_empty));
    }

    #[test]
    fn b_tree_page_gauges_get_a_chart_of_their_own() {
        let row = |t: f64, leaf: f64| {
            json!({"time_s": t, "interval_s": 1.0, "throughput": 1.0, "operations": 1,
                   "sections": [], "client": null, "monitor": null,
                   "gauges": {"lmdb.leaf-pages": leaf, "lmdb.branch-pages": 1.0, "lmdb.depth": 2.0}})
        };
        let export = json!({"phases": [{"phase": "load", "observation": {"granularity_s": 1.0,
            "series": [row(1.0, 10.0), row(2.0, 30.0)]}}]});
        let groups = charts_from_export(&export, "x.json", "").unwrap();
        let pages = groups[0].charts.last().unwrap();
        assert_eq!(pages.title, "Pages");
        let names: Vec<_> = pages.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["lmdb.branch-pages", "lmdb.leaf-pages"]);
        assert_eq!(pages.series[1].points, [(1.0, 10.0), (2.0, 30.0)]);
    }

    #[test]
    fn pages_embed_every_chart() {
        let groups = charts_from_export(&export(), "x.json", "client-0").unwrap();
        assert_eq!(groups[0].heading, "client-0: run phase");
        let html = render_html("a & b", &groups);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert_eq!(html.matches("<svg xmlns").count(), 8);
        assert!(html.contains("<title>a &amp; b</title>"));
        assert!(!html.contains("<script"));
        let svg = render_svg_page("a", &groups);
        assert_eq!(svg.matches("<svg ").count(), 9);
        assert!(svg.ends_with("</svg></svg>"));
    }

    #[test]
    fn not_an_export() {
        let err = charts_from_export(&json!({"x": 1}), "y.json", "").unwrap_err();
        assert_eq!(
            err.to_string(),
            "y.json: not a ycsb JSON export (exporter=json): no \"phases\" array"
        );
    }

    #[test]
    fn level_gauges() {
        assert_eq!(level_of("rocksdb.num-files-at-level12"), Some(12));
        assert_eq!(level_of("leveldb.num-files-at-level0"), Some(0));
        assert_eq!(level_of("rocksdb.num-files-at-levelX"), None);
        assert_eq!(level_of("leveldb.mb-at-level0"), None);
    }
}
