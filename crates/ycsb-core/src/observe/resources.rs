//! A process's CPU, memory, I/O and context switches from `/proc`, and a
//! directory's size on disk.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ycsb_results::ResourceUsage;

/// One reading of a process's cumulative counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProcessSample {
    /// CPU time in user mode, in clock ticks, all threads.
    pub utime_ticks: u64,
    /// CPU time in kernel mode, in clock ticks, all threads.
    pub stime_ticks: u64,
    /// Resident set size in bytes (`VmRSS`).
    pub rss_bytes: u64,
    /// Peak resident set size in bytes (`VmHWM`).
    pub peak_rss_bytes: u64,
    /// Voluntary context switches (`/proc/<pid>/status`).
    pub voluntary_ctxt_switches: u64,
    /// Involuntary context switches (`/proc/<pid>/status`).
    pub involuntary_ctxt_switches: u64,
    /// Bytes fetched from the storage layer (`read_bytes`), when readable.
    pub read_bytes: Option<u64>,
    /// Bytes sent to the storage layer (`write_bytes`), when readable.
    pub write_bytes: Option<u64>,
}

/// Parses `/proc/<pid>/status` into `sample`: `VmRSS`, `VmHWM` and the
/// context switch counts. Returns whether the switch counts were found
/// (a kernel thread or a zombie has no `VmRSS`).
pub fn parse_status(status: &str, sample: &mut ProcessSample) -> bool {
    let mut found = false;
    for line in status.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let number = || -> Option<u64> { value.split_ascii_whitespace().next()?.parse().ok() };
        match key {
            "VmRSS" => sample.rss_bytes = number().unwrap_or(0) * 1024,
            "VmHWM" => sample.peak_rss_bytes = number().unwrap_or(0) * 1024,
            "voluntary_ctxt_switches" => {
                sample.voluntary_ctxt_switches = number().unwrap_or(0);
                found = true;
            }
            "nonvoluntary_ctxt_switches" => {
                sample.involuntary_ctxt_switches = number().unwrap_or(0);
            }
            _ => {}
        }
    }
    found
}

/// Parses `/proc/<pid>/io`: `(read_bytes, write_bytes)`, the bytes the
/// process caused to be read from and written to the storage layer (page
/// cache hits and writes later cancelled by truncation included in
/// `write_bytes`, as `pidstat -d` shows it).
pub fn parse_io(io: &str) -> Option<(u64, u64)> {
    let mut read = None;
    let mut write = None;
    for line in io.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "read_bytes" => read = value.trim().parse().ok(),
            "write_bytes" => write = value.trim().parse().ok(),
            _ => {}
        }
    }
    Some((read?, write?))
}

/// The kernel's clock ticks per second (`AT_CLKTCK` of the auxiliary
/// vector), or the universal Linux value 100 when it cannot be read.
fn clock_ticks_per_second() -> f64 {
    const AT_CLKTCK: u64 = 17;
    const WORD: usize = std::mem::size_of::<usize>();
    let Ok(auxv) = std::fs::read("/proc/self/auxv") else {
        return 100.0;
    };
    let word = |chunk: &[u8]| -> u64 {
        let mut bytes = [0u8; WORD];
        bytes.copy_from_slice(chunk);
        usize::from_ne_bytes(bytes) as u64
    };
    for pair in auxv.chunks_exact(2 * WORD) {
        let (key, value) = (word(&pair[..WORD]), word(&pair[WORD..]));
        if key == AT_CLKTCK && value > 0 {
            return value as f64;
        }
    }
    100.0
}

/// Samples one process (this one, or another by pid) and turns
/// consecutive samples into [`ResourceUsage`].
#[derive(Debug)]
pub struct ProcessSampler {
    stat: PathBuf,
    status: PathBuf,
    io: PathBuf,
    ticks_per_second: f64,
    buffer: String,
    last: Option<(Instant, ProcessSample)>,
    first: Option<ProcessSample>,
}

impl ProcessSampler {
    /// A sampler of this process.
    pub fn current() -> Self {
        Self::at(Path::new("/proc/self"))
    }

    /// A sampler of process `pid`.
    pub fn pid(pid: u32) -> Self {
        Self::at(&Path::new("/proc").join(pid.to_string()))
    }

    fn at(dir: &Path) -> Self {
        Self {
            stat: dir.join("stat"),
            status: dir.join("status"),
            io: dir.join("io"),
            ticks_per_second: clock_ticks_per_second(),
            buffer: String::new(),
            last: None,
            first: None,
        }
    }

    fn read(&mut self, which: u8) -> Option<&str> {
        let path = match which {
            0 => &self.stat,
            1 => &self.status,
            _ => &self.io,
        };
        self.buffer.clear();
        File::open(path)
            .and_then(|mut f| f.read_to_string(&mut self.buffer))
            .ok()?;
        Some(&self.buffer)
    }

