//! Safe wrappers over LevelDB's C API (through `leveldb-sys`).
//!
//! This is the crate's only module with `unsafe` code. Every C object is
//! owned by exactly one wrapper whose `Drop` frees it with the matching C
//! destructor, and every C-allocated result (values, error strings,
//! property texts) is copied or borrowed and then released with
//! `leveldb_free`.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use leveldb_sys as sys;

extern "C" {
    // Part of LevelDB's C API since 1.21 but missing from leveldb-sys 2.0.9.
    fn leveldb_options_set_max_file_size(o: *mut sys::leveldb_options_t, size: libc::size_t);
}

/// Takes ownership of a C error string set through an `errptr` argument.
fn take_error(err: *mut c_char) -> Result<(), String> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null errptr result is a NUL-terminated string that
    // LevelDB allocated with strdup; we copy it, then free it exactly once.
    let message = unsafe { CStr::from_ptr(err) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: `err` came from LevelDB's allocator and is not used again.
    unsafe { sys::leveldb_free(err.cast::<c_void>()) };
    Err(message)
}

/// Takes ownership of a C string LevelDB returned (or null).
fn take_string(text: *mut c_char) -> Option<String> {
    if text.is_null() {
        return None;
    }
    // SAFETY: as in `take_error`: a strdup'd NUL-terminated string we own.
    let owned = unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: allocated by LevelDB, freed once, not used again.
    unsafe { sys::leveldb_free(text.cast::<c_void>()) };
    Some(owned)
}

/// The engine settings applied when opening a database. `None` keeps
/// LevelDB's own default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct EngineOptions {
    pub write_buffer_size: Option<usize>,
    pub max_file_size: Option<usize>,
    pub max_open_files: Option<c_int>,
    pub snappy: bool,
    pub cache_size: Option<usize>,
    pub filter_bits: Option<c_int>,
    pub block_size: Option<usize>,
    pub block_restart_interval: Option<c_int>,
    pub sync: bool,
    pub fill_cache: bool,
}

/// An options object with the cache and filter policy it refers to.
struct Options {
    options: NonNull<sys::leveldb_options_t>,
    cache: Option<NonNull<sys::leveldb_cache_t>>,
    filter: Option<NonNull<sys::leveldb_filterpolicy_t>>,
}

impl Options {
    fn new(engine: &EngineOptions) -> Result<Self, String> {
        // SAFETY: the create functions take no arguments and return a new
        // object (null only if allocation failed, which we check).
        let options = NonNull::new(unsafe { sys::leveldb_options_create() })
            .ok_or("leveldb_options_create failed")?;
        let mut this = Options {
            options,
            cache: None,
            filter: None,
        };
        let o = this.options.as_ptr();
        // SAFETY: `o` is a live options object owned by `this`; the setters
        // only store the given values in it.
        unsafe {
            sys::leveldb_options_set_create_if_missing(o, 1);
            sys::leveldb_options_set_compression(
                o,
                if engine.snappy {
                    sys::Compression::Snappy
                } else {
                    sys::Compression::No
                },
            );
            if let Some(v) = engine.write_buffer_size {
                sys::leveldb_options_set_write_buffer_size(o, v);
            }
            if let Some(v) = engine.max_file_size {
                leveldb_options_set_max_file_size(o, v);
            }
            if let Some(v) = engine.max_open_files {
                sys::leveldb_options_set_max_open_files(o, v);
            }
            if let Some(v) = engine.block_size {
                sys::leveldb_options_set_block_size(o, v);
            }
            if let Some(v) = engine.block_restart_interval {
                sys::leveldb_options_set_block_restart_interval(o, v);
            }
        }
        if let Some(capacity) = engine.cache_size {
            // SAFETY: creates a new cache object, owned by `this` from here.
            let cache = NonNull::new(unsafe { sys::leveldb_cache_create_lru(capacity) })
                .ok_or("leveldb_cache_create_lru failed")?;
            this.cache = Some(cache);
            // SAFETY: both objects are live; the options keep a reference to
            // the cache, which `this` frees only after the options.
            unsafe { sys::leveldb_options_set_cache(o, cache.as_ptr()) };
        }
        if let Some(bits) = engine.filter_bits {
            // SAFETY: creates a new filter policy, owned by `this` from here.
            let filter = NonNull::new(unsafe { sys::leveldb_filterpolicy_create_bloom(bits) })
                .ok_or("leveldb_filterpolicy_create_bloom failed")?;
            this.filter = Some(filter);
            // SAFETY: as for the cache.
            unsafe { sys::leveldb_options_set_filter_policy(o, filter.as_ptr()) };
        }
        Ok(this)
    }
}

