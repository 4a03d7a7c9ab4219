//! The status loop: what the thread that runs a phase does while the
//! workers work.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ycsb_db::{Gauge, Store};

use super::budget::ErrorBudget;
use super::{lock, Observer, Phase, Progress, RunnerSettings, StatusUpdate, StopSignal, Tick};
use crate::measurement::{IntervalSnapshot, Measurements};
use crate::observe::Warmup;
use ycsb_results::Operation;

pub(super) struct StatusLoop<'a> {
    pub(super) phase: Phase,
    pub(super) status_interval: Duration,
    pub(super) store: &'a dyn Store,
    pub(super) settings: &'a RunnerSettings,
    pub(super) measurements: &'a Measurements,
    pub(super) progress: &'a [Progress],
    pub(super) finished: &'a AtomicU64,
    /// The workers' notices, shown as they come (Java prints its
    /// "Retrying insertion" lines as it retries).
    pub(super) notices: &'a Mutex<Vec<String>>,
    pub(super) threads: u64,
    pub(super) total_operations: u64,
    pub(super) start: Instant,
    /// The caller's signal (Ctrl-C, SIGTERM, a library user).
    pub(super) stop: &'a StopSignal,
    /// The signal the workers watch: raised by the caller's signal, the
    /// time limit or the error budget.
    pub(super) phase_stop: &'a StopSignal,
    pub(super) observer: &'a mut dyn Observer,
    pub(super) budget: Option<&'a ErrorBudget>,
    pub(super) warmup: Warmup,
}

/// The time-series side of the status loop.
struct Ticks {
    granularity: Option<Duration>,
    next: Option<Instant>,
    last_time: Instant,
}

/// The end of the last status interval: operations completed by then, and
/// when.
struct LastStatus {
    operations: u64,
    time: Instant,
}

/// Operations completed so far over all threads.
pub(super) fn completed(progress: &[Progress]) -> u64 {
    progress.iter().map(|p| p.0.load(Ordering::Relaxed)).sum()
}

/// Closes a time-series interval at `now` and hands it to the observer.
fn tick(
    s: &mut StatusLoop<'_>,
    ticks: &mut Ticks,
    now: Instant,
    warmup: bool,
    gauges: &mut Vec<Gauge>,
) {
    let snapshot = s.measurements.take_tick();
    gauges.clear();
    s.store.gauges(gauges);
    s.observer.on_tick(&Tick {
        phase: s.phase,
        elapsed: now.duration_since(s.start),
        length: now.duration_since(ticks.last_time),
        operations: completed(s.progress),
        total_operations: s.total_operations,
        warmup,
        snapshot: &snapshot,
        gauges,
    });
    ticks.last_time = now;
}

impl StatusLoop<'_> {
    /// Hands the workers' notices so far to the observer.
    fn pass_notices(&mut self) {
        let notices = std::mem::take(&mut *lock(self.notices));
        for notice in &notices {
            self.observer.on_notice(notice);
        }
    }

    /// Stops the phase when the caller asks, its time limit has passed or
    /// its error budget is spent, and records which.
    ///
    /// The time limit raises only the phase's own signal: it is the normal
    /// end of a time-limited phase, not an interruption of the session
    /// (a later phase still runs; the live view still lingers).
    fn check_stop(&self, now: Instant, deadline: Option<Instant>, ending: &mut PhaseEnding) {
        if self.stop.is_stopped() {
            ending.interrupted = true;
            self.phase_stop.stop();
        }
        if !self.phase_stop.is_stopped() && deadline.is_some_and(|deadline| now >= deadline) {
            ending.time_limit_reached = true;
            self.phase_stop.stop();
        }
        if let Some(budget) = self.budget {
            // Catches a budget spent by threads each within its share.
            budget.check(self.phase_stop);
        }
        if self.phase_stop.is_stopped() && !ending.time_limit_reached {
            ending.interrupted = true;
        }
    }

    /// Whether the warm-up (not yet ended) ends at `now`.
    fn warmup_reached(&self, now: Instant, warmup_time: Option<Instant>) -> bool {
        match self.warmup {
            Warmup::Time(_) => warmup_time.is_some_and(|t| now >= t),
            Warmup::Operations(n) => completed(self.progress) >= n,
            Warmup::None => false,
        }
    }

    /// Closes a status interval at `now` and hands it to the observer;
    /// returns the operations completed by its end.
    ///
    /// The line's operations are those its sections measured (each
    /// operation reports one status), not the workers' progress counters:
    /// those run up to a publication period ahead of the measurements, and
    /// the line's `Count=` figures would not add up to its operations.
    fn status(&mut self, now: Instant, last: &LastStatus, gauges: &mut Vec<Gauge>) -> u64 {
        let snapshot = self.measurements.take_interval();
        let interval_operations = measured_operations(&snapshot);
        let operations = last.operations + interval_operations;
        gauges.clear();
        self.store.gauges(gauges);
        self.observer.on_status(&StatusUpdate {
            phase: self.phase,
            elapsed: now.duration_since(self.start),
            operations,
            total_operations: self.total_operations,
            interval_operations,
            interval_length: now.duration_since(last.time),
            interval: &snapshot,
            gauges,
        });
        operations
    }
}

