//! Charts as hand-written SVG: line charts (axes with round ticks, grid,
//! one path per series, a legend that never overlaps) and bar charts with
//! error bars. No dependencies, deterministic output.

use std::fmt::Write as _;

use crate::axis::{
    byte_unit, decades, format_decade, format_value, nice_ticks, whole_ticks, y_range,
};
use crate::style::{self, Dash, Marker, Style};
use crate::text::{escape, fit, text_width};

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
    /// The marker on some of its points and in its legend entry.
    pub marker: Marker,
}

impl Series {
    /// A series named `name` with `points`.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            points,
            colour: None,
            dash: Dash::Solid,
            marker: Marker::None,
        }
    }

    /// The same series drawn in palette colour `colour` with `dash`.
    pub fn styled(mut self, colour: usize, dash: Dash) -> Self {
        self.colour = Some(colour);
        self.dash = dash;
        self
    }

    /// Whether some point can be drawn on a linear chart.
    pub fn has_data(&self) -> bool {
        self.points
            .iter()
            .any(|(x, y)| x.is_finite() && y.is_finite())
    }
}

/// A line chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// The title above the plot.
    pub title: String,
    /// The x axis label (`time (s)`).
    pub x_label: String,
    /// The y axis label (`ops/s`). On a byte axis ([`Chart::y_bytes`]),
    /// `{bytes}` in it is replaced by the unit (`{bytes}/s`), or the unit
    /// is added in parentheses.
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
    /// The y values are bytes: the axis is labelled in the binary unit
    /// that suits them (KiB, MiB, GiB).
    pub y_bytes: bool,
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
            y_bytes: false,
        }
    }

    /// The same chart with a logarithmic x axis (see [`Chart::log_x`]).
    pub fn with_log_x(mut self) -> Self {
        self.log_x = true;
        self
    }

    /// The same chart with a logarithmic y axis (see [`Chart::log_y`]).
    pub fn with_log_y(mut self) -> Self {
        self.log_y = true;
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

    /// The same chart with whole-number y ticks (see [`Chart::integer_y`]).
    pub fn with_whole_numbers(mut self) -> Self {
        self.integer_y = true;
        self
    }

    /// The same chart with a byte axis (see [`Chart::y_bytes`]).
    pub fn with_bytes(mut self) -> Self {
        self.y_bytes = true;
        self
    }

    /// Whether the point can be drawn on this chart's axes.
    fn usable(&self, (x, y): (f64, f64)) -> bool {
        x.is_finite() && y.is_finite() && (!self.log_y || y > 0.0) && (!self.log_x || x > 0.0)
    }

    /// Whether no series has a point these axes can draw (finite, and
    /// above 0 on a logarithmic axis).
    pub fn is_empty(&self) -> bool {
        !self
            .series
            .iter()
            .flat_map(|s| &s.points)
            .any(|p| self.usable(*p))
    }
}

const MARGIN_RIGHT: f64 = 16.0;
const MARGIN_TOP: f64 = 34.0;
const MARGIN_BOTTOM: f64 = 44.0;
const LEGEND_ROW: f64 = 18.0;
const FONT: f64 = 12.0;
const TITLE_FONT: f64 = 15.0;
/// The swatch of a legend entry and the gap before its text.
const SWATCH: f64 = 28.0;
/// The space between legend columns.
const LEGEND_GAP: f64 = 14.0;
/// Markers drawn per series at most, so that they mark without clutter.
const MARKERS_PER_SERIES: usize = 8;

/// The left margin that holds tick labels as wide as `widest` and the
/// rotated axis title beside them.
fn left_margin(widest: f64) -> f64 {
    (30.0 + widest).max(52.0)
}

/// A chart's title, cut to the chart's width.
fn title_svg(title: &str, width: f64) -> String {
    format!(
        r#"<text x="{}" y="20" text-anchor="middle" font-size="{TITLE_FONT}" font-weight="bold">{}</text>"#,
        width / 2.0,
        escape(&fit(title, width - 12.0, TITLE_FONT * 1.08))
    )
}

/// The rotated y axis title, centred on the plot and cut to its height.
fn y_title_svg(title: &str, top: f64, bottom: f64) -> String {
    format!(
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (top + bottom) / 2.0,
        escape(&fit(title, bottom - top, FONT))
    )
}

