//! What a build carries: every store is a cargo feature of ycsb-stores,
//! forwarded by ycsb-cli and on by default, as is `serve` (the server);
//! `cargo build -p ycsb-cli --no-default-features --features redis,http`
//! links no engine, no server and no native library; and no normal build
//! compiles ycsb-db's conformance kit (`testing`), which only tests and the
//! store crates' SIGKILL children (feature `ack-writer`) need.
//!
//! Checked on cargo's resolution of the features (`cargo metadata`,
//! `cargo tree`, a second or two) rather than by building that second
//! configuration of the binary in CI (about a minute on a shared target
//! directory, see docs/multi-client.md); the resolution is what decides
//! what gets compiled and linked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

fn cargo(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        // The lock file decides (no update of it). Not `--frozen`: the full
        // resolution needs the manifests of other platforms' dependencies,
        // which a fresh machine's builds never downloaded.
        .arg("--locked")
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn metadata() -> Value {
    serde_json::from_str(&cargo(&["metadata", "--format-version", "1"])).unwrap()
}

fn package<'a>(meta: &'a Value, name: &str) -> &'a Value {
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no package {name}"))
}

fn features(package: &Value) -> BTreeMap<String, Vec<String>> {
    serde_json::from_value(package["features"].clone()).unwrap()
}

/// The store features of ycsb-stores and the crate each brings in.
fn store_features(meta: &Value) -> BTreeMap<String, String> {
    features(package(meta, "ycsb-stores"))
        .into_iter()
        .filter(|(name, _)| name != "default")
        .map(|(name, enables)| {
            let deps: Vec<_> = enables
                .iter()
                .filter_map(|e| e.strip_prefix("dep:"))
                .collect();
            assert_eq!(deps.len(), 1, "feature {name} brings in {enables:?}");
            (name, deps[0].to_string())
        })
        .collect()
}

/// The packages (names) ycsb-cli compiles with these cargo arguments.
fn cli_packages(feature_args: &[&str]) -> BTreeSet<String> {
    packages_of("ycsb-cli", feature_args)
}

/// The packages `package` compiles (normal and build dependencies) with
/// `feature_args`.
fn packages_of(package: &str, feature_args: &[&str]) -> BTreeSet<String> {
    let mut args = vec!["tree", "-p", package, "-e", "normal,build"];
    args.extend(["--prefix", "none", "-f", "{p}"]);
    args.extend(feature_args);
    cargo(&args)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn every_store_feature_is_forwarded_by_ycsb_cli_and_on_by_default() {
    let meta = metadata();
    let stores = store_features(&meta);
    assert!(stores.contains_key("redis") && stores.contains_key("http"));
    let store_defaults = &features(package(&meta, "ycsb-stores"))["default"];
    let cli = features(package(&meta, "ycsb-cli"));
    for feature in stores.keys() {
        assert!(
            store_defaults.contains(feature),
            "ycsb-stores default lacks {feature}"
        );
        assert_eq!(
            cli.get(feature),
            Some(&vec![format!("ycsb-stores/{feature}")]),
            "ycsb-cli's feature {feature} must be exactly ycsb-stores/{feature}"
        );
        assert!(
            cli["default"].contains(feature),
            "ycsb-cli default lacks {feature}"
        );
    }
    // ycsb-cli takes ycsb-stores without its defaults, or no feature could
    // be turned off.
    let dep = package(&meta, "ycsb-cli")["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "ycsb-stores")
        .unwrap()
        .clone();
    assert_eq!(dep["uses_default_features"], false, "{dep}");
}

/// Each package of the resolution that links a native library, and the
/// library (its manifest's `links`).
fn native_links(meta: &Value) -> BTreeMap<String, String> {
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| Some((p["name"].as_str()?.into(), p["links"].as_str()?.into())))
        .collect()
}

#[test]
fn the_client_only_build_links_no_engine_and_no_native_library() {
    let meta = metadata();
    let stores = store_features(&meta);
    let links = native_links(&meta);
    let everything = cli_packages(&[]);
    let client = cli_packages(&["--no-default-features", "--features", "redis,http"]);
    assert!(
        client.contains("ycsb-redis") && client.contains("ycsb-http"),
        "{client:?}"
    );
    // `ycsb serve` is a feature of its own, on by default.
    assert!(everything.contains("ycsb-server"), "{everything:?}");
    assert!(
        !client.contains("ycsb-server"),
        "the client-only build compiles ycsb-server"
    );
    for (feature, krate) in &stores {
        assert!(
            everything.contains(krate),
            "the default build lacks {krate}"
        );
        if feature != "redis" && feature != "http" {
            assert!(
                !client.contains(krate),
                "the client-only build compiles {krate}"
            );
        }
    }
    let native: Vec<_> = client
        .iter()
        .filter_map(|p| links.get(p).map(|l| format!("{p} (links {l})")))
        .collect();
    assert!(native.is_empty(), "the client-only build links {native:?}");
    // The check can fail: the full build does link native engines.
    assert!(
        everything.iter().any(|p| links.contains_key(p)),
        "{everything:?}"
    );
}

#[test]
fn each_store_feature_alone_brings_in_its_crate_and_no_other_engine() {
    let meta = metadata();
    let stores = store_features(&meta);
    // The base build has no store crate but the two that are always in;
    // a store crate may use another's code (etcd speaks through the http
    // store's wire code), which its feature then brings in, and no other.
    let base = cli_packages(&["--no-default-features"]);
    for (feature, krate) in &stores {
        let packages = cli_packages(&["--no-default-features", "--features", feature]);
        assert!(packages.contains(krate), "--features {feature}: no {krate}");
        let own = packages_of(krate, &[]);
        for (other, other_crate) in &stores {
            if other != feature && !base.contains(other_crate) && !own.contains(other_crate) {
                assert!(
                    !packages.contains(other_crate),
                    "--features {feature} compiles {other_crate}"
                );
            }
        }
    }
}

#[test]
fn serve_is_a_default_feature_that_brings_in_the_server() {
    let meta = metadata();
    let cli = features(package(&meta, "ycsb-cli"));
    assert_eq!(
        cli.get("serve"),
        Some(&vec!["dep:ycsb-server".to_string()]),
        "{cli:?}"
    );
    assert!(cli["default"].contains(&"serve".to_string()), "{cli:?}");
    let without = cli_packages(&["--no-default-features"]);
    assert!(!without.contains("ycsb-server"), "{without:?}");
    let with = cli_packages(&["--no-default-features", "--features", "serve"]);
    assert!(with.contains("ycsb-server"), "{with:?}");
}

/// The features of ycsb-db that `package` compiles with `args`: `cargo
/// tree`'s feature edges, as a build resolves them (no dev-dependencies
/// unless `args` asks for their edges).
fn ycsb_db_features(package: &str, args: &[&str]) -> BTreeSet<String> {
    let mut all = vec!["tree", "-p", package, "--prefix", "none"];
    all.extend(args);
    cargo(&all)
        .lines()
        .filter_map(|l| l.strip_prefix("ycsb-db feature \""))
        .filter_map(|rest| rest.split('"').next().map(str::to_string))
        .collect()
}

/// The packages with a SIGKILL child binary (`*-ack-writer`), each with
/// the features that binary requires.
fn ack_writers(meta: &Value) -> BTreeMap<String, Vec<String>> {
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| {
            let target = p["targets"].as_array()?.iter().find(|t| {
                t["kind"] == serde_json::json!(["bin"])
                    && t["name"]
                        .as_str()
                        .is_some_and(|n| n.ends_with("-ack-writer"))
            })?;
            let required =
                serde_json::from_value(target["required-features"].clone()).unwrap_or_default();
            Some((p["name"].as_str()?.to_string(), required))
        })
        .collect()
}

