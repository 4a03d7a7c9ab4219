//! Time-series ticks: the figures of one `timeseries.granularity`
//! interval, taken independently of the status-line interval.

use ycsb_db::Status;

use super::{fold_series, lock, section_name, to_us, Measurements};
use ycsb_results::Operation;

/// One section's figures in one time-series interval, latencies in whole
/// microseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct TickSection {
    /// Java's section name (`READ`, `Intended-READ`).
    pub name: &'static str,
    /// The operation.
    pub operation: Operation,
    /// Whether this is intended latency.
    pub intended: bool,
    /// Whether it holds the latencies of failed operations
    /// (`READ-FAILED`), which the operation's own section counts.
    pub failed: bool,
    /// Latencies recorded in the interval.
    pub count: u64,
    /// Operations per returned status, indexed by [`Status::index`].
    pub returns: [u64; Status::COUNT],
    /// The smallest latency (0 when none).
    pub min_us: u64,
    /// The mean latency (0 when none).
    pub mean_us: f64,
    /// The median.
    pub p50_us: u64,
    /// The 99th percentile.
    pub p99_us: u64,
    /// The 99.9th percentile.
    pub p999_us: u64,
    /// The largest latency (0 when none).
    pub max_us: u64,
}

impl TickSection {
    /// The operations this section counts: its status counts, or its
    /// latencies for an intended-latency section that carries no statuses;
    /// none for a failed-latency section (its operation's section counts
    /// them, with their statuses).
    pub fn operations(&self) -> u64 {
        if self.failed {
            0
        } else {
            self.count.max(self.returns.iter().sum())
        }
    }

    /// Of those, the ones whose status is not OK.
    pub fn errors(&self) -> u64 {
        Status::ALL
            .iter()
            .filter(|s| !s.is_ok())
            .map(|s| self.returns[s.index()])
            .sum()
    }
}

/// The figures of one time-series interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TickSnapshot {
    /// Every section seen so far in the phase (zero figures when idle in
    /// this interval), operations in report order, then intended latency.
    pub sections: Vec<TickSection>,
}

impl Measurements {
    /// Leaves what workers publish to the ticks from now on, before the
    /// first tick is taken: a status line that came first (Java's line at
    /// 0 seconds, or a status interval shorter than the granularity) would
    /// otherwise take operations no tick then shows.
    pub fn start_ticking(&self) {
        lock(&self.aggregate).ticking = true;
    }

    /// Merges everything published since the last tick into the figures of
    /// one time-series interval; the data then goes on to the status-line
    /// interval ([`Measurements::take_interval`]) and the totals, so ticks
    /// and status lines can run at different periods.
    ///
    /// Once ticks are taken, status intervals take in only what the ticks
    /// passed on (a status line then covers the ticks up to it), so that
    /// every operation is in exactly one tick.
    pub fn take_tick(&self) -> TickSnapshot {
        let mut aggregate = lock(&self.aggregate);
        aggregate.ticking = true;
        self.drain_slots(&mut aggregate.series);
        let mut sections = Vec::new();
        for index in 0..aggregate.series.len() {
            let seen = aggregate.totals[index].is_some() || aggregate.series[index].is_some();
            if !seen {
                continue;
            }
            let key = section_name(index, self.mode);
            let mut figures = TickSection {
                name: key.name,
                operation: key.operation,
                intended: key.intended,
                failed: key.failed,
                count: 0,
                returns: [0; Status::COUNT],
                min_us: 0,
                mean_us: 0.0,
                p50_us: 0,
                p99_us: 0,
                p999_us: 0,
                max_us: 0,
            };
            if let Some(stats) = aggregate.series[index].as_deref() {
                figures.count = stats.count();
                figures.returns = stats.statuses;
                figures.min_us = to_us(stats.min_ns());
                figures.mean_us = stats.mean_ns() / 1_000.0;
                [figures.p50_us, figures.p99_us, figures.p999_us] =
                    stats.percentiles_ns([50.0, 99.0, 99.9]).map(to_us);
                figures.max_us = to_us(stats.max_ns);
            }
            sections.push(figures);
        }
        fold_series(&mut aggregate);
        TickSnapshot { sections }
    }

