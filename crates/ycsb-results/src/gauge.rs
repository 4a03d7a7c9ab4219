//! What an engine gauge measures: its kind and unit, declared by the store
//! that reports it and carried by the export beside the values.

use serde::{Deserialize, Serialize};

/// The kind of an engine gauge, which fixes its unit: how a chart scales
/// and labels its axis (bytes in KiB/MiB/GiB, whole-number ticks for
/// counts and flags).
///
/// Declared at the source, beside each gauge's value (ycsb-db's `Gauge`),
/// and exported per phase in [`PhaseObservation::gauge_kinds`]; exports
/// written before kinds were recorded get them from
/// [`crate::migrate::inferred_gauge_kind`]. A kind name this build does
/// not know reads as [`GaugeKind::Number`].
///
/// [`PhaseObservation::gauge_kinds`]: crate::PhaseObservation::gauge_kinds
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum GaugeKind {
    /// A size in bytes (a cache's use, pending compaction, a file).
    Bytes,
    /// A size in mebibytes (2^20 bytes), as some engines report it
    /// (LevelDB's `leveldb.stats` table).
    Mebibytes,
    /// A number of things: files, pages, keys, running jobs, or events
    /// counted since the store opened (stalls, evictions).
    Count,
    /// 0 or 1: whether something holds (writes stopped, a compaction
    /// pending).
    Flag,
    /// A share between 0 and 1 (a map's use).
    Ratio,
    /// A duration in seconds (time spent compacting).
    Seconds,
    /// A rate in bytes per second (a delayed write rate).
    BytesPerSecond,
    /// A number of no declared kind.
    #[default]
    #[serde(other)]
    Number,
}

impl GaugeKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [GaugeKind; 8] = [
        GaugeKind::Bytes,
        GaugeKind::Mebibytes,
        GaugeKind::BytesPerSecond,
        GaugeKind::Count,
        GaugeKind::Flag,
        GaugeKind::Ratio,
        GaugeKind::Seconds,
        GaugeKind::Number,
    ];

    /// What the kind is, in words (`bytes`, `count`).
    pub const fn describe(self) -> &'static str {
        match self {
            GaugeKind::Bytes => "bytes",
            GaugeKind::Mebibytes => "MiB",
            GaugeKind::Count => "count",
            GaugeKind::Flag => "flag (0 or 1)",
            GaugeKind::Ratio => "ratio",
            GaugeKind::Seconds => "seconds",
            GaugeKind::BytesPerSecond => "bytes/s",
            GaugeKind::Number => "number",
        }
    }

    /// How many bytes one unit of a size is: 1 for bytes, 2^20 for
    /// mebibytes (and for bytes per second, of one second's); `None` for
    /// kinds that are not sizes.
    pub const fn bytes_per_unit(self) -> Option<f64> {
        match self {
            GaugeKind::Bytes | GaugeKind::BytesPerSecond => Some(1.0),
            GaugeKind::Mebibytes => Some(1_048_576.0),
            _ => None,
        }
    }

    /// Whether its values are whole numbers (counts and flags), so that a
    /// chart ticks its axis at whole numbers only.
    pub const fn whole_numbers(self) -> bool {
        matches!(self, GaugeKind::Count | GaugeKind::Flag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_back_and_unknown_ones_are_numbers() {
        for kind in GaugeKind::ALL {
            let text = serde_json::to_string(&kind).unwrap();
            assert_eq!(serde_json::from_str::<GaugeKind>(&text).unwrap(), kind);
        }
        assert_eq!(
            serde_json::to_string(&GaugeKind::BytesPerSecond).unwrap(),
            "\"bytes_per_second\""
        );
        let newer: GaugeKind = serde_json::from_str("\"joules\"").unwrap();
        assert_eq!(newer, GaugeKind::Number);
    }

    #[test]
    fn sizes_convert_to_bytes_and_counts_are_whole() {
        assert_eq!(GaugeKind::Mebibytes.bytes_per_unit(), Some(1_048_576.0));
        assert_eq!(GaugeKind::Count.bytes_per_unit(), None);
        assert!(GaugeKind::Flag.whole_numbers() && !GaugeKind::Ratio.whole_numbers());
    }
}
