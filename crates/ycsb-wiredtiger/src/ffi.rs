//! Safe wrappers over WiredTiger's C API.
//!
//! This is the crate's only module with `unsafe` code (with `sys.rs`, its
//! declarations). WiredTiger's API is function pointers inside its handle
//! structs (`WT_CONNECTION`, `WT_SESSION`, `WT_CURSOR`), declared in
//! `sys.rs` from WiredTiger 3.2's `wiredtiger.h`. Because that layout is
//! version-specific, [`Connection::open`] refuses a linked library of
//! another major.minor version.
//!
//! Ownership: a [`Connection`] owns the `WT_CONNECTION` and the event
//! handler WiredTiger keeps a pointer to; a [`Session`] borrows the
//! connection and owns its `WT_SESSION`; a [`Cursor`] takes over a session
//! (WiredTiger's sessions and cursors are single-threaded: one of each per
//! client thread) and owns the `WT_CURSOR`. Each is closed by its `Drop`,
//! the cursor before its session, the sessions before the connection,
//! which the borrows enforce.

use std::ffi::{c_char, c_int, CStr, CString};

use crate::sys::{
    wiredtiger_open, wiredtiger_strerror, wiredtiger_version, CursorOp, WtConnection, WtCursor,
    WtEventHandler, WtItem, WtSession, DECLARED_VERSION,
};
pub(crate) use crate::sys::{WT_NOTFOUND, WT_PANIC, WT_ROLLBACK};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

impl WtItem {
    fn empty() -> WtItem {
        WtItem::of(&[])
    }
}

/// A failed WiredTiger call: its return code and the engine's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WtError {
    pub code: c_int,
    pub message: String,
}

