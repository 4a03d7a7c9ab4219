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
}
