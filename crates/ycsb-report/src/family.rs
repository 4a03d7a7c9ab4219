//! A chart family: one chart drawn once per panel of runs, and what it
//! knows of each run as it draws it. The phase section (`phase.rs`) draws
//! every family; `cdf.rs` and the others define theirs.

use ycsb_results::PhaseReport;

use crate::runs::Run;
use crate::style::Dash;
use crate::svg::{Chart, Series};

/// What a chart family knows of one run when drawing it.
pub(crate) struct Look<'a> {
    /// The run's legend text.
    pub(crate) legend: &'a str,
    /// Its palette colour.
    pub(crate) colour: usize,
    /// Whether its panel has many runs (draw one line per run).
    pub(crate) crowded: bool,
}

impl Look<'_> {
    /// A series of the run, in its colour, `dash` telling its lines apart.
    pub(crate) fn series(&self, suffix: &str, points: Vec<(f64, f64)>, dash: Dash) -> Series {
        let name = if suffix.is_empty() {
            self.legend.to_string()
        } else {
            format!("{} {suffix}", self.legend)
        };
        Series::new(name, points).styled(self.colour, dash)
    }
}

/// A run's series for a chart, or why it has none.
pub(crate) type Draw<'a> = dyn Fn(&Run, &PhaseReport, &Look) -> Result<Vec<Series>, String> + 'a;

/// A chart drawn once per panel: its title and axes, and how a run's
/// series are drawn.
pub(crate) struct Family<'a> {
    pub(crate) chart: Chart,
    pub(crate) draw: Box<Draw<'a>>,
}
