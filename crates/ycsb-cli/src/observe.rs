//! What the status thread shows on the terminal: the progress bar, and
//! each phase's stability and amplification in one line each. The time
//! series itself is the session's (`ycsb_core::observe`).

use std::io::IsTerminal;
use std::time::Duration;

use ycsb_core::PhaseOutcome;
use ycsb_core::{StatusUpdate, Tick};
use ycsb_results::PhaseObservation;

use crate::progress::{ProgressBar, ProgressState};

/// What the status thread shows besides the status line.
pub(crate) struct ObserveHook {
    progress: Option<ProgressBar>,
    time_limit: Option<Duration>,
    /// Whether ticks come (a time series is kept): the bar then follows
    /// them rather than the coarser status updates.
    ticking: bool,
    /// `steadystate.window`: how many intervals a phase needs to be judged.
    steady_window: usize,
}

impl ObserveHook {
    /// The progress bar is on when standard error is a terminal and no
    /// status lines (`-s`) are printed there.
    pub(crate) fn new(
        status_lines: bool,
        time_limit: Option<Duration>,
        steady_window: usize,
    ) -> Self {
        let progress = (!status_lines && std::io::stderr().is_terminal()).then(ProgressBar::new);
        Self {
            progress,
            time_limit,
            ticking: false,
            steady_window,
        }
    }

    pub(crate) fn start_phase(&mut self) {
        self.ticking = false;
    }

    pub(crate) fn on_tick(&mut self, tick: &Tick<'_>) {
        self.ticking = true;
        if let Some(bar) = &mut self.progress {
            let seconds = tick.length.as_secs_f64();
            let interval_ops: u64 = tick
                .snapshot
                .sections
                .iter()
                .filter(|s| !s.intended)
                .map(|s| s.operations())
                .sum();
            bar.draw(&ProgressState {
                phase: tick.phase.name(),
                elapsed: tick.elapsed,
                operations: tick.operations,
                total: tick.total_operations,
                throughput: if seconds > 0.0 {
                    interval_ops as f64 / seconds
                } else {
                    0.0
                },
                time_limit: self.time_limit,
            });
        }
    }

    /// Draws the bar from status updates when there are no ticks.
    pub(crate) fn on_status(&mut self, update: &StatusUpdate<'_>) {
        if self.ticking {
            return;
        }
        if let Some(bar) = &mut self.progress {
            let seconds = update.interval_length.as_secs_f64();
            bar.draw(&ProgressState {
                phase: update.phase.name(),
                elapsed: update.elapsed,
                operations: update.operations,
                total: update.total_operations,
                throughput: if seconds > 0.0 {
                    update.interval_operations as f64 / seconds
                } else {
                    0.0
                },
                time_limit: self.time_limit,
            });
        }
    }

    /// Removes the progress bar before other output.
    pub(crate) fn clear_progress(&mut self) {
        if let Some(bar) = &mut self.progress {
            bar.clear();
        }
    }

    /// Prints the phase's stability and amplification on standard error.
    pub(crate) fn finish_phase(&mut self, outcome: &PhaseOutcome) {
        self.clear_progress();
        if let Some(observation) = &outcome.report.observation {
            for line in summary_lines(outcome.phase.name(), observation, self.steady_window) {
                eprintln!("{line}");
            }
        }
    }
}

/// One-line summaries of a phase's observation: warm-up, stability and
/// amplification, or for a phase too short to judge one line saying so.
fn summary_lines(phase: &str, o: &PhaseObservation, steady_window: usize) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(w) = &o.warmup {
        lines.push(format!(
            "{phase} warm-up: {:.1} s, {} operations left out of the report",
            w.end_s, w.operations
        ));
    }
    if let Some(s) = o.stability.as_ref().filter(|s| s.too_short(steady_window)) {
        lines.push(format!(
            "{phase}: too short to judge stability and amplification ({} intervals of {} s; {} needed)",
            s.intervals,
            o.granularity_s,
            ycsb_results::JUDGED_WINDOWS * steady_window.max(1)
        ));
        return lines;
    }
    if let Some(s) = &o.stability {
        let settled = match (&s.steady_state, s.errors) {
            (Some(st), _) => format!("throughput settled at {:.1} s", st.time_s),
            (None, 0) => "throughput did not settle".to_string(),
            (None, errors) => format!(
                "not settled: {errors} operations failed ({:.1}%)",
                s.error_share * 100.0
            ),
        };
        lines.push(format!(
            "{phase} stability: {} intervals, mean {:.0} successful ops/s, stddev {:.0}, CV {:.2}%, slowest {:.0} ops/s at {:.1} s, fastest {:.0} ops/s at {:.1} s; {settled}",
            s.intervals,
            s.mean_throughput,
            s.stddev_throughput,
            s.cv * 100.0,
            s.slowest.throughput,
            s.slowest.time_s,
            s.fastest.throughput,
            s.fastest.time_s,
        ));
    }
    if let Some(a) = &o.amplification {
        let ratio = |r: Option<f64>| r.map_or_else(|| "n/a".to_string(), |r| format!("{r:.2}"));
        lines.push(format!(
            "{phase} amplification: write {} ({} bytes written for {:.0} user bytes), space {} ({} bytes on disk for {:.0} user bytes)",
            ratio(a.write_amplification),
            a.write_bytes.map_or_else(|| "n/a".to_string(), |b| b.to_string()),
            a.user_bytes,
            ratio(a.space_amplification),
            a.db_size_bytes.map_or_else(|| "n/a".to_string(), |b| b.to_string()),
            a.data_bytes,
        ));
    }
    lines
}
