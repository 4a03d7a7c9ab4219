//! Runs a phase: client threads, target-rate scheduling, status intervals
//! and stopping.
//!
//! Each worker thread owns its [`WorkloadThread`](crate::workload::WorkloadThread),
//! its [`StoreThread`](ycsb_db::StoreThread) and its measurement
//! [`Recorder`](crate::measurement::Recorder); the only per-operation write
//! to memory another thread reads is a progress counter in the worker's own
//! cache line. The calling thread runs the status loop: it merges the
//! workers' published measurements each interval and hands them to an
//! [`Observer`], which decides what to print or store.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

use ycsb_db::{
    Gauge, Properties, Property, PropertyDecl, PropertyError, Store, StoreError,
    MAX_CLIENT_THREADS, MAX_SECONDS,
};

use crate::measurement::{IntervalSnapshot, MeasurementSettings, Measurements, TickSnapshot};
use crate::observe::Warmup;
use crate::workload::{split_range, CoreWorkload, WorkloadError};
use ycsb_results::PhaseReport;
use ycsb_results::WarmupSummary;

mod budget;
pub(crate) mod interrupt;
mod rate_limit;
mod start;
mod status;
mod worker;
use budget::ErrorBudget;
use status::{completed, status_loop, StatusLoop};
use worker::Worker;

pub use rate_limit::{RateFileError, RateLimit, RateStep, LIMIT_FILE, LIMIT_OPS};
pub(crate) use start::wait_until;
pub use start::{parse_start_at, StartHold, MAX_START_DELAY, START_AT};

/// `threadcount` (the `-threads` flag).
pub const THREAD_COUNT: Property<u64> = Property::new(
    "threadcount",
    "1",
    "Number of client threads (the -threads flag).",
);
/// `target` (the `-target` flag).
pub const TARGET: Property<f64> = Property::new(
    "target",
    "0",
    "Target throughput in operations per second over all threads (the -target flag); 0 means as fast as possible. With a target, operations are scheduled at fixed intervals and latency is also measured from each operation's intended start.",
);
/// `maxexecutiontime`.
pub const MAX_EXECUTION_TIME: Property<u64> = Property::new(
    "maxexecutiontime",
    "0",
    "Stop a phase after this many seconds; 0 means no limit.",
);
/// `seed`.
pub const SEED: Property<u64> = Property::optional(
    "seed",
    "Seed of every random stream: the same seed and thread count give the same operation sequence. Unset: a random seed, reported with the results.",
);

/// `errorbudget`.
pub const ERROR_BUDGET: Property<u64> = Property::optional(
    "errorbudget",
    "Failed operations a phase tolerates: once more than this many store operations have failed (any status but OK, BATCHED_OK and NOT_FOUND; each retried insert counts), the phase stops, its report and exports are still written and ycsb exits with status 1. 0 stops at the first failure. Counted per thread without slowing successful operations; a few in-flight operations may fail after the budget is spent. Unset: no limit, as Java YCSB.",
);

/// `stop.grace`: how long a stopped phase waits for its threads.
pub const STOP_GRACE: Property<u64> = Property::new(
    "stop.grace",
    "30",
    "Seconds a stopped phase (maxexecutiontime, the error budget, Ctrl-C or SIGTERM) waits for \
     its client threads to return from the store. A thread still inside a store call then is \
     named with where it waits, what was measured is reported and exported, and ycsb exits \
     with status 1 instead of waiting for ever on an engine that never returns. 0: wait for ever.",
);

/// Every property the runner reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    THREAD_COUNT.decl(),
    TARGET.decl(),
    MAX_EXECUTION_TIME.decl(),
    SEED.decl(),
    ERROR_BUDGET.decl(),
    START_AT.decl(),
    STOP_GRACE.decl(),
    LIMIT_OPS.decl(),
    LIMIT_FILE.decl(),
];

