//! WiredTiger's C API as this binding and its direct-loop example use
//! it: the leading fields of the handle structs of WiredTiger 3.2's
//! `wiredtiger.h`, as far as they are called, and the library functions.
//! Declarations only; the safe wrappers are in `ffi.rs`. The test
//! `layout_matches_the_header` compiles the installed header and compares
//! every declared offset. Fields this binding never calls are `Unused`
//! (a pointer of the same size), so that the offsets of the later ones
//! stay right.

use std::ffi::{c_char, c_int, c_void};

/// `WT_NOTFOUND`: no such key.
pub const WT_NOTFOUND: c_int = -31803;
/// `WT_PANIC`: the library hit an unrecoverable error; every later call
/// fails too.
pub const WT_PANIC: c_int = -31804;
/// `WT_ROLLBACK`: a conflict with a concurrent operation; retry it.
pub const WT_ROLLBACK: c_int = -31800;

/// The WiredTiger version whose struct layouts are declared here.
pub const DECLARED_VERSION: (i32, i32) = (3, 2);

pub type Unused = *const c_void;

/// `WT_ITEM`.
#[repr(C)]
pub struct WtItem {
    pub data: *const c_void,
    pub size: usize,
    pub mem: *mut c_void,
    pub memsize: usize,
    pub flags: u32,
}

impl WtItem {
    /// The item of `bytes`, which must outlive every use of it.
    pub fn of(bytes: &[u8]) -> WtItem {
        WtItem {
            data: bytes.as_ptr().cast(),
            size: bytes.len(),
            mem: std::ptr::null_mut(),
            memsize: 0,
            flags: 0,
        }
    }
}

pub type CursorOp = Option<unsafe extern "C" fn(*mut WtCursor) -> c_int>;

/// The leading fields of `WT_CURSOR`, up to `reopen`.
#[repr(C)]
pub struct WtCursor {
    pub session: *mut WtSession,
    pub uri: *const c_char,
    pub key_format: *const c_char,
    pub value_format: *const c_char,
    pub get_key: Option<unsafe extern "C" fn(*mut WtCursor, ...) -> c_int>,
    pub get_value: Option<unsafe extern "C" fn(*mut WtCursor, ...) -> c_int>,
    pub set_key: Option<unsafe extern "C" fn(*mut WtCursor, ...)>,
    pub set_value: Option<unsafe extern "C" fn(*mut WtCursor, ...)>,
    pub compare: Unused,
    pub equals: Unused,
    pub next: CursorOp,
    pub prev: CursorOp,
    pub reset: CursorOp,
    pub search: CursorOp,
    pub search_near: Option<unsafe extern "C" fn(*mut WtCursor, *mut c_int) -> c_int>,
    pub insert: CursorOp,
    pub modify: Unused,
    pub update: CursorOp,
    pub remove: CursorOp,
    pub reserve: CursorOp,
    pub close: CursorOp,
    pub reconfigure: Unused,
    pub cache: Unused,
    pub reopen: Unused,
}

pub type SessionConfigOp = Option<unsafe extern "C" fn(*mut WtSession, *const c_char) -> c_int>;

/// The leading fields of `WT_SESSION`, up to `checkpoint`.
#[repr(C)]
pub struct WtSession {
    pub connection: *mut WtConnection,
    pub app_private: *mut c_void,
    pub close: SessionConfigOp,
    pub reconfigure: SessionConfigOp,
    pub strerror: Option<unsafe extern "C" fn(*mut WtSession, c_int) -> *const c_char>,
    pub open_cursor: Option<
        unsafe extern "C" fn(
            *mut WtSession,
            *const c_char,
            *mut WtCursor,
            *const c_char,
            *mut *mut WtCursor,
        ) -> c_int,
    >,
    pub alter: Unused,
    pub create: Option<unsafe extern "C" fn(*mut WtSession, *const c_char, *const c_char) -> c_int>,
    pub import: Unused,
    pub compact:
        Option<unsafe extern "C" fn(*mut WtSession, *const c_char, *const c_char) -> c_int>,
    pub drop: Unused,
    pub join: Unused,
    pub log_flush: SessionConfigOp,
    pub log_printf: Unused,
    pub rebalance: Unused,
    pub rename: Unused,
    pub reset: Unused,
    pub salvage: Unused,
    pub truncate: Unused,
    pub upgrade: Unused,
    pub verify: Unused,
    pub begin_transaction: SessionConfigOp,
    pub commit_transaction: SessionConfigOp,
    pub prepare_transaction: Unused,
    pub rollback_transaction: SessionConfigOp,
    pub timestamp_transaction: Unused,
    pub query_timestamp: Unused,
    pub checkpoint: SessionConfigOp,
}

