//! The phase's stop signal as seen from inside a worker thread, for the
//! waits of the workload itself: an insert retried after a failure
//! (`core_workload_insertion_retry_interval`, seconds apiece) must give up
//! as soon as the phase is asked to stop (Ctrl-C, SIGTERM, the time limit
//! or a spent error budget), not after its last retry.
//!
//! The runner enters the scope at the start of each worker thread; only
//! the failure path reads it, so the operations that succeed pay nothing.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use super::StopSignal;

thread_local! {
    static PHASE_STOP: RefCell<Option<StopSignal>> = const { RefCell::new(None) };
}

/// Makes `stop` this thread's phase stop signal until dropped.
pub(crate) struct Scope(());

impl Drop for Scope {
    fn drop(&mut self) {
        PHASE_STOP.with(|s| *s.borrow_mut() = None);
    }
}

/// Enters the phase's stop scope on this thread.
pub(crate) fn enter(stop: &StopSignal) -> Scope {
    PHASE_STOP.with(|s| *s.borrow_mut() = Some(stop.clone()));
    Scope(())
}

/// Whether the phase this thread runs was asked to stop (false outside a
/// phase).
pub(crate) fn stopped() -> bool {
    PHASE_STOP.with(|s| s.borrow().as_ref().is_some_and(StopSignal::is_stopped))
}

/// Sleeps for `wait`, returning early once the phase is asked to stop.
pub(crate) fn pause(wait: Duration) {
    // Short naps: a stop is noticed within 20 ms, as the status loop does.
    let end = Instant::now() + wait;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() || stopped() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_ends_when_the_phase_stops() {
        let stop = StopSignal::new();
        let scope = enter(&stop);
        assert!(!stopped());
        let raiser = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                stop.stop();
            })
        };
        let started = Instant::now();
        pause(Duration::from_secs(600));
        // Not a timing assertion: returning at all (instead of after 600 s)
        // is the point; the bound only turns a hang into a failure.
        assert!(started.elapsed() < Duration::from_secs(60));
        assert!(stopped());
        raiser.join().unwrap();
        drop(scope);
        assert!(!stopped(), "the scope ends with its guard");
    }

    #[test]
    fn outside_a_phase_nothing_is_stopped_and_pauses_run_out() {
        assert!(!stopped());
        pause(Duration::from_millis(1));
    }
}
