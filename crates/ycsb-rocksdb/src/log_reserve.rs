//! Space kept for RocksDB's info LOG, so that a full disk cannot abort the
//! process.
//!
//! RocksDB before 9.1 built with assertions (Debian's 7.8.3) aborts when it
//! writes its info LOG again after a failed write to it
//! (`Assertion 'sync_without_flush_called_' failed`, facebook/rocksdb#12448),
//! and the first write that fails on a full disk logs the error to that LOG
//! several times, inside the failing `Put`. The binding therefore keeps
//! blocks allocated past the end of the LOG (`fallocate` with
//! `FALLOC_FL_KEEP_SIZE`, which leaves the file's length alone): RocksDB's
//! LOG writes land in them when the disk is full, the write fails with
//! RocksDB's own "No space left on device", and the store's write fence
//! stops further writes. The reserve is topped up every
//! [`TOP_UP_EVERY`] writes of each thread, and given back when the
//! database is closed.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Bytes kept allocated past the end of the LOG: far more than the lines
/// RocksDB logs about a failed write, its statistics dumps and flushes
/// between two top-ups.
pub(crate) const RESERVE: i64 = 1 << 20;

/// A thread tops up the reserve once per this many writes (a power of two).
pub(crate) const TOP_UP_EVERY: u32 = 4096;

/// The info LOG of a database whose LOG is in its own directory (no
/// `db_log_dir`).
#[derive(Debug)]
pub(crate) struct LogReserve {
    path: PathBuf,
}

impl LogReserve {
    pub(crate) fn new(db_dir: &Path) -> Self {
        Self {
            path: db_dir.join("LOG"),
        }
    }

    /// Allocates up to [`RESERVE`] bytes past the LOG's end. Best effort:
    /// a missing LOG (`db_log_dir` set by an options file) or a file
    /// system without `fallocate` leaves RocksDB's own behaviour.
    pub(crate) fn top_up(&self) {
        self.fallocate(libc::FALLOC_FL_KEEP_SIZE);
    }

    /// Gives the reserve back (the blocks past the LOG's end freed, as
    /// RocksDB does with its own preallocation), once RocksDB has closed
    /// the LOG.
    pub(crate) fn release(&self) {
        self.fallocate(libc::FALLOC_FL_KEEP_SIZE | libc::FALLOC_FL_PUNCH_HOLE);
    }

    fn fallocate(&self, mode: libc::c_int) {
        let Ok(file) = OpenOptions::new().write(true).open(&self.path) else {
            return;
        };
        let Ok(meta) = file.metadata() else { return };
        let Ok(end) = i64::try_from(meta.len()) else {
            return;
        };
        // SAFETY: fallocate(2) on a file descriptor this function owns;
        // with KEEP_SIZE it changes only which blocks past the end are
        // allocated, never the file's contents or length.
        unsafe {
            libc::fallocate(file.as_raw_fd(), mode, end, RESERVE);
        }
    }
}