/// Where each legend entry goes: uniform columns as wide as the widest
/// entry (cut to the chart's width), as many as fit, row after row.
struct Legend {
    /// Per series: the entry's left edge, its baseline and its text.
    entries: Vec<(f64, f64, String)>,
    height: f64,
}

impl Legend {
    fn layout(names: &[&str], width: f64, top: f64) -> Self {
        let available = width - 20.0;
        let widest = names
            .iter()
            .map(|n| text_width(n, FONT))
            .fold(0.0, f64::max)
            .min(available - SWATCH - LEGEND_GAP);
        let column = SWATCH + widest + LEGEND_GAP;
        let columns = ((available / column).floor() as usize).max(1);
        let entries = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let x = 10.0 + (i % columns) as f64 * column;
                let y = top + (i / columns) as f64 * LEGEND_ROW;
                (x, y, fit(name, widest, FONT))
            })
            .collect();
        let rows = names.len().div_ceil(columns).max(1);
        Self {
            entries,
            height: rows as f64 * LEGEND_ROW + 8.0,
        }
    }
}

/// The mapping from data to pixels and the ticks of both axes.
struct Axes {
    x_lo: f64,
    x_hi: f64,
    y_lo: f64,
    y_hi: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    /// Bytes per unit of a byte axis (1 otherwise) and the unit's name.
    y_unit: (&'static str, f64),
    y_ticks: Vec<f64>,
    x_ticks: Vec<f64>,
    log_x: bool,
    log_y: bool,
}

impl Axes {
    /// The axes for `chart`'s usable points in a plot of `width` x
    /// `plot_height` pixels; `None` when no point is usable.
    fn fit(chart: &Chart, width: f64, plot_height: f64) -> Option<Self> {
        let usable = || {
            chart
                .series
                .iter()
                .flat_map(|s| s.points.iter().copied())
                .filter(|p| chart.usable(*p))
        };
        let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for (x, y) in usable() {
            (x_lo, x_hi) = (x_lo.min(x), x_hi.max(x));
            (y_lo, y_hi) = (y_lo.min(y), y_hi.max(y));
        }
        if !x_lo.is_finite() {
            return None;
        }
        // Time axes start at 0, the start of the phase; log axes span
        // whole decades.
        if chart.log_x {
            x_lo = 10f64.powf(x_lo.log10().floor());
            x_hi = 10f64.powf(x_hi.log10().ceil().max(x_lo.log10() + 1.0));
        } else {
            x_lo = x_lo.min(0.0);
            if x_hi <= x_lo {
                x_hi = x_lo + 1.0;
            }
        }
        let y_unit = if chart.y_bytes {
            byte_unit(y_hi.abs().max(y_lo.abs()))
        } else {
            ("", 1.0)
        };
        if chart.log_y {
            y_lo = 10f64.powf(y_lo.log10().floor());
            y_hi = 10f64.powf(y_hi.log10().ceil().max(y_lo.log10() + 1.0));
        } else {
            // Ticks are chosen in the axis unit, so that a MiB axis
            // ticks at round MiB.
            let (lo, hi) = y_range(y_lo / y_unit.1, y_hi / y_unit.1);
            let hi = chart
                .y_max
                .map(|m| m / y_unit.1)
                .filter(|m| *m > lo)
                .unwrap_or(hi);
            (y_lo, y_hi) = (lo * y_unit.1, hi * y_unit.1);
        }
        let (top, bottom) = (MARGIN_TOP, plot_height - MARGIN_BOTTOM);
        let y_ticks: Vec<f64> = if chart.log_y {
            decades(y_lo, y_hi)
        } else {
            let (lo, hi) = (y_lo / y_unit.1, y_hi / y_unit.1);
            let target = (((bottom - top) / 32.0) as usize).clamp(2, 6);
            let ticks = if chart.integer_y && y_unit.1 == 1.0 {
                whole_ticks(lo, hi, target)
            } else {
                nice_ticks(lo, hi, target)
            };
            ticks.into_iter().map(|t| t * y_unit.1).collect()
        };
        let mut axes = Self {
            x_lo,
            x_hi,
            y_lo,
            y_hi,
            left: 0.0,
            right: width - MARGIN_RIGHT,
            top,
            bottom,
            y_unit,
            y_ticks,
            x_ticks: Vec::new(),
            log_x: chart.log_x,
            log_y: chart.log_y,
        };
        let widest = axes
            .y_ticks
            .iter()
            .map(|t| text_width(&axes.y_tick_label(*t), FONT))
            .fold(0.0, f64::max);
        axes.left = left_margin(widest);
        axes.x_ticks = if chart.log_x {
            decades(x_lo, x_hi)
        } else {
            // A label every 64 px at most, so that labels never touch.
            let target = (((axes.right - axes.left) / 64.0) as usize).clamp(2, 10);
            nice_ticks(x_lo, x_hi, target)
        };
        Some(axes)
    }

