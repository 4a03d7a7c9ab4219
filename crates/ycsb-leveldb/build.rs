//! Records whether a statically linked LevelDB was built with assertions,
//! which cannot be read from the program at run time: `build-leveldb.sh`
//! writes `assertions = "disabled"` (or `"enabled"`) into the Cargo
//! configuration that links its library, and Cargo passes that entry of the
//! `links = "leveldb"` override to this script as `DEP_LEVELDB_ASSERTIONS`.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_LEVELDB_ASSERTIONS");
    let assertions = match std::env::var("DEP_LEVELDB_ASSERTIONS").as_deref() {
        Ok("enabled") => "enabled",
        Ok("disabled") => "disabled",
        _ => "unknown",
    };
    println!("cargo:rustc-env=YCSB_LEVELDB_STATIC_ASSERTIONS={assertions}");
    // The repository's link override (.cargo/config.toml) says `shared`:
    // Debian's libleveldb, bound when a store opens, not at program start
    // (ycsb-lazylink). A build of one's own (build-leveldb.sh's config
    // records `assertions`) or leveldb-sys's bundled source is linked as
    // usual, so that its code, not the system's, runs.
    println!("cargo:rerun-if-env-changed=DEP_LEVELDB_SHARED");
    let shared = std::env::var("DEP_LEVELDB_SHARED").is_ok_and(|v| v == "yes")
        && std::env::var_os("DEP_LEVELDB_ASSERTIONS").is_none();
    let library = shared
        .then(|| ycsb_lazylink::build::SharedLibrary::find("leveldb", None))
        .flatten();
    ycsb_lazylink::build::generate("leveldb", library.as_ref(), &["leveldb_"])
        .expect("write the lazy-binding module into OUT_DIR");
}