/// Which phase to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Insert the data set (`ycsb load`).
    Load,
    /// Run the operation mix (`ycsb run`).
    Run,
}

impl Phase {
    /// `load` or `run`.
    pub const fn name(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Run => "run",
        }
    }
}

/// The runner's settings, from properties.
#[derive(Clone, Debug, PartialEq)]
pub struct RunnerSettings {
    /// Client threads.
    pub threads: usize,
    /// Target operations per second over all threads, if throttled.
    pub target: Option<f64>,
    /// YCSB-cpp's rate limit of the run phase (`limit.ops`, `limit.file`),
    /// if any; never set together with `target`.
    pub rate_limit: Option<RateLimit>,
    /// Time limit of a phase.
    pub max_execution_time: Option<Duration>,
    /// The seed of every random stream.
    pub seed: u64,
    /// Whether the seed was chosen at random (not set by the user).
    pub seed_is_random: bool,
    /// Failed operations a phase tolerates before it stops; `None`: no
    /// limit.
    pub error_budget: Option<u64>,
    /// The time-series interval (`timeseries.granularity`): the status
    /// loop hands a [`Tick`] to the observer this often; `None`: no ticks.
    pub granularity: Option<Duration>,
    /// The run phase's warm-up (`measurement.warmup`), excluded from the
    /// final report.
    pub warmup: Warmup,
    /// When the first phase may start (`start.at`); `None`: at once.
    pub start_at: Option<std::time::SystemTime>,
    /// How long a stopped phase waits for its threads before reporting
    /// the ones still in a store call (`stop.grace`); `None`: for ever.
    pub stop_grace: Option<Duration>,
}

impl RunnerSettings {
    /// Reads the settings.
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] naming an invalid value and where it came from.
    pub fn from_properties(props: &Properties) -> Result<Self, PropertyError> {
        let threads = props.get_checked(&THREAD_COUNT, |t| {
            if (1..=MAX_CLIENT_THREADS as u64).contains(t) {
                Ok(())
            } else {
                Err(format!(
                    "expected between 1 and {MAX_CLIENT_THREADS} threads"
                ))
            }
        })? as usize;
        let target = props.get_checked(&TARGET, |t| {
            if *t >= 0.0 {
                Ok(())
            } else {
                Err("expected a non-negative rate".into())
            }
        })?;
        let rate_limit = RateLimit::from_properties(props)?;
        if target > 0.0 && rate_limit.is_some() {
            let limit = if props.is_set(LIMIT_OPS.decl()) {
                LIMIT_OPS.decl()
            } else {
                LIMIT_FILE.decl()
            };
            return Err(PropertyError::Conflict {
                message: format!(
                    "{} and {} are two rate limits: target schedules operations at fixed \
                     intervals (measuring latency from each one's intended start too), \
                     YCSB-cpp's limit a token bucket per thread; set one of them",
                    props.describe(TARGET.decl()),
                    props.describe(limit)
                ),
            });
        }
        let max = props.get_checked(&MAX_EXECUTION_TIME, |s| {
            if *s <= MAX_SECONDS {
                Ok(())
            } else {
                Err(format!(
                    "expected at most {MAX_SECONDS} seconds (about 136 years; 0 for no limit)"
                ))
            }
        })?;
        let (seed, seed_is_random) = match props.get_opt(&SEED)? {
            Some(seed) => (seed, false),
            None => (
                rand::RngCore::next_u64(
                    &mut <rand::rngs::SmallRng as rand::SeedableRng>::from_os_rng(),
                ),
                true,
            ),
        };
        let grace = props.get_checked(&STOP_GRACE, |s| {
            if *s <= MAX_SECONDS {
                Ok(())
            } else {
                Err(format!(
                    "expected at most {MAX_SECONDS} seconds (0 for no limit)"
                ))
            }
        })?;
        Ok(Self {
            threads,
            target: (target > 0.0).then_some(target),
            rate_limit,
            max_execution_time: (max > 0).then(|| Duration::from_secs(max)),
            seed,
            seed_is_random,
            error_budget: props.get_opt(&ERROR_BUDGET)?,
            granularity: crate::observe::granularity(props)?,
            warmup: props.get(&crate::observe::WARMUP)?,
            start_at: match props.get_opt(&START_AT)? {
                None => None,
                Some(raw) => Some(
                    parse_start_at(&raw, std::time::SystemTime::now())
                        .map_err(|reason| props.invalid(START_AT.decl(), reason))?,
                ),
            },
            stop_grace: (grace > 0).then(|| Duration::from_secs(grace)),
        })
    }
}

