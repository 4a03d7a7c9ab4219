//! The error budget: how many failed operations a phase tolerates before
//! it stops (`errorbudget`).
//!
//! A failure is an operation whose store call returned a status other than
//! `OK`, `BATCHED_OK` or `NOT_FOUND` (a read of a deleted key finding
//! nothing is a normal outcome, not a fault). Every attempt counts, so each
//! retry of a load insert is one failure. Integrity verification
//! (`VERIFY`) and `CLEANUP` are not store operations of the mix and are not
//! counted.
//!
//! Counting must not slow down the operations that succeed: each thread
//! counts its failures in its own memory and, only when an operation
//! fails, stores that count in its own cache line. A thread whose count
//! exceeds its share of the budget (`budget / threads`) sums every
//! thread's count at each further failure: if all threads are within their
//! share the total is within the budget, so the sum is needed only then.
//! The status loop also sums the counts every time it wakes (at most every
//! 20 ms), which catches a total spent by threads each within its share.
//!
//! Precision: the phase is asked to stop at the failure that spends the
//! budget, or at the status loop's next wake-up; threads then finish the
//! operation in progress, so the report may count a few more failures than
//! `errorbudget + 1` (at most the failures of the other threads' in-flight
//! operations and of one status-loop nap).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use ycsb_db::{
    Batch, Fields, ReadOp, Record, ScanOp, ScanResult, Status, StoreError, StoreThread, Visit,
};

use super::StopSignal;

/// Whether `status` counts against the error budget.
pub(crate) const fn is_failure(status: Status) -> bool {
    !status.is_ok() && !matches!(status, Status::NotFound)
}

/// One thread's failure count, alone in its cache line.
#[repr(align(128))]
#[derive(Default)]
struct Slot(AtomicU64);

/// The phase's error budget, shared by its threads.
pub(crate) struct ErrorBudget {
    limit: u64,
    share: u64,
    slots: Vec<Slot>,
    spent: AtomicBool,
}

impl ErrorBudget {
    /// A budget of `limit` failures over `threads` threads.
    pub(crate) fn new(limit: u64, threads: usize) -> Self {
        Self {
            limit,
            share: limit / threads.max(1) as u64,
            slots: (0..threads).map(|_| Slot::default()).collect(),
            spent: AtomicBool::new(false),
        }
    }

    /// Failures counted so far over all threads.
    pub(crate) fn failures(&self) -> u64 {
        self.slots.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }

    /// Stops the phase if the budget is spent; returns whether it is.
    pub(crate) fn check(&self, stop: &StopSignal) -> bool {
        if self.spent.load(Ordering::Relaxed) {
            return true;
        }
        if self.failures() > self.limit {
            self.spent.store(true, Ordering::Relaxed);
            stop.stop();
            return true;
        }
        false
    }

    /// Whether the budget was spent.
    pub(crate) fn is_spent(&self) -> bool {
        self.spent.load(Ordering::Relaxed)
    }

    /// Wraps one thread's store connection to count its failures.
    pub(crate) fn guard<'a, 'b>(
        &'a self,
        thread: usize,
        inner: &'a mut (dyn StoreThread + 'b),
        stop: &'a StopSignal,
    ) -> Guarded<'a, 'b> {
        Guarded {
            budget: self,
            slot: &self.slots[thread].0,
            inner,
            stop,
            failures: self.slots[thread].0.load(Ordering::Relaxed),
        }
    }
}

/// A thread's store connection that counts failed operations.
pub(crate) struct Guarded<'a, 'b> {
    budget: &'a ErrorBudget,
    slot: &'a AtomicU64,
    inner: &'a mut (dyn StoreThread + 'b),
    stop: &'a StopSignal,
    failures: u64,
}

impl Guarded<'_, '_> {
    #[inline]
    fn count(&mut self, status: Status) -> Status {
        if is_failure(status) {
            self.failed();
        }
        status
    }

    /// Counts each failed record of a batched call; the store's own batch
    /// call ran (the wrapper must not turn it into single calls).
    #[inline]
    fn count_batch(&mut self, statuses: &[Status], status: Status) -> Status {
        if is_failure(status) {
            for &record in statuses {
                if is_failure(record) {
                    self.failed();
                }
            }
        }
        status
    }

    #[cold]
    fn failed(&mut self) {
        self.failures += 1;
        self.slot.store(self.failures, Ordering::Relaxed);
        if self.failures > self.budget.share {
            self.budget.check(self.stop);
        }
    }
}

