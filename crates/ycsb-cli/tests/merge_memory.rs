//! `ycsb merge` keeps memory bounded on every input (issue #33, item 6):
//! a histogram that lies about its lengths is refused before anything of
//! the claimed size is allocated, and a large interval log is streamed,
//! so the process's peak RSS follows the histograms merged, not the file.
//!
//! Peak RSS is the child's own `ru_maxrss`, read with `wait4` when it
//! exits.

mod common;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::*;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use ycsb_core::measurement::IntervalLogReader;
use ycsb_results::encode_histogram;

/// What a finished `ycsb` child left: exit code, peak RSS in bytes,
/// standard output and error.
struct Finished {
    code: Option<i32>,
    peak_rss: u64,
    stdout: String,
    stderr: String,
}

/// Runs `ycsb args...` and waits for it with `wait4`, which also gives its
/// peak resident set size; kills it after `timeout`.
fn run_measured(dir: &Path, args: &[&str], timeout: Duration) -> Finished {
    let out_path = dir.join("stdout.txt");
    let err_path = dir.join("stderr.txt");
    let child = ycsb()
        .args(args)
        .stdout(Stdio::from(File::create(&out_path).unwrap()))
        .stderr(Stdio::from(File::create(&err_path).unwrap()))
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    // Reaped by wait4 below, which std's wait cannot do with the usage.
    #[allow(clippy::zombie_processes)]
    let _not_waited_by_std = child;
    let started = Instant::now();
    let (status, usage) = loop {
        let mut status: libc::c_int = 0;
        // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child, with valid pointers.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(reaped >= 0, "wait4: {}", std::io::Error::last_os_error());
        if reaped == pid {
            break (status, usage);
        }
        if started.elapsed() > timeout {
            // SAFETY: signalling our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("ycsb {args:?} did not end within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Finished {
        code,
        // Linux reports kilobytes.
        peak_rss: u64::try_from(usage.ru_maxrss).unwrap() * 1024,
        stdout: std::fs::read_to_string(out_path).unwrap(),
        stderr: std::fs::read_to_string(err_path).unwrap(),
    }
}

/// A log line declaring `encoded` as its histogram.
fn log_text(lines: &[String]) -> String {
    let mut text = String::from(
        "#[Logging for: READ]\n#[Histogram log format version 1.3]\n\
         #[StartTime: 1700000000.000 (seconds since epoch), Tue Nov 14 22:13:20 +00:00 2023]\n\
         \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
    );
    for (i, encoded) in lines.iter().enumerate() {
        text.push_str(&format!("{i}.000,1.000,0.001,{encoded}\n"));
    }
    text
}

/// An uncompressed V2 header: payload length, 3 digits, 1 to 3.6e9.
fn v2_header(payload_len: u32) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&(0x1c84_9303u32 | 0x10).to_be_bytes());
    h.extend_from_slice(&payload_len.to_be_bytes());
    h.extend_from_slice(&0u32.to_be_bytes()); // normalizing offset
    h.extend_from_slice(&3u32.to_be_bytes()); // significant digits
    h.extend_from_slice(&1u64.to_be_bytes()); // lowest
    h.extend_from_slice(&3_600_000_000u64.to_be_bytes()); // highest
    h.extend_from_slice(&1.0f64.to_be_bytes()); // integer to double ratio
    h
}

