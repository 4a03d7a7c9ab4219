//! `ycsb serve` off loopback needs a password (issue #33, item 8): on the
//! unspecified address without one it refuses to start (bad input: one
//! line, exit 2); with one, RESP clients must AUTH and HTTP clients must
//! send a bearer token, checked with the real `redis-cli` and `curl` and
//! with the ycsb redis and http stores running workload A; the password
//! never appears in any output or export.
//!
//! These tests bind the unspecified address on purpose (the one place
//! besides security.rs that may name it) and connect only to 127.0.0.1,
//! which reaches it; every port is the system's choice of a free one.

mod common;
mod rel_support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::*;
use rel_support::*;

const PASSWORD: &str = "Srv-pw-4e8b1d";

/// Asserts that the password is nowhere in `text`.
fn clean(what: &str, text: &str) {
    assert!(
        !text.contains(PASSWORD),
        "the password leaked into {what}: {text}"
    );
}

#[test]
fn serving_off_loopback_without_a_password_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty-password");
    std::fs::write(&empty, "\n").unwrap();
    let missing = dir.path().join("no-such-file");
    let port = free_port().to_string();
    let everywhere = format!("0.0.0.0:{port}");
    let everywhere6 = format!("[::]:{port}");
    let empty_file = format!("serve.password_file={}", empty.display());
    let missing_file = format!("serve.password_file={}", missing.display());
    let both = format!("serve.password={PASSWORD}");
    let cases: &[(&[&str], &str)] = &[
        (&["--resp", &everywhere, "--http", "off"], "--resp: "),
        (&["--resp", "off", "--http", &everywhere], "--http: "),
        (&["--resp", &everywhere6, "--http", "off"], "--resp: "),
        // Loopback for one, not the other: still refused.
        (&["--resp", "0", "--http", &everywhere], "--http: "),
        (
            &["--resp", &everywhere, "-p", "serve.password="],
            "the password is empty",
        ),
        (
            &["--resp", &everywhere, "-p", &empty_file],
            "the password is empty",
        ),
        (
            &["--resp", &everywhere, "-p", &missing_file],
            "cannot read the file",
        ),
        (
            &["--resp", &everywhere, "-p", &both, "-p", &empty_file],
            "both set",
        ),
    ];
    for (args, expected) in cases {
        // Bounded: a server that starts instead of refusing is killed and
        // the test fails.
        let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
        let mut child = ycsb()
            .args(["serve", "memory"])
            .args(*args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(std::fs::File::create(&err_path).unwrap())
            .spawn()
            .unwrap();
        let status = wait_bounded(&mut child, Duration::from_secs(30), "a refused ycsb serve");
        let out = std::fs::read_to_string(&out_path).unwrap();
        let err = std::fs::read_to_string(&err_path).unwrap();
        assert_eq!(status.code(), Some(2), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.starts_with("ycsb: error: "), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(err.contains("serve.password"), "{args:?}: {err}");
        clean("the refusal", &err);
    }
    // Nothing was left listening.
    assert!(std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_err());
}

/// A `ycsb serve` child on the unspecified address, with its standard
/// output in a file and its standard error read as it comes.
struct Served {
    child: Child,
    lines: StderrLines,
    /// 127.0.0.1 and the RESP port, then the HTTP port.
    resp: SocketAddr,
    http: SocketAddr,
}

impl Served {
    fn start(dir: &Path, password_property: &str) -> Self {
        let out = std::fs::File::create(dir.join("serve.stdout")).unwrap();
        let mut child = ycsb()
            .args([
                "serve",
                "memory",
                "--resp",
                "0.0.0.0:0",
                "--http",
                "0.0.0.0:0",
            ])
            .args(["-p", password_property])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = StderrLines::new(child.stderr.take().unwrap());
        let mut port = |protocol: &str| {
            let marker = format!(" over {protocol} at ");
            let line = lines
                .wait_for(Duration::from_secs(30), |l| l.contains(&marker))
                .unwrap_or_else(|| panic!("no {protocol} line: {:?}", lines.seen));
            assert!(
                line.ends_with("(reachable from other hosts, password required)"),
                "{line}"
            );
            let addr = address_after(&line, &marker);
            assert!(addr.ip().is_unspecified(), "{line}");
            SocketAddr::from(([127, 0, 0, 1], addr.port()))
        };
        let resp = port("RESP");
        let http = port("HTTP");
        Self {
            child,
            lines,
            resp,
            http,
        }
    }

    /// SIGTERM, and everything it wrote to standard error.
    fn stop(mut self) -> String {
        signal(&self.child, SIGTERM);
        let status = wait_bounded(&mut self.child, Duration::from_secs(30), "ycsb serve");
        let err = self.lines.rest();
        assert!(status.success(), "{err}");
        err
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn tool(binary: &str, args: &[&str]) -> Output {
    Command::new(binary)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{binary} cannot run: {e}"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `redis-cli` on 127.0.0.1, with `-a <password>` when given.
fn redis_cli(served: &Served, password: Option<&str>, command: &[&str]) -> String {
    let port = served.resp.port().to_string();
    let mut args = vec!["-h", "127.0.0.1", "-p", &port];
    if let Some(pw) = password {
        args.extend(["-a", pw, "--no-auth-warning"]);
    }
    args.extend_from_slice(command);
    text(&tool("redis-cli", &args)).trim().to_string()
}

/// With the password as a bearer token, the HTTP server answers (a 404
/// for a key never written).
fn assert_the_password_lets_http_in(dir: &Path, served: &Served) {
    let header = format!("Authorization: Bearer {PASSWORD}");
    let answered = curl(dir, served, &["-H", &header], "/get?key=absent&format=txt");
    assert!(answered.starts_with("HTTP/1.1 404 "), "{answered}");
}

/// `curl` on 127.0.0.1: the status line and headers it received (the
/// body goes to a file in `dir`).
fn curl(dir: &Path, served: &Served, extra: &[&str], target: &str) -> String {
    let url = format!("http://127.0.0.1:{}{target}", served.http.port());
    let body = dir.join("curl.body");
    let body = body.to_str().unwrap();
    let o = tool(
        "curl",
        &[&["-s", "-S", "-D", "-", "-o", body][..], extra, &[&url]].concat(),
    );
    assert!(o.status.success(), "curl: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Workload A through a client store against the server, with its JSON
/// export; the output and export, checked for success and the password.
fn workload_a(dir: &Path, db: &str, props: &[String]) -> String {
    let export = dir.join(format!("{db}.json"));
    let mut c = load_run(db, "workloads/workloada");
    c.arg("-s");
    for p in props {
        c.args(["-p", p]);
    }
    let o = c
        .args(["-p", "recordcount=200", "-p", "operationcount=400"])
        .args(json_export(&export))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{db}: {err}");
    let json = read_json(&export);
    let phases = json["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 2, "{db}: {json}");
    assert_eq!(returns(&phases[0], "INSERT", "OK"), 200, "{db}: load");
    let run = &phases[1];
    assert_eq!(
        returns(run, "READ", "OK") + returns(run, "UPDATE", "OK"),
        400,
        "{db}: run"
    );
    assert_eq!(failures(run), 0, "{db}");
    clean(&format!("{db}'s standard output"), &out);
    clean(&format!("{db}'s standard error"), &err);
    let exported = std::fs::read_to_string(&export).unwrap();
    clean(&format!("{db}'s export"), &exported);
    format!("{out}{err}")
}

#[test]
fn serving_everywhere_with_a_password_admits_only_clients_that_present_it() {
    require("redis-cli", "redis-tools");
    require("curl", "curl");
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &format!("serve.password={PASSWORD}"));

    // RESP: redis-cli without AUTH is refused, with -a it works.
    let refused = redis_cli(&served, None, &["SET", "k", "v"]);
    assert!(
        refused.contains("NOAUTH Authentication required."),
        "{refused}"
    );
    let wrong = redis_cli(&served, Some("not-the-password"), &["PING"]);
    assert!(wrong.contains("WRONGPASS"), "{wrong}");
    assert_eq!(redis_cli(&served, Some(PASSWORD), &["SET", "k", "v"]), "OK");
    assert_eq!(redis_cli(&served, Some(PASSWORD), &["GET", "k"]), "v");
    // What was refused never reached the store.
    let missing = redis_cli(&served, Some(PASSWORD), &["EXISTS", "never"]);
    assert_eq!(missing, "0");

    // HTTP: curl without the token gets 401 and a Bearer challenge; with
    // it, an answer from the store.
    let anonymous = curl(dir.path(), &served, &[], "/get?key=k&format=txt");
    assert!(anonymous.starts_with("HTTP/1.1 401 "), "{anonymous}");
    assert!(
        anonymous
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{anonymous}"
    );
    let bad = curl(
        dir.path(),
        &served,
        &["-H", "Authorization: Bearer not-the-password"],
        "/get?key=k&format=txt",
    );
    assert!(bad.starts_with("HTTP/1.1 401 "), "{bad}");
    assert_the_password_lets_http_in(dir.path(), &served);

    // The ycsb stores: redis with redis.password, http with the header.
    let resp_port = served.resp.port();
    workload_a(
        dir.path(),
        "redis",
        &[
            "redis.host=127.0.0.1".into(),
            format!("redis.port={resp_port}"),
            "redis.index=lex".into(),
            format!("redis.password={PASSWORD}"),
        ],
    );
    workload_a(
        dir.path(),
        "http",
        &[
            format!("http.url=http://127.0.0.1:{}", served.http.port()),
            format!("http.headers=Authorization: Bearer {PASSWORD}"),
        ],
    );
    // Without the password, the redis store is refused with one line that
    // says it needs one.
    let o = ycsb()
        .args(["load", "redis", "-p", "redis.host=127.0.0.1"])
        .args([
            "-p",
            &format!("redis.port={resp_port}"),
            "-p",
            "recordcount=10",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("needs a password"), "{}", stderr(&o));

    let err = served.stop();
    clean("serve's standard error", &err);
    let out = std::fs::read_to_string(dir.path().join("serve.stdout")).unwrap();
    clean("serve's standard output", &out);
}

#[test]
fn the_password_can_come_from_a_file() {
    require("redis-cli", "redis-tools");
    require("curl", "curl");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("serve.password");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let served = Served::start(
        dir.path(),
        &format!("serve.password_file={}", file.display()),
    );
    let refused = redis_cli(&served, None, &["PING"]);
    assert!(refused.contains("NOAUTH"), "{refused}");
    // The final newline is not part of the password.
    assert_eq!(redis_cli(&served, Some(PASSWORD), &["PING"]), "PONG");
    assert_the_password_lets_http_in(dir.path(), &served);
    let err = served.stop();
    clean("serve's standard error", &err);
}