impl Drop for Options {
    fn drop(&mut self) {
        // SAFETY: each object was created by its create function, is owned
        // only here, and the database that referred to the cache and filter
        // (if any) has been closed before the options are dropped.
        unsafe {
            sys::leveldb_options_destroy(self.options.as_ptr());
            if let Some(cache) = self.cache {
                sys::leveldb_cache_destroy(cache.as_ptr());
            }
            if let Some(filter) = self.filter {
                sys::leveldb_filterpolicy_destroy(filter.as_ptr());
            }
        }
    }
}

/// An open LevelDB database with the read and write options every
/// operation uses, created once.
pub(crate) struct Db {
    db: NonNull<sys::leveldb_t>,
    read: NonNull<sys::leveldb_readoptions_t>,
    write: NonNull<sys::leveldb_writeoptions_t>,
    // Dropped after `db` is closed (fields drop after `Drop::drop`): the
    // database refers to the cache and the filter policy until then.
    _options: Options,
}

// SAFETY: LevelDB documents `leveldb::DB` as safe for concurrent use by
// many threads without external synchronisation; the read and write option
// objects are never modified after `open` and LevelDB only reads them.
unsafe impl Send for Db {}
// SAFETY: as above.
unsafe impl Sync for Db {}

fn c_path(path: &std::path::Path) -> Result<CString, String> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| "the path contains a NUL byte".to_string())
}

impl Db {
    /// Opens (creating if missing) the database at `path`. Emptying it
    /// first is the directory guard's (`ycsb_db::DataDir`), not LevelDB's
    /// `DestroyDB`, which would also remove files it merely names like its
    /// own.
    pub fn open(path: &std::path::Path, engine: &EngineOptions) -> Result<Db, String> {
        let name = c_path(path)?;
        let options = Options::new(engine)?;
        // SAFETY: creating option objects has no preconditions.
        let read = NonNull::new(unsafe { sys::leveldb_readoptions_create() })
            .ok_or("leveldb_readoptions_create failed")?;
        // SAFETY: as above.
        let write = NonNull::new(unsafe { sys::leveldb_writeoptions_create() });
        let Some(write) = write else {
            // SAFETY: `read` was created above and is not used again.
            unsafe { sys::leveldb_readoptions_destroy(read.as_ptr()) };
            return Err("leveldb_writeoptions_create failed".into());
        };
        // SAFETY: both objects are live and owned here.
        unsafe {
            sys::leveldb_readoptions_set_fill_cache(read.as_ptr(), u8::from(engine.fill_cache));
            sys::leveldb_writeoptions_set_sync(write.as_ptr(), u8::from(engine.sync));
        }
        let mut err = ptr::null_mut();
        // SAFETY: live options, NUL-terminated name, a valid errptr; the
        // result is null exactly when an error was stored.
        let db = unsafe { sys::leveldb_open(options.options.as_ptr(), name.as_ptr(), &mut err) };
        let opened = take_error(err).and_then(|()| {
            NonNull::new(db).ok_or_else(|| "leveldb_open returned no database".to_string())
        });
        match opened {
            Ok(db) => Ok(Db {
                db,
                read,
                write,
                _options: options,
            }),
            Err(e) => {
                // SAFETY: created above, never shared, not used again.
                unsafe {
                    sys::leveldb_readoptions_destroy(read.as_ptr());
                    sys::leveldb_writeoptions_destroy(write.as_ptr());
                }
                Err(e)
            }
        }
    }

