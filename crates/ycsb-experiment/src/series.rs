//! Time series of a cell: `ycsb -s` status lines (throughput and engine
//! gauges per interval) and resource samples taken from `/proc`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One status line: seconds into the phase, operations so far, the
/// interval's throughput and the store's gauges.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusPoint {
    /// Seconds since the phase started, as printed.
    pub t: f64,
    /// Operations completed in the phase so far.
    pub operations: u64,
    /// Throughput over the last interval.
    pub ops_per_sec: f64,
    /// Engine gauges such as `<engine>.num-files-at-level0`.
    pub gauges: BTreeMap<String, f64>,
}

/// One resource sample of the client (and server) processes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourcePoint {
    /// Seconds since the phase started.
    pub t: f64,
    /// CPU use of the client since the previous sample, percent of one core.
    pub cpu_percent: f64,
    /// Resident memory of the client.
    pub rss_bytes: u64,
    /// CPU use of the server, percent of one core.
    pub server_cpu_percent: Option<f64>,
    /// Resident memory of the server.
    pub server_rss_bytes: Option<u64>,
}

/// Everything over time of one phase of one cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseSeries {
    /// `load` or `run`.
    pub phase: String,
    /// Seconds since the cell started when the phase began.
    pub start_s: f64,
    /// Seconds since the cell started when the phase ended.
    pub end_s: f64,
    /// Status lines.
    pub status: Vec<StatusPoint>,
    /// Resource samples.
    pub resources: Vec<ResourcePoint>,
    /// Mean client CPU over the phase, percent of one core.
    pub cpu_percent: Option<f64>,
    /// Mean server CPU over the phase, percent of one core.
    pub server_cpu_percent: Option<f64>,
    /// Bytes on disk of the DB directory at the end of the phase.
    pub space_bytes: Option<u64>,
}

impl PhaseSeries {
    /// Coefficient of variation (percent) of the per-interval throughput,
    /// without the last, usually partial, interval: 0 is perfectly steady.
    pub fn throughput_cv_percent(&self) -> Option<f64> {
        let mut rates: Vec<f64> = self.status.iter().map(|s| s.ops_per_sec).collect();
        if rates.len() > 2 {
            rates.pop();
        }
        if rates.len() < 2 {
            return None;
        }
        let (mean, sd) = mean_sd(&rates);
        (mean > 0.0).then(|| 100.0 * sd / mean)
    }
}

/// Mean and sample standard deviation (0 for fewer than two values).
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// The phase a header line of `ycsb` starts (`load phase: ...`).
pub fn phase_header(line: &str) -> Option<&'static str> {
    if line.starts_with("load phase:") {
        Some("load")
    } else if line.starts_with("run phase:") {
        Some("run")
    } else {
        None
    }
}

/// Parses a status line: `<date> <time> 10 sec: 1000 operations; 99.5
/// current ops/sec; [READ: ...] [<engine>.num-files-at-level0=3]`.
pub fn parse_status(line: &str) -> Option<StatusPoint> {
    let (head, rest) = line.split_once(" sec: ")?;
    let t: f64 = head.rsplit(' ').next()?.parse().ok()?;
    let (ops, rest) = rest.split_once(" operations; ")?;
    let operations: u64 = ops.trim().parse().ok()?;
    let (rate, rest) = rest.split_once(" current ops/sec")?;
    let ops_per_sec: f64 = rate.trim().parse().ok()?;
    let mut gauges = BTreeMap::new();
    let mut s = rest;
    while let Some(open) = s.find('[') {
        let Some(close) = s[open..].find(']') else {
            break;
        };
        let item = &s[open + 1..open + close];
        s = &s[open + close + 1..];
        // Operation summaries are "[READ: Count=...]"; gauges "[name=value]".
        if item.contains(':') {
            continue;
        }
        if let Some((k, v)) = item.split_once('=') {
            if let Ok(v) = v.trim().parse::<f64>() {
                gauges.insert(k.trim().to_string(), v);
            }
        }
    }
    Some(StatusPoint {
        t,
        operations,
        ops_per_sec,
        gauges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines() {
        let p = parse_status("2026-11-29 22:53:07:543 10 sec: 1000 operations; 39741.88 current ops/sec; [INSERT: Count=1000, Max=405, Min=0, Avg=3.2, 90=4] [CLEANUP: Count=1, Max=0] [memory.records=1000] [rocksdb.num-files-at-level0=3]").unwrap();
        assert_eq!(p.t, 10.0);
        assert_eq!(p.operations, 1000);
        assert_eq!(p.ops_per_sec, 39741.88);
        assert_eq!(p.gauges.len(), 2);
        assert_eq!(p.gauges["rocksdb.num-files-at-level0"], 3.0);
        assert_eq!(
            parse_status("2026-11-29 22:53:07:543 0 sec: 0 operations; est completion in 1 second"),
            None
        );
        assert_eq!(parse_status("load phase: 1 threads"), None);
        assert_eq!(
            phase_header("run phase: 2 threads, leveldb 1.23"),
            Some("run")
        );
    }

    #[test]
    fn statistics() {
        let (m, sd) = mean_sd(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        assert!((sd - 1.2909944487).abs() < 1e-9);
        assert_eq!(mean_sd(&[5.0]), (5.0, 0.0));
        let series = PhaseSeries {
            status: [100.0, 100.0, 100.0, 7.0]
                .iter()
                .map(|&r| StatusPoint {
                    t: 0.0,
                    operations: 0,
                    ops_per_sec: r,
                    gauges: BTreeMap::new(),
                })
                .collect(),
            ..PhaseSeries::default()
        };
        // The partial last interval does not count against stability.
        assert_eq!(series.throughput_cv_percent(), Some(0.0));
    }
}