/// A cloneable flag that asks every worker to stop after its current
/// operation: set it from a signal handler for Ctrl-C or SIGTERM.
#[derive(Clone, Debug, Default)]
pub struct StopSignal(Arc<AtomicBool>);

impl StopSignal {
    /// A signal not yet raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the workers to stop.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was asked for.
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// What the status loop reports each interval.
#[derive(Debug)]
pub struct StatusUpdate<'a> {
    /// The phase running.
    pub phase: Phase,
    /// Time since the phase started.
    pub elapsed: Duration,
    /// Operations completed so far over all threads, as measured: the
    /// sum of every interval's `interval_operations`.
    pub operations: u64,
    /// Operations the phase will perform in all (0 when unbounded).
    pub total_operations: u64,
    /// Operations completed in this interval: the statuses its
    /// measurements counted (without VERIFY, CLEANUP and intended
    /// latency), so that the sections' counts add up to it.
    pub interval_operations: u64,
    /// The length of this interval.
    pub interval_length: Duration,
    /// The interval's measurements.
    pub interval: &'a IntervalSnapshot,
    /// The store's engine gauges at the end of the interval.
    pub gauges: &'a [Gauge],
}

/// What the status loop reports each time-series interval.
#[derive(Debug)]
pub struct Tick<'a> {
    /// The phase running.
    pub phase: Phase,
    /// Time from the phase's start to the end of this interval.
    pub elapsed: Duration,
    /// The length of this interval (the last one, or the one closed by the
    /// end of a warm-up, may be shorter than the granularity).
    pub length: Duration,
    /// Operations completed so far over all threads.
    pub operations: u64,
    /// Operations the phase will perform in all (0 when unbounded).
    pub total_operations: u64,
    /// Whether this interval belongs to the warm-up.
    pub warmup: bool,
    /// The interval's measurements.
    pub snapshot: &'a TickSnapshot,
    /// The store's engine gauges at the end of the interval.
    pub gauges: &'a [Gauge],
}

/// Receives status updates and notices during a phase.
pub trait Observer {
    /// Called at every status interval on the thread that runs the phase.
    fn on_status(&mut self, update: &StatusUpdate<'_>);

    /// Called every time-series interval (`timeseries.granularity`) on the
    /// thread that runs the phase, before the status update of the same
    /// moment. The default ignores it.
    fn on_tick(&mut self, tick: &Tick<'_>) {
        let _ = tick;
    }

    /// Called for a notable event that is not an error of the whole phase
    /// (a load thread that gave up after a failed insert). The default
    /// ignores it.
    fn on_notice(&mut self, notice: &str) {
        let _ = notice;
    }

    /// Called when a stopped phase's grace period (`stop.grace`) passed
    /// and some client threads are still inside store calls, with the
    /// figures measured so far (what the stuck threads had not yet
    /// published is missing) and where each stuck thread waits. The
    /// phase then goes on waiting for them: an observer that cannot wait
    /// (a program whose store may never return) reports and ends the
    /// process here. The default ignores it.
    fn on_workers_stuck(&mut self, stuck: &mut StuckWorkers) {
        let _ = stuck;
    }
}

/// A stopped phase whose client threads did not all return within the
/// grace period.
#[derive(Debug)]
#[non_exhaustive]
pub struct StuckWorkers {
    /// The phase's figures so far, as if it had ended now.
    pub outcome: PhaseOutcome,
    /// The threads still inside a store call.
    pub threads: Vec<StuckThread>,
    /// How long the phase waited for them after it was stopped.
    pub waited: Duration,
}

/// A client thread that did not return from the store.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StuckThread {
    /// The client thread (0-based).
    pub thread: usize,
    /// Operations it completed.
    pub operations: u64,
    /// Where it waits, as Linux tells (`/proc/self/task/<tid>/wchan` and
    /// `syscall`), or `None` where it cannot be read.
    pub waiting_in: Option<String>,
}

