//! The part of LMDB's C API (`lmdb.h`, stable since LMDB 0.9) the store
//! uses, and safe wrappers around it.
//!
//! Declared here rather than taken from a `-sys` crate: the maintained
//! ones either compile their own bundled LMDB (`lmdb-master-sys`, under
//! `heed`) or look for a `liblmdb.pc` that Debian does not ship
//! (`lmdb-sys`, `lmdb-rkv-sys`, which then also compile a bundled copy).
//! The store must measure the library the system has, the one YCSB-cpp
//! links.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::path::Path;
use std::ptr::{self, NonNull};

#[repr(C)]
pub(crate) struct MdbEnv {
    _private: [u8; 0],
}
#[repr(C)]
pub(crate) struct MdbTxn {
    _private: [u8; 0],
}
#[repr(C)]
pub(crate) struct MdbCursor {
    _private: [u8; 0],
}

/// `MDB_val`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct MdbVal {
    mv_size: usize,
    mv_data: *mut c_void,
}

impl MdbVal {
    fn of(bytes: &[u8]) -> MdbVal {
        MdbVal {
            mv_size: bytes.len(),
            mv_data: bytes.as_ptr().cast_mut().cast(),
        }
    }

    const EMPTY: MdbVal = MdbVal {
        mv_size: 0,
        mv_data: ptr::null_mut(),
    };

    /// # Safety
    ///
    /// `self` was filled by LMDB for a transaction that is still live; the
    /// slice must not outlive it.
    unsafe fn bytes<'a>(self) -> &'a [u8] {
        if self.mv_size == 0 {
            return &[];
        }
        // SAFETY: LMDB points mv_data at mv_size bytes of the map, valid
        // for the transaction (the caller's promise).
        unsafe { std::slice::from_raw_parts(self.mv_data.cast::<u8>(), self.mv_size) }
    }
}

/// `MDB_stat`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MdbStat {
    pub ms_psize: c_uint,
    pub ms_depth: c_uint,
    pub ms_branch_pages: usize,
    pub ms_leaf_pages: usize,
    pub ms_overflow_pages: usize,
    pub ms_entries: usize,
}

/// `MDB_envinfo`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct MdbEnvInfo {
    pub me_mapaddr: *mut c_void,
    pub me_mapsize: usize,
    pub me_last_pgno: usize,
    pub me_last_txnid: usize,
    pub me_maxreaders: c_uint,
    pub me_numreaders: c_uint,
}

pub(crate) const MDB_NOSYNC: c_uint = 0x10000;
pub(crate) const MDB_RDONLY: c_uint = 0x20000;
pub(crate) const MDB_NOMETASYNC: c_uint = 0x40000;
pub(crate) const MDB_WRITEMAP: c_uint = 0x80000;
pub(crate) const MDB_MAPASYNC: c_uint = 0x100000;
pub(crate) const MDB_NOTLS: c_uint = 0x200000;
pub(crate) const MDB_NORDAHEAD: c_uint = 0x800000;

const MDB_NOTFOUND: c_int = -30798;

/// `MDB_cursor_op` values (the enum's order in lmdb.h).
const MDB_FIRST: c_int = 0;
const MDB_NEXT: c_int = 8;
const MDB_SET_RANGE: c_int = 17;