    /// The value at `key`, or `None` when there is none.
    pub fn get(&self, key: &[u8]) -> Result<Option<CBytes>, String> {
        let mut len: libc::size_t = 0;
        let mut err = ptr::null_mut();
        // SAFETY: live database and read options; `key` is valid for its
        // length; `len` and `err` are valid out-pointers.
        let value = unsafe {
            sys::leveldb_get(
                self.db.as_ptr(),
                self.read.as_ptr(),
                key.as_ptr().cast(),
                key.len(),
                &mut len,
                &mut err,
            )
        };
        take_error(err)?;
        Ok(NonNull::new(value.cast::<u8>()).map(|ptr| CBytes { ptr, len }))
    }

    /// Stores `value` at `key`.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: live database and write options; the slices are valid for
        // their lengths; LevelDB copies them before returning.
        unsafe {
            sys::leveldb_put(
                self.db.as_ptr(),
                self.write.as_ptr(),
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut err,
            );
        }
        take_error(err)
    }

    /// Deletes `key` (no error when it is absent).
    pub fn delete(&self, key: &[u8]) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: live database and write options; `key` valid for its length.
        unsafe {
            sys::leveldb_delete(
                self.db.as_ptr(),
                self.write.as_ptr(),
                key.as_ptr().cast(),
                key.len(),
                &mut err,
            );
        }
        take_error(err)
    }

    /// Applies `batch` atomically.
    pub fn write(&self, batch: &mut WriteBatch) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: live database, write options and batch (exclusively
        // borrowed); LevelDB does not keep the batch.
        unsafe {
            sys::leveldb_write(
                self.db.as_ptr(),
                self.write.as_ptr(),
                batch.batch.as_ptr(),
                &mut err,
            );
        }
        take_error(err)
    }

    /// A new iterator over the current state of the database.
    pub fn iter(&self) -> Result<Iter<'_>, String> {
        // SAFETY: live database and read options.
        let it = unsafe { sys::leveldb_create_iterator(self.db.as_ptr(), self.read.as_ptr()) };
        NonNull::new(it)
            .map(|it| Iter {
                it,
                _db: PhantomData,
            })
            .ok_or_else(|| "leveldb_create_iterator failed".to_string())
    }

    /// The text of an engine property such as `leveldb.stats`, or `None`
    /// when the engine does not know it.
    pub fn property(&self, name: &str) -> Option<String> {
        let name = CString::new(name).ok()?;
        // SAFETY: live database, NUL-terminated name; the result is a
        // strdup'd string or null, taken over by `take_string`.
        take_string(unsafe { sys::leveldb_property_value(self.db.as_ptr(), name.as_ptr()) })
    }

    /// The approximate file-system space used by keys in `[start, limit)`.
    pub fn approximate_size(&self, start: &[u8], limit: &[u8]) -> u64 {
        let starts = [start.as_ptr().cast::<c_char>()];
        let start_lens = [start.len()];
        let limits = [limit.as_ptr().cast::<c_char>()];
        let limit_lens = [limit.len()];
        let mut sizes = [0u64];
        // SAFETY: one range: each array holds one element, the key pointers
        // are valid for their lengths, `sizes` has room for one result.
        unsafe {
            sys::leveldb_approximate_sizes(
                self.db.as_ptr(),
                1,
                starts.as_ptr(),
                start_lens.as_ptr(),
                limits.as_ptr(),
                limit_lens.as_ptr(),
                sizes.as_mut_ptr(),
            );
        }
        sizes[0]
    }

    /// Compacts the whole key range (blocks until done).
    pub fn compact_all(&self) {
        // SAFETY: null start and limit keys mean "from the first key" and
        // "to the last key" in LevelDB's C API.
        unsafe { sys::leveldb_compact_range(self.db.as_ptr(), ptr::null(), 0, ptr::null(), 0) };
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        // SAFETY: every iterator borrows the `Db`, so none is alive; closing
        // waits for background compaction; the option objects are owned
        // here and freed after the database that used them.
        unsafe {
            sys::leveldb_close(self.db.as_ptr());
            sys::leveldb_readoptions_destroy(self.read.as_ptr());
            sys::leveldb_writeoptions_destroy(self.write.as_ptr());
        }
    }
}

