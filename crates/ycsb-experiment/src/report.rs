//! The self-contained HTML report: summary tables and inline SVG charts
//! (throughput bars with error bars, throughput, CPU and level file counts
//! over time, latency CDFs). No scripts, no network.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;
use ycsb_report::{escape as esc, render_bars, render_svg, Bar, BarChart, Chart, Dash};

use crate::cells::Cell;
use crate::matrix::Matrix;
use crate::series::PhaseSeries;
use crate::summary::{self, CellResult, Row};

/// Size of the small charts, several to a row.
const CHART_WIDTH: u32 = 460;
const CHART_HEIGHT: u32 = 260;

/// One line of a chart: legend text, points, dashed, palette colour.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    dashed: bool,
    color: usize,
}

fn draw(mut chart: Chart, series: &[Series]) -> String {
    chart.series = series
        .iter()
        .map(|s| {
            let dash = if s.dashed { Dash::Dashed } else { Dash::Solid };
            ycsb_report::Series::new(s.name.clone(), s.points.clone()).styled(s.color, dash)
        })
        .collect();
    render_svg(&chart, CHART_WIDTH, CHART_HEIGHT)
}

/// Cells that differ only in `db`, repeat 1: one small chart each, one line
/// per db, so lines stay few.
fn panels<'a>(
    m: &Matrix,
    results: &'a [CellResult],
    phase: &str,
) -> Vec<(String, Vec<&'a CellResult>)> {
    let others: Vec<String> = summary::varying_axes(m)
        .into_iter()
        .filter(|a| a != "db")
        .collect();
    let mut out: Vec<(String, Vec<&CellResult>)> = Vec::new();
    for r in results
        .iter()
        .filter(|r| r.cell.repeat == 1 && r.phase_series(phase).is_some())
    {
        let key = others
            .iter()
            .filter_map(|a| r.cell.label(a).map(|l| format!("{a}={l}")))
            .collect::<Vec<_>>()
            .join(", ");
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => out.push((key, vec![r])),
        }
    }
    out
}

/// A chart over time, as `ycsb report` draws them.
fn time_chart(title: &str, y_label: &str, series: &[Series]) -> String {
    draw(Chart::new(title, "time (s)", y_label), series)
}

/// CDF points (µs, percentile) from an export's base64 V2 HdrHistogram of
/// nanosecond latencies: dense in the tail, where engines differ.
fn histogram_cdf(text: &str) -> Option<Vec<(f64, f64)>> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .ok()?;
    let h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()?;
    if h.is_empty() {
        return None;
    }
    let mut quantiles: Vec<f64> = (0..=36).map(|i| f64::from(i) * 0.025).collect();
    // 0.9 onwards: equal steps in the number of nines, up to 99.999%.
    quantiles.extend((1..=60).map(|k| 1.0 - 0.1 * 10f64.powf(-f64::from(k) / 15.0)));
    quantiles.push(1.0);
    let mut points = vec![(h.min() as f64 / 1000.0, 0.0)];
    points.extend(
        quantiles
            .iter()
            .map(|&q| (h.value_at_quantile(q) as f64 / 1000.0, 100.0 * q)),
    );
    Some(points)
}

fn db_color(m: &Matrix, r: &CellResult) -> usize {
    let label = r.cell.label("db").unwrap_or("");
    m.axes
        .iter()
        .find(|a| a.name == "db")
        .and_then(|a| a.values.iter().position(|v| v.label == label))
        .unwrap_or(0)
}