#[link(name = "lmdb")]
extern "C" {
    fn mdb_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) -> *const c_char;
    fn mdb_strerror(err: c_int) -> *const c_char;
    fn mdb_env_create(env: *mut *mut MdbEnv) -> c_int;
    fn mdb_env_open(env: *mut MdbEnv, path: *const c_char, flags: c_uint, mode: u32) -> c_int;
    fn mdb_env_close(env: *mut MdbEnv);
    fn mdb_env_set_mapsize(env: *mut MdbEnv, size: usize) -> c_int;
    fn mdb_env_set_maxreaders(env: *mut MdbEnv, readers: c_uint) -> c_int;
    fn mdb_env_stat(env: *mut MdbEnv, stat: *mut MdbStat) -> c_int;
    fn mdb_env_info(env: *mut MdbEnv, info: *mut MdbEnvInfo) -> c_int;
    fn mdb_env_sync(env: *mut MdbEnv, force: c_int) -> c_int;
    fn mdb_txn_begin(
        env: *mut MdbEnv,
        parent: *mut MdbTxn,
        flags: c_uint,
        txn: *mut *mut MdbTxn,
    ) -> c_int;
    fn mdb_txn_commit(txn: *mut MdbTxn) -> c_int;
    fn mdb_txn_abort(txn: *mut MdbTxn);
    fn mdb_txn_reset(txn: *mut MdbTxn);
    fn mdb_txn_renew(txn: *mut MdbTxn) -> c_int;
    fn mdb_dbi_open(
        txn: *mut MdbTxn,
        name: *const c_char,
        flags: c_uint,
        dbi: *mut c_uint,
    ) -> c_int;
    fn mdb_get(txn: *mut MdbTxn, dbi: c_uint, key: *mut MdbVal, data: *mut MdbVal) -> c_int;
    fn mdb_put(
        txn: *mut MdbTxn,
        dbi: c_uint,
        key: *mut MdbVal,
        data: *mut MdbVal,
        flags: c_uint,
    ) -> c_int;
    fn mdb_del(txn: *mut MdbTxn, dbi: c_uint, key: *mut MdbVal, data: *mut MdbVal) -> c_int;
    fn mdb_cursor_open(txn: *mut MdbTxn, dbi: c_uint, cursor: *mut *mut MdbCursor) -> c_int;
    fn mdb_cursor_close(cursor: *mut MdbCursor);
    fn mdb_cursor_get(
        cursor: *mut MdbCursor,
        key: *mut MdbVal,
        data: *mut MdbVal,
        op: c_int,
    ) -> c_int;
}

/// LMDB's message for an error code (its own codes and errno values).
pub(crate) fn error_message(code: c_int) -> String {
    // SAFETY: mdb_strerror returns a static NUL-terminated string for any
    // code (strerror's for errno values).
    unsafe { CStr::from_ptr(mdb_strerror(code)) }
        .to_string_lossy()
        .into_owned()
}

fn check(code: c_int, what: &str) -> Result<(), String> {
    if code == 0 {
        Ok(())
    } else {
        Err(format!("{what}: {}", error_message(code)))
    }
}

/// The linked library's version, `major.minor.patch`.
pub(crate) fn linked_version() -> String {
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: three valid out-pointers; the returned string is ignored.
    unsafe { mdb_version(&mut major, &mut minor, &mut patch) };
    format!("{major}.{minor}.{patch}")
}

/// The file LMDB was loaded from: the shared library, or this program
/// when LMDB is linked statically.
pub(crate) fn linked_library() -> Option<String> {
    ycsb_db::loaded_from(library_code())
}

/// What the environment is opened with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EnvOptions {
    /// `None`: LMDB's own (the stored size of an existing database, else
    /// its default).
    pub map_size: Option<usize>,
    pub max_readers: u32,
    pub flags: c_uint,
}

/// An open LMDB environment and its unnamed database: shared by every
/// client thread (LMDB serialises writers itself, readers need no lock).
pub(crate) struct Env {
    env: NonNull<MdbEnv>,
    dbi: c_uint,
}

// SAFETY: an MDB_env is thread-safe; transactions are per thread and, with
// MDB_NOTLS (always set here), a read transaction is not tied to the OS
// thread that began it.
unsafe impl Send for Env {}
// SAFETY: as above; every method takes `&self` and starts its own
// transaction.
unsafe impl Sync for Env {}

impl Drop for Env {
    fn drop(&mut self) {
        // SAFETY: no transaction outlives the Env (threads borrow it).
        unsafe { mdb_env_close(self.env.as_ptr()) };
    }
}

