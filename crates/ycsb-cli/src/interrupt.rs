//! Ctrl-C and SIGTERM during `ycsb load|run`.
//!
//! The first signal asks the session to stop: the phase ends at the next
//! operation of each thread, its partial report and the export are written
//! and the exit status is 130. A second signal is for a run that does not
//! end (a store call that hangs): it ends the process at once, but never
//! silently about the export:
//!
//! - while the export is being written, it first lets that finish (up to
//!   [`EXPORT_GRACE`]), then exits with 130: the export is written;
//! - before the export (or when writing it takes longer), it says on
//!   standard error that the export was not written and exits with
//!   [`EXIT_ABANDONED`], and the session can no longer start writing it.
//!
//! The exit is `_exit(2)`: no destructors or `atexit` handlers run, since
//! an embedded engine's background threads are still working (RocksDB's
//! static destructors abort under them).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ycsb_core::StopSignal;

use crate::EXIT_INTERRUPTED;

/// Exit status after a second interrupt that ended the run before its
/// export was written.
pub(crate) const EXIT_ABANDONED: u8 = 3;

/// How long a second interrupt lets an export being written finish.
pub(crate) const EXPORT_GRACE: Duration = Duration::from_secs(10);

const RUNNING: u8 = 0;
const EXPORTING: u8 = 1;
const EXPORTED: u8 = 2;
const ABANDONED: u8 = 3;

/// Where the run is, shared by the signal handler and the session's
/// observer.
#[derive(Clone)]
pub(crate) struct Interrupts {
    stop: StopSignal,
    signalled: Arc<AtomicBool>,
    state: Arc<AtomicU8>,
    /// What is not written when the run is abandoned, for the message.
    unwritten: Arc<String>,
}

impl Interrupts {
    /// Installs the handler for Ctrl-C and SIGTERM. `unwritten` names
    /// what a second interrupt before the export leaves unwritten.
    pub(crate) fn install(stop: StopSignal, unwritten: String) -> Self {
        let me = Self {
            stop,
            signalled: Arc::new(AtomicBool::new(false)),
            state: Arc::new(AtomicU8::new(RUNNING)),
            unwritten: Arc::new(unwritten),
        };
        let handler = me.clone();
        let _ = ctrlc::set_handler(move || handler.on_signal());
        me
    }

    /// Whether a signal was received.
    pub(crate) fn signalled(&self) -> bool {
        self.signalled.load(Ordering::SeqCst)
    }

    fn on_signal(&self) {
        if !self.signalled.swap(true, Ordering::SeqCst) {
            self.stop.stop();
            return;
        }
        let deadline = Instant::now() + EXPORT_GRACE;
        while self.state.load(Ordering::SeqCst) == EXPORTING && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let abandoned = self
            .state
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |s| {
                (s != EXPORTED).then_some(ABANDONED)
            });
        match abandoned {
            Ok(EXPORTING) => eprintln!(
                "ycsb: interrupted again: exiting at once; the export was still being written after {} s and is not complete: {} not written (exit status {EXIT_ABANDONED})",
                EXPORT_GRACE.as_secs(),
                self.unwritten
            ),
            Ok(_) => eprintln!(
                "ycsb: interrupted again: exiting at once; {} not written (exit status {EXIT_ABANDONED})",
                self.unwritten
            ),
            Err(_) => {
                eprintln!("ycsb: interrupted again: exiting at once; the export is written");
                hard_exit(EXIT_INTERRUPTED);
            }
        }
        hard_exit(EXIT_ABANDONED);
    }

    /// The session is about to write the export. After a second interrupt
    /// has abandoned the run this never returns: the handler is ending the
    /// process, having said the export is not written.
    pub(crate) fn export_starting(&self) {
        if self
            .state
            .compare_exchange(RUNNING, EXPORTING, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            loop {
                std::thread::park();
            }
        }
    }

    /// The export is written (or failed, which the session reports).
    pub(crate) fn export_finished(&self) {
        if self
            .state
            .compare_exchange(EXPORTING, EXPORTED, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            loop {
                std::thread::park();
            }
        }
    }
}

/// Ends the process at once with `code` after flushing standard output,
/// running no destructor: for a store a thread is stuck inside (closing
/// it would wait for that thread).
pub fn exit_now(code: u8) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    hard_exit(code)
}

/// Ends the process now, without destructors or `atexit` handlers.
#[allow(unsafe_code)]
fn hard_exit(code: u8) -> ! {
    // SAFETY: _exit(2) ends the process; it has no preconditions.
    unsafe { libc::_exit(i32::from(code)) }
}