/// The compressed V2 encoding of `plain` as it stands (lengths unchecked).
fn compressed(plain: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(plain).unwrap();
    let deflated = z.finish().unwrap();
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&(0x1c84_9304u32 | 0x10).to_be_bytes());
    bytes.extend_from_slice(&(deflated.len() as u32).to_be_bytes());
    bytes.extend_from_slice(&deflated);
    bytes
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Histograms that declare a 2^31-byte payload (2 GB that the previous
/// reader allocated before reading a byte of it), or more counts than
/// their range has, are refused at once: one line naming the file and
/// line, exit 2, and a small peak RSS.
///
/// The bound, 200 MB: the ycsb binary's own footprint (a debug build,
/// every engine linked) is a few tens of MB; the largest histogram any
/// header may declare (HdrHistogram's widest range, 5 digits over all of
/// u64: 6.3 million 8-byte counts) is 50 MB; a refused lie must cost
/// neither the 2 GB it claims nor anything near it.
#[test]
fn a_log_that_lies_about_its_lengths_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut plain_lie = v2_header(1 << 31);
    plain_lie.extend_from_slice(&[2, 0, 2]);
    // 2 GB of counts claimed inside a compressed histogram.
    let compressed_lie = compressed(&plain_lie);
    // A compressed payload longer than the line holds.
    let mut outer_lie = compressed(&v2_header(3));
    outer_lie[4..8].copy_from_slice(&(1u32 << 31).to_be_bytes());
    // A range of 3 digits up to 3.6e9 has about 23,000 counts: 1 MB of
    // them cannot be encoded in it.
    let mut range_lie = v2_header(1 << 20);
    range_lie.resize(range_lie.len() + (1 << 20), 0);
    let range_lie = compressed(&range_lie);
    let good = {
        let mut h = Histogram::<u64>::new(3).unwrap();
        h.record_n(250, 3).unwrap();
        encode_histogram(&h)
    };
    let cases = [
        (
            "compressed.hdr",
            b64(&compressed_lie),
            "declares 2147483648 bytes of counts",
        ),
        (
            "plain.hdr",
            b64(&plain_lie),
            "declares 2147483648 bytes of counts",
        ),
        (
            "outer.hdr",
            b64(&outer_lie),
            "declares a compressed payload of 2147483648 bytes",
        ),
        ("range.hdr", b64(&range_lie), "counts of its range"),
    ];
    for (name, lie, says) in cases {
        let path = dir.path().join(name);
        let text = log_text(&[good.clone(), lie]);
        if name != "range.hdr" {
            assert!(
                text.len() < 600,
                "a small crafted log: {} bytes",
                text.len()
            );
        }
        std::fs::write(&path, text).unwrap();
        let merged = dir.path().join("merged.hdr");
        let started = Instant::now();
        let done = run_measured(
            dir.path(),
            &[
                "merge",
                "-o",
                merged.to_str().unwrap(),
                path.to_str().unwrap(),
            ],
            Duration::from_secs(60),
        );
        let took = started.elapsed();
        assert_eq!(done.code, Some(2), "{name}: {}", done.stderr);
        let lines: Vec<&str> = done.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{name}: one line: {}", done.stderr);
        assert!(
            lines[0].contains(&format!("{}:6:", path.display())) && lines[0].contains(says),
            "{name}: the file, the line and what it declares: {}",
            lines[0]
        );
        assert!(!merged.exists(), "{name}: nothing written");
        assert!(
            done.peak_rss < 200 << 20,
            "{name}: peak RSS {} MB refusing a {}-byte log",
            done.peak_rss >> 20,
            std::fs::metadata(&path).unwrap().len()
        );
        assert!(took < Duration::from_secs(20), "{name}: took {took:?}");
    }
}

/// One interval's histogram: 4000 distinct latencies (1 to 20000 us),
/// each recorded a pseudo-random number of times, so that its encoding
/// takes several kB (a few thousand intervals make tens of MB).
fn interval_histogram(interval: u64) -> Histogram<u64> {
    let mut h = Histogram::<u64>::new(3).unwrap();
    for k in 0..4000u64 {
        let count = 1 + (k.wrapping_mul(2_654_435_761) ^ interval.wrapping_mul(40_503)) % 1000;
        h.record_n(1 + k * 5, count).unwrap();
    }
    h
}

