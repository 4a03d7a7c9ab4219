//! The runner's own files, typed: the host facts (`host.json`, each cell's
//! `cell.json`), the data directory's filesystem, the I/O ceiling
//! (`io-ceiling.json`), and what the runner reads back of a cell's record.
//! Written once here and read back as these types, never by string keys.

use serde::{Deserialize, Serialize};

/// The machine a matrix ran on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    /// `/proc/sys/kernel/hostname`.
    pub hostname: Option<String>,
    /// The CPU model, from `/proc/cpuinfo`.
    pub cpu_model: Option<String>,
    /// Logical CPUs `/proc/cpuinfo` lists.
    pub logical_cpus: usize,
    /// CPUs this process may run on.
    pub available_cpus: usize,
    /// Memory, bytes (`MemTotal`).
    pub memory_bytes: Option<u64>,
    /// The kernel's release.
    pub kernel: Option<String>,
    /// `/proc/version`.
    pub kernel_version: Option<String>,
    /// The distribution (`PRETTY_NAME` of `/etc/os-release`).
    pub os: Option<String>,
}

/// The filesystem holding a directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Filesystem {
    /// The directory.
    pub path: String,
    /// Its mount point, when found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<String>,
    /// The device mounted there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The filesystem type (`ext4`).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub fstype: Option<String>,
}

/// A filesystem's sequential write bandwidth, measured once per host,
/// device and mount (and size written).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoCeiling {
    /// The host it was measured on.
    pub host: String,
    /// The device.
    pub device: String,
    /// The mount point.
    pub mount: String,
    /// The filesystem type.
    #[serde(rename = "type")]
    pub fstype: String,
    /// How many bytes were written.
    pub bytes_written: u64,
    /// The bandwidth, bytes per second.
    pub write_bytes_per_sec: f64,
    /// When (RFC 3339).
    pub measured_at: String,
    /// How.
    pub method: String,
}

/// `host.json`: the matrix, the host, the revision, the filesystem.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostFile {
    /// The matrix file.
    pub matrix: String,
    /// The machine.
    pub host: HostFacts,
    /// The git revision of the tree, `-dirty` when changed.
    pub git_revision: Option<String>,
    /// Where the databases lived.
    pub db_filesystem: Filesystem,
}

/// What the runner reads back of a complete cell's `cell.json` (which
/// holds much more, for people): which cell it is, from which inputs, and
/// the I/O ceiling it ran under.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CellFacts {
    /// The cell's id.
    pub id: String,
    /// The fingerprint of its inputs: a cell whose inputs changed runs
    /// again.
    pub fingerprint: String,
    /// The I/O ceiling, when measured.
    #[serde(default)]
    pub io_ceiling: Option<IoCeiling>,
}

impl CellFacts {
    /// The facts of `text`, when it is a cell record.
    pub fn parse(text: &str) -> Option<CellFacts> {
        serde_json::from_str(text).ok()
    }
}

/// What the report says of where the matrix ran, beside its results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunContext {
    /// The machine.
    pub host: HostFacts,
    /// The git revision.
    pub git: Option<String>,
    /// The databases' filesystem.
    pub filesystem: Filesystem,
    /// The I/O ceiling, when measured.
    pub io_ceiling: Option<IoCeiling>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_record_gives_its_facts_and_nothing_else_does() {
        let record = r#"{"id":"db=basic,r1","group":"g","fingerprint":"abc","io_ceiling":{"host":"h","device":"vda","mount":"/","type":"ext4","bytes_written":1,"write_bytes_per_sec":2.5e8,"measured_at":"t","method":"m"},"other":1}"#;
        let facts = CellFacts::parse(record).unwrap();
        assert_eq!(facts.id, "db=basic,r1");
        assert_eq!(facts.fingerprint, "abc");
        assert_eq!(facts.io_ceiling.unwrap().write_bytes_per_sec, 2.5e8);
        let without =
            CellFacts::parse(r#"{"id":"x","fingerprint":"f","io_ceiling":null}"#).unwrap();
        assert_eq!(without.io_ceiling, None);
        for other in [
            "{}",
            r#"{"id":"x"}"#,
            r#"{"id":1,"fingerprint":"f"}"#,
            "not json",
        ] {
            assert_eq!(CellFacts::parse(other), None, "{other}");
        }
    }

    #[test]
    fn host_files_round_trip() {
        let file = HostFile {
            matrix: "m.toml".into(),
            host: HostFacts {
                cpu_model: Some("AMD EPYC".into()),
                logical_cpus: 2,
                ..HostFacts::default()
            },
            git_revision: None,
            db_filesystem: Filesystem {
                path: "/data".into(),
                fstype: Some("ext4".into()),
                ..Filesystem::default()
            },
        };
        let text = serde_json::to_string(&file).unwrap();
        assert!(text.contains("\"type\":\"ext4\""), "{text}");
        assert_eq!(serde_json::from_str::<HostFile>(&text).unwrap(), file);
    }
}
