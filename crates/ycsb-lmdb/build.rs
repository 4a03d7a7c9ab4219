//! Links LMDB: the library in `YCSB_LMDB_LIB_DIR` when set (a build of
//! your own), otherwise the system's `liblmdb` (Debian's liblmdb-dev).

fn main() {
    println!("cargo:rerun-if-env-changed=YCSB_LMDB_LIB_DIR");
    if let Ok(dir) = std::env::var("YCSB_LMDB_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=lmdb");
    // Bound when a store opens, not at program start (ycsb-lazylink): with
    // the library's functions defined in the program, the linker drops the
    // link above (rustc links with --as-needed).
    let dir = std::env::var_os("YCSB_LMDB_LIB_DIR").map(std::path::PathBuf::from);
    let library = ycsb_lazylink::build::SharedLibrary::find("lmdb", dir.as_deref());
    ycsb_lazylink::build::generate("lmdb", library.as_ref(), &["mdb_"])
        .expect("write the lazy-binding module into OUT_DIR");
}