impl std::fmt::Display for StuckThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "client thread {} is still inside a store call after {} operations",
            self.thread, self.operations
        )?;
        if let Some(at) = &self.waiting_in {
            write!(f, " ({at})")?;
        }
        Ok(())
    }
}

/// An observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Observer for Silent {
    fn on_status(&mut self, _: &StatusUpdate<'_>) {}
}

/// An error that prevented a phase from running.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The workload could not be set up.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A store thread could not be created (for example, a refused
    /// connection); the phase stopped.
    #[error("thread {thread}: {source}")]
    StoreThread {
        /// The client thread.
        thread: usize,
        /// The store's error.
        #[source]
        source: StoreError,
    },
    /// A worker thread panicked (a bug in a store binding or in ycsb-core).
    #[error("thread {thread} panicked: {message}")]
    Panicked {
        /// The client thread.
        thread: usize,
        /// The panic message.
        message: String,
    },
}

/// The result of a phase.
#[derive(Debug)]
#[non_exhaustive]
pub struct PhaseOutcome {
    /// The phase.
    pub phase: Phase,
    /// The figures, as the report prints them.
    pub report: PhaseReport,
    /// Operations completed over all threads.
    pub operations: u64,
    /// Wall-clock time of the phase.
    pub runtime: Duration,
    /// Whether the phase was stopped before completing its operations by
    /// the stop signal (or a spent error budget).
    pub interrupted: bool,
    /// Whether the phase ended because `maxexecutiontime` passed: the
    /// normal end of a time-limited phase, not an interruption.
    pub time_limit_reached: bool,
    /// Errors of individual threads, which stopped those threads but not
    /// the phase; the report covers what was measured.
    pub thread_errors: Vec<RunError>,
    /// `Some(failed operations)` when the phase stopped because more
    /// operations failed than [`RunnerSettings::error_budget`] allows.
    pub error_budget_spent: Option<u64>,
    /// Where the run phase's warm-up ended; the report covers only what
    /// came after (`operations` and `runtime` above cover the whole phase).
    pub warmup: Option<WarmupSummary>,
}

/// A progress counter alone in its cache line, so that the owning worker's
/// stores never contend with another worker's.
#[repr(align(128))]
#[derive(Default)]
struct Progress(AtomicU64);

