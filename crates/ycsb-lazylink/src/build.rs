//! The build-script half: lists a shared library's functions and writes the
//! module that binds them on first use.
//!
//! ```no_run
//! // build.rs of an engine crate
//! use ycsb_lazylink::build::{generate, SharedLibrary};
//! let library = SharedLibrary::find("lmdb", None);
//! generate("lmdb", library.as_ref(), &["mdb_"]).unwrap();
//! ```
//!
//! ```text
//! // the engine crate
//! ycsb_lazylink::bound_on_first_use!(lazy, "lmdb");
//! lazy::load()?; // before the first call, when the store opens
//! ```

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The build environment variable that turns lazy binding off: with
/// `YCSB_LAZYLINK=0` every library is linked as usual.
pub const SWITCH: &str = "YCSB_LAZYLINK";

/// A shared library to bind: the file whose functions are listed at build
/// time and the name `dlopen` is given at run time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedLibrary {
    file: PathBuf,
    load_as: String,
}

impl SharedLibrary {
    /// `lib<name>.so` in `dir`, loaded by its full path (the directory and
    /// the soname): a library of one's own needs no `LD_LIBRARY_PATH`.
    pub fn in_dir(dir: &Path, name: &str) -> Option<Self> {
        let file = dir.join(format!("lib{name}.so"));
        if !file.exists() {
            return None;
        }
        let load_as = soname(&file)
            .map(|soname| dir.join(soname))
            .filter(|path| path.exists())
            .unwrap_or_else(|| file.clone())
            .display()
            .to_string();
        Some(Self { file, load_as })
    }

    /// `lib<name>.so` where the C compiler's linker finds it, loaded by its
    /// soname: the dynamic loader searches for it as it would have for a
    /// library the program needs (`LD_LIBRARY_PATH`, its cache).
    pub fn on_linker_path(name: &str) -> Option<Self> {
        let compiler = env::var("CC").unwrap_or_else(|_| "cc".to_owned());
        let output = Command::new(compiler)
            .arg(format!("-print-file-name=lib{name}.so"))
            .output()
            .ok()?;
        let file = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        // The compiler echoes the bare name when it finds no such file.
        if !file.is_absolute() || !file.exists() {
            return None;
        }
        let load_as = soname(&file)?;
        Some(Self { file, load_as })
    }

    /// [`in_dir`](Self::in_dir) when a directory is given (a build's
    /// `*_LIB_DIR` variable), else [`on_linker_path`](Self::on_linker_path).
    pub fn find(name: &str, dir: Option<&Path>) -> Option<Self> {
        match dir {
            Some(dir) => Self::in_dir(dir, name),
            None => Self::on_linker_path(name),
        }
    }
}

/// Writes `$OUT_DIR/lazylink_<tag>.rs`: a module with `load()`,
/// `address(name)` and `LAZY`, binding the functions of `library` whose
/// names start with one of `prefixes` (`""`: every function whose name does
/// not start with an underscore).
///
/// The module binds lazily when the target is x86-64 Linux, `library` is a
/// shared library whose functions `nm` can list, and [`SWITCH`] is not `0`;
/// otherwise `load()` does nothing, `address` answers `None`, `LAZY` is
/// false, and the engine crate's usual `rustc-link-lib` links the library
/// at start-up as before. Pass `None` for a static library.
///
/// # Errors
///
/// Writing the module failed, or `OUT_DIR` is not set (not in a build
/// script).
pub fn generate(tag: &str, library: Option<&SharedLibrary>, prefixes: &[&str]) -> io::Result<()> {
    println!("cargo:rerun-if-env-changed={SWITCH}");
    println!("cargo:rerun-if-env-changed=CC");
    let out_dir = env::var_os("OUT_DIR")
        .map(PathBuf::from)
        .ok_or_else(|| io::Error::other("OUT_DIR is not set: call generate from build.rs"))?;
    let target_fits = env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "x86_64")
        && env::var("CARGO_CFG_TARGET_OS").is_ok_and(|o| o == "linux");
    let switched_off = env::var(SWITCH).is_ok_and(|v| v == "0");
    let bound = match library {
        Some(library) if target_fits && !switched_off => {
            println!("cargo:rerun-if-changed={}", library.file.display());
            shared_functions(&library.file, prefixes)
        }
        _ => None,
    };
    let module = match (library, bound) {
        (Some(library), Some(names)) if !names.is_empty() => {
            lazy_module(tag, &library.load_as, &names)
        }
        _ => linked_module(),
    };
    fs::write(out_dir.join(format!("lazylink_{tag}.rs")), module)
}