/// The recorded (value, count) pairs of a histogram, for comparing sums.
fn counts(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// A log of tens of MB (every interval a real histogram of a few hundred
/// distinct latencies) merged with a small one: the process's peak RSS
/// stays far below the file's size (the previous merge read the whole
/// file, then decoded every interval's histogram at once: gigabytes), and
/// the merged intervals are the sums.
#[test]
fn a_large_log_is_merged_in_memory_far_below_its_size() {
    let dir = tempfile::tempdir().unwrap();
    // A cycle of distinct intervals, repeated: the file is large, its
    // writing quick.
    let cycle: Vec<Histogram<u64>> = (0..16).map(interval_histogram).collect();
    let encoded: Vec<String> = cycle.iter().map(encode_histogram).collect();
    let large = dir.path().join("large.hdr");
    let mut out = BufWriter::new(File::create(&large).unwrap());
    out.write_all(log_text(&[]).as_bytes()).unwrap();
    let target: u64 = 48 << 20;
    let mut written = 0u64;
    let mut intervals = 0usize;
    while written < target {
        let line = format!(
            "{intervals}.000,1.000,0.003,{}\n",
            encoded[intervals % cycle.len()]
        );
        out.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
        intervals += 1;
    }
    out.flush().unwrap();
    drop(out);
    let size = std::fs::metadata(&large).unwrap().len();
    // The small known case: three intervals, on the large log's first
    // three seconds (0.2 s in).
    let small_histograms: Vec<Histogram<u64>> = (0..3u64)
        .map(|i| {
            let mut h = Histogram::<u64>::new(3).unwrap();
            h.record_n(30_000 + i * 1_000, 2 + i).unwrap();
            h.record(7).unwrap();
            h
        })
        .collect();
    let small = dir.path().join("small.hdr");
    let mut text = log_text(&[]);
    for (i, h) in small_histograms.iter().enumerate() {
        text.push_str(&format!("{i}.200,1.000,0.005,{}\n", encode_histogram(h)));
    }
    std::fs::write(&small, text).unwrap();

    let merged = dir.path().join("merged.hdr");
    let done = run_measured(
        dir.path(),
        &[
            "merge",
            "-o",
            merged.to_str().unwrap(),
            large.to_str().unwrap(),
            small.to_str().unwrap(),
        ],
        Duration::from_secs(300),
    );
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    eprintln!(
        "peak RSS {} MB merging a {} MB log",
        done.peak_rss >> 20,
        size >> 20
    );
    // The base allows for the binary itself (a debug build with every
    // engine linked); the rest must be far below the input's size.
    let bound = (64 << 20) + size / 4;
    assert!(
        done.peak_rss < bound,
        "peak RSS {} MB merging a {} MB log (bound {} MB)",
        done.peak_rss >> 20,
        size >> 20,
        bound >> 20
    );

    // Every operation of both logs, once.
    let mut expected_total = Histogram::<u64>::new(3).unwrap();
    for i in 0..intervals {
        expected_total.add(&cycle[i % cycle.len()]).unwrap();
    }
    for h in &small_histograms {
        expected_total.add(h).unwrap();
    }
    assert!(
        done.stdout
            .contains(&format!("[READ], Operations, {}\n", expected_total.len())),
        "{}",
        done.stdout
    );
    // The merged log, read back one interval at a time: one interval per
    // second, the first three the sums of both logs'.
    let file = std::io::BufReader::new(File::open(&merged).unwrap());
    let mut reader = IntervalLogReader::new(file, merged.display().to_string());
    let mut seen = 0usize;
    let mut total = Histogram::<u64>::new(3).unwrap();
    while let Some(interval) = reader.next_interval().unwrap() {
        let mut expected = cycle[seen % cycle.len()].clone();
        if let Some(h) = small_histograms.get(seen) {
            expected.add(h).unwrap();
        }
        assert_eq!(
            counts(&interval.histogram),
            counts(&expected),
            "merged interval {seen}"
        );
        total.add(&interval.histogram).unwrap();
        seen += 1;
    }
    assert_eq!(seen, intervals);
    assert_eq!(counts(&total), counts(&expected_total));
}

/// What the crafted logs above are made of decodes as HdrHistogram's own
/// serializer writes it (the test's V2 header is the real one).
#[test]
fn the_crafted_header_is_hdrhistograms_own() {
    let h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    let mut bytes = Vec::new();
    hdrhistogram::serialization::V2Serializer::new()
        .serialize(&h, &mut bytes)
        .unwrap();
    assert_eq!(
        bytes[..40],
        v2_header(u32::from_be_bytes(bytes[4..8].try_into().unwrap()))[..]
    );
    let mut deflated = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&h, &mut deflated)
        .unwrap();
    assert_eq!(deflated[..4], (0x1c84_9304u32 | 0x10).to_be_bytes());
}

