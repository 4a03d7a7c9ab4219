//! `ycsb merge`'s check that the exports belong together: the clients of
//! one multi-client run, not a load with a run, workload A with E, two
//! stores, the same client twice or runs hours apart. See
//! docs/multi-client.md.

use std::path::{Path, PathBuf};

use ycsb_results::RunReport;

/// The configuration that makes two exports measurements of one workload:
/// each must be the same in every export.
const SAME_WORKLOAD: &[&str] = &[
    "recordcount",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "deleteproportion",
    "requestdistribution",
    "fieldcount",
    "fieldlength",
    "table",
    "client.count",
];

/// How far apart the clients' phases may be and still count as running
/// side by side: launch skew and unsynchronised clocks.
const TIME_SLACK_S: f64 = 60.0;

/// What merge knows of one input.
pub struct Input<'a> {
    pub path: &'a Path,
    /// The export (its phases taken out).
    pub export: &'a RunReport,
    /// The phases' names, in the export's order.
    pub phases: Vec<&'a str>,
    /// The phases' total run time.
    pub runtime_ns: u64,
}

/// The reasons `inputs` do not belong together, one line each (empty when
/// they do).
pub fn mismatches(inputs: &[Input<'_>]) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(first) = inputs.first() else {
        return problems;
    };
    let name = |i: &Input<'_>| i.path.display().to_string();

    // The same file twice.
    let canonical: Vec<PathBuf> = inputs
        .iter()
        .map(|i| std::fs::canonicalize(i.path).unwrap_or_else(|_| i.path.to_path_buf()))
        .collect();
    for (k, path) in canonical.iter().enumerate() {
        if let Some(j) = canonical[..k].iter().position(|p| p == path) {
            problems.push(format!(
                "{} and {} are the same file",
                name(&inputs[j]),
                name(&inputs[k])
            ));
        }
    }

    for input in &inputs[1..] {
        if input.phases != first.phases {
            problems.push(format!(
                "{} has phases [{}] but {} has [{}]: merge exports of the same phase (a load with loads, a run with runs)",
                name(input),
                input.phases.join(", "),
                name(first),
                first.phases.join(", ")
            ));
        }
        let store = |i: &Input<'_>| i.export.metadata.store.clone();
        if let (Some(a), Some(b)) = (store(first), store(input)) {
            if a != b {
                problems.push(format!(
                    "{} ran against store '{b}' but {} against '{a}'",
                    name(input),
                    name(first)
                ));
            }
        }
        for key in SAME_WORKLOAD {
            if let (Some(a), Some(b)) = (config(first.export, key), config(input.export, key)) {
                if !same_value(&a.0, &b.0) {
                    problems.push(format!(
                        "{} has {key}={} ({}) but {} has {key}={} ({}): not the same workload",
                        name(input),
                        b.0,
                        b.1,
                        name(first),
                        a.0,
                        a.1
                    ));
                }
            }
        }
    }

    // Distinct client indexes (a merged export, already a sum of clients,
    // has none of its own).
    let mut seen: Vec<(String, String)> = Vec::new();
    for input in inputs {
        if config(input.export, "merge.input.0").is_some() {
            continue;
        }
        let index = config(input.export, "client.index").map_or_else(|| "0".to_string(), |v| v.0);
        match seen.iter().find(|(_, i)| *i == index) {
            Some((other, _)) => problems.push(format!(
                "{} and {other} are both client.index={index}: each client of a run has its own index (client.count, client.index)",
                name(input)
            )),
            None => seen.push((name(input), index)),
        }
    }

    // Time: every client's phases overlap the others'.
    let windows: Vec<(f64, f64, &Input<'_>)> = inputs
        .iter()
        .filter_map(|i| {
            let start = chrono::DateTime::parse_from_rfc3339(&i.export.metadata.start_time).ok()?;
            let start = start.timestamp_millis() as f64 / 1e3;
            Some((start, start + i.runtime_ns as f64 / 1e9, i))
        })
        .collect();
    if let (Some(latest), Some(earliest_end)) = (
        windows.iter().max_by(|a, b| a.0.total_cmp(&b.0)),
        windows.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
    ) {
        if latest.0 > earliest_end.1 + TIME_SLACK_S {
            problems.push(format!(
                "{} started {:.0} s after {} had finished: the clients of one run measure at the same time",
                name(latest.2),
                latest.0 - earliest_end.1,
                name(earliest_end.2)
            ));
        }
    }
    problems
}

/// A configuration entry's value and origin.
fn config(export: &RunReport, key: &str) -> Option<(String, String)> {
    export
        .config
        .iter()
        .find(|e| e.key == key)
        .map(|e| (e.value.clone(), e.origin.clone()))
}

/// Equal as numbers when both are (`0` and `0.0`), else as text.
fn same_value(a: &str, b: &str) -> bool {
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.trim().eq_ignore_ascii_case(b.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_as_numbers() {
        assert!(same_value("0", "0.0"));
        assert!(same_value("zipfian", "zipfian"));
        assert!(!same_value("0.5", "0.95"));
        assert!(!same_value("zipfian", "uniform"));
    }
}
