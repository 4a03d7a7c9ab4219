//! Records what the build knows of RocksDB's assertions for a static link,
//! where they cannot be read from a shared library at run time: the
//! sources librocksdb-sys compiles are built with `NDEBUG`; a static
//! library named by `ROCKSDB_LIB_DIR` is asked with `nm` whether it calls
//! `__assert_fail`.
//!
//! A shared librocksdb is bound when a store first opens, not at program
//! start (`ycsb-lazylink`): its C API functions are defined in the program
//! as jumps through a table filled by `dlopen` (issue 37's start-up cost).

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    for var in ["ROCKSDB_COMPILE", "ROCKSDB_LIB_DIR", "ROCKSDB_STATIC"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let compile =
        env::var("ROCKSDB_COMPILE").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    let lib_dir = env::var("ROCKSDB_LIB_DIR").ok();
    let assertions = match (&lib_dir, compile) {
        // librocksdb-sys's build script defines NDEBUG for the engine.
        (None, _) | (_, true) => "disabled",
        (Some(dir), false) if env::var_os("ROCKSDB_STATIC").is_some() => {
            archive_assertions(&Path::new(dir).join("librocksdb.a"))
        }
        // A shared library: detected at run time.
        _ => "unknown",
    };
    println!("cargo:rustc-env=YCSB_ROCKSDB_STATIC_ASSERTIONS={assertions}");
    let shared = match (&lib_dir, compile) {
        (Some(dir), false) if env::var_os("ROCKSDB_STATIC").is_none() => {
            ycsb_lazylink::build::SharedLibrary::in_dir(Path::new(dir), "rocksdb")
        }
        _ => None,
    };
    ycsb_lazylink::build::generate("rocksdb", shared.as_ref(), &["rocksdb_"])
        .expect("write the lazy-binding module into OUT_DIR");
}

/// `enabled` when an object of the archive calls `__assert_fail`,
/// `disabled` when none does, `unknown` when `nm` cannot say.
fn archive_assertions(archive: &Path) -> &'static str {
    println!("cargo:rerun-if-changed={}", archive.display());
    match Command::new("nm").arg("-u").arg(archive).output() {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            if text.split_ascii_whitespace().any(|w| w == "__assert_fail") {
                "enabled"
            } else {
                "disabled"
            }
        }
        _ => "unknown",
    }
}
