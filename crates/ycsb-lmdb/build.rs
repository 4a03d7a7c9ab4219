//! Links LMDB: the library in `YCSB_LMDB_LIB_DIR` when set (a build of
//! your own), otherwise the system's `liblmdb` (Debian's liblmdb-dev).

fn main() {
    println!("cargo:rerun-if-env-changed=YCSB_LMDB_LIB_DIR");
    if let Ok(dir) = std::env::var("YCSB_LMDB_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=lmdb");
}