impl std::fmt::Display for WtError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// WiredTiger's text for a return code.
fn strerror(code: c_int) -> String {
    // SAFETY: wiredtiger_strerror accepts any code and returns a pointer to
    // a static NUL-terminated string (or a thread-local buffer for unknown
    // codes) that we copy at once.
    let text = unsafe { wiredtiger_strerror(code) };
    if text.is_null() {
        return format!("error {code}");
    }
    // SAFETY: non-null, NUL-terminated, valid for this call (see above).
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

/// The linked library's version, `(major, minor, patch)`.
pub(crate) fn linked_version() -> (i32, i32, i32) {
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: three valid out-pointers; the returned static string is not
    // used.
    unsafe { wiredtiger_version(&mut major, &mut minor, &mut patch) };
    (major, minor, patch)
}

/// The file WiredTiger was loaded from (the shared library, or this
/// program when it is linked statically).
pub(crate) fn linked_library() -> Option<String> {
    ycsb_db::loaded_from(library_code())
}

/// The event handler WiredTiger calls with its error messages: they are
/// kept (the last one) instead of printed, so that errors reach the user
/// as one line through the store's error values. `base` comes first so
/// that WiredTiger's `WT_EVENT_HANDLER *` is a pointer to this struct.
#[repr(C)]
struct Handler {
    base: WtEventHandler,
    last_error: Mutex<Option<String>>,
    /// The connection's first error message: after a panic (WiredTiger
    /// panics on a failed write, such as a full disk), every call answers
    /// WT_PANIC, and this says why.
    first_error: Mutex<Option<String>>,
    /// Whether WiredTiger reported a failed write (a full disk, an I/O
    /// error) or a panic: closing such a connection can wait forever
    /// (WiredTiger 3.2 retries the log write of its final checkpoint).
    write_failed: AtomicBool,
}

unsafe extern "C" fn handle_error(
    handler: *mut WtEventHandler,
    _session: *mut WtSession,
    error: c_int,
    message: *const c_char,
) -> c_int {
    if handler.is_null() || message.is_null() {
        return 0;
    }
    // SAFETY: WiredTiger passes back the handler we registered, which is
    // the `base` field at offset 0 of a live, boxed `Handler` (the
    // connection owns it and closes WiredTiger before freeing it); only
    // shared access is taken, the mutex guards the message.
    let handler = unsafe { &*handler.cast::<Handler>() };
    if matches!(error, libc::ENOSPC | libc::EIO | libc::EDQUOT | WT_PANIC) {
        handler.write_failed.store(true, Ordering::Relaxed);
    }
    // SAFETY: a non-null NUL-terminated message valid for this call.
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy();
    let text = without_stamp(&text).to_string();
    if let Ok(mut first) = handler.first_error.lock() {
        if first.is_none() {
            *first = Some(text.clone());
        }
    }
    if let Ok(mut last) = handler.last_error.lock() {
        *last = Some(text);
    }
    0
}

/// A message without WiredTiger's `[seconds:micros][pid:thread], ` prefix,
/// which says nothing to the user and differs in every run.
fn without_stamp(message: &str) -> &str {
    let mut rest = message;
    while let Some(stripped) = rest.strip_prefix('[') {
        match stripped.split_once(']') {
            Some((_, after)) => rest = after,
            None => break,
        }
    }
    match rest.strip_prefix(", ").or_else(|| rest.strip_prefix(": ")) {
        Some(after) if rest.len() != message.len() => after,
        _ => message,
    }
}

/// Informational messages (verbose output) are dropped: a library does
/// not print.
unsafe extern "C" fn handle_message(
    _handler: *mut WtEventHandler,
    _session: *mut WtSession,
    _message: *const c_char,
) -> c_int {
    0
}

impl Handler {
    fn new() -> Box<Handler> {
        Box::new(Handler {
            base: WtEventHandler {
                handle_error: Some(handle_error),
                handle_message: Some(handle_message),
                handle_progress: ptr::null(),
                handle_close: ptr::null(),
            },
            last_error: Mutex::new(None),
            first_error: Mutex::new(None),
            write_failed: AtomicBool::new(false),
        })
    }

    fn take_last(&self) -> Option<String> {
        self.last_error.lock().ok().and_then(|mut m| m.take())
    }

    /// The error for `code`: WiredTiger's detailed message where it gave
    /// one, else its text for the code.
    fn error(&self, code: c_int) -> WtError {
        let mut message = match self.take_last() {
            Some(detail) => detail,
            None => strerror(code),
        };
        if code == WT_PANIC {
            let first = self.first_error.lock().ok().and_then(|f| f.clone());
            if let Some(first) = first.filter(|f| *f != message) {
                message = format!("{message} (after: {first})");
            }
        }
        WtError { code, message }
    }
}

fn cstring(text: &str) -> Result<CString, WtError> {
    CString::new(text).map_err(|_| WtError {
        code: libc::EINVAL,
        message: format!("{text:?} contains a NUL byte"),
    })
}

/// An open WiredTiger database (`WT_CONNECTION`), closed on drop.
pub(crate) struct Connection {
    conn: NonNull<WtConnection>,
    // Boxed: WiredTiger keeps a pointer to it until the connection closes.
    handler: Box<Handler>,
}

// SAFETY: WT_CONNECTION's methods are thread-safe (WiredTiger's
// documentation: "All WT_CONNECTION methods are thread safe"), and the
// handler is only read through its mutex.
unsafe impl Send for Connection {}
// SAFETY: as above.
unsafe impl Sync for Connection {}

impl Connection {
    /// Opens (creating if `config` says so) the database in `home`.
    pub fn open(home: &std::path::Path, config: &str) -> Result<Connection, WtError> {
        let (major, minor, patch) = linked_version();
        if (major, minor) != DECLARED_VERSION {
            return Err(WtError {
                code: libc::ENOTSUP,
                message: format!(
                    "the linked WiredTiger is {major}.{minor}.{patch}, but this binding declares \
                     the structs of WiredTiger {}.{} (link a {}.{} build; docs/engines-wiredtiger.md)",
                    DECLARED_VERSION.0, DECLARED_VERSION.1, DECLARED_VERSION.0, DECLARED_VERSION.1
                ),
            });
        }
        let home = cstring(&home.to_string_lossy())?;
        let config = cstring(config)?;
        let mut handler = Handler::new();
        let mut conn = ptr::null_mut();
        // SAFETY: valid NUL-terminated strings, a handler that outlives the
        // connection (it moves with the Box into the result) and a valid
        // out-pointer.
        let ret = unsafe {
            wiredtiger_open(home.as_ptr(), &mut handler.base, config.as_ptr(), &mut conn)
        };
        if ret != 0 {
            return Err(handler.error(ret));
        }
        let conn = NonNull::new(conn).ok_or_else(|| handler.error(libc::EINVAL))?;
        Ok(Connection { conn, handler })
    }

    /// A new session on this connection.
    pub fn session(&self) -> Result<Session<'_>, WtError> {
        let conn = self.conn.as_ptr();
        let mut session = ptr::null_mut();
        // SAFETY: `conn` is open (we own it); a null event handler means
        // the connection's; a null config is allowed; valid out-pointer.
        let ret = unsafe {
            let open = (*conn)
                .open_session
                .ok_or_else(|| self.handler.error(libc::ENOTSUP))?;
            open(conn, ptr::null_mut(), ptr::null(), &mut session)
        };
        if ret != 0 {
            return Err(self.handler.error(ret));
        }
        let session = NonNull::new(session).ok_or_else(|| self.handler.error(libc::EINVAL))?;
        Ok(Session {
            session,
            conn: self,
        })
    }

    /// WiredTiger's message for the last failure it reported, if any.
    pub fn error(&self, code: c_int) -> WtError {
        self.handler.error(code)
    }

    /// The first error of a connection on which a write failed (a full
    /// disk), or `None` while all is well.
    pub fn write_failure(&self) -> Option<String> {
        if !self.handler.write_failed.load(Ordering::Relaxed) {
            return None;
        }
        let first = self.handler.first_error.lock().ok().and_then(|f| f.clone());
        Some(first.unwrap_or_else(|| strerror(WT_PANIC)))
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if self.handler.write_failed.load(Ordering::Relaxed) {
            // Closing would checkpoint, and after a failed log write
            // WiredTiger 3.2 retries its checkpoint's log record forever.
            // Left open, the database is as a killed process leaves it:
            // the next open recovers it. The handler stays allocated for
            // WiredTiger's threads.
            std::mem::forget(std::mem::replace(&mut self.handler, Handler::new()));
            return;
        }
        let conn = self.conn.as_ptr();
        // SAFETY: we own the open connection and close it exactly once;
        // every session borrowed it and is closed already. Closing
        // checkpoints the database.
        unsafe {
            if let Some(close) = (*conn).close {
                close(conn, ptr::null());
            }
        }
    }
}

