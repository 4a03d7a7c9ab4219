//! The engine's gauges: files per LSM level per run, and per store every
//! gauge it reports, each charted by the kind its store declared (bytes in
//! binary units, counts and flags with whole-number ticks), gauges that
//! never moved named in a note instead of drawn flat.

use ycsb_results::{GaugeKind, PhaseReport};

use crate::axis::{format_bytes, format_value};
use crate::model::{Block, Figure, Grid, Note};
use crate::runs::{differing, Layout, Run};
use crate::series::why_no_series;
use crate::style::Dash;
use crate::svg::{Chart, Series};

/// The level of a files-per-level gauge (`rocksdb.num-files-at-level3`,
/// the name RocksDB, LevelDB and fjall share for them).
pub(crate) fn level_of(gauge: &str) -> Option<u32> {
    gauge
        .rsplit_once("files-at-level")
        .and_then(|(_, level)| level.parse().ok())
}

/// A gauge's value in every row of a phase (NaN where a row lacks it).
fn values(phase: &PhaseReport, name: &str) -> Vec<(f64, f64)> {
    phase
        .series()
        .iter()
        .map(|r| (r.time_s, r.gauges.get(name).copied().unwrap_or(f64::NAN)))
        .collect()
}

fn gauge_names(phase: &PhaseReport) -> Vec<&str> {
    phase
        .observation
        .as_ref()
        .map(|o| o.gauge_names())
        .unwrap_or_default()
}

/// Files per level: per run whose store keeps levels, one chart with a
/// line per level that held a file; nothing when no store keeps levels.
pub(crate) fn level_blocks(runs: &[Run], phase: &str, layout: &Layout) -> Vec<Block> {
    // Several runs of one store share a legend; their names tell them apart.
    let mut panels: Vec<Block> = Vec::new();
    let with_levels: Vec<usize> = layout
        .panels
        .iter()
        .flat_map(|p| p.members.iter().copied())
        .filter(|&i| {
            runs[i]
                .report
                .phase(phase)
                .is_some_and(|p| gauge_names(p).iter().any(|n| level_of(n).is_some()))
        })
        .collect();
    for &i in &with_levels {
        let Some(p) = runs[i].report.phase(phase) else {
            continue;
        };
        let mut levels: Vec<(u32, &str)> = gauge_names(p)
            .into_iter()
            .filter_map(|n| Some((level_of(n)?, n)))
            .collect();
        levels.sort_unstable();
        let title = if with_levels.len() > 1 {
            format!("Files per level: {}", runs[i].name)
        } else {
            "Files per level".to_string()
        };
        let mut chart = Chart::new(title, "time (s)", "files").with_steps();
        // Levels that never held a file would only stack flat lines at 0.
        for (level, name) in levels {
            let points = values(p, name);
            if points.iter().any(|(_, v)| *v > 0.0) {
                chart.series.push(
                    Series::new(format!("L{level}"), points).styled(level as usize, Dash::Solid),
                );
            }
        }
        panels.push(if chart.series.is_empty() {
            Block::Missing {
                title: chart.title,
                reason: "no level held a file (the data was still in memory tables)".into(),
            }
        } else {
            Figure::block(chart)
        });
    }
    match panels.len() {
        0 => Vec::new(),
        1 => panels,
        _ => vec![
            Block::Heading("Files per level".into()),
            Block::Grid(Grid { columns: 2, panels }),
        ],
    }
}

/// How a gauge's value reads, in the unit of its kind.
fn format_gauge(value: f64, kind: GaugeKind) -> String {
    match kind {
        GaugeKind::Bytes | GaugeKind::Mebibytes => {
            format_bytes(value * kind.bytes_per_unit().unwrap_or(1.0))
        }
        GaugeKind::BytesPerSecond => format!("{}/s", format_bytes(value)),
        GaugeKind::Seconds => format!("{} s", format_value(value)),
        _ => format_value(value),
    }
}

