//! Numbers as the exporter wrote them: serde_json writes a NaN or an
//! infinity as `null`, so a figure that was not a number reads back as NaN
//! (and is written as `null` again).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

/// An `f64` that may have been written as `null`.
pub(crate) fn f64_or_nan<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

/// Engine gauges by name, each value possibly written as `null`.
pub(crate) fn gauges<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, f64>, D::Error> {
    let raw = BTreeMap::<String, Option<f64>>::deserialize(deserializer)?;
    Ok(raw
        .into_iter()
        .map(|(name, value)| (name, value.unwrap_or(f64::NAN)))
        .collect())
}