/// A `WT_SESSION`: one thread's context, closed on drop.
pub(crate) struct Session<'c> {
    session: NonNull<WtSession>,
    conn: &'c Connection,
}

impl<'c> Session<'c> {
    fn check(&self, ret: c_int) -> Result<(), WtError> {
        if ret == 0 {
            Ok(())
        } else {
            Err(self.conn.error(ret))
        }
    }

    /// `WT_SESSION::create`: creates the object `uri` unless it exists.
    pub fn create(&self, uri: &str, config: &str) -> Result<(), WtError> {
        let (uri, config) = (cstring(uri)?, cstring(config)?);
        let s = self.session.as_ptr();
        // SAFETY: an open session used by this thread only (`Session`
        // holds a raw pointer, so it is neither Send nor Sync), valid
        // strings.
        let ret = unsafe {
            match (*s).create {
                Some(create) => create(s, uri.as_ptr(), config.as_ptr()),
                None => libc::ENOTSUP,
            }
        };
        self.check(ret)
    }

    /// `WT_SESSION::begin_transaction`, `commit_transaction` or
    /// `rollback_transaction` (as `op` picks it) with the default
    /// configuration.
    fn transaction(
        &self,
        op: fn(&crate::sys::WtSession) -> crate::sys::SessionConfigOp,
    ) -> Result<(), WtError> {
        let s = self.session.as_ptr();
        // SAFETY: an open session on this thread; null config is allowed.
        let ret = unsafe {
            match op(&*s) {
                Some(call) => call(s, ptr::null()),
                None => libc::ENOTSUP,
            }
        };
        self.check(ret)
    }