impl StoreThread for Guarded<'_, '_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        let status = self.inner.read(op, out);
        self.count(status)
    }

    fn read_in_place(&mut self, op: &ReadOp<'_>, buf: &mut Record, visit: &mut Visit) -> Status {
        let status = self.inner.read_in_place(op, buf, visit);
        self.count(status)
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        let status = self.inner.scan(op, out);
        self.count(status)
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        let status = self.inner.update(table, key, values);
        self.count(status)
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        let status = self.inner.insert(table, key, values);
        self.count(status)
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        let status = self.inner.delete(table, key);
        self.count(status)
    }

    fn insert_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        let status = self.inner.insert_batch(table, batch, statuses);
        self.count_batch(statuses, status)
    }

    fn update_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        let status = self.inner.update_batch(table, batch, statuses);
        self.count_batch(statuses, status)
    }

    fn read_batch(
        &mut self,
        table: &str,
        batch: &Batch,
        fields: Fields<'_>,
        out: &mut [Record],
        statuses: &mut [Status],
    ) -> Status {
        let status = self.inner.read_batch(table, batch, fields, out, statuses);
        self.count_batch(statuses, status)
    }

    fn delete_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        let status = self.inner.delete_batch(table, batch, statuses);
        self.count_batch(statuses, status)
    }

    fn cleanup(&mut self) -> Result<(), StoreError> {
        self.inner.cleanup()
    }

    fn last_error(&self) -> Option<&str> {
        self.inner.last_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store thread answering every operation with one status, and
    /// saying why it failed if it was given a reason.
    struct Answer(Status, Option<&'static str>);

    #[test]
    fn the_wrapper_passes_the_stores_last_error_on() {
        let budget = ErrorBudget::new(10, 1);
        let stop = StopSignal::new();
        let mut inner = Answer(Status::Error, Some("disk full"));
        let mut db = budget.guard(0, &mut inner, &stop);
        db.insert("t", "k", &Record::new());
        assert_eq!(db.last_error(), Some("disk full"));
    }

    impl StoreThread for Answer {
        fn read(&mut self, _: &ReadOp<'_>, _: &mut Record) -> Status {
            self.0
        }
        fn scan(&mut self, _: &ScanOp<'_>, _: &mut ScanResult) -> Status {
            self.0
        }
        fn update(&mut self, _: &str, _: &str, _: &Record) -> Status {
            self.0
        }
        fn insert(&mut self, _: &str, _: &str, _: &Record) -> Status {
            self.0
        }
        fn delete(&mut self, _: &str, _: &str) -> Status {
            self.0
        }
        fn last_error(&self) -> Option<&str> {
            self.1
        }
    }

    #[test]
    fn which_statuses_count() {
        for status in Status::ALL {
            let expected = !matches!(status, Status::Ok | Status::BatchedOk | Status::NotFound);
            assert_eq!(is_failure(status), expected, "{status}");
        }
    }

    #[test]
    fn one_thread_stops_at_the_failure_that_spends_the_budget() {
        let budget = ErrorBudget::new(5, 1);
        let stop = StopSignal::new();
        let mut inner = Answer(Status::Error, None);
        let mut db = budget.guard(0, &mut inner, &stop);
        for i in 1..=5 {
            assert_eq!(db.delete("t", "k"), Status::Error);
            assert!(!stop.is_stopped(), "stopped after {i} failures");
        }
        db.read(&ReadOp::new("t", "k", Fields::All), &mut Record::new());
        assert!(stop.is_stopped());
        assert!(budget.is_spent());
        assert_eq!(budget.failures(), 6);
    }

    #[test]
    fn failed_reads_in_place_spend_it_too() {
        let budget = ErrorBudget::new(0, 1);
        let stop = StopSignal::new();
        let mut inner = Answer(Status::Error, None);
        let mut db = budget.guard(0, &mut inner, &stop);
        let status = db.read_in_place(
            &ReadOp::new("t", "k", Fields::All),
            &mut Record::new(),
            &mut |_| panic!("a failed read shows no record"),
        );
        assert_eq!(status, Status::Error);
        assert!(stop.is_stopped());
        assert_eq!(budget.failures(), 1);
    }

    #[test]
    fn successes_and_not_found_never_spend_it() {
        let budget = ErrorBudget::new(0, 1);
        let stop = StopSignal::new();
        for status in [Status::Ok, Status::BatchedOk, Status::NotFound] {
            let mut inner = Answer(status, None);
            let mut db = budget.guard(0, &mut inner, &stop);
            for _ in 0..100 {
                db.update("t", "k", &Record::new());
                db.scan(
                    &ScanOp::new("t", "k", 3, Fields::All),
                    &mut ScanResult::new(),
                );
            }
        }
        assert!(!stop.is_stopped());
        assert_eq!(budget.failures(), 0);
    }

    #[test]
    fn failures_spread_within_shares_are_caught_by_the_sweep() {
        // 4 threads, budget 10: a share of 2 each. Thread 0 fails 5 times
        // early (summing at its 3rd, 4th and 5th failure: 3, 4, 5), then
        // the other threads fail twice each, within their shares, so none
        // of them sums: the total of 11 is caught by the status loop's
        // sweep (`check`).
        let budget = ErrorBudget::new(10, 4);
        let stop = StopSignal::new();
        let mut inners: Vec<Answer> = (0..4)
            .map(|_| Answer(Status::ServiceUnavailable, None))
            .collect();
        let failures = [5, 2, 2, 2];
        for (thread, inner) in inners.iter_mut().enumerate() {
            let mut db = budget.guard(thread, inner, &stop);
            for _ in 0..failures[thread] {
                db.insert("t", "k", &Record::new());
            }
        }
        assert_eq!(budget.failures(), 11);
        assert!(
            !stop.is_stopped(),
            "no thread summed after the last failures"
        );
        assert!(budget.check(&stop));
        assert!(stop.is_stopped());
    }

    #[test]
    fn a_thread_beyond_its_share_sums_at_each_failure() {
        let budget = ErrorBudget::new(10, 4);
        let stop = StopSignal::new();
        let mut inners: Vec<Answer> = (0..4).map(|_| Answer(Status::Forbidden, None)).collect();
        for (thread, inner) in inners.iter_mut().enumerate().skip(1) {
            let mut db = budget.guard(thread, inner, &stop);
            db.delete("t", "k");
            db.delete("t", "k");
        }
        let mut db = budget.guard(0, &mut inners[0], &stop);
        for _ in 0..4 {
            db.delete("t", "k");
        }
        assert_eq!(budget.failures(), 10);
        assert!(!stop.is_stopped(), "10 failures are within a budget of 10");
        db.delete("t", "k");
        assert!(stop.is_stopped(), "the 11th failure spends it at once");
    }
}
