//! Hand-written SVG charts: bars with error bars and line charts (linear or
//! logarithmic x). Plain strings, no scripts, no fonts to fetch.

use std::fmt::Write as _;

/// Colours that stay apart for the colour-blind (Okabe-Ito), in the order
/// `ycsb-report` uses, so a db has one colour in every chart.
pub const PALETTE: &[&str] = &[
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

/// One line of a line chart.
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (a second measure of the same thing).
    pub dashed: bool,
    /// Index into [`PALETTE`].
    pub color: usize,
}

const LINE_W: f64 = 460.0;
const LINE_H: f64 = 280.0;
const L: f64 = 62.0;
const R: f64 = 12.0;
const T: f64 = 28.0;
const LINE_B: f64 = 46.0;

/// Size of one chart: bar charts grow with their bars and leave room
/// below for slanted labels.
#[derive(Clone, Copy)]
struct Geo {
    w: f64,
    h: f64,
    b: f64,
}

const LINE_GEO: Geo = Geo {
    w: LINE_W,
    h: LINE_H,
    b: LINE_B,
};

/// Escapes text for SVG and HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Round tick values covering [lo, hi].
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

fn fmt_tick(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", trim(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

fn frame(out: &mut String, g: Geo, title: &str, x_label: &str, y_label: &str) {
    #[allow(non_snake_case)]
    let Geo { w: W, h: H, b: B } = g;
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11"><rect width="{W}" height="{H}" fill="white"/><text x="{}" y="16" text-anchor="middle" font-size="13" font-weight="bold">{}</text><text x="{}" y="{}" text-anchor="middle">{}</text><text transform="translate(13,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        W / 2.0,
        esc(title),
        L + (W - L - R) / 2.0,
        H - 6.0,
        esc(x_label),
        T + (H - T - B) / 2.0,
        esc(y_label)
    );
}

fn y_axis(out: &mut String, g: Geo, lo: f64, hi: f64) -> impl Fn(f64) -> f64 {
    #[allow(non_snake_case)]
    let Geo { w: W, h: H, b: B } = g;
    let y = move |v: f64| T + (H - T - B) * (1.0 - (v - lo) / (hi - lo).max(1e-12));
    for t in ticks(lo, hi) {
        let py = y(t);
        let _ = write!(
            out,
            r##"<line x1="{L}" x2="{}" y1="{py:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - R,
            L - 4.0,
            py + 4.0,
            fmt_tick(t)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{L}" x2="{L}" y1="{T}" y2="{}" stroke="#333"/><line x1="{L}" x2="{}" y1="{}" y2="{}" stroke="#333"/>"##,
        H - B,
        W - R,
        H - B,
        H - B
    );
    y
}

/// Bars with ± error bars: (label, mean, standard deviation, colour).
pub fn bars(title: &str, y_label: &str, data: &[(String, f64, f64, usize)]) -> String {
    let longest = data
        .iter()
        .map(|d| d.0.chars().count().min(40))
        .max()
        .unwrap_or(0) as f64;
    let g = Geo {
        w: (L + R + 44.0 * data.len() as f64).max(LINE_W) + longest * 4.5,
        h: LINE_H + longest * 3.6,
        b: LINE_B + longest * 3.6,
    };
    #[allow(non_snake_case)]
    let Geo { w: W, h: H, b: B } = g;
    let mut out = String::new();
    frame(&mut out, g, title, "", y_label);
    let hi = data.iter().map(|d| d.1 + d.2).fold(0.0, f64::max).max(1e-9) * 1.08;
    let y = y_axis(&mut out, g, 0.0, hi);
    let n = data.len().max(1) as f64;
    let slot = (W - L - R - longest * 4.5) / n;
    for (i, (label, mean, sd, color)) in data.iter().enumerate() {
        let x0 = L + slot * i as f64 + slot * 0.15;
        let bw = slot * 0.7;
        let color = PALETTE[color % PALETTE.len()];
        let _ = write!(
            out,
            r#"<rect x="{x0:.1}" y="{:.1}" width="{bw:.1}" height="{:.1}" fill="{color}"><title>{}: {mean:.1} ± {sd:.1}</title></rect>"#,
            y(*mean),
            (y(0.0) - y(*mean)).max(0.0),
            esc(label)
        );
        if *sd > 0.0 {
            let cx = x0 + bw / 2.0;
            let (a, b) = (y(mean + sd), y((mean - sd).max(0.0)));
            let _ = write!(
                out,
                r##"<path d="M{cx:.1} {a:.1}V{b:.1}M{:.1} {a:.1}h8M{:.1} {b:.1}h8" stroke="#222" stroke-width="1.5" fill="none"/>"##,
                cx - 4.0,
                cx - 4.0
            );
        }
        // Labels run down and right at an angle so long cell names stay readable.
        let lx = x0 + bw / 2.0;
        let _ = write!(
            out,
            r#"<text transform="translate({lx:.1},{:.1}) rotate(40)" font-size="10">{}</text>"#,
            H - B + 12.0,
            esc(&short(label, 40))
        );
    }
    out.push_str("</svg>");
    out
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

/// A line chart; `log_x` puts x on a base-10 logarithmic scale (points at
/// x ≤ 0 are dropped there).
pub fn lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_x: bool,
    y_max: Option<f64>,
) -> String {
    let g = LINE_GEO;
    #[allow(non_snake_case)]
    let Geo { w: W, h: H, b: B } = g;
    let mut out = String::new();
    frame(&mut out, g, title, x_label, y_label);
    let fx = |x: f64| if log_x { x.log10() } else { x };
    let pts = || {
        series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|p| p.0.is_finite() && p.1.is_finite() && (!log_x || p.0 > 0.0))
    };
    let (mut x0, mut x1) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
        (a.min(fx(p.0)), b.max(fx(p.0)))
    });
    if !x0.is_finite() {
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">no data</text></svg>"#,
            W / 2.0,
            H / 2.0
        );
        return out;
    }
    if log_x {
        x0 = x0.floor();
        x1 = x1.ceil().max(x0 + 1.0);
    } else {
        // Time axes start at the phase's start.
        x0 = x0.min(0.0);
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
    }
    // All zeros still get a readable 0..1 axis.
    let hi = y_max.unwrap_or_else(|| pts().map(|p| p.1).fold(0.0, f64::max) * 1.08);
    let hi = if hi > 0.0 { hi } else { 1.0 };
    let y = y_axis(&mut out, g, 0.0, hi);
    let x = |v: f64| L + (W - L - R) * (fx(v) - x0) / (x1 - x0);
    if log_x {
        let mut d = x0;
        while d <= x1 + 1e-9 {
            let px = L + (W - L - R) * (d - x0) / (x1 - x0);
            let _ = write!(
                out,
                r##"<line x1="{px:.1}" x2="{px:.1}" y1="{T}" y2="{}" stroke="#eee"/><text x="{px:.1}" y="{}" text-anchor="middle">{}</text>"##,
                H - B,
                H - B + 14.0,
                fmt_tick(10f64.powf(d))
            );
            d += 1.0;
        }
    } else {
        for t in ticks(x0, x1) {
            let px = L + (W - L - R) * (t - x0) / (x1 - x0);
            let _ = write!(
                out,
                r#"<text x="{px:.1}" y="{}" text-anchor="middle">{}</text>"#,
                H - B + 14.0,
                fmt_tick(t)
            );
        }
    }
    for (i, s) in series.iter().enumerate() {
        let color = PALETTE[s.color % PALETTE.len()];
        let d: Vec<String> = s
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite() && (!log_x || p.0 > 0.0))
            .enumerate()
            .map(|(j, p)| {
                format!(
                    "{}{:.1} {:.1}",
                    if j == 0 { 'M' } else { 'L' },
                    x(p.0),
                    y(p.1.min(hi))
                )
            })
            .collect();
        if d.is_empty() {
            continue;
        }
        let dash = if s.dashed {
            r#" stroke-dasharray="5 3""#
        } else {
            ""
        };
        let _ = write!(
            out,
            r#"<path d="{}" stroke="{color}" stroke-width="1.8" fill="none"{dash}><title>{}</title></path>"#,
            d.join(""),
            esc(&s.name)
        );
        // Few points (short phases) would vanish as a line: mark them.
        if d.len() <= 12 {
            for p in s
                .points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite() && (!log_x || p.0 > 0.0))
            {
                let _ = write!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{color}"/>"#,
                    x(p.0),
                    y(p.1.min(hi))
                );
            }
        }
        // Legend, top left inside the plot, one line per series.
        let ly = T + 10.0 + 13.0 * i as f64;
        let _ = write!(
            out,
            r#"<line x1="{}" x2="{}" y1="{ly:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"{dash}/><text x="{}" y="{:.1}" font-size="10">{}</text>"#,
            L + 6.0,
            L + 22.0,
            L + 26.0,
            ly + 3.5,
            esc(&short(&s.name, 40))
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(0.0, 37_000.0);
        assert_eq!(t.first(), Some(&0.0));
        assert!(
            t.windows(2).all(|w| (w[1] - w[0] - 10_000.0).abs() < 1e-6),
            "{t:?}"
        );
        assert_eq!(fmt_tick(25_000.0), "25k");
        assert_eq!(fmt_tick(0.5), "0.5");
    }

    #[test]
    fn charts_are_well_formed_and_escaped() {
        let b = bars(
            "t<1>",
            "ops/s",
            &[("a&b".into(), 10.0, 1.0, 0), ("c".into(), 5.0, 0.0, 1)],
        );
        assert!(b.starts_with("<svg") && b.ends_with("</svg>"));
        assert!(b.contains("a&amp;b") && b.contains("t&lt;1&gt;"));
        assert_eq!(b.matches("<rect").count(), 3, "background and two bars");
        let s = Series {
            name: "x".into(),
            points: vec![(0.5, 10.0), (50.0, 99.0)],
            dashed: false,
            color: 0,
        };
        let l = lines("cdf", "us", "%", &[s], true, Some(100.0));
        assert!(l.contains("<path d=\"M") && l.ends_with("</svg>"));
        assert!(lines("empty", "", "", &[], false, None).contains("no data"));
    }
}