/// Runs one phase of `workload` on `store` with `threads` client threads.
///
/// The load phase inserts this client's share of the records
/// (`insertstart`, `insertcount`); the run phase performs `operationcount`
/// operations (0: until the time limit or the stop signal). Threads split
/// the work as Java YCSB does (earlier threads take the remainder).
///
/// # Errors
///
/// A [`RunError`] when no thread could run at all; errors of single
/// threads are listed in [`PhaseOutcome::thread_errors`].
pub fn run_phase(
    phase: Phase,
    workload: &CoreWorkload,
    store: &dyn Store,
    settings: &RunnerSettings,
    measurement: &MeasurementSettings,
    stop: &StopSignal,
    observer: &mut dyn Observer,
) -> Result<PhaseOutcome, RunError> {
    let threads = settings.threads;
    let total_operations = match phase {
        Phase::Load => workload.insert_count(),
        Phase::Run => workload.operation_count(),
    };
    // Build every thread's workload state up front: parameter errors
    // surface before any thread starts.
    let seed = phase_seed(phase, settings.seed);
    let mut states = Vec::with_capacity(threads);
    for thread in 0..threads {
        states.push(workload.thread(thread, threads, seed)?);
    }
    let shared = Shared::new(settings, measurement, threads);
    // The workers watch the phase's own signal, which the status loop
    // raises for the caller's signal, the time limit or the error budget:
    // the time limit then ends this phase without stopping the session.
    let phase_stop = StopSignal::new();
    let stop_for_workers = &phase_stop;
    let tick = settings
        .target
        .map(|t| Duration::from_secs_f64(threads as f64 / t));
    let start = Instant::now();

    let ended = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (thread, state) in states.into_iter().enumerate() {
            let count = match phase {
                Phase::Load => state.load_remaining(),
                Phase::Run => {
                    let share = split_range(0, total_operations, thread, threads);
                    share.end.saturating_sub(share.start)
                }
            };
            let worker = Worker {
                phase,
                thread,
                threads,
                count,
                unbounded: match phase {
                    Phase::Load => workload.loads_until_stopped(),
                    Phase::Run => total_operations == 0,
                },
                tick,
                rate_limit: match phase {
                    // As YCSB-cpp: the load phase is never limited.
                    Phase::Load => None,
                    Phase::Run => settings.rate_limit.as_ref(),
                },
                start,
                state,
                store,
                stop: stop_for_workers,
                measurements: &shared.measurements,
                progress: &shared.progress[thread],
                tid: &shared.tids[thread],
                finished: &shared.finished,
                watcher: std::thread::current(),
                errors: &shared.errors,
                notices: &shared.notices,
                budget: shared.budget.as_ref(),
            };
            if let Some(handle) = worker.spawn(scope) {
                handles.push((thread, handle));
            }
        }
        let (ending, warmup_end) = status_loop(StatusLoop {
            phase,
            status_interval: measurement.status_interval,
            store,
            settings,
            measurements: &shared.measurements,
            progress: &shared.progress,
            finished: &shared.finished,
            notices: &shared.notices,
            threads: threads as u64,
            total_operations,
            start,
            stop,
            phase_stop: stop_for_workers,
            observer: &mut *observer,
            budget: shared.budget.as_ref(),
            warmup: if phase == Phase::Run {
                settings.warmup
            } else {
                Warmup::None
            },
        });
        if let (Some(grace), Some(stopped)) = (settings.stop_grace, ending.stopped_at) {
            watch_stopped_workers(
                &handles,
                (ending, warmup_end, stopped, grace),
                &shared,
                phase,
                settings,
                start,
                &phase_stop,
                observer,
            );
        }
        Ended {
            ending,
            warmup_end,
            last_end: join(handles, &shared.errors),
        }
    });
    shared.outcome(phase, settings, start, ended, &phase_stop, observer)
}

