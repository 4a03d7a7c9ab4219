//! The engine alone: a minimal loop calling WiredTiger's C API directly,
//! doing the reads and writes of a YCSB load and run phase, to measure what
//! the `wiredtiger` store adds on top (`cargo xtask engine-bench`).
//!
//! The phases, settings and output are shared with the other engines'
//! loops (`crates/ycsb-core/examples/support/direct_loop.rs`); this file
//! opens the database and does one read and one write through the C API
//! (the crate's declarations of it, `src/sys.rs`, with no wrapper): one
//! session and `overwrite=true` cursor per thread on `table:ycsbc`, as the
//! binding and YCSB-cpp.
//!
//! The configuration is what the binding makes of
//! `wiredtiger/wiredtiger.properties` (YCSB-cpp's values), written out
//! below; `compact=true` writes a checkpoint (WiredTiger's settled state).
//!
//! `cargo run --release -p ycsb-wiredtiger --example wiredtiger-direct-loop -- dir=/tmp/x
//!  recordcount=100000 operationcount=100000 threadcount=2 readproportion=0.5`
//!
//! Prints one `phase=<load|run> operations=<n> seconds=<s> throughput=<ops/s>
//! errors=<n> notfound=<n>` line per phase.

use std::cell::Cell;
use std::ffi::{c_int, CStr, CString};
use std::ptr;

#[path = "../../ycsb-core/examples/support/direct_loop.rs"]
mod harness;

#[path = "../../ycsb-db/examples/support/engine_loop.rs"]
mod engine_loop;

use engine_loop::{copy_or_touch, create_dir_or_exit, opened_or_exit};

#[path = "../src/sys.rs"]
#[allow(dead_code)]
mod sys;

// Links libwiredtiger as the binding does (its build script), without
// using any of the binding's code.
use ycsb_wiredtiger as _;

use sys::{WtConnection, WtCursor, WtItem, WtSession, WT_NOTFOUND, WT_ROLLBACK};

/// `wiredtiger.properties` as the binding turns it into `wiredtiger_open`'s
/// configuration.
const OPEN_CONFIG: &str = "create,cache_size=67108864,direct_io=[],in_memory=false,\
    lsm_manager=(merge=true,worker_thread_max=4),statistics=(fast),\
    extensions=[libwiredtiger_snappy.so]";
/// ... and into the table's.
const TABLE_CONFIG: &str = "key_format=u,value_format=u,allocation_size=4096,\
    block_compressor=snappy,internal_page_max=4096,leaf_key_max=0,leaf_value_max=0,\
    leaf_page_max=32768";
const TABLE: &CStr = c"table:ycsbc";

struct Db {
    conn: *mut WtConnection,
}

// SAFETY: WT_CONNECTION's methods are thread-safe; sessions and cursors
// are per thread (the thread-local below).
unsafe impl Sync for Db {}

thread_local! {
    /// This thread's cursor (on its own session), opened on first use and
    /// closed with the connection.
    static CURSOR: Cell<*mut WtCursor> = const { Cell::new(ptr::null_mut()) };
}

fn check(ret: c_int, what: &str) -> Result<(), String> {
    if ret == 0 {
        return Ok(());
    }
    // SAFETY: returns a static (or thread-local) NUL-terminated string.
    let text = unsafe { CStr::from_ptr(sys::wiredtiger_strerror(ret)) };
    Err(format!("{what}: {}", text.to_string_lossy()))
}

impl Db {
    fn open(dir: &std::path::Path) -> Result<Db, String> {
        let home = CString::new(dir.display().to_string()).map_err(|e| e.to_string())?;
        let config = CString::new(OPEN_CONFIG).map_err(|e| e.to_string())?;
        let table = CString::new(TABLE_CONFIG).map_err(|e| e.to_string())?;
        let mut conn = ptr::null_mut();
        // SAFETY: valid strings and out-pointers; the default event handler.
        unsafe {
            check(
                sys::wiredtiger_open(home.as_ptr(), ptr::null_mut(), config.as_ptr(), &mut conn),
                "wiredtiger_open",
            )?;
            let session = Self::session(conn)?;
            let create = (*session).create.ok_or("no create")?;
            check(create(session, TABLE.as_ptr(), table.as_ptr()), "create")?;
        }
        Ok(Db { conn })
    }