/// The functions `library` exports whose names start with one of
/// `prefixes`, sorted; `None` when `nm` cannot read it.
fn shared_functions(library: &Path, prefixes: &[&str]) -> Option<Vec<String>> {
    let output = Command::new("nm")
        .args(["-D", "--defined-only", "--format=posix"])
        .arg(library)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(functions_in_listing(
        &String::from_utf8_lossy(&output.stdout),
        prefixes,
    ))
}

/// Parses `nm --format=posix` lines (`name type value size`): global text,
/// weak and indirect functions with one of `prefixes`, versions stripped,
/// each name once.
fn functions_in_listing(listing: &str, prefixes: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = listing
        .lines()
        .filter_map(|line| {
            let mut words = line.split_ascii_whitespace();
            let name = words.next()?;
            let kind = words.next()?;
            matches!(kind, "T" | "W" | "i").then_some(())?;
            let name = name.split('@').next()?;
            // A leading underscore marks the C implementation's own names
            // (`_init`, `__gmon_start__`), never an API function.
            let plain = !name.is_empty()
                && !name.starts_with('_')
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            (plain && prefixes.iter().any(|p| name.starts_with(p))).then(|| name.to_owned())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The `SONAME` of a shared library, read with `readelf -d`.
fn soname(library: &Path) -> Option<String> {
    let output = Command::new("readelf")
        .arg("-d")
        .arg(library)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().find(|l| l.contains("(SONAME)"))?;
    let start = line.find('[')? + 1;
    let end = line[start..].find(']')? + start;
    Some(line[start..end].to_owned())
}

/// The module for a library linked as usual.
fn linked_module() -> String {
    "// @generated by ycsb-lazylink: this library is linked as usual.\n\
     \n\
     /// Whether the library is bound on first use (false: linked as usual).\n\
     #[allow(dead_code)]\n\
     pub const LAZY: bool = false;\n\
     \n\
     /// Nothing to load: the library was linked at start-up.\n\
     ///\n\
     /// # Errors\n\
     ///\n\
     /// Never.\n\
     #[allow(dead_code, clippy::unnecessary_wraps)]\n\
     pub fn load() -> Result<(), ycsb_lazylink::LoadError> {\n    Ok(())\n}\n\
     \n\
     /// `None`: take the address of the linked function itself.\n\
     #[allow(dead_code)]\n\
     pub fn address(_name: &core::ffi::CStr) -> Option<*const ()> {\n    None\n}\n"
        .to_owned()
}

/// The module that binds `names` of the library at `path` on first use.
fn lazy_module(tag: &str, path: &str, names: &[String]) -> String {
    let slots = format!("ycsb_lazylink_{tag}_slots");
    let common = format!("ycsb_lazylink_{tag}_common");
    let mut asm = String::new();
    let _ = writeln!(
        asm,
        ".pushsection .text.ycsb_lazylink_{tag},\"ax\",@progbits"
    );
    for (index, name) in names.iter().enumerate() {
        // The function the program calls: one jump through its slot.
        let _ = writeln!(
            asm,
            ".p2align 4\n.globl {name}\n.type {name},@function\n{name}:\n    \
             jmp qword ptr [rip + {slots} + {offset}]\n.size {name}, .-{name}",
            offset = index * 8
        );
    }
    for index in 0..names.len() {
        // A slot's first target: remember which function was called.
        let _ = writeln!(
            asm,
            "ycsb_lazylink_{tag}_first_{index}:\n    push {index}\n    jmp {common}"
        );
    }
    // Save every register that can carry an argument (rax: the vector
    // register count of a variadic call), bind, restore, and jump to the
    // real function. On entry the stack is 8 mod 16 (the caller's return
    // address); the index and seven registers make it 0 again after 136
    // bytes for xmm0-7, as the call to the binder requires.
    let _ = writeln!(
        asm,
        "{common}:\n    push rdi\n    push rsi\n    push rdx\n    push rcx\n    \
         push r8\n    push r9\n    push rax\n    sub rsp, 136"
    );
    for reg in 0..8 {
        let _ = writeln!(asm, "    movdqu xmmword ptr [rsp + {}], xmm{reg}", reg * 16);
    }
    let _ = writeln!(asm, "    call {{bind}}");
    for reg in 0..8 {
        let _ = writeln!(asm, "    movdqu xmm{reg}, xmmword ptr [rsp + {}]", reg * 16);
    }
    let _ = writeln!(
        asm,
        "    add rsp, 136\n    pop rax\n    pop r9\n    pop r8\n    pop rcx\n    \
         pop rdx\n    pop rsi\n    pop rdi\n    pop r11\n    \
         lea r10, [rip + {slots}]\n    jmp qword ptr [r10 + r11 * 8]\n.popsection"
    );
    let _ = writeln!(
        asm,
        ".pushsection .data.ycsb_lazylink_{tag},\"aw\",@progbits\n.p2align 3\n\
         .globl {slots}\n.hidden {slots}\n{slots}:"
    );
    for index in 0..names.len() {
        let _ = writeln!(asm, "    .quad ycsb_lazylink_{tag}_first_{index}");
    }
    let _ = writeln!(asm, ".popsection");

    let count = names.len();
    let mut module = String::new();
    let _ = writeln!(
        module,
        "// @generated by ycsb-lazylink: {count} functions of {path} bound on first use.\n"
    );
    let _ = writeln!(
        module,
        "core::arch::global_asm!(\n    r#\"\n{asm}\"#,\n    bind = sym first_call,\n);\n"
    );
    let _ = writeln!(
        module,
        "extern \"C\" {{\n    static mut {slots}: [usize; {count}];\n}}\n"
    );
    let _ = writeln!(module, "static NAMES: [&core::ffi::CStr; {count}] = [");
    for name in names {
        let _ = writeln!(module, "    c\"{name}\",");
    }
    let _ = writeln!(module, "];\n");
    let _ = writeln!(
        module,
        "static BINDER: ycsb_lazylink::Binder = ycsb_lazylink::Binder::new({path:?});\n\n\
         /// Whether the library is bound on first use (false: linked as usual).\n\
         #[allow(dead_code)]\n\
         pub const LAZY: bool = true;\n\n\
         fn slots() -> *mut usize {{\n    \
             core::ptr::addr_of_mut!({slots}).cast()\n}}\n\n\
         /// Where a trampoline's first call lands: bind every function, or\n\
         /// abort with one line when the library cannot be loaded.\n\
         extern \"C\" fn first_call() {{\n    \
             // SAFETY: NAMES and the slot table have the same length.\n    \
             #[allow(unsafe_code)]\n    \
             unsafe {{ BINDER.bind_or_abort(&NAMES, slots()) }}\n}}\n\n\
         /// Loads the library and binds every function, once.\n\
         ///\n\
         /// # Errors\n\
         ///\n\
         /// The library cannot be loaded.\n\
         #[allow(dead_code)]\n\
         pub fn load() -> Result<(), ycsb_lazylink::LoadError> {{\n    \
             // SAFETY: NAMES and the slot table have the same length.\n    \
             #[allow(unsafe_code)]\n    \
             unsafe {{ BINDER.bind(&NAMES, slots()) }}\n}}\n\n\
         /// The address of `name` in the library (loaded if it was not).\n\
         #[allow(dead_code)]\n\
         pub fn address(name: &core::ffi::CStr) -> Option<*const ()> {{\n    \
             BINDER.address(name)\n}}"
    );
    module
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_keeps_functions_with_a_prefix_once_without_versions() {
        let listing = "\
rocksdb_open T 0000000000123 0000000000040
rocksdb_open@@ROCKSDB_7 T 0000000000123 0000000000040
rocksdb_table_count D 0000000000456 0000000000008
rocksdb_resolver i 0000000000789 0000000000010
rocksdb_weak W 0000000000999 0000000000010
_ZN7rocksdb2DB4OpenE T 0000000000aaa 0000000000010
leveldb_open T 0000000000bbb 0000000000010
";
        assert_eq!(
            functions_in_listing(listing, &["rocksdb_"]),
            ["rocksdb_open", "rocksdb_resolver", "rocksdb_weak"]
        );
        assert_eq!(
            functions_in_listing(listing, &["rocksdb_", "leveldb_"]).len(),
            4
        );
    }

    #[test]
    fn the_lazy_module_has_one_trampoline_and_one_slot_per_function() {
        let names = ["mdb_get".to_owned(), "mdb_put".to_owned()];
        let module = lazy_module("t", "/lib/liblmdb.so.0", &names);
        assert_eq!(
            module
                .matches("jmp qword ptr [rip + ycsb_lazylink_t_slots")
                .count(),
            2
        );
        assert!(module.contains("jmp qword ptr [rip + ycsb_lazylink_t_slots + 8]"));
        assert_eq!(module.matches(".quad ycsb_lazylink_t_first_").count(), 2);
        assert!(module.contains("[usize; 2]"));
        assert!(module.contains("Binder::new(\"/lib/liblmdb.so.0\")"));
        assert!(linked_module().contains("pub const LAZY: bool = false;"));
    }
}
