//! Which build of an engine a store runs on: the library file its code was
//! loaded from and whether that library was compiled with assertions.
//!
//! Figures measured on an engine built with assertions (Debian's
//! `librocksdb` and `libleveldb` are) are not comparable with a release
//! build's, so every result names the build. A binding reports it with one
//! line in [`Store::engine_build`](crate::Store::engine_build):
//!
//! ```
//! use ycsb_db::{Assertions, EngineBuild, EngineLibrary};
//!
//! // Any function of the engine's C API: its address says which loaded
//! // file holds the engine's code. (Here a libc function stands in.)
//! extern "C" {
//!     fn strlen(s: *const std::ffi::c_char) -> usize;
//! }
//! let build = EngineBuild::of_code(strlen as *const (), Assertions::Unknown);
//! assert!(matches!(build.library, EngineLibrary::Shared(_)));
//! ```
//!
//! Detection reads the shared library's ELF dynamic symbols: a library
//! whose code calls `assert` imports glibc's `__assert_fail`, one compiled
//! with `NDEBUG` does not. Code linked statically into the program cannot be
//! told apart from the program's other code that way, so a static build
//! says what its build script knew (for example that it defined `NDEBUG`).

use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The symbol a C or C++ `assert` compiles to a call of (glibc and musl).
pub const ASSERT_SYMBOL: &str = "__assert_fail";

/// The line shown when an engine built with assertions is measured:
/// db_bench's own words, so that readers of both tools see one warning.
pub const ASSERTIONS_WARNING: &str =
    "WARNING: Assertions are enabled; benchmarks unnecessarily slow";

/// Where the engine's code was loaded from.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineLibrary {
    /// A shared library, by its canonical path.
    Shared(PathBuf),
    /// Linked into the program itself (a static library).
    Static,
    /// The engine runs in another process (a server); its build is not
    /// visible from here.
    Remote,
    /// Not known (the store does not say).
    Unknown,
}

impl fmt::Display for EngineLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Shared(path) => write!(f, "{}", path.display()),
            Self::Static => f.write_str("static"),
            Self::Remote => f.write_str("remote"),
            Self::Unknown => f.write_str("unknown"),
        }
    }
}

/// Whether the engine was compiled with assertions (without `NDEBUG`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Assertions {
    /// Assertions are compiled in: the engine checks as it runs and is
    /// slower than its release build.
    Enabled,
    /// Compiled without assertions (`NDEBUG`), as a release build.
    Disabled,
    /// Not known.
    Unknown,
}

impl Assertions {
    /// `enabled`, `disabled` or `unknown`, as exported.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enabled => "enabled",
            Self::Disabled => "disabled",
            Self::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Assertions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the engine a store runs on was built, recorded with every result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EngineBuild {
    /// The file its code was loaded from.
    pub library: EngineLibrary,
    /// Whether it was compiled with assertions.
    pub assertions: Assertions,
    /// How [`assertions`](Self::assertions) was established, for the
    /// reader who doubts it: for example `imports __assert_fail`. Empty
    /// when nothing is known.
    pub evidence: String,
}

impl Default for EngineBuild {
    fn default() -> Self {
        Self::unknown()
    }
}

impl EngineBuild {
    /// Nothing known: what a store that does not say reports.
    pub fn unknown() -> Self {
        Self::new(EngineLibrary::Unknown, Assertions::Unknown, "")
    }

    /// An engine in another process, whose build cannot be seen from here.
    pub fn remote() -> Self {
        Self::new(EngineLibrary::Remote, Assertions::Unknown, "")
    }

    /// The build of an engine compiled into the program by cargo (a Rust
    /// crate such as fjall or redb, or the client's own `basic` and
    /// `memory` stores): static, and with debug assertions (and without
    /// optimisation) exactly when the program was built with them, as a
    /// debug build of `ycsb` is.
    pub fn compiled_in() -> Self {
        if cfg!(debug_assertions) {
            Self::new(
                EngineLibrary::Static,
                Assertions::Enabled,
                "compiled by cargo with debug_assertions on (a debug build)",
            )
        } else {
            Self::new(
                EngineLibrary::Static,
                Assertions::Disabled,
                "compiled by cargo with debug_assertions off",
            )
        }
    }