fn table_html(head: &str, md: &str) -> String {
    // The Markdown table from the summary, as HTML.
    let mut out = format!("<h3>{}</h3><table>", esc(head));
    for (i, line) in md.lines().filter(|l| l.starts_with('|')).enumerate() {
        if i == 1 {
            continue;
        }
        let tag = if i == 0 { "th" } else { "td" };
        out.push_str("<tr>");
        for cell in line.trim_matches('|').split(" | ") {
            let _ = write!(out, "<{tag}>{}</{tag}>", esc(cell.trim()));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

fn level_gauges(series: &PhaseSeries) -> BTreeMap<String, Vec<(f64, f64)>> {
    let mut out: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for p in &series.status {
        for (k, v) in &p.gauges {
            if let Some((_, level)) = k.split_once("num-files-at-level") {
                out.entry(format!("L{level}")).or_default().push((p.t, *v));
            }
        }
    }
    // Levels that never held a file say nothing.
    out.retain(|_, points| points.iter().any(|p| p.1 > 0.0));
    out
}

/// The whole page.
pub fn html(
    m: &Matrix,
    results: &[CellResult],
    phases: &[(String, Vec<Row>)],
    failed: &[(Cell, String)],
    extra: &Value,
) -> String {
    let mut body = String::new();
    let _ = write!(body, "<h1>{}</h1>", esc(&m.name));
    if !m.description.is_empty() {
        let _ = write!(body, "<p>{}</p>", esc(&m.description));
    }
    let host = &extra["host"];
    let _ = write!(
        body,
        "<p class=meta>{} cells complete{} · git {} · {} · {} logical CPUs · {:.1} GiB · kernel {} · DB filesystem {} ({}){}</p>",
        results.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!(" · <a href=#failed>{} failed</a>", failed.len())
        },
        esc(extra["git"].as_str().unwrap_or("?")),
        esc(host["cpu_model"].as_str().unwrap_or("?")),
        host["logical_cpus"],
        host["memory_bytes"].as_f64().unwrap_or(0.0) / (1u64 << 30) as f64,
        esc(host["kernel"].as_str().unwrap_or("?")),
        esc(extra["fs"]["type"].as_str().unwrap_or("?")),
        esc(extra["fs"]["device"].as_str().unwrap_or("?")),
        match extra["io_ceiling"]["write_bytes_per_sec"].as_f64() {
            Some(b) => format!(" · sequential write ceiling {:.0} MB/s", b / 1e6),
            None => String::new(),
        }
    );
    if !failed.is_empty() {
        // Before the measurements: what is missing from them, and why.
        body.push_str(
            "<h2 id=failed>Failed cells</h2><table><tr><th>cell</th><th>reason</th></tr>",
        );
        for (cell, why) in failed {
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(&cell.id),
                esc(why)
            );
        }
        body.push_str("</table>");
    }
    for (phase, rows) in phases {
        if rows.is_empty() {
            continue;
        }
        let _ = write!(body, "<h2 id={phase}>{} phase</h2>", esc(phase));
        body.push_str(&table_html("Summary", &summary::markdown(m, phase, rows)));
        if let Some(warning) = summary::durability_warning(rows) {
            let _ = write!(body, "<p class=warning>(!) {}</p>", esc(&warning));
        }
        body.push_str(&crate::sweep::html(m, results, phase));
        body.push_str("<div class=grid>");
        let db_index = |r: &Row| {
            let label = r
                .coords
                .iter()
                .find(|(a, _)| a == "db")
                .map(|(_, l)| l.as_str())
                .unwrap_or("");
            m.axes
                .iter()
                .find(|a| a.name == "db")
                .and_then(|a| a.values.iter().position(|v| v.label == label))
                .unwrap_or(0)
        };
        let title = if m.repeats > 1 {
            format!("{phase}: throughput, mean ± sd of {} repeats", m.repeats)
        } else {
            format!("{phase}: throughput")
        };
        let mut bars = BarChart::new(title, "ops/s");
        bars.bars = rows
            .iter()
            .map(|r| Bar::new(r.group.clone(), r.ops_mean, r.ops_sd, db_index(r)))
            .collect();
        body.push_str(&render_bars(&bars, CHART_WIDTH, CHART_HEIGHT + 20));
        let _ = write!(
            body,
            "</div><h3 id={phase}-throughput>Throughput over time</h3>"
        );
        if let Some(note) = summary::too_short_note(m, results, phase) {
            let _ = write!(body, "<p class=note>{}</p>", esc(&note));
        }
        body.push_str("<div class=grid>");
        let panels = panels(m, results, phase);
        for (key, cells) in &panels {
            let series: Vec<Series> = cells
                .iter()
                .filter_map(|r| {
                    let s = r.phase_series(phase)?;
                    Some(Series {
                        name: r.cell.label("db").unwrap_or("").into(),
                        points: s.status.iter().map(|p| (p.t, p.ops_per_sec)).collect(),
                        dashed: false,
                        color: db_color(m, r),
                    })
                })
                .collect();
            body.push_str(&time_chart(&format!("{phase} {key}"), "ops/s", &series));
        }
        let _ = write!(
            body,
            "</div><h3 id={phase}-latency>Latency CDFs (from the exported histograms)</h3><div class=grid>"
        );
        let ops: Vec<String> = {
            let mut o: Vec<String> = rows
                .iter()
                .flat_map(|r| r.latency.keys().cloned())
                .collect();
            o.sort();
            o.dedup();
            o
        };
        for (key, cells) in &panels {
            for op in &ops {
                let series: Vec<Series> = cells
                    .iter()
                    .filter_map(|r| {
                        let p = r.phase(phase)?;
                        let section = summary::op_sections(p)
                            .into_iter()
                            .find(|s| s.name == *op)?;
                        if let Some(points) = section.histogram.as_deref().and_then(histogram_cdf) {
                            return Some(Series {
                                name: r.cell.label("db").unwrap_or("").into(),
                                points,
                                dashed: false,
                                color: db_color(m, r),
                            });
                        }
                        let mut points: Vec<(f64, f64)> = vec![];
                        points.push((section.min_ns as f64 / 1000.0, 0.0));
                        for e in &section.percentiles {
                            points.push((e.ns as f64 / 1000.0, e.percentile));
                        }
                        points.push((section.max_ns as f64 / 1000.0, 100.0));
                        Some(Series {
                            name: r.cell.label("db").unwrap_or("").into(),
                            points,
                            dashed: false,
                            color: db_color(m, r),
                        })
                    })
                    .collect();
                if !series.is_empty() {
                    let chart = Chart::new(
                        format!("{phase} {op} {key}"),
                        "latency, µs (log)",
                        "percentile",
                    )
                    .with_log_x()
                    .with_y_max(100.0);
                    body.push_str(&draw(chart, &series));
                }
            }
        }
        let _ = write!(body, "</div><h3 id={phase}-cpu>CPU over time (client solid, server dashed; % of one core)</h3><div class=grid>");
        for (key, cells) in &panels {
            let mut series = Vec::new();
            for r in cells {
                let Some(s) = r.phase_series(phase) else {
                    continue;
                };
                let db = r.cell.label("db").unwrap_or("").to_string();
                series.push(Series {
                    name: db.clone(),
                    points: s.resources.iter().map(|p| (p.t, p.cpu_percent)).collect(),
                    dashed: false,
                    color: db_color(m, r),
                });
                if s.resources.iter().any(|p| p.server_cpu_percent.is_some()) {
                    series.push(Series {
                        name: format!("{db} server"),
                        points: s
                            .resources
                            .iter()
                            .filter_map(|p| Some((p.t, p.server_cpu_percent?)))
                            .collect(),
                        dashed: true,
                        color: db_color(m, r),
                    });
                }
            }
            match summary::cpu_missing(m, cells, phase) {
                Some(why) => {
                    let title = esc(&format!("{phase} {key}"));
                    let _ = write!(
                        body,
                        "<p class=missing><b>{title}</b>: no data: {}</p>",
                        esc(&why)
                    );
                }
                None => body.push_str(&time_chart(&format!("{phase} {key}"), "CPU %", &series)),
            }
        }
        body.push_str("</div>");
        let mut level_charts = String::new();
        for r in results.iter().filter(|r| r.cell.repeat == 1) {
            let Some(s) = r.phase_series(phase) else {
                continue;
            };
            let levels = level_gauges(s);
            if levels.is_empty() {
                continue;
            }
            let series: Vec<Series> = levels
                .into_iter()
                .enumerate()
                .map(|(i, (name, points))| Series {
                    name,
                    points,
                    dashed: false,
                    color: i,
                })
                .collect();
            level_charts.push_str(&time_chart(
                &format!("{phase} {}", r.cell.group),
                "files",
                &series,
            ));
        }
        if !level_charts.is_empty() {
            let _ = write!(
                body,
                "<h3 id={phase}-levels>Files per LSM level over time</h3><div class=grid>{level_charts}</div>"
            );
        }
    }
    let _ = write!(
        body,
        "<h2 id=matrix>Matrix</h2><pre>{}</pre>",
        esc(&crate::redact::text(&m.text))
    );
    format!(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{}</title><style>\
body{{font-family:sans-serif;margin:24px;color:#222}}h1{{margin-bottom:4px}}.meta{{color:#555;font-size:13px}}\
table{{border-collapse:collapse;font-size:12px;margin:8px 0}}td,th{{border:1px solid #ccc;padding:3px 7px;text-align:right}}th{{background:#f3f3f3}}\
.grid{{display:flex;flex-wrap:wrap;gap:10px}}.grid svg{{border:1px solid #e5e5e5}}pre{{background:#f7f7f7;padding:8px;font-size:12px}}\
</style></head><body>{body}</body></html>\n",
        esc(&m.name)
    )
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};

    #[test]
    fn cdf_from_an_exported_histogram() {
        // 1..=1000 µs uniformly, in nanoseconds, encoded as ycsb exports it.
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut bytes)
            .unwrap();
        let text = base64::engine::general_purpose::STANDARD.encode(bytes);
        let points = super::histogram_cdf(&text).unwrap();
        assert!(
            (points[0].0 - 1.0).abs() < 0.01 && points[0].1 == 0.0,
            "{:?}",
            points[0]
        );
        let median = points.iter().find(|p| p.1 == 50.0).unwrap();
        assert!((median.0 - 500.0).abs() < 1.0, "{median:?}");
        let last = points.last().unwrap();
        assert!((last.0 - 1000.0).abs() < 1.0 && last.1 == 100.0, "{last:?}");
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
            "monotone"
        );
        assert!(super::histogram_cdf("not base64!").is_none());
    }
}
