//! Runs and what tells them apart: each run's traits (store, workload,
//! threads, value size, records, target), the names, legends and title
//! made of the traits that differ, and the panels (small multiples) that
//! time-series charts are split into.

use ycsb_results::RunReport;

/// One run: an export, the name the report gives it and what it is.
#[derive(Clone, Debug)]
pub struct Run {
    /// What names the run in headings, legends and the table: the store,
    /// the workload and whatever else tells it apart from the other runs.
    pub name: String,
    /// The file (or source) the export came from.
    pub origin: String,
    /// The export.
    pub report: RunReport,
    /// What the run is along each dimension runs are compared in, most
    /// telling first: `(dimension, label)` pairs such as `("store",
    /// "rocksdb")`, `("threads", "8 threads")`. Reports group, name and
    /// title runs by the dimensions whose labels differ.
    pub traits: Vec<(String, String)>,
}

impl Run {
    /// A run of `report` named `name`, its traits read from the export
    /// ([`traits_of`]).
    pub fn new(name: impl Into<String>, origin: impl Into<String>, report: RunReport) -> Self {
        Self {
            name: name.into(),
            origin: origin.into(),
            traits: traits_of(&report),
            report,
        }
    }

    /// Whether the export says its engine library was built with
    /// assertions (`metadata.engine_build.assertions`): its figures are
    /// slower than a release build's, and the report says so.
    pub fn assertions_enabled(&self) -> bool {
        self.report
            .metadata
            .engine_build
            .as_ref()
            .is_some_and(|b| b.assertions_enabled())
    }

    /// The label of the run's trait `dimension`, if it has one.
    pub(crate) fn label(&self, dimension: &str) -> Option<&str> {
        self.traits
            .iter()
            .find(|(d, _)| d == dimension)
            .map(|(_, l)| l.as_str())
    }

    /// The store's name, as the export gives it.
    pub(crate) fn store(&self) -> &str {
        self.report.metadata.store.as_deref().unwrap_or("?")
    }
}