impl Env {
    /// Opens (creating if missing) the environment in directory `path`.
    pub fn open(path: &Path, options: &EnvOptions) -> Result<Env, String> {
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| "the path contains a NUL byte".to_string())?;
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe { mdb_env_create(&mut raw) }, "mdb_env_create")?;
        let env = NonNull::new(raw).ok_or("mdb_env_create returned no environment")?;
        // From here on, dropping `guard` closes the half-opened environment.
        let mut guard = Env { env, dbi: 0 };
        // SAFETY: a freshly created environment, not yet opened.
        unsafe {
            if let Some(size) = options.map_size {
                check(mdb_env_set_mapsize(raw, size), "mdb_env_set_mapsize")?;
            }
            check(
                mdb_env_set_maxreaders(raw, options.max_readers),
                "mdb_env_set_maxreaders",
            )?;
            check(
                mdb_env_open(raw, c_path.as_ptr(), options.flags | MDB_NOTLS, 0o664),
                "mdb_env_open",
            )?;
        }
        let mut txn = ptr::null_mut();
        // SAFETY: an open environment; the transaction is committed or
        // aborted before returning.
        unsafe {
            check(
                mdb_txn_begin(raw, ptr::null_mut(), 0, &mut txn),
                "mdb_txn_begin",
            )?;
            let mut dbi = 0;
            if let Err(e) = check(mdb_dbi_open(txn, ptr::null(), 0, &mut dbi), "mdb_dbi_open") {
                mdb_txn_abort(txn);
                return Err(e);
            }
            check(mdb_txn_commit(txn), "mdb_txn_commit")?;
            guard.dbi = dbi;
        }
        if options.flags & MDB_WRITEMAP != 0 {
            guard.reserve_map(path)?;
        }
        Ok(guard)
    }

    /// Allocates the whole map in `data.mdb` on disk, for MDB_WRITEMAP.
    ///
    /// LMDB makes the file as large as the map, but sparse: a commit then
    /// writes through the map into holes, and when the file system cannot
    /// hold a page the kernel kills the process with SIGBUS, mid-run and
    /// with nothing reported. With every page allocated at open, a full
    /// map is LMDB's MDB_MAP_FULL error instead. When the file system has
    /// no room for the map, nothing is allocated and the open is refused.
    fn reserve_map(&self, dir: &Path) -> Result<(), String> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        let map_size = self
            .info()
            .ok_or("mdb_env_info failed after the environment opened")?
            .me_mapsize as u64;
        let data = dir.join("data.mdb");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&data)
            .map_err(|e| format!("lmdb.writemap=true: cannot open {}: {e}", data.display()))?;
        let allocated = file
            .metadata()
            .map_err(|e| format!("lmdb.writemap=true: {}: {e}", data.display()))?
            .blocks()
            .saturating_mul(512);
        let needed = map_size.saturating_sub(allocated);
        if let Some(free) = free_bytes(dir) {
            if u128::from(needed) > free {
                return Err(format!(
                    "lmdb.writemap=true writes through a map of lmdb.mapsize={map_size} bytes, \
                     which data.mdb must hold on disk (a page the file system cannot hold would \
                     kill the process with SIGBUS), but its file system has {free} bytes free \
                     and {needed} more are needed: lower lmdb.mapsize or set lmdb.writemap=false"
                ));
            }
        }
        let length = libc::off_t::try_from(map_size)
            .map_err(|_| format!("lmdb.mapsize={map_size} is larger than a file can be"))?;
        // SAFETY: an open file descriptor, owned by `file` for the call.
        let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, length) };
        if rc != 0 {
            return Err(format!(
                "lmdb.writemap=true: cannot allocate the {map_size} bytes of lmdb.mapsize in {} \
                 ({}): lower lmdb.mapsize or set lmdb.writemap=false",
                data.display(),
                std::io::Error::from_raw_os_error(rc)
            ));
        }
        Ok(())
    }

    /// `mdb_env_stat`: the main database's B-tree.
    pub fn stat(&self) -> Option<MdbStat> {
        let mut stat = MdbStat::default();
        // SAFETY: an open environment and a valid out-pointer.
        (unsafe { mdb_env_stat(self.env.as_ptr(), &mut stat) } == 0).then_some(stat)
    }

    /// `mdb_env_info`: the map and the reader table.
    pub fn info(&self) -> Option<MdbEnvInfo> {
        let mut info = std::mem::MaybeUninit::<MdbEnvInfo>::zeroed();
        // SAFETY: an open environment and a valid out-pointer, which
        // mdb_env_info fills completely on success.
        (unsafe { mdb_env_info(self.env.as_ptr(), info.as_mut_ptr()) } == 0)
            .then(|| unsafe { info.assume_init() })
    }

    /// Flushes the data buffers to disk (for `lmdb.nosync` databases).
    pub fn sync(&self) -> Result<(), String> {
        // SAFETY: an open environment.
        check(
            unsafe { mdb_env_sync(self.env.as_ptr(), 1) },
            "mdb_env_sync",
        )
    }

    /// A read-only transaction, kept by a thread and renewed per read.
    pub fn reader(&self) -> Result<Reader<'_>, String> {
        let mut txn = ptr::null_mut();
        // SAFETY: an open environment and a valid out-pointer.
        check(
            unsafe { mdb_txn_begin(self.env.as_ptr(), ptr::null_mut(), MDB_RDONLY, &mut txn) },
            "mdb_txn_begin",
        )?;
        let txn = NonNull::new(txn).ok_or("mdb_txn_begin returned no transaction")?;
        // SAFETY: a live read transaction; reset until the first read.
        unsafe { mdb_txn_reset(txn.as_ptr()) };
        Ok(Reader { env: self, txn })
    }

    /// A write transaction (LMDB lets one run at a time).
    pub fn write(&self) -> Result<Writer<'_>, c_int> {
        let mut txn = ptr::null_mut();
        // SAFETY: an open environment and a valid out-pointer.
        let rc = unsafe { mdb_txn_begin(self.env.as_ptr(), ptr::null_mut(), 0, &mut txn) };
        match NonNull::new(txn) {
            Some(txn) if rc == 0 => Ok(Writer {
                dbi: self.dbi,
                txn,
                _env: std::marker::PhantomData,
            }),
            _ => Err(rc),
        }
    }
}