    fn tx(&self, x: f64) -> f64 {
        if self.log_x {
            x.log10()
        } else {
            x
        }
    }

    fn ty(&self, y: f64) -> f64 {
        if self.log_y {
            y.log10()
        } else {
            y
        }
    }

    fn sx(&self, x: f64) -> f64 {
        self.left
            + (self.tx(x) - self.tx(self.x_lo)) / (self.tx(self.x_hi) - self.tx(self.x_lo))
                * (self.right - self.left)
    }

    fn sy(&self, y: f64) -> f64 {
        let y = y.min(self.y_hi);
        self.bottom
            - (self.ty(y) - self.ty(self.y_lo)) / (self.ty(self.y_hi) - self.ty(self.y_lo))
                * (self.bottom - self.top)
    }

    fn y_tick_label(&self, t: f64) -> String {
        if self.log_y {
            format_decade(t)
        } else {
            format_value(t / self.y_unit.1)
        }
    }

    fn x_tick_label(&self, t: f64) -> String {
        if self.log_x {
            format_decade(t)
        } else {
            format_value(t)
        }
    }

    /// Grid lines, tick labels and the frame.
    fn svg(&self) -> String {
        let (left, right, top, bottom) = (self.left, self.right, self.top, self.bottom);
        let mut svg = String::new();
        for t in &self.y_ticks {
            let y = self.sy(*t);
            let _ = write!(
                svg,
                r##"<line x1="{left:.1}" y1="{y:.1}" x2="{right:.1}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                left - 6.0,
                y + 4.0,
                self.y_tick_label(*t)
            );
        }
        for t in &self.x_ticks {
            let x = self.sx(*t);
            let _ = write!(
                svg,
                r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{bottom}" stroke="#f0f0f0"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
                // Low enough that the first label clears the y axis's
                // lowest label in the corner.
                bottom + 19.0,
                self.x_tick_label(*t)
            );
        }
        let _ = write!(
            svg,
            r##"<rect x="{left:.1}" y="{top}" width="{:.1}" height="{}" fill="none" stroke="#333"/>"##,
            right - left,
            bottom - top
        );
        svg
    }

    /// The y axis title: the chart's label, with the byte unit on a byte
    /// axis.
    fn y_title(&self, chart: &Chart) -> String {
        if !chart.y_bytes {
            return chart.y_label.clone();
        }
        let unit = self.y_unit.0;
        if chart.y_label.contains("{bytes}") {
            chart.y_label.replace("{bytes}", unit)
        } else if chart.y_label.is_empty() {
            unit.to_string()
        } else {
            format!("{} ({unit})", chart.y_label)
        }
    }
}

/// One series' runs of consecutive usable points, in pixels: a run of
/// two or more is a line, a lone point (between gaps) a dot.
fn pixel_runs(chart: &Chart, series: &Series, axes: &Axes) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for &(x, y) in &series.points {
        if chart.usable((x, y)) {
            if let Some(run) = runs.last_mut() {
                run.push((axes.sx(x), axes.sy(y)));
            }
        } else if runs.last().is_some_and(|r| !r.is_empty()) {
            runs.push(Vec::new());
        }
    }
    runs.retain(|r| !r.is_empty());
    runs
}