    /// `WT_SESSION::checkpoint` with the default configuration.
    pub fn checkpoint(&self) -> Result<(), WtError> {
        let s = self.session.as_ptr();
        // SAFETY: an open session on this thread; null config is allowed.
        let ret = unsafe {
            match (*s).checkpoint {
                Some(checkpoint) => checkpoint(s, ptr::null()),
                None => libc::ENOTSUP,
            }
        };
        self.check(ret)
    }

    /// `WT_SESSION::compact` of `uri`.
    pub fn compact(&self, uri: &str) -> Result<(), WtError> {
        let uri = cstring(uri)?;
        let s = self.session.as_ptr();
        // SAFETY: an open session on this thread, a valid string, null
        // config allowed.
        let ret = unsafe {
            match (*s).compact {
                Some(compact) => compact(s, uri.as_ptr(), ptr::null()),
                None => libc::ENOTSUP,
            }
        };
        self.check(ret)
    }

    /// Opens a cursor on `uri` with `config`; the cursor keeps the session.
    pub fn cursor(self, uri: &str, config: &str) -> Result<Cursor<'c>, WtError> {
        let (uri, config) = (cstring(uri)?, cstring(config)?);
        let s = self.session.as_ptr();
        let mut cursor = ptr::null_mut();
        // SAFETY: an open session on this thread (owned by the cursor from
        // here on), valid strings, no cursor to duplicate, valid
        // out-pointer.
        let ret = unsafe {
            match (*s).open_cursor {
                Some(open) => open(
                    s,
                    uri.as_ptr(),
                    ptr::null_mut(),
                    config.as_ptr(),
                    &mut cursor,
                ),
                None => libc::ENOTSUP,
            }
        };
        self.check(ret)?;
        let cursor = NonNull::new(cursor).ok_or_else(|| self.conn.error(libc::EINVAL))?;
        Ok(Cursor {
            cursor,
            conn: self.conn,
            _session: self,
        })
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let s = self.session.as_ptr();
        // SAFETY: we own the open session and close it once; its cursors
        // borrowed it and are closed already.
        unsafe {
            if let Some(close) = (*s).close {
                close(s, ptr::null());
            }
        }
    }
}

/// A `WT_CURSOR` on a table of `key_format=u,value_format=u` (byte
/// strings), or on a statistics source; closed on drop.
pub(crate) struct Cursor<'c> {
    cursor: NonNull<WtCursor>,
    conn: &'c Connection,
    /// Closed (dropped) after the cursor, by field order after `Drop`.
    _session: Session<'c>,
}

/// Calls a cursor method that takes only the cursor.
///
/// # Safety
///
/// `c` must be an open cursor used by this thread only.
unsafe fn call(c: *mut WtCursor, op: CursorOp) -> c_int {
    match op {
        // SAFETY: the caller's contract.
        Some(op) => unsafe { op(c) },
        None => libc::ENOTSUP,
    }
}

