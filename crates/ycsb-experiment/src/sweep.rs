//! Latency against throughput, the figure YCSB papers print: a matrix
//! with a `target` axis (operations per second, 0 for unthrottled) gives
//! per store one curve of p50, p99 and Intended p99 (the latency from
//! each operation's intended start, which a target run records and which
//! does not hide a backlog the way coordinated omission does) against the
//! throughput achieved, and marks the knee: the first target the store
//! could not follow (it achieved less than [`FOLLOWS`] of it), or else its
//! unthrottled point.
//!
//! [`panels`] turns cell results into curves (pure data, means over
//! repeats); [`html`] draws them for the report, [`markdown`] and [`csv`]
//! write them for the summaries.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ycsb_report::{Block, Chart, Dash, Figure, Note, Series};
use ycsb_results::{PhaseReport, SectionReport};

use crate::matrix::Matrix;
use crate::summary::{self, CellResult};

/// The axis of target rates.
pub const AXIS: &str = "target";

/// A store follows a target while it achieves at least this share of it.
pub const FOLLOWS: f64 = 0.9;

/// One operation's latencies at one point, microseconds (NaN when not
/// measured: Intended latency exists only with a target).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Latencies {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99th percentile from the intended start.
    pub intended_p99: f64,
}

/// One target of a curve: the rate asked for and what was measured (means
/// over repeats).
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Operations per second asked for; 0: unthrottled.
    pub target: f64,
    /// The label of the target on the axis (`5000`).
    pub label: String,
    /// Operations per second achieved.
    pub throughput: f64,
    /// Per operation (`READ`), its latencies.
    pub latency: BTreeMap<String, Latencies>,
}

impl Point {
    /// Whether the store kept up with the target: throttled, and
    /// achieving at least [`FOLLOWS`] of it.
    pub fn follows(&self) -> bool {
        self.target > 0.0 && self.throughput >= FOLLOWS * self.target
    }
}

/// One store's curve: its points by increasing target, unthrottled last.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// The db label.
    pub db: String,
    /// Its palette colour (its place on the db axis).
    pub colour: usize,
    /// The points.
    pub points: Vec<Point>,
    /// The index of the knee in `points`, if any: the first point that
    /// does not follow its target.
    pub knee: Option<usize>,
}

/// The curves of one combination of the other varying axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// The other axes' values (`workload=workloada, threadcount=2`), empty
    /// when only db and target vary.
    pub key: String,
    /// One curve per db, in db axis order.
    pub curves: Vec<Curve>,
}

/// The knee of `points` (in curve order): the first point that does not
/// follow its target, the unthrottled one included; `None` when every
/// point followed its target.
pub fn knee(points: &[Point]) -> Option<usize> {
    points.iter().position(|p| !p.follows())
}

/// The target a cell ran at, from its coordinates; `None` without a
/// target axis.
fn target_of(r: &CellResult) -> Option<(f64, String)> {
    r.cell
        .coords
        .iter()
        .find(|(a, _, _)| a == AXIS)
        .and_then(|(_, v, l)| Some((v.trim().parse().ok()?, l.clone())))
}

/// The 99th (or any) percentile of a section, microseconds.
fn percentile_us(section: Option<&SectionReport>, p: f64) -> f64 {
    section
        .and_then(|s| {
            s.percentiles
                .iter()
                .find(|x| (x.percentile - p).abs() < 1e-9)
        })
        .map_or(f64::NAN, |x| x.ns as f64 / 1000.0)
}

/// The throughput a phase achieved, from its exact run time (Java's
/// figure divides by whole milliseconds, coarse for a short phase).
fn achieved(phase: &PhaseReport) -> f64 {
    if phase.runtime_ns > 0 {
        phase.operations as f64 / (phase.runtime_ns as f64 / 1e9)
    } else {
        phase.throughput
    }
}

/// Per operation of a phase, its latencies (failed-latency sections left
/// out).
fn latencies(phase: &PhaseReport) -> BTreeMap<String, Latencies> {
    summary::op_sections(phase)
        .into_iter()
        .filter(|s| !s.failed)
        .map(|s| {
            let intended = phase.section(s.operation.intended_name());
            (
                s.name.clone(),
                Latencies {
                    p50: percentile_us(Some(s), 50.0),
                    p99: percentile_us(Some(s), 99.0),
                    intended_p99: percentile_us(intended, 99.0),
                },
            )
        })
        .collect()
}

