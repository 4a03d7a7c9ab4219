//! Charts as hand-written SVG: line charts (axes with round ticks, grid,
//! one polyline per series, a legend) and bar charts with error bars, in
//! one palette. No dependencies, deterministic output.

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
    /// Long dashes with dots between.
    DashDot,
    /// Long dashes.
    LongDashed,
}

impl Dash {
    /// The patterns in the order series of one colour take them.
    pub const ALL: [Dash; 5] = [
        Dash::Solid,
        Dash::Dashed,
        Dash::Dotted,
        Dash::DashDot,
        Dash::LongDashed,
    ];
}

impl Dash {
    fn attribute(self) -> &'static str {
        match self {
            Dash::Solid => "",
            Dash::Dashed => r#" stroke-dasharray="7 4""#,
            Dash::Dotted => r#" stroke-dasharray="2 3""#,
            Dash::DashDot => r#" stroke-dasharray="9 3 2 3""#,
            Dash::LongDashed => r#" stroke-dasharray="14 5""#,
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
    /// A logarithmic x axis in decades (latency CDFs); points at x ≤ 0
    /// are left out. Otherwise the x axis starts at 0 (a phase's start).
    pub log_x: bool,
    /// A fixed top of a linear y axis (100 for percentiles); points above
    /// it are drawn at the top. `None`: the data's maximum plus a margin.
    pub y_max: Option<f64>,
    /// Draw each series as steps (a value holds until the next point):
    /// counts such as files per level, which jump rather than slide.
    pub step: bool,
    /// Whole-number y ticks only (counts).
    pub integer_y: bool,
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
            log_x: false,
            y_max: None,
            step: false,
            integer_y: false,
        }
    }

    /// The same chart with a logarithmic x axis (see [`Chart::log_x`]).
    pub fn with_log_x(mut self) -> Self {
        self.log_x = true;
        self
    }

    /// The same chart with its linear y axis ending at `top` (see
    /// [`Chart::y_max`]).
    pub fn with_y_max(mut self, top: f64) -> Self {
        self.y_max = Some(top);
        self
    }

    /// The same chart drawn as steps with whole-number y ticks (see
    /// [`Chart::step`], [`Chart::integer_y`]).
    pub fn with_steps(mut self) -> Self {
        self.step = true;
        self.integer_y = true;
        self
    }

    /// Whether the point can be drawn on this chart's axes.
    fn usable(&self, (x, y): (f64, f64)) -> bool {
        x.is_finite() && y.is_finite() && (!self.log_y || y > 0.0) && (!self.log_x || x > 0.0)
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

/// The powers of ten from `lo` to `hi`, both powers of ten themselves.
fn decades(lo: f64, hi: f64) -> Vec<f64> {
    let mut t = Vec::new();
    let mut v = lo;
    while v <= hi * 1.000001 && t.len() < 40 {
        t.push(v);
        v *= 10.0;
    }
    t
}

/// The label of a logarithmic axis tick: every decade in one style
/// (1, 10, 100, 1k, 10k, 1M), never `1000` beside `10k`.
fn format_decade(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    // Decades below 1 (0.1, 0.01) keep their decimals.
    let text = if scaled.fract().abs() < 1e-9 {
        format!("{scaled:.0}")
    } else {
        format_value(scaled)
    };
    text + suffix
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
        .filter(|p| chart.usable(*p))
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
    // The x axis maps through `tx` (log10 on a log chart), in whole
    // decades there; time axes start at 0, the start of the phase.
    let tx: fn(f64) -> f64 = if chart.log_x {
        x_lo = 10f64.powf(x_lo.log10().floor());
        x_hi = 10f64.powf(x_hi.log10().ceil().max(x_lo.log10() + 1.0));
        f64::log10
    } else {
        if x_lo > 0.0 {
            x_lo = 0.0;
        }
        if x_hi <= x_lo {
            x_hi = x_lo + 1.0;
        }
        |v| v
    };
    // The y axis maps through `ty` (log10 on a log chart).
    let (ty, y_lo, y_hi): (fn(f64) -> f64, f64, f64) = if chart.log_y {
        let lo = 10f64.powf(y_lo.log10().floor());
        let hi = 10f64.powf(y_hi.log10().ceil().max(lo.log10() + 1.0));
        (f64::log10, lo, hi)
    } else {
        let (lo, hi) = y_range(y_lo, y_hi);
        let hi = chart.y_max.filter(|m| *m > lo).unwrap_or(hi);
        (|v| v, lo, hi)
    };
    let sx = |x: f64| left + (tx(x) - tx(x_lo)) / (tx(x_hi) - tx(x_lo)) * (right - left);
    let sy = |y: f64| {
        let y = y.min(y_hi);
        bottom - (ty(y) - ty(y_lo)) / (ty(y_hi) - ty(y_lo)) * (bottom - top)
    };

    // Grid and tick labels.
    let y_ticks: Vec<f64> = if chart.log_y {
        decades(y_lo, y_hi)
    } else if chart.integer_y {
        // Counts: whole steps, never 2.5 files.
        let ticks = nice_ticks(y_lo, y_hi, 6);
        if ticks.len() > 1 && ticks[1] - ticks[0] < 1.0 {
            let first = y_lo.ceil() as i64;
            (first..=y_hi.floor() as i64).map(|t| t as f64).collect()
        } else {
            ticks
        }
    } else {
        nice_ticks(y_lo, y_hi, 6)
    };
    let y_label = if chart.log_y {
        format_decade
    } else {
        format_value
    };
    for t in &y_ticks {
        let y = sy(*t);
        let _ = write!(
            svg,
            r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            left - 6.0,
            y + 4.0,
            y_label(*t)
        );
    }
    let x_ticks = if chart.log_x {
        decades(x_lo, x_hi)
    } else {
        nice_ticks(x_lo, x_hi, 8)
    };
    let x_label = if chart.log_x {
        format_decade
    } else {
        format_value
    };
    for t in x_ticks {
        let x = sx(t);
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{bottom}" stroke="#f0f0f0"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            bottom + 16.0,
            x_label(t)
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
            if chart.usable((x, y)) {
                if let Some(run) = runs.last_mut() {
                    run.push((sx(x), sy(y)));
                }
            } else if runs.last().is_some_and(|r| !r.is_empty()) {
                runs.push(Vec::new());
            }
        }
        let mut d = String::new();
        for run in runs.iter().filter(|r| r.len() > 1) {
            let mut previous_y = None;
            for (k, (x, y)) in run.iter().enumerate() {
                if let (true, Some(py)) = (chart.step, previous_y) {
                    // Holds the previous value up to this point, then jumps.
                    let _ = write!(d, "L{x:.1} {py:.1} ");
                }
                let _ = write!(d, "{}{x:.1} {y:.1} ", if k == 0 { "M" } else { "L" });
                previous_y = Some(*y);
            }
        }
        if !d.is_empty() {
            // Slightly translucent, so that a line drawn over another of
            // the same values still lets the one below show through.
            let _ = write!(
                svg,
                r#"<path d="{}" fill="none" stroke="{colour}" stroke-width="1.8" stroke-opacity="0.85" stroke-linejoin="round"{dash}/>"#,
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

/// One bar of a [`BarChart`]: a value with a ± error, such as a mean
/// throughput and its standard deviation over repeats.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The label below the bar (long labels are slanted and shortened).
    pub label: String,
    /// The bar's height.
    pub value: f64,
    /// The half-length of the error bar; 0 draws none.
    pub error: f64,
    /// The palette colour, so that a bar matches its lines elsewhere.
    pub colour: usize,
}

impl Bar {
    /// A bar of `value` ± `error` in palette colour `colour`.
    pub fn new(label: impl Into<String>, value: f64, error: f64, colour: usize) -> Self {
        Self {
            label: label.into(),
            value,
            error,
            colour,
        }
    }
}

/// A bar chart with error bars, its y axis from 0.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    /// The title above the plot.
    pub title: String,
    /// The y axis label (`ops/s`).
    pub y_label: String,
    /// The bars, left to right.
    pub bars: Vec<Bar>,
}

impl BarChart {
    /// A chart with no bars yet.
    pub fn new(title: impl Into<String>, y_label: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            y_label: y_label.into(),
            bars: Vec::new(),
        }
    }
}

/// Labels longer than this are cut with an ellipsis.
const BAR_LABEL_CHARS: usize = 40;

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Draws `chart` as a standalone SVG document: at least `width` pixels
/// wide, wider with many bars, and `height` plus room for the labels,
/// which run down at an angle so that long names (experiment cells) stay
/// readable.
pub fn render_bars(chart: &BarChart, width: u32, height: u32) -> String {
    let longest = chart
        .bars
        .iter()
        .map(|b| b.label.chars().count().min(BAR_LABEL_CHARS))
        .max()
        .unwrap_or(0) as f64;
    // A slanted label of n characters needs about 4.5 px across and 3.6
    // px down per character at 10 px type.
    let label_width = longest * 4.5;
    let label_height = longest * 3.6;
    let slot_min = 44.0;
    let width = (MARGIN_LEFT + MARGIN_RIGHT + slot_min * chart.bars.len() as f64)
        .max(f64::from(width.max(200)))
        + label_width;
    let height = f64::from(height.max(150)) + label_height;
    let (left, right) = (MARGIN_LEFT, width - MARGIN_RIGHT - label_width);
    let (top, bottom) = (MARGIN_TOP, height - MARGIN_BOTTOM - label_height);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/><text x="{}" y="20" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        width / 2.0,
        escape(&chart.title)
    );
    let _ = write!(
        svg,
        r#"<text transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (top + bottom) / 2.0,
        escape(&chart.y_label)
    );
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let highest = chart
        .bars
        .iter()
        .map(|b| finite(b.value) + finite(b.error).max(0.0))
        .fold(0.0, f64::max);
    let (y_lo, y_hi) = y_range(0.0, highest);
    let sy = |y: f64| bottom - (y.clamp(y_lo, y_hi) - y_lo) / (y_hi - y_lo) * (bottom - top);
    for t in nice_ticks(y_lo, y_hi, 6) {
        let y = sy(t);
        let _ = write!(
            svg,
            r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            left - 6.0,
            y + 4.0,
            format_value(t)
        );
    }
    let slot = (right - left) / chart.bars.len().max(1) as f64;
    for (i, bar) in chart.bars.iter().enumerate() {
        let colour = PALETTE[bar.colour % PALETTE.len()];
        let x = left + slot * i as f64 + slot * 0.15;
        let bar_width = slot * 0.7;
        let (value, error) = (finite(bar.value).max(0.0), finite(bar.error).max(0.0));
        let _ = write!(
            svg,
            r#"<rect x="{x:.1}" y="{:.1}" width="{bar_width:.1}" height="{:.1}" fill="{colour}"><title>{}: {} ± {}</title></rect>"#,
            sy(value),
            sy(0.0) - sy(value),
            escape(&bar.label),
            format_value(value),
            format_value(error)
        );
        let centre = x + bar_width / 2.0;
        if error > 0.0 {
            let (high, low) = (sy(value + error), sy((value - error).max(0.0)));
            let _ = write!(
                svg,
                r##"<path d="M{centre:.1} {high:.1}V{low:.1}M{:.1} {high:.1}h8M{:.1} {low:.1}h8" stroke="#222" stroke-width="1.5" fill="none"/>"##,
                centre - 4.0,
                centre - 4.0
            );
        }
        let _ = write!(
            svg,
            r#"<text transform="translate({centre:.1} {:.1}) rotate(40)" font-size="10">{}</text>"#,
            bottom + 12.0,
            escape(&shorten(&bar.label, BAR_LABEL_CHARS))
        );
    }
    let _ = write!(
        svg,
        r##"<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#333"/><line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/></svg>"##
    );
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
        for label in [">100<", ">1k<", ">10k<", ">100k<"] {
            assert!(svg.contains(label), "{label}: {svg}");
        }
        assert!(!svg.contains("inf"));
    }

    #[test]
    fn a_log_x_chart_has_decades_and_a_fixed_top() {
        let mut cdf = Chart::new("READ", "latency (us)", "percentile")
            .with_log_x()
            .with_y_max(100.0);
        cdf.series.push(Series::new(
            "rocksdb",
            vec![(0.0, 0.0), (3.0, 1.0), (250.0, 50.0), (4_200.0, 100.0)],
        ));
        let svg = render_svg(&cdf, 460, 260);
        // x from 1 to 10k in decades; y ends at 100, not 105.
        for label in [">1<", ">10<", ">100<", ">1k<", ">10k<"] {
            assert!(svg.contains(label), "{label}: {svg}");
        }
        assert!(!svg.contains(">105<") && svg.contains(">100<"));
        // The point at x = 0 has no place on a log axis: three points, one line.
        let path = svg.split("<path d=\"").nth(1).unwrap();
        let path = &path[..path.find('"').unwrap()];
        assert_eq!(path.matches(['M', 'L']).count(), 3, "{path}");
        assert!(!svg.contains("inf") && !svg.contains("NaN"));
    }

    #[test]
    fn bars_have_error_bars_in_palette_colours() {
        let mut chart = BarChart::new("run: throughput <mean>", "ops/s");
        chart
            .bars
            .push(Bar::new("db=a&b,fieldlength=8", 1000.0, 100.0, 0));
        chart.bars.push(Bar::new("db=c", 500.0, 0.0, 1));
        chart.bars.push(Bar::new("x".repeat(60), f64::NAN, 0.0, 9));
        let svg = render_bars(&chart, 460, 280);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("run: throughput &lt;mean&gt;") && svg.contains("db=a&amp;b"));
        // The background and three bars; the NaN bar is empty, not NaN.
        assert_eq!(svg.matches("<rect").count(), 4, "{svg}");
        assert!(!svg.contains("NaN"), "{svg}");
        // One error bar: only the first has an error.
        assert_eq!(svg.matches("stroke=\"#222\"").count(), 1, "{svg}");
        assert!(svg.contains(PALETTE[0]) && svg.contains(PALETTE[1]));
        // Colours wrap around the palette.
        assert_eq!(svg.matches(PALETTE[1]).count(), 2, "{svg}");
        // The error bar reaches above the tallest bar, and stays in the plot.
        let error_bar = svg.split("<path d=\"M").nth(1).unwrap();
        let top: f64 = error_bar.split(['V', ' ']).nth(1).unwrap().parse().unwrap();
        assert!((MARGIN_TOP..61.0).contains(&top), "{error_bar}");
        // Long labels are cut, and the chart widens for them.
        assert!(svg.contains(&format!("{}…", "x".repeat(39))));
        let narrow = render_bars(&BarChart::new("t", "y"), 460, 280);
        assert!(narrow.contains("width=\"460\""), "{narrow}");
        assert!(svg.contains("width=\"640\""), "{svg}");
    }
}