    /// Forgets the cumulative figures taken in so far (a warm-up's) by
    /// ticks and status intervals: [`Measurements::summary`] then reports
    /// only what is taken in from now on. What workers published since the
    /// last tick stays where it is and counts after the boundary, so every
    /// operation is in exactly one tick and the ticks before the boundary
    /// hold exactly what was discarded. Status-line intervals and ticks
    /// are not affected.
    pub fn discard_totals(&self) {
        let mut aggregate = lock(&self.aggregate);
        fold_series(&mut aggregate);
        for stats in aggregate.totals.iter_mut().flatten() {
            stats.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::measurement::MeasurementSettings;

    #[test]
    fn ticks_and_status_intervals_see_the_same_operations() {
        let measurements = Measurements::new(&MeasurementSettings::default(), 1);
        let mut recorder = measurements.recorder(0);
        for us in 1..=100 {
            recorder.record(Operation::Read, Status::Ok, us * 1_000);
        }
        recorder.record(Operation::Update, Status::Error, 7_000);
        recorder.publish();
        let first = measurements.take_tick();
        // READ, UPDATE (the failure's status), UPDATE-FAILED (its latency).
        assert_eq!(first.sections.len(), 3);
        let failed = &first.sections[2];
        assert_eq!((failed.name, failed.count), ("UPDATE-FAILED", 1));
        assert_eq!((failed.operations(), failed.errors()), (0, 0));
        assert_eq!(
            (first.sections[1].count, first.sections[1].operations()),
            (0, 1)
        );
        let read = &first.sections[0];
        assert_eq!(
            (read.name, read.count, read.operations()),
            ("READ", 100, 100)
        );
        assert_eq!((read.p50_us, read.p99_us, read.max_us), (50, 99, 100));
        assert_eq!(first.sections[1].errors(), 1);

        recorder.record(Operation::Read, Status::Ok, 5_000);
        recorder.publish();
        let second = measurements.take_tick();
        assert_eq!(second.sections[0].count, 1);
        assert_eq!(second.sections[1].count, 0, "idle sections are listed");

        // The status line covers both ticks, and nothing published after
        // the last tick: that is the next tick's.
        recorder.record(Operation::Read, Status::Ok, 5_000);
        recorder.publish();
        let status = measurements.take_interval();
        assert_eq!(status.sections[0].count, 101);
        assert_eq!(measurements.take_tick().sections[0].count, 1);
        assert_eq!(measurements.take_interval().sections[0].count, 1);
        drop(recorder);
        let report = measurements.summary("run", Duration::from_secs(1), 103);
        assert_eq!(report.sections[0].operations, 102);
    }

    #[test]
    fn discarded_totals_leave_the_rest_of_the_phase() {
        let measurements = Measurements::new(&MeasurementSettings::default(), 1);
        let mut recorder = measurements.recorder(0);
        for _ in 0..10 {
            recorder.record(Operation::Insert, Status::Ok, 9_000_000);
        }
        recorder.publish();
        let warm = measurements.take_tick();
        assert_eq!(warm.sections[0].count, 10);
        measurements.discard_totals();
        // Published after the boundary's tick: measured.
        recorder.record(Operation::Insert, Status::Ok, 1_000);
        recorder.publish();
        for _ in 0..3 {
            recorder.record(Operation::Insert, Status::Ok, 2_000);
        }
        drop(recorder);
        assert_eq!(measurements.take_tick().sections[0].count, 4);
        let report = measurements.summary("run", Duration::from_secs(1), 4);
        let insert = &report.sections[0];
        assert_eq!(insert.operations, 4);
        assert_eq!((insert.min_us, insert.max_us), (1, 2));
    }
}