/// Waits until `grace` (`stop.grace`) has passed since the phase stopped
/// for its workers; those still running then are inside a store call
/// that does not return: the observer gets the figures so far and where
/// each one waits.
#[allow(clippy::too_many_arguments)]
fn watch_stopped_workers(
    handles: &[(usize, ScopedJoinHandle<'_, Instant>)],
    (ending, warmup_end, stopped, grace): (
        status::PhaseEnding,
        Option<(Duration, u64)>,
        Instant,
        Duration,
    ),
    shared: &Shared,
    phase: Phase,
    settings: &RunnerSettings,
    start: Instant,
    stop: &StopSignal,
    observer: &mut dyn Observer,
) {
    let running = |handles: &[(usize, ScopedJoinHandle<'_, Instant>)]| {
        handles
            .iter()
            .filter(|(_, h)| !h.is_finished())
            .map(|(thread, _)| *thread)
            .collect::<Vec<_>>()
    };
    while !running(handles).is_empty() && stopped.elapsed() < grace {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stuck = running(handles);
    if stuck.is_empty() {
        return;
    }
    let threads: Vec<StuckThread> = stuck
        .into_iter()
        .map(|thread| StuckThread {
            thread,
            operations: shared.progress[thread].0.load(Ordering::Relaxed),
            waiting_in: waiting_in(shared.tids[thread].load(Ordering::Relaxed)),
        })
        .collect();
    let so_far = Ended {
        ending,
        warmup_end,
        last_end: Some(Instant::now()),
    };
    if let Ok(outcome) = shared.outcome(phase, settings, start, so_far, stop, &mut Silent) {
        observer.on_workers_stuck(&mut StuckWorkers {
            outcome,
            threads,
            waited: stopped.elapsed(),
        });
    }
}

/// Where the Linux thread `tid` of this process waits: the kernel
/// function it sleeps in and the system call it made (numbers as
/// `/proc/self/task/<tid>/syscall` gives them), or `None` where that
/// cannot be read.
fn waiting_in(tid: i32) -> Option<String> {
    if tid <= 0 {
        return None;
    }
    let task = format!("/proc/self/task/{tid}");
    let wchan = std::fs::read_to_string(format!("{task}/wchan")).ok();
    let syscall = std::fs::read_to_string(format!("{task}/syscall")).ok();
    let mut parts = Vec::new();
    if let Some(w) = wchan.filter(|w| !w.is_empty() && w != "0") {
        parts.push(format!("waiting in the kernel at {w}"));
    }
    match syscall.as_deref().map(str::trim) {
        Some("running") => parts.push("running, not in a system call".to_string()),
        Some(s) => {
            if let Some(n) = s.split_whitespace().next().filter(|n| *n != "-1") {
                parts.push(format!("system call {n}"));
            }
        }
        None => {}
    }
    (!parts.is_empty()).then(|| format!("Linux thread {tid}: {}", parts.join(", ")))
}

/// The random streams of run-phase worker `thread_id` under `seed`: the
/// one of its operation and field choices, and its key chooser's. Not API:
/// see [`crate::internals`] (a direct-engine loop draws from them to ask
/// the engine for the very keys, reads and updates a run asks for).
#[doc(hidden)]
pub fn run_streams(
    seed: u64,
    thread_id: usize,
) -> (crate::generator::Rng64, crate::generator::Rng64) {
    let seed = phase_seed(Phase::Run, seed);
    let (choices, keys) = crate::workload::thread_streams(thread_id);
    (
        crate::generator::seeded_rng(seed, choices),
        crate::generator::seeded_rng(seed, keys),
    )
}

/// The seed of a phase's random streams: different phases draw from
/// different streams of the same seed.
fn phase_seed(phase: Phase, seed: u64) -> u64 {
    seed ^ match phase {
        Phase::Load => 0x4C4F_4144_0000_0000,
        Phase::Run => 0x5255_4E00_0000_0000,
    }
}

/// What a phase's workers share with each other and with the status loop.
struct Shared {
    measurements: Measurements,
    progress: Vec<Progress>,
    /// Each worker's Linux thread id, set once as it starts (0 before),
    /// for naming where a stuck one waits.
    tids: Vec<std::sync::atomic::AtomicI32>,
    /// The number of workers that ended.
    finished: AtomicU64,
    errors: Mutex<Vec<RunError>>,
    notices: Mutex<Vec<String>>,
    budget: Option<ErrorBudget>,
}

/// How the phase's threads ended.
struct Ended {
    /// Whether the phase was cut short, or reached its time limit.
    ending: status::PhaseEnding,
    /// Where the warm-up ended (time since the start, operations by then).
    warmup_end: Option<(Duration, u64)>,
    /// When the last worker ended; `None` when none ran.
    last_end: Option<Instant>,
}

impl Shared {
    fn new(settings: &RunnerSettings, measurement: &MeasurementSettings, threads: usize) -> Self {
        // Workers publish ten times per status interval; with a finer time
        // series, ten times per series interval, so rows are not lumpy.
        let measurements = match settings.granularity {
            Some(g) if g < measurement.status_interval => {
                let mut finer = measurement.clone();
                finer.status_interval = g;
                Measurements::new(&finer, threads)
            }
            _ => Measurements::new(measurement, threads),
        };
        Self {
            measurements,
            progress: (0..threads).map(|_| Progress::default()).collect(),
            tids: (0..threads)
                .map(|_| std::sync::atomic::AtomicI32::new(0))
                .collect(),
            finished: AtomicU64::new(0),
            errors: Mutex::new(Vec::new()),
            notices: Mutex::new(Vec::new()),
            budget: settings
                .error_budget
                .map(|limit| ErrorBudget::new(limit, settings.threads)),
        }
    }

    /// Assembles the phase's outcome once every worker has ended: passes
    /// the workers' notices on, and reports the figures of what came after
    /// the warm-up.
    fn outcome(
        &self,
        phase: Phase,
        settings: &RunnerSettings,
        start: Instant,
        ended: Ended,
        stop: &StopSignal,
        observer: &mut dyn Observer,
    ) -> Result<PhaseOutcome, RunError> {
        // As Java's: from the start to the last client thread's end. The
        // status loop notices the end only at its next nap's end (up to
        // 20 ms later), which is not the phase's time.
        let runtime = ended
            .last_end
            .map_or_else(|| start.elapsed(), |end| end.duration_since(start));
        if let Some(budget) = &self.budget {
            // The last failures may have come after the status loop's last
            // sweep; a budget spent then still fails the phase.
            budget.check(stop);
        }
        let operations = completed(&self.progress);
        for notice in lock(&self.notices).iter() {
            observer.on_notice(notice);
        }
        let mut thread_errors = std::mem::take(&mut *lock(&self.errors));
        if !thread_errors.is_empty() && thread_errors.len() == settings.threads && operations == 0 {
            // No thread ran at all: the phase failed as a whole.
            return Err(thread_errors.swap_remove(0));
        }
        let (measured_runtime, measured_operations) = match (ended.warmup_end, settings.warmup) {
            (Some((at, ops)), _) => (runtime.saturating_sub(at), operations.saturating_sub(ops)),
            (None, w) if phase == Phase::Run && w != Warmup::None => {
                observer.on_notice(&format!(
                    "the run phase ended during its warm-up ({w}): the final figures cover no operations"
                ));
                // Take in the last publications first: all of it was warm-up.
                let _ = self.measurements.take_interval();
                self.measurements.discard_totals();
                (Duration::ZERO, 0)
            }
            _ => (runtime, operations),
        };
        let report = self
            .measurements
            .summary(phase.name(), measured_runtime, measured_operations);
        Ok(PhaseOutcome {
            phase,
            report,
            operations,
            runtime,
            interrupted: ended.ending.interrupted,
            time_limit_reached: ended.ending.time_limit_reached,
            thread_errors,
            error_budget_spent: self
                .budget
                .as_ref()
                .filter(|b| b.is_spent())
                .map(ErrorBudget::failures),
            warmup: ended.warmup_end.map(|(at, ops)| WarmupSummary {
                end_s: at.as_secs_f64(),
                operations: ops,
            }),
        })
    }
}

/// Waits for the workers; a panic becomes the thread's error. Returns when
/// the last one ended.
fn join(
    handles: Vec<(usize, ScopedJoinHandle<'_, Instant>)>,
    errors: &Mutex<Vec<RunError>>,
) -> Option<Instant> {
    let mut last_end = None;
    for (thread, handle) in handles {
        match handle.join() {
            Ok(end) => last_end = last_end.max(Some(end)),
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                lock(errors).push(RunError::Panicked { thread, message });
            }
        }
    }
    last_end
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned list of messages is still a list of messages.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
