//! One client thread of a phase, and its target-rate schedule.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use ycsb_db::{Status, Store, StoreThread, ThreadContext};

use super::budget::ErrorBudget;
use super::rate_limit::{RateLimit, TokenBucket};
use super::{interrupt, lock, Phase, Progress, RunError, StopSignal};
use crate::measurement::{Measurements, Recorder};
use crate::workload::{InsertOutcome, WorkloadThread};
use ycsb_results::Operation;

/// This thread's Linux id, from `/proc/thread-self` (`<pid>/task/<tid>`);
/// 0 where there is none.
fn linux_thread_id() -> i32 {
    std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|link| link.file_name()?.to_str()?.parse().ok())
        .unwrap_or(0)
}

/// A client thread: its own workload state, and references to what it
/// shares with the other threads and the status loop (all written per
/// operation is its progress counter, alone in its cache line).
pub(super) struct Worker<'a> {
    pub(super) phase: Phase,
    pub(super) thread: usize,
    pub(super) threads: usize,
    /// Operations to perform, unless `unbounded`.
    pub(super) count: u64,
    /// A run phase without `operationcount` runs until stopped.
    pub(super) unbounded: bool,
    /// The time between this thread's operations under a target rate.
    pub(super) tick: Option<Duration>,
    /// YCSB-cpp's rate limit (`limit.ops`, `limit.file`), run phase only.
    pub(super) rate_limit: Option<&'a RateLimit>,
    /// When the phase started: the rate limit's times count from it.
    pub(super) start: Instant,
    pub(super) state: WorkloadThread<'a>,
    pub(super) store: &'a dyn Store,
    pub(super) stop: &'a StopSignal,
    pub(super) measurements: &'a Measurements,
    pub(super) progress: &'a Progress,
    /// Where the thread's Linux id goes, for the stop watchdog.
    pub(super) tid: &'a std::sync::atomic::AtomicI32,
    /// Counts the threads that ended, for the status loop.
    pub(super) finished: &'a AtomicU64,
    /// The status loop's thread, woken when this one ends so that a phase
    /// ends when its last thread does, not at the loop's next nap's end.
    pub(super) watcher: std::thread::Thread,
    pub(super) errors: &'a Mutex<Vec<RunError>>,
    pub(super) notices: &'a Mutex<Vec<String>>,
    pub(super) budget: Option<&'a ErrorBudget>,
}

