//! The engine alone: a minimal loop driving SQLite through rusqlite
//! directly, doing the reads and writes of a YCSB load and run phase, to
//! measure what the `sqlite` store adds on top (`cargo xtask
//! engine-bench`).
//!
//! The phases, settings and output are shared with the other loops
//! (`crates/ycsb-core/examples/support/direct_loop.rs`); this file opens a
//! connection per thread with the settings of `sqlite/sqlite.properties`
//! (WAL, synchronous=NORMAL, cache_size=-2000, 4 KiB pages) and the same
//! table as the binding, and runs one prepared `SELECT`
//! per read and one upsert per write.
//!
//! `cargo run --release -p ycsb-sqlite --example sqlite-direct-loop -- dir=/tmp/x
//!  recordcount=100000 operationcount=100000 threadcount=2 readproportion=0.5`

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

#[path = "../../ycsb-core/examples/support/direct_loop.rs"]
mod harness;

#[path = "../../ycsb-db/examples/support/engine_loop.rs"]
mod engine_loop;

use engine_loop::{copy_or_touch, create_dir_or_exit, opened_or_exit};

const READ: &str = "SELECT fields FROM usertable WHERE user_id = ?1";
/// An upsert: a new key is inserted, an existing row updated in place
/// (`INSERT OR REPLACE` would delete it and insert a new row, which costs
/// an update twice what the binding's `UPDATE` does).
const WRITE: &str = "INSERT INTO usertable (user_id, fields) VALUES (?1, ?2) \
                     ON CONFLICT (user_id) DO UPDATE SET fields = excluded.fields";

struct Db {
    file: PathBuf,
}

thread_local! {
    static CONN: RefCell<Option<Connection>> = const { RefCell::new(None) };
}

fn connect(file: &PathBuf) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        file,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.pragma_update(None, "cache_size", -2000)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

impl Db {
    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, String> {
        CONN.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_none() {
                *c = Some(connect(&self.file).map_err(|e| e.to_string())?);
            }
            match c.as_ref() {
                Some(conn) => f(conn).map_err(|e| e.to_string()),
                None => Err("no connection".to_string()),
            }
        })
    }
}

impl harness::DirectEngine for Db {
    fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String> {
        let key = std::str::from_utf8(key).map_err(|e| e.to_string())?;
        self.with(|conn| {
            let mut stmt = conn.prepare_cached(READ)?;
            let mut rows = stmt.query([key])?;
            let Some(row) = rows.next()? else {
                return Ok(false);
            };
            let bytes = row.get_ref(0)?.as_blob()?;
            copy_or_touch(bytes, copy_to);
            Ok(true)
        })
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let key = std::str::from_utf8(key).map_err(|e| e.to_string())?;
        self.with(|conn| {
            conn.prepare_cached(WRITE)?
                .execute(rusqlite::params![key, value])?;
            Ok(())
        })
    }

    fn compact(&self) -> Result<(), String> {
        // A B-tree has nothing to compact; fold the log into the file.
        self.with(|conn| conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())))
    }
}

fn main() {
    let s = harness::settings();
    create_dir_or_exit(&s.dir);
    let file = s.dir.join("ycsb.sqlite");
    let setup = || -> rusqlite::Result<()> {
        let conn = connect(&file)?;
        conn.pragma_update(None, "page_size", 4096)?;
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS usertable (user_id TEXT PRIMARY KEY NOT NULL, \
             fields BLOB NOT NULL)",
        )
    };
    opened_or_exit(&file, setup());
    harness::drive(&Db { file }, &s);
}