/// The conformance kit (ycsb-db's `testing`, 2,500 lines) is compiled for
/// tests only: the store crates' ack writers, which run its SIGKILL loop,
/// need their `ack-writer` feature, which their own tests turn on through
/// a dev-dependency on the crate itself.
#[test]
fn no_normal_build_compiles_the_conformance_kit() {
    let meta = metadata();
    let writers = ack_writers(&meta);
    assert!(writers.len() >= 6, "{writers:?}");
    let everything = cli_packages(&[]);
    for (krate, required) in &writers {
        assert!(everything.contains(krate), "ycsb-cli lacks {krate}");
        assert_eq!(required, &["ack-writer"], "{krate}'s ack writer");
        let own = features(package(&meta, krate));
        assert_eq!(
            own.get("ack-writer"),
            Some(&vec!["ycsb-db/testing".to_string()]),
            "{krate}"
        );
        assert!(
            own.get("default")
                .is_none_or(|d| !d.contains(&"ack-writer".to_string())),
            "{krate} has the ack writer by default"
        );
        let itself = package(&meta, krate)["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == krate.as_str() && d["kind"] == "dev")
            .unwrap_or_else(|| panic!("{krate}'s tests do not turn on its ack writer"));
        assert_eq!(
            itself["features"],
            serde_json::json!(["ack-writer"]),
            "{krate}"
        );
    }
    let normal = ["-e", "features,normal,build"];
    for package in ["ycsb-cli", "ycsb-stores"] {
        let features = ycsb_db_features(package, &normal);
        assert!(
            !features.contains("testing"),
            "a build of {package} compiles ycsb-db's {features:?}"
        );
    }
    // The check can fail: a store's tests do compile the kit.
    let (krate, _) = writers.iter().next().unwrap();
    let tests = ycsb_db_features(krate, &["-e", "features,normal,build,dev"]);
    assert!(tests.contains("testing"), "{krate}'s tests: {tests:?}");
}

/// The build the `cargo xtask` alias runs compiles on a machine with none
/// of the engines' libraries (xtask then installs them): no package of it
/// links a native library, while xtask with its `engines` feature does.
#[test]
fn the_xtask_alias_build_links_no_native_library() {
    let config = std::fs::read_to_string(root().join(".cargo/config.toml")).unwrap();
    let alias = config
        .lines()
        .find(|l| l.starts_with("xtask ="))
        .expect("the xtask alias");
    assert!(alias.contains("--no-default-features"), "{alias}");
    let meta = metadata();
    let links = native_links(&meta);
    let native = |packages: &BTreeSet<String>| -> Vec<String> {
        packages
            .iter()
            .filter_map(|p| links.get(p).map(|l| format!("{p} (links {l})")))
            .collect()
    };
    let lean = packages_of("xtask", &["--no-default-features"]);
    assert!(
        native(&lean).is_empty(),
        "the alias build links {:?}",
        native(&lean)
    );
    // The check can fail: with the feature, xtask links the engines.
    let full = packages_of("xtask", &["--features", "engines"]);
    assert!(!native(&full).is_empty(), "{full:?}");
}