impl Cursor<'_> {
    fn ptr(&self) -> *mut WtCursor {
        self.cursor.as_ptr()
    }

    fn fail(&self, ret: c_int) -> WtError {
        self.conn.error(ret)
    }

    /// Sets the key to `key` for the next call.
    ///
    /// # Safety
    ///
    /// WiredTiger keeps a pointer to `key`'s bytes (it does not copy them):
    /// the next cursor call must happen while `key` is borrowed.
    unsafe fn set_key(&mut self, key: &WtItem) {
        let c = self.ptr();
        // SAFETY: an open cursor of key format `u`, which takes a
        // `WT_ITEM *`; the caller keeps the item alive for the next call.
        unsafe {
            if let Some(set) = (*c).set_key {
                set(c, key as *const WtItem);
            }
        }
    }

    /// As [`Cursor::set_key`], for the value.
    ///
    /// # Safety
    ///
    /// As `set_key`.
    unsafe fn set_value(&mut self, value: &WtItem) {
        let c = self.ptr();
        // SAFETY: as in set_key, for value format `u`.
        unsafe {
            if let Some(set) = (*c).set_value {
                set(c, value as *const WtItem);
            }
        }
    }

    /// The bytes of the key or value the cursor is positioned on; they
    /// stay valid until the next call on the cursor, which the borrow of
    /// `self` guarantees.
    fn item(&self, value: bool) -> Result<&[u8], WtError> {
        let c = self.ptr();
        let mut item = WtItem::empty();
        // SAFETY: a positioned cursor of format `u` fills a `WT_ITEM *`.
        let ret = unsafe {
            let get = if value { (*c).get_value } else { (*c).get_key };
            match get {
                Some(get) => get(c, &mut item as *mut WtItem),
                None => libc::ENOTSUP,
            }
        };
        if ret != 0 {
            return Err(self.fail(ret));
        }
        if item.size == 0 {
            return Ok(&[]);
        }
        // SAFETY: WiredTiger's buffer of `size` bytes, valid until the
        // cursor moves or is reset: no `&mut self` call can happen while
        // the returned slice borrows `self`.
        Ok(unsafe { std::slice::from_raw_parts(item.data.cast::<u8>(), item.size) })
    }

    /// Begins a transaction on the cursor's session: its writes until
    /// [`commit_transaction`](Self::commit_transaction) are one.
    pub fn begin_transaction(&mut self) -> Result<(), WtError> {
        self._session.transaction(|s| s.begin_transaction)
    }

    /// Commits the session's transaction (one log sync with
    /// `transaction_sync`); a failed commit has rolled it back.
    pub fn commit_transaction(&mut self) -> Result<(), WtError> {
        self._session.transaction(|s| s.commit_transaction)
    }

    /// Rolls the session's transaction back.
    pub fn rollback_transaction(&mut self) -> Result<(), WtError> {
        self._session.transaction(|s| s.rollback_transaction)
    }

    /// Releases the cursor's position (its page and snapshot).
    pub fn reset(&mut self) {
        let c = self.ptr();
        // SAFETY: an open cursor on this thread.
        unsafe { call(c, (*c).reset) };
    }

    /// Looks `key` up and calls `f` with its value; `Ok(None)` when it is
    /// missing. The cursor is reset afterwards.
    pub fn get<R>(&mut self, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>, WtError> {
        let item = WtItem::of(key);
        // SAFETY: `item` and `key` outlive the search call below.
        unsafe { self.set_key(&item) };
        let c = self.ptr();
        // SAFETY: an open cursor on this thread, its key just set.
        let ret = unsafe { call(c, (*c).search) };
        let result = match ret {
            0 => self.item(true).map(|v| Some(f(v))),
            WT_NOTFOUND => Ok(None),
            other => Err(self.fail(other)),
        };
        self.reset();
        result
    }

    /// Writes `value` at `key` (the cursor is opened with `overwrite=true`,
    /// so this inserts or replaces).
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), WtError> {
        let (k, v) = (WtItem::of(key), WtItem::of(value));
        // SAFETY: `k`, `v` and the slices they point to outlive the insert.
        unsafe {
            self.set_key(&k);
            self.set_value(&v);
        }
        let c = self.ptr();
        // SAFETY: an open cursor on this thread, key and value set.
        let ret = unsafe { call(c, (*c).insert) };
        if ret == 0 {
            Ok(())
        } else {
            Err(self.fail(ret))
        }
    }

    /// Removes `key` (no error when it is missing, with `overwrite=true`).
    pub fn remove(&mut self, key: &[u8]) -> Result<(), WtError> {
        let k = WtItem::of(key);
        // SAFETY: `k` outlives the remove call.
        unsafe { self.set_key(&k) };
        let c = self.ptr();
        // SAFETY: an open cursor on this thread, its key set.
        let ret = unsafe { call(c, (*c).remove) };
        match ret {
            0 | WT_NOTFOUND => Ok(()),
            other => Err(self.fail(other)),
        }
    }

    /// Visits entries in key order from the first key at or after `start`
    /// while `visit` returns true. The cursor is reset afterwards.
    pub fn scan_from(
        &mut self,
        start: &[u8],
        mut visit: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), WtError> {
        let c = self.ptr();
        let mut ret = if start.is_empty() {
            // WiredTiger refuses an empty key; an unpositioned cursor's
            // next is the first entry.
            // SAFETY: an open cursor on this thread.
            unsafe { call(c, (*c).next) }
        } else {
            let item = WtItem::of(start);
            // SAFETY: `item` and `start` outlive the search_near call.
            unsafe { self.set_key(&item) };
            let mut exact: c_int = 0;
            // SAFETY: an open cursor on this thread, key set, valid
            // out-pointer.
            let ret = unsafe {
                match (*c).search_near {
                    Some(near) => near(c, &mut exact),
                    None => libc::ENOTSUP,
                }
            };
            if ret == 0 && exact < 0 {
                // Positioned on the largest key below `start`.
                // SAFETY: an open, positioned cursor on this thread.
                unsafe { call(c, (*c).next) }
            } else {
                ret
            }
        };
        let result = loop {
            match ret {
                0 => {}
                WT_NOTFOUND => break Ok(()),
                other => break Err(self.fail(other)),
            }
            let more = match (self.item(false), self.item(true)) {
                (Ok(k), Ok(v)) => visit(k, v),
                (Err(e), _) | (_, Err(e)) => break Err(e),
            };
            if !more {
                break Ok(());
            }
            // SAFETY: an open, positioned cursor on this thread.
            ret = unsafe { call(c, (*c).next) };
        };
        self.reset();
        result
    }

    /// Visits every entry of a statistics cursor (key format `i`, value
    /// format `SSq`): its description and value.
    pub fn statistics(&mut self, mut visit: impl FnMut(&str, i64)) -> Result<(), WtError> {
        let c = self.ptr();
        loop {
            // SAFETY: an open cursor on this thread.
            let ret = unsafe { call(c, (*c).next) };
            match ret {
                0 => {}
                WT_NOTFOUND => break,
                other => return Err(self.fail(other)),
            }
            let mut desc: *const c_char = ptr::null();
            let mut text: *const c_char = ptr::null();
            let mut value: i64 = 0;
            // SAFETY: a positioned statistics cursor; value format `SSq`
            // takes two `const char **` and an `int64_t *`.
            let ret = unsafe {
                match (*c).get_value {
                    Some(get) => get(
                        c,
                        &mut desc as *mut *const c_char,
                        &mut text as *mut *const c_char,
                        &mut value as *mut i64,
                    ),
                    None => libc::ENOTSUP,
                }
            };
            if ret != 0 {
                return Err(self.fail(ret));
            }
            if !desc.is_null() {
                // SAFETY: a NUL-terminated string valid until the cursor moves.
                let desc = unsafe { CStr::from_ptr(desc) }.to_string_lossy();
                visit(&desc, value);
            }
        }
        self.reset();
        Ok(())
    }
}