    /// A build described by its parts.
    pub fn new(
        library: EngineLibrary,
        assertions: Assertions,
        evidence: impl Into<String>,
    ) -> Self {
        Self {
            library,
            assertions,
            evidence: evidence.into(),
        }
    }

    /// The build of the engine whose code is at `code`: the address of any
    /// function of the engine's library (for example
    /// `rocksdb_open as *const ()`); it is only compared with the address
    /// ranges of the files mapped into the process, never dereferenced.
    ///
    /// When that code lives in a shared library, its path and whether it
    /// imports [`ASSERT_SYMBOL`] are read from the running process
    /// (`/proc/self/maps`) and the library's ELF file. When it lives in the
    /// program itself (a static build), the library is
    /// [`EngineLibrary::Static`] and `static_assertions` is what the
    /// binding's build knew (its build script saw `NDEBUG` or not), else
    /// [`Assertions::Unknown`]. Anything unreadable or unexpected gives an
    /// unknown part, never a panic.
    pub fn of_code(code: *const (), static_assertions: Assertions) -> Self {
        let Some(path) = mapped_file(code as usize) else {
            return Self::unknown();
        };
        let program = std::env::current_exe()
            .ok()
            .and_then(|p| std::fs::canonicalize(p).ok());
        if program.as_deref() == Some(path.as_path()) {
            let evidence = match static_assertions {
                Assertions::Unknown => "",
                _ => "as the build script recorded",
            };
            return Self::new(EngineLibrary::Static, static_assertions, evidence);
        }
        let (assertions, evidence) = assertions_of_library(&path);
        Self::new(EngineLibrary::Shared(path), assertions, evidence)
    }
}

impl EngineBuild {
    /// [`ASSERTIONS_WARNING`] when the engine was built with assertions.
    pub fn warning(&self) -> Option<&'static str> {
        (self.assertions == Assertions::Enabled).then_some(ASSERTIONS_WARNING)
    }
}

impl fmt::Display for EngineBuild {
    /// `/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8, assertions enabled
    /// (imports __assert_fail)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, assertions {}", self.library, self.assertions)?;
        if !self.evidence.is_empty() {
            write!(f, " ({})", self.evidence)?;
        }
        Ok(())
    }
}

/// The file the code at `code` was loaded from, as the dynamic loader
/// names it (`dladdr`), canonicalised when it can be: an engine's shared
/// library, or this program when the engine is linked statically. `code`
/// is the address of any function of the engine's library (for example
/// `mdb_version as *const ()`); it is never dereferenced. `None` when the
/// loader knows no file there.
pub fn loaded_from(code: *const ()) -> Option<String> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: `code` is only looked up among the loaded images, and `info`
    // is a valid out-pointer; dladdr only fills it in.
    if unsafe { libc::dladdr(code.cast(), info.as_mut_ptr()) } == 0 {
        return None;
    }
    // SAFETY: dladdr succeeded, so `info` is initialised.
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a non-null dli_fname is a NUL-terminated path owned by the
    // dynamic loader, valid while the image is loaded.
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    // A relative name means "the executable itself" for some loaders.
    Some(std::fs::canonicalize(&path).map_or(path, |p| p.display().to_string()))
}

/// Whether the shared library at `path` was built with assertions, and
/// why that is the answer.
pub fn assertions_of_library(path: &Path) -> (Assertions, String) {
    match imports_symbol(path, ASSERT_SYMBOL) {
        Some(true) => (Assertions::Enabled, format!("imports {ASSERT_SYMBOL}")),
        Some(false) => (
            Assertions::Disabled,
            format!("does not import {ASSERT_SYMBOL}"),
        ),
        None => (Assertions::Unknown, "not a readable ELF library".into()),
    }
}

