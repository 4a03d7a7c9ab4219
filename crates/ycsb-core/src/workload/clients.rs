//! Several client processes on one data set: which records each loads and
//! which key numbers its run-phase inserts use.
//!
//! Java YCSB splits a load over processes with `insertstart` and
//! `insertcount`, but every process starts its run-phase insert counter at
//! `recordcount`, so clients that insert write the same new keys (and a
//! read of a key another client "inserted" can hit a record that is not
//! there yet). With `client.count=N` and `client.index=i` (0-based):
//!
//! - the load phase inserts client i's contiguous share of
//!   `0..recordcount` (earlier clients take the remainder), unless
//!   `insertstart` or `insertcount` is set, which then decides as in Java;
//! - reads, updates and scans choose among all `recordcount` records (or
//!   `insertstart..insertstart+insertcount` when set, as in Java);
//! - the k-th run-phase insert of client i (k = 0, 1, ...) uses key number
//!   `recordcount + k * N + i`: the clients interleave, so no two ever
//!   insert the same key, whatever their speeds, and no client needs to
//!   know how many the others insert. A client reads back only its own
//!   new records (the ones it saw acknowledged).
//!
//! With one client (the default) everything is exactly as in Java YCSB.

use ycsb_db::{Properties, Property, PropertyError};

/// `client.count`.
pub const CLIENT_COUNT: Property<u64> = Property::new(
    "client.count",
    "1",
    "Number of client processes sharing one data set. With more than one, each loads its share of the records (unless insertstart/insertcount are set) and run-phase inserts of different clients use disjoint keys (recordcount + k * client.count + client.index). See docs/multi-client.md.",
);

/// `client.index`.
pub const CLIENT_INDEX: Property<u64> = Property::new(
    "client.index",
    "0",
    "This process's number among client.count clients, from 0 (e.g. a Kubernetes Indexed Job's completion index).",
);

/// This process's place among the clients of one benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientPartition {
    /// This client's number, below `count`.
    pub index: u64,
    /// How many clients share the data set (at least 1).
    pub count: u64,
}

impl Default for ClientPartition {
    /// A single client.
    fn default() -> Self {
        Self { index: 0, count: 1 }
    }
}

impl ClientPartition {
    /// Reads [`CLIENT_COUNT`] and [`CLIENT_INDEX`].
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] when `client.count` is 0 or `client.index` is not
    /// below it.
    pub fn from_properties(props: &Properties) -> Result<Self, PropertyError> {
        let count = props.get_checked(&CLIENT_COUNT, |c| {
            if *c >= 1 {
                Ok(())
            } else {
                Err("expected at least 1 client".into())
            }
        })?;
        let index = props.get_checked(&CLIENT_INDEX, |i| {
            if *i < count {
                Ok(())
            } else {
                Err(format!(
                    "expected a client number below client.count ({count}), counting from 0"
                ))
            }
        })?;
        Ok(Self { index, count })
    }

    /// This client's contiguous share `(start, count)` of `0..record_count`
    /// for the load phase.
    pub fn load_share(&self, record_count: u64) -> (u64, u64) {
        let range = super::split_range(0, record_count, self.index as usize, self.count as usize);
        (range.start, range.end - range.start)
    }

    /// The key number of a workload key number: numbers below
    /// `record_count` are records of the loaded data set and stay; the
    /// k-th number from `record_count` on (this client's k-th run-phase
    /// insert) becomes `record_count + k * count + index`.
    #[inline]
    pub fn key_number(&self, record_count: u64, number: u64) -> u64 {
        if self.count == 1 || number < record_count {
            number
        } else {
            record_count
                .saturating_add((number - record_count).saturating_mul(self.count))
                .saturating_add(self.index)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ycsb_db::Origin;

    fn partition(count: &str, index: &str) -> Result<ClientPartition, PropertyError> {
        let mut props = Properties::new();
        props.set("client.count", count, Origin::Flag("-p"));
        props.set("client.index", index, Origin::Flag("-p"));
        ClientPartition::from_properties(&props)
    }

    #[test]
    fn clients_insert_disjoint_keys_and_share_the_load() {
        let record_count = 1_000;
        let clients: Vec<_> = (0..3)
            .map(|i| partition("3", &i.to_string()).unwrap())
            .collect();
        let mut keys = std::collections::HashSet::new();
        for client in &clients {
            assert_eq!(client.key_number(record_count, 999), 999);
            for k in 0..500 {
                let key = client.key_number(record_count, record_count + k);
                assert!(key >= record_count);
                assert!(keys.insert(key), "key {key} inserted twice");
            }
        }
        // Together the clients fill recordcount.. without gaps.
        assert_eq!(keys.iter().max(), Some(&(record_count + 1_499)));
        let shares: Vec<_> = clients.iter().map(|c| c.load_share(1_000)).collect();
        assert_eq!(shares, [(0, 334), (334, 333), (667, 333)]);
        let single = ClientPartition::default();
        assert_eq!(single.key_number(10, 15), 15);
        assert_eq!(single.load_share(10), (0, 10));
    }

    #[test]
    fn bad_partitions_name_the_property() {
        let err = partition("3", "3").unwrap_err().to_string();
        assert!(
            err.contains("client.index") && err.contains("below client.count (3)"),
            "{err}"
        );
        let err = partition("0", "0").unwrap_err().to_string();
        assert!(err.contains("client.count"), "{err}");
    }
}