/// The workload a run ran: the first `-P` file named like a workload
/// (`workloads/workloada`), else the first `-P` file, else the class.
pub(crate) fn workload_name(doc: &RunReport) -> String {
    let args: Vec<&str> = doc
        .metadata
        .command_line
        .iter()
        .map(String::as_str)
        .collect();
    let files: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "-P")
        .map(|w| w[1].rsplit('/').next().unwrap_or(w[1]))
        .collect();
    files
        .iter()
        .find(|f| f.starts_with("workload"))
        .or(files.first())
        .map(|f| f.to_string())
        .or_else(|| doc.config_value("workload").map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// `workload A` for YCSB's core workload files (`workloada`), else the
/// file's name.
fn workload_label(name: &str) -> String {
    match name.strip_prefix("workload") {
        Some(letter) if letter.len() == 1 && letter.chars().all(|c| c.is_ascii_lowercase()) => {
            format!("workload {}", letter.to_ascii_uppercase())
        }
        _ => name.to_string(),
    }
}

/// The target rate of a run, as its label (`target 5000/s`,
/// `unthrottled`).
fn target_label(doc: &RunReport) -> String {
    match doc
        .config_value("target")
        .and_then(|t| t.trim().parse::<f64>().ok())
    {
        Some(t) if t > 0.0 => format!("target {t}/s"),
        _ => "unthrottled".into(),
    }
}

/// What an export says the run is, most telling first: store (and engine
/// version), workload, threads, value size, records, target rate.
pub fn traits_of(doc: &RunReport) -> Vec<(String, String)> {
    let config = |key: &str| doc.config_value(key).map(str::to_string);
    let mut traits = vec![
        (
            "store".to_string(),
            doc.metadata.store.clone().unwrap_or_else(|| "?".into()),
        ),
        (
            "engine version".to_string(),
            doc.metadata.engine_version.clone().unwrap_or_default(),
        ),
        ("workload".to_string(), workload_label(&workload_name(doc))),
    ];
    let plural = |n: &str, one: &str, many: &str| {
        if n == "1" {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    };
    if let Some(t) = config("threadcount") {
        traits.push(("threads".into(), plural(&t, "thread", "threads")));
    }
    if let Some(l) = config("fieldlength") {
        let count = config("fieldcount").unwrap_or_else(|| "10".into());
        traits.push(("value size".into(), format!("{count} × {l} B fields")));
    }
    if let Some(r) = config("recordcount") {
        traits.push(("records".into(), plural(&r, "record", "records")));
    }
    traits.push(("target".into(), target_label(doc)));
    traits
}

/// The dimensions in which `runs` differ, in the runs' trait order.
pub(crate) fn differing(runs: &[&Run]) -> Vec<String> {
    let mut dimensions: Vec<String> = Vec::new();
    for run in runs {
        for (d, _) in &run.traits {
            if !dimensions.contains(d) {
                dimensions.push(d.clone());
            }
        }
    }
    dimensions.retain(|d| {
        let first = runs.first().and_then(|r| r.label(d));
        runs.iter().any(|r| r.label(d) != first)
    });
    dimensions
}

fn file_stem(origin: &str) -> String {
    let file = origin.rsplit('/').next().unwrap_or(origin);
    file.strip_suffix(".json").unwrap_or(file).to_string()
}

/// Names exports as runs, each by its store and workload plus what
/// tells it apart from the others (engine version, threads, value size,
/// records, target, and as a last resort its file name).
pub fn runs_from_exports(exports: Vec<(String, RunReport)>) -> Vec<Run> {
    let mut runs: Vec<Run> = exports
        .into_iter()
        .map(|(origin, report)| Run::new(String::new(), origin, report))
        .collect();
    let all: Vec<&Run> = runs.iter().collect();
    let differs = differing(&all);
    let names: Vec<String> = runs
        .iter()
        .map(|run| {
            let version = run
                .label("engine version")
                .filter(|v| differs.iter().any(|d| d == "engine version") && !v.is_empty())
                .map_or_else(String::new, |v| format!(" {v}"));
            let mut name = format!("{}{version} · {}", run.store(), workload_name(&run.report));
            for dimension in ["threads", "value size", "records", "target"] {
                if differs.iter().any(|d| d == dimension) {
                    name.push_str(&format!(" · {}", run.label(dimension).unwrap_or("?")));
                }
            }
            name
        })
        .collect();
    let duplicated: Vec<bool> = names
        .iter()
        .map(|n| names.iter().filter(|m| *m == n).count() > 1)
        .collect();
    for ((run, mut name), duplicate) in runs.iter_mut().zip(names).zip(duplicated) {
        if duplicate {
            name.push_str(&format!(" · {}", file_stem(&run.origin)));
            run.traits.push(("file".into(), file_stem(&run.origin)));
        }
        run.name = name;
    }
    runs
}

/// A short title for `runs`: the labels of each dimension they differ in
/// (`7 stores × workloads A, C`), with the workload they share; a single
/// run's name.
pub(crate) fn title(runs: &[Run]) -> String {
    let all: Vec<&Run> = runs.iter().collect();
    match runs {
        [] => return "ycsb report".into(),
        [run] => return format!("ycsb report: {}", run.name),
        _ => {}
    }
    let differs = differing(&all);
    let labels = |dimension: &str| {
        let mut labels: Vec<&str> = Vec::new();
        for run in runs {
            if let Some(l) = run.label(dimension) {
                if !labels.contains(&l) {
                    labels.push(l);
                }
            }
        }
        labels
    };
    let mut parts: Vec<String> = Vec::new();
    for dimension in &differs {
        let values = labels(dimension);
        parts.push(match dimension.as_str() {
            "store" if values.len() > 3 => format!("{} stores", values.len()),
            "workload" if values.len() > 4 => format!("{} workloads", values.len()),
            "workload" => {
                let letters: Vec<&str> = values
                    .iter()
                    .map(|w| w.strip_prefix("workload ").unwrap_or(w))
                    .collect();
                format!("workloads {}", letters.join(", "))
            }
            "engine version" if differs.iter().any(|d| d == "store") => continue,
            _ if values.len() > 3 => format!("{} {dimension} values", values.len()),
            _ => values.join(", "),
        });
    }
    if parts.is_empty() {
        return format!("ycsb report: {} runs of {}", runs.len(), runs[0].name);
    }
    let mut title = format!("ycsb report: {}", parts.join(" × "));
    if !differs.iter().any(|d| d == "workload") {
        if let Some(workload) = runs[0].label("workload") {
            title.push_str(&format!(" · {workload}"));
        }
    }
    title
}

/// Runs charted together with their own axes: a group of runs of similar
/// length that differ in the first dimension (the stores, mostly).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Panel {
    /// What the panel's runs share (`workload A`), with their length
    /// when a group was split by it; empty for one panel of every run.
    pub(crate) key: String,
    /// The runs, as indices into the runs given.
    pub(crate) members: Vec<usize>,
}

/// Runs shown in one panel at most.
pub(crate) const PANEL_RUNS: usize = 8;
/// Runs in one panel last at most this many times as long as its
/// shortest, so that no run's line is squeezed into a corner.
const LENGTH_RATIO: f64 = 4.0;

/// How runs are laid out in a report's charts: the panels, and for every
/// run its legend text and colour (the same in every panel and chart).
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub(crate) panels: Vec<Panel>,
    /// Per run given: its legend text.
    pub(crate) legends: Vec<String>,
    /// Per run given: its palette colour.
    pub(crate) colours: Vec<usize>,
}

