//! The SIGKILL durability and lock kit: both sides of a test that kills a
//! real process writing to an embedded store.
//!
//! A binding ships a tiny child binary (`src/bin/ack_writer.rs`) that opens
//! its store from argv and hands it to [`run_ack_writer`], which prints
//! `ready`, then inserts `key0`, `key1`, ... into [`ACK_TABLE`] until killed,
//! printing each key once its insert was acknowledged. The binding's
//! `tests/crash.rs` starts that child with [`AckWriter::start`], SIGKILLs it
//! after some acknowledgements ([`AckWriter::kill_after`]), reopens the store
//! and checks what it promised, through the binary's [`AckWriterBinary`]:
//! [`AckWriterBinary::check_acknowledged_inserts_survive_sigkill`] (nothing
//! acknowledged is lost), [`count_readable`] and [`count_readable_prefix`]
//! (for settings that promise less), and
//! [`AckWriterBinary::check_open_refused_while_another_process_holds`] (a
//! database in use by a live process is an open error, not a second writer).
//!
//! Printing stays in the child binary's own `main`: the kit writes to the
//! [`Write`] it is given, so that the library itself never prints.

use crate::ReadOp;
use std::convert::Infallible;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use crate::properties::Properties;
use crate::record::{Fields, Record};
use crate::status::Status;
use crate::store::{Store, StoreDescriptor, StoreError, ThreadContext};

use super::embedded::{open_in, with_fresh};

/// The table the ack writer inserts into.
pub const ACK_TABLE: &str = "usertable";

/// The one field of each record the ack writer inserts.
pub const ACK_FIELD: &str = "field0";

/// The line the ack writer prints once its store is open, before the first
/// insert.
pub const READY: &str = "ready";

/// The value the ack writer stores in [`ACK_FIELD`] for `key`: derived from
/// the key, so that a reader can tell a whole record from a torn or stale
/// one, and long enough (over 100 bytes) that records fill pages quickly.
pub fn ack_value(key: &str) -> String {
    format!("value-of-{key}-").repeat(8)
}

