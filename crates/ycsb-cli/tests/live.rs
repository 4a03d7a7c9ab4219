//! `-p live.port=N`: the live view of a running benchmark, fetched over
//! HTTP and drawn by headless Chromium while the run goes (every chart
//! drawn, no text clipped or overlapping), then the final report it turns
//! into. With `YCSB_SCREENSHOTS=docs` the live view of a RocksDB load is
//! kept as docs/live-view.png.

mod browser;
mod common;
mod rel_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use browser::{check_layout, chromium, run_chromium, screenshot, Keep};
use common::*;
use rel_support::*;

/// One HTTP/1.1 GET on `address` (`127.0.0.1:port`): status, head, body.
fn get(address: &str, path: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(address).expect("the live view accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("not an HTTP response: {response}"));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {head}"));
    (status, head.to_string(), body.to_string())
}

/// The number of rows of the running phase in a `/data` document.
fn rows(data: &serde_json::Value) -> usize {
    data["phases"]
        .as_array()
        .and_then(|p| p.last())
        .and_then(|p| p["series"].as_array())
        .map_or(0, Vec::len)
}

fn data(address: &str) -> serde_json::Value {
    let (status, head, body) = get(address, "/data");
    assert_eq!(status, 200, "{head}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("/data is not JSON ({e}): {body}"))
}

/// Polls `/data` until `done` holds, for at most two minutes.
fn wait_for(
    address: &str,
    what: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let start = Instant::now();
    loop {
        let d = data(address);
        if done(&d) {
            return d;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{what} did not happen within two minutes: {d}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How many charts of a page have a line of at least two points.
fn drawn_figures(html: &str) -> (usize, usize) {
    let figures: Vec<&str> = html
        .split("<figure>")
        .skip(1)
        .map(|f| f.split("</figure>").next().unwrap_or(""))
        .collect();
    let drawn = figures
        .iter()
        .filter(|f| {
            f.split("<path d=\"")
                .skip(1)
                .any(|d| d.split('"').next().unwrap_or("").contains('L'))
        })
        .count();
    (figures.len(), drawn)
}

/// The checks of a page Chromium drew: no console message or script
/// error, and every chart with a drawn line. Returns the page.
fn browse(dir: &std::path::Path, url: &str, virtual_ms: u64) -> Option<String> {
    let Some(chromium) = chromium() else {
        // CI installs chromium (DEBIAN_PACKAGES): there, its absence fails.
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed (it is in xtask's DEBIAN_PACKAGES)"
        );
        eprintln!("skipped the browser: chromium is not installed");
        return None;
    };
    let (dom, log) = run_chromium(
        &chromium,
        dir,
        &[
            format!("--virtual-time-budget={virtual_ms}"),
            "--dump-dom".into(),
            url.to_string(),
        ],
    );
    for line in log.lines() {
        assert!(
            !(line.contains("CONSOLE")
                || line.contains("Uncaught")
                || line.contains("Page load failed")),
            "a script error, console message or failed load: {line}\n{log}"
        );
    }
    let (figures, drawn) = drawn_figures(&dom);
    assert!(
        figures >= 5,
        "{figures} charts in the browser's page:\n{log}\n{dom}"
    );
    assert_eq!(drawn, figures, "charts without a drawn line:\n{dom}");
    Some(dom)
}

/// Starts `ycsb load memory` with `args` and the live view on a free
/// port; returns the child, its standard error and the view's address.
fn start(args: &[&str]) -> (std::process::Child, StderrLines, String, String) {
    start_with(args, Stdio::null())
}

/// [`start`], standard output going to `stdout`.
fn start_with(args: &[&str], stdout: Stdio) -> (std::process::Child, StderrLines, String, String) {
    start_store("memory", args, stdout)
}

/// [`start_with`] on `store`.
fn start_store(
    store: &str,
    args: &[&str],
    stdout: Stdio,
) -> (std::process::Child, StderrLines, String, String) {
    let mut child = ycsb()
        .args(["load", store, "-P", "workloads/workloada"])
        .args(["-p", "status.interval=0.2", "-p", "live.port=0"])
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = StderrLines::new(child.stderr.take().unwrap());
    let line = stderr
        .wait_for(Duration::from_secs(60), |l| l.contains("live view at"))
        .unwrap_or_else(|| panic!("no URL on standard error: {:?}", stderr.seen));
    let url = line.rsplit(' ').next().unwrap().to_string();
    let address = url
        .strip_prefix("http://127.0.0.1:")
        .map(|port| format!("127.0.0.1:{}", port.trim_end_matches('/')))
        .unwrap_or_else(|| panic!("not a loopback URL: {line}"));
    (child, stderr, url, address)
}

/// Held by the tests that time a browser against a running benchmark:
/// two at once on a small machine can slow Chromium past the run's end.
static BROWSING: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn the_live_view_grows_while_the_run_goes_and_ends_as_the_final_report() {
    let _alone = BROWSING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("load.json");
    // A throttled load of about 20 s (longer on a loaded machine): time
    // for two fetches and two browsers while it runs; the second must
    // have opened the page before the run ends, which takes Chromium a
    // few seconds at most.
    let (mut child, mut stderr, url, address) = start(&[
        "-p",
        "recordcount=60000",
        "-target",
        "3000",
        "-p",
        "exporter=json",
        "-p",
        &format!("exportfile={}", export.display()),
    ]);

    // The series grows while the run goes.
    let first = wait_for(&address, "a first interval", |d| rows(d) >= 1);
    assert_eq!(first["running"], "load", "{first}");
    assert_eq!(first["finished"], false);
    let seen = rows(&first);
    let second = wait_for(&address, "a later interval", |d| rows(d) > seen);
    assert!(second["version"].as_u64() > first["version"].as_u64());
    let row = &second["phases"][0]["series"][0];
    for key in ["throughput", "sections", "client", "gauges"] {
        assert!(!row[key].is_null(), "{key} missing from {row}");
    }
    assert!(row["gauges"]["memory.records"].is_number(), "{row}");

    // The page as served: every chart the report draws plus the gauge's.
    let (status, _, page) = get(&address, "/");
    assert_eq!(status, 200);
    assert!(page.contains("<script>") && page.contains("id=\"charts\""));
    for title in [
        "Throughput",
        "INSERT latency",
        "Client CPU",
        "Client memory (RSS)",
        "Engine gauges: memory",
        ">records</text>",
    ] {
        assert!(page.contains(title), "no {title} chart on the page");
    }
    let (status, _, _) = get(&address, "/report");
    assert_eq!(status, 404, "no final report while the run goes");
    let (status, _, _) = get(&address, "/nothing-here");
    assert_eq!(status, 404);

    // A browser draws it and redraws it during the run. Virtual time runs
    // as fast as Chromium can poll, so one browser's 15 polls may all fall
    // within one real interval (0.2 s) and see no new version: up to five
    // browsers, one after the other, must see a redraw while the run goes
    // (a page that never redraws fails every one).
    if let Some(mut dom) = browse(dir.path(), &url, 3000) {
        for attempt in 1.. {
            // Had the run ended meanwhile, the page would be the final report.
            if dom.contains("<h2>Summary</h2>") {
                break;
            }
            let updates: u64 = dom
                .split("data-updates=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no live status in the page:\n{dom}"));
            if updates >= 1 {
                break;
            }
            assert!(attempt < 5, "the page never redrew its charts:\n{dom}");
            dom = browse(dir.path(), &url, 3000).unwrap();
        }
        // A page left open turns into the final report when the run ends,
        // though the process does not linger (live.linger=0): it waits
        // for the page to fetch it. Virtual time jumps from one poll to
        // the next, so the budget counts polls (one per 0.2 s of it), not
        // the run's seconds: it must outlast the run's polls; the static
        // final report then ends it at once.
        let end = browse(dir.path(), &url, 100_000_000).unwrap();
        assert!(end.contains("<h2>Summary</h2>"), "{end}");
        assert!(end.contains("Engine gauges: memory"), "{end}");
        assert!(!end.contains("id=\"live-status\""), "{end}");
    }
    let status = wait_bounded(&mut child, Duration::from_secs(300), "the live run");
    assert_eq!(status.code(), Some(0), "{}", stderr.rest());
    let exported = read_json(&export);
    assert_eq!(exported["phases"][0]["operations"], 60000);
}

/// The live view of a RocksDB load as Chromium draws it: every chart
/// drawn (the engine's gauges among them), no text clipped or overlapping.
#[test]
fn the_live_view_of_an_engine_reads_well() {
    let _alone = BROWSING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rocksdb");
    let (mut child, mut stderr, _, address) = start_store(
        "rocksdb",
        &[
            "-P",
            "rocksdb/rocksdb.properties",
            "-p",
            &format!("rocksdb.dbname={}", db.display()),
            "-p",
            "rocksdb.write_buffer_size=262144",
            "-p",
            "recordcount=200000",
            "-target",
            "4000",
            "-p",
            "maxexecutiontime=30",
        ],
        Stdio::null(),
    );
    wait_for(&address, "three seconds of intervals", |d| rows(d) >= 15);
    let (status, _, page) = get(&address, "/");
    assert_eq!(status, 200);
    assert!(page.contains("<h3>Engine gauges: rocksdb</h3>"), "{page}");
    assert!(
        page.contains(
            "no data: the phase is still running: its distribution comes with its final figures"
        ),
        "the true reason"
    );
    signal(&child, SIGTERM);
    let status = wait_bounded(&mut child, Duration::from_secs(60), "the live run");
    assert_eq!(status.code(), Some(130), "{}", stderr.rest());
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed (it is in xtask's DEBIAN_PACKAGES)"
        );
        eprintln!("skipped the browser: chromium is not installed");
        return;
    };
    let layout = check_layout(&chromium, dir.path(), &page);
    assert!(layout.problems.is_empty(), "{}", layout.problems.join("\n"));
    assert!(layout.charts.len() >= 10, "{:?}", layout.charts);
    for chart in &layout.charts {
        assert!(
            !chart.contains("shapes=0 "),
            "a chart without drawn data: {chart}"
        );
    }
    // The page as served, without its script (which would fetch from the
    // ended run).
    let still = dir.path().join("live.html");
    let mut html = page.clone();
    if let (Some(start), Some(end)) = (html.find("<script>"), html.find("</script>")) {
        html.replace_range(start..end + "</script>".len(), "");
    }
    std::fs::write(&still, html).unwrap();
    let bytes = screenshot(
        &chromium,
        dir.path(),
        &format!("file://{}", still.display()),
        (960, 3600),
        "live-view.png",
        Keep::AsDocs,
    );
    assert!(bytes.len() > 50_000, "{} bytes: a blank page?", bytes.len());
}

#[test]
fn the_final_report_is_served_while_the_process_lingers() {
    let (mut child, mut stderr, _, address) = start(&[
        "-p",
        "recordcount=3000",
        "-target",
        "3000",
        "-p",
        "live.linger=600",
    ]);
    let last = wait_for(&address, "the end of the run", |d| d["finished"] == true);
    assert_eq!(last["running"], serde_json::Value::Null);
    assert_eq!(
        rows(&last),
        last["phases"][0]["series"].as_array().unwrap().len()
    );
    let (status, head, _) = get(&address, "/charts?have=0");
    assert_eq!(status, 204);
    assert!(head.contains("X-Live-Finished: 1"), "{head}");
    let (status, _, report) = get(&address, "/");
    assert_eq!(status, 200);
    assert!(!report.contains("<script>"), "the final report is static");
    assert!(report.contains("<h2>Summary</h2>"), "{report}");
    assert!(report.contains("Engine gauges: memory"));
    assert!(report.contains("3000"), "the summary counts the records");
    let (figures, drawn) = drawn_figures(&report);
    assert!(
        figures >= 5 && drawn == figures,
        "{drawn} of {figures} charts drawn"
    );
    assert_eq!(get(&address, "/report").2, report);
    stderr
        .wait_for(Duration::from_secs(60), |l| {
            l.contains("the final report is served at")
        })
        .unwrap_or_else(|| panic!("no linger notice: {:?}", stderr.seen));

    // SIGTERM ends the lingering; the run itself had completed.
    signal(&child, SIGTERM);
    let status = wait_bounded(&mut child, Duration::from_secs(30), "ycsb lingering");
    assert_eq!(status.code(), Some(0), "{}", stderr.rest());
}

#[test]
fn a_port_in_use_is_bad_input() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = ycsb()
        .args(["load", "memory", "-p"])
        .arg(format!("live.port={port}"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("live.port={port}")) && err.contains("cannot listen"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// `maxexecutiontime` is a normal end of a run (the docs' own example
/// pairs it with the live view): `live.linger` applies after it, and
/// standard output does not call the phase interrupted.
#[test]
fn a_time_limited_run_lingers_and_is_not_called_interrupted() {
    // 100000 records at 2000 per second would take 50 s: the 1 s limit
    // ends the load.
    let (mut child, mut stderr, _, address) = start_with(
        &[
            "-p",
            "recordcount=100000",
            "-target",
            "2000",
            "-p",
            "maxexecutiontime=1",
            "-p",
            "live.linger=3",
        ],
        Stdio::piped(),
    );
    let last = wait_for(&address, "the end of the run", |d| d["finished"] == true);
    let ended = Instant::now();
    assert_eq!(last["running"], serde_json::Value::Null);
    stderr
        .wait_for(Duration::from_secs(30), |l| {
            l.contains("the final report is served at")
        })
        .unwrap_or_else(|| panic!("no linger notice: {:?}", stderr.seen));
    // Well within the 3 s of lingering, the final report is still served.
    std::thread::sleep(Duration::from_millis(500));
    let (status, _, report) = get(&address, "/");
    assert!(
        ended.elapsed() < Duration::from_secs(3),
        "the test was slow"
    );
    assert_eq!(status, 200);
    assert!(report.contains("<h2>Summary</h2>"), "{report}");
    let status = wait_bounded(&mut child, Duration::from_secs(60), "ycsb lingering");
    assert!(
        ended.elapsed() >= Duration::from_millis(2500),
        "the process ended {:?} after the run, before its 3 s of lingering",
        ended.elapsed()
    );
    assert_eq!(status.code(), Some(0), "{}", stderr.rest());
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(out.contains("[INSERT], Operations, "), "{out}");
    assert!(!out.contains("interrupted"), "{out}");
}

/// Slow clients (32 connections each sending a byte a second, a
/// slowloris) must not starve normal requests: a complete GET is answered
/// 200 within a few seconds while they trickle, and they are dropped once
/// their 5 s to send a request have passed.
#[test]
fn slow_clients_do_not_starve_complete_requests() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let (mut child, mut stderr, _, address) = start(&[
        "-p",
        "recordcount=100000",
        "-target",
        "2000",
        "-p",
        "maxexecutiontime=30",
    ]);
    wait_for(&address, "a first interval", |d| rows(d) >= 1);
    let done = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicUsize::new(0));
    let connected = Arc::new(AtomicUsize::new(0));
    let slow: Vec<_> = (0..32)
        .map(|_| {
            let (address, done, dropped, connected) = (
                address.clone(),
                Arc::clone(&done),
                Arc::clone(&dropped),
                Arc::clone(&connected),
            );
            std::thread::spawn(move || {
                let request = b"GET /data HTTP/1.1\r\nHost: x\r\n\r\n";
                while !done.load(Ordering::SeqCst) {
                    let Ok(mut stream) = TcpStream::connect(&address) else {
                        std::thread::sleep(Duration::from_millis(100));
                        continue;
                    };
                    connected.fetch_add(1, Ordering::SeqCst);
                    // One byte a second, never the whole request, until
                    // the server gives up on it (then a new connection).
                    for byte in request.iter().cycle() {
                        if done.load(Ordering::SeqCst) || stream.write_all(&[*byte]).is_err() {
                            break;
                        }
                        std::thread::sleep(Duration::from_secs(1));
                    }
                    dropped.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let start = Instant::now();
    while connected.load(Ordering::SeqCst) < 32 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "slow clients connect"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    // Normal requests over 8 s of trickling: each answered, promptly.
    let test_start = Instant::now();
    while test_start.elapsed() < Duration::from_secs(8) {
        let asked = Instant::now();
        let (status, head, _) = get(&address, "/data");
        assert_eq!(status, 200, "{head}");
        assert!(
            asked.elapsed() < Duration::from_secs(3),
            "a complete request took {:?} among slow clients",
            asked.elapsed()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    done.store(true, Ordering::SeqCst);
    for thread in slow {
        thread.join().unwrap();
    }
    // The slow connections were dropped (by eviction or the 5 s deadline)
    // rather than held for as long as they trickled.
    assert!(
        connected.load(Ordering::SeqCst) > 32,
        "no slow connection was dropped by the server in 8 s"
    );
    signal(&child, SIGTERM);
    let status = wait_bounded(&mut child, Duration::from_secs(60), "the live run");
    assert_eq!(status.code(), Some(130), "{}", stderr.rest());
}
