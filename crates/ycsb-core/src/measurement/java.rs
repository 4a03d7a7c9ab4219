//! The figures Java's other measurement types need beyond the latency
//! histogram: sums of whole microseconds (Java's averages and variance),
//! 1 ms buckets (`histogram`), per-unit averages (`timeseries`) and every
//! latency (`raw`). Kept per section beside the histogram, recorded per
//! thread and merged like it; all empty (and untouched on the hot path)
//! with `measurementtype=hdrhistogram`.

use ycsb_results::MeasurementType;
use ycsb_results::{RawPoint, SeriesUnit};

/// What a recorder needs to feed the Java types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JavaRecording {
    pub(crate) buckets: usize,
    pub(crate) series_granularity_ms: u64,
    pub(crate) raw: bool,
}

impl JavaRecording {
    /// `None` for `hdrhistogram`, which needs none of it.
    pub(crate) fn of(kind: MeasurementType, buckets: usize, granularity_ms: u64) -> Option<Self> {
        let recording = Self {
            buckets: if kind.keeps_buckets() { buckets } else { 0 },
            series_granularity_ms: if kind == MeasurementType::TimeSeries {
                granularity_ms.max(1)
            } else {
                0
            },
            raw: kind.keeps_raw(),
        };
        (kind != MeasurementType::HdrHistogram).then_some(recording)
    }

    /// Whether latencies need the wall clock (timeseries and raw).
    pub(crate) fn needs_time(&self) -> bool {
        self.raw || self.series_granularity_ms > 0
    }
}

/// A section's figures for the Java types.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct JavaFigures {
    /// Sum of the latencies in whole microseconds, as Java's `long`.
    pub(crate) sum_us: u64,
    /// Sum of their squares, as Java's `double totalsquaredlatency`.
    pub(crate) sum_sq_us: f64,
    /// 1 ms buckets, then the overflow; empty unless `histogram`.
    pub(crate) buckets: Vec<u64>,
    /// Timeseries units by start, ascending.
    pub(crate) units: Vec<SeriesUnit>,
    /// Every latency (raw types).
    pub(crate) raw: Vec<RawPoint>,
}

impl JavaFigures {
    /// Records one latency; `offset_ms` is the time since the section's
    /// first latency, `now_us` the wall clock (both 0 when not needed).
    #[inline]
    pub(crate) fn record(
        &mut self,
        how: &JavaRecording,
        latency_us: u64,
        now_us: u64,
        offset_ms: u64,
    ) {
        self.sum_us += latency_us;
        self.sum_sq_us += (latency_us as f64) * (latency_us as f64);
        if how.buckets > 0 {
            if self.buckets.is_empty() {
                self.buckets = vec![0; how.buckets + 1];
            }
            // Java: latency / 1000 >= buckets counts as overflow.
            let bucket = usize::try_from(latency_us / 1_000)
                .unwrap_or(usize::MAX)
                .min(how.buckets);
            self.buckets[bucket] += 1;
        }
        if let Some(units) = offset_ms.checked_div(how.series_granularity_ms) {
            let time_ms = units * how.series_granularity_ms;
            self.add_unit(SeriesUnit {
                time_ms,
                operations: 1,
                sum_us: latency_us,
            });
        }
        if how.raw {
            self.raw.push(RawPoint {
                end_us: now_us,
                latency_us,
            });
        }
    }

    fn add_unit(&mut self, unit: SeriesUnit) {
        // Units mostly arrive in order: the last one is the usual match.
        if let Some(last) = self.units.last_mut() {
            if last.time_ms == unit.time_ms {
                last.operations += unit.operations;
                last.sum_us += unit.sum_us;
                return;
            }
        }
        match self
            .units
            .binary_search_by_key(&unit.time_ms, |u| u.time_ms)
        {
            Ok(i) => {
                self.units[i].operations += unit.operations;
                self.units[i].sum_us += unit.sum_us;
            }
            Err(i) => self.units.insert(i, unit),
        }
    }

    /// Moves `other`'s figures into these, leaving `other` empty.
    pub(crate) fn absorb(&mut self, other: &mut JavaFigures) {
        self.sum_us += other.sum_us;
        self.sum_sq_us += other.sum_sq_us;
        if !other.buckets.is_empty() {
            if self.buckets.len() < other.buckets.len() {
                self.buckets.resize(other.buckets.len(), 0);
            }
            for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
                *mine += theirs;
            }
        }
        for unit in other.units.drain(..) {
            self.add_unit(unit);
        }
        if self.raw.is_empty() {
            std::mem::swap(&mut self.raw, &mut other.raw);
        } else {
            self.raw.append(&mut other.raw);
        }
        other.reset();
    }

    /// Empties the figures, keeping the bucket array's memory.
    pub(crate) fn reset(&mut self) {
        self.sum_us = 0;
        self.sum_sq_us = 0.0;
        self.buckets.iter_mut().for_each(|b| *b = 0);
        self.units.clear();
        self.raw.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_whole_milliseconds_with_an_overflow() {
        let how = JavaRecording::of(MeasurementType::Histogram, 3, 1000).unwrap();
        let mut f = JavaFigures::default();
        for us in [0, 999, 1_000, 2_999, 3_000, 1_000_000] {
            f.record(&how, us, 0, 0);
        }
        // Java: histogram[latency / 1000]++, overflow from buckets * 1000.
        assert_eq!(f.buckets, vec![2, 1, 1, 2]);
        assert_eq!(f.sum_us, 1_007_998);
    }

    #[test]
    fn series_units_start_at_multiples_of_the_granularity() {
        let how = JavaRecording::of(MeasurementType::TimeSeries, 1000, 250).unwrap();
        let mut a = JavaFigures::default();
        let mut b = JavaFigures::default();
        a.record(&how, 10, 0, 0);
        a.record(&how, 20, 0, 249);
        a.record(&how, 40, 0, 1_000);
        b.record(&how, 30, 0, 260);
        b.record(&how, 50, 0, 10);
        a.absorb(&mut b);
        let units: Vec<(u64, u64, u64)> = a
            .units
            .iter()
            .map(|u| (u.time_ms, u.operations, u.sum_us))
            .collect();
        assert_eq!(units, vec![(0, 3, 80), (250, 1, 30), (1_000, 1, 40)]);
        assert!(b.units.is_empty());
    }
}
