//! Timing of store calls: the per-operation path of measurement.

use std::time::{Duration, Instant};

use ycsb_db::Status;

use crate::clock::{Clock, Stamp};
use crate::measurement::Recorder;
use ycsb_results::Operation;

/// How many untimed operations (`measurement.clock=off`) pass between two
/// readings of the OS clock for [`Timing::last_end`]: often enough for the
/// recorder's publication against any store fast enough to be worth
/// running untimed, rarely enough to cost nothing per operation.
const UNTIMED_REFRESH: u32 = 64;

/// One thread's clock and the end of its last timed store call.
#[derive(Debug)]
pub(super) struct Timing {
    clock: Clock,
    last_end: Stamp,
    /// The service time of the last call [`Timing::measure`] timed.
    last_latency: u64,
    /// With an untimed clock: operations since `untimed_now` was read.
    untimed_ops: u32,
    untimed_now: Instant,
    /// Until this reading the recorder cannot be due to publish: see
    /// [`Timing::publish_if_due`].
    publish_check: Stamp,
}

/// How often, at most, [`Timing::publish_if_due`] asks the recorder.
/// Recorders publish every 50 ms or more, so this delays a publication by
/// at most 2 %.
const PUBLISH_CHECK_PERIOD: Duration = Duration::from_millis(1);

impl Timing {
    pub(super) fn new(clock: Clock) -> Self {
        Self {
            last_end: clock.now(),
            last_latency: 0,
            clock,
            untimed_ops: 0,
            untimed_now: Instant::now(),
            publish_check: Stamp::default(),
        }
    }

    /// Reads the clock.
    #[inline]
    pub(super) fn now(&self) -> Stamp {
        self.clock.now()
    }

    /// The service time, in nanoseconds, of the last call
    /// [`Timing::measure`] timed.
    #[inline]
    pub(super) fn last_latency(&self) -> u64 {
        self.last_latency
    }

    /// Nanoseconds since `start`.
    #[inline]
    pub(super) fn since(&self, start: Stamp) -> u64 {
        self.clock.nanos_between(start, self.clock.now())
    }

    /// When the last timed call ended, as an `Instant` (with an untimed
    /// clock, a reading of the OS clock at most [`UNTIMED_REFRESH`]
    /// operations old).
    #[inline]
    pub(super) fn last_end(&self) -> Instant {
        if self.clock.is_timing() {
            self.clock.instant(self.last_end)
        } else {
            self.untimed_now
        }
    }

    /// Times one store call and records it; with a target schedule
    /// (`intended_start`), also its latency from the intended start.
    /// Lets `recorder` publish if its period has passed, asking it at most
    /// every [`PUBLISH_CHECK_PERIOD`] of clock time: the recorder compares
    /// `Instant`s, and turning every operation's end reading into one cost
    /// more than the `basic` store's whole operation call.
    #[inline]
    pub(super) fn publish_if_due(&mut self, recorder: &mut Recorder) {
        if self.last_end >= self.publish_check {
            self.ask_recorder(recorder);
        }
    }

    #[cold]
    #[inline(never)]
    fn ask_recorder(&mut self, recorder: &mut Recorder) {
        recorder.publish_if_due(self.last_end());
        self.publish_check = self.clock.after(self.last_end, PUBLISH_CHECK_PERIOD);
    }

    #[inline]
    pub(super) fn measure(
        &mut self,
        recorder: &mut Recorder,
        operation: Operation,
        intended_start: Option<Instant>,
        call: impl FnOnce() -> Status,
    ) -> Status {
        let start = self.clock.now();
        let status = call();
        let end = self.clock.now();
        let latency = self.clock.nanos_between(start, end);
        recorder.record(operation, status, latency);
        // Without a target schedule the intended start is the actual start,
        // as in Java; the recorder ignores this unless intended latency is
        // on.
        let intended = match intended_start {
            Some(intended) => self.intended_latency(intended, end),
            None => latency,
        };
        recorder.record_intended(operation, status, intended);
        self.last_end = end;
        self.last_latency = latency;
        if !self.clock.is_timing() {
            self.untimed_tick();
        }
        status
    }

    /// Times one batched store call and records it: the call under its
    /// batch operation (`BATCH_INSERT`) with the batch's status, and each
    /// record under its own operation (`INSERT`) with its status from
    /// `statuses` and the batch's latency (the time until it was
    /// acknowledged); intended latencies likewise.
    #[inline]
    pub(super) fn measure_batch(
        &mut self,
        recorder: &mut Recorder,
        (batch_operation, record_operation): (Operation, Operation),
        intended_start: Option<Instant>,
        statuses: &mut [Status],
        call: impl FnOnce(&mut [Status]) -> Status,
    ) -> Status {
        let start = self.clock.now();
        let status = call(statuses);
        let end = self.clock.now();
        let latency = self.clock.nanos_between(start, end);
        let intended = match intended_start {
            Some(intended) => self.intended_latency(intended, end),
            None => latency,
        };
        recorder.record(batch_operation, status, latency);
        recorder.record_intended(batch_operation, status, intended);
        for &record_status in statuses.iter() {
            recorder.record(record_operation, record_status, latency);
            recorder.record_intended(record_operation, record_status, intended);
        }
        self.last_end = end;
        self.last_latency = latency;
        if !self.clock.is_timing() {
            self.untimed_tick();
        }
        status
    }

    /// Records the latency of a whole read-modify-write from `start` (a
    /// reading taken before its read) to the end of its update.
    pub(super) fn record_span(
        &self,
        recorder: &mut Recorder,
        operation: Operation,
        status: Status,
        intended_start: Option<Instant>,
        start: Stamp,
    ) {
        let latency = self.clock.nanos_between(start, self.last_end);
        recorder.record(operation, status, latency);
        let intended = match intended_start {
            Some(intended) => self.intended_latency(intended, self.last_end),
            None => latency,
        };
        recorder.record_intended(operation, status, intended);
    }

    fn intended_latency(&self, intended: Instant, end: Stamp) -> u64 {
        if self.clock.is_timing() {
            nanos(self.clock.instant(end).saturating_duration_since(intended))
        } else {
            0
        }
    }

    #[cold]
    fn untimed_refresh(&mut self) {
        self.untimed_ops = 0;
        self.untimed_now = Instant::now();
    }

    #[inline]
    fn untimed_tick(&mut self) {
        self.untimed_ops += 1;
        if self.untimed_ops >= UNTIMED_REFRESH {
            self.untimed_refresh();
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
