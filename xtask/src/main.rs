//! Project automation: `cargo xtask <command>`.
//!
//! Commands build argument vectors and never pass user-supplied strings
//! through a shell.

mod baseline;
mod bench;
mod dbbench;
mod engine_bench;
mod engines;
mod instructions;
mod machine;
mod memcached_bench;
mod nextest;
mod overhead;
mod peer;
mod redis_bench;
mod stores;
mod target;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

#[cfg(feature = "engines")]
mod experiment;
#[cfg(feature = "engines")]
mod pg_bench;

/// Debian packages the build and the tests need: the engines' libraries
/// (linked, not built from source, to keep a cold CI build short), clang
/// for bindgen, the real servers the network tests start, and the peers
/// the benchmarks compare against.
const DEBIAN_PACKAGES: &[&str] = &[
    "librocksdb-dev",
    "libleveldb-dev",
    // WiredTiger 3.2 (and its snappy/zlib extensions in libwiredtiger0).
    "libwiredtiger-dev",
    "libsnappy-dev",
    // The lmdb and sqlite stores link the system's libraries (pkg-config
    // finds libsqlite3 for libsqlite3-sys).
    "liblmdb-dev",
    "libsqlite3-dev",
    "pkg-config",
    "clang",
    "libclang-dev",
    "redis-server",
    "redis-tools",
    // The memcached store's tests start memcached servers; memcslap is
    // the load tool its speed is compared with (docs/engines-memcached.md).
    "memcached",
    "libmemcached-tools",
    // The jdbc store's tests make PostgreSQL clusters with initdb and
    // MariaDB data directories with mariadb-install-db, and start them
    // (docs/engines-jdbc.md).
    "postgresql",
    "mariadb-server",
    "rocksdb-tools",
    "nginx-light",
    // The etcd store's tests start etcd clusters; its TLS test makes
    // certificates with openssl; native-tls links OpenSSL.
    "etcd-server",
    "openssl",
    "libssl-dev",
    "pkg-config",
    "chromium",
    // mount(8)/umount(8): the disk-full test mounts a small tmpfs.
    "mount",
    // python3 with pip: the HdrHistogram log tests decode with the PyPI
    // package hdrhistogram, which they install with pip when missing.
    "python3",
    "python3-pip",
    // ip(8): the multi-host test puts clients and a server in network
    // namespaces joined by veth pairs (crates/ycsb-cli/tests/multihost.rs).
    "iproute2",
    // The instruction-count guard of the hot paths (`cargo xtask
    // instructions`) and the benchmarks' `--instructions` run cachegrind.
    "valgrind",
];

const USAGE: &str = "usage: cargo xtask <command>

