//! The one HTML renderer: a [`Page`] as a self-contained document (inline
//! SVG, inline style, nothing fetched), or its sections alone (what a live
//! page fetches again).

use std::fmt::Write as _;

use crate::model::{Block, Figure, Fold, Grid, LiveRefresh, Page, Section, Table, Tone};
use crate::svg::{render_bars, render_svg};
use crate::text::escape;
use crate::{panel_size, HEIGHT, WIDTH};

/// Table columns (besides the key columns) a page holds before a table
/// is turned or split.
pub const TABLE_COLUMNS: usize = 6;

/// The page's style: one column as wide as a full chart.
fn style() -> String {
    format!(
        "body{{font-family:sans-serif;margin:24px;color:#222;max-width:{WIDTH}px}}\
         h1{{font-size:24px;overflow-wrap:anywhere}}h2{{margin-top:28px}}h3{{margin:18px 0 6px}}\
         section{{margin-bottom:32px}}figure{{margin:0 0 16px 0}}\
         .note{{color:#555}}.warning{{color:#a33;font-weight:bold}}\
         .remark{{color:#555;font-size:90%;margin:0 0 4px 8px}}\
         .missing{{color:#555;border-left:3px solid #bbb;padding-left:8px;overflow-wrap:anywhere}}\
         .grid{{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:16px}}.grid figure{{margin:0}}\
         .grid .missing{{margin:0}}.scroll{{overflow-x:auto}}\
         table{{border-collapse:collapse;font-size:90%;margin:8px 0;max-width:100%}}\
         caption{{text-align:left;font-weight:bold;padding:4px 0}}\
         th,td{{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;white-space:pre-line;overflow-wrap:anywhere}}\
         thead th{{background:#f3f3f3}}td.n{{text-align:right;font-variant-numeric:tabular-nums}}\
         details{{margin:8px 0}}pre{{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:6px;font-size:85%}}\
         #live-status{{font-size:90%;color:#555}}"
    )
}

/// `page` as one self-contained HTML document: no external file, every
/// chart an inline SVG; a script only on a live page.
pub fn render_html(page: &Page) -> String {
    render_html_with(page, &render_sections(&page.sections))
}

/// [`render_html`] of `page` whose sections are already rendered as
/// `sections` (by [`render_sections`]): a live page renders them once per
/// version, for the fragment its script fetches and for the page.
pub fn render_html_with(page: &Page, sections: &str) -> String {
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title>{1}<style>{2}</style></head><body><h1>{0}</h1>\n",
        escape(&page.title),
        if page.live.is_some() {
            // No favicon request to the live view's server.
            "<link rel=\"icon\" href=\"data:,\">"
        } else {
            ""
        },
        style()
    );
    match &page.live {
        None => html.push_str(sections),
        Some(live) => {
            let _ = write!(
                html,
                "<p id=\"live-status\" data-updates=\"0\" data-version=\"{}\">live: redrawn every {} s</p>\n<div id=\"charts\">{sections}</div>\n{}",
                live.version,
                live.poll_ms as f64 / 1000.0,
                live_script(live)
            );
        }
    }
    html.push_str("</body></html>\n");
    html
}

/// The sections alone, as an HTML fragment.
pub fn render_sections(sections: &[Section]) -> String {
    let mut html = String::new();
    for section in sections {
        let _ = writeln!(
            html,
            "<section id=\"{}\"><h2>{}</h2>",
            escape(&section.id),
            escape(&section.heading)
        );
        for block in &section.blocks {
            block_html(&mut html, block, WIDTH, HEIGHT);
        }
        html.push_str("</section>\n");
    }
    html
}

/// One block, its charts `width` x `height` pixels.
fn block_html(html: &mut String, block: &Block, width: u32, height: u32) {
    match block {
        Block::Heading(text) => {
            let _ = writeln!(html, "<h3>{}</h3>", escape(text));
        }
        Block::Note(note) => {
            let class = match note.tone {
                Tone::Plain => "note",
                Tone::Warning => "warning",
            };
            let _ = writeln!(html, "<p class=\"{class}\">{}</p>", escape(&note.text));
        }
        Block::Table(table) => {
            for part in table.fitted(TABLE_COLUMNS) {
                table_html(html, &part);
            }
        }
        Block::Chart(figure) => figure_html(html, figure, width, height),
        Block::Bars(bars) => {
            let _ = writeln!(
                html,
                "<figure class=\"scroll\">{}</figure>",
                render_bars(bars, width.min(WIDTH), height)
            );
        }
        Block::Grid(grid) => grid_html(html, grid),
        Block::Missing { title, reason } => {
            let _ = writeln!(
                html,
                "<p class=\"missing\"><b>{}</b>: no data: {}</p>",
                escape(title),
                escape(reason)
            );
        }
        Block::Fold(fold) => fold_html(html, fold),
        Block::Text(text) => {
            let _ = writeln!(html, "<pre>{}</pre>", escape(text));
        }
    }
}