/// Why [`run_ack_writer`] stopped (it runs until killed otherwise).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AckWriterError {
    /// The store did not open.
    #[error("{0}")]
    Open(#[source] StoreError),
    /// The store gave no thread.
    #[error("opening a store thread: {0}")]
    Thread(#[source] StoreError),
    /// An insert was not acknowledged.
    #[error("insert of {key} failed ({status:?}): {reason}")]
    Insert {
        /// The key of the failed insert.
        key: String,
        /// What the store returned.
        status: Status,
        /// The store's last error message, empty if it gave none.
        reason: String,
    },
    /// The acknowledgement could not be written (the reader went away).
    #[error("writing an acknowledgement: {0}")]
    Output(#[source] io::Error),
}

/// The child side: opens the store with `open`, prints [`READY`] to `out`,
/// then inserts `key0`, `key1`,
/// ... (one [`ACK_FIELD`] holding [`ack_value`]) into [`ACK_TABLE`]
/// forever, writing and flushing each key on its own line once its
/// insert returned [`Status::Ok`]. A line therefore promises that the store
/// acknowledged the record before the line could be read.
///
/// # Errors
///
/// Returns only when something fails: the store does not open, no
/// thread, an insert not
/// acknowledged, or `out` not writable. A kill is the normal end.
pub fn run_ack_writer<S: Store>(
    open: impl FnOnce() -> Result<S, StoreError>,
    out: &mut dyn Write,
) -> Result<Infallible, AckWriterError> {
    let store = open().map_err(AckWriterError::Open)?;
    write_acks(&store, out)
}

fn write_acks(store: &dyn Store, out: &mut dyn Write) -> Result<Infallible, AckWriterError> {
    let mut thread = store
        .thread(ThreadContext::new(0, 1))
        .map_err(AckWriterError::Thread)?;
    let mut acknowledge = |line: &str| {
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(AckWriterError::Output)
    };
    acknowledge(READY)?;
    let mut record = Record::new();
    let mut i: u64 = 0;
    loop {
        let key = format!("key{i}");
        i += 1;
        record.clear();
        record.push(ACK_FIELD, ack_value(&key).as_bytes());
        let status = thread.insert(ACK_TABLE, &key, &record);
        if status != Status::Ok {
            return Err(AckWriterError::Insert {
                reason: thread.last_error().unwrap_or("").to_string(),
                key,
                status,
            });
        }
        acknowledge(&key)?;
    }
}

/// The test side: a running ack writer child and its acknowledgements.
#[derive(Debug)]
pub struct AckWriter {
    child: Child,
    lines: BufReader<ChildStdout>,
}

impl AckWriter {
    /// Spawns `command` (the binding's ack writer binary with its
    /// arguments) with stdout piped and stderr inherited, and waits for its
    /// [`READY`] line.
    ///
    /// # Panics
    ///
    /// If the child does not start or does not say it is ready: a failed
    /// test, with the child's own error on stderr.
    pub fn start(command: &mut Command) -> AckWriter {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the ack writer");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut writer = AckWriter {
            child,
            lines: BufReader::new(stdout),
        };
        assert_eq!(writer.next_ack().as_deref(), Some(READY));
        writer
    }

    /// The next complete line the child printed, `None` at its end. A line
    /// cut by a kill has no newline: it is no acknowledgement.
    ///
    /// # Panics
    ///
    /// If the pipe cannot be read.
    pub fn next_ack(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.lines.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) if line.ends_with('\n') => Some(line.trim_end().to_string()),
            Ok(_) => None,
            Err(e) => panic!("reading the ack writer: {e}"),
        }
    }

    /// Reads `n` acknowledgements, kills the child with SIGKILL
    /// (`Child::kill` on Unix: no destructor, no flush runs), then collects
    /// the keys it had printed before it died, which were acknowledged too.
    /// Returns them all, in order (at least `n`).
    ///
    /// # Panics
    ///
    /// If the child stops before `n` acknowledgements, or did not die of
    /// the SIGKILL.
    pub fn kill_after(mut self, n: usize) -> Vec<String> {
        let mut acked = Vec::with_capacity(n + 1000);
        while acked.len() < n {
            acked.push(self.next_ack().expect("the ack writer stopped early"));
        }
        self.child.kill().expect("SIGKILL");
        let status = self.child.wait().expect("reap the ack writer");
        {
            use std::os::unix::process::ExitStatusExt;
            assert!(!status.success(), "{status:?}");
            assert_eq!(status.signal(), Some(9), "{status:?}");
        }
        let mut rest = String::new();
        self.lines
            .read_to_string(&mut rest)
            .expect("read the ack writer's last lines");
        let complete = rest.rfind('\n').map_or("", |end| &rest[..end]);
        acked.extend(complete.lines().map(str::to_string));
        acked
    }
}

/// How many of `acked` `store` holds, each one found checked whole (its
/// [`ack_value`]); a missing one is counted out, not an error.
///
/// # Panics
///
/// If the store gives no thread, a found record is not the one written, or
/// a read fails with anything but [`Status::NotFound`].
pub fn count_readable(store: &dyn Store, acked: &[String]) -> usize {
    count(store, acked, false)
}

/// Like [`count_readable`], and checks that the records `store` kept are a
/// prefix of `acked`: what a store that loses the tail of its writes (and
/// never an earlier one while keeping a later one) promises after a kill.
///
/// # Panics
///
/// As [`count_readable`], and naming the first record kept after a lost
/// earlier one.
pub fn count_readable_prefix(store: &dyn Store, acked: &[String]) -> usize {
    count(store, acked, true)
}

fn count(store: &dyn Store, acked: &[String], prefix: bool) -> usize {
    let mut thread = store
        .thread(ThreadContext::new(0, 1))
        .expect("a thread of the reopened store");
    let mut out = Record::new();
    let mut found = 0;
    for key in acked {
        out.clear();
        match thread.read(&ReadOp::new(ACK_TABLE, key, Fields::All), &mut out) {
            Status::Ok => {
                if prefix {
                    assert_eq!(
                        found,
                        acked.iter().position(|k| k == key).unwrap_or(found),
                        "{key} survived a lost earlier write"
                    );
                }
                assert_eq!(out.get(ACK_FIELD), Some(ack_value(key).as_bytes()), "{key}");
                found += 1;
            }
            Status::NotFound => {}
            other => panic!("{key}: {other:?}"),
        }
    }
    found
}

