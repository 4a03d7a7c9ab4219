//! The engine alone: a minimal loop calling LevelDB's C API directly,
//! doing the reads and writes of a YCSB load and run phase, to measure what
//! the `leveldb` store adds on top (`cargo xtask engine-bench`).
//!
//! The phases, settings and output are shared with the RocksDB loop
//! (`crates/ycsb-core/examples/support/direct_loop.rs`); this file opens
//! the database and does one read and one write through the C API.
//!
//! The engine options are those of `leveldb/leveldb.properties` (YCSB-cpp's
//! values), written out below.
//!
//! `cargo run --release -p ycsb-leveldb --example leveldb-direct-loop -- dir=/tmp/x
//!  recordcount=100000 operationcount=100000 threadcount=2 readproportion=0.5`
//!
//! Prints one `phase=<load|run> operations=<n> seconds=<s> throughput=<ops/s>
//! errors=<n> notfound=<n>` line per phase.

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;

use leveldb_sys as sys;

#[path = "../../ycsb-core/examples/support/direct_loop.rs"]
mod harness;

#[path = "../../ycsb-db/examples/support/engine_loop.rs"]
mod engine_loop;

use engine_loop::{copy_or_keep, create_dir_or_exit, opened_or_exit};

/// LevelDB's C objects: the database and the options it was opened with.
struct Db {
    db: *mut sys::leveldb_t,
    options: *mut sys::leveldb_options_t,
    cache: *mut sys::leveldb_cache_t,
    filter: *mut sys::leveldb_filterpolicy_t,
    read: *mut sys::leveldb_readoptions_t,
    write: *mut sys::leveldb_writeoptions_t,
}

// SAFETY: leveldb::DB is documented as safe for concurrent use without
// external synchronisation; the option objects are only read after open.
unsafe impl Sync for Db {}

extern "C" {
    // In LevelDB's C API since 1.21, missing from leveldb-sys 2.0.9.
    fn leveldb_options_set_max_file_size(o: *mut sys::leveldb_options_t, size: libc::size_t);
}

/// Takes a C error string: `Err` with its text when one was set.
fn check(err: *mut c_char) -> Result<(), String> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null errptr is a NUL-terminated string LevelDB
    // allocated; copied, then freed once.
    let text = unsafe { CStr::from_ptr(err) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: allocated by LevelDB, not used again.
    unsafe { sys::leveldb_free(err.cast::<c_void>()) };
    Err(text)
}

impl Db {
    /// Opens `dir` with `leveldb/leveldb.properties`, as the binding applies it.
    fn open(dir: &std::path::Path) -> Result<Db, String> {
        use std::os::unix::ffi::OsStrExt;
        let name = CString::new(dir.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: the create functions have no preconditions; every setter
        // gets a live object; the cache and filter outlive the database
        // (freed in Drop after close).
        unsafe {
            let options = sys::leveldb_options_create();
            let cache = sys::leveldb_cache_create_lru(134_217_728);
            let filter = sys::leveldb_filterpolicy_create_bloom(10);
            sys::leveldb_options_set_create_if_missing(options, 1);
            sys::leveldb_options_set_compression(options, sys::Compression::Snappy);
            sys::leveldb_options_set_write_buffer_size(options, 67_108_864);
            leveldb_options_set_max_file_size(options, 67_108_864);
            sys::leveldb_options_set_max_open_files(options, 1000);
            sys::leveldb_options_set_block_size(options, 4096);
            sys::leveldb_options_set_block_restart_interval(options, 16);
            sys::leveldb_options_set_cache(options, cache);
            sys::leveldb_options_set_filter_policy(options, filter);
            let read = sys::leveldb_readoptions_create();
            let write = sys::leveldb_writeoptions_create();
            let mut err = ptr::null_mut();
            let db = sys::leveldb_open(options, name.as_ptr(), &mut err);
            check(err)?;
            if db.is_null() {
                return Err("leveldb_open returned no database".into());
            }
            Ok(Db {
                db,
                options,
                cache,
                filter,
                read,
                write,
            })
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        // SAFETY: every object was created in `open` and is freed once, the
        // database first since it refers to the others.
        unsafe {
            sys::leveldb_close(self.db);
            sys::leveldb_readoptions_destroy(self.read);
            sys::leveldb_writeoptions_destroy(self.write);
            sys::leveldb_options_destroy(self.options);
            sys::leveldb_cache_destroy(self.cache);
            sys::leveldb_filterpolicy_destroy(self.filter);
        }
    }
}

impl harness::DirectEngine for Db {
    /// Reads `key`; `Ok(true)` when it exists; the value is copied to
    /// `copy_to` when given.
    fn get(&self, key: &[u8], copy_to: Option<&mut Vec<u8>>) -> Result<bool, String> {
        let mut len = 0;
        let mut err = ptr::null_mut();
        // SAFETY: live database and read options, `key` valid for its
        // length, valid out-pointers; a returned value is LevelDB's malloc'd
        // copy, freed once here.
        unsafe {
            let value = sys::leveldb_get(
                self.db,
                self.read,
                key.as_ptr().cast(),
                key.len(),
                &mut len,
                &mut err,
            );
            check(err)?;
            if value.is_null() {
                return Ok(false);
            }
            let bytes = std::slice::from_raw_parts(value.cast::<u8>(), len);
            copy_or_keep(bytes, copy_to);
            sys::leveldb_free(value.cast::<c_void>());
            Ok(true)
        }
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: live database and write options, slices valid for their
        // lengths (LevelDB copies them).
        unsafe {
            sys::leveldb_put(
                self.db,
                self.write,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut err,
            );
        }
        check(err)
    }

    fn compact(&self) -> Result<(), String> {
        // SAFETY: a live database; null bounds mean the whole key range.
        // LevelDB flushes the memtable first and returns when done.
        unsafe { sys::leveldb_compact_range(self.db, ptr::null(), 0, ptr::null(), 0) };
        Ok(())
    }
}

fn main() {
    let s = harness::settings();
    create_dir_or_exit(&s.dir);
    let db = opened_or_exit(&s.dir, Db::open(&s.dir));
    harness::drive(&db, &s);
}
