//! Time series of a cell: the export's intervals (throughput and engine
//! gauges, `phases[].observation.series`) and resource samples taken from
//! `/proc`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One interval of the export's time series: seconds into the phase,
/// operations so far, the interval's throughput and the store's gauges.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusPoint {
    /// Seconds since the phase started (the interval's end).
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
    /// The export's intervals.
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

/// A phase of fewer status intervals than this draws its time charts as
/// a few dots, not lines.
pub const CHARTABLE_INTERVALS: f64 = 5.0;

impl PhaseSeries {
    /// The phase's duration, seconds.
    pub fn duration_s(&self) -> f64 {
        self.end_s - self.start_s
    }

    /// Whether the phase was too short for its time charts: fewer than
    /// [`CHARTABLE_INTERVALS`] status intervals of `interval_s` seconds.
    pub fn too_short(&self, interval_s: f64) -> bool {
        self.duration_s() < CHARTABLE_INTERVALS * interval_s
    }

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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_phase_of_fewer_than_five_intervals_is_too_short_to_chart() {
        let mut short = PhaseSeries {
            phase: "run".into(),
            start_s: 0.2,
            end_s: 0.62,
            ..PhaseSeries::default()
        };
        assert!(short.too_short(1.0) && !short.too_short(0.05));
        short.end_s = 10.2;
        assert!(!short.too_short(1.0));
    }
}