/// A series as SVG: its path, its lone points, and its markers on a few
/// evenly spread points.
fn series_svg(chart: &Chart, series: &Series, style: &Style, axes: &Axes) -> String {
    let runs = pixel_runs(chart, series, axes);
    let mut svg = String::new();
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
    let colour = &style.colour;
    if !d.is_empty() {
        // Slightly translucent, so that a line drawn over another of the
        // same values still lets the one below show through.
        let _ = write!(
            svg,
            r#"<path d="{}" fill="none" stroke="{colour}" stroke-width="1.8" stroke-opacity="0.85" stroke-linejoin="round"{}/>"#,
            d.trim_end(),
            style.dash.attribute()
        );
    }
    for run in runs.iter().filter(|r| r.len() == 1) {
        let (x, y) = run[0];
        svg.push_str(&match style.marker {
            Marker::None => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{colour}"/>"#),
            marker => marker.svg(x, y, colour),
        });
    }
    if style.marker != Marker::None {
        let points: Vec<(f64, f64)> = runs
            .iter()
            .filter(|r| r.len() > 1)
            .flatten()
            .copied()
            .collect();
        let n = points.len();
        let shown = n.min(MARKERS_PER_SERIES);
        for k in 0..shown {
            let i = if shown > 1 {
                k * (n - 1) / (shown - 1)
            } else {
                0
            };
            svg.push_str(&style.marker.svg(points[i].0, points[i].1, colour));
        }
    }
    svg
}

/// The legend: per series its swatch (pattern and marker) and its name.
fn legend_svg(legend: &Legend, styles: &[Style], names: &[&str]) -> String {
    let mut svg = String::new();
    for (((x, y, text), style), name) in legend.entries.iter().zip(styles).zip(names) {
        let _ = write!(
            svg,
            r#"<g><title>{}</title><line x1="{x:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{}" stroke-width="3"{}/>{}<text x="{:.1}" y="{:.1}">{}</text></g>"#,
            escape(name),
            y - 4.0,
            x + SWATCH - 6.0,
            y - 4.0,
            style.colour,
            style.dash.attribute(),
            style
                .marker
                .svg(x + (SWATCH - 6.0) / 2.0, y - 4.0, &style.colour),
            x + SWATCH,
            y,
            escape(text)
        );
    }
    svg
}

/// The frame and note of a chart without a usable point.
fn empty_svg(width: f64, plot_height: f64) -> String {
    let (left, right) = (left_margin(0.0), width - MARGIN_RIGHT);
    let (top, bottom) = (MARGIN_TOP, plot_height - MARGIN_BOTTOM);
    format!(
        r##"<rect x="{left}" y="{top}" width="{}" height="{}" fill="none" stroke="#999"/><text x="{}" y="{}" text-anchor="middle" fill="#666">no data</text>"##,
        right - left,
        bottom - top,
        (left + right) / 2.0,
        (top + bottom) / 2.0
    )
}