    /// A new session.
    ///
    /// # Safety
    ///
    /// `conn` must be open.
    unsafe fn session(conn: *mut WtConnection) -> Result<*mut WtSession, String> {
        let mut session = ptr::null_mut();
        // SAFETY: the caller's open connection; valid out-pointer.
        unsafe {
            let open = (*conn).open_session.ok_or("no open_session")?;
            check(
                open(conn, ptr::null_mut(), ptr::null(), &mut session),
                "open_session",
            )?;
        }
        Ok(session)
    }

    fn cursor(&self) -> Result<*mut WtCursor, String> {
        CURSOR.with(|c| {
            if c.get().is_null() {
                let mut cursor = ptr::null_mut();
                // SAFETY: an open connection; this thread's new session
                // and cursor, used by this thread only.
                unsafe {
                    let session = Self::session(self.conn)?;
                    let open = (*session).open_cursor.ok_or("no open_cursor")?;
                    check(
                        open(
                            session,
                            TABLE.as_ptr(),
                            ptr::null_mut(),
                            c"overwrite=true".as_ptr(),
                            &mut cursor,
                        ),
                        "open_cursor",
                    )?;
                }
                c.set(cursor);
            }
            Ok(c.get())
        })
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        // SAFETY: closes every session and cursor, then the connection
        // (the loop threads have ended).
        unsafe {
            if let Some(close) = (*self.conn).close {
                close(self.conn, ptr::null());
            }
        }
    }
}

impl harness::DirectEngine for Db {
    fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String> {
        let c = self.cursor()?;
        let k = WtItem::of(key);
        let mut v = WtItem::of(&[]);
        // SAFETY: this thread's open cursor; `k` outlives the search; the
        // value is read before the reset that releases it.
        unsafe {
            ((*c).set_key.ok_or("no set_key")?)(c, &k as *const WtItem);
            let ret = ((*c).search.ok_or("no search")?)(c);
            if ret == WT_NOTFOUND {
                return Ok(false);
            }
            check(ret, "search")?;
            check(
                ((*c).get_value.ok_or("no get_value")?)(c, &mut v as *mut WtItem),
                "get_value",
            )?;
            let bytes = std::slice::from_raw_parts(v.data.cast::<u8>(), v.size);
            copy_or_touch(bytes, copy_to);
            ((*c).reset.ok_or("no reset")?)(c);
        }
        Ok(true)
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let c = self.cursor()?;
        let (k, v) = (WtItem::of(key), WtItem::of(value));
        loop {
            // SAFETY: this thread's open cursor; `k` and `v` outlive the
            // insert.
            let ret = unsafe {
                ((*c).set_key.ok_or("no set_key")?)(c, &k as *const WtItem);
                ((*c).set_value.ok_or("no set_value")?)(c, &v as *const WtItem);
                ((*c).insert.ok_or("no insert")?)(c)
            };
            if ret != WT_ROLLBACK {
                return check(ret, "insert");
            }
        }
    }

    fn compact(&self) -> Result<(), String> {
        // SAFETY: an open connection; a session of its own, closed with it.
        unsafe {
            let session = Self::session(self.conn)?;
            let checkpoint = (*session).checkpoint.ok_or("no checkpoint")?;
            check(checkpoint(session, ptr::null()), "checkpoint")
        }
    }
}

fn main() {
    let s = harness::settings();
    create_dir_or_exit(&s.dir);
    let db = opened_or_exit(&s.dir, Db::open(&s.dir));
    harness::drive(&db, &s);
}
