//! Line charts as hand-written SVG: axes with round ticks, grid, one
//! polyline per series, a legend. No dependencies, deterministic output.

use std::fmt::Write as _;

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend text.
    pub name: String,
    /// `(x, y)` points in x order; non-finite values break the line.
    pub points: Vec<(f64, f64)>,
    /// The palette colour to use (series sharing one are related, e.g. the
    /// percentiles of one operation); `None`: the series' own position.
    pub colour: Option<usize>,
    /// The line pattern.
    pub dash: Dash,
}

/// A line pattern, to tell apart series of one colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Dash {
    /// A solid line.
    #[default]
    Solid,
    /// Dashes.
    Dashed,
    /// Dots.
    Dotted,
}

impl Dash {
    fn attribute(self) -> &'static str {
        match self {
            Dash::Solid => "",
            Dash::Dashed => r#" stroke-dasharray="7 4""#,
            Dash::Dotted => r#" stroke-dasharray="2 3""#,
        }
    }
}

impl Series {
    /// A series named `name` with `points`.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            points,
            colour: None,
            dash: Dash::Solid,
        }
    }

    /// The same series drawn in palette colour `colour` with `dash`.
    pub fn styled(mut self, colour: usize, dash: Dash) -> Self {
        self.colour = Some(colour);
        self.dash = dash;
        self
    }
}

/// A line chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// The title above the plot.
    pub title: String,
    /// The x axis label (`time (s)`).
    pub x_label: String,
    /// The y axis label (`ops/s`).
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// A logarithmic y axis (for latencies spanning decades).
    pub log_y: bool,
}

impl Chart {
    /// A linear chart with no series yet.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Self {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Vec::new(),
            log_y: false,
        }
    }

    /// Whether no series has a finite point.
    pub fn is_empty(&self) -> bool {
        !self
            .series
            .iter()
            .flat_map(|s| &s.points)
            .any(|(x, y)| x.is_finite() && y.is_finite())
    }
}

/// Colour-blind-safe palette (Okabe-Ito, black last).
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

const MARGIN_LEFT: f64 = 72.0;
const MARGIN_RIGHT: f64 = 16.0;
const MARGIN_TOP: f64 = 34.0;
const MARGIN_BOTTOM: f64 = 44.0;
const LEGEND_ROW: f64 = 18.0;

/// Escapes text for SVG/HTML content and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Round tick values covering `lo..=hi`, about `target` of them, at 1, 2
/// or 5 times a power of ten.
fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| span / s <= target as f64)
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step).ceil() * step;
    let mut ticks = Vec::new();
    let mut k = 0.0;
    loop {
        let t = first + k * step;
        if t > hi + step * 1e-9 || ticks.len() > 50 {
            break;
        }
        // Snaps -0.0 and 0.30000000000000004 to clean values.
        ticks.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        k += 1.0;
    }
    ticks
}

/// A short label: SI suffixes from thousands on, at most 3 decimals.
pub fn format_value(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let mut text = format!("{scaled:.3}");
    while text.contains('.') && (text.ends_with('0') || text.ends_with('.')) {
        text.pop();
    }
    if text == "-0" {
        text = "0".into();
    }
    text + suffix
}

/// The y range, widened so that a flat line sits mid-chart and starting at
/// 0 when the data is non-negative (throughput, CPU, counts).
fn y_range(lo: f64, hi: f64) -> (f64, f64) {
    let lo = if lo >= 0.0 { 0.0 } else { lo };
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        (lo, if hi == 0.0 { 1.0 } else { hi * 2.0 })
    } else {
        (lo, hi + (hi - lo) * 0.05)
    }
}

