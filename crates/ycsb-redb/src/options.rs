//! The store's properties and their translation into redb's options.

use std::path::PathBuf;

use ycsb_db::{DirSetting, Properties, Property, PropertyDecl, PropertyError};

ycsb_db::choice_property! {
    /// When a commit reaches the disk (`redb.durability`).
    pub enum Durability {
        /// Every write transaction is synced before it is acknowledged
        /// (redb's default): an acknowledged write survives a crash.
        Immediate = "immediate",
        /// Commits are not synced; an acknowledged write is lost if the
        /// process dies before the next synced commit. Closing the store
        /// makes everything durable.
        None = "none",
    }
}

/// `redb.path`: the directory of the database file.
pub const PATH: Property<PathBuf> = Property::optional(
    "redb.path",
    "The directory holding the redb database file (ycsb.redb), created if missing. Required. \
     A directory, not the file, so that every tool that sizes, copies or points at an \
     embedded engine's data treats redb alike.",
);

/// `redb.destroy`: remove an existing database before opening.
pub const DESTROY: Property<bool> = Property::new(
    "redb.destroy",
    "false",
    "Remove the database file in redb.path before opening it.",
);

/// `redb.cache_size`: redb's page cache.
pub const CACHE_SIZE: Property<u64> = Property::new(
    "redb.cache_size",
    "0",
    "Bytes of redb's page cache; 0 keeps redb's default (1 GiB).",
);

/// `redb.durability`: sync per commit or not.
pub const DURABILITY: Property<Durability> = Property::new(
    "redb.durability",
    "immediate",
    "immediate (redb's default: every write is a synced commit, it survives a crash) or none \
     (commits are not synced: a killed process loses the writes since the last synced \
     commit; closing the store syncs).",
);

/// `redb.tree_gauges`: sample the tree's statistics into the time series.
pub const TREE_GAUGES: Property<bool> = Property::new(
    "redb.tree_gauges",
    "true",
    "Sample redb's tree statistics (height, pages, stored and fragmented bytes) with the \
     time series. A walk reads every page inside a write transaction, so writers wait for \
     it; walks are spaced to take at most 1 % of the time, and each sample shows the last \
     walk's figures. false leaves only the cache gauge.",
);

/// Every property the `redb` store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    PATH.decl(),
    DESTROY.decl(),
    CACHE_SIZE.decl(),
    DURABILITY.decl(),
    TREE_GAUGES.decl(),
];

/// Everything the store is opened with, read and checked from properties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    /// The directory (`PATH`) and `destroy`.
    pub dir: DirSetting,
    pub cache_size: Option<usize>,
    pub durability: Durability,
    pub tree_gauges: bool,
}

impl Config {
    pub fn from_properties(p: &Properties) -> Result<Config, PropertyError> {
        let dir = DirSetting::from_properties(p, &PATH, &DESTROY)?;
        let cache_size = match p.get(&CACHE_SIZE)? {
            0 => None,
            n => Some(usize::try_from(n).map_err(|_| {
                p.invalid(CACHE_SIZE.decl(), "expected a size that fits in memory")
            })?),
        };
        Ok(Config {
            dir,
            cache_size,
            durability: p.get(&DURABILITY)?,
            tree_gauges: p.get(&TREE_GAUGES)?,
        })
    }

    /// The effective settings as `name=value` lines, for the results.
    pub fn describe(&self) -> String {
        format!(
            "{}={}\n{}={}\n{}={}\n{}={}\n{}={}\n",
            PATH.name(),
            self.dir.path.display(),
            DESTROY.name(),
            self.dir.destroy,
            CACHE_SIZE.name(),
            self.cache_size
                .map_or_else(|| "default".to_string(), |n| n.to_string()),
            DURABILITY.name(),
            self.durability.name(),
            TREE_GAUGES.name(),
            self.tree_gauges,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        Properties::new().with_flags(pairs)
    }

    #[test]
    fn defaults_keep_redbs_defaults() {
        let c = Config::from_properties(&props(&[("redb.path", "/x")])).unwrap();
        assert_eq!(c.dir.path, PathBuf::from("/x"));
        assert!(!c.dir.destroy);
        assert_eq!(c.cache_size, None);
        assert_eq!(c.durability, Durability::Immediate);
        assert!(c.tree_gauges);
    }

    #[test]
    fn path_is_required() {
        let err = Config::from_properties(&Properties::new()).unwrap_err();
        assert!(err.to_string().starts_with("redb.path: required"), "{err}");
    }

    #[test]
    fn values_are_applied() {
        let c = Config::from_properties(&props(&[
            ("redb.path", "d"),
            ("redb.destroy", "true"),
            ("redb.cache_size", "1048576"),
            ("redb.durability", "none"),
            ("redb.tree_gauges", "false"),
        ]))
        .unwrap();
        assert!(c.dir.destroy && !c.tree_gauges);
        assert_eq!(c.cache_size, Some(1 << 20));
        assert_eq!(c.durability, Durability::None);
        assert!(c.describe().lines().any(|l| l == "redb.durability=none"));
    }

    #[test]
    fn errors_name_the_property_and_origin() {
        let cases = [
            ("redb.cache_size", "1GB", "expected an unsigned integer"),
            (
                "redb.durability",
                "eventual",
                "expected one of immediate, none",
            ),
            ("redb.destroy", "yes", "expected true or false"),
        ];
        ycsb_db::testing::assert_invalid_values(
            Config::from_properties,
            &[("redb.path", "d")],
            &cases,
        );
    }

    #[test]
    fn every_property_is_listed_once() {
        ycsb_db::testing::assert_declared_once(PROPERTIES, "redb.");
    }
}