impl Layout {
    /// The layout of `present` (indices into `runs`) whose phases lasted
    /// `seconds` each (per run given): grouped by the second dimension
    /// they differ in (the first, usually the store, is what a panel
    /// compares), each group split by length, then into panels of at most
    /// [`PANEL_RUNS`].
    pub(crate) fn new(runs: &[Run], present: &[usize], seconds: &[f64]) -> Self {
        let members: Vec<&Run> = present.iter().map(|&i| &runs[i]).collect();
        let mut differs = differing(&members);
        // Beside the stores' names, their versions say nothing more.
        if differs.iter().any(|d| d == "store") {
            differs.retain(|d| d != "engine version");
        }
        // Grouping by a dimension helps only when runs that share its
        // value still differ in the first: target rates that each belong
        // to one store would make a panel per run.
        let group_by = differs
            .iter()
            .skip(1)
            .find(|d| {
                members.iter().any(|a| {
                    members.iter().any(|b| {
                        a.label(d) == b.label(d) && a.label(&differs[0]) != b.label(&differs[0])
                    })
                })
            })
            .cloned();
        let legends = legends(runs, &differs, group_by.as_deref());
        let colours = colours(&legends);
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for &i in present {
            let key = group_by
                .as_deref()
                .and_then(|d| runs[i].label(d))
                .unwrap_or("")
                .to_string();
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, m)) => m.push(i),
                None => groups.push((key, vec![i])),
            }
        }
        let panels = groups
            .into_iter()
            .flat_map(|(key, members)| split_by_length(key, members, seconds))
            .collect();
        Self {
            panels,
            legends,
            colours,
        }
    }

    /// The most runs any panel holds.
    pub(crate) fn largest_panel(&self) -> usize {
        self.panels
            .iter()
            .map(|p| p.members.len())
            .max()
            .unwrap_or(0)
    }
}

/// Per run, its legend text: the labels of the dimensions the runs differ
/// in but `group_by` (which the panel's title says); its name when that
/// leaves nothing or names two runs alike.
fn legends(runs: &[Run], differs: &[String], group_by: Option<&str>) -> Vec<String> {
    let shown: Vec<&String> = differs
        .iter()
        .filter(|d| Some(d.as_str()) != group_by)
        .collect();
    let mut legends: Vec<String> = runs
        .iter()
        .map(|run| {
            let parts: Vec<&str> = shown.iter().filter_map(|d| run.label(d)).collect();
            parts.join(" · ")
        })
        .collect();
    for i in 0..legends.len() {
        let clash = legends.iter().enumerate().any(|(j, l)| {
            j != i
                && *l == legends[i]
                && runs[j].label_of_group(group_by) == runs[i].label_of_group(group_by)
        });
        if legends[i].is_empty() || clash {
            legends[i] = runs[i].name.clone();
        }
    }
    legends
}

impl Run {
    fn label_of_group(&self, group_by: Option<&str>) -> Option<&str> {
        group_by.and_then(|d| self.label(d))
    }
}

/// Per legend text, a colour: the position of the text among the
/// distinct ones, so that a store keeps its colour across panels.
fn colours(legends: &[String]) -> Vec<usize> {
    let mut distinct: Vec<&str> = Vec::new();
    legends
        .iter()
        .map(|l| match distinct.iter().position(|d| d == l) {
            Some(i) => i,
            None => {
                distinct.push(l);
                distinct.len() - 1
            }
        })
        .collect()
}

/// A group's panels: its runs by length (each panel's longest at most
/// [`LENGTH_RATIO`] times its shortest), at most [`PANEL_RUNS`] each, in
/// the runs' order within a panel.
fn split_by_length(key: String, members: Vec<usize>, seconds: &[f64]) -> Vec<Panel> {
    let length = |i: usize| {
        seconds
            .get(i)
            .copied()
            .filter(|s| s.is_finite())
            .unwrap_or(0.0)
    };
    // Runs of no length (no series) have nothing to squeeze: they join
    // the first panel, where a chart says why they have no line.
    let (mut by_length, unknown): (Vec<usize>, Vec<usize>) =
        members.iter().partition(|&&i| length(i) > 0.0);
    by_length.sort_by(|a, b| length(*a).total_cmp(&length(*b)));
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for i in by_length {
        match clusters.last_mut() {
            Some(c) if length(i) <= LENGTH_RATIO * length(c[0]) => c.push(i),
            _ => clusters.push(vec![i]),
        }
    }
    match clusters.first_mut() {
        Some(first) => first.extend(unknown),
        None => clusters.push(unknown),
    }
    let split = clusters.len() > 1;
    let mut panels = Vec::new();
    for mut cluster in clusters {
        cluster.sort_by_key(|i| members.iter().position(|m| m == i));
        let longest = cluster.iter().map(|&i| length(i)).fold(0.0, f64::max);
        let chunks = cluster.len().div_ceil(PANEL_RUNS);
        let per_chunk = cluster.len().div_ceil(chunks.max(1)).max(1);
        for (n, chunk) in cluster.chunks(per_chunk).enumerate() {
            let mut parts: Vec<String> = Vec::new();
            if !key.is_empty() {
                parts.push(key.clone());
            }
            if split {
                parts.push(format!("runs of up to {}", seconds_label(longest)));
            }
            if chunks > 1 {
                parts.push(format!("part {} of {chunks}", n + 1));
            }
            panels.push(Panel {
                key: parts.join(" · "),
                members: chunk.to_vec(),
            });
        }
    }
    panels
}

/// A length of time, to one significant decimal below 10 s.
pub(crate) fn seconds_label(seconds: f64) -> String {
    if seconds < 10.0 {
        format!("{seconds:.1} s")
    } else {
        format!("{seconds:.0} s")
    }
}
