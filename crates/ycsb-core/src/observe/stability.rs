//! Throughput stability and steady-state detection.

use ycsb_results::{IntervalPoint, P99Spread, Stability, SteadyState};

use ycsb_results::SeriesRow;

fn mean_stddev(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, var.sqrt())
}

fn cv(mean: f64, stddev: f64) -> f64 {
    if mean > 0.0 {
        stddev / mean
    } else {
        0.0
    }
}

/// The first interval `i` from which throughput counts as settled: the
/// `window` intervals `i..i+window` each lie within `tolerance` (relative)
/// of the mean throughput of intervals `i..` (to the end of the phase).
///
/// Comparing a window against the mean of all that follows, rather than
/// against its own mean, rejects a window that is locally flat while the
/// throughput still climbs or falls (a cache still warming): such a window
/// sits away from the long-run level. `None` when fewer than `window`
/// intervals exist or no window qualifies.
#[cfg(test)]
pub fn steady_state(throughputs: &[f64], window: usize, tolerance: f64) -> Option<usize> {
    steady_state_without_errors(throughputs, &vec![0; throughputs.len()], window, tolerance)
}

/// [`steady_state`] where a window that holds an interval with failed
/// operations (`errors[i] > 0`) never counts as settled: a store that
/// times out a steady share of requests is not in a steady state.
pub fn steady_state_without_errors(
    throughputs: &[f64],
    errors: &[u64],
    window: usize,
    tolerance: f64,
) -> Option<usize> {
    let window = window.max(1);
    let n = throughputs.len();
    if n < window {
        return None;
    }
    // Suffix sums give each tail's mean in O(1).
    let mut suffix = vec![0.0; n + 1];
    for i in (0..n).rev() {
        suffix[i] = suffix[i + 1] + throughputs[i];
    }
    (0..=n - window).find(|&i| {
        let mean = suffix[i] / (n - i) as f64;
        mean > 0.0
            && errors[i..i + window].iter().all(|&e| e == 0)
            && throughputs[i..i + window]
                .iter()
                .all(|t| (t - mean).abs() <= tolerance * mean)
    })
}

