//! `cargo xtask engines`: release builds of the engines (no assertions,
//! optimised, portable) in a cache outside `target/`, and how the other
//! commands build ycsb against them when they exist.
//!
//! Debian's `librocksdb` and `libleveldb` are compiled with assertions on
//! (each imports `__assert_fail`), which is right for tests and wrong for
//! figures anyone publishes. The cache holds:
//!
//! - `rocksdb-<version>/`: RocksDB from the sources of the `librocksdb-sys`
//!   crate in `Cargo.lock` (so its C API is the one the `rocksdb` crate
//!   binds), `make DEBUG_LEVEL=0 PORTABLE=1` (`-O2 -DNDEBUG`), as a shared
//!   library (`lib/`, `include/`) and `bin/db_bench` linked to it;
//! - `leveldb-<version>/`: the LevelDB `leveldb-sys` bundles, built by
//!   `crates/ycsb-leveldb/build-leveldb.sh` (CMake Release: `-O3 -DNDEBUG`)
//!   as a static library, with the Cargo configuration that links it.
//!
//! A ycsb built against the cache goes to its own target directory
//! (`<target>/release-engines`), so that switching never rebuilds the
//! default (Debian-linked) build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

/// Usage of the subcommand.
pub const USAGE: &str = "  engines [--force] [--only rocksdb|leveldb]
          build release engines (no assertions, -O2/-O3, portable) once into a cache
          outside target/ ($YCSB_ENGINES_DIR, else $XDG_CACHE_HOME/ycsb-rs/engines, else
          ~/.cache/ycsb-rs/engines): RocksDB and its db_bench from librocksdb-sys's
          sources (about 20 min on 2 cores), LevelDB from leveldb-sys's; demo,
          experiment, engine-bench and dbbench-compare then use them
";

/// Debian packages the release builds need besides the default ones:
/// compilers and CMake (LevelDB), gflags for db_bench, and the compression
/// libraries RocksDB's build detects and links.
const BUILD_PACKAGES: &[&str] = &[
    "build-essential",
    "cmake",
    "clang",
    "libgflags-dev",
    "libsnappy-dev",
    "zlib1g-dev",
    "libbz2-dev",
    "liblz4-dev",
    "libzstd-dev",
];

/// Where the release engines live.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("YCSB_ENGINES_DIR") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    base.join("ycsb-rs").join("engines")
}

/// The version of a locked package, from `Cargo.lock`.
fn locked_version(root: &Path, package: &str) -> Result<String> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).context("reading Cargo.lock")?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == format!("name = \"{package}\"") {
            if let Some(v) = lines.next().and_then(|l| l.strip_prefix("version = \"")) {
                return Ok(v.trim_end_matches('"').to_string());
            }
        }
    }
    bail!("{package} is not in Cargo.lock")
}

/// The RocksDB version librocksdb-sys bundles: `0.10.0+7.9.2` gives 7.9.2.
fn rocksdb_version(root: &Path) -> Result<String> {
    let v = locked_version(root, "librocksdb-sys")?;
    Ok(v.split_once('+').map_or(v.clone(), |(_, r)| r.to_string()))
}

/// The LevelDB leveldb-sys bundles (its `deps/leveldb-<version>`).
fn leveldb_source(root: &Path) -> Result<(String, PathBuf)> {
    let v = locked_version(root, "leveldb-sys")?;
    let registry = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .context("no CARGO_HOME or HOME")?
        .join("registry")
        .join("src");
    for index in
        std::fs::read_dir(&registry).with_context(|| format!("reading {}", registry.display()))?
    {
        let deps = index?.path().join(format!("leveldb-sys-{v}")).join("deps");
        if let Ok(entries) = std::fs::read_dir(&deps) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(version) = name.strip_prefix("leveldb-") {
                    return Ok((version.to_string(), e.path()));
                }
            }
        }
    }
    bail!(
        "leveldb-sys {v}'s sources are not in {}",
        registry.display()
    )
}