impl<'a> Worker<'a> {
    /// Starts the worker on its own named thread. A thread that cannot be
    /// started is listed as an error and counted as finished, so that the
    /// status loop does not wait for it.
    pub(super) fn spawn<'scope>(
        self,
        scope: &'scope Scope<'scope, 'a>,
    ) -> Option<ScopedJoinHandle<'scope, Instant>> {
        let (thread, errors, finished) = (self.thread, self.errors, self.finished);
        let spawned = std::thread::Builder::new()
            .name(format!("ycsb-client-{thread}"))
            .spawn_scoped(scope, move || self.run());
        match spawned {
            Ok(handle) => Some(handle),
            Err(e) => {
                lock(errors).push(RunError::Panicked {
                    thread,
                    message: format!("could not start thread: {e}"),
                });
                finished.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// The thread's life: opens its store thread, performs its operations,
    /// cleans up and publishes its last measurements. Returns when it
    /// ended: the phase's runtime ends with its last thread.
    fn run(mut self) -> Instant {
        self.tid.store(linux_thread_id(), Ordering::Relaxed);
        let _stop_scope = interrupt::enter(self.stop);
        let mut recorder = self.measurements.recorder(self.thread);
        let context = ThreadContext::new(self.thread, self.threads);
        let mut db_box = match self.store.thread(context) {
            Ok(db) => db,
            Err(source) => {
                lock(self.errors).push(RunError::StoreThread {
                    thread: self.thread,
                    source,
                });
                self.finished.fetch_add(1, Ordering::Relaxed);
                self.watcher.unpark();
                return Instant::now();
            }
        };
        // Only with a budget does each call go through the counting
        // wrapper; without one the path is unchanged.
        let mut guarded;
        let db: &mut dyn StoreThread = match self.budget {
            Some(budget) => {
                guarded = budget.guard(self.thread, &mut *db_box, self.stop);
                &mut guarded
            }
            None => &mut *db_box,
        };
        self.operate(db, &mut recorder);
        self.state.finish();
        self.clean_up(db, &mut recorder);
        recorder.publish();
        drop(db_box);
        let end = Instant::now();
        self.finished.fetch_add(1, Ordering::Release);
        self.watcher.unpark();
        end
    }

    /// The per-operation loop, until the thread's share is done or the
    /// phase is asked to stop. The settings it reads per operation are
    /// copied to locals first, so that they stay in registers across the
    /// store calls.
    fn operate(&mut self, db: &mut dyn StoreThread, recorder: &mut Recorder) {
        let (phase, count, unbounded) = (self.phase, self.count, self.unbounded);
        let (stop, progress) = (self.stop, self.progress);
        let mut schedule = self
            .tick
            .map(|tick| Schedule::new(tick, self.thread, self.threads));
        let mut bucket = self
            .rate_limit
            .map(|limit| TokenBucket::new(limit, self.threads, self.start));
        let state = &mut self.state;
        let mut done: u64 = 0;
        let mut insert_notices = InsertNotices::default();
        let keep_going = state.workload().keeps_going_on_error();
        let retry_limit = state.workload().insertion_retry_limit();
        let batch_size = state.workload().batch_size() as u64;
        if phase == Phase::Run && batch_size <= 1 && schedule.is_none() && bucket.is_none() {
            // The usual run phase (one operation a call, no target rate):
            // what the loop below does then, without the per-operation
            // tests of the cases that do not apply (a tenth of a read's
            // client instructions against LMDB, cachegrind).
            let limit = if unbounded { u64::MAX } else { count };
            while done < limit && !stop.is_stopped() {
                state.do_transaction(&mut *db, recorder, None);
                done += 1;
                progress.0.store(done, Ordering::Relaxed);
                state.publish_if_due(recorder);
            }
            return;
        }
        while (unbounded || done < count) && !stop.is_stopped() {
            // Records of this call: a batch (`batch.size`) never goes past
            // the thread's share.
            let records = if unbounded {
                batch_size
            } else {
                batch_size.min(count - done)
            };
            let intended = schedule
                .as_mut()
                .map(|schedule| schedule.wait_next(records));
            if let Some(bucket) = bucket.as_mut() {
                for _ in 0..records {
                    bucket.acquire();
                }
                if stop.is_stopped() {
                    break;
                }
            }
            let mut performed = 1;
            match phase {
                Phase::Load => {
                    let thread = self.thread;
                    let notices = &mut insert_notices;
                    let mut retrying = |retry| {
                        notices.push(self.notices, thread, || {
                            format!("Retrying insertion, retry count: {retry}")
                        });
                    };
                    let outcome = if batch_size > 1 {
                        let (outcome, inserted) =
                            state.do_insert_batch(&mut *db, recorder, &mut retrying, records);
                        performed = inserted;
                        outcome
                    } else {
                        state.do_insert(&mut *db, recorder, &mut retrying)
                    };
                    match outcome {
                        InsertOutcome::Inserted => {}
                        // Retries that gave up because the phase stops are
                        // no failure of the store.
                        InsertOutcome::Failed { .. } if stop.is_stopped() => break,
                        InsertOutcome::Failed { attempts } => {
                            insert_notices.push(self.notices, thread, || {
                                insert_failed(&*db, attempts, retry_limit, keep_going, done)
                            });
                            if !keep_going {
                                break;
                            }
                        }
                        InsertOutcome::DataFileChanged => {
                            lock(self.notices).push(format!(
                                "thread {thread}: the datafile changed since it was checked; this load thread stops after {done} records"
                            ));
                            break;
                        }
                    }
                }
                Phase::Run if batch_size > 1 => {
                    (_, performed) =
                        state.do_transaction_batch(&mut *db, recorder, intended, records);
                }
                Phase::Run => {
                    state.do_transaction(&mut *db, recorder, intended);
                }
            }
            done += performed;
            progress.0.store(done, Ordering::Relaxed);
            state.publish_if_due(recorder);
        }
    }

    /// Ends the store thread's work, measured as Java's CLEANUP operation
    /// (a store may flush buffered writes here).
    fn clean_up(&self, db: &mut dyn StoreThread, recorder: &mut Recorder) {
        let cleanup_start = Instant::now();
        let status = match db.cleanup() {
            Ok(()) => Status::Ok,
            Err(e) => {
                lock(self.notices).push(format!("thread {}: cleanup failed: {e}", self.thread));
                Status::Error
            }
        };
        let cleanup_ns = u64::try_from(cleanup_start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        recorder.record(Operation::Cleanup, status, cleanup_ns);
        // Java's DBWrapper measures CLEANUP's intended latency too (an
        // Intended-CLEANUP section with measurement.interval=both); no
        // schedule applies to it, so it is the service time.
        recorder.record_intended(Operation::Cleanup, status, cleanup_ns);
    }
}

/// Most messages about failed or retried inserts one thread shows: Java
/// prints one line per retry and per failed insert, which a dead store
/// with retries or `core_workload_insertion_keep_going_on_error` turns
/// into a flood; the report counts every one of them.
const INSERT_NOTICES_PER_THREAD: u32 = 10;

/// A thread's messages about failed and retried inserts, up to
/// [`INSERT_NOTICES_PER_THREAD`] and then one line saying the rest are
/// not shown.
#[derive(Default)]
struct InsertNotices {
    shown: u32,
}

impl InsertNotices {
    #[cold]
    fn push(&mut self, notices: &Mutex<Vec<String>>, thread: usize, text: impl FnOnce() -> String) {
        if self.shown > INSERT_NOTICES_PER_THREAD {
            return;
        }
        let line = if self.shown == INSERT_NOTICES_PER_THREAD {
            format!(
                "thread {thread}: further failed or retried inserts are not shown one by one (the report's [INSERT], Return= lines count them)"
            )
        } else {
            format!("thread {thread}: {}", text())
        };
        self.shown += 1;
        lock(notices).push(line);
    }
}

/// What a load thread says when an insert failed for good: Java's words
/// ("Error inserting, not retrying any more. number of attempts: ...")
/// with the store's own explanation when it has one, and whether the
/// thread goes on.
#[cold]
fn insert_failed(
    db: &dyn StoreThread,
    attempts: u64,
    retry_limit: u64,
    keep_going: bool,
    done: u64,
) -> String {
    let cause = db
        .last_error()
        .map(|e| format!(" (the store said: {e})"))
        .unwrap_or_default();
    let next = if keep_going {
        "going on to the next record (core_workload_insertion_keep_going_on_error)".to_string()
    } else {
        format!("this load thread stops (as in Java YCSB) after {done} records")
    };
    format!(
        "Error inserting, not retrying any more. number of attempts: {attempts}, Insertion Retry Limit: {retry_limit}{cause}; {next}"
    )
}

/// Open-loop scheduling at a fixed rate: operation `k` of a thread is due
/// at `start + offset + k * tick` whether or not earlier operations were
/// late, so a stalled store shows its real effect on latency (coordinated
/// omission) instead of silently lowering the offered load.
struct Schedule {
    next: Instant,
    tick: Duration,
}

impl Schedule {
    fn new(tick: Duration, thread: usize, threads: usize) -> Self {
        // Spread the threads' due times evenly over one tick so that they
        // do not all fire at once.
        let offset = tick.mul_f64(thread as f64 / threads.max(1) as f64);
        Self {
            next: Instant::now() + offset,
            tick,
        }
    }

    /// Waits until the next operation is due and returns its intended
    /// start; the next is due `operations` ticks later (a batch of that
    /// many records takes their share of the rate).
    fn wait_next(&mut self, operations: u64) -> Instant {
        let due = self.next;
        self.next += self.tick * u32::try_from(operations).unwrap_or(u32::MAX);
        loop {
            let now = Instant::now();
            if now >= due {
                return due;
            }
            let left = due - now;
            // Sleeping has a granularity of tens of microseconds; sleep
            // most of the wait and spin the rest for an accurate rate.
            if left > Duration::from_micros(200) {
                std::thread::sleep(left - Duration::from_micros(100));
            } else {
                std::hint::spin_loop();
            }
        }
    }
}
