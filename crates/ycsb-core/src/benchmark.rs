//! A benchmark in a few lines: properties in, phase reports out.

use ycsb_db::{Properties, PropertyDecl, PropertyError, Store};

use crate::measurement::{self, MeasurementInterval, MeasurementSettings};
use crate::observe::ObserveError;
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
    /// The observation settings are invalid or the time-series file cannot
    /// be created.
    #[error(transparent)]
    Observe(#[from] ObserveError),
    /// An output file (the export, the HdrHistogram logs) cannot be
    /// created where it goes.
    #[error("{message}")]
    ExportFile {
        /// Names the property, its value, its origin and the reason.
        message: String,
    },
    /// An output would land on a property file, in the store's database
    /// directory or on another output
    /// ([`check_outputs`](crate::outputs::check_outputs)).
    #[error(transparent)]
    OutputCollision(#[from] crate::outputs::OutputCollision),
}

/// Why a phase did not succeed. Where the phase ran, the error carries its
/// [`PhaseOutcome`], so the figures of what was measured are not lost.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum PhaseError {
    /// No client thread could run (or the workload could not be set up).
    #[error(transparent)]
    Run(#[from] RunError),
    /// The load inserted fewer records than it was asked to: a load thread
    /// stops at an insert that fails for good (as in Java), and a data set
    /// with holes must not pass for a complete one, nor be run against.
    #[error("load phase incomplete: {inserted} of {expected} records inserted (see the messages above and the Return= lines of the report)")]
    IncompleteLoad {
        /// Records inserted.
        inserted: u64,
        /// Records the load was to insert.
        expected: u64,
        /// The phase's figures.
        outcome: Box<PhaseOutcome>,
    },
    /// More operations failed than `errorbudget` allows; the phase stopped.
    #[error("{} phase stopped: {failed} operations failed, more than errorbudget={budget} allows (their statuses are the Return= lines of the report)", .phase.name())]
    ErrorBudgetSpent {
        /// The phase.
        phase: Phase,
        /// Failed operations counted.
        failed: u64,
        /// The budget.
        budget: u64,
        /// The phase's figures.
        outcome: Box<PhaseOutcome>,
    },
}

impl PhaseError {
    /// The figures of the phase, where it ran.
    pub fn outcome(&self) -> Option<&PhaseOutcome> {
        match self {
            PhaseError::Run(_) => None,
            PhaseError::IncompleteLoad { outcome, .. }
            | PhaseError::ErrorBudgetSpent { outcome, .. } => Some(outcome),
        }
    }

    /// The figures of the phase, to complete them (the session adds the
    /// phase's observation).
    pub(crate) fn outcome_mut(&mut self) -> Option<&mut PhaseOutcome> {
        match self {
            PhaseError::Run(_) => None,
            PhaseError::IncompleteLoad { outcome, .. }
            | PhaseError::ErrorBudgetSpent { outcome, .. } => Some(outcome),
        }
    }
}

/// Every property ycsb-core reads, in groups for the reference
/// documentation (`ycsb properties`): the client's (phases, status), the
/// CoreWorkload's, file workloads',
/// the runner's, measurement's and observation's. A session adds its
/// store's declarations to these.
pub fn property_groups() -> [(&'static str, &'static [&'static PropertyDecl]); 6] {
    [
        ("Client", crate::client::PROPERTIES),
        ("CoreWorkload", workload::PROPERTIES),
        ("Data files", workload::datafile::PROPERTIES),
        ("Runner", runner::PROPERTIES),
        ("Measurement", measurement::PROPERTIES),
        ("Observation", crate::observe::PROPERTIES),
    ]
}

/// Every property ycsb-core reads ([`property_groups`] in one list). A
/// program adds its store's `PROPERTIES` to warn about the ones nothing
/// reads ([`Session::unknown_properties`](crate::Session::unknown_properties)
/// does).
pub fn properties() -> Vec<&'static PropertyDecl> {
    property_groups()
        .iter()
        .flat_map(|(_, decls)| decls.iter().copied())
        .collect()
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
    /// A [`PhaseError`] when no client thread could run, when fewer records
    /// were inserted than asked for, or when the error budget was spent.
    pub fn load(&self, store: &dyn Store) -> Result<PhaseOutcome, PhaseError> {
        self.phase(Phase::Load, store, &StopSignal::new(), &mut Silent)
    }

    /// Runs the operation mix against `store`.
    ///
    /// # Errors
    ///
    /// A [`PhaseError`] when no client thread could run or the error budget
    /// was spent.
    pub fn run(&self, store: &dyn Store) -> Result<PhaseOutcome, PhaseError> {
        self.phase(Phase::Run, store, &StopSignal::new(), &mut Silent)
    }

    /// Runs one phase with a stop signal and an observer of the status
    /// intervals.
    ///
    /// A load stopped by `stop` or by `maxexecutiontime` is not incomplete:
    /// it was asked to stop ([`PhaseOutcome::interrupted`],
    /// [`PhaseOutcome::time_limit_reached`]).
    ///
    /// # Errors
    ///
    /// A [`PhaseError`] when no client thread could run, when a run phase
    /// would choose keys among no loaded record
    /// ([`CoreWorkload::check_run_phase`]), when the load inserted fewer
    /// records than asked for, or when more operations failed than
    /// `errorbudget` allows.
    pub fn phase(
        &self,
        phase: Phase,
        store: &dyn Store,
        stop: &StopSignal,
        observer: &mut dyn Observer,
    ) -> Result<PhaseOutcome, PhaseError> {
        if phase == Phase::Run {
            self.workload
                .check_run_phase()
                .map_err(|e| RunError::Workload(e.into()))?;
        }
        let outcome = runner::run_phase(
            phase,
            &self.workload,
            store,
            &self.runner,
            &self.measurement,
            stop,
            observer,
        )?;
        if phase == Phase::Run {
            if let Some(notice) = unloaded_store_notice(&outcome) {
                observer.on_notice(&notice);
            }
        }
        if let Some(failed) = outcome.error_budget_spent {
            return Err(PhaseError::ErrorBudgetSpent {
                phase,
                failed,
                budget: self.runner.error_budget.unwrap_or(0),
                outcome: Box::new(outcome),
            });
        }
        if phase == Phase::Load && self.workload.keeps_going_on_error() {
            if let Some(notice) = records_missing_notice(&outcome) {
                observer.on_notice(&notice);
            }
        }
        let expected = self.workload.insert_count();
        if phase == Phase::Load
            && !outcome.interrupted
            && !outcome.time_limit_reached
            && outcome.operations < expected
        {
            return Err(PhaseError::IncompleteLoad {
                inserted: outcome.operations,
                expected,
                outcome: Box::new(outcome),
            });
        }
        Ok(outcome)
    }
}

/// What a load that went on through failed inserts
/// (`core_workload_insertion_keep_going_on_error`) lacks: the records
/// whose insert never succeeded. Java says nothing; the data set has holes
/// a run phase will read as NOT_FOUND.
fn records_missing_notice(outcome: &PhaseOutcome) -> Option<String> {
    let inserted: u64 = outcome
        .report
        .sections
        .iter()
        .filter(|s| s.operation == ycsb_results::Operation::Insert && !s.intended && !s.failed)
        .flat_map(|s| &s.returns)
        .filter(|r| {
            r.status == ycsb_db::Status::Ok.name() || r.status == ycsb_db::Status::BatchedOk.name()
        })
        .map(|r| r.count)
        .sum();
    let missing = outcome.operations.saturating_sub(inserted);
    (missing > 0).then(|| {
        format!(
            "load phase: {missing} of {} records were not inserted (their inserts failed for good; core_workload_insertion_keep_going_on_error went on): the data set lacks them",
            outcome.operations
        )
    })
}

/// Reads of a run phase that nearly all found no record (at least 90 % of
/// at least 10 reads) suggest a store that was never loaded, or loaded
/// with other keys (`recordcount`, `insertstart`, `zeropadding`,
/// `insertorder`, the table or the store's location): a measurement of
/// misses that would otherwise pass for one of reads.
fn unloaded_store_notice(outcome: &PhaseOutcome) -> Option<String> {
    let (mut reads, mut not_found) = (0u64, 0u64);
    for section in &outcome.report.sections {
        if section.operation != ycsb_results::Operation::Read || section.intended {
            continue;
        }
        for r in &section.returns {
            reads += r.count;
            if r.status == ycsb_db::Status::NotFound.name() {
                not_found += r.count;
            }
        }
    }
    (reads >= 10 && not_found * 10 >= reads * 9).then(|| {
        format!(
            "run phase: {not_found} of {reads} reads were NOT_FOUND: the store may never have been loaded (or was loaded with another recordcount, insertstart, insertorder, zeropadding, table or store location)"
        )
    })
}