/// Checks that `store` holds every acknowledged record, whole.
///
/// # Panics
///
/// Naming the first acknowledged key that is lost or not as written.
pub fn assert_all_readable(store: &dyn Store, acked: &[String]) {
    let mut thread = store
        .thread(ThreadContext::new(0, 1))
        .expect("a thread of the reopened store");
    let mut out = Record::new();
    for key in acked {
        out.clear();
        assert_eq!(
            thread.read(&ReadOp::new(ACK_TABLE, key, Fields::All), &mut out),
            Status::Ok,
            "acknowledged {key} lost"
        );
        assert_eq!(out.get(ACK_FIELD), Some(ack_value(key).as_bytes()), "{key}");
    }
}

/// A binding's ack writer binary and the store it writes: the
/// engine-specific part of a crash test, declared once.
///
/// ```ignore
/// const WRITER: AckWriterBinary = AckWriterBinary::new(
///     env!("CARGO_BIN_EXE_ycsb-fjall-ack-writer"),
///     &ycsb_fjall::DESCRIPTOR,
/// );
/// ```
pub struct AckWriterBinary {
    program: &'static str,
    descriptor: &'static StoreDescriptor,
}

impl AckWriterBinary {
    /// The binary at `program` (`env!("CARGO_BIN_EXE_...")`), writing the
    /// store `descriptor` describes, which the tests open through the
    /// descriptor with the engine's default settings.
    pub const fn new(program: &'static str, descriptor: &'static StoreDescriptor) -> Self {
        AckWriterBinary {
            program,
            descriptor,
        }
    }

    /// Opens the store at `dir` as the tests do.
    ///
    /// # Errors
    ///
    /// As the binding's open.
    ///
    /// # Panics
    ///
    /// If the descriptor names no data directory.
    pub fn open(&self, dir: &Path) -> Result<Box<dyn Store>, StoreError> {
        open_in(self.descriptor, &Properties::new(), dir)
    }

    /// Starts the writer on `dir` with the binding's mode `args`.
    ///
    /// # Panics
    ///
    /// As [`AckWriter::start`].
    pub fn start(&self, dir: &Path, args: &[&str]) -> AckWriter {
        AckWriter::start(Command::new(self.program).arg(dir).args(args))
    }

    /// Starts the writer with `args` in a temporary directory of its own,
    /// SIGKILLs it after `acks` acknowledgements, reopens the store (which
    /// runs the engine's recovery) and checks that no acknowledged record
    /// is lost. Returns the acknowledged keys.
    ///
    /// # Panics
    ///
    /// If the writer misbehaves, the store does not reopen, or an
    /// acknowledged record is lost or not as written.
    pub fn check_acknowledged_inserts_survive_sigkill(
        &self,
        args: &[&str],
        acks: usize,
    ) -> Vec<String> {
        let dir = temporary_directory();
        let acked = self.start(dir.path(), args).kill_after(acks);
        assert!(acked.len() >= acks);
        assert_eq!(acked[0], "key0");
        let store = self.reopen(dir.path());
        assert_all_readable(store.as_ref(), &acked);
        acked
    }

    /// Opens the store at `dir` after a kill.
    ///
    /// # Panics
    ///
    /// If it does not open.
    pub fn reopen(&self, dir: &Path) -> Box<dyn Store> {
        match self.open(dir) {
            Ok(store) => store,
            Err(e) => panic!("reopen after the kill: {e}"),
        }
    }

    /// Starts the writer with `args` in a temporary directory of its own
    /// and, once it has acknowledged its first insert, checks that opening
    /// the same database fails with [`StoreError::Open`] or
    /// [`StoreError::DataDir`] whose message names the directory and
    /// contains `reason`, and that an open with the descriptor's
    /// [`fresh`](StoreDescriptor::fresh) properties is refused as in use
    /// too (the database is not destroyed under its holder); then kills
    /// the writer and checks that the store opens and holds every record
    /// the writer acknowledged, so that `args` must be settings under which
    /// acknowledged inserts survive a killed process.
    ///
    /// # Panics
    ///
    /// If the store opens while the writer lives, fails otherwise or with
    /// another message, fails once the writer is gone, or lost a record.
    pub fn check_open_refused_while_another_process_holds(&self, args: &[&str], reason: &str) {
        let dir = temporary_directory();
        let dir = dir.path();
        let mut writer = self.start(dir, args);
        assert_eq!(writer.next_ack().as_deref(), Some("key0"));
        let Err(err) = self.open(dir) else {
            panic!("opened a database another process holds");
        };
        assert!(
            matches!(err, StoreError::Open { .. } | StoreError::DataDir(_)),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains(reason), "{message}");
        assert!(message.contains(&dir.display().to_string()), "{message}");
        assert!(
            !self.descriptor.fresh.is_empty(),
            "{} has no fresh properties",
            self.descriptor.name
        );
        let fresh = with_fresh(self.descriptor, &Properties::new());
        let Err(err) = open_in(self.descriptor, &fresh, dir) else {
            panic!("{:?} opened a database in use", self.descriptor.fresh);
        };
        let message = err.to_string();
        assert!(message.contains("is in use"), "{message}");
        let mut acked = vec!["key0".to_string()];
        acked.extend(writer.kill_after(1));
        match self.open(dir) {
            Ok(store) => assert_all_readable(store.as_ref(), &acked),
            Err(e) => panic!("no open once the holding process is gone: {e}"),
        }
    }
}