/// A release RocksDB in the cache.
#[derive(Debug, Clone)]
pub struct RocksRelease {
    /// `<cache>/rocksdb-<version>`.
    pub dir: PathBuf,
    /// Its version.
    pub version: String,
}

impl RocksRelease {
    fn lib(&self) -> PathBuf {
        self.dir.join("lib")
    }

    /// The release `db_bench`, linked to the same library.
    pub fn db_bench(&self) -> PathBuf {
        self.dir.join("bin").join("db_bench")
    }

    fn complete(&self) -> bool {
        self.lib().join("librocksdb.so").exists()
            && self
                .dir
                .join("include")
                .join("rocksdb")
                .join("c.h")
                .exists()
            && self.db_bench().exists()
    }
}

/// A release LevelDB in the cache.
#[derive(Debug, Clone)]
pub struct LevelRelease {
    /// `<cache>/leveldb-<version>`.
    pub dir: PathBuf,
    /// Its version.
    pub version: String,
}

impl LevelRelease {
    fn config(&self) -> PathBuf {
        self.dir.join("cargo-config.toml")
    }

    fn complete(&self) -> bool {
        self.dir.join("lib").join("libleveldb.a").exists() && self.config().exists()
    }
}

/// The release engines found in the cache (each may be missing).
#[derive(Debug, Clone, Default)]
pub struct ReleaseEngines {
    /// RocksDB, when built.
    pub rocksdb: Option<RocksRelease>,
    /// LevelDB, when built.
    pub leveldb: Option<LevelRelease>,
}

impl ReleaseEngines {
    /// What the cache holds for this checkout's locked versions.
    pub fn find(root: &Path) -> Self {
        let cache = cache_dir();
        let rocksdb = rocksdb_version(root).ok().map(|version| RocksRelease {
            dir: cache.join(format!("rocksdb-{version}")),
            version,
        });
        let leveldb = leveldb_source(root).ok().map(|(version, _)| LevelRelease {
            dir: cache.join(format!("leveldb-{version}")),
            version,
        });
        Self {
            rocksdb: rocksdb.filter(RocksRelease::complete),
            leveldb: leveldb.filter(LevelRelease::complete),
        }
    }

    /// Whether any release engine is there.
    pub fn any(&self) -> bool {
        self.rocksdb.is_some() || self.leveldb.is_some()
    }

    /// Points a `cargo build|test` command at the release engines: RocksDB
    /// through librocksdb-sys's variables (and an rpath, so the program
    /// finds the library without `LD_LIBRARY_PATH`), LevelDB through the
    /// Cargo configuration its script wrote, in a target directory of its
    /// own. The `--config` goes after the subcommand, so call this after
    /// `args(["build", ...])`.
    pub fn configure(&self, command: &mut Command, root: &Path) {
        command.env("CARGO_TARGET_DIR", self.target_dir(root));
        if let Some(r) = &self.rocksdb {
            let lib = r.lib();
            command
                .env("ROCKSDB_LIB_DIR", &lib)
                .env("ROCKSDB_INCLUDE_DIR", r.dir.join("include"))
                .env(
                    "RUSTFLAGS",
                    format!("-C link-arg=-Wl,-rpath,{}", lib.display()),
                );
        }
        if let Some(l) = &self.leveldb {
            command.arg("--config").arg(l.config());
        }
    }

    /// Where the release-engine build goes.
    pub fn target_dir(&self, root: &Path) -> PathBuf {
        default_target(root).join("release-engines")
    }

    /// One line saying which libraries a build uses.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        match &self.rocksdb {
            Some(r) => parts.push(format!(
                "release RocksDB {} ({})",
                r.version,
                r.lib().display()
            )),
            None => parts.push("Debian's RocksDB (assertions enabled)".to_string()),
        }
        match &self.leveldb {
            Some(l) => parts.push(format!(
                "release LevelDB {} ({}, static)",
                l.version,
                l.dir.display()
            )),
            None => parts.push("Debian's LevelDB (assertions enabled)".to_string()),
        }
        parts.join(", ")
    }
}