/// The leading fields of `WT_CONNECTION`, up to `open_session`.
#[repr(C)]
pub struct WtConnection {
    pub async_flush: Unused,
    pub async_new_op: Unused,
    pub close: Option<unsafe extern "C" fn(*mut WtConnection, *const c_char) -> c_int>,
    pub debug_info: Unused,
    pub reconfigure: Unused,
    pub get_home: Unused,
    pub configure_method: Unused,
    pub is_new: Unused,
    pub open_session: Option<
        unsafe extern "C" fn(
            *mut WtConnection,
            *mut WtEventHandler,
            *const c_char,
            *mut *mut WtSession,
        ) -> c_int,
    >,
}

/// `WT_EVENT_HANDLER`.
#[repr(C)]
pub struct WtEventHandler {
    pub handle_error: Option<
        unsafe extern "C" fn(*mut WtEventHandler, *mut WtSession, c_int, *const c_char) -> c_int,
    >,
    pub handle_message:
        Option<unsafe extern "C" fn(*mut WtEventHandler, *mut WtSession, *const c_char) -> c_int>,
    pub handle_progress: Unused,
    pub handle_close: Unused,
}

// Linked by the build script (build.rs).
extern "C" {
    /// `wiredtiger_open`.
    pub fn wiredtiger_open(
        home: *const c_char,
        event_handler: *mut WtEventHandler,
        config: *const c_char,
        connectionp: *mut *mut WtConnection,
    ) -> c_int;
    /// `wiredtiger_strerror`.
    pub fn wiredtiger_strerror(error: c_int) -> *const c_char;
    /// `wiredtiger_version`.
    pub fn wiredtiger_version(
        majorp: *mut c_int,
        minorp: *mut c_int,
        patchp: *mut c_int,
    ) -> *const c_char;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// Compiles a C program against the installed `wiredtiger.h` that
    /// prints `name offset` for every field declared here, and compares.
    /// Skipped (with a message) only where no C compiler is installed;
    /// CI installs clang.
    #[test]
    fn layout_matches_the_header() {
        // `(C type, field, offset here)` for each field named.
        macro_rules! offsets {
            ($c_type:literal = $ty:ty: $($field:ident),+) => {
                [$(($c_type, stringify!($field), offset_of!($ty, $field))),+]
            };
        }
        let fields: &[(&str, &str, usize)] = &[
            &offsets!("WT_ITEM" = WtItem: data, size, flags)[..],
            &offsets!("WT_CURSOR" = WtCursor: session, get_key, get_value, set_key, set_value,
                next, reset, search, search_near, insert, update, remove, close, reopen),
            &offsets!("WT_SESSION" = WtSession: close, open_cursor, create, compact,
                begin_transaction, commit_transaction, rollback_transaction, checkpoint),
            &offsets!("WT_CONNECTION" = WtConnection: close, open_session),
            &offsets!("WT_EVENT_HANDLER" = WtEventHandler: handle_error, handle_message,
                handle_close),
        ]
        .concat();
        let mut program = String::from(
            "#include <stddef.h>\n#include <stdio.h>\n#include <wiredtiger.h>\nint main(void) {\n",
        );
        for (ty, field, _) in fields {
            program.push_str(&format!(
                "printf(\"%s %s %zu\\n\", \"{ty}\", \"{field}\", offsetof({ty}, {field}));\n"
            ));
        }
        program.push_str(
            "printf(\"WT_ITEM sizeof %zu\\nWT_EVENT_HANDLER sizeof %zu\\n\", sizeof(WT_ITEM), sizeof(WT_EVENT_HANDLER));\nprintf(\"version %d.%d\\n\", WIREDTIGER_VERSION_MAJOR, WIREDTIGER_VERSION_MINOR);\nreturn 0;\n}\n",
        );
        let dir = tempfile::tempdir().unwrap();
        let (source, binary) = (dir.path().join("layout.c"), dir.path().join("layout"));
        std::fs::write(&source, program).unwrap();
        let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let compiled = std::process::Command::new(&compiler)
            .arg(&source)
            .arg("-o")
            .arg(&binary)
            .status();
        let Ok(compiled) = compiled else {
            eprintln!("no C compiler ({compiler}): layout not checked");
            return;
        };
        assert!(compiled.success(), "compiling against wiredtiger.h failed");
        let out = std::process::Command::new(&binary).output().unwrap();
        let out = String::from_utf8(out.stdout).unwrap();
        let mut expected = Vec::new();
        for (ty, field, offset) in fields {
            expected.push(format!("{ty} {field} {offset}"));
        }
        expected.push(format!("WT_ITEM sizeof {}", size_of::<WtItem>()));
        expected.push(format!(
            "WT_EVENT_HANDLER sizeof {}",
            size_of::<WtEventHandler>()
        ));
        expected.push(format!(
            "version {}.{}",
            DECLARED_VERSION.0, DECLARED_VERSION.1
        ));
        assert_eq!(out.lines().collect::<Vec<_>>(), expected);
    }
}
