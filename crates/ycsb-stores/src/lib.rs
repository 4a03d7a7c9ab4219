//! Every store this build of ycsb-rs can open, by name.
//!
//! The registry is the one list of [`StoreDescriptor`]s that the `ycsb`
//! binary, `ycsb serve`, `ycsb bench` and the experiment runner consult.
//! Everything they need to know about a store is a field of its
//! descriptor, so adding a store is one crate and one line in [`STORES`]
//! (docs/adding-a-store.md). The engine bindings are cargo features (all on
//! by default), so a client-only build links only the stores it names.
//!
//! ```
//! let rocksdb = ycsb_stores::find("RocksDB")?;
//! assert_eq!(rocksdb.name, "rocksdb");
//! assert!(ycsb_stores::find("nosuchdb").is_err());
//! # Ok::<(), ycsb_stores::UnknownStore>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]
// Only the programs print or exit; a library reports through its return
// values, and a bug is a typed error, not a panic (tests may do both).
#![cfg_attr(
    not(test),
    deny(
        clippy::print_stdout,
        clippy::print_stderr,
        clippy::exit,
        clippy::unwrap_used
    )
)]

use ycsb_db::StoreDescriptor;

/// Declares the registry from one line per store: the stores always
/// built, and those behind a cargo feature named after the store.
macro_rules! registry {
    (always: [$($always:path),* $(,)?], features: [$($feature:literal => $optional:path),* $(,)?] $(,)?) => {
        /// Every store compiled into this build, in the order `ycsb stores`
        /// lists them.
        pub const STORES: &[StoreDescriptor] = &[
            $($always,)*
            $(#[cfg(feature = $feature)] $optional,)*
        ];

        /// The stores that a cargo feature (of the same name) brings in.
        const OPTIONAL: &[&str] = &[$($feature),*];

        /// The stores this build was made without: each is a cargo feature
        /// of the same name, off in this build (a client-only build).
        pub const COMPILED_OUT: &[&str] = &[$(#[cfg(not(feature = $feature))] $feature,)*];
    };
}

registry! {
    always: [ycsb_basic::DESCRIPTOR, ycsb_memory::DESCRIPTOR],
    features: [
        "rocksdb" => ycsb_rocksdb::DESCRIPTOR,
        "leveldb" => ycsb_leveldb::DESCRIPTOR,
        "wiredtiger" => ycsb_wiredtiger::DESCRIPTOR,
        "http" => ycsb_http::DESCRIPTOR,
        "redis" => ycsb_redis::DESCRIPTOR,
        "etcd" => ycsb_etcd::DESCRIPTOR,
        "fjall" => ycsb_fjall::DESCRIPTOR,
        "redb" => ycsb_redb::DESCRIPTOR,
        "lmdb" => ycsb_lmdb::DESCRIPTOR,
        "sqlite" => ycsb_sqlite::DESCRIPTOR,
        "memcached" => ycsb_memcached::DESCRIPTOR,
        "jdbc" => ycsb_jdbc::DESCRIPTOR,
    ],
}

/// A store name that no compiled-in descriptor answers to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown store '{name}' (known: {known}){hint}{}", did_you_mean(*.suggestion))]
pub struct UnknownStore {
    /// The name asked for.
    pub name: String,
    /// The names this build knows, comma-separated.
    pub known: String,
    /// How to get the store when it exists but was compiled out.
    pub hint: String,
    /// The store name (or alias) nearest to the one asked for, by
    /// [`ycsb_db::nearest_name`], the rule unknown properties are
    /// answered with; a store compiled out of this build counts, since
    /// the hint then says how to get it.
    pub suggestion: Option<&'static str>,
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion
        .map(|name| format!("; did you mean '{name}'?"))
        .unwrap_or_default()
}

/// The store called `name` (or one of its aliases, case-insensitively).
///
/// # Errors
///
/// [`UnknownStore`] listing the known names; when the store was compiled
/// out of this build, it says which feature brings it back.
pub fn find(name: &str) -> Result<StoreDescriptor, UnknownStore> {
    find_in(STORES, name)
}

fn find_in(stores: &[StoreDescriptor], name: &str) -> Result<StoreDescriptor, UnknownStore> {
    if let Some(found) = stores.iter().find(|s| s.matches(name)) {
        return Ok(*found);
    }
    let hint = OPTIONAL
        .iter()
        .find(|store| store.eq_ignore_ascii_case(name))
        .map(|store| {
            format!(
                "; this build was made without the '{store}' store: rebuild with `--features {store}` ({})",
                build_command(&[store])
            )
        })
        .unwrap_or_default();
    let suggestion = if hint.is_empty() {
        let names = stores
            .iter()
            .flat_map(|s| std::iter::once(s.name).chain(s.aliases.iter().copied()))
            .chain(OPTIONAL.iter().copied());
        ycsb_db::nearest_name(&name.to_ascii_lowercase(), names)
    } else {
        None
    };
    Err(UnknownStore {
        name: name.to_string(),
        known: stores.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
        hint,
        suggestion,
    })
}

/// The command that builds `ycsb` with `stores` as well as the default
/// ones: what to tell a user of a client-only build who needs them.
pub fn build_command(stores: &[&str]) -> String {
    format!("cargo build -p ycsb-cli --features {}", stores.join(","))
}

/// The names of the compiled-in stores.
pub fn names() -> impl Iterator<Item = &'static str> {
    STORES.iter().map(|s| s.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of `path` from the workspace's root.
    fn workspace_file(path: &str) -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        std::fs::read_to_string(root.join(path)).unwrap()
    }

    /// The Dockerfile's stage `name` (from its `FROM ... AS name` line to
    /// the next `FROM`).
    fn docker_stage<'a>(dockerfile: &'a str, name: &str) -> &'a str {
        dockerfile
            .split("\nFROM ")
            .find(|stage| {
                stage
                    .lines()
                    .next()
                    .is_some_and(|l| l.ends_with(&format!(" AS {name}")))
            })
            .unwrap_or_else(|| panic!("the Dockerfile has no stage {name}"))
    }

    /// Every package a store declares is installed where it is needed:
    /// `cargo xtask deps` installs the build and test packages, the
    /// Dockerfile's full build stage the build packages and its full image
    /// the runtime ones. A new store declares its packages on its
    /// descriptor; this test says where they are missing.
    #[test]
    fn every_store_s_debian_packages_are_installed() {
        let xtask = workspace_file("xtask/src/main.rs");
        let deps = &xtask[xtask
            .find("const DEBIAN_PACKAGES")
            .expect("xtask declares DEBIAN_PACKAGES")..];
        let deps = &deps[..deps.find("];").unwrap()];
        let dockerfile = workspace_file("Dockerfile");
        let build_stage = docker_stage(&dockerfile, "build-full");
        let full_stage = docker_stage(&dockerfile, "full");
        let has_word = |text: &str, word: &str| {
            text.split_whitespace()
                .any(|w| w.trim_matches('\\') == word)
        };
        let mut checked = 0;
        for store in STORES {
            let d = store.debian;
            for package in d.build.iter().chain(d.test) {
                checked += 1;
                assert!(
                    deps.contains(&format!("\"{package}\"")),
                    "{}: {package} is not in xtask's DEBIAN_PACKAGES",
                    store.name
                );
            }
            for package in d.build {
                assert!(
                    has_word(build_stage, package),
                    "{}: the Dockerfile's build-full stage does not install {package}",
                    store.name
                );
            }
            for package in d.runtime {
                checked += 1;
                assert!(
                    has_word(full_stage, package),
                    "{}: the Dockerfile's full image does not install {package}",
                    store.name
                );
            }
        }
        // Every store is compiled in under the default features: the
        // engines declare packages.
        assert!(checked >= 10, "only {checked} packages declared");
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for store in STORES {
            for name in std::iter::once(store.name).chain(store.aliases.iter().copied()) {
                assert!(
                    seen.insert(name.to_ascii_lowercase()),
                    "{name} names two stores"
                );
            }
        }
    }

    #[test]
    fn every_descriptor_is_consistent() {
        for store in STORES {
            let declared = |name: &str| {
                store
                    .properties
                    .iter()
                    .any(|d| d.name == name || d.aliases.contains(&name))
            };
            if let Some(dir) = store.data_dir {
                assert!(declared(dir.name), "{}: data_dir {}", store.name, dir.name);
            }
            let set = store.fresh.iter().chain(store.dbbench_properties);
            let mapped = store.dbbench_flags.iter().map(|(_, p)| *p);
            for property in set.map(|(p, _)| *p).chain(mapped) {
                assert!(
                    declared(property),
                    "{}: {property} is not declared",
                    store.name
                );
            }
            if let Some(d) = store.durability {
                assert!(declared(d.property), "{}: {}", store.name, d.property);
                let with = |value: &str| {
                    let props = ycsb_db::Properties::new().with(d.property, value);
                    store.durability_in(&props).unwrap().durable
                };
                assert!(!with(d.relaxed), "{}: {} relaxed", store.name, d.property);
                for value in d.durable {
                    assert!(with(value), "{}: {}={value}", store.name, d.property);
                }
            }
            // Every store that keeps data of its own says what makes it
            // durable; a client only when a setting of its sessions decides
            // it (PostgreSQL's synchronous_commit).
            if store.data_dir.is_some() {
                assert!(store.durability.is_some(), "{}", store.name);
            } else if store.durability.is_some() {
                assert!(store.server.is_some(), "{}", store.name);
            }
            if let Some(server) = store.server {
                for (property, _) in server.for_ycsb_serve {
                    assert!(declared(property), "{}: {property}", store.name);
                }
                let addr = "127.0.0.1:7".parse().unwrap();
                for (property, _) in server.address_properties(addr) {
                    assert!(declared(&property), "{}: {property}", store.name);
                }
                assert!(
                    store.data_dir.is_none() && store.fresh.is_empty(),
                    "{}",
                    store.name
                );
            }
        }
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = find("nosuch").unwrap_err();
        assert!(e.to_string().contains("basic, memory"), "{e}");
        assert!(find("site.ycsb.BasicDB").is_ok());
        assert_eq!(e.suggestion, None, "{e}");
    }

    #[test]
    fn a_near_miss_is_answered_with_the_nearest_name() {
        let client_only = [ycsb_basic::DESCRIPTOR, ycsb_memory::DESCRIPTOR];
        let e = find_in(&client_only, "memroy").unwrap_err();
        assert!(e.to_string().ends_with("; did you mean 'memory'?"), "{e}");
        assert_eq!(
            find_in(&client_only, "BASICDBX").unwrap_err().suggestion,
            Some("basicdb")
        );
        // A store compiled out is suggested too: its hint follows.
        assert_eq!(
            find_in(&client_only, "rockdb").unwrap_err().suggestion,
            Some("rocksdb")
        );
    }

    #[test]
    fn a_store_compiled_out_names_its_feature() {
        let client_only = [ycsb_basic::DESCRIPTOR, ycsb_memory::DESCRIPTOR];
        let e = find_in(&client_only, "RocksDB").unwrap_err();
        assert_eq!(e.known, "basic, memory");
        assert!(e.hint.contains("--features rocksdb"), "{e}");
        assert!(find_in(&client_only, "nosuch").unwrap_err().hint.is_empty());
    }

    #[test]
    fn every_optional_store_is_either_compiled_in_or_out() {
        for store in OPTIONAL {
            let compiled_in = STORES.iter().any(|s| s.name == *store);
            assert_ne!(compiled_in, COMPILED_OUT.contains(store), "{store}");
        }
        assert_eq!(STORES.len() + COMPILED_OUT.len(), OPTIONAL.len() + 2);
        assert_eq!(
            build_command(&["rocksdb", "leveldb"]),
            "cargo build -p ycsb-cli --features rocksdb,leveldb"
        );
    }
}
