//! A benchmark in a few lines: properties in, phase reports out.

use ycsb_db::{Properties, PropertyDecl, PropertyError, Store};

use crate::measurement::{self, MeasurementInterval, MeasurementSettings};
use crate::runner::{
    self, Observer, Phase, PhaseOutcome, RunError, RunnerSettings, Silent, StopSignal,
};
use crate::workload::{self, CoreWorkload, WorkloadError};

/// An error in a benchmark's configuration.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A property is invalid.
    #[error(transparent)]
    Property(#[from] PropertyError),
    /// The workload cannot be built from the properties.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
}

/// Every property ycsb-core reads: the CoreWorkload's, the runner's and
/// measurement's. A program adds its store's `PROPERTIES` to warn about
/// the ones nothing reads (see [`Properties::unknown`]).
pub fn properties() -> Vec<&'static PropertyDecl> {
    let mut all = Vec::new();
    all.extend_from_slice(workload::PROPERTIES);
    all.extend_from_slice(workload::datafile::PROPERTIES);
    all.extend_from_slice(runner::PROPERTIES);
    all.extend_from_slice(measurement::PROPERTIES);
    all
}

/// A validated benchmark: the CoreWorkload, the runner's and the
/// measurement's settings, all read from one set of properties.
///
/// Defaults are Java YCSB's (`recordcount=1000`, `operationcount=1000`,
/// 95 % reads and 5 % updates, uniform keys, 10 fields of 100 bytes, one
/// thread); any property of [`properties`] changes them.
///
/// ```
/// use ycsb_core::Benchmark;
/// use ycsb_core::db::Properties;
///
/// let props = Properties::new()
///     .with("recordcount", 100)
///     .with("operationcount", 500)
///     .with("threadcount", 2)
///     .with("seed", 7);
/// let benchmark = Benchmark::from_properties(&props)?;
/// # let store = ycsb_memory::MemoryStore::new();
/// // `store` is any ycsb_db::Store: your own engine's binding.
/// let load = benchmark.load(&store)?;
/// let run = benchmark.run(&store)?;
/// assert_eq!(load.operations, 100);
/// assert_eq!(run.operations, 500);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Benchmark {
    workload: CoreWorkload,
    runner: RunnerSettings,
    measurement: MeasurementSettings,
}

impl Benchmark {
    /// Reads and validates the configuration.
    ///
    /// With a `target` rate and no explicit `measurement.interval`, both the
    /// service time and the latency from each operation's intended start
    /// are recorded (Java needs `measurement.interval=both` for that).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the first invalid property, its value and
    /// where it came from.
    pub fn from_properties(props: &Properties) -> Result<Self, ConfigError> {
        let workload = CoreWorkload::from_properties(props)?;
        let runner = RunnerSettings::from_properties(props)?;
        let mut measurement = MeasurementSettings::from_properties(props)?;
        if runner.target.is_some() && !props.is_set(measurement::MEASUREMENT_INTERVAL.decl()) {
            measurement.interval = MeasurementInterval::Both;
        }
        Ok(Self {
            workload,
            runner,
            measurement,
        })
    }

    /// The workload.
    pub fn workload(&self) -> &CoreWorkload {
        &self.workload
    }

    /// The runner's settings (threads, target, time limit, seed).
    pub fn runner_settings(&self) -> &RunnerSettings {
        &self.runner
    }

    /// The measurement settings.
    pub fn measurement_settings(&self) -> &MeasurementSettings {
        &self.measurement
    }

    /// Loads the data set into `store`.
    ///
    /// # Errors
    ///
    /// A [`RunError`] when no client thread could run.
    pub fn load(&self, store: &dyn Store) -> Result<PhaseOutcome, RunError> {
        self.phase(Phase::Load, store, &StopSignal::new(), &mut Silent)
    }

    /// Runs the operation mix against `store`.
    ///
    /// # Errors
    ///
    /// A [`RunError`] when no client thread could run.
    pub fn run(&self, store: &dyn Store) -> Result<PhaseOutcome, RunError> {
        self.phase(Phase::Run, store, &StopSignal::new(), &mut Silent)
    }

    /// Runs one phase with a stop signal and an observer of the status
    /// intervals.
    ///
    /// # Errors
    ///
    /// A [`RunError`] when no client thread could run.
    pub fn phase(
        &self,
        phase: Phase,
        store: &dyn Store,
        stop: &StopSignal,
        observer: &mut dyn Observer,
    ) -> Result<PhaseOutcome, RunError> {
        runner::run_phase(
            phase,
            &self.workload,
            store,
            &self.runner,
            &self.measurement,
            stop,
            observer,
        )
    }
}
