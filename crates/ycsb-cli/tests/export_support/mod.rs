//! Reading a JSON export (`-p exporter=json`): shared by the end-to-end
//! tests of the `ycsb` binary and those of `cargo xtask experiment`, which
//! include this file by path.

#![allow(dead_code)]

/// How many operations of section `name` of a phase in a JSON export
/// returned `status`; the section's intended-latency twin, which counts
/// the same operations again, is left out.
pub fn returns(phase: &serde_json::Value, name: &str, status: &str) -> u64 {
    phase["sections"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["name"] == name && s["intended"] != true)
        .flat_map(|s| s["returns"].as_array().into_iter().flatten())
        .filter(|r| r["status"] == status)
        .map(|r| r["count"].as_u64().unwrap_or(0))
        .sum()
}