impl Drop for Cursor<'_> {
    fn drop(&mut self) {
        let c = self.ptr();
        // SAFETY: we own the open cursor and close it once.
        unsafe { call(c, (*c).close) };
    }
}

/// The address of a function of the linked WiredTiger library, to find
/// which file it was loaded from (`EngineBuild::of_code`); never called
/// through this pointer.
pub(crate) fn library_code() -> *const () {
    crate::lazy::address(c"wiredtiger_version").unwrap_or(wiredtiger_version as *const ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linked_version_is_the_declared_one() {
        let (major, minor, _) = linked_version();
        assert_eq!((major, minor), DECLARED_VERSION);
        assert!(linked_library().is_some_and(|l| l.contains("wiredtiger")));
    }

    #[test]
    fn messages_lose_the_time_and_thread_stamp() {
        assert_eq!(
            without_stamp(
                "[1796133233:420298][6388:0x7ff66f1286c0], WT_SESSION.create: x: Invalid argument"
            ),
            "WT_SESSION.create: x: Invalid argument"
        );
        assert_eq!(
            without_stamp("[1796134432:627530][19521:0x7f7b6057b6c0]: __posix_file_write, 540: x"),
            "__posix_file_write, 540: x"
        );
        assert_eq!(without_stamp("[no end"), "[no end");
        assert_eq!(without_stamp("plain"), "plain");
    }

    #[test]
    fn errors_carry_wiredtiger_text() {
        assert_eq!(strerror(WT_NOTFOUND), "WT_NOTFOUND: item not found");
    }
}