/// The mean of the finite values (NaN when none is).
fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values
        .filter(|v| v.is_finite())
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// The sweep of `phase`: per combination of the axes other than db and
/// target, one curve per db with a point per target (means over repeats).
/// Empty without a target axis of at least two values, and curves of a
/// single point (a load shared by every target) are left out.
pub fn panels(m: &Matrix, results: &[CellResult], phase: &str) -> Vec<Panel> {
    if !m.axes.iter().any(|a| a.name == AXIS && a.values.len() > 1) {
        return Vec::new();
    }
    let others: Vec<String> = summary::varying_axes(m)
        .into_iter()
        .filter(|a| a != "db" && a != AXIS)
        .collect();
    let db_axis: Vec<&str> = m
        .axes
        .iter()
        .find(|a| a.name == "db")
        .map(|a| a.values.iter().map(|v| v.label.as_str()).collect())
        .unwrap_or_default();
    // (panel, db, target label) -> the target and the repeats'
    // (throughput, latencies).
    type Key = (String, String, String);
    type Repeat = (f64, BTreeMap<String, Latencies>);
    let mut measured: BTreeMap<Key, (f64, Vec<Repeat>)> = BTreeMap::new();
    for r in results {
        let (Some(p), Some((target, label))) = (r.phase(phase), target_of(r)) else {
            continue;
        };
        let key = others
            .iter()
            .filter_map(|a| r.cell.label(a).map(|l| format!("{a}={l}")))
            .collect::<Vec<_>>()
            .join(", ");
        let db = r.cell.label("db").unwrap_or("").to_string();
        measured
            .entry((key, db, label))
            .or_insert_with(|| (target, Vec::new()))
            .1
            .push((achieved(p), latencies(p)));
    }
    let mut out: Vec<Panel> = Vec::new();
    for ((key, db, label), (target, repeats)) in measured {
        let mut latency: BTreeMap<String, Latencies> = BTreeMap::new();
        let ops: Vec<String> = repeats
            .iter()
            .flat_map(|(_, l)| l.keys().cloned())
            .collect();
        for op in ops {
            if latency.contains_key(&op) {
                continue;
            }
            let of = |f: fn(&Latencies) -> f64| {
                mean(repeats.iter().filter_map(|(_, l)| l.get(&op)).map(f))
            };
            let l = Latencies {
                p50: of(|l| l.p50),
                p99: of(|l| l.p99),
                intended_p99: of(|l| l.intended_p99),
            };
            latency.insert(op, l);
        }
        let point = Point {
            target,
            label,
            throughput: mean(repeats.iter().map(|(t, _)| *t)),
            latency,
        };
        let at = match out.iter().position(|p| p.key == key) {
            Some(i) => i,
            None => {
                out.push(Panel {
                    key: key.clone(),
                    curves: Vec::new(),
                });
                out.len() - 1
            }
        };
        let panel = &mut out[at];
        let colour = db_axis.iter().position(|d| *d == db).unwrap_or(0);
        match panel.curves.iter_mut().find(|c| c.db == db) {
            Some(c) => c.points.push(point),
            None => panel.curves.push(Curve {
                db,
                colour,
                points: vec![point],
                knee: None,
            }),
        }
    }
    for panel in &mut out {
        panel.curves.retain(|c| c.points.len() > 1);
        panel.curves.sort_by_key(|c| c.colour);
        for curve in &mut panel.curves {
            // Increasing offered load: unthrottled is the most of all.
            let order = |p: &Point| {
                if p.target > 0.0 {
                    p.target
                } else {
                    f64::INFINITY
                }
            };
            curve.points.sort_by(|a, b| order(a).total_cmp(&order(b)));
            curve.knee = knee(&curve.points);
        }
    }
    out.retain(|p| !p.curves.is_empty());
    out
}

/// The operations any curve of `panel` measured.
fn operations(panel: &Panel) -> Vec<String> {
    let mut ops: Vec<String> = panel
        .curves
        .iter()
        .flat_map(|c| c.points.iter().flat_map(|p| p.latency.keys().cloned()))
        .collect();
    ops.sort();
    ops.dedup();
    ops
}