/// The workload operations an interval measured: the statuses its
/// operation sections counted, without the data-integrity checks, the
/// threads' cleanup and the intended-latency copies.
fn measured_operations(snapshot: &IntervalSnapshot) -> u64 {
    snapshot
        .sections
        .iter()
        .filter(|s| {
            !s.intended
                && !s.operation.is_batch()
                && !matches!(s.operation, Operation::Verify | Operation::Cleanup)
        })
        .flat_map(|s| s.returns.iter())
        .sum()
}

/// How a phase's status loop saw it end.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PhaseEnding {
    /// Stopped by the caller's signal or the error budget.
    pub(super) interrupted: bool,
    /// Ended by `maxexecutiontime`.
    pub(super) time_limit_reached: bool,
    /// When the loop first saw the phase stopped (by any of the above),
    /// for `stop.grace`.
    pub(super) stopped_at: Option<Instant>,
}

/// Waits for the workers, handing the observer a [`Tick`] every
/// time-series interval and a status update every status interval;
/// enforces the time limit and ends the warm-up. Returns how the phase
/// ended, and where the warm-up ended (time since the start, operations
/// completed by then).
pub(super) fn status_loop(mut s: StatusLoop<'_>) -> (PhaseEnding, Option<(Duration, u64)>) {
    let interval = s.status_interval;
    let mut next_status = s.start + interval;
    let mut last = LastStatus {
        operations: 0,
        time: s.start,
    };
    let mut ticks = Ticks {
        granularity: s.settings.granularity,
        next: s.settings.granularity.map(|g| s.start + g),
        last_time: s.start,
    };
    let mut gauges = Vec::new();
    let deadline = s.settings.max_execution_time.map(|d| s.start + d);
    let mut ending = PhaseEnding::default();
    let warmup_time = match s.warmup {
        Warmup::Time(d) => Some(s.start + d),
        _ => None,
    };
    let mut warmup_end: Option<(Duration, u64)> = None;
    if ticks.granularity.is_some() {
        s.measurements.start_ticking();
    }
    // Java's status thread prints its first line as the phase starts
    // (`0 sec: 0 operations;`), then one per interval.
    let now = Instant::now();
    last = LastStatus {
        operations: s.status(now, &last, &mut gauges),
        time: now,
    };
    while s.finished.load(Ordering::Acquire) != s.threads {
        s.pass_notices();
        let now = Instant::now();
        s.check_stop(now, deadline, &mut ending);
        if s.phase_stop.is_stopped() {
            let stopped = *ending.stopped_at.get_or_insert(now);
            if s.settings
                .stop_grace
                .is_some_and(|grace| now.duration_since(stopped) >= grace)
            {
                // Threads still inside the store: the watchdog's turn.
                break;
            }
        }
        if warmup_end.is_none() && s.warmup_reached(now, warmup_time) {
            // The warm-up closes its own interval, so no row mixes
            // warm-up and measured operations.
            if let Some(g) = ticks.granularity {
                tick(&mut s, &mut ticks, now, true, &mut gauges);
                ticks.next = Some(now + g);
            }
            s.measurements.discard_totals();
            warmup_end = Some((now.duration_since(s.start), completed(s.progress)));
        }
        if let (Some(next), Some(g)) = (ticks.next, ticks.granularity) {
            if now >= next {
                let warmup = s.warmup != Warmup::None && warmup_end.is_none();
                tick(&mut s, &mut ticks, now, warmup, &mut gauges);
                ticks.next = Some(advance(next, g, now));
            }
        }
        if now >= next_status {
            let operations = s.status(now, &last, &mut gauges);
            last = LastStatus {
                operations,
                time: now,
            };
            next_status = advance(next_status, interval, now);
        }
        let wake = [
            deadline,
            ticks.next,
            warmup_time.filter(|_| warmup_end.is_none()),
        ]
        .into_iter()
        .flatten()
        .fold(next_status, Instant::min);
        // A worker that ends wakes this thread (`Worker::watcher`); short
        // naps keep the reaction to stop requests quick without
        // busy-waiting.
        let nap = wake
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(20));
        std::thread::park_timeout(nap);
    }
    let now = Instant::now();
    if ticks.granularity.is_some() && now > ticks.last_time {
        // The tail of the phase, with the threads' last publications (and
        // their CLEANUP).
        let warmup = s.warmup != Warmup::None && warmup_end.is_none();
        tick(&mut s, &mut ticks, now, warmup, &mut gauges);
    }
    // One last line for the tail of the phase, as Java's status thread
    // prints when the clients finish.
    if completed(s.progress) > last.operations || now.duration_since(s.start) >= interval {
        s.status(now, &last, &mut gauges);
    }
    // A stop asked for while the last workers finished.
    ending.interrupted |= s.stop.is_stopped();
    (ending, warmup_end)
}

/// The first due time after `now` on the grid `due + k * step`: a loop that
/// fell behind skips the missed intervals instead of catching up.
fn advance(mut due: Instant, step: Duration, now: Instant) -> Instant {
    while due <= now {
        due += step;
    }
    due
}
