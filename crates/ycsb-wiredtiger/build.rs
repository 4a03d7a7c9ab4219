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
}
