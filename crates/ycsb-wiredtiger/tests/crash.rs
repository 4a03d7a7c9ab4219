//! Durability after SIGKILL and locking against another process, with a
//! real child process (`src/bin/ack_writer.rs`) writing to the database.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use ycsb_db::{Fields, Properties, Record, Status, Store, StoreError, ThreadContext};
use ycsb_wiredtiger::WiredTigerStore;

/// The value the child stores for `key` (as in `ack_writer.rs`).
fn expected_value(key: &str) -> String {
    format!("value-of-{key}-").repeat(8)
}

struct Writer {
    child: Child,
    lines: BufReader<ChildStdout>,
}

impl Writer {
    fn start(dir: &Path, mode: &str) -> Writer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ycsb-wiredtiger-ack-writer"))
            .arg(dir)
            .arg(mode)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the writer");
        let stdout = child.stdout.take().unwrap();
        let mut writer = Writer {
            child,
            lines: BufReader::new(stdout),
        };
        assert_eq!(writer.next_line().as_deref(), Some("ready"));
        writer
    }

    fn next_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.lines.read_line(&mut line) {
            Ok(0) => None,
            // A line cut by the kill has no newline: not an acknowledgement.
            Ok(_) if line.ends_with('\n') => Some(line.trim_end().to_string()),
            Ok(_) => None,
            Err(e) => panic!("reading the writer: {e}"),
        }
    }

    /// Reads acknowledgements until `n`, kills the child with SIGKILL
    /// (`Child::kill` on Unix), then collects the keys it had printed.
    fn kill_after(mut self, n: usize) -> Vec<String> {
        let mut acked = Vec::with_capacity(n + 1000);
        while acked.len() < n {
            acked.push(self.next_line().expect("writer stopped early"));
        }
        self.child.kill().expect("SIGKILL");
        let status = self.child.wait().unwrap();
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(9), "{status:?}");
        }
        let mut rest = String::new();
        self.lines.read_to_string(&mut rest).unwrap();
        let complete = rest.rfind('\n').map_or("", |end| &rest[..end]);
        acked.extend(complete.lines().map(str::to_string));
        acked
    }
}

fn open(dir: &Path) -> Result<WiredTigerStore, StoreError> {
    WiredTigerStore::open(&Properties::new().with("wiredtiger.home", dir.display()))
}

/// How many of `acked` the reopened database holds, each checked whole.
fn readable(dir: &Path, acked: &[String]) -> usize {
    let store = open(dir).expect("reopen after the kill (recovery)");
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    let mut found = 0;
    for key in acked {
        out.clear();
        match t.read("usertable", key, Fields::All, &mut out) {
            Status::Ok => {
                assert_eq!(
                    out.get("field0"),
                    Some(expected_value(key).as_bytes()),
                    "{key}"
                );
                found += 1;
            }
            Status::NotFound => {}
            other => panic!("{key}: {other:?}"),
        }
    }
    found
}

#[test]
fn synced_inserts_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let acked = Writer::start(dir.path(), "sync").kill_after(300);
    assert!(acked.len() >= 300);
    assert_eq!(acked[0], "key0");
    assert_eq!(
        readable(dir.path(), &acked),
        acked.len(),
        "acknowledged records lost"
    );
}

#[test]
fn logged_inserts_survive_sigkill_of_the_process() {
    // With the log written (not synced) at each commit, a killed process
    // (not a crashed machine) loses nothing.
    let dir = tempfile::tempdir().unwrap();
    let acked = Writer::start(dir.path(), "log").kill_after(20_000);
    assert_eq!(
        readable(dir.path(), &acked),
        acked.len(),
        "acknowledged records lost"
    );
}

#[test]
fn without_a_log_a_killed_process_loses_what_no_checkpoint_saved() {
    // YCSB-cpp's setting: no log, so what was written since the last
    // checkpoint (here: none) is gone, but the database reopens intact.
    let dir = tempfile::tempdir().unwrap();
    let acked = Writer::start(dir.path(), "none").kill_after(5_000);
    let found = readable(dir.path(), &acked);
    assert!(found < acked.len(), "{found} of {}", acked.len());
}

#[test]
fn a_database_held_by_another_process_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = Writer::start(dir.path(), "none");
    assert_eq!(writer.next_line().as_deref(), Some("key0"));
    let err = open(dir.path()).expect_err("opened a database another process holds");
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("already being managed by another process"),
        "{message}"
    );
    assert!(
        message.contains(&dir.path().display().to_string()),
        "{message}"
    );
    writer.kill_after(1);
    // Once the holder is gone, the database opens.
    open(dir.path()).unwrap();
}