    /// Reads the process's counters now; `None` when the process is gone
    /// or `/proc` is not available.
    pub fn read_sample(&mut self) -> Option<ProcessSample> {
        let mut sample = ProcessSample::default();
        let stat = ycsb_results::ProcStat::parse(self.read(0)?)?;
        let (utime, stime) = (stat.utime_ticks, stat.stime_ticks);
        sample.utime_ticks = utime;
        sample.stime_ticks = stime;
        let status = self.read(1)?.to_owned();
        parse_status(&status, &mut sample);
        if let Some((read, write)) = self.read(2).and_then(parse_io) {
            sample.read_bytes = Some(read);
            sample.write_bytes = Some(write);
        }
        Some(sample)
    }

    /// Starts a new span (a phase): the next [`ProcessSampler::sample`]
    /// covers the time since now, and [`ProcessSampler::written`] counts
    /// from now.
    pub fn restart(&mut self) {
        let now = Instant::now();
        let sample = self.read_sample();
        self.last = sample.map(|s| (now, s));
        self.first = sample;
    }

    /// The use since the previous sample (or [`ProcessSampler::restart`]);
    /// `None` for the first sample or when the process cannot be read.
    pub fn sample(&mut self) -> Option<ResourceUsage> {
        let now = Instant::now();
        let current = self.read_sample()?;
        if self.first.is_none() {
            self.first = Some(current);
        }
        let previous = self.last.replace((now, current));
        let (then, before) = previous?;
        Some(usage(
            &before,
            &current,
            now.duration_since(then).as_secs_f64(),
            self.ticks_per_second,
        ))
    }

    /// Bytes written to the storage layer since the last restart (as of
    /// the last sample), when `/proc/<pid>/io` is readable.
    pub fn written(&self) -> Option<u64> {
        let first = self.first?.write_bytes?;
        let last = self.last?.1.write_bytes?;
        Some(last.saturating_sub(first))
    }
}

/// The use between two samples `seconds` apart.
fn usage(
    before: &ProcessSample,
    after: &ProcessSample,
    seconds: f64,
    ticks_per_second: f64,
) -> ResourceUsage {
    let pct = |ticks: u64| {
        if seconds > 0.0 {
            ticks as f64 / ticks_per_second / seconds * 100.0
        } else {
            0.0
        }
    };
    let delta = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
    let per_second = |d: Option<u64>| {
        d.map(|d| {
            if seconds > 0.0 {
                d as f64 / seconds
            } else {
                0.0
            }
        })
    };
    let read = delta(before.read_bytes, after.read_bytes);
    let write = delta(before.write_bytes, after.write_bytes);
    ResourceUsage {
        cpu_user_pct: pct(after.utime_ticks.saturating_sub(before.utime_ticks)),
        cpu_system_pct: pct(after.stime_ticks.saturating_sub(before.stime_ticks)),
        rss_bytes: after.rss_bytes,
        peak_rss_bytes: after.peak_rss_bytes,
        read_bytes: read,
        write_bytes: write,
        read_bytes_per_s: per_second(read),
        write_bytes_per_s: per_second(write),
        voluntary_ctxt_switches: after
            .voluntary_ctxt_switches
            .saturating_sub(before.voluntary_ctxt_switches),
        involuntary_ctxt_switches: after
            .involuntary_ctxt_switches
            .saturating_sub(before.involuntary_ctxt_switches),
    }
}

/// The sum of the sizes of the files under `dir` (recursively, symbolic
/// links not followed); `None` when `dir` cannot be read. Files that
/// vanish during the walk (an LSM engine deleting compacted tables) are
/// skipped. A database kept in one file (YCSB-cpp's `sqlite.dbpath`) is
/// sized with the files beside it named after it (`<file>-wal`,
/// `<file>-journal`), not with the rest of its directory.
pub fn dir_size(dir: &Path) -> Option<u64> {
    if let Ok(meta) = dir.metadata() {
        if meta.is_file() {
            return Some(meta.len() + companions_size(dir));
        }
    }
    let mut total = 0u64;
    let mut pending = vec![dir.to_path_buf()];
    let mut first = true;
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(_) if !first => continue,
            Err(_) => return None,
        };
        first = false;
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                pending.push(entry.path());
            } else if meta.is_file() {
                total += meta.len();
            }
        }
    }
    Some(total)
}