/// Draws `chart` as a standalone SVG document of `width` x `height`
/// pixels (the legend rows are added below the plot).
pub fn render_svg(chart: &Chart, width: u32, height: u32) -> String {
    let legend_rows = chart.series.len().div_ceil(3).max(1);
    let width = f64::from(width.max(200));
    let plot_height = f64::from(height.max(150));
    let total_height = plot_height + legend_rows as f64 * LEGEND_ROW + 8.0;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total_height}" viewBox="0 0 {width} {total_height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(
        svg,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{}" y="20" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        width / 2.0,
        escape(&chart.title)
    );
    let (left, right) = (MARGIN_LEFT, width - MARGIN_RIGHT);
    let (top, bottom) = (MARGIN_TOP, plot_height - MARGIN_BOTTOM);

    let finite: Vec<(f64, f64)> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|(x, y)| x.is_finite() && y.is_finite() && (!chart.log_y || *y > 0.0))
        .collect();
    if finite.is_empty() {
        let _ = write!(
            svg,
            r##"<rect x="{left}" y="{top}" width="{}" height="{}" fill="none" stroke="#999"/><text x="{}" y="{}" text-anchor="middle" fill="#666">no data</text></svg>"##,
            right - left,
            bottom - top,
            (left + right) / 2.0,
            (top + bottom) / 2.0
        );
        return svg;
    }
    let (mut x_lo, mut x_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (x, y) in &finite {
        x_lo = x_lo.min(*x);
        x_hi = x_hi.max(*x);
        y_lo = y_lo.min(*y);
        y_hi = y_hi.max(*y);
    }
    // Time axes start at 0, the start of the phase.
    if x_lo > 0.0 {
        x_lo = 0.0;
    }
    if x_hi <= x_lo {
        x_hi = x_lo + 1.0;
    }
    // The y axis maps through `ty` (log10 on a log chart).
    let (ty, y_lo, y_hi): (fn(f64) -> f64, f64, f64) = if chart.log_y {
        let lo = 10f64.powf(y_lo.log10().floor());
        let hi = 10f64.powf(y_hi.log10().ceil().max(lo.log10() + 1.0));
        (f64::log10, lo, hi)
    } else {
        let (lo, hi) = y_range(y_lo, y_hi);
        (|v| v, lo, hi)
    };
    let sx = |x: f64| left + (x - x_lo) / (x_hi - x_lo) * (right - left);
    let sy = |y: f64| bottom - (ty(y) - ty(y_lo)) / (ty(y_hi) - ty(y_lo)) * (bottom - top);

    // Grid and tick labels.
    let y_ticks: Vec<f64> = if chart.log_y {
        let mut t = Vec::new();
        let mut v = y_lo;
        while v <= y_hi * 1.000001 {
            t.push(v);
            v *= 10.0;
        }
        t
    } else {
        nice_ticks(y_lo, y_hi, 6)
    };
    for t in &y_ticks {
        let y = sy(*t);
        let _ = write!(
            svg,
            r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            left - 6.0,
            y + 4.0,
            format_value(*t)
        );
    }
    for t in nice_ticks(x_lo, x_hi, 8) {
        let x = sx(t);
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{bottom}" stroke="#f0f0f0"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            bottom + 16.0,
            format_value(t)
        );
    }
    let _ = write!(
        svg,
        r##"<rect x="{left}" y="{top}" width="{}" height="{}" fill="none" stroke="#333"/>"##,
        right - left,
        bottom - top
    );
    let _ = write!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (left + right) / 2.0,
        bottom + 34.0,
        escape(&chart.x_label)
    );
    let _ = write!(
        svg,
        r#"<text transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (top + bottom) / 2.0,
        escape(&chart.y_label)
    );

    // Lines: a path per series, broken at non-finite points.
    for (i, series) in chart.series.iter().enumerate() {
        let colour = PALETTE[series.colour.unwrap_or(i) % PALETTE.len()];
        let dash = series.dash.attribute();
        // Runs of consecutive usable points: a run of two or more is a
        // line, a lone point (between gaps) a dot, so it stays visible.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for &(x, y) in &series.points {
            let usable = x.is_finite() && y.is_finite() && (!chart.log_y || y > 0.0);
            if usable {
                if let Some(run) = runs.last_mut() {
                    run.push((sx(x), sy(y)));
                }
            } else if runs.last().is_some_and(|r| !r.is_empty()) {
                runs.push(Vec::new());
            }
        }
        let mut d = String::new();
        for run in runs.iter().filter(|r| r.len() > 1) {
            for (k, (x, y)) in run.iter().enumerate() {
                let _ = write!(d, "{}{x:.1} {y:.1} ", if k == 0 { "M" } else { "L" });
            }
        }
        if !d.is_empty() {
            let _ = write!(
                svg,
                r#"<path d="{}" fill="none" stroke="{colour}" stroke-width="1.8" stroke-linejoin="round"{dash}/>"#,
                d.trim_end()
            );
        }
        for run in runs.iter().filter(|r| r.len() == 1) {
            let _ = write!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#,
                run[0].0, run[0].1
            );
        }
        // Legend: three entries per row below the x label.
        let column = (i % 3) as f64;
        let row = (i / 3) as f64;
        let lx = left + column * ((right - left) / 3.0);
        let ly = plot_height + row * LEGEND_ROW;
        let _ = write!(
            svg,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="3"{dash}/><text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 22.0,
            lx + 28.0,
            ly + 4.0,
            escape(&series.name)
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            nice_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        let t = nice_ticks(0.0, 0.9, 6);
        assert_eq!(t.first(), Some(&0.0));
        assert!((t[1] - 0.2).abs() < 1e-12, "{t:?}");
        let t = nice_ticks(3.0, 47_000.0, 6);
        assert_eq!(t, vec![10_000.0, 20_000.0, 30_000.0, 40_000.0]);
    }

    #[test]
    fn values_get_short_labels() {
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(2.5), "2.5");
        assert_eq!(format_value(12_000.0), "12k");
        assert_eq!(format_value(1_500_000.0), "1.5M");
        assert_eq!(format_value(-0.0), "0");
    }

    #[test]
    fn a_chart_has_one_path_per_series_and_escapes_text() {
        let mut chart = Chart::new("a <b> & c", "time (s)", "ops/s");
        chart.series.push(Series::new(
            "READ",
            vec![(0.0, 1.0), (1.0, 3.0), (2.0, 2.0)],
        ));
        chart.series.push(Series::new(
            "x\"y",
            vec![(0.0, 2.0), (f64::NAN, 1.0), (2.0, 2.0)],
        ));
        chart.series.push(Series::new("one", vec![(1.0, 1.0)]));
        let svg = render_svg(&chart, 600, 300);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<path ").count(), 1, "{svg}");
        assert_eq!(svg.matches("<circle ").count(), 3, "{svg}");
        assert!(svg.contains("a &lt;b&gt; &amp; c") && svg.contains("x&quot;y"));
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn empty_and_log_charts() {
        let empty = Chart::new("nothing", "x", "y");
        assert!(empty.is_empty());
        assert!(render_svg(&empty, 400, 200).contains("no data"));
        let mut log = Chart::new("latency", "time (s)", "us");
        log.log_y = true;
        log.series.push(Series::new(
            "p99",
            vec![(0.0, 120.0), (1.0, 35_000.0), (2.0, 0.0)],
        ));
        let svg = render_svg(&log, 400, 200);
        // Decades from 100 to 100k; the zero is left out, not log(0).
        for label in [">100<", ">1000<", ">10k<", ">100k<"] {
            assert!(svg.contains(label), "{label}: {svg}");
        }
        assert!(!svg.contains("inf"));
    }
}
