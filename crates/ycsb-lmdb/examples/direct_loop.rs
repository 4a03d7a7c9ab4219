//! The engine alone: a minimal loop calling LMDB's C API directly, doing
//! the reads and writes of a YCSB load and run phase, to measure what the
//! `lmdb` store adds on top (`cargo xtask engine-bench`).
//!
//! The phases, settings and output are shared with the other loops
//! (`crates/ycsb-core/examples/support/direct_loop.rs`); this file opens
//! the environment and does one read and one write through the C API: a
//! read in a per-thread read transaction renewed for each read (what a
//! careful LMDB program does), a write in its own write transaction.
//!
//! The environment options are those of `lmdb/lmdb.properties` (YCSB-cpp's
//! values): a 1 GiB map, `MDB_NOSYNC`.
//!
//! `cargo run --release -p ycsb-lmdb --example lmdb-direct-loop -- dir=/tmp/x
//!  recordcount=100000 operationcount=100000 threadcount=2 readproportion=0.5`

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::ptr;

#[path = "../../ycsb-core/examples/support/direct_loop.rs"]
mod harness;

#[path = "../../ycsb-db/examples/support/engine_loop.rs"]
mod engine_loop;

use engine_loop::{copy_or_touch, create_dir_or_exit, opened_or_exit};

#[repr(C)]
struct MdbVal {
    size: usize,
    data: *mut c_void,
}

const MDB_NOSYNC: c_uint = 0x10000;
const MDB_RDONLY: c_uint = 0x20000;
const MDB_NOTLS: c_uint = 0x200000;

#[link(name = "lmdb")]
extern "C" {
    fn mdb_env_create(env: *mut *mut c_void) -> c_int;
    fn mdb_env_set_mapsize(env: *mut c_void, size: usize) -> c_int;
    fn mdb_env_set_maxreaders(env: *mut c_void, readers: c_uint) -> c_int;
    fn mdb_env_open(env: *mut c_void, path: *const c_char, flags: c_uint, mode: u32) -> c_int;
    fn mdb_env_sync(env: *mut c_void, force: c_int) -> c_int;
    fn mdb_env_close(env: *mut c_void);
    fn mdb_txn_begin(
        env: *mut c_void,
        parent: *mut c_void,
        flags: c_uint,
        txn: *mut *mut c_void,
    ) -> c_int;
    fn mdb_txn_commit(txn: *mut c_void) -> c_int;
    fn mdb_txn_reset(txn: *mut c_void);
    fn mdb_txn_renew(txn: *mut c_void) -> c_int;
    fn mdb_dbi_open(
        txn: *mut c_void,
        name: *const c_char,
        flags: c_uint,
        dbi: *mut c_uint,
    ) -> c_int;
    fn mdb_get(txn: *mut c_void, dbi: c_uint, key: *mut MdbVal, data: *mut MdbVal) -> c_int;
    fn mdb_put(
        txn: *mut c_void,
        dbi: c_uint,
        key: *mut MdbVal,
        data: *mut MdbVal,
        flags: c_uint,
    ) -> c_int;
}

struct Env {
    env: *mut c_void,
    dbi: c_uint,
}

// SAFETY: an MDB_env is thread-safe; every thread has its own transactions
// (MDB_NOTLS lets a reader be renewed on any thread).
unsafe impl Sync for Env {}

thread_local! {
    /// This thread's read transaction, reset between reads.
    static READER: Cell<*mut c_void> = const { Cell::new(ptr::null_mut()) };
}

fn check(rc: c_int, what: &str) -> Result<(), String> {
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("{what}: error {rc}"))
    }
}

impl Env {
    fn open(dir: &std::path::Path) -> Result<Env, String> {
        use std::os::unix::ffi::OsStrExt;
        let path = CString::new(dir.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
        let mut env = ptr::null_mut();
        // SAFETY: valid out-pointers; the environment is set up before open.
        unsafe {
            check(mdb_env_create(&mut env), "mdb_env_create")?;
            check(mdb_env_set_mapsize(env, 1 << 30), "mdb_env_set_mapsize")?;
            check(mdb_env_set_maxreaders(env, 1024), "mdb_env_set_maxreaders")?;
            check(
                mdb_env_open(env, path.as_ptr(), MDB_NOSYNC | MDB_NOTLS, 0o664),
                "mdb_env_open",
            )?;
            let mut txn = ptr::null_mut();
            check(mdb_txn_begin(env, ptr::null_mut(), 0, &mut txn), "begin")?;
            let mut dbi = 0;
            check(mdb_dbi_open(txn, ptr::null(), 0, &mut dbi), "mdb_dbi_open")?;
            check(mdb_txn_commit(txn), "commit")?;
            Ok(Env { env, dbi })
        }
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // SAFETY: the loop's threads have ended; their read transactions
        // die with the environment.
        unsafe {
            mdb_env_sync(self.env, 1);
            mdb_env_close(self.env);
        }
    }
}

impl harness::DirectEngine for Env {
    fn thread_start(&self) {
        let mut txn = ptr::null_mut();
        // SAFETY: an open environment; the transaction is this thread's.
        unsafe {
            if mdb_txn_begin(self.env, ptr::null_mut(), MDB_RDONLY, &mut txn) == 0 {
                mdb_txn_reset(txn);
                READER.set(txn);
            }
        }
    }

    fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String> {
        let txn = READER.get();
        let mut k = MdbVal {
            size: key.len(),
            data: key.as_ptr().cast_mut().cast(),
        };
        let mut v = MdbVal {
            size: 0,
            data: ptr::null_mut(),
        };
        // SAFETY: this thread's reset reader, renewed for the read and reset
        // after the value was used.
        unsafe {
            check(mdb_txn_renew(txn), "mdb_txn_renew")?;
            let rc = mdb_get(txn, self.dbi, &mut k, &mut v);
            let found = rc == 0;
            if found {
                let bytes = std::slice::from_raw_parts(v.data.cast::<u8>(), v.size);
                copy_or_touch(bytes, copy_to);
            }
            mdb_txn_reset(txn);
            Ok(found)
        }
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let mut k = MdbVal {
            size: key.len(),
            data: key.as_ptr().cast_mut().cast(),
        };
        let mut v = MdbVal {
            size: value.len(),
            data: value.as_ptr().cast_mut().cast(),
        };
        let mut txn = ptr::null_mut();
        // SAFETY: an open environment; the write transaction is committed
        // (which frees it, success or not).
        unsafe {
            check(
                mdb_txn_begin(self.env, ptr::null_mut(), 0, &mut txn),
                "begin",
            )?;
            let rc = mdb_put(txn, self.dbi, &mut k, &mut v, 0);
            if rc != 0 {
                mdb_txn_commit(txn);
                return check(rc, "mdb_put");
            }
            check(mdb_txn_commit(txn), "commit")
        }
    }

    fn compact(&self) -> Result<(), String> {
        // A B-tree has nothing to compact.
        Ok(())
    }
}

fn main() {
    let s = harness::settings();
    create_dir_or_exit(&s.dir);
    let env = opened_or_exit(&s.dir, Env::open(&s.dir));
    harness::drive(&env, &s);
}