commands:
  deps    install the Debian packages the build and tests need (apt-get when root,
          otherwise print the command to run)
  test    install what is missing, then run the whole test suite (what CI runs)
  stores  check that the lists cargo needs (ycsb-stores' dependencies and features,
          ycsb-cli's features) are what the store registry gives; --write rewrites them
  package check that the library crates (ycsb-results, ycsb-lazylink, ycsb-db, ycsb-basic,
          ycsb-memory, ycsb-core) package and build from their tarballs, and that the
          store crates package, as `test` does at its end; --verify-stores builds the
          store crates from their tarballs too (what `cargo publish --dry-run` checks;
          several minutes, so not in `test`)
  demo    install what is missing, build ycsb in release mode, run workloads A and C
          on every embedded engine (load + run) at equal durability (none syncs),
          print a comparison table and write an HTML report with the charts of every run;
          options: --records N (default 200000), --operations N (default 200000),
          --threads N (default 2)
  overhead  build ycsb in release mode and compare the basic store's throughput with
          the time series and resource sampling off and on; options: --rounds N
          (default 5), --operations N (default 50000000), --threads N (default 1)
  experiment <matrix.toml> [--check] [--force] [--report] [--results DIR] [--ycsb PATH]
          run a matrix of benchmark cells (resumable), write summary tables and an HTML
          report under results/<experiment>/ (see docs/experiments.md)
  engine-bench  ycsb against direct-engine loops (and YCSB-cpp with YCSB_CPP_BIN) on
          RocksDB and LevelDB, workloads A and C; --help for options
  redis-bench  the redis store through ycsb against redis-benchmark (SET/GET and
          HMSET/HGETALL) on a private redis-server, pipeline depths 1, 8, 32; --help
  pg-bench  the jdbc store's single-row reads against pgbench's (prepared SELECT of one
          row of Java's table) on a private PostgreSQL: reads per client CPU-second
  memcached-bench  the memcached store through ycsb against memaslap (memcaslap) on a
          private memcached: operations per client CPU-second; --help for options
  instructions [--accept]  instructions per operation of the client's hot paths
          (cachegrind, release build of xtask/hot-paths) against the figures in
          xtask/hot-paths/instructions.json: a rise beyond 3 % fails (`test` runs it);
          --accept records the figures measured now
";

fn usage() -> String {
    format!(
        "{USAGE}{}{}{}",
        engines::USAGE,
        dbbench::USAGE,
        bench::USAGE
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("deps") => deps(),
        Some("test") => deps().and_then(|()| test(&args[1..])),
        Some(command @ ("demo" | "experiment" | "engine-bench" | "pg-bench")) => {
            with_engines(command, &args)
        }
        Some("package") => package(&args[1..]),
        Some("stores") => stores::main(&project_root(), &args[1..]),
        Some("engines") => deps().and_then(|()| engines::main(&project_root(), &args[1..])),
        Some("overhead") => overhead::main(&project_root(), &args[1..]),
        Some("redis-bench") => deps().and_then(|()| redis_bench::main(&project_root(), &args[1..])),
        Some("bench") => bench::main(&project_root(), &args[1..]),
        Some("memcached-bench") => {
            deps().and_then(|()| memcached_bench::main(&project_root(), &args[1..]))
        }
        Some("instructions") => instructions::main(&project_root(), &args[1..]),
        Some("dbbench-compare") => deps().and_then(|()| dbbench::compare(&args[1..])),
        Some("-h" | "--help" | "help") | None => {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("xtask: unknown command '{other}'\n\n{}", usage());
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.downcast_ref::<baseline::BadInput>().is_some() => {
            eprintln!("xtask: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a command that knows the stores by their descriptors, and so links
/// every engine (the `engines` feature).
#[cfg(feature = "engines")]
fn with_engines(command: &str, args: &[String]) -> Result<()> {
    match command {
        "demo" => deps().and_then(|()| demo(&args[1..])),
        "experiment" => experiment::main(&project_root(), &args[1..]),
        "engine-bench" => deps().and_then(|()| engine_bench::main(&project_root(), &args[1..])),
        "pg-bench" => deps().and_then(|()| pg_bench::main(&project_root(), &args[1..])),
        other => unreachable!("{other} is not a command of the engines feature"),
    }
}

/// Without the `engines` feature (the `cargo xtask` alias's build, which
/// compiles before any engine library is installed): installs the Debian
/// packages, then replaces this process with a build that has the feature.
#[cfg(not(feature = "engines"))]
fn with_engines(_command: &str, args: &[String]) -> Result<()> {
    use std::os::unix::process::CommandExt;
    deps()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let error = Command::new(&cargo)
        .current_dir(project_root())
        .args([
            "run",
            "--quiet",
            "--package",
            "xtask",
            "--features",
            "engines",
            "--",
        ])
        .args(args)
        .exec();
    Err(error).with_context(|| format!("running {cargo} run --package xtask --features engines"))
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
        eprintln!(
            "xtask: system packages present: {}",
            DEBIAN_PACKAGES.join(" ")
        );
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
    for service in [
        "redis-server",
        "nginx",
        "etcd",
        "memcached",
        "postgresql",
        "mariadb",
    ] {
        let _ = Command::new("service").args([service, "stop"]).status();
    }
    Ok(())
}

/// Runs the whole test suite: unit, integration, doc tests and examples.
fn test(extra: &[String]) -> Result<()> {
    let root = project_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // The cheap checks first: a formatting slip or a lint fails in seconds,
    // not after the whole suite.
    eprintln!("xtask: stores (the registry's lists in Cargo.toml files)");
    stores::main(&root, &[])?;
    eprintln!("xtask: cargo fmt --check");
    run(Command::new(&cargo)
        .current_dir(&root)
        .args(["fmt", "--all", "--", "--check"]))?;
    eprintln!("xtask: cargo clippy --workspace --all-targets -- -D warnings");
    run(Command::new(&cargo).current_dir(&root).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    // The build the `cargo xtask` alias runs: no engine linked.
    eprintln!("xtask: cargo clippy --package xtask --no-default-features -- -D warnings");
    run(Command::new(&cargo).current_dir(&root).args([
        "clippy",
        "--package",
        "xtask",
        "--no-default-features",
        "--",
        "-D",
        "warnings",
    ]))?;
    if nextest::available(&cargo) {
        eprintln!("xtask: cargo nextest run --workspace --all-targets");
        nextest::run(&root, &cargo, extra)?;
    } else {
        eprintln!(
            "xtask: cargo test --workspace (cargo-nextest is not installed: no per-test times)"
        );
        run(Command::new(&cargo)
            .current_dir(&root)
            .args(["test", "--workspace", "--all-targets"])
            .args(extra))?;
    }
    eprintln!("xtask: doc tests");
    run(Command::new(&cargo)
        .current_dir(&root)
        .args(["test", "--workspace", "--doc"])
        .args(extra))?;
    // Documentation must build without broken links or warnings.
    eprintln!("xtask: cargo doc");
    run(Command::new(&cargo)
        .current_dir(&root)
        .args(["doc", "--workspace", "--no-deps", "--quiet"])
        .env("RUSTDOCFLAGS", "-D warnings"))?;
    package(&[])?;
    eprintln!("xtask: instructions per operation of the hot paths");
    instructions::main(&root, &[])?;
    engines::test_release(&root)?;
    for example in ["own_store", "embedded_workload"] {
        eprintln!("xtask: example {example}");
        run(Command::new(&cargo)
            .current_dir(&root)
            .args([
                "run",
                "--quiet",
                "-p",
                "ycsb-examples",
                "--example",
                example,
            ])
            .stdout(std::process::Stdio::null()))?;
    }
    Ok(())
}

/// The library crates `cargo xtask test` packages.
const PACKAGED: [&str; 6] = [
    "ycsb-results",
    "ycsb-lazylink",
    "ycsb-db",
    "ycsb-basic",
    "ycsb-memory",
    "ycsb-core",
];

/// Packages the library crates together and builds each from its tarball
/// (each one's unpublished dependencies come from the others), so that
/// they stay publishable; `--verify-stores` builds the store crates from
/// theirs too.
fn package(args: &[String]) -> Result<()> {
    let verify_stores = match args {
        [] => false,
        [flag] if flag == "--verify-stores" => true,
        _ => {
            return Err(baseline::BadInput(format!(
                "package takes no argument but --verify-stores (got {})",
                args.join(" ")
            ))
            .into())
        }
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let root = project_root();
    eprintln!("xtask: cargo package (library crates)");
    let verify_dir = package_target_dir(&root);
    let stores = stores::store_crates(&root)?;
    forget_packaged_builds(
        &packaged_crates(&stores),
        cargo_home().as_deref(),
        &verify_dir,
    )?;
    run(Command::new(&cargo)
        .current_dir(&root)
        .args(["package", "--quiet", "--allow-dirty", "--target-dir"])
        .arg(&verify_dir)
        .args(PACKAGED.iter().flat_map(|krate| ["-p", krate])))?;
    // The store crates package too (metadata, files, dependency versions:
    // what `cargo publish --dry-run` checks before building). `test` does
    // not build them from their tarballs: that compiles every engine's
    // dependencies a second time, minutes of CI for what the workspace
    // build already compiles; `--verify-stores` does.
    let mut command = Command::new(&cargo);
    command
        .current_dir(&root)
        .args(["package", "--quiet", "--allow-dirty"]);
    if verify_stores {
        eprintln!("xtask: cargo package (the store crates, built from their tarballs)");
    } else {
        eprintln!("xtask: cargo package --no-verify (the store crates)");
        command.arg("--no-verify");
    }
    run(command.arg("--target-dir").arg(&verify_dir).args(
        PACKAGED
            .iter()
            .copied()
            .chain(
                stores
                    .iter()
                    .map(String::as_str)
                    .filter(|s| !PACKAGED.contains(s)),
            )
            .flat_map(|krate| ["-p", krate]),
    ))?;
    Ok(())
}

/// Where `cargo package` verifies the tarballs: a target directory of its
/// own, so that [`forget_packaged_builds`] can clear it.
fn package_target_dir(root: &Path) -> PathBuf {
    let base = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    base.join("package-verify")
}

/// Every crate of ours that `cargo package` may verify from a tarball: the
/// library crates and the store crates, since a store crate that another
/// depends on (the http client, under the server) is extracted and built
/// from its tarball as the library crates are.
fn packaged_crates(stores: &[String]) -> Vec<&str> {
    let mut crates: Vec<&str> = PACKAGED.to_vec();
    for store in stores {
        if !crates.contains(&store.as_str()) {
            crates.push(store);
        }
    }
    crates
}

/// Cargo's home: `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
}

/// Makes the next `cargo package` verify `crates` from their new tarballs.
///
/// Packaging several crates at once verifies each against the others'
/// fresh tarballs through a local registry overlay. Cargo treats registry
/// crates as immutable: it extracts one under `$CARGO_HOME/registry/src/
/// -<hash>/` only if that directory is missing, and rebuilds it only if its
/// version changed. Our versions do not change between commits, so on a
/// machine that has packaged before (a reused CI machine, a developer's),
/// verification compiled `ycsb-core` against an old `ycsb-db` and failed on
/// anything added to it since. This removes our crates' extracted sources
/// from overlay directories (named with a leading `-`; crates.io's start
/// with `index.`) and their build artifacts from the verification target
/// directory; third-party dependencies stay cached.
fn forget_packaged_builds(
    crates: &[&str],
    cargo_home: Option<&Path>,
    target_dir: &Path,
) -> Result<()> {
    let ours = |name: &str, separator: char, crate_name: &str| {
        name.strip_prefix(crate_name)
            .and_then(|rest| rest.strip_prefix(separator))
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_alphanumeric()))
    };
    let overlays = cargo_home
        .and_then(|home| std::fs::read_dir(home.join("registry").join("src")).ok())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|dir| dir.file_name().to_string_lossy().starts_with('-'))
        .map(|dir| dir.path());
    let mut doomed = Vec::new();
    for overlay in overlays {
        for entry in std::fs::read_dir(&overlay).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if crates.iter().any(|krate| ours(&name, '-', krate)) {
                doomed.push(entry.path());
            }
        }
    }
    for profile in ["debug", "release"] {
        let fingerprints = target_dir.join(profile).join(".fingerprint");
        for entry in std::fs::read_dir(&fingerprints)
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if crates.iter().any(|krate| ours(&name, '-', krate)) {
                doomed.push(entry.path());
            }
        }
        let deps = target_dir.join(profile).join("deps");
        for entry in std::fs::read_dir(&deps).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let stem = name.strip_prefix("lib").unwrap_or(&name);
            if crates
                .iter()
                .any(|krate| ours(stem, '-', &krate.replace('-', "_")))
            {
                doomed.push(entry.path());
            }
        }
    }
    for path in doomed {
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.with_context(|| format!("removing {}", path.display()))?;
    }
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

/// One demo cell's figures, read back from its JSON export.
#[cfg(feature = "engines")]
struct DemoRow {
    db: String,
    workload: String,
    load_throughput: f64,
    run_throughput: f64,
    read_p99_us: Option<f64>,
    update_p99_us: Option<f64>,
}

fn flag_value(args: &[String], flag: &str, default: u64) -> Result<u64> {
    match args.iter().position(|a| a == flag) {
        None => Ok(default),
        Some(i) => {
            let v = args
                .get(i + 1)
                .with_context(|| format!("{flag} needs a value"))?;
            v.parse()
                .with_context(|| format!("{flag} {v}: expected a whole number"))
        }
    }
}

/// The main job: workloads A and C on every embedded engine, at equal
/// durability, then the comparison table and the HTML report.
#[cfg(feature = "engines")]
fn demo(args: &[String]) -> Result<()> {
    for a in args.iter().filter(|a| a.starts_with("--")) {
        if !["--records", "--operations", "--threads"].contains(&a.as_str()) {
            bail!("demo: unknown option {a}");
        }
    }
    let records = flag_value(args, "--records", 200_000)?;
    let operations = flag_value(args, "--operations", 200_000)?;
    let threads = flag_value(args, "--threads", 2)?;
    let root = project_root();
    // Release engines when `cargo xtask engines` built them, else Debian's
    // (the exports and the report then say their assertions are on).
    let target = engines::build_release(&root, &["-p", "ycsb-cli"])?;
    let ycsb = target.join("release").join("ycsb");
    let work = engines::default_target(&root).join("demo");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let mut rows = Vec::new();
    // The embedded engines that keep their data on disk: the stores whose
    // comparison the demo is about, each at the same durability (none
    // syncs its writes: an acknowledged write survives a killed process,
    // not a machine crash), by the property its descriptor names.
    let engines: Vec<(&str, &str, String)> = ycsb_stores::STORES
        .iter()
        .filter_map(|s| {
            let dir = s.data_dir?;
            let durability = s.durability?;
            Some((
                s.name,
                dir.name,
                format!("{}={}", durability.property, durability.relaxed),
            ))
        })
        .collect();
    eprintln!(
        "xtask: demo at equal durability, no engine syncs its writes: {}",
        engines
            .iter()
            .map(|(_, _, relaxed)| relaxed.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let runs_started = std::time::Instant::now();
    for (db, dir_property, relaxed) in &engines {
        let (db, dir_property) = (*db, *dir_property);
        for workload in ["workloada", "workloadc"] {
            let data = work.join(format!("{db}-{workload}"));
            let export = work.join(format!("{db}-{workload}.json"));
            eprintln!("xtask: {db} {workload}: load {records} records, run {operations} operations, {threads} threads");
            let mut command = Command::new(&ycsb);
            command
                .current_dir(&root)
                .args(["-load", "-run", "-db", db, "-P"])
                .arg(root.join("workloads").join(workload))
                .arg("-P")
                .arg(root.join(db).join(format!("{db}.properties")))
                .arg("-p")
                .arg(format!("{dir_property}={}", data.display()))
                .args(["-p", relaxed])
                .args(["-p", &format!("recordcount={records}")])
                .args(["-p", &format!("operationcount={operations}")])
                .args(["-threads", &threads.to_string()])
                // Short phases still get a time series worth a chart.
                .args(["-p", "timeseries.granularity=200"])
                .args(["-p", "exporter=json", "-p"])
                .arg(format!("exportfile={}", export.display()))
                .stdout(std::process::Stdio::null());
            run(&mut command)?;
            rows.push(read_demo_row(db, workload, &export)?);
            let _ = std::fs::remove_dir_all(&data);
        }
    }
    print_demo_table(&rows, runs_started.elapsed());
    let html = work.join("report.html");
    let mut report = Command::new(&ycsb);
    report.current_dir(&root).arg("report");
    for (db, _, _) in &engines {
        for workload in ["workloada", "workloadc"] {
            report.arg(work.join(format!("{db}-{workload}.json")));
        }
    }
    report.arg("-o").arg(&html);
    run(&mut report)?;
    println!("\nJSON exports: {}", work.display());
    println!("HTML report:  {}", html.display());
    Ok(())
}

/// The demo's comparison table, then how long its runs took.
#[cfg(feature = "engines")]
fn print_demo_table(rows: &[DemoRow], runs_took: std::time::Duration) {
    println!();
    // The db column as wide as the longest name (wiredtiger).
    let w = rows.iter().map(|r| r.db.len()).max().unwrap_or(0).max(2);
    println!(
        "| {:<w$} | {:<9} | {:>14} | {:>14} | {:>13} | {:>15} |",
        "db", "workload", "load ops/s", "run ops/s", "read p99 us", "update p99 us"
    );
    println!(
        "|{:-<dash$}|{:-<11}|{:->16}|{:->16}|{:->15}|{:->17}|",
        "",
        "",
        "",
        "",
        "",
        "",
        dash = w + 2
    );
    let show = |v: Option<f64>| v.map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into());
    for r in rows {
        println!(
            "| {:<w$} | {:<9} | {:>14.0} | {:>14.0} | {:>13} | {:>15} |",
            r.db,
            r.workload,
            r.load_throughput,
            r.run_throughput,
            show(r.read_p99_us),
            show(r.update_p99_us)
        );
    }
    println!(
        "\n{} runs in {:.0} s (load average now {})",
        rows.len(),
        runs_took.as_secs_f64(),
        crate::machine::load_average()
    );
}

/// Reads a JSON export typed (`exporter=json`).
fn read_export(export: &Path) -> Result<ycsb_results::RunReport> {
    let file =
        std::fs::File::open(export).with_context(|| format!("reading {}", export.display()))?;
    ycsb_results::read_export(file).with_context(|| format!("parsing {}", export.display()))
}

#[cfg(feature = "engines")]
fn read_demo_row(db: &str, workload: &str, export: &Path) -> Result<DemoRow> {
    let json = read_export(export)?;
    let throughput = |name: &str| json.phase(name).map_or(0.0, |p| p.throughput);
    let p99 = |section: &str| {
        let us = json.phase("run")?.section(section)?.percentile_us(99.0)?;
        Some(us as f64)
    };
    Ok(DemoRow {
        db: db.into(),
        workload: workload.into(),
        load_throughput: throughput("load"),
        run_throughput: throughput("run"),
        read_p99_us: p99("READ"),
        update_p99_us: p99("UPDATE"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store crate verified from a stale extracted tarball failed
    /// `package --verify-stores` after a change to ycsb-db's trait: the
    /// http client under the server was built from the old sources.
    #[test]
    fn packaging_forgets_every_crate_of_ours_and_nothing_else() {
        let home = tempfile::tempdir().unwrap();
        let target = tempfile::tempdir().unwrap();
        let overlay = home.path().join("registry/src/-c56da854d76d5362");
        let crates_io = home
            .path()
            .join("registry/src/index.crates.io-1949cf8c6b5b557f");
        for dir in [
            overlay.join("ycsb-http-0.1.0"),
            overlay.join("ycsb-db-0.1.0"),
            overlay.join("ycsb-httpx-0.1.0"),
            crates_io.join("ycsb-http-0.1.0"),
            target.path().join("debug/.fingerprint/ycsb-http-1a2b3c"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let deps = target.path().join("debug/deps");
        std::fs::create_dir_all(&deps).unwrap();
        std::fs::write(deps.join("libycsb_http-1a2b3c.rlib"), b"").unwrap();
        std::fs::write(deps.join("libserde-1a2b3c.rlib"), b"").unwrap();

        let stores = stores::store_crates(&project_root()).unwrap();
        assert!(stores.iter().any(|s| s == "ycsb-http"), "{stores:?}");
        let crates = packaged_crates(&stores);
        forget_packaged_builds(&crates, Some(home.path()), target.path()).unwrap();

        assert!(!overlay.join("ycsb-http-0.1.0").exists());
        assert!(!overlay.join("ycsb-db-0.1.0").exists());
        assert!(!target
            .path()
            .join("debug/.fingerprint/ycsb-http-1a2b3c")
            .exists());
        assert!(!deps.join("libycsb_http-1a2b3c.rlib").exists());
        assert!(overlay.join("ycsb-httpx-0.1.0").exists(), "not ours");
        assert!(crates_io.join("ycsb-http-0.1.0").exists(), "crates.io's");
        assert!(deps.join("libserde-1a2b3c.rlib").exists(), "a dependency");
    }
}
