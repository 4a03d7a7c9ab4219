//! Binds an engine's shared library when its store first uses it, not when
//! the program starts.
//!
//! A `ycsb` built with every engine links RocksDB, LevelDB, WiredTiger,
//! LMDB and SQLite. Linked as usual, the dynamic loader maps each library,
//! resolves its symbols and runs its C++ static initialisers before `main`:
//! about 6.5 ms of CPU per process (issue 37), paid by a run of the basic
//! store and by every cell of a matrix. glibc has no lazy loading of a
//! needed library, so this crate does what Solaris' `-z lazyload` did, for
//! the functions of a C API:
//!
//! - At build time ([`build::generate`], called from an engine crate's
//!   `build.rs`), it lists the library's exported functions with the given
//!   prefixes (`nm -D`) and writes a module that defines each of them in
//!   the program: one `jmp` through a slot of a table. The program's calls
//!   bind to these definitions, so the linker (which rustc runs with
//!   `--as-needed`) no longer records the library as needed.
//! - Each slot first points at a stub that loads the library (`dlopen` of
//!   the file the build found, by its soname), fills every slot from
//!   `dlsym`, and continues into the real function with the caller's
//!   registers untouched. After that a call costs one indirect jump, as a
//!   call through the PLT does.
//! - The engine crate calls the module's `load()` when a store opens, so a
//!   missing library is a typed [`LoadError`] there; a call that reaches a
//!   slot first (a version query, say) loads the library itself and aborts
//!   with one line if it cannot.
//!
//! The generated module also gives [`Binder::address`] of a real function,
//! so that the engine build each result reports still names the loaded
//! library file.
//!
//! Only x86-64 Linux with a shared library is bound this way; elsewhere, for
//! a static library, or with `YCSB_LAZYLINK=0` in the build's environment,
//! the generated module is empty and the library is linked as usual.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

/// Declares module `$module` holding what [`build::generate`] wrote for
/// `$tag` in this crate's `OUT_DIR`: `load()`, `address(name)` and `LAZY`.
///
/// ```text
/// ycsb_lazylink::bound_on_first_use!(lazy, "lmdb");
/// lazy::load()?;
/// ```
#[macro_export]
macro_rules! bound_on_first_use {
    ($module:ident, $tag:literal) => {
        /// A C library's API bound on first use (`ycsb-lazylink`, this
        /// crate's build.rs), so that a program that never calls it does
        /// not load it.
        #[allow(unsafe_code)]
        mod $module {
            include!(concat!(env!("OUT_DIR"), "/lazylink_", $tag, ".rs"));
        }
    };
}
use std::fmt;
use std::sync::OnceLock;

pub mod build;

/// Why an engine's shared library could not be bound.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadError {
    /// The library file that was to be loaded.
    pub library: String,
    /// What the dynamic loader said.
    pub reason: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot load {}: {}", self.library, self.reason)
    }
}

impl std::error::Error for LoadError {}

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}

const RTLD_NOW: c_int = 2;

/// A loaded library's handle. The loader's handles may be used from any
/// thread.
#[derive(Clone, Copy, Debug)]
struct Handle(*mut c_void);

// SAFETY: a dlopen handle is an opaque token that glibc accepts from any
// thread; it is never dereferenced here.
#[allow(unsafe_code)]
unsafe impl Send for Handle {}
// SAFETY: as above; `dlsym` on one handle from several threads is allowed.
#[allow(unsafe_code)]
unsafe impl Sync for Handle {}

/// One library's binding state: which file to load and, once loaded, its
/// handle. The generated module holds one in a `static`.
#[derive(Debug)]
pub struct Binder {
    library: &'static str,
    handle: OnceLock<Result<Handle, LoadError>>,
}

impl Binder {
    /// A binder for `library`, a path `dlopen` accepts; nothing is loaded
    /// until [`bind`](Self::bind).
    pub const fn new(library: &'static str) -> Self {
        Self {
            library,
            handle: OnceLock::new(),
        }
    }