/// A thread's read-only transaction, reset between reads so that it holds
/// no snapshot (which would keep LMDB from reusing freed pages).
pub(crate) struct Reader<'env> {
    env: &'env Env,
    txn: NonNull<MdbTxn>,
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        // SAFETY: our transaction, aborted once.
        unsafe { mdb_txn_abort(self.txn.as_ptr()) };
    }
}

/// A snapshot of the database, live until dropped.
pub(crate) struct Snapshot<'r> {
    dbi: c_uint,
    txn: *mut MdbTxn,
    _reader: std::marker::PhantomData<&'r mut ()>,
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        // SAFETY: the renewed transaction of the reader this borrows.
        unsafe { mdb_txn_reset(self.txn) };
    }
}

impl Reader<'_> {
    /// Renews the transaction: a snapshot of the latest commit.
    pub fn snapshot(&mut self) -> Result<Snapshot<'_>, c_int> {
        // SAFETY: our reset transaction.
        let rc = unsafe { mdb_txn_renew(self.txn.as_ptr()) };
        if rc != 0 {
            return Err(rc);
        }
        Ok(Snapshot {
            dbi: self.env.dbi,
            txn: self.txn.as_ptr(),
            _reader: std::marker::PhantomData,
        })
    }
}

/// `mdb_get` in `txn`.
fn get<'t>(txn: *mut MdbTxn, dbi: c_uint, key: &[u8]) -> Result<Option<&'t [u8]>, c_int> {
    let mut k = MdbVal::of(key);
    let mut v = MdbVal::EMPTY;
    // SAFETY: a live transaction and valid MDB_vals; LMDB only reads the key.
    match unsafe { mdb_get(txn, dbi, &mut k, &mut v) } {
        // SAFETY: filled by LMDB for the live transaction; the callers tie
        // the lifetime to it.
        0 => Ok(Some(unsafe { v.bytes() })),
        MDB_NOTFOUND => Ok(None),
        rc => Err(rc),
    }
}

