//! The time series, resources and stability of a benchmark run (see
//! `ycsb_core::observe`), and the progress bar: both fed from the runner's
//! status thread.

use std::io::IsTerminal;
use std::time::Duration;

use ycsb_core::measurement::MeasurementInterval;
use ycsb_core::observe::{Collector, ObserveSettings, PhaseObservation};
use ycsb_core::runner::{Phase, PhaseOutcome, StatusUpdate, Tick};
use ycsb_core::workload::CoreWorkload;
use ycsb_db::{Properties, Store};

use crate::progress::{ProgressBar, ProgressState};
use crate::Failure;

/// What the status thread does besides the status line.
pub(crate) struct ObserveHook {
    collector: Option<Collector>,
    progress: Option<ProgressBar>,
    time_limit: Option<Duration>,
}

impl ObserveHook {
    /// Reads the observation properties and creates the time-series file.
    /// The progress bar is on when standard error is a terminal and no
    /// status lines (`-s`) are printed there.
    pub(crate) fn new(
        props: &Properties,
        interval: MeasurementInterval,
        store: &dyn Store,
        status_lines: bool,
        time_limit: Option<Duration>,
    ) -> Result<Self, Failure> {
        let settings = ObserveSettings::from_properties(props).map_err(Failure::usage)?;
        let collector = match settings.granularity {
            None => None,
            Some(_) => {
                let mut gauges = Vec::new();
                store.gauges(&mut gauges);
                let names = gauges.into_iter().map(|g| g.name).collect();
                let intended = interval == MeasurementInterval::Both;
                Some(Collector::new(&settings, intended, names).map_err(Failure::usage)?)
            }
        };
        let progress = (!status_lines && std::io::stderr().is_terminal()).then(ProgressBar::new);
        Ok(Self {
            collector,
            progress,
            time_limit,
        })
    }

    pub(crate) fn start_phase(&mut self, phase: Phase) {
        if let Some(c) = &mut self.collector {
            c.start_phase(phase);
        }
    }

    pub(crate) fn on_tick(&mut self, tick: &Tick<'_>) {
        if let Some(c) = &mut self.collector {
            c.on_tick(tick);
        }
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
        if self.collector.is_some() {
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

    /// Puts the phase's observation into its report and prints its
    /// stability and amplification on standard error.
    pub(crate) fn finish_phase(
        &mut self,
        outcome: &mut PhaseOutcome,
        workload: &CoreWorkload,
    ) -> Result<(), Failure> {
        self.clear_progress();
        let Some(collector) = &mut self.collector else {
            return Ok(());
        };
        let observation = collector.finish_phase(outcome, workload);
        for line in summary_lines(outcome.phase.name(), &observation) {
            eprintln!("{line}");
        }
        outcome.report.observation = Some(observation);
        match collector.take_error() {
            Some(e) => Err(Failure::runtime(e)),
            None => Ok(()),
        }
    }
}

/// One-line summaries of a phase's observation.
fn summary_lines(phase: &str, o: &PhaseObservation) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(w) = &o.warmup {
        lines.push(format!(
            "{phase} warm-up: {:.1} s, {} operations left out of the report",
            w.end_s, w.operations
        ));
    }
    if let Some(s) = &o.stability {
        let settled = s.steady_state.as_ref().map_or_else(
            || "throughput did not settle".to_string(),
            |st| format!("throughput settled at {:.1} s", st.time_s),
        );
        lines.push(format!(
            "{phase} stability: {} intervals, mean {:.0} ops/s, stddev {:.0}, CV {:.2}%, slowest {:.0} ops/s at {:.1} s, fastest {:.0} ops/s at {:.1} s; {settled}",
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
