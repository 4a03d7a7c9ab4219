//! A report as data: a page of sections, each a list of blocks (notes,
//! tables, charts, small multiples, folds). Producers (`ycsb report`, the
//! live view, experiment matrices) build a [`Page`]; [`crate::render_html`]
//! and [`crate::render_svg_page`] render any page the same way.

use crate::svg::{BarChart, Chart};

/// A whole report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    /// The page's title (its `<title>` and top heading).
    pub title: String,
    /// The sections, in order.
    pub sections: Vec<Section>,
    /// Set on a page that redraws itself while a run goes (the live view).
    pub live: Option<LiveRefresh>,
}

impl Page {
    /// A page titled `title` with no section yet.
    pub fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            sections: Vec::new(),
            live: None,
        }
    }

    /// Every line chart on the page, in order (those of small multiples
    /// and folds included).
    pub fn charts(&self) -> Vec<&Chart> {
        let mut out = Vec::new();
        for section in &self.sections {
            collect_charts(&section.blocks, &mut out);
        }
        out
    }

    /// Every block on the page, depth first.
    pub fn blocks(&self) -> Vec<&Block> {
        let mut out = Vec::new();
        for section in &self.sections {
            collect_blocks(&section.blocks, &mut out);
        }
        out
    }
}

fn collect_charts<'a>(blocks: &'a [Block], out: &mut Vec<&'a Chart>) {
    for block in blocks {
        match block {
            Block::Chart(figure) => out.push(&figure.chart),
            Block::Grid(grid) => collect_charts(&grid.panels, out),
            Block::Fold(fold) => collect_charts(&fold.blocks, out),
            _ => {}
        }
    }
}

fn collect_blocks<'a>(blocks: &'a [Block], out: &mut Vec<&'a Block>) {
    for block in blocks {
        out.push(block);
        match block {
            Block::Grid(grid) => collect_blocks(&grid.panels, out),
            Block::Fold(fold) => collect_blocks(&fold.blocks, out),
            _ => {}
        }
    }
}

/// A titled part of a page (a phase, the summary, the configurations).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Section {
    /// The anchor to link to (`run-phase`).
    pub id: String,
    /// The heading.
    pub heading: String,
    /// What it shows, in order.
    pub blocks: Vec<Block>,
}

impl Section {
    /// A section headed `heading`, its anchor made of the heading.
    pub fn new(heading: impl Into<String>) -> Self {
        let heading = heading.into();
        Self {
            id: anchor(&heading),
            heading,
            blocks: Vec::new(),
        }
    }
}

/// An anchor made of `text`: lower-case letters, digits and dashes.
pub fn anchor(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// One thing a section shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A sub-heading.
    Heading(String),
    /// A line of text.
    Note(Note),
    /// A table.
    Table(Table),
    /// A line chart, the page's full width.
    Chart(Figure),
    /// A bar chart.
    Bars(BarChart),
    /// Small multiples: charts side by side, each with its own axes.
    Grid(Grid),
    /// A chart that has no data, and the true reason.
    Missing {
        /// The chart's title.
        title: String,
        /// Why there is no data (`the phase lasted 0.4 s, shorter than
        /// one interval of ...`).
        reason: String,
    },
    /// Blocks shown on demand (long text such as an engine's statistics).
    Fold(Fold),
    /// Preformatted text (a command line, an engine's statistics).
    Text(String),
}

/// A line of text and how it reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The text.
    pub text: String,
    /// Plain or a warning.
    pub tone: Tone,
}

impl Note {
    /// A plain note.
    pub fn plain(text: impl Into<String>) -> Block {
        Block::Note(Self {
            text: text.into(),
            tone: Tone::Plain,
        })
    }

    /// A warning.
    pub fn warning(text: impl Into<String>) -> Block {
        Block::Note(Self {
            text: text.into(),
            tone: Tone::Warning,
        })
    }
}

/// How a note reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Information.
    Plain,
    /// Something that changes how the figures read.
    Warning,
}

/// A line chart and what it leaves out.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The chart.
    pub chart: Chart,
    /// Runs (or series) left out of it, and why.
    pub remark: Option<String>,
}

impl Figure {
    /// A chart without remark, as a block.
    pub fn block(chart: Chart) -> Block {
        Block::Chart(Self {
            chart,
            remark: None,
        })
    }
}

/// Small multiples: panels (charts or missing-data lines) laid out
/// `columns` to a row.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// Panels per row.
    pub columns: usize,
    /// The panels.
    pub panels: Vec<Block>,
}

/// Blocks behind a summary line, shown when opened.
#[derive(Clone, Debug, PartialEq)]
pub struct Fold {
    /// The line that opens it.
    pub summary: String,
    /// What it holds.
    pub blocks: Vec<Block>,
}

/// A table: a header row and rows of cells. The first `key_columns`
/// columns name a row (repeated when the table is split); rows may have
/// a header cell of their own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// A caption above it.
    pub caption: Option<String>,
    /// The header row.
    pub header: Vec<String>,
    /// The rows, each as long as the header.
    pub rows: Vec<Vec<String>>,
    /// Leading columns that name a row (headers of their row).
    pub key_columns: usize,
}

