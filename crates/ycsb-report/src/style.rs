//! How series look: a colour-blind-safe palette, line patterns and point
//! markers, and the rule that no two series of one chart look alike.

/// Colour-blind-safe palette (Okabe-Ito, black last).
pub(crate) const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

/// The colour of palette position `index`: the palette's, then (past
/// every combination of palette, pattern and marker) hues spread by the
/// golden angle, each distinct.
pub(crate) fn colour(index: usize) -> String {
    match PALETTE.get(index) {
        Some(c) => (*c).to_string(),
        None => {
            let hue = (index - PALETTE.len()) as f64 * 137.507_764 % 360.0;
            format!("hsl({hue:.1},65%,38%)")
        }
    }
}

/// A line pattern, to tell apart series of one colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
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

    /// The SVG attribute drawing the pattern (none for a solid line).
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Dash::Solid => "",
            Dash::Dashed => r#" stroke-dasharray="7 4""#,
            Dash::Dotted => r#" stroke-dasharray="2 3""#,
            Dash::DashDot => r#" stroke-dasharray="9 3 2 3""#,
            Dash::LongDashed => r#" stroke-dasharray="14 5""#,
        }
    }
}

/// A shape drawn on a series' points (a few of them) and in its legend
/// entry, to tell apart series of one colour and pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Marker {
    /// No marker.
    #[default]
    None,
    /// A filled circle.
    Circle,
    /// A filled square.
    Square,
    /// A filled triangle, point up.
    Triangle,
    /// A filled diamond.
    Diamond,
    /// A cross.
    Cross,
    /// An open circle.
    Ring,
}

impl Marker {
    /// The markers in the order series take them.
    pub const ALL: [Marker; 7] = [
        Marker::None,
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Diamond,
        Marker::Cross,
        Marker::Ring,
    ];

    /// The marker as SVG at `(x, y)` in `colour` (nothing for `None`).
    pub(crate) fn svg(self, x: f64, y: f64, colour: &str) -> String {
        let r = 3.5;
        match self {
            Marker::None => String::new(),
            Marker::Circle => {
                format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{colour}"/>"#)
            }
            Marker::Square => format!(
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{colour}"/>"#,
                x - r,
                y - r,
                2.0 * r,
                2.0 * r
            ),
            Marker::Triangle => format!(
                r#"<path d="M{x:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z" fill="{colour}"/>"#,
                y - r - 0.5,
                x + r + 0.5,
                y + r,
                x - r - 0.5,
                y + r
            ),
            Marker::Diamond => format!(
                r#"<path d="M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z" fill="{colour}"/>"#,
                y - r - 0.5,
                x + r + 0.5,
                y + r + 0.5,
                x - r - 0.5
            ),
            Marker::Cross => format!(
                r#"<path d="M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}" stroke="{colour}" stroke-width="2" fill="none"/>"#,
                x - r,
                y - r,
                x + r,
                y + r,
                x - r,
                y + r,
                x + r,
                y - r
            ),
            Marker::Ring => format!(
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="white" stroke="{colour}" stroke-width="1.6"/>"#
            ),
        }
    }
}

/// How one series is drawn: colour, pattern and marker together.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Style {
    pub(crate) colour: String,
    pub(crate) dash: Dash,
    pub(crate) marker: Marker,
}

/// The styles of series asking for `(colour, dash, marker)` each, in
/// order: as asked, except that a series that would look like an earlier
/// one of the same chart takes the next free marker, then the next free
/// pattern, then a colour of its own, so that no two look alike whatever
/// their number.
pub(crate) fn resolve(asked: &[(usize, Dash, Marker)]) -> Vec<Style> {
    let mut taken: Vec<Style> = Vec::with_capacity(asked.len());
    let mut extra_colour = PALETTE.len();
    for &(colour_index, dash, marker) in asked {
        let wanted = Style {
            colour: colour(colour_index % PALETTE.len()),
            dash,
            marker,
        };
        let style = if taken.contains(&wanted) {
            alternative(&wanted, &taken).unwrap_or_else(|| {
                // Every marker and pattern of this colour is taken.
                let style = Style {
                    colour: colour(extra_colour),
                    dash,
                    marker,
                };
                extra_colour += 1;
                style
            })
        } else {
            wanted
        };
        taken.push(style);
    }
    taken
}

/// The first style of `wanted`'s colour not in `taken`: its pattern with
/// another marker first, then the other patterns.
fn alternative(wanted: &Style, taken: &[Style]) -> Option<Style> {
    let start = Dash::ALL
        .iter()
        .position(|d| *d == wanted.dash)
        .unwrap_or(0);
    (0..Dash::ALL.len())
        .map(|k| Dash::ALL[(start + k) % Dash::ALL.len()])
        .flat_map(|dash| {
            Marker::ALL.iter().map(move |&marker| Style {
                colour: wanted.colour.clone(),
                dash,
                marker,
            })
        })
        .find(|s| !taken.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_series_look_alike_whatever_their_number() {
        for n in [1, 8, 9, 40, 300, 600] {
            let asked: Vec<_> = (0..n).map(|i| (i, Dash::Solid, Marker::None)).collect();
            let styles = resolve(&asked);
            for (i, a) in styles.iter().enumerate() {
                assert!(!styles[..i].contains(a), "{n} series: {a:?} twice");
            }
        }
        // Styles asked for apart are kept as asked.
        let styles = resolve(&[
            (0, Dash::Solid, Marker::None),
            (0, Dash::Dashed, Marker::None),
        ]);
        assert_eq!(styles[1].dash, Dash::Dashed);
        assert_eq!(styles[1].marker, Marker::None);
        // The ninth series of one pattern shares the first's colour, with
        // a marker.
        let asked: Vec<_> = (0..9).map(|i| (i, Dash::Solid, Marker::None)).collect();
        let ninth = &resolve(&asked)[8];
        assert_eq!(
            (ninth.colour.as_str(), ninth.marker),
            (PALETTE[0], Marker::Circle)
        );
    }
}