/// The stability figures of a phase's series; `granularity_s` is the
/// nominal interval length. `None` when no measured interval exists.
pub(crate) fn stability_of(
    rows: &[SeriesRow],
    granularity_s: f64,
    window: usize,
    tolerance: f64,
) -> Option<Stability> {
    let short_tail = |i: usize, r: &SeriesRow| {
        i + 1 == rows.len() && rows.len() > 1 && r.interval_s < granularity_s / 2.0
    };
    let measured: Vec<&SeriesRow> = rows
        .iter()
        .enumerate()
        .filter(|&(i, r)| !r.warmup && !short_tail(i, r))
        .map(|(_, r)| r)
        .collect();
    if measured.is_empty() {
        return None;
    }
    // Throughput of successful operations: a store that fails fast
    // would otherwise look faster.
    let good = |r: &SeriesRow| {
        if r.operations == 0 {
            r.throughput
        } else {
            let ok = r.operations - r.errors.min(r.operations);
            r.throughput * ok as f64 / r.operations as f64
        }
    };
    let throughputs: Vec<f64> = measured.iter().map(|r| good(r)).collect();
    let errors: u64 = measured.iter().map(|r| r.errors).sum();
    let operations: u64 = measured.iter().map(|r| r.operations).sum();
    let (mean, stddev) = mean_stddev(&throughputs);
    let point = |r: &SeriesRow| IntervalPoint {
        time_s: r.time_s,
        throughput: good(r),
    };
    let mut slowest = measured[0];
    let mut fastest = measured[0];
    for r in &measured {
        if good(r) < good(slowest) {
            slowest = r;
        }
        if good(r) > good(fastest) {
            fastest = r;
        }
    }

    let mut names: Vec<&str> = Vec::new();
    for r in &measured {
        for s in &r.sections {
            if s.operations > 0 && !names.contains(&s.name.as_str()) {
                names.push(&s.name);
            }
        }
    }
    let p99_us = names
        .iter()
        .map(|name| {
            let mut values: Vec<u64> = measured
                .iter()
                .flat_map(|r| r.sections.iter())
                .filter(|s| s.name == *name && s.operations > 0)
                .map(|s| s.p99_us)
                .collect();
            values.sort_unstable();
            let floats: Vec<f64> = values.iter().map(|&v| v as f64).collect();
            let (m, sd) = mean_stddev(&floats);
            P99Spread {
                section: name.to_string(),
                min: values[0],
                median: values[(values.len() - 1) / 2],
                max: values[values.len() - 1],
                cv: cv(m, sd),
            }
        })
        .collect();

    let kept: Vec<&SeriesRow> = rows
        .iter()
        .enumerate()
        .filter(|&(i, r)| !short_tail(i, r))
        .map(|(_, r)| r)
        .collect();
    let all: Vec<f64> = kept.iter().map(|r| good(r)).collect();
    let all_errors: Vec<u64> = kept.iter().map(|r| r.errors).collect();
    let steady_state =
        steady_state_without_errors(&all, &all_errors, window, tolerance).map(|i| SteadyState {
            interval: i,
            time_s: rows[i].time_s - rows[i].interval_s,
        });
    Some(Stability {
        intervals: measured.len(),
        mean_throughput: mean,
        stddev_throughput: stddev,
        cv: cv(mean, stddev),
        slowest: point(slowest),
        fastest: point(fastest),
        p99_us,
        steady_state,
        errors,
        error_share: if operations == 0 {
            0.0
        } else {
            errors as f64 / operations as f64
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ycsb_results::SeriesSection;

    fn row(time_s: f64, throughput: f64, p99: u64, warmup: bool) -> SeriesRow {
        let mut r = SeriesRow::empty(time_s, 1.0, warmup);
        r.throughput = throughput;
        r.operations = throughput as u64;
        r.sections.push(SeriesSection {
            name: "READ".into(),
            operation: "READ".into(),
            intended: false,
            operations: throughput as u64,
            throughput,
            errors: 0,
            avg_us: 1.0,
            min_us: 1,
            p50_us: 1,
            p99_us: p99,
            p999_us: p99,
            max_us: p99,
        });
        r
    }

    #[test]
    fn known_series_figures() {
        // Throughputs 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance
        // 32/7.
        let values = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let mut rows: Vec<SeriesRow> = values
            .iter()
            .enumerate()
            .map(|(i, &t)| row(i as f64 + 1.0, t, (t * 10.0) as u64, false))
            .collect();
        // A warm-up row and a short tail, both left out of the figures.
        rows.insert(0, row(0.5, 1000.0, 1, true));
        let mut tail = row(9.2, 0.5, 99999, false);
        tail.interval_s = 0.2;
        rows.push(tail);
        let s = stability_of(&rows, 1.0, 3, 0.1).unwrap();
        assert_eq!(s.intervals, 8);
        assert!((s.mean_throughput - 5.0).abs() < 1e-12);
        assert!((s.stddev_throughput - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((s.cv - (32.0f64 / 7.0).sqrt() / 5.0).abs() < 1e-12);
        assert_eq!(s.slowest.throughput, 2.0);
        assert_eq!(
            s.fastest,
            IntervalPoint {
                time_s: 8.0,
                throughput: 9.0
            }
        );
        assert_eq!(s.p99_us.len(), 1);
        let p = &s.p99_us[0];
        assert_eq!((p.min, p.median, p.max), (20, 40, 90));
    }

    #[test]
    fn nothing_measured_gives_no_figures() {
        assert_eq!(stability_of(&[], 1.0, 5, 0.1), None);
        assert_eq!(stability_of(&[row(1.0, 5.0, 1, true)], 1.0, 5, 0.1), None);
    }

    #[test]
    fn detects_the_end_of_a_cold_start() {
        // A ramp from 100 to 1000 over 10 intervals, then 40 intervals
        // around 1000 with ±3 % noise from a fixed sequence.
        let mut series: Vec<f64> = (0..10).map(|i| 100.0 + 90.0 * i as f64).collect();
        let noise = [0.97, 1.02, 1.0, 0.99, 1.03, 0.98, 1.01, 1.0];
        series.extend((0..40).map(|i| 1000.0 * noise[i % noise.len()]));
        let settled = steady_state(&series, 5, 0.1).unwrap();
        // Interval 9 (910) is within 10 % of ~1000 but 8 (820) is not.
        assert_eq!(settled, 9);
        // A tighter tolerance than the noise never settles.
        assert_eq!(steady_state(&series, 5, 0.01), None);
    }

    #[test]
    fn a_flat_window_during_a_slow_climb_is_not_steady() {
        // Flat at 100 for 5 intervals, then 1000: the flat start is
        // locally stable but far from the long-run level.
        let mut series = vec![100.0; 5];
        series.extend(vec![1000.0; 20]);
        assert_eq!(steady_state(&series, 5, 0.1), Some(5));
        assert_eq!(steady_state(&series[..3], 5, 0.1), None);
        assert_eq!(steady_state(&[0.0; 10], 5, 0.1), None);
    }

    #[test]
    fn steady_state_time_is_the_start_of_its_interval() {
        let rows: Vec<SeriesRow> = [10.0, 100.0, 100.0, 100.0]
            .iter()
            .enumerate()
            .map(|(i, &t)| row(i as f64 + 1.0, t, 1, i == 0))
            .collect();
        let s = stability_of(&rows, 1.0, 2, 0.1).unwrap();
        assert_eq!(
            s.steady_state,
            Some(SteadyState {
                interval: 1,
                time_s: 1.0
            })
        );
    }

    #[test]
    fn failed_operations_keep_a_phase_from_settling() {
        // Five steady seconds, a quarter of every interval's operations
        // failing (timeouts): the throughput is flat, but not settled.
        let rows: Vec<SeriesRow> = (1..=5)
            .map(|t| {
                let mut r = row(t as f64, 1000.0, 100, false);
                r.operations = 1000;
                r.errors = 250;
                r
            })
            .collect();
        let s = stability_of(&rows, 1.0, 3, 0.1).unwrap();
        assert_eq!(s.steady_state, None);
        assert_eq!(s.errors, 1250);
        assert_eq!(s.error_share, 0.25);
        // Successful operations only: 750 per second.
        assert_eq!(s.mean_throughput, 750.0);

        // The same series without failures settles at once.
        let clean: Vec<SeriesRow> = rows
            .into_iter()
            .map(|mut r| {
                r.errors = 0;
                r
            })
            .collect();
        let s = stability_of(&clean, 1.0, 3, 0.1).unwrap();
        assert_eq!(s.steady_state.map(|st| st.interval), Some(0));
        assert_eq!(s.mean_throughput, 1000.0);
    }
}