/// A rate for people: whole operations per second, from ten thousand on
/// in thousands (`128.3k`), from ten million on in millions.
fn rate(ops_per_sec: f64) -> String {
    let a = ops_per_sec.abs();
    if a >= 1e7 {
        format!("{:.1}M", ops_per_sec / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", ops_per_sec / 1e3)
    } else {
        format!("{ops_per_sec:.0}")
    }
}

/// What a knee says in words: `knee at 45.1k ops/s (target 50000)`.
fn knee_text(curve: &Curve) -> String {
    match curve.knee.map(|k| &curve.points[k]) {
        Some(p) if p.target > 0.0 => format!(
            "knee at {} ops/s (target {} not followed)",
            rate(p.throughput),
            p.label
        ),
        Some(p) => format!(
            "knee at {} ops/s (unthrottled; every target followed)",
            rate(p.throughput)
        ),
        None => "every target followed: no knee (add a higher target or 0, unthrottled)".into(),
    }
}

/// The chart of one operation of one panel.
fn chart(phase: &str, panel: &Panel, op: &str) -> Chart {
    let mut title = format!("{phase} {op}: latency against throughput");
    if !panel.key.is_empty() {
        let _ = write!(title, " ({})", panel.key);
    }
    let mut chart = Chart::new(title, "achieved throughput (ops/s)", "latency, µs (log)");
    chart.log_y = true;
    for curve in &panel.curves {
        let line = |f: fn(&Latencies) -> f64| -> Vec<(f64, f64)> {
            curve
                .points
                .iter()
                .map(|p| (p.throughput, p.latency.get(op).map_or(f64::NAN, f)))
                .collect()
        };
        let styled =
            |name: String, points, dash| Series::new(name, points).styled(curve.colour, dash);
        chart.series.push(styled(
            format!("{} p50", curve.db),
            line(|l| l.p50),
            Dash::Solid,
        ));
        chart.series.push(styled(
            format!("{} p99", curve.db),
            line(|l| l.p99),
            Dash::Dashed,
        ));
        let intended = line(|l| l.intended_p99);
        if intended.iter().any(|(_, y)| y.is_finite()) {
            chart.series.push(styled(
                format!("{} Intended p99", curve.db),
                intended,
                Dash::Dotted,
            ));
        }
        // The knee: a vertical mark at its throughput, across its
        // latencies.
        if let Some(p) = curve.knee.map(|k| &curve.points[k]) {
            if let Some(l) = p.latency.get(op) {
                let low = l.p50.min(l.p99);
                let high = [l.p99, l.intended_p99]
                    .into_iter()
                    .filter(|v| v.is_finite())
                    .fold(l.p50, f64::max);
                chart.series.push(styled(
                    format!("{} knee", curve.db),
                    vec![(p.throughput, low / 1.5), (p.throughput, high * 1.5)],
                    Dash::LongDashed,
                ));
            }
        }
    }
    chart
}

/// The sweep's section of a phase in the report: what the curves show, one
/// chart per operation and panel (side by side), and each curve's knee in
/// words; nothing without a target axis of several values.
pub fn blocks(m: &Matrix, results: &[CellResult], phase: &str) -> Vec<Block> {
    let panels = panels(m, results, phase);
    if panels.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![
        Block::Heading("Latency against throughput (target sweep)".into()),
        Note::plain(format!(
            "Per store: p50 (solid), p99 (dashed) and Intended p99 (dotted: from each operation's intended start, \
             so a backlog behind a slow operation counts) at each target, against the throughput achieved; \
             the long-dashed mark is the knee, the first target the store achieved less than {:.0} % of \
             (or its unthrottled point).",
            FOLLOWS * 100.0
        )),
    ];
    let charts: Vec<Block> = panels
        .iter()
        .flat_map(|panel| {
            operations(panel)
                .into_iter()
                .map(move |op| Figure::block(chart(phase, panel, &op)))
        })
        .collect();
    // Full width: the axes carry the figures the knees are read from.
    blocks.extend(charts);
    for panel in &panels {
        for curve in &panel.curves {
            let name = if panel.key.is_empty() {
                curve.db.clone()
            } else {
                format!("{} ({})", curve.db, panel.key)
            };
            blocks.push(Note::plain(format!("{name}: {}", knee_text(curve))));
        }
    }
    blocks
}

/// The knees of one phase's sweep as Markdown lines; empty without a
/// sweep.
pub fn markdown(m: &Matrix, results: &[CellResult], phase: &str) -> String {
    let panels = panels(m, results, phase);
    if panels.is_empty() {
        return String::new();
    }
    let mut out = format!("#### {phase} phase: latency against throughput\n\n");
    for panel in &panels {
        for curve in &panel.curves {
            let at = if panel.key.is_empty() {
                String::new()
            } else {
                format!(" ({})", panel.key)
            };
            let _ = writeln!(out, "- {}{at}: {}", curve.db, knee_text(curve));
        }
    }
    out
}

/// The first line of [`csv`]'s text.
pub const CSV_HEADER: &str =
    "panel,db,target,achieved_ops_per_sec,follows,knee,operation,p50_us,p99_us,intended_p99_us\n";

/// The points of one phase's sweep as CSV (one row per point and
/// operation, the knee flagged), for plots; `None` without a sweep.
pub fn csv(m: &Matrix, results: &[CellResult], phase: &str) -> Option<String> {
    let panels = panels(m, results, phase);
    if panels.is_empty() {
        return None;
    }
    let mut out = String::from(CSV_HEADER);
    let num = |v: f64| {
        if v.is_finite() {
            v.to_string()
        } else {
            String::new()
        }
    };
    for panel in &panels {
        for curve in &panel.curves {
            for (i, p) in curve.points.iter().enumerate() {
                for (op, l) in &p.latency {
                    let _ = writeln!(
                        out,
                        "\"{}\",{},{},{},{},{},{op},{},{},{}",
                        panel.key.replace('"', "\"\""),
                        curve.db,
                        p.label,
                        num(p.throughput),
                        p.follows(),
                        curve.knee == Some(i),
                        num(l.p50),
                        num(l.p99),
                        num(l.intended_p99)
                    );
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests;