/// The sizes of the regular files beside `file` whose names are its name,
/// `-` and more.
fn companions_size(file: &Path) -> u64 {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
        return 0;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut prefix = name.to_os_string();
    prefix.push("-");
    let prefix = prefix.as_encoded_bytes();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_name().as_encoded_bytes().starts_with(prefix))
        .filter_map(|e| e.path().symlink_metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_file_is_sized_with_its_companions_only() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("x.db"), [0u8; 100]).unwrap();
        std::fs::write(d.join("x.db-wal"), [0u8; 20]).unwrap();
        std::fs::write(d.join("x.db.bak"), [0u8; 7]).unwrap();
        std::fs::write(d.join("notes"), [0u8; 1000]).unwrap();
        assert_eq!(dir_size(&d.join("x.db")), Some(120));
        assert_eq!(dir_size(d), Some(1127));
        assert_eq!(dir_size(&d.join("missing")), None);
    }

    // Captured from a real `ycsb` process on Linux 6.x.
    const STATUS: &str = "Name:\tycsb\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t48211\nNgid:\t0\nPid:\t48211\nPPid:\t48190\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t64\nGroups:\t0 \nVmPeak:\t  245836 kB\nVmSize:\t  245828 kB\nVmLck:\t       0 kB\nVmPin:\t       0 kB\nVmHWM:\t   14388 kB\nVmRSS:\t   12048 kB\nRssAnon:\t    6200 kB\nRssFile:\t    5848 kB\nRssShmem:\t       0 kB\nVmData:\t   75112 kB\nVmStk:\t     132 kB\nVmExe:\t    3276 kB\nVmLib:\t    4692 kB\nVmPTE:\t     108 kB\nVmSwap:\t       0 kB\nThreads:\t3\nvoluntary_ctxt_switches:\t1274\nnonvoluntary_ctxt_switches:\t38\n";

    const IO: &str = "rchar: 1948372\nwchar: 88123904\nsyscr: 312\nsyscw: 21590\nread_bytes: 393216\nwrite_bytes: 88178688\ncancelled_write_bytes: 4096\n";

    #[test]
    fn parses_captured_proc_files() {
        let mut sample = ProcessSample::default();
        assert!(parse_status(STATUS, &mut sample));
        assert_eq!(sample.rss_bytes, 12048 * 1024);
        assert_eq!(sample.peak_rss_bytes, 14388 * 1024);
        assert_eq!(sample.voluntary_ctxt_switches, 1274);
        assert_eq!(sample.involuntary_ctxt_switches, 38);
        assert_eq!(parse_io(IO), Some((393216, 88178688)));
    }

    #[test]
    fn rejects_truncated_files() {
        assert_eq!(parse_io("rchar: 1\nwrite_bytes: 3\n"), None);
        let mut sample = ProcessSample::default();
        assert!(!parse_status("Name:\tkworker\n", &mut sample));
    }

    #[test]
    fn usage_between_samples_is_per_interval() {
        let before = ProcessSample {
            utime_ticks: 100,
            stime_ticks: 10,
            rss_bytes: 1,
            peak_rss_bytes: 1,
            voluntary_ctxt_switches: 5,
            involuntary_ctxt_switches: 1,
            read_bytes: Some(0),
            write_bytes: Some(1000),
        };
        let after = ProcessSample {
            utime_ticks: 250,
            stime_ticks: 30,
            rss_bytes: 4096,
            peak_rss_bytes: 8192,
            voluntary_ctxt_switches: 9,
            involuntary_ctxt_switches: 3,
            read_bytes: Some(4096),
            write_bytes: Some(9000),
        };
        let u = usage(&before, &after, 2.0, 100.0);
        // 150 ticks at 100 per second over 2 s: 0.75 of a core.
        assert!((u.cpu_user_pct - 75.0).abs() < 1e-9);
        assert!((u.cpu_system_pct - 10.0).abs() < 1e-9);
        assert_eq!((u.rss_bytes, u.peak_rss_bytes), (4096, 8192));
        assert_eq!((u.read_bytes, u.write_bytes), (Some(4096), Some(8000)));
        assert_eq!(u.write_bytes_per_s, Some(4000.0));
        assert_eq!(
            (u.voluntary_ctxt_switches, u.involuntary_ctxt_switches),
            (4, 2)
        );
    }

    #[test]
    fn samples_this_process_and_counts_its_cpu() {
        let mut sampler = ProcessSampler::current();
        sampler.restart();
        // Burn some CPU so the user time advances by at least a tick.
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(60) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let usage = sampler.sample().expect("this process is readable");
        assert!(usage.cpu_user_pct + usage.cpu_system_pct > 0.0, "{usage:?}");
        assert!(usage.rss_bytes > 0 && usage.peak_rss_bytes >= usage.rss_bytes);
    }

    #[test]
    fn directory_size_sums_files_recursively() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), [0u8; 1000]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b"), [0u8; 24]).unwrap();
        assert_eq!(dir_size(dir.path()), Some(1024));
        assert_eq!(dir_size(&dir.path().join("missing")), None);
    }
}