fn temporary_directory() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ReferenceStore;

    #[test]
    fn the_writer_acknowledges_each_insert_it_made_in_order() {
        // A reader that goes away after a few lines stops the writer with
        // an output error, as a closed pipe would.
        struct Lines {
            text: Vec<u8>,
            limit: usize,
        }
        impl Write for Lines {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if self.text.iter().filter(|&&b| b == b'\n').count() >= self.limit {
                    return Err(io::Error::from(io::ErrorKind::BrokenPipe));
                }
                self.text.extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let store = ReferenceStore::new();
        let mut out = Lines {
            text: Vec::new(),
            limit: 4,
        };
        let Err(err) = write_acks(&store, &mut out);
        assert!(matches!(err, AckWriterError::Output(_)), "{err:?}");
        let text = String::from_utf8(out.text).unwrap();
        assert_eq!(text, "ready\nkey0\nkey1\nkey2\n");
        let acked: Vec<String> = text.lines().skip(1).map(str::to_string).collect();
        assert_all_readable(&store, &acked);
        // The fourth insert was made but its acknowledgement not written.
        let mut more = acked.clone();
        more.push("key3".into());
        more.push("key4".into());
        assert_eq!(count_readable(&store, &more), 4);
        assert_eq!(count_readable_prefix(&store, &more), 4);
    }

    #[test]
    fn a_record_kept_after_a_lost_one_is_no_prefix() {
        let store = ReferenceStore::new();
        let mut thread = store.thread(ThreadContext::new(0, 1)).unwrap();
        let mut record = Record::new();
        record.push(ACK_FIELD, ack_value("key1").as_bytes());
        assert_eq!(thread.insert(ACK_TABLE, "key1", &record), Status::Ok);
        let acked = vec!["key0".to_string(), "key1".to_string()];
        assert_eq!(count_readable(&store, &acked), 1);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            count_readable_prefix(&store, &acked)
        }));
        assert!(caught.is_err());
    }

    #[test]
    fn a_store_that_does_not_open_stops_the_writer_before_ready() {
        let mut out = Vec::new();
        let Err(err) = run_ack_writer(
            || -> Result<ReferenceStore, StoreError> {
                Err(StoreError::Open {
                    store: "reference".into(),
                    message: "no such directory".into(),
                })
            },
            &mut out,
        );
        assert!(matches!(err, AckWriterError::Open(_)), "{err:?}");
        assert!(out.is_empty());
    }

    #[test]
    fn a_record_not_as_written_is_caught() {
        let store = ReferenceStore::new();
        let mut thread = store.thread(ThreadContext::new(0, 1)).unwrap();
        let mut torn = Record::new();
        torn.push(ACK_FIELD, b"value-of-key0-");
        assert_eq!(thread.insert(ACK_TABLE, "key0", &torn), Status::Ok);
        let acked = vec!["key0".to_string()];
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            assert_all_readable(&store, &acked)
        }));
        assert!(caught.is_err());
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            count_readable(&store, &acked)
        }));
        assert!(caught.is_err());
    }

    #[test]
    fn a_lost_record_is_caught_and_not_counted() {
        let store = ReferenceStore::new();
        let acked = vec!["key0".to_string()];
        assert_eq!(count_readable(&store, &acked), 0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            assert_all_readable(&store, &acked)
        }));
        assert!(caught.is_err());
    }
}