/// An empty chart of a gauge of `kind`: its axis scaled and labelled by
/// the kind.
fn gauge_chart(title: &str, kind: GaugeKind) -> Chart {
    let chart = Chart::new(title, "time (s)", "");
    match kind {
        GaugeKind::Bytes | GaugeKind::Mebibytes => Chart {
            y_label: "size".into(),
            ..chart
        }
        .with_bytes(),
        GaugeKind::BytesPerSecond => Chart {
            y_label: "{bytes}/s".into(),
            ..chart
        }
        .with_bytes(),
        GaugeKind::Count => Chart {
            y_label: "count".into(),
            ..chart
        }
        .with_steps(),
        GaugeKind::Flag => Chart {
            y_label: "1 = yes".into(),
            ..chart
        }
        .with_steps(),
        GaugeKind::Ratio => Chart {
            y_label: "ratio".into(),
            ..chart
        },
        GaugeKind::Seconds => Chart {
            y_label: "seconds".into(),
            ..chart
        },
        GaugeKind::Number => chart,
    }
}

/// What the gauges of one store did in a phase, over its runs.
struct StoreGauges<'a> {
    /// Charted gauges: (kind, name).
    moved: Vec<(GaugeKind, &'a str)>,
    /// Gauges that were 0 in every row.
    zero: Vec<&'a str>,
    /// Gauges that held one other value: (name, the value as read).
    constant: Vec<(&'a str, String)>,
}

impl<'a> StoreGauges<'a> {
    fn of(phases: &[&'a PhaseReport]) -> Self {
        let mut names: Vec<&str> = phases
            .iter()
            .flat_map(|p| gauge_names(p))
            .filter(|n| level_of(n).is_none())
            .collect();
        names.sort_unstable();
        names.dedup();
        let mut found = Self {
            moved: Vec::new(),
            zero: Vec::new(),
            constant: Vec::new(),
        };
        for name in names {
            let kind = phases
                .iter()
                .filter_map(|p| p.observation.as_ref())
                .find(|o| o.series.iter().any(|r| r.gauges.contains_key(name)))
                .map_or(GaugeKind::Number, |o| o.gauge_kind(name));
            let seen: Vec<f64> = phases
                .iter()
                .flat_map(|p| values(p, name))
                .map(|(_, v)| v)
                .filter(|v| v.is_finite())
                .collect();
            match seen.first() {
                None => {}
                Some(first) if seen.iter().all(|v| v == first) => {
                    if *first == 0.0 {
                        found.zero.push(name);
                    } else {
                        found.constant.push((name, format_gauge(*first, kind)));
                    }
                }
                Some(_) => found.moved.push((kind, name)),
            }
        }
        found.moved.sort_by_key(|(kind, name)| {
            (
                GaugeKind::ALL
                    .iter()
                    .position(|k| k == kind)
                    .unwrap_or(usize::MAX),
                *name,
            )
        });
        found
    }
}

/// The name of a gauge without its store's prefix (`block-cache-usage`).
fn short(name: &str) -> &str {
    name.split_once('.').map_or(name, |(_, rest)| rest)
}

/// Per store (in the runs' order), every gauge it reports: a chart per
/// gauge that moved (a line per run of the store), and notes naming the
/// gauges that stayed 0 or held one value.
pub(crate) fn gauge_blocks(runs: &[Run], phase: &str, layout: &Layout) -> Vec<Block> {
    let present: Vec<usize> = layout
        .panels
        .iter()
        .flat_map(|p| p.members.iter().copied())
        .collect();
    let mut stores: Vec<&str> = Vec::new();
    for &i in &present {
        if !stores.contains(&runs[i].store()) {
            stores.push(runs[i].store());
        }
    }
    let mut blocks = Vec::new();
    for store in stores {
        let members: Vec<usize> = present
            .iter()
            .copied()
            .filter(|&i| runs[i].store() == store)
            .collect();
        blocks.extend(store_blocks(runs, phase, store, &members));
    }
    blocks
}

/// The gauge blocks of one store's runs (`members`, indices into `runs`).
fn store_blocks(runs: &[Run], phase: &str, store: &str, members: &[usize]) -> Vec<Block> {
    let phases: Vec<&PhaseReport> = members
        .iter()
        .filter_map(|&i| runs[i].report.phase(phase))
        .collect();
    let gauges = StoreGauges::of(&phases);
    if gauges.moved.is_empty() && gauges.zero.is_empty() && gauges.constant.is_empty() {
        return Vec::new();
    }
    let member_runs: Vec<&Run> = members.iter().map(|&i| &runs[i]).collect();
    let shown: Vec<String> = differing(&member_runs)
        .into_iter()
        .filter(|d| d != "store" && d != "engine version")
        .collect();
    let legend = |run: &Run| {
        let parts: Vec<&str> = shown.iter().filter_map(|d| run.label(d)).collect();
        if parts.is_empty() {
            run.name.clone()
        } else {
            parts.join(" · ")
        }
    };
    let mut blocks = vec![Block::Heading(format!("Engine gauges: {store}"))];
    let total = gauges.moved.len() + gauges.zero.len() + gauges.constant.len();
    blocks.push(Note::plain(format!(
        "The {total} gauges {store} reports, each charted by its kind (sizes in binary units, counts and flags in whole numbers); {} moved.",
        gauges.moved.len()
    )));
    let mut panels = Vec::new();
    for (kind, name) in &gauges.moved {
        let mut chart = gauge_chart(short(name), *kind);
        let scale = match kind {
            GaugeKind::Mebibytes => kind.bytes_per_unit().unwrap_or(1.0),
            _ => 1.0,
        };
        let mut missing = Vec::new();
        for (colour, &i) in members.iter().enumerate() {
            let run = &runs[i];
            let Some(p) = run.report.phase(phase) else {
                continue;
            };
            let points: Vec<(f64, f64)> = values(p, name)
                .into_iter()
                .map(|(t, v)| (t, v * scale))
                .collect();
            let series = Series::new(legend(run), points).styled(colour, Dash::Solid);
            if series.has_data() {
                chart.series.push(series);
            } else {
                missing.push(format!(
                    "{}: {}",
                    legend(run),
                    why_no_series(&run.report, p)
                        .unwrap_or_else(|| "its store did not report this gauge".into())
                ));
            }
        }
        panels.push(Block::Chart(Figure {
            chart,
            remark: (!missing.is_empty()).then(|| format!("no data for {}", missing.join("; "))),
        }));
    }
    if !panels.is_empty() {
        blocks.push(Block::Grid(Grid { columns: 2, panels }));
    }
    if !gauges.zero.is_empty() {
        let names: Vec<&str> = gauges.zero.iter().map(|n| short(n)).collect();
        blocks.push(Note::plain(format!(
            "Stayed 0 throughout, not charted: {}.",
            names.join(", ")
        )));
    }
    if !gauges.constant.is_empty() {
        let held: Vec<String> = gauges
            .constant
            .iter()
            .map(|(n, v)| format!("{} = {v}", short(n)))
            .collect();
        blocks.push(Note::plain(format!(
            "Held one value throughout, not charted: {}.",
            held.join(", ")
        )));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_gauges() {
        assert_eq!(level_of("rocksdb.num-files-at-level12"), Some(12));
        assert_eq!(level_of("leveldb.num-files-at-level0"), Some(0));
        assert_eq!(level_of("rocksdb.num-files-at-levelX"), None);
        assert_eq!(level_of("leveldb.mb-at-level0"), None);
    }

    #[test]
    fn gauges_read_in_their_unit() {
        assert_eq!(format_gauge(3.0, GaugeKind::Mebibytes), "3.0 MiB");
        assert_eq!(format_gauge(2048.0, GaugeKind::BytesPerSecond), "2.0 KiB/s");
        assert_eq!(format_gauge(7.0, GaugeKind::Count), "7");
        assert_eq!(format_gauge(1.5, GaugeKind::Seconds), "1.5 s");
    }
}
