//! Project automation: `cargo xtask <command>`.
//!
//! Commands build argument vectors and never pass user-supplied strings
//! through a shell.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

/// Debian packages the build and the tests need: the engines' libraries
/// (linked, not built from source, to keep a cold CI build short), clang
/// for bindgen, the real servers the network tests start, and the peers
/// the benchmarks compare against.
const DEBIAN_PACKAGES: &[&str] = &[
    "librocksdb-dev",
    "libleveldb-dev",
    "libsnappy-dev",
    "clang",
    "libclang-dev",
    "redis-server",
    "redis-tools",
    "rocksdb-tools",
    "nginx-light",
];

const USAGE: &str = "usage: cargo xtask <command>

commands:
  deps    install the Debian packages the build and tests need (apt-get when root,
          otherwise print the command to run)
  test    install what is missing, then run the whole test suite (what CI runs)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("deps") => deps(),
        Some("test") => deps().and_then(|()| test(&args[1..])),
        Some("-h" | "--help" | "help") | None => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("xtask: unknown command '{other}'\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn is_installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Installs the missing Debian packages.
fn deps() -> Result<()> {
    if !Path::new("/usr/bin/dpkg-query").exists() {
        eprintln!(
            "xtask: not a Debian-like system; install the equivalents of: {}",
            DEBIAN_PACKAGES.join(" ")
        );
        return Ok(());
    }
    let missing: Vec<&str> = DEBIAN_PACKAGES
        .iter()
        .copied()
        .filter(|p| !is_installed(p))
        .collect();
    if missing.is_empty() {
        eprintln!("xtask: system packages present: {}", DEBIAN_PACKAGES.join(" "));
        return Ok(());
    }
    if !is_root() {
        bail!(
            "missing system packages; run: sudo apt-get update && sudo apt-get install -y {}",
            missing.join(" ")
        );
    }
    eprintln!("xtask: installing {} with apt-get", missing.join(" "));
    run(Command::new("apt-get").args(["update", "-qq"]))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    // The Debian packages start their services; the tests start their own
    // servers on free loopback ports, so stop the system ones.
    for service in ["redis-server", "nginx"] {
        let _ = Command::new("service").args([service, "stop"]).status();
    }
    Ok(())
}

/// Runs the whole test suite: unit, integration, doc tests and examples.
fn test(extra: &[String]) -> Result<()> {
    let root = project_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("xtask: cargo test --workspace");
    run(Command::new(&cargo)
        .current_dir(&root)
        .args(["test", "--workspace", "--all-targets"])
        .args(extra))?;
    eprintln!("xtask: doc tests");
    run(Command::new(&cargo)
        .current_dir(&root)
        .args(["test", "--workspace", "--doc"])
        .args(extra))?;
    Ok(())
}

fn run(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .with_context(|| format!("cannot start {:?}", command.get_program()))?;
    if !status.success() {
        bail!("{:?} failed with {status}", command.get_program());
    }
    Ok(())
}
