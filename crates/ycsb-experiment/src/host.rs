//! Facts about the machine and the checkout, the filesystem of a directory,
//! space on disk, and the sequential write bandwidth (the I/O ceiling).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use std::collections::BTreeMap;

use crate::error::{Context as _, Result};
use crate::records::{Filesystem, HostFacts, IoCeiling};

/// CPU model, cores, memory and kernel.
pub fn facts() -> HostFacts {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')))
        .map(|(_, v)| v.trim().to_string());
    let logical = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let available = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kb = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    HostFacts {
        hostname: read("/proc/sys/kernel/hostname"),
        cpu_model: model,
        logical_cpus: logical,
        available_cpus: available,
        memory_bytes: mem_kb.map(|k| k * 1024),
        kernel: read("/proc/sys/kernel/osrelease"),
        kernel_version: read("/proc/version"),
        os: read("/etc/os-release").and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("PRETTY_NAME=")
                    .map(|v| v.trim_matches('"').to_string())
            })
        }),
    }
}

/// `git rev-parse HEAD`, with `-dirty` when tracked files changed.
pub fn git_revision(root: &Path) -> Option<String> {
    let out = Command::new("git")
        .current_dir(root)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut rev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dirty = Command::new("git")
        .current_dir(root)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    if dirty {
        rev.push_str("-dirty");
    }
    Some(rev)
}

/// The mount holding `dir`: (mount point, device, filesystem type), from
/// the longest mount point that prefixes its canonical path.
fn mount_of(dir: &Path) -> Option<(String, String, String)> {
    let canonical = dir.canonicalize().ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let mut best: Option<(String, String, String)> = None;
    for line in mounts.lines() {
        let mut f = line.split_whitespace();
        let (Some(dev), Some(mnt), Some(fs)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        // /proc/mounts escapes spaces as \040.
        let mnt = mnt.replace("\\040", " ");
        if canonical.starts_with(&mnt) && best.as_ref().is_none_or(|b| mnt.len() >= b.0.len()) {
            best = Some((mnt, dev.to_string(), fs.to_string()));
        }
    }
    best
}

/// Filesystem facts of a directory as JSON.
pub fn filesystem(dir: &Path) -> Filesystem {
    let (mount, device, fstype) = match mount_of(dir) {
        Some((mount, device, fstype)) => (Some(mount), Some(device), Some(fstype)),
        None => (None, None, None),
    };
    Filesystem {
        path: dir.display().to_string(),
        mount,
        device,
        fstype,
    }
}

/// Bytes allocated on disk under `path` (st_blocks, as `du`), hard links
/// counted once per visit.
pub fn disk_usage(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let mut total = meta.blocks() * 512;
    if meta.is_dir() {
        if let Ok(entries) = std::fs::read_dir(path) {
            for e in entries.flatten() {
                total += disk_usage(&e.path());
            }
        }
    }
    total
}

/// Writes every file under `path` to disk and drops its pages from the page
/// cache (`fdatasync`, then `POSIX_FADV_DONTNEED`), best effort.
pub fn evict_page_cache(path: &Path) {
    use std::os::unix::io::AsRawFd;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_dir() {
        if let Ok(entries) = std::fs::read_dir(path) {
            for e in entries.flatten() {
                evict_page_cache(&e.path());
            }
        }
    } else if meta.is_file() {
        if let Ok(f) = std::fs::File::open(path) {
            let _ = f.sync_data();
            // SAFETY: a valid descriptor; advice has no memory effects here.
            unsafe {
                libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
}

/// Writes `bytes` sequentially in 1 MiB blocks into `dir` and syncs,
/// returning bytes per second: the bound a device puts on any engine.
///
/// # Errors
/// The file cannot be written.
pub fn measure_write_bandwidth(dir: &Path, bytes: u64) -> Result<f64> {
    std::fs::create_dir_all(dir).context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(format!(".io-ceiling-{}", std::process::id()));
    let result = (|| -> Result<f64> {
        let mut f =
            std::fs::File::create(&path).context(|| format!("creating {}", path.display()))?;
        // Not zeros: a compressing or deduplicating filesystem would flatter it.
        let mut block = vec![0u8; 1 << 20];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for b in block.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        let start = Instant::now();
        let mut written = 0u64;
        while written < bytes {
            let n = (bytes - written).min(block.len() as u64) as usize;
            f.write_all(&block[..n])
                .context(|| format!("writing {}", path.display()))?;
            written += n as u64;
        }
        f.sync_all()
            .context(|| format!("syncing {}", path.display()))?;
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        Ok(written as f64 / secs)
    })();
    let _ = std::fs::remove_file(&path);
    result
}

/// The I/O ceiling of the filesystem holding `dir`, measured once per host
/// and filesystem and remembered in `cache` (a JSON object keyed by host,
/// device and mount).
///
/// # Errors
/// The measurement fails or the cache cannot be written.
pub fn io_ceiling(cache: &Path, dir: &Path, bytes: u64) -> Result<IoCeiling> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let (mount, device, fstype) = mount_of(dir).unwrap_or_default();
    let key = format!("{}|{device}|{mount}|{bytes}", host.trim());
    let mut all: BTreeMap<String, IoCeiling> = std::fs::read_to_string(cache)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if let Some(v) = all.get(&key) {
        return Ok(v.clone());
    }
    let bps = measure_write_bandwidth(dir, bytes)?;
    let v = IoCeiling {
        host: host.trim().to_string(),
        device,
        mount,
        fstype,
        bytes_written: bytes,
        write_bytes_per_sec: bps,
        measured_at: chrono::Utc::now().to_rfc3339(),
        method: "sequential 1 MiB writes of pseudo-random data, one fsync at the end".into(),
    };
    all.insert(key, v.clone());
    write_atomic(
        cache,
        serde_json::to_string_pretty(&all)
            .context(|| format!("encoding {}", cache.display()))?
            .as_bytes(),
    )?;
    Ok(v)
}

/// Writes a file through a temporary name and a rename, so readers never
/// see half of it.
///
/// # Errors
/// The file cannot be written or renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp: PathBuf = {
        let mut name = path
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        name.push(format!(".tmp{}", std::process::id()));
        path.with_file_name(name)
    };
    std::fs::write(&tmp, bytes).context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}
