//! The http store's WebDAV preset against a real third-party server:
//! Debian's nginx with the WebDAV module (package nginx-light), started
//! here in the foreground on a free 127.0.0.1 port with a private prefix,
//! and killed at the end.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ycsb_db::testing::{assert_conforms, record_bytes, Contract, Scans};
use ycsb_db::{
    Fields, Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store, ThreadContext,
};
use ycsb_http::HttpStore;

/// A running nginx, killed when dropped.
struct Nginx {
    child: Child,
    addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nginx_binary() -> PathBuf {
    let candidates = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/sbin")])
        .map(|d| d.join("nginx"));
    for c in candidates {
        if c.is_file() {
            return c;
        }
    }
    panic!("nginx is not installed: this test needs Debian's nginx-light (with the WebDAV module), which .ci/run installs (apt-get install nginx-light)");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

fn start_nginx() -> Nginx {
    let binary = nginx_binary();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    std::fs::create_dir(d.join("dav")).unwrap();
    let port = free_port();
    let conf = format!(
        r#"daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 64; }}
http {{
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    log_format conn '$connection $connection_requests $request_method $status';
    access_log {d}/access.log conn;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{port};
        root {d}/dav;
        location / {{
            dav_methods PUT DELETE;
            create_full_put_path on;
            client_max_body_size 16m;
        }}
    }}
}}
"#,
        d = d.display()
    );
    std::fs::write(d.join("nginx.conf"), conf).unwrap();
    let child = Command::new(&binary)
        .arg("-p")
        .arg(d)
        .arg("-c")
        .arg(d.join("nginx.conf"))
        .arg("-e")
        .arg(d.join("error.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let mut nginx = Nginx { child, addr, dir };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        // Serving, not just accepting: nginx accepts connections on its
        // listening socket before it answers them, and a first request
        // sent then failed (SERVICE_UNAVAILABLE) on a fresh machine.
        if answers_http(addr) {
            return nginx;
        }
        let exited = nginx.child.try_wait().ok().flatten();
        if exited.is_some() || Instant::now() > deadline {
            let log =
                std::fs::read_to_string(nginx.dir.path().join("error.log")).unwrap_or_default();
            panic!("nginx did not start on {addr} ({exited:?}):\n{log}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether an HTTP request to `addr` gets an HTTP status line back.
fn answers_http(addr: SocketAddr) -> bool {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    // OPTIONS, which the store never sends: the access-log checks leave
    // the probe out.
    let request = b"OPTIONS / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let mut reply = [0u8; 5];
    s.write_all(request).is_ok() && s.read_exact(&mut reply).is_ok() && &reply == b"HTTP/"
}

fn stored_file(root: &Path, table: &str, key: &str) -> Option<Vec<u8>> {
    std::fs::read(root.join("dav").join(table).join(key)).ok()
}

#[test]
fn webdav_preset_against_nginx() {
    let nginx = start_nginx();
    let props = Properties::new()
        .with("http.url", format!("http://{}", nginx.addr))
        .with("http.preset", "webdav");
    let store = HttpStore::open(&props).unwrap();
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let table = "usertable";
    let all_bytes: Vec<u8> = (0..=255u8).collect();
    let v1 = record_bytes(&[("field0", b"zero"), ("field1", &all_bytes)]);

    assert_eq!(t.insert(table, "user1", &v1), Status::Ok);
    // nginx wrote the record encoding as the file's contents.
    let mut expected = Vec::new();
    ycsb_http::encoding::encode_record(&v1, &mut expected);
    assert_eq!(
        stored_file(nginx.dir.path(), table, "user1"),
        Some(expected)
    );
    // A key that needs percent-encoding reaches nginx intact.
    assert_eq!(t.insert(table, "user a+b", &v1), Status::Ok);
    assert!(stored_file(nginx.dir.path(), table, "user a+b").is_some());

    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(table, "user1", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out, v1);
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(table, "user a+b", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out, v1);
    let only = vec!["field0".to_string()];
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(table, "user1", Fields::Only(&only)), &mut out),
        Status::Ok
    );
    assert_eq!(out, record_bytes(&[("field0", b"zero")]));

    // Update reads, merges and writes back (nginx answers 204 to a PUT
    // over an existing file).
    let change = record_bytes(&[("field1", b"one"), ("field2", b"two")]);
    assert_eq!(t.update(table, "user1", &change), Status::Ok);
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(table, "user1", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(
        out,
        record_bytes(&[("field0", b"zero"), ("field1", b"one"), ("field2", b"two")])
    );
    assert_eq!(t.update(table, "nobody", &change), Status::NotFound);

    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(table, "nobody", Fields::All), &mut out),
        Status::NotFound
    );
    let mut scan = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(table, "user1", 5, Fields::All), &mut scan),
        Status::NotImplemented
    );

    assert_eq!(t.delete(table, "user1"), Status::Ok);
    assert_eq!(t.delete(table, "user1"), Status::NotFound);
    assert_eq!(stored_file(nginx.dir.path(), table, "user1"), None);

    // A many-request run stays on one keep-alive connection.
    for i in 0..200 {
        let key = format!("k{i}");
        assert_eq!(t.insert(table, &key, &v1), Status::Ok);
        out.clear();
        assert_eq!(
            t.read(&ReadOp::new(table, &key, Fields::All), &mut out),
            Status::Ok
        );
    }
    drop(t);

    // nginx's access log names the connection of every request.
    let log = std::fs::read_to_string(nginx.dir.path().join("access.log")).unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| !l.contains(" OPTIONS ")).collect();
    assert!(lines.len() >= 400, "{} requests logged", lines.len());
    let connections: std::collections::BTreeSet<&str> =
        lines.iter().filter_map(|l| l.split(' ').next()).collect();
    assert_eq!(
        connections.len(),
        1,
        "requests used several connections:\n{log}"
    );
    assert!(lines.iter().any(|l| l.ends_with("PUT 201")), "{log}");
    assert!(lines.iter().any(|l| l.ends_with("PUT 204")), "{log}");
    assert!(lines.iter().any(|l| l.ends_with("DELETE 404")), "{log}");
}

/// WebDAV has no ordered listing: the preset's scans are not implemented.
#[test]
fn webdav_preset_keeps_the_store_contract() {
    let nginx = start_nginx();
    let props = Properties::new()
        .with("http.url", format!("http://{}", nginx.addr))
        .with("http.preset", "webdav");
    let store = HttpStore::open(&props).unwrap();
    assert_conforms(&store, &Contract::new().with_scans(Scans::NotImplemented));
}

#[test]
fn nginx_errors_map_to_statuses() {
    let nginx = start_nginx();
    // A method nginx does not allow there, and a server error from a PUT
    // into a path where a file stands in for a directory.
    let props = Properties::new()
        .with("http.url", format!("http://{}", nginx.addr))
        .with("http.preset", "webdav")
        .with("http.delete.method", "MKCOL");
    let store = HttpStore::open(&props).unwrap();
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let v = record_bytes(&[("f", b"v")]);
    assert_eq!(t.insert("t", "file", &v), Status::Ok);
    // MKCOL is not in dav_methods: 405, a client error.
    assert_eq!(t.delete("t", "x"), Status::BadRequest);
    // A PUT below a regular file: nginx cannot create the directory and
    // answers 500, an ERROR.
    assert_eq!(t.insert("t/file", "below", &v), Status::Error);
}