/// The canonical path of the file mapped at `address` in this process.
fn mapped_file(address: usize) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let mut parts = line.split_ascii_whitespace();
        let (start, end) = parts.next()?.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        if !(start..end).contains(&address) {
            return None;
        }
        // perms, offset, device, inode, then the path (which may hold spaces).
        let path = line.splitn(6, |c: char| c.is_ascii_whitespace());
        let path = path.last()?.trim_start();
        path.starts_with('/')
            .then(|| std::fs::canonicalize(path).ok())
            .flatten()
    })
}

/// Whether the ELF file at `path` lists `symbol` as an undefined (imported)
/// dynamic symbol: `Some(true)` or `Some(false)`, or `None` when the file is
/// not a 64-bit little-endian ELF file with a dynamic symbol table that can
/// be read. Reads only the headers and the two tables, bounds-checked.
pub fn imports_symbol(path: &Path, symbol: &str) -> Option<bool> {
    let file = File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let read = |offset: u64, len: u64| -> Option<Vec<u8>> {
        // A table larger than the file, or absurdly large, is a bad file.
        if offset.checked_add(len)? > size || len > 1 << 30 {
            return None;
        }
        let mut buf = vec![0; usize::try_from(len).ok()?];
        file.read_exact_at(&mut buf, offset).ok()?;
        Some(buf)
    };
    let header = read(0, 64)?;
    // Magic, ELFCLASS64, ELFDATA2LSB.
    if header.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let section_offset = u64_at(&header, 0x28)?;
    let section_entry = u64::from(u16_at(&header, 0x3a)?);
    let section_count = u64::from(u16_at(&header, 0x3c)?);
    if section_entry < 64 {
        return None;
    }
    let sections = read(section_offset, section_entry.checked_mul(section_count)?)?;
    let section = |index: u64| -> Option<&[u8]> {
        let start = usize::try_from(index.checked_mul(section_entry)?).ok()?;
        sections.get(start..start.checked_add(64)?)
    };
    const SHT_DYNSYM: u32 = 11;
    let dynsym = (0..section_count)
        .filter_map(section)
        .find(|s| u32_at(s, 4) == Some(SHT_DYNSYM))?;
    let strings = section(u64::from(u32_at(dynsym, 0x28)?))?;
    let strings = read(u64_at(strings, 0x18)?, u64_at(strings, 0x20)?)?;
    let symbols = read(u64_at(dynsym, 0x18)?, u64_at(dynsym, 0x20)?)?;
    let entry = usize::try_from(u64_at(dynsym, 0x38)?).ok()?;
    if entry < 24 {
        return None;
    }
    let wanted = symbol.as_bytes();
    Some(symbols.chunks_exact(entry).any(|sym| {
        let undefined = u16_at(sym, 6) == Some(0); // st_shndx == SHN_UNDEF
        let name = u32_at(sym, 0)
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| strings.get(n..))
            .and_then(|s| s.split(|&b| b == 0).next());
        undefined && name == Some(wanted)
    }))
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn code_is_loaded_from_its_library_or_this_program() {
        extern "C" {
            fn strlen(s: *const std::ffi::c_char) -> usize;
        }
        let libc_file = loaded_from(strlen as *const ()).expect("strlen's library");
        assert!(libc_file.contains("libc"), "{libc_file}");
        let program = std::env::current_exe().unwrap().canonicalize().unwrap();
        assert_eq!(
            loaded_from(mapped_file as *const ()),
            Some(program.display().to_string())
        );
    }

    /// Compiles a shared library calling `assert`, with or without
    /// `-DNDEBUG`, as an engine would be built.
    fn compile_library(dir: &Path, ndebug: bool) -> PathBuf {
        let source = dir.join("engine.c");
        std::fs::write(
            &source,
            "#include <assert.h>\nint engine_check(int x) { assert(x > 0); return x * 2; }\n",
        )
        .unwrap();
        let out = dir.join(if ndebug { "librel.so" } else { "libdbg.so" });
        let mut gcc = Command::new("gcc");
        gcc.args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&out)
            .arg(&source);
        if ndebug {
            gcc.arg("-DNDEBUG");
        }
        let status = gcc.status().expect("gcc runs (Debian: build-essential)");
        assert!(status.success());
        out
    }

    #[test]
    fn a_library_compiled_with_assertions_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let lib = compile_library(dir.path(), false);
        assert_eq!(imports_symbol(&lib, ASSERT_SYMBOL), Some(true));
        assert_eq!(assertions_of_library(&lib).0, Assertions::Enabled);
        let build = EngineBuild::new(EngineLibrary::Shared(lib), Assertions::Enabled, "");
        assert_eq!(build.warning(), Some(ASSERTIONS_WARNING));
    }

    #[test]
    fn a_library_compiled_with_ndebug_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let lib = compile_library(dir.path(), true);
        assert_eq!(imports_symbol(&lib, ASSERT_SYMBOL), Some(false));
        assert_eq!(assertions_of_library(&lib).0, Assertions::Disabled);
        let build = EngineBuild::new(EngineLibrary::Shared(lib), Assertions::Disabled, "");
        assert_eq!(build.warning(), None);
    }

    #[test]
    fn debians_engines_are_built_with_assertions() {
        // The libraries the default build links (librocksdb-dev,
        // libleveldb-dev): both import __assert_fail.
        for name in ["librocksdb.so", "libleveldb.so"] {
            let lib = Path::new("/usr/lib/x86_64-linux-gnu").join(name);
            if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
                assert_eq!(imports_symbol(&lib, ASSERT_SYMBOL), Some(true), "{name}");
            }
        }
    }

    #[test]
    fn a_defined_symbol_is_not_an_import() {
        let dir = tempfile::tempdir().unwrap();
        let lib = compile_library(dir.path(), true);
        assert_eq!(imports_symbol(&lib, "engine_check"), Some(false));
    }

    #[test]
    fn odd_files_give_unknown_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let lib = std::fs::read(compile_library(dir.path(), false)).unwrap();
        let odd = dir.path().join("odd");
        // Every truncation of a real library, and garbage, and nothing.
        let mut cases: Vec<Vec<u8>> = (0..lib.len())
            .step_by(97)
            .map(|n| lib[..n].to_vec())
            .collect();
        cases.push(Vec::new());
        cases.push(
            b"\x7fELF\x02\x01"
                .iter()
                .copied()
                .chain([0xff; 200])
                .collect(),
        );
        // Header fields pointing far beyond the file.
        let mut far = lib.clone();
        far[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        cases.push(far);
        let mut huge_entry = lib.clone();
        huge_entry[0x3a..0x3c].copy_from_slice(&u16::MAX.to_le_bytes());
        cases.push(huge_entry);
        for case in &cases {
            std::fs::write(&odd, case).unwrap();
            let _ = imports_symbol(&odd, ASSERT_SYMBOL);
        }
        std::fs::write(&odd, b"not elf").unwrap();
        assert_eq!(imports_symbol(&odd, ASSERT_SYMBOL), None);
        assert_eq!(assertions_of_library(&odd).0, Assertions::Unknown);
        assert_eq!(
            imports_symbol(&dir.path().join("missing"), ASSERT_SYMBOL),
            None
        );
    }

    #[test]
    fn code_in_the_program_itself_is_a_static_build() {
        fn local() {}
        let build = EngineBuild::of_code(local as *const (), Assertions::Disabled);
        assert_eq!(build.library, EngineLibrary::Static);
        assert_eq!(build.assertions, Assertions::Disabled);
        let build = EngineBuild::of_code(local as *const (), Assertions::Unknown);
        assert_eq!(build.to_string(), "static, assertions unknown");
    }

    #[test]
    fn code_in_a_loaded_library_names_the_library() {
        extern "C" {
            fn strlen(s: *const std::ffi::c_char) -> usize;
        }
        let build = EngineBuild::of_code(strlen as *const (), Assertions::Unknown);
        let EngineLibrary::Shared(path) = &build.library else {
            panic!("libc is a shared library: {build}");
        };
        assert!(path.to_string_lossy().contains("libc"), "{build}");
        assert_ne!(build.assertions, Assertions::Unknown, "{build}");
    }

    #[test]
    fn an_address_nothing_maps_is_unknown() {
        assert_eq!(
            EngineBuild::of_code(8 as *const (), Assertions::Disabled),
            EngineBuild::unknown()
        );
    }
}