impl Table {
    /// A table of `header` and `rows` whose first column names its rows.
    pub fn new(header: Vec<String>, rows: Vec<Vec<String>>) -> Self {
        Self {
            caption: None,
            header,
            rows,
            key_columns: 1,
        }
    }

    /// The table laid out for a page that holds `max_columns` columns
    /// besides the key columns: as it is when it fits; turned so that
    /// its rows become columns when that fits (with one key column, the
    /// header's first cell naming the new key column); otherwise cut
    /// into tables of at most `max_columns` of its columns each (as
    /// evenly as possible), each repeating the key columns.
    pub fn fitted(&self, max_columns: usize) -> Vec<Table> {
        let max_columns = max_columns.max(1);
        let data_columns = self.header.len().saturating_sub(self.key_columns);
        if data_columns <= max_columns {
            return vec![self.clone()];
        }
        if self.key_columns == 1 && self.rows.len() <= max_columns {
            return vec![self.transposed()];
        }
        let parts = data_columns.div_ceil(max_columns);
        let per_part = data_columns.div_ceil(parts);
        (0..parts)
            .map(|part| {
                let columns: Vec<usize> = (0..self.key_columns)
                    .chain(
                        (self.key_columns + part * per_part)
                            ..(self.key_columns + ((part + 1) * per_part).min(data_columns)),
                    )
                    .collect();
                let pick = |row: &[String]| {
                    columns
                        .iter()
                        .map(|&c| row.get(c).cloned().unwrap_or_default())
                        .collect()
                };
                Table {
                    caption: self
                        .caption
                        .as_ref()
                        .map(|c| format!("{c} ({} of {parts})", part + 1)),
                    header: pick(&self.header),
                    rows: self.rows.iter().map(|r| pick(r)).collect(),
                    key_columns: self.key_columns,
                }
            })
            .collect()
    }

    /// Rows become columns and columns rows (a table of one key column).
    pub fn transposed(&self) -> Table {
        let mut header = vec![self.header.first().cloned().unwrap_or_default()];
        header.extend(
            self.rows
                .iter()
                .map(|r| r.first().cloned().unwrap_or_default()),
        );
        let rows = (1..self.header.len())
            .map(|c| {
                let mut row = vec![self.header[c].clone()];
                row.extend(
                    self.rows
                        .iter()
                        .map(|r| r.get(c).cloned().unwrap_or_default()),
                );
                row
            })
            .collect();
        Table {
            caption: self.caption.clone(),
            header,
            rows,
            key_columns: 1,
        }
    }
}

/// How a live page keeps itself current: it fetches its sections again
/// from `fragment` every `poll_ms` (sending the version it shows), and
/// turns into the page at `final_page` once told the run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveRefresh {
    /// The path answering with the sections' HTML (`/charts`), 204 when
    /// `have` is current, with `X-Live-Version` and `X-Live-Finished`.
    pub fragment: String,
    /// The path of the final report (`/report`).
    pub final_page: String,
    /// How often to poll, in milliseconds.
    pub poll_ms: u64,
    /// The version the page shows.
    pub version: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(columns: usize, rows: usize) -> Table {
        let header = (0..=columns).map(|c| format!("h{c}")).collect();
        let rows = (0..rows)
            .map(|r| (0..=columns).map(|c| format!("r{r}c{c}")).collect())
            .collect();
        Table::new(header, rows)
    }

    #[test]
    fn wide_tables_turn_or_split() {
        // Fits: unchanged.
        assert_eq!(table(4, 20).fitted(6), vec![table(4, 20)]);
        // 14 columns of 3 rows: turned, 3 columns of 14 rows.
        let turned = table(14, 3).fitted(6);
        assert_eq!(turned.len(), 1);
        assert_eq!(turned[0].header, ["h0", "r0c0", "r1c0", "r2c0"]);
        assert_eq!(turned[0].rows.len(), 14);
        assert_eq!(turned[0].rows[1], ["h2", "r0c2", "r1c2", "r2c2"]);
        // 14 columns of 20 rows: three tables of 5, 5 and 4 columns, each
        // with the key column.
        let split = table(14, 20).fitted(6);
        let widths: Vec<usize> = split.iter().map(|t| t.header.len() - 1).collect();
        assert_eq!(widths, [5, 5, 4]);
        assert!(split
            .iter()
            .all(|t| t.header[0] == "h0" && t.rows[0][0] == "r0c0"));
        assert_eq!(split[2].header.last().map(String::as_str), Some("h14"));
        // 30 columns: five tables of six.
        assert_eq!(table(30, 20).fitted(6).len(), 5);
    }

    #[test]
    fn anchors_are_plain() {
        assert_eq!(anchor("run phase"), "run-phase");
        assert_eq!(
            anchor("Engine gauges: rocksdb (load)"),
            "engine-gauges-rocksdb-load"
        );
    }
}