/// `$CARGO_TARGET_DIR` (absolute) or `<root>/target`.
pub fn default_target(root: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    if target.is_relative() {
        root.join(target)
    } else {
        target
    }
}

/// Builds release binaries (`cargo build --release <args>`) against the
/// release engines when the cache has them, else against Debian's, says
/// which, and returns the target directory the binaries are in.
///
/// # Errors
/// A failed build.
pub fn build_release(root: &Path, args: &[&str]) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let engines = ReleaseEngines::find(root);
    let mut command = Command::new(&cargo);
    command
        .current_dir(root)
        .args(["build", "--release"])
        .args(args);
    let target = if engines.any() {
        engines.configure(&mut command, root);
        engines.target_dir(root)
    } else {
        default_target(root)
    };
    eprintln!(
        "xtask: building {} (release) with {}",
        args.join(" "),
        engines.describe()
    );
    if !engines.any() {
        eprintln!(
            "xtask: `cargo xtask engines` builds release engines; results measured on these say so"
        );
    }
    crate::run(&mut command)?;
    Ok(target)
}

/// The release path's tests, when the cache has release engines: the
/// rocksdb and leveldb bindings' store tests (their version and build
/// tests told to expect the cache's libraries, assertions disabled) and
/// the end-to-end test of the header and export, built against the cache.
/// Without a cache, says so and runs nothing.
///
/// # Errors
/// A failed test.
pub fn test_release(root: &Path) -> Result<()> {
    let engines = ReleaseEngines::find(root);
    if !engines.any() {
        eprintln!(
            "xtask: no release engines in {} (`cargo xtask engines`): their tests are skipped",
            cache_dir().display()
        );
        return Ok(());
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("xtask: release engines' tests with {}", engines.describe());
    let mut expectations: Vec<(&str, String)> = Vec::new();
    let mut bindings = Command::new(&cargo);
    bindings.current_dir(root).arg("test");
    if engines.rocksdb.is_some() {
        bindings.args(["-p", "ycsb-rocksdb"]);
        expectations.push(("YCSB_ROCKSDB_EXPECT_ASSERTIONS", "disabled".into()));
    }
    if let Some(l) = &engines.leveldb {
        bindings.args(["-p", "ycsb-leveldb"]);
        expectations.push(("YCSB_LEVELDB_EXPECT_ASSERTIONS", "disabled".into()));
        expectations.push(("YCSB_LEVELDB_EXPECT_VERSION", l.version.clone()));
    }
    bindings.args(["--test", "store"]);
    let mut cli = Command::new(&cargo);
    cli.current_dir(root)
        .args(["test", "-p", "ycsb-cli", "--test", "engine_build"]);
    for command in [&mut bindings, &mut cli] {
        engines.configure(command, root);
        command.envs(expectations.iter().map(|(k, v)| (*k, v)));
        crate::run(command)?;
    }
    Ok(())
}

fn install_missing() -> Result<()> {
    if !Path::new("/usr/bin/dpkg-query").exists() {
        eprintln!(
            "xtask: not a Debian-like system; the build needs the equivalents of: {}",
            BUILD_PACKAGES.join(" ")
        );
        return Ok(());
    }
    let missing: Vec<&str> = BUILD_PACKAGES
        .iter()
        .copied()
        .filter(|p| !crate::is_installed(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    if !crate::is_root() {
        bail!(
            "missing system packages; run: sudo apt-get install -y {}",
            missing.join(" ")
        );
    }
    eprintln!("xtask: installing {} with apt-get", missing.join(" "));
    crate::run(Command::new("apt-get").args(["update", "-qq"]))?;
    crate::run(
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}

/// Runs a build script with its output in `log`, timing it.
fn timed(what: &str, command: &mut Command, log: &Path) -> Result<()> {
    let file = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let start = Instant::now();
    eprintln!("xtask: building {what} (log: {})", log.display());
    let status = command
        .stdout(file.try_clone()?)
        .stderr(file)
        .status()
        .with_context(|| format!("starting the {what} build"))?;
    let took = start.elapsed().as_secs();
    if !status.success() {
        bail!(
            "the {what} build failed with {status} after {}m{:02}s; see {}",
            took / 60,
            took % 60,
            log.display()
        );
    }
    eprintln!("xtask: built {what} in {}m{:02}s", took / 60, took % 60);
    Ok(())
}

/// Entry point of `cargo xtask engines`.
///
/// # Errors
/// A bad option, a missing package or tool, a failed build.
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    let mut force = false;
    let mut only: Option<String> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--force" => force = true,
            "--only" => {
                let v = it.next().context("--only needs rocksdb or leveldb")?;
                if v != "rocksdb" && v != "leveldb" {
                    bail!("engines: --only {v}: expected rocksdb or leveldb");
                }
                only = Some(v.clone());
            }
            other => bail!("engines: unknown option {other}\n\n{USAGE}"),
        }
    }
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    install_missing()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // The engines' sources come from the crates the lock file names.
    crate::run(
        Command::new(&cargo)
            .current_dir(root)
            .args(["fetch", "--locked"]),
    )?;
    let cache = cache_dir();
    std::fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
    let jobs = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .to_string();
    let start = Instant::now();

    if wanted("leveldb") {
        let (version, source) = leveldb_source(root)?;
        let release = LevelRelease {
            dir: cache.join(format!("leveldb-{version}")),
            version,
        };
        if release.complete() && !force {
            eprintln!(
                "xtask: LevelDB {} already built in {}",
                release.version,
                release.dir.display()
            );
        } else {
            std::fs::create_dir_all(&release.dir)?;
            timed(
                &format!("LevelDB {} (CMake Release, static)", release.version),
                Command::new(root.join("crates/ycsb-leveldb/build-leveldb.sh"))
                    .arg(&source)
                    .arg(&release.dir)
                    .env("CMAKE_BUILD_PARALLEL_LEVEL", &jobs),
                &release.dir.join("build.log"),
            )?;
        }
    }
    if wanted("rocksdb") {
        let version = rocksdb_version(root)?;
        let release = RocksRelease {
            dir: cache.join(format!("rocksdb-{version}")),
            version,
        };
        if release.complete() && !force {
            eprintln!(
                "xtask: RocksDB {} already built in {}",
                release.version,
                release.dir.display()
            );
        } else {
            std::fs::create_dir_all(&release.dir)?;
            // The log goes beside the build directory: the script empties
            // the directory's build outputs before it starts.
            timed(
                &format!(
                    "RocksDB {} and db_bench (make DEBUG_LEVEL=0 PORTABLE=1, shared)",
                    release.version
                ),
                Command::new(root.join("crates/ycsb-rocksdb/build-rocksdb.sh"))
                    .arg(&release.dir)
                    .env("JOBS", &jobs),
                &cache.join(format!("rocksdb-{}.log", release.version)),
            )?;
        }
    }
    let took = start.elapsed().as_secs();
    let engines = ReleaseEngines::find(root);
    eprintln!(
        "xtask: engines ready in {}m{:02}s: {}",
        took / 60,
        took % 60,
        engines.describe()
    );
    if let Some(r) = &engines.rocksdb {
        eprintln!("xtask: release db_bench: {}", r.db_bench().display());
    }
    eprintln!("xtask: demo, experiment, engine-bench and dbbench-compare now build ycsb against them (in {})", engines.target_dir(root).display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locked_engine_versions_are_found() {
        let root = crate::project_root();
        let rocksdb = rocksdb_version(&root).unwrap();
        assert!(rocksdb.starts_with("7."), "{rocksdb}");
        assert!(locked_version(&root, "no-such-package").is_err());
    }
}