impl Snapshot<'_> {
    /// The value of `key`, borrowed from the map.
    pub fn get(&self, key: &[u8]) -> Result<Option<&[u8]>, c_int> {
        get(self.txn, self.dbi, key)
    }

    /// Calls `visit` with each entry from the first key `>= start`, in key
    /// order, until it returns false or the keys run out.
    pub fn scan_from(
        &self,
        start: &[u8],
        mut visit: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), c_int> {
        let mut cursor = ptr::null_mut();
        // SAFETY: a live transaction and a valid out-pointer.
        let rc = unsafe { mdb_cursor_open(self.txn, self.dbi, &mut cursor) };
        if rc != 0 {
            return Err(rc);
        }
        let mut k = MdbVal::of(start);
        let mut v = MdbVal::EMPTY;
        // LMDB refuses an empty key (EINVAL): the first key is >= "".
        let mut op = if start.is_empty() {
            MDB_FIRST
        } else {
            MDB_SET_RANGE
        };
        let result = loop {
            // SAFETY: an open cursor; LMDB only reads the key for SET_RANGE
            // and overwrites both vals.
            match unsafe { mdb_cursor_get(cursor, &mut k, &mut v, op) } {
                0 => {}
                MDB_NOTFOUND => break Ok(()),
                rc => break Err(rc),
            }
            // SAFETY: filled by LMDB for the live transaction.
            if !visit(unsafe { k.bytes() }, unsafe { v.bytes() }) {
                break Ok(());
            }
            op = MDB_NEXT;
        };
        // SAFETY: our cursor, closed once, before the transaction ends.
        unsafe { mdb_cursor_close(cursor) };
        result
    }
}

/// A write transaction; aborted when dropped without a commit.
pub(crate) struct Writer<'env> {
    dbi: c_uint,
    txn: NonNull<MdbTxn>,
    _env: std::marker::PhantomData<&'env Env>,
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        // SAFETY: our live transaction (commit forgets `self`).
        unsafe { mdb_txn_abort(self.txn.as_ptr()) };
    }
}

impl Writer<'_> {
    /// The value of `key` as this transaction sees it.
    pub fn get(&self, key: &[u8]) -> Result<Option<&[u8]>, c_int> {
        get(self.txn.as_ptr(), self.dbi, key)
    }

    /// Stores `value` at `key`.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), c_int> {
        let mut k = MdbVal::of(key);
        let mut v = MdbVal::of(value);
        // SAFETY: a live write transaction; LMDB copies both.
        match unsafe { mdb_put(self.txn.as_ptr(), self.dbi, &mut k, &mut v, 0) } {
            0 => Ok(()),
            rc => Err(rc),
        }
    }

    /// Deletes `key`; `Ok(false)` when it was not there.
    pub fn delete(&mut self, key: &[u8]) -> Result<bool, c_int> {
        let mut k = MdbVal::of(key);
        // SAFETY: a live write transaction; a null data deletes every value.
        match unsafe { mdb_del(self.txn.as_ptr(), self.dbi, &mut k, ptr::null_mut()) } {
            0 => Ok(true),
            MDB_NOTFOUND => Ok(false),
            rc => Err(rc),
        }
    }

    /// Commits (and, unless `lmdb.nosync`, syncs) the transaction.
    pub fn commit(self) -> Result<(), c_int> {
        let txn = self.txn.as_ptr();
        std::mem::forget(self);
        // SAFETY: our live transaction; commit frees it, success or not.
        match unsafe { mdb_txn_commit(txn) } {
            0 => Ok(()),
            rc => Err(rc),
        }
    }
}

/// Whether the file system holding `path` is (about) full: under 1 MiB
/// left for an unprivileged writer (`statvfs`), less than a write of dirty
/// pages may need; false when it cannot be asked.
pub(crate) fn file_system_is_full(path: &std::path::Path) -> bool {
    free_bytes(path).is_some_and(|free| free < 1 << 20)
}

/// Bytes an unprivileged writer may still use on the file system holding
/// `path` (`statvfs`), or `None` when it cannot be asked.
fn free_bytes(path: &std::path::Path) -> Option<u128> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stats = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: a NUL-terminated path and a buffer of the struct statvfs
    // fills; it is read only when the call succeeded.
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), stats.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it initialised the struct.
    let stats = unsafe { stats.assume_init() };
    Some(u128::from(stats.f_bavail) * u128::from(stats.f_frsize))
}

/// The address of a function of the linked LMDB library, to find which
/// file it was loaded from (`EngineBuild::of_code`); never called through
/// this pointer.
pub(crate) fn library_code() -> *const () {
    crate::lazy::address(c"mdb_version").unwrap_or(mdb_version as *const ())
}
