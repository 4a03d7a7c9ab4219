//! The SVG page renderer: a [`Page`] as one SVG document, its blocks
//! stacked (charts nested at their place, small multiples side by side,
//! tables as text grids, folds by their summary line only).

use std::fmt::Write as _;

use crate::html::TABLE_COLUMNS;
use crate::model::{Block, Grid, Page, Table, Tone};
use crate::svg::{render_bars, render_svg};
use crate::text::{escape, fit, text_width, wrap};
use crate::{panel_size, HEIGHT, WIDTH};

const FONT: f64 = 12.0;
const LINE: f64 = 18.0;

/// A document being stacked: its body and the height used so far.
struct Stack {
    body: String,
    y: f64,
}

impl Stack {
    /// Lines of text at the left edge, wrapped to the page's width.
    fn text(&mut self, text: &str, style: &str, size: f64) {
        for line in wrap(text, f64::from(WIDTH) - 20.0, size) {
            let _ = write!(
                self.body,
                r#"<text x="10" y="{:.0}" font-size="{size}"{style}>{}</text>"#,
                self.y + size + 2.0,
                escape(&line)
            );
            self.y += size + 6.0;
        }
    }

    /// An SVG document nested at `(x, y)`; returns its height.
    fn nest(&mut self, svg: &str, x: f64, y: f64) -> f64 {
        let height = svg_height(svg).unwrap_or(f64::from(HEIGHT));
        // A nested <svg> keeps each chart's own coordinates.
        self.body
            .push_str(&svg.replacen("<svg ", &format!("<svg x=\"{x:.0}\" y=\"{y:.0}\" "), 1));
        height
    }

    fn block(&mut self, block: &Block) {
        match block {
            Block::Heading(text) => {
                self.y += 6.0;
                self.text(text, r#" font-weight="bold""#, 14.0);
            }
            Block::Note(note) => {
                let style = match note.tone {
                    Tone::Plain => r##" fill="#555""##,
                    Tone::Warning => r##" fill="#a33" font-weight="bold""##,
                };
                self.text(&note.text, style, FONT);
            }
            Block::Table(table) => {
                for part in table.fitted(TABLE_COLUMNS) {
                    self.table(&part);
                }
            }
            Block::Chart(figure) => {
                let y = self.y;
                self.y += self.nest(&render_svg(&figure.chart, WIDTH, HEIGHT), 0.0, y) + 4.0;
                if let Some(remark) = &figure.remark {
                    self.text(remark, r##" fill="#555""##, FONT);
                }
                self.y += 8.0;
            }
            Block::Bars(bars) => {
                let y = self.y;
                self.y += self.nest(&render_bars(bars, WIDTH, HEIGHT), 0.0, y) + 12.0;
            }
            Block::Grid(grid) => self.grid(grid),
            Block::Missing { title, reason } => {
                self.text(
                    &format!("{title}: no data: {reason}"),
                    r##" fill="#555""##,
                    FONT,
                );
                self.y += 4.0;
            }
            Block::Fold(fold) => {
                self.text(&format!("▸ {}", fold.summary), r##" fill="#555""##, FONT);
            }
            Block::Text(text) => {
                for line in text.lines().take(200) {
                    self.text(line, r#" font-family="monospace""#, 11.0);
                }
            }
        }
    }

    /// Panels side by side, rows as tall as their tallest panel.
    fn grid(&mut self, grid: &Grid) {
        let (width, height) = panel_size(grid.columns);
        for row in grid.panels.chunks(grid.columns.max(1)) {
            let mut tallest: f64 = 0.0;
            for (i, panel) in row.iter().enumerate() {
                let x = i as f64 * (f64::from(width) + 12.0);
                let used = match panel {
                    Block::Chart(figure) => {
                        self.nest(&render_svg(&figure.chart, width, height), x, self.y)
                    }
                    Block::Bars(bars) => self.nest(&render_bars(bars, width, height), x, self.y),
                    Block::Missing { title, reason } => {
                        let lines = wrap(
                            &format!("{title}: no data: {reason}"),
                            f64::from(width) - 10.0,
                            FONT,
                        );
                        for (k, line) in lines.iter().enumerate() {
                            let _ = write!(
                                self.body,
                                r##"<text x="{:.0}" y="{:.0}" fill="#555">{}</text>"##,
                                x + 10.0,
                                self.y + 14.0 + k as f64 * LINE,
                                escape(line)
                            );
                        }
                        lines.len() as f64 * LINE
                    }
                    _ => 0.0,
                };
                tallest = tallest.max(used);
            }
            self.y += tallest + 12.0;
        }
    }

    /// A table as a grid of text, its columns as wide as their widest
    /// cell's first line (cut to share the page's width).
    fn table(&mut self, table: &Table) {
        if let Some(caption) = &table.caption {
            self.text(caption, r#" font-weight="bold""#, FONT);
        }
        let columns = table.header.len().max(1);
        let share = (f64::from(WIDTH) - 20.0) / columns as f64;
        let first_line = |cell: &str| cell.lines().next().unwrap_or("").to_string();
        let widths: Vec<f64> = (0..columns)
            .map(|c| {
                std::iter::once(&table.header)
                    .chain(&table.rows)
                    .filter_map(|r| r.get(c))
                    .map(|cell| text_width(&first_line(cell), FONT) + 12.0)
                    .fold(0.0, f64::max)
            })
            .collect();
        let total: f64 = widths.iter().sum();
        let scale = if total > f64::from(WIDTH) - 20.0 {
            (f64::from(WIDTH) - 20.0) / total
        } else {
            1.0
        };
        for (r, row) in std::iter::once(&table.header)
            .chain(&table.rows)
            .enumerate()
        {
            let mut x = 10.0;
            for (c, cell) in row.iter().enumerate() {
                let width = widths.get(c).map_or(share, |w| w * scale);
                let bold = r == 0 || c < table.key_columns;
                let _ = write!(
                    self.body,
                    r#"<text x="{x:.0}" y="{:.0}"{}>{}</text>"#,
                    self.y + 14.0,
                    if bold { r#" font-weight="bold""# } else { "" },
                    escape(&fit(&first_line(cell), width - 8.0, FONT))
                );
                x += width;
            }
            self.y += LINE;
        }
        self.y += 10.0;
    }
}

/// `page` as one SVG document: its title, then every section's heading
/// and blocks stacked, each chart nested as its own SVG.
pub fn render_svg_page(page: &Page) -> String {
    let mut stack = Stack {
        body: String::new(),
        y: 8.0,
    };
    stack.text(&page.title, r#" font-weight="bold""#, 18.0);
    for section in &page.sections {
        stack.y += 10.0;
        stack.text(&section.heading, r#" font-weight="bold""#, 16.0);
        for block in &section.blocks {
            stack.block(block);
        }
    }
    let height = stack.y + 10.0;
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0}" viewBox="0 0 {WIDTH} {height:.0}" font-family="sans-serif" font-size="{FONT}"><rect width="100%" height="100%" fill="white"/>{}</svg>"#,
        stack.body
    )
}

fn svg_height(svg: &str) -> Option<f64> {
    let start = svg.find(" height=\"")? + " height=\"".len();
    let end = start + svg[start..].find('"')?;
    svg[start..end].parse().ok()
}
