//! Links libwiredtiger: the system's (Debian's libwiredtiger-dev) unless
//! WIREDTIGER_LIB_DIR names the directory of another build, or a Cargo
//! config overrides the `wiredtiger` link (docs/engines-wiredtiger.md).

fn main() {
    println!("cargo:rerun-if-env-changed=WIREDTIGER_LIB_DIR");
    println!("cargo:rerun-if-env-changed=WIREDTIGER_STATIC");
    if let Ok(dir) = std::env::var("WIREDTIGER_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    if std::env::var("WIREDTIGER_STATIC").is_ok_and(|v| v == "1") {
        println!("cargo:rustc-link-lib=static=wiredtiger");
        // What WiredTiger's own objects call into.
        println!("cargo:rustc-link-lib=dylib=dl");
        println!("cargo:rustc-link-lib=dylib=pthread");
    } else {
        println!("cargo:rustc-link-lib=dylib=wiredtiger");
    }
    // A shared library is bound when a store opens, not at program start
    // (ycsb-lazylink): with its functions defined in the program, the
    // linker drops the link above (rustc links with --as-needed).
    let shared = std::env::var("WIREDTIGER_STATIC").map_or(true, |v| v != "1");
    let dir = std::env::var_os("WIREDTIGER_LIB_DIR").map(std::path::PathBuf::from);
    let library = shared
        .then(|| ycsb_lazylink::build::SharedLibrary::find("wiredtiger", dir.as_deref()))
        .flatten();
    ycsb_lazylink::build::generate("wiredtiger", library.as_ref(), &["wiredtiger_"])
        .expect("write the lazy-binding module into OUT_DIR");
}
