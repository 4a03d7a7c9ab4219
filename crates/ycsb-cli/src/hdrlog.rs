//! Writes the HdrHistogram interval logs from the status updates of the
//! phases (`hdrhistogram.fileoutput=true`).

use std::path::PathBuf;
use std::time::SystemTime;

use ycsb_core::measurement::{HdrLogSettings, HdrLogs};
use ycsb_core::runner::{Phase, StatusUpdate};

/// One set of logs per phase; the phase name prefixes the files when the
/// process runs both phases, so the run's logs do not replace the load's.
pub struct HdrLogWriter {
    settings: HdrLogSettings,
    label_phases: bool,
    current: Option<(Phase, HdrLogs)>,
    written: Vec<PathBuf>,
    failed: bool,
}

impl HdrLogWriter {
    pub fn new(settings: HdrLogSettings, label_phases: bool) -> Self {
        Self {
            settings,
            label_phases,
            current: None,
            written: Vec::new(),
            failed: false,
        }
    }

    /// Logs one status interval. A write error is printed once and stops
    /// the logging, not the benchmark.
    pub fn on_status(&mut self, update: &StatusUpdate<'_>) {
        if !self.settings.enabled || self.failed {
            return;
        }
        if self.current.as_ref().map(|(p, _)| *p) != Some(update.phase) {
            self.finish_phase();
            let label = if self.label_phases {
                format!("{}-", update.phase.name())
            } else {
                String::new()
            };
            let start = SystemTime::now()
                .checked_sub(update.elapsed)
                .unwrap_or_else(SystemTime::now);
            self.current = Some((update.phase, HdrLogs::new(&self.settings, &label, start)));
        }
        if let Some((_, logs)) = &mut self.current {
            let offset = update.elapsed.saturating_sub(update.interval_length);
            if let Err(e) = logs.write_interval(update.interval, offset, update.interval_length) {
                eprintln!("ycsb: error: HdrHistogram log: {e}; no more intervals are logged");
                self.failed = true;
            }
        }
    }

    fn finish_phase(&mut self) {
        if let Some((_, mut logs)) = self.current.take() {
            match logs.finish() {
                Ok(paths) => self.written.extend(paths),
                Err(e) => eprintln!("ycsb: error: HdrHistogram log: {e}"),
            }
        }
    }

    /// Flushes the last phase's logs and returns every file written.
    pub fn finish(&mut self) -> Vec<PathBuf> {
        self.finish_phase();
        std::mem::take(&mut self.written)
    }
}