/// The version of the LevelDB library linked into this program, as
/// (major, minor).
pub(crate) fn linked_version() -> (i32, i32) {
    // SAFETY: the version functions take no arguments and return constants.
    unsafe { (sys::leveldb_major_version(), sys::leveldb_minor_version()) }
}

/// The address of a LevelDB function, which says which loaded file holds
/// LevelDB's code.
pub(crate) fn version_function() -> *const () {
    crate::lazy::address(c"leveldb_major_version")
        .unwrap_or(sys::leveldb_major_version as *const ())
}

/// The file the LevelDB code was loaded from: the shared library's path,
/// or this program's when LevelDB is linked statically.
pub(crate) fn linked_library() -> Option<String> {
    ycsb_db::loaded_from(version_function())
}

/// A value LevelDB allocated for a `get`, freed with `leveldb_free` on drop.
pub(crate) struct CBytes {
    ptr: NonNull<u8>,
    len: usize,
}

impl std::ops::Deref for CBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `leveldb_get` returned `ptr` with `len` initialised bytes
        // that stay valid and unaliased until we free them in `drop`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for CBytes {
    fn drop(&mut self) {
        // SAFETY: allocated by LevelDB (malloc), freed exactly once.
        unsafe { sys::leveldb_free(self.ptr.as_ptr().cast::<c_void>()) };
    }
}

/// An iterator over a database, valid while the database is open.
pub(crate) struct Iter<'a> {
    it: NonNull<sys::leveldb_iterator_t>,
    _db: PhantomData<&'a Db>,
}

impl Iter<'_> {
    /// Positions at the first key at or after `key`.
    pub fn seek(&mut self, key: &[u8]) {
        // SAFETY: live iterator; `key` valid for its length (copied).
        unsafe { sys::leveldb_iter_seek(self.it.as_ptr(), key.as_ptr().cast(), key.len()) };
    }

    /// Whether the iterator is at an entry.
    pub fn valid(&self) -> bool {
        // SAFETY: live iterator.
        unsafe { sys::leveldb_iter_valid(self.it.as_ptr()) != 0 }
    }

    /// Moves to the next entry. Only call when [`Iter::valid`].
    pub fn next(&mut self) {
        debug_assert!(self.valid());
        // SAFETY: live iterator positioned at an entry (LevelDB requires it;
        // callers check `valid` first).
        unsafe { sys::leveldb_iter_next(self.it.as_ptr()) };
    }

    /// The current key. Only call when [`Iter::valid`].
    pub fn key(&self) -> &[u8] {
        let mut len: libc::size_t = 0;
        // leveldb-sys declares the length out-pointer const; LevelDB writes
        // through it, hence the pointer from a mutable place.
        // SAFETY: live iterator at an entry; the returned bytes belong to
        // the iterator and stay valid until it moves, which needs `&mut
        // self` and so ends this borrow.
        unsafe {
            let p = sys::leveldb_iter_key(self.it.as_ptr(), (&raw mut len).cast_const());
            slice_or_empty(p, len)
        }
    }

    /// The current value. Only call when [`Iter::valid`].
    pub fn value(&self) -> &[u8] {
        let mut len: libc::size_t = 0;
        // SAFETY: as for `key`.
        unsafe {
            let p = sys::leveldb_iter_value(self.it.as_ptr(), (&raw mut len).cast_const());
            slice_or_empty(p, len)
        }
    }

    /// The error that stopped the iteration, if any.
    pub fn status(&self) -> Result<(), String> {
        let mut err: *mut c_char = ptr::null_mut();
        // SAFETY: live iterator; leveldb-sys declares the out-pointer const
        // but LevelDB writes a strdup'd error (or nothing) through it.
        unsafe {
            sys::leveldb_iter_get_error(
                self.it.as_ptr(),
                (&mut err as *mut *mut c_char).cast::<*const c_char>(),
            );
        }
        take_error(err)
    }
}

