//! Security: servers bind loopback unless told otherwise and say where
//! they listen; passwords never reach standard output, standard error,
//! status lines or export files; no shell ever runs a command built from
//! strings.

mod common;
mod rel_support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use common::*;
use rel_support::*;

/// The address of a `ycsb serve: ... over <protocol> at <addr> (<scope>)`
/// line, with its scope.
fn listening(line: &str, protocol: &str) -> Option<(SocketAddr, String)> {
    let (_, rest) = line.split_once(&format!(" over {protocol} at "))?;
    let (addr, scope) = rest.split_once(' ')?;
    Some((addr.parse().ok()?, scope.to_string()))
}

#[test]
fn serve_binds_loopback_for_bare_ports_and_says_where() {
    let (mut child, mut lines) =
        spawn_watched(ycsb().args(["serve", "memory", "--resp", "0", "--http", "0"]));
    let mut found = Vec::new();
    for protocol in ["RESP", "HTTP"] {
        let line = lines
            .wait_for(Duration::from_secs(30), |l| {
                listening(l, protocol).is_some()
            })
            .unwrap_or_else(|| panic!("no {protocol} address line: {:?}", lines.seen));
        let (addr, scope) = listening(&line, protocol).unwrap();
        assert!(addr.ip().is_loopback(), "{line}");
        assert_ne!(addr.port(), 0, "the real port is printed: {line}");
        assert_eq!(scope, "(loopback only)", "{line}");
        found.push(addr);
    }
    // The printed RESP address is where it really serves.
    let mut s = TcpStream::connect(found[0]).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    let mut buf = [0u8; 16];
    let n = s.read(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"+PONG\r\n");
    drop(s);
    signal(&child, SIGTERM);
    let status = wait_bounded(&mut child, Duration::from_secs(30), "ycsb serve");
    let err = lines.rest();
    assert!(status.success(), "{err}");
    assert!(err.contains("ycsb serve: stopping"), "{err}");
}

#[test]
fn serve_defaults_to_loopback_addresses() {
    // Without address flags: either it serves on 127.0.0.1:6379 and
    // 127.0.0.1:8080 and says so, or those ports are taken and its one
    // error line names the loopback address it tried. Either proves the
    // default is loopback.
    let (mut child, mut lines) = spawn_watched(ycsb().args(["serve", "memory"]));
    let first = lines
        .wait_for(Duration::from_secs(30), |l| {
            listening(l, "RESP").is_some() || l.starts_with("ycsb: error: ")
        })
        .unwrap_or_else(|| panic!("no address or error line: {:?}", lines.seen));
    if first.starts_with("ycsb: error: ") {
        let status = wait_bounded(&mut child, Duration::from_secs(30), "ycsb serve");
        assert!(!status.success());
        assert!(first.contains("127.0.0.1:6379"), "{first}");
        return;
    }
    let (addr, scope) = listening(&first, "RESP").unwrap();
    assert_eq!(addr, "127.0.0.1:6379".parse().unwrap(), "{first}");
    assert_eq!(scope, "(loopback only)");
    let http = lines.wait_for(Duration::from_secs(30), |l| {
        listening(l, "HTTP").is_some() || l.starts_with("ycsb: error: ")
    });
    signal(&child, SIGTERM);
    wait_bounded(&mut child, Duration::from_secs(30), "ycsb serve");
    let http = http.expect("an HTTP line");
    match listening(&http, "HTTP") {
        Some((addr, _)) => assert_eq!(addr, "127.0.0.1:8080".parse().unwrap(), "{http}"),
        None => assert!(http.contains("127.0.0.1:8080"), "{http}"),
    }
}

const PASSWORD: &str = "S3cret-pw-9f2c1e";

/// Asserts that `PASSWORD` is nowhere in `text`.
fn clean(what: &str, text: &str) {
    assert!(
        !text.contains(PASSWORD),
        "the password leaked into {what}: {text}"
    );
}