    /// The library file this binder loads.
    pub fn library(&self) -> &'static str {
        self.library
    }

    /// Loads the library once and points every slot at its function of the
    /// same name; later calls return the first call's outcome.
    ///
    /// A name the library does not export gets [`missing_function`], which
    /// aborts with one line if it is ever called.
    ///
    /// # Errors
    ///
    /// [`LoadError`] when `dlopen` fails (the file is gone or unreadable,
    /// or one of its own dependencies is missing).
    ///
    /// # Safety
    ///
    /// `slots` must point at `names.len()` writable, 8-byte aligned words
    /// that the generated trampolines jump through, and every call must
    /// pass the same `names` and `slots`.
    #[allow(unsafe_code)]
    pub unsafe fn bind(&self, names: &[&CStr], slots: *mut usize) -> Result<(), LoadError> {
        let outcome = self.handle.get_or_init(|| {
            let handle = self.open()?;
            for (index, name) in names.iter().enumerate() {
                // SAFETY: `handle` came from dlopen and `name` is a C string.
                let address = unsafe { dlsym(handle.0, name.as_ptr()) };
                let target = if address.is_null() {
                    missing_function as *const () as usize
                } else {
                    address as usize
                };
                // SAFETY: the caller guarantees `names.len()` slots. A
                // trampoline may read the slot concurrently; an aligned
                // 8-byte store is atomic on x86-64, and a reader that sees
                // the old value comes here and waits for this closure.
                unsafe { std::ptr::write_volatile(slots.add(index), target) };
            }
            Ok(handle)
        });
        outcome.as_ref().map(|_| ()).map_err(Clone::clone)
    }

    /// As [`bind`](Self::bind), for the stub a trampoline reaches first:
    /// it cannot return an error to an arbitrary C caller, so it prints one
    /// line and aborts.
    ///
    /// # Safety
    ///
    /// As [`bind`](Self::bind).
    #[allow(unsafe_code)]
    pub unsafe fn bind_or_abort(&self, names: &[&CStr], slots: *mut usize) {
        // SAFETY: forwarded from the caller.
        if let Err(error) = unsafe { self.bind(names, slots) } {
            abort_with(&format!("ycsb: {error}\n"));
        }
    }

    /// The address of `name` in the loaded library, loading it first; `None`
    /// when it cannot be loaded or does not export `name`.
    #[allow(unsafe_code)]
    pub fn address(&self, name: &CStr) -> Option<*const ()> {
        let handle = self
            .handle
            .get()
            .and_then(|outcome| outcome.as_ref().ok())
            .copied()
            .or_else(|| self.open().ok())?;
        // SAFETY: `handle` came from dlopen and `name` is a C string.
        let address = unsafe { dlsym(handle.0, name.as_ptr()) };
        (!address.is_null()).then_some(address as *const ())
    }

    #[allow(unsafe_code)]
    fn open(&self) -> Result<Handle, LoadError> {
        let error = |reason: String| LoadError {
            library: self.library.to_owned(),
            reason,
        };
        let path =
            CString::new(self.library).map_err(|_| error("a NUL byte in the path".into()))?;
        // SAFETY: `path` is a C string. RTLD_NOW: a library with an
        // unresolvable symbol fails here, where the error can be returned,
        // not at some later call; RTLD_LOCAL (the default) keeps its
        // symbols out of the program's global scope, as linking did.
        let handle = unsafe { dlopen(path.as_ptr(), RTLD_NOW) };
        if handle.is_null() {
            // SAFETY: dlerror returns a C string describing the last
            // failure of this thread, or null.
            let reason = unsafe {
                let message = dlerror();
                if message.is_null() {
                    "unknown error".to_owned()
                } else {
                    CStr::from_ptr(message).to_string_lossy().into_owned()
                }
            };
            return Err(error(reason));
        }
        Ok(Handle(handle))
    }
}

/// Where a slot points when the library lacks the function the program was
/// built against: a library replaced after the build.
pub extern "C" fn missing_function() {
    abort_with(
        "ycsb: an engine function was called that its shared library no longer \
         exports (the library changed since this program was built)\n",
    );
}

/// Writes `message` to standard error and aborts: the way out of a stub
/// that has no caller to return an error to.
fn abort_with(message: &str) -> ! {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(message.as_bytes());
    std::process::abort();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_a_typed_error_that_names_it() {
        let binder = Binder::new("/nonexistent/libnothing.so.1");
        let mut slots = [0usize; 1];
        #[allow(unsafe_code)]
        // SAFETY: one name, one slot.
        let error = unsafe { binder.bind(&[c"nothing"], slots.as_mut_ptr()) }.unwrap_err();
        assert_eq!(error.library, "/nonexistent/libnothing.so.1");
        assert!(error
            .to_string()
            .starts_with("cannot load /nonexistent/libnothing.so.1: "));
        assert_eq!(slots, [0], "no slot is touched when the load fails");
        assert_eq!(binder.address(c"nothing"), None);
    }

    #[test]
    fn binding_fills_each_slot_with_the_function_or_the_missing_stub() {
        // libc is loaded already; dlopen of its soname returns it.
        let binder = Binder::new("libc.so.6");
        let mut slots = [0usize; 2];
        #[allow(unsafe_code)]
        // SAFETY: two names, two slots.
        unsafe { binder.bind(&[c"strlen", c"no_such_function_here"], slots.as_mut_ptr()) }.unwrap();
        extern "C" {
            fn strlen(s: *const c_char) -> usize;
        }
        #[allow(unsafe_code)]
        // SAFETY: a function pointer of the right signature from dlsym.
        let called = unsafe {
            let f: extern "C" fn(*const c_char) -> usize = std::mem::transmute(slots[0]);
            f(c"four".as_ptr())
        };
        assert_eq!(called, 4);
        assert_eq!(slots[1], missing_function as *const () as usize);
        assert_eq!(
            binder.address(c"strlen").map(|a| a as usize),
            Some(slots[0])
        );
        let _ = strlen as unsafe extern "C" fn(*const c_char) -> usize;
    }
}