/// # Safety
///
/// `p` must be null or valid for reading `len` bytes for the returned
/// lifetime.
unsafe fn slice_or_empty<'a>(p: *const c_char, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
    }
}

impl Drop for Iter<'_> {
    fn drop(&mut self) {
        // SAFETY: created by leveldb_create_iterator, destroyed once, while
        // the database is still open (the borrow guarantees it).
        unsafe { sys::leveldb_iter_destroy(self.it.as_ptr()) };
    }
}

/// A reusable write batch.
pub(crate) struct WriteBatch {
    batch: NonNull<sys::leveldb_writebatch_t>,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Result<Self, String> {
        // SAFETY: no preconditions.
        NonNull::new(unsafe { sys::leveldb_writebatch_create() })
            .map(|batch| WriteBatch { batch })
            .ok_or_else(|| "leveldb_writebatch_create failed".to_string())
    }

    /// Removes every queued update, keeping the allocation.
    pub fn clear(&mut self) {
        // SAFETY: live batch, exclusively borrowed.
        unsafe { sys::leveldb_writebatch_clear(self.batch.as_ptr()) };
    }

    /// Queues a put (the bytes are copied).
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        // SAFETY: live batch; slices valid for their lengths, copied.
        unsafe {
            sys::leveldb_writebatch_put(
                self.batch.as_ptr(),
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
            );
        }
    }

    /// Queues a delete (the key is copied).
    pub fn delete(&mut self, key: &[u8]) {
        // SAFETY: live batch; `key` valid for its length, copied.
        unsafe {
            sys::leveldb_writebatch_delete(self.batch.as_ptr(), key.as_ptr().cast(), key.len())
        };
    }
}

impl Drop for WriteBatch {
    fn drop(&mut self) {
        // SAFETY: created by leveldb_writebatch_create, destroyed once.
        unsafe { sys::leveldb_writebatch_destroy(self.batch.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_put_delete_and_free_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), &EngineOptions::default()).unwrap();
        assert!(db.get(b"k").unwrap().is_none());
        db.put(b"k", b"value").unwrap();
        db.put(b"empty", b"").unwrap();
        assert_eq!(&*db.get(b"k").unwrap().unwrap(), b"value");
        // An empty value is found (not confused with a missing key).
        assert_eq!(db.get(b"empty").unwrap().as_deref(), Some(&b""[..]));
        db.delete(b"k").unwrap();
        assert!(db.get(b"k").unwrap().is_none());
    }

    #[test]
    fn iterator_and_batch() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), &EngineOptions::default()).unwrap();
        let mut batch = WriteBatch::new().unwrap();
        for k in ["b", "a", "c"] {
            batch.put(k.as_bytes(), k.as_bytes());
        }
        db.write(&mut batch).unwrap();
        batch.clear();
        batch.delete(b"c");
        db.write(&mut batch).unwrap();
        let mut it = db.iter().unwrap();
        it.seek(b"");
        let mut keys = Vec::new();
        while it.valid() {
            keys.push(it.key().to_vec());
            assert_eq!(it.key(), it.value());
            it.next();
        }
        it.status().unwrap();
        assert_eq!(keys, vec![b"a".to_vec(), b"b".to_vec()]);
    }

    #[test]
    fn properties_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), &EngineOptions::default()).unwrap();
        assert_eq!(
            db.property("leveldb.num-files-at-level0").as_deref(),
            Some("0")
        );
        assert_eq!(db.property("leveldb.no-such-property"), None);
        assert_eq!(db.property("bad\0name"), None);
        // LevelDB refuses a second open of a locked database in-process.
        let err = Db::open(dir.path(), &EngineOptions::default())
            .err()
            .unwrap();
        assert!(err.contains("lock"), "{err}");
        let (major, minor) = linked_version();
        assert!(major >= 1 && minor >= 0);
    }
}
