//! Runs side by side as a [`Page`]: a summary (the table, warnings,
//! throughput bars per workload), then per phase every chart with the runs
//! in panels, then each engine's statistics and each run's command line
//! and configuration behind folds.

use ycsb_results::RunMetadata;

use crate::html::{render_html, TABLE_COLUMNS};
use crate::model::{Block, Fold, Grid, Note, Page, Section, Table};
use crate::phase::phase_section;
use crate::runs::{self, differing, Run};
use crate::summary;
use crate::svg::{Bar, BarChart};

/// A comparison of runs, ready to render.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The runs, in the order given.
    pub runs: Vec<Run>,
}

impl Comparison {
    /// Compares `runs`.
    pub fn new(runs: Vec<Run>) -> Self {
        Self { runs }
    }

    /// A warning when the runs differ in durability: some synced every
    /// write and others did not, so their write figures measure different
    /// things. `None` when they agree or it is not known.
    pub fn durability_warning(&self) -> Option<String> {
        let names = |durable: bool| -> Vec<&str> {
            self.runs
                .iter()
                .filter(|r| {
                    r.report.metadata.durability.as_ref().map(|d| d.durable) == Some(durable)
                })
                .map(|r| r.name.as_str())
                .collect()
        };
        let (synced, unsynced) = (names(true), names(false));
        (!synced.is_empty() && !unsynced.is_empty()).then(|| {
            format!(
                "these runs differ in durability: {} synced every write to disk, {} did not; \
                 their write figures are not comparable",
                synced.join(", "),
                unsynced.join(", ")
            )
        })
    }

    /// The default title: what the runs differ in (`ycsb report: 7 stores
    /// × workloads A, C`), or the one run's name.
    pub fn title(&self) -> String {
        runs::title(&self.runs)
    }

    /// The summary table's rows: a label, then one cell per run.
    pub fn summary(&self) -> Vec<(String, Vec<String>)> {
        summary::rows(&self.runs)
    }

    /// The phases any run has, in first-seen order.
    pub fn phases(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for run in &self.runs {
            for p in &run.report.phases {
                if !names.contains(&p.phase) {
                    names.push(p.phase.clone());
                }
            }
        }
        names
    }

    /// The summary section: the table, the warnings, and with several
    /// runs their throughput per workload as bars.
    pub fn summary_section(&self) -> Section {
        let mut section = Section::new("Summary");
        section
            .blocks
            .extend(summary::blocks(&self.runs, TABLE_COLUMNS));
        let asserting: Vec<&str> = self
            .runs
            .iter()
            .filter(|r| r.assertions_enabled())
            .map(|r| r.name.as_str())
            .collect();
        if !asserting.is_empty() {
            section.blocks.push(Note::warning(format!(
                "{}: {}",
                asserting.join(", "),
                crate::ASSERTIONS_WARNING
            )));
        }
        if let Some(warning) = self.durability_warning() {
            section.blocks.push(Note::warning(warning));
        }
        section.blocks.extend(self.throughput_bars());
        section
    }

    /// Per workload, each phase's throughput of every run as bars
    /// (YCSB's usual figure); nothing for a single run.
    fn throughput_bars(&self) -> Vec<Block> {
        if self.runs.len() < 2 {
            return Vec::new();
        }
        let all: Vec<&Run> = self.runs.iter().collect();
        let shown: Vec<String> = differing(&all)
            .into_iter()
            .filter(|d| d != "workload" && d != "engine version")
            .collect();
        let mut workloads: Vec<&str> = Vec::new();
        for run in &self.runs {
            let w = run.label("workload").unwrap_or("?");
            if !workloads.contains(&w) {
                workloads.push(w);
            }
        }
        let mut legends: Vec<String> = Vec::new();
        let mut panels = Vec::new();
        for phase in ["load", "run"] {
            for workload in &workloads {
                let mut chart = BarChart::new(format!("{phase} throughput: {workload}"), "ops/s");
                for run in self
                    .runs
                    .iter()
                    .filter(|r| r.label("workload").unwrap_or("?") == *workload)
                {
                    let Some(p) = run.report.phase(phase) else {
                        continue;
                    };
                    let parts: Vec<&str> = shown.iter().filter_map(|d| run.label(d)).collect();
                    let label = if parts.is_empty() {
                        run.name.clone()
                    } else {
                        parts.join(" · ")
                    };
                    let colour = legends.iter().position(|l| *l == label).unwrap_or_else(|| {
                        legends.push(label.clone());
                        legends.len() - 1
                    });
                    chart.bars.push(Bar::new(label, p.throughput, 0.0, colour));
                }
                if !chart.bars.is_empty() {
                    panels.push(Block::Bars(chart));
                }
            }
        }
        match panels.len() {
            0 => Vec::new(),
            1 => panels,
            _ => vec![
                Block::Heading("Throughput by workload".into()),
                Block::Grid(Grid { columns: 2, panels }),
            ],
        }
    }

    /// One section per phase any run has, every chart with the runs in
    /// panels.
    pub fn phase_sections(&self) -> Vec<Section> {
        self.phases()
            .iter()
            .map(|phase| phase_section(&self.runs, phase))
            .collect()
    }

    /// The engines' own statistics texts (`rocksdb.stats`), each behind a
    /// fold; `None` when no run has any.
    pub fn engine_reports_section(&self) -> Option<Section> {
        let mut section = Section::new("Engine statistics");
        for run in &self.runs {
            for report in &run.report.engine_reports {
                section.blocks.push(Block::Fold(Fold {
                    summary: format!(
                        "{}: {} ({} lines)",
                        run.name,
                        report.name,
                        report.text.lines().count()
                    ),
                    blocks: vec![Block::Text(report.text.clone())],
                }));
            }
        }
        (!section.blocks.is_empty()).then_some(section)
    }

    /// Each run's command line and configuration, behind a fold.
    pub fn configurations_section(&self) -> Section {
        let mut section = Section::new("Command lines and configurations");
        for run in &self.runs {
            let table = Table::new(
                vec!["property".into(), "value".into(), "from".into()],
                run.report
                    .config
                    .iter()
                    .map(|e| vec![e.key.clone(), e.value.clone(), e.origin.clone()])
                    .collect(),
            );
            section.blocks.push(Block::Fold(Fold {
                summary: run.name.clone(),
                blocks: vec![
                    Note::plain(run.origin.clone()),
                    Block::Text(command_line(&run.report.metadata)),
                    Block::Table(table),
                ],
            }));
        }
        section
    }

    /// The whole comparison as a page titled `title`.
    pub fn page(&self, title: &str) -> Page {
        let mut page = Page::new(title);
        page.sections.push(self.summary_section());
        page.sections.extend(self.phase_sections());
        page.sections.extend(self.engine_reports_section());
        page.sections.push(self.configurations_section());
        page
    }

    /// The comparison as one self-contained HTML page: no script, no
    /// external file, every chart an inline SVG.
    pub fn to_html(&self, title: &str) -> String {
        render_html(&self.page(title))
    }
}

/// The command line as a shell would take it back (arguments with
/// spaces or quotes single-quoted).
fn command_line(metadata: &RunMetadata) -> String {
    let args = &metadata.command_line;
    if args.is_empty() {
        return "(not recorded)".into();
    }
    args.iter()
        .map(|a| {
            if a.is_empty()
                || a.contains(|c: char| c.is_whitespace() || "'\"$`\\;&|<>*?".contains(c))
            {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