/// Draws `chart` as a standalone SVG document `width` pixels wide: a plot
/// of `height` pixels with the legend rows below it. No two series look
/// alike (see the crate's styling rule), no legend entry overlaps
/// another, and labels are cut to their room.
pub fn render_svg(chart: &Chart, width: u32, height: u32) -> String {
    let width = f64::from(width.max(200));
    let plot_height = f64::from(height.max(150));
    let asked: Vec<(usize, Dash, Marker)> = chart
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.colour.unwrap_or(i), s.dash, s.marker))
        .collect();
    let styles = style::resolve(&asked);
    let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
    let legend = Legend::layout(&names, width, plot_height + 12.0);
    let total_height = plot_height + legend.height;
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total_height}" viewBox="0 0 {width} {total_height}" font-family="sans-serif" font-size="{FONT}"><rect width="100%" height="100%" fill="white"/>"#
    );
    svg.push_str(&title_svg(&chart.title, width));
    match Axes::fit(chart, width, plot_height) {
        None => svg.push_str(&empty_svg(width, plot_height)),
        Some(axes) => {
            svg.push_str(&axes.svg());
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                (axes.left + axes.right) / 2.0,
                axes.bottom + 37.0,
                escape(&fit(&chart.x_label, axes.right - axes.left, FONT))
            );
            svg.push_str(&y_title_svg(&axes.y_title(chart), axes.top, axes.bottom));
            for (series, style) in chart.series.iter().zip(&styles) {
                svg.push_str(&series_svg(chart, series, style, &axes));
            }
            svg.push_str(&legend_svg(&legend, &styles, &names));
        }
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
    let labels: Vec<String> = chart
        .bars
        .iter()
        .map(|b| shorten(&b.label, BAR_LABEL_CHARS))
        .collect();
    // A label slanted at 40° needs cos 40° of its length across and sin
    // 40° down, at 10 px type.
    let longest = labels
        .iter()
        .map(|l| text_width(l, 10.0))
        .fold(0.0, f64::max);
    let (label_width, label_height) = (longest * 0.77, longest * 0.65 + 8.0);
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let highest = chart
        .bars
        .iter()
        .map(|b| finite(b.value) + finite(b.error).max(0.0))
        .fold(0.0, f64::max);
    let (y_lo, y_hi) = y_range(0.0, highest);
    let ticks = nice_ticks(y_lo, y_hi, 6);
    let widest = ticks
        .iter()
        .map(|t| text_width(&format_value(*t), FONT))
        .fold(0.0, f64::max);
    let left = left_margin(widest);
    let slot_min = 44.0;
    // As wide as asked, wider when the bars need it.
    let width = (left + MARGIN_RIGHT + slot_min * chart.bars.len() as f64 + label_width)
        .max(f64::from(width.max(200)));
    let height = f64::from(height.max(150)) + label_height;
    let right = width - MARGIN_RIGHT - label_width;
    let (top, bottom) = (MARGIN_TOP, height - MARGIN_BOTTOM - label_height);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="{FONT}"><rect width="100%" height="100%" fill="white"/>"#
    );
    svg.push_str(&title_svg(&chart.title, width));
    svg.push_str(&y_title_svg(&chart.y_label, top, bottom));
    let sy = |y: f64| bottom - (y.clamp(y_lo, y_hi) - y_lo) / (y_hi - y_lo) * (bottom - top);
    for t in ticks {
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
    for (i, (bar, label)) in chart.bars.iter().zip(&labels).enumerate() {
        let colour = style::colour(bar.colour % style::PALETTE.len());
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
            r#"<text transform="translate({:.1} {:.1}) rotate(40)" font-size="10">{}</text>"#,
            centre - 3.0,
            bottom + 12.0,
            escape(label)
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
    use crate::style::PALETTE;

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
        let mut log = Chart::new("latency", "time (s)", "us").with_log_y();
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
    fn byte_axes_are_labelled_in_their_unit() {
        let mut rss = Chart::new("Client memory (RSS)", "time (s)", "RSS").with_bytes();
        rss.series.push(Series::new(
            "run",
            vec![(0.0, 3.0 * 1_048_576.0), (1.0, 9.0 * 1_048_576.0)],
        ));
        let svg = render_svg(&rss, 400, 200);
        assert!(svg.contains(">RSS (MiB)<"), "{svg}");
        let y_tick = |label: &str| svg.contains(&format!("text-anchor=\"end\">{label}<"));
        // Ticks at round MiB.
        assert!(y_tick("0") && y_tick("5"), "{svg}");
        let mut rate = Chart::new("I/O", "time (s)", "{bytes}/s").with_bytes();
        rate.series
            .push(Series::new("w", vec![(0.0, 2048.0), (1.0, 4096.0)]));
        assert!(render_svg(&rate, 400, 200).contains(">KiB/s<"));
    }

    #[test]
    fn legend_entries_never_overlap_and_long_names_are_cut() {
        let mut chart = Chart::new("t", "x", "y");
        for i in 0..12 {
            chart.series.push(Series::new(
                format!("run {i} with a long name · workloada · 16 threads"),
                vec![(0.0, i as f64), (1.0, i as f64 + 1.0)],
            ));
        }
        chart
            .series
            .push(Series::new("x".repeat(300), vec![(0.0, 1.0), (1.0, 2.0)]));
        // No two series alike, legend entries apart and inside the chart.
        let svg = crate::tests::check_rendered(&chart, 440);
        assert_eq!(crate::tests::parse(&svg).legend.len(), 13);
        assert!(svg.contains('…'), "the longest name is cut");
        assert!(
            svg.contains(&format!("<title>{}</title>", "x".repeat(300))),
            "in full on hover"
        );
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
        let wide: f64 = svg
            .split("width=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(wide == 460.0, "{svg}");
        let mut many = BarChart::new("t", "y");
        many.bars = (0..30)
            .map(|i| Bar::new(format!("bar {i}"), 1.0, 0.0, i))
            .collect();
        let svg = render_bars(&many, 460, 280);
        let wide: f64 = svg
            .split("width=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(wide > 30.0 * 44.0, "{svg}");
    }
}