fn figure_html(html: &mut String, figure: &Figure, width: u32, height: u32) {
    html.push_str("<figure>");
    html.push_str(&render_svg(&figure.chart, width, height));
    if let Some(remark) = &figure.remark {
        let _ = write!(html, "<p class=\"remark\">{}</p>", escape(remark));
    }
    html.push_str("</figure>\n");
}

fn grid_html(html: &mut String, grid: &Grid) {
    let (width, height) = panel_size(grid.columns);
    html.push_str("<div class=\"grid\">\n");
    for panel in &grid.panels {
        match panel {
            Block::Missing { .. } | Block::Note(_) => {
                let _ = write!(html, "<div style=\"width:{width}px\">");
                block_html(html, panel, width, height);
                html.push_str("</div>\n");
            }
            other => block_html(html, other, width, height),
        }
    }
    html.push_str("</div>\n");
}

fn fold_html(html: &mut String, fold: &Fold) {
    let _ = write!(
        html,
        "<details><summary>{}</summary>",
        escape(&fold.summary)
    );
    for block in &fold.blocks {
        block_html(html, block, WIDTH, HEIGHT);
    }
    html.push_str("</details>\n");
}

/// Whether a cell holds numbers only (`12`, `10 / 95 / 12000`), set right.
fn numeric(cell: &str) -> bool {
    !cell.is_empty()
        && cell
            .split([' ', '/'])
            .all(|w| w.is_empty() || w.parse::<f64>().is_ok())
}

fn table_html(html: &mut String, table: &Table) {
    html.push_str("<table class=\"summary\">");
    if let Some(caption) = &table.caption {
        let _ = write!(html, "<caption>{}</caption>", escape(caption));
    }
    html.push_str("<thead><tr>");
    for cell in &table.header {
        let _ = write!(html, "<th>{}</th>", escape(cell));
    }
    html.push_str("</tr></thead><tbody>\n");
    for row in &table.rows {
        html.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            if i < table.key_columns {
                let _ = write!(html, "<th>{}</th>", escape(cell));
            } else {
                let _ = write!(
                    html,
                    "<td{}>{}</td>",
                    if numeric(cell) { " class=\"n\"" } else { "" },
                    escape(cell)
                );
            }
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>\n");
}

/// The script of a live page: it fetches the sections again every poll
/// (at most a quarter of the time the server took to draw them, so that
/// drawing stays under a fifth of a core) and turns into the final page.
fn live_script(live: &LiveRefresh) -> String {
    format!(
        r#"<script>
(function () {{
  var every = {poll_ms};
  var version = {version};
  var updates = 0;
  var status = document.getElementById('live-status');
  var charts = document.getElementById('charts');
  function poll() {{
    var asked = Date.now();
    fetch('{fragment}?have=' + version, {{ cache: 'no-store' }}).then(function (r) {{
      if (r.headers.get('X-Live-Finished') === '1') {{
        status.textContent = 'the run ended: loading the final report';
        location.replace('{final_page}');
        return false;
      }}
      if (r.status === 204) {{ return null; }}
      if (!r.ok) {{ throw new Error('HTTP ' + r.status); }}
      version = Number(r.headers.get('X-Live-Version'));
      return r.text();
    }}).then(function (html) {{
      if (html === false) {{ return; }}
      if (html !== null) {{
        charts.innerHTML = html;
        updates += 1;
        status.dataset.updates = String(updates);
        status.dataset.version = String(version);
        status.textContent = 'live: redrawn ' + updates + ' times, last at ' + new Date().toLocaleTimeString();
      }}
      setTimeout(poll, Math.max(every, 4 * (Date.now() - asked)));
    }}, function (e) {{
      status.textContent = 'the benchmark is no longer reachable (' + e.message + '); the final report is in its export';
    }});
  }}
  setTimeout(poll, every);
}})();
</script>
"#,
        poll_ms = live.poll_ms,
        version = live.version,
        fragment = live.fragment,
        final_page = live.final_page,
    )
}