/// Makes an export `copies` times as long: its time series' rows again
/// and again, each copy later by the series' span (the figures stay an
/// export's; only its size grows).
fn lengthen_series(path: &Path, copies: usize) {
    let mut export: serde_json::Value =
        serde_json::from_reader(std::io::BufReader::new(File::open(path).unwrap())).unwrap();
    for phase in export["phases"].as_array_mut().unwrap() {
        let series = phase["observation"]["series"].as_array_mut().unwrap();
        let rows = series.clone();
        let span_s = rows.last().unwrap()["time_s"].as_f64().unwrap();
        for copy in 1..copies {
            for row in &rows {
                let mut row = row.clone();
                let later = span_s * copy as f64;
                row["time_s"] = (row["time_s"].as_f64().unwrap() + later).into();
                row["unix_ms"] =
                    (row["unix_ms"].as_u64().unwrap() + (later * 1000.0) as u64).into();
                series.push(row);
            }
        }
    }
    let mut out = BufWriter::new(File::create(path).unwrap());
    serde_json::to_writer(&mut out, &export).unwrap();
    out.flush().unwrap();
}

#[test]
fn large_exports_are_merged_in_memory_below_their_size() {
    // Two clients of one run, each exporting a time series of 10 ms rows,
    // lengthened to tens of MB: the old merge held each file as text and
    // as a JSON tree (an 83 MB export peaked at 5.5 GB).
    let dir = tempfile::tempdir().unwrap();
    let exports: Vec<_> = (0..2)
        .map(|i| dir.path().join(format!("c{i}.json")))
        .collect();
    let children: Vec<_> = exports
        .iter()
        .enumerate()
        .map(|(i, export)| {
            ycsb()
                .args(["run", "basic", "-P", "workloads/workloada"])
                .args(["-p", "operationcount=0", "-p", "maxexecutiontime=1"])
                .args(["-p", "timeseries.granularity=10", "-p", "exporter=json"])
                .args(["-p", "client.count=2", "-p", &format!("client.index={i}")])
                .arg("-p")
                .arg(format!("exportfile={}", export.display()))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    for export in &exports {
        lengthen_series(export, 250);
    }
    let input: u64 = exports
        .iter()
        .map(|e| std::fs::metadata(e).unwrap().len())
        .sum();
    assert!(input > 30 << 20, "only {input} bytes of exports");
    let merged = dir.path().join("merged.json");
    let args: Vec<String> = ["merge".to_string()]
        .into_iter()
        .chain(exports.iter().map(|e| e.display().to_string()))
        .chain(["-o".to_string(), merged.display().to_string()])
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let done = run_measured(dir.path(), &args, Duration::from_secs(120));
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    // The rows of every time series are held, typed, to be lined up by
    // wall clock: about 5 times their JSON (measured 208 MB for 40 MB).
    // The old merge held each file as text, as a JSON tree and cloned,
    // about 66 times (5.5 GB for an 83 MB export).
    assert!(
        done.peak_rss < (64 << 20) + 8 * input,
        "peak RSS {} MB for {} MB of exports",
        done.peak_rss >> 20,
        input >> 20
    );
    assert!(merged.exists());
    assert!(
        done.stdout.contains("[OVERALL], Throughput"),
        "{}",
        done.stdout
    );
}