#[test]
fn a_redis_password_never_appears_in_output_status_lines_or_exports() {
    let redis = Redis::start(&["--requirepass", PASSWORD]);
    let dir = tempfile::tempdir().unwrap();
    let port = format!("redis.port={}", redis.port);
    let password = format!("redis.password={PASSWORD}");
    // The password also comes from a property file, whose origin
    // (file:line) is reported.
    let file = dir.path().join("secret.properties");
    std::fs::write(&file, format!("redis.password={PASSWORD}\n")).unwrap();

    for (exporter, name) in [
        ("json", "out.json"),
        ("jsonarray", "out.jsonarray"),
        ("text", "out.txt"),
    ] {
        let export = dir.path().join(name);
        let o = ycsb()
            .args(["-load", "-run", "-db", "redis", "-P", "workloads/workloada"])
            .args(["-p", &port, "-p", &password, "-P"])
            .arg(&file)
            .args(["-p", "recordcount=200", "-p", "operationcount=0"])
            .args(["-p", "maxexecutiontime=2", "-s", "-p", "status.interval=1"])
            .args(["-p", &format!("exporter={exporter}"), "-p"])
            .arg(format!("exportfile={}", export.display()))
            .output()
            .unwrap();
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(o.status.success(), "{exporter}: {err}");
        // It really authenticated and ran.
        assert!(err.contains(" sec: "), "{exporter}: no status line: {err}");
        clean("standard output", &out);
        clean("standard error (status lines, command line)", &err);
        let exported = std::fs::read_to_string(&export).unwrap();
        assert!(exported.contains("READ"), "{exporter}: {exported}");
        clean(&format!("the {exporter} export"), &exported);
        assert_no_password_in_dir(dir.path(), &file);
    }

    // A wrong password fails with one clear line that does not echo it.
    let wrong = "Wr0ng-pw-77ab";
    let o = ycsb()
        .args(["load", "redis", "-p", &port])
        .args([
            "-p",
            &format!("redis.password={wrong}"),
            "-p",
            "recordcount=10",
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(!err.contains(wrong), "the wrong password leaked: {err}");
    assert!(!stdout(&o).contains(wrong));
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn basic_verbose_property_dump_redacts_passwords() {
    let o = ycsb()
        .args([
            "load",
            "basic",
            "-p",
            "basicdb.verbose=true",
            "-p",
            "recordcount=2",
        ])
        .args(["-p", &format!("redis.password={PASSWORD}")])
        .args(["-p", &format!("http.password={PASSWORD}")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("properties"), "{}", stdout(&o));
    clean("basicdb's property dump", &stdout(&o));
    clean("standard error", &stderr(&o));
}

/// Credentials in values (http.headers' Authorization, cookies, API keys;
/// user:password in URL-valued properties) and under misspelled secret
/// names never reach the command line shown, the JSON export or an error.
#[test]
fn credentials_in_headers_urls_and_misspelled_names_are_redacted() {
    let secrets = [
        "Tok3n-aa11",
        "C00kie-bb22",
        "Ap1key-cc33",
        "Url-pw-dd44",
        "Other-url-pw-ee55",
        "Misspelt-ff66",
    ];
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("out.json");
    let headers = format!(
        "http.headers=Authorization: Bearer {} | Cookie: sid={} | X-Api-Key: {} | Accept: */*",
        secrets[0], secrets[1], secrets[2]
    );
    let o = ycsb()
        .args(["load", "basic", "-p", "recordcount=5", "-p", &headers])
        .args([
            "-p",
            &format!("http.url=http://alice:{}@127.0.0.1:1/", secrets[3]),
        ])
        .args([
            "-p",
            &format!("backup.url=redis://:{}@10.0.0.1:6379", secrets[4]),
        ])
        .args(["-p", &format!("redis.pasword={}", secrets[5])])
        .args(json_export(&export))
        .output()
        .unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{err}");
    let exported = std::fs::read_to_string(&export).unwrap();
    let command_line = err
        .lines()
        .find(|l| l.starts_with("Command line: "))
        .unwrap();
    for secret in secrets {
        for (what, text) in [
            ("stdout", &out),
            ("stderr", &err),
            ("the export", &exported),
        ] {
            assert!(
                !text.contains(secret),
                "{secret} leaked into {what}: {text}"
            );
        }
    }
    // What is not secret is still shown.
    assert!(command_line.contains("Accept: */*"), "{command_line}");
    assert!(
        command_line.contains("http://<redacted>@127.0.0.1:1/"),
        "{command_line}"
    );
    assert!(exported.contains("Authorization: <redacted>"), "{exported}");

    // An error about such a URL does not quote it either.
    let o = ycsb()
        .args(["load", "http", "-p", "recordcount=5"])
        .args([
            "-p",
            &format!("http.url=http://alice:{}@127.0.0.1:1/", secrets[3]),
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("http.url"), "{err}");
    assert!(!err.contains(secrets[3]), "{err}");
}

/// Issue 33 item 9: a client store given an address that carries a
/// password (etcd's endpoints, redis's host as a URL or `user:pw@host`,
/// the http store's URL) never prints it: not in the command line shown,
/// not in the error of a connection to a closed loopback port, not in a
/// refusal of the value. Nothing needs to listen there.
#[test]
fn a_password_in_a_client_store_s_address_is_never_printed() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cases = [
        (
            "etcd",
            format!("etcd.endpoints=http://root:{PASSWORD}@127.0.0.1:{port}"),
        ),
        (
            "etcd",
            format!("etcd.endpoints=root:{PASSWORD}@127.0.0.1:{port}"),
        ),
        (
            "etcd",
            format!("etcd.endpoints=ftp://root:{PASSWORD}@127.0.0.1:{port}"),
        ),
        (
            "redis",
            format!("redis.host=redis://root:{PASSWORD}@127.0.0.1"),
        ),
        ("redis", format!("redis.host=root:{PASSWORD}@127.0.0.1")),
        (
            "http",
            format!("http.url=http://root:{PASSWORD}@127.0.0.1:{port}/"),
        ),
    ];
    for (store, address) in cases {
        let o = ycsb()
            .args(["load", store, "-p", "recordcount=1", "-p"])
            .arg(format!("redis.port={port}"))
            .args(["-p", &address])
            .output()
            .unwrap();
        let err = stderr(&o);
        assert!(!o.status.success(), "{address}: {err}");
        clean(&format!("{address}'s stderr"), &err);
        clean(&format!("{address}'s stdout"), &stdout(&o));
        assert!(err.contains("<redacted>@"), "{address}: {err}");
    }
}

/// No file in `dir` but the property file itself holds the password (no
/// temporary export or log file kept it).
fn assert_no_password_in_dir(dir: &Path, except: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path == except {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        clean(
            &path.display().to_string(),
            &String::from_utf8_lossy(&bytes),
        );
    }
}

/// Every Rust source of the workspace (crates and xtask).
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && !name.starts_with("target") {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// No program of the project runs a shell: a shell given a string built
/// from user input is an injection. Commands are argument vectors
/// (`Command::new(program).args(...)`). This scans every Rust source for
/// a shell as the program, and for C's `system`/`popen`.
#[test]
fn no_shell_is_ever_invoked() {
    let root = root();
    let mut files = Vec::new();
    sources(&root.join("crates"), &mut files);
    sources(&root.join("xtask"), &mut files);
    assert!(files.len() > 20, "{} sources found", files.len());
    let shells = [
        "sh",
        "bash",
        "dash",
        "zsh",
        "ksh",
        "fish",
        "cmd",
        "powershell",
    ];
    let mut offences = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // This test names what it looks for.
        if file.ends_with("tests/security.rs") {
            continue;
        }
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        for shell in shells {
            for prefix in ["", "/bin/", "/usr/bin/", "/usr/bin/env\",\""] {
                let needle = format!("Command::new(\"{prefix}{shell}\"");
                if compact.contains(&needle) {
                    offences.push(format!("{}: {needle}", file.display()));
                }
            }
        }
        for needle in ["fnsystem(", "fnpopen(", "libc::system(", "libc::popen("] {
            if compact.contains(needle) {
                offences.push(format!("{}: {needle}", file.display()));
            }
        }
    }
    assert!(offences.is_empty(), "shell invocations: {offences:#?}");
}

/// Every server the project's code and tests start binds loopback: a
/// redis-server is always given `--bind 127.0.0.1`, nginx configurations
/// listen on 127.0.0.1, listeners bound to a literal address use a
/// loopback one, and no source names the wildcard address (but
/// serve_auth.rs, whose servers must present a password). (`ycsb serve`'s
/// own defaults are checked by running it, above.)
#[test]
fn every_server_started_by_code_or_tests_binds_loopback() {
    let root = root();
    let mut files = Vec::new();
    sources(&root.join("crates"), &mut files);
    sources(&root.join("xtask"), &mut files);
    let mut offences = Vec::new();
    let mut redis_spawns = 0;
    for file in &files {
        // These two bind the unspecified address on purpose: to check it
        // is refused without a password, and guarded with one.
        if file.ends_with("tests/security.rs") || file.ends_with("tests/serve_auth.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.display().to_string();
        for wildcard in ["0.0.0.0", "[::]:", "\"::\""] {
            if text.contains(wildcard) {
                offences.push(format!("{name}: names the wildcard address {wildcard}"));
            }
        }
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("listen ") && !trimmed.contains("127.0.0.1") {
                offences.push(format!("{name}:{}: {trimmed}", i + 1));
            }
            if let Some(rest) = line.split("TcpListener::bind(\"").nth(1) {
                if !rest.starts_with("127.0.0.1") && !rest.starts_with("localhost") {
                    offences.push(format!("{name}:{}: {}", i + 1, line.trim()));
                }
            }
        }
        // A redis-server started as a child: its arguments (within the
        // next lines) must bind loopback.
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        for (at, _) in compact.match_indices("\"redis-server\"") {
            let window = &compact[at..(at + 400).min(compact.len())];
            let is_spawn = window.starts_with("\"redis-server\")")
                || window.starts_with("\"redis-server\",\"--port\"");
            // `redis-server --version` asks for the version, serves nothing.
            let version_query = window[..window.len().min(80)].contains("\"--version\"");
            if !is_spawn || version_query {
                continue;
            }
            redis_spawns += 1;
            if !window.contains("\"--bind\",\"127.0.0.1\"") {
                offences.push(format!("{name}: a redis-server without --bind 127.0.0.1"));
            }
        }
    }
    assert!(
        redis_spawns >= 3,
        "found only {redis_spawns} redis-server spawns"
    );
    assert!(offences.is_empty(), "{offences:#?}");
}

/// The data directories the shipped property files name (YCSB-cpp's
/// `/tmp/ycsb-rocksdb`-style defaults): shared by every user and run on
/// the machine.
fn shipped_data_dirs() -> Vec<String> {
    let mut dirs = Vec::new();
    for engine in embedded_engines() {
        for entry in std::fs::read_dir(root().join(engine.name)).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for line in text.lines() {
                if let Some((key, value)) = line.split_once('=') {
                    if [".dbname", ".dir", ".path", ".dbpath", ".home"]
                        .iter()
                        .any(|suffix| key.trim().ends_with(suffix))
                    {
                        dirs.push(value.trim().to_string());
                    }
                }
            }
        }
    }
    assert!(!dirs.is_empty(), "no dbname in the shipped property files");
    dirs
}

/// The test code of a source: all of a file under `tests/`, `benches/`
/// or `examples/`; of any other file, what follows its `#[cfg(test)]`.
fn test_code(path: &Path, text: &str) -> Option<String> {
    let p = path.to_string_lossy();
    if ["/tests/", "/benches/", "/examples/"]
        .iter()
        .any(|d| p.contains(d))
    {
        return Some(text.to_string());
    }
    text.find("#[cfg(test)]").map(|i| text[i..].to_string())
}

/// No test, bench or example writes to a shared path: the data
/// directories of the shipped property files (another user's or another
/// run's database) or anything under /dev. Each uses its own temporary
/// directory. A literal is allowed only in an assertion that compares a
/// parsed default (which opens nothing), in comments, and as `/dev/zero`
/// given as an *input* the tool must refuse unread (issue 17's `-P
/// /dev/zero`): nothing writes to it, and a device made in a temporary
/// directory would not be the file users type.
#[test]
fn no_test_touches_shared_default_paths_or_dev() {
    // Built at run time, so that this file's own needles do not match.
    let mut needles = shipped_data_dirs();
    needles.push(["/", "tmp/ycsb-"].concat());
    needles.push(["/", "dev/"].concat());
    let mut files = Vec::new();
    sources(&root().join("crates"), &mut files);
    sources(&root().join("xtask"), &mut files);
    sources(&root().join("examples"), &mut files);
    let mut offences = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let Some(code) = test_code(path, &text) else {
            continue;
        };
        for line in code.lines() {
            let t = line.trim_start();
            if t.starts_with("//") || t.starts_with("assert") {
                continue;
            }
            let dev_zero = ["/", "dev/zero"].concat();
            let line = &line.replace(dev_zero.as_str(), "");
            if let Some(n) = needles.iter().find(|n| line.contains(n.as_str())) {
                offences.push(format!("{}: {n}: {}", path.display(), t));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "tests must use their own temporary directories:\n{}",
        offences.join("\n")
    );
}
