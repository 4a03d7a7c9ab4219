//! Binds the system's libsqlite3 when a store opens, not at program start
//! (ycsb-lazylink): with its functions defined in the program, the linker
//! drops libsqlite3-sys's link (rustc links with --as-needed). A static
//! SQLite (`SQLITE3_STATIC`) is linked as usual.

fn main() {
    println!("cargo:rerun-if-env-changed=SQLITE3_LIB_DIR");
    println!("cargo:rerun-if-env-changed=SQLITE3_STATIC");
    let shared = std::env::var_os("SQLITE3_STATIC").is_none();
    let dir = std::env::var_os("SQLITE3_LIB_DIR").map(std::path::PathBuf::from);
    let library = shared
        .then(|| ycsb_lazylink::build::SharedLibrary::find("sqlite3", dir.as_deref()))
        .flatten();
    ycsb_lazylink::build::generate("sqlite", library.as_ref(), &["sqlite3_"])
        .expect("write the lazy-binding module into OUT_DIR");
}