#[cfg(test)]
mod count_tests {
    use super::*;

    #[test]
    fn step_charts_hold_values_and_tick_whole_numbers() {
        let mut files = Chart::new("Files per level", "time (s)", "files").with_steps();
        files
            .series
            .push(Series::new("L0", vec![(0.0, 0.0), (1.0, 2.0), (2.0, 1.0)]));
        let svg = render_svg(&files, 400, 200);
        let path = svg.split("<path d=\"").nth(1).unwrap();
        let path = &path[..path.find('"').unwrap()];
        // Three points, two holds: five segments' ends.
        assert_eq!(path.matches(['M', 'L']).count(), 5, "{path}");
        // 0..2.1 would tick at 0.5 steps; counts tick at whole numbers.
        let y_tick = |label: &str| svg.contains(&format!("text-anchor=\"end\">{label}<"));
        assert!(y_tick("1") && y_tick("2"), "{svg}");
        assert!(!y_tick("0.5") && !y_tick("1.5"), "{svg}");
    }

    #[test]
    fn decades_are_labelled_in_one_style() {
        assert_eq!(format_decade(1.0), "1");
        assert_eq!(format_decade(1000.0), "1k");
        assert_eq!(format_decade(10_000.0), "10k");
        assert_eq!(format_decade(1e6), "1M");
        assert_eq!(format_decade(0.1), "0.1");
    }
}
