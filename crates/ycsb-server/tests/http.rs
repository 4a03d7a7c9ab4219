//! The http store against `serve(&HTTP, ..)`, and that server against raw,
//! malformed and unusual requests. Everything runs on 127.0.0.1 with
//! ephemeral ports.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ycsb_db::testing::{assert_conforms, record_bytes, Contract, Op, ReferenceStore, Scans};
use ycsb_db::{
    Fields, Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store, StoreThread,
    ThreadContext,
};
use ycsb_http::HttpStore;
use ycsb_server::http::HTTP;
use ycsb_server::{serve, ServerConfig, ServerHandle};

/// The server's back end in these tests: the reference store, where a key
/// starting with `fail` makes reads and inserts fail with `ERROR`, to see
/// a 500 reach the client, and deleting `panic` panics, as a buggy store
/// would.
fn map_store() -> ReferenceStore {
    ReferenceStore::new().with_fault(|op, _, key| match op {
        Op::Read | Op::Insert if key.starts_with("fail") => Some(Status::Error),
        Op::Delete if key == "panic" => panic!("a store bug"),
        _ => None,
    })
}

fn start(config: ServerConfig) -> (Arc<ReferenceStore>, ServerHandle) {
    let store = Arc::new(map_store());
    let handle = serve(&HTTP, store.clone(), "127.0.0.1:0".parse().unwrap(), config).unwrap();
    (store, handle)
}

fn client(addr: SocketAddr, extra: &[(&str, &str)]) -> HttpStore {
    let mut p = Properties::new().with("http.url", format!("http://{addr}"));
    for (k, v) in extra {
        p = p.with(*k, v);
    }
    HttpStore::open(&p).unwrap()
}

/// Every operation through a preset, checked against the server's store.
fn exercise(thread: &mut dyn StoreThread, store: &ReferenceStore, scans: bool) {
    let table = "usertable";
    // Values with every byte, keys with URL-significant characters.
    let all_bytes: Vec<u8> = (0..=255u8).collect();
    let v1 = record_bytes(&[("field0", b"zero"), ("field1", &all_bytes)]);
    let odd_key = "user a/b?c=d&e+f%g#h,i";
    assert_eq!(thread.insert(table, "user1", &v1), Status::Ok);
    assert_eq!(thread.insert(table, odd_key, &v1), Status::Ok);
    assert_eq!(store.get(table, "user1"), Some(v1.clone()));
    assert_eq!(store.get(table, odd_key), Some(v1.clone()));

    let mut out = Record::new();
    assert_eq!(
        thread.read(&ReadOp::new(table, "user1", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out, v1);
    out.clear();
    assert_eq!(
        thread.read(&ReadOp::new(table, odd_key, Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out, v1);
    let only = vec!["field1".to_string()];
    out.clear();
    assert_eq!(
        thread.read(&ReadOp::new(table, "user1", Fields::Only(&only)), &mut out),
        Status::Ok
    );
    assert_eq!(out, record_bytes(&[("field1", &all_bytes)]));

    // Update merges: field1 replaced, field2 added, field0 kept.
    let change = record_bytes(&[("field1", b"one"), ("field2", b"two")]);
    assert_eq!(thread.update(table, "user1", &change), Status::Ok);
    let merged = record_bytes(&[("field0", b"zero"), ("field1", b"one"), ("field2", b"two")]);
    assert_eq!(store.get(table, "user1"), Some(merged));
    assert_eq!(thread.update(table, "nobody", &change), Status::NotFound);

    out.clear();
    assert_eq!(
        thread.read(&ReadOp::new(table, "nobody", Fields::All), &mut out),
        Status::NotFound
    );
    assert_eq!(
        thread.read(&ReadOp::new(table, "fail1", Fields::All), &mut out),
        Status::Error
    );
    assert_eq!(thread.insert(table, "fail1", &v1), Status::Error);

    let mut scan = ScanResult::new();
    if scans {
        for i in 2..6 {
            let v = record_bytes(&[("field0", format!("v{i}").as_bytes())]);
            assert_eq!(thread.insert(table, &format!("user{i}"), &v), Status::Ok);
        }
        assert_eq!(
            thread.scan(&ScanOp::new(table, "user2", 3, Fields::All), &mut scan),
            Status::Ok
        );
        let got: Vec<_> = scan
            .iter()
            .map(|(k, r)| (k.to_string(), r.get("field0").unwrap().to_vec()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("user2".to_string(), b"v2".to_vec()),
                ("user3".to_string(), b"v3".to_vec()),
                ("user4".to_string(), b"v4".to_vec()),
            ]
        );
        scan.clear();
        assert_eq!(
            thread.scan(&ScanOp::new(table, "zzz", 3, Fields::All), &mut scan),
            Status::Ok
        );
        assert!(scan.is_empty());
    } else {
        assert_eq!(
            thread.scan(&ScanOp::new(table, "user1", 3, Fields::All), &mut scan),
            Status::NotImplemented
        );
    }

    assert_eq!(thread.delete(table, "user1"), Status::Ok);
    assert_eq!(thread.delete(table, odd_key), Status::Ok);
    assert_eq!(thread.delete(table, "user1"), Status::NotFound);
    assert!(store.get(table, "user1").is_none());
}

#[test]
fn simpleleveldb_preset_against_the_server() {
    let (store, server) = start(ServerConfig::default());
    let http = client(server.local_addr(), &[]);
    let mut thread = http.thread(ThreadContext::new(0, 1)).unwrap();
    exercise(&mut *thread, &store, true);
    // Keep-alive: every request above went over one connection.
    assert_eq!(store.threads(), 1);
    drop(thread);
    server.stop().unwrap();
}

#[test]
fn webdav_preset_against_the_server() {
    let (store, server) = start(ServerConfig::default());
    let http = client(server.local_addr(), &[("http.preset", "webdav")]);
    let mut thread = http.thread(ThreadContext::new(0, 1)).unwrap();
    exercise(&mut *thread, &store, false);
    assert_eq!(store.threads(), 1);
}

#[test]
fn partial_updates_and_base64_bodies() {
    let (store, server) = start(ServerConfig::default());
    let addr = server.local_addr();
    // WebDAV with PATCH: the server merges.
    let http = client(
        addr,
        &[
            ("http.preset", "webdav"),
            ("http.update.method", "PATCH"),
            ("http.update.partial", "true"),
        ],
    );
    let mut thread = http.thread(ThreadContext::new(0, 1)).unwrap();
    exercise(&mut *thread, &store, false);
    // simpleleveldb's /put with the record as a POST body, /update merging.
    let http = client(
        addr,
        &[
            ("http.insert.method", "POST"),
            ("http.insert.url", "/put?key={key}&format=txt"),
            ("http.update.url", "/update?key={key}&format=txt"),
            ("http.update.partial", "true"),
        ],
    );
    let mut thread = http.thread(ThreadContext::new(0, 1)).unwrap();
    exercise(&mut *thread, &store, true);
}

#[test]
fn one_connection_per_client_thread() {
    let (store, server) = start(ServerConfig::default());
    let http = client(server.local_addr(), &[("http.preset", "webdav")]);
    std::thread::scope(|s| {
        for t in 0..4 {
            let http = &http;
            s.spawn(move || {
                let mut thread = http.thread(ThreadContext::new(t, 4)).unwrap();
                let mut out = Record::new();
                for i in 0..50 {
                    let key = format!("t{t}k{i}");
                    let v = record_bytes(&[("f", key.as_bytes())]);
                    assert_eq!(thread.insert("usertable", &key, &v), Status::Ok);
                    out.clear();
                    assert_eq!(
                        thread.read(&ReadOp::new("usertable", &key, Fields::All), &mut out),
                        Status::Ok
                    );
                    assert_eq!(out, v);
                }
            });
        }
    });
    assert_eq!(store.threads(), 4);
    assert_eq!(store.table_len("usertable"), 200);
}

#[test]
fn a_stopped_server_is_unavailable() {
    let (_store, server) = start(ServerConfig::default());
    let addr = server.local_addr();
    let http = client(addr, &[]);
    let mut thread = http.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(thread.delete("usertable", "x"), Status::NotFound);
    // Stopping closes the idle keep-alive connection held by the client.
    server.stop().unwrap();
    assert_eq!(thread.delete("usertable", "x"), Status::ServiceUnavailable);
    let err = match http.thread(ThreadContext::new(1, 2)) {
        Ok(_) => panic!("connected to a stopped server"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(&addr.to_string()), "{err}");
}

/// A scripted HTTP server: answers the n-th request on each connection
/// with `answers[n]`, closing the connection after an answer when the
/// script says so, and records how many connections it accepted.
fn scripted(
    answers: Vec<(&'static str, bool)>,
) -> (SocketAddr, Arc<AtomicUsize>, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let seen = connections.clone();
    let handle = std::thread::spawn(move || {
        let mut next = 0;
        while next < answers.len() {
            let (mut s, _) = listener.accept().unwrap();
            seen.fetch_add(1, Ordering::SeqCst);
            while next < answers.len() {
                let mut buf = [0u8; 4096];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = s.read(&mut buf).unwrap();
                    if n == 0 {
                        break;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
                if got.is_empty() {
                    break;
                }
                let (answer, close) = answers[next];
                next += 1;
                s.write_all(answer.as_bytes()).unwrap();
                if close {
                    break;
                }
            }
        }
    });
    (addr, connections, handle)
}

#[test]
fn status_codes_map_to_statuses() {
    let (addr, _, server) = scripted(vec![
        (
            "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops",
            false,
        ),
        (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n",
            false,
        ),
        ("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", false),
        (
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
            false,
        ),
        (
            "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nnop\r\n0\r\n\r\n",
            false,
        ),
        ("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", false),
        (
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            false,
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nnot a record",
            false,
        ),
        ("garbage\r\n\r\n", true),
    ]);
    let http = client(addr, &[("http.preset", "webdav")]);
    let mut t = http.thread(ThreadContext::new(0, 1)).unwrap();
    let r = record_bytes(&[("f", b"v")]);
    assert_eq!(t.delete("t", "k"), Status::Error);
    assert_eq!(t.delete("t", "k"), Status::ServiceUnavailable);
    assert_eq!(t.delete("t", "k"), Status::Forbidden);
    assert_eq!(t.delete("t", "k"), Status::BadRequest);
    assert_eq!(t.delete("t", "k"), Status::NotFound);
    assert_eq!(t.insert("t", "k", &r), Status::Ok);
    assert_eq!(t.insert("t", "k", &r), Status::Ok);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new("t", "k", Fields::All), &mut out),
        Status::UnexpectedState
    );
    assert_eq!(t.delete("t", "k"), Status::Error);
    server.join().unwrap();
}

#[test]
fn reconnects_after_the_server_closes() {
    let (addr, connections, server) = scripted(vec![
        // Announced close.
        ("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", true),
        // Silent close of an idle keep-alive connection.
        ("HTTP/1.1 204 No Content\r\n\r\n", true),
        ("HTTP/1.1 204 No Content\r\n\r\n", false),
        // A body delimited by the end of the connection.
        ("HTTP/1.0 204 No Content\r\n\r\n", true),
        ("HTTP/1.1 204 No Content\r\n\r\n", false),
    ]);
    let http = client(addr, &[("http.preset", "webdav")]);
    let mut t = http.thread(ThreadContext::new(0, 1)).unwrap();
    for i in 0..5 {
        assert_eq!(t.delete("t", "k"), Status::Ok, "request {i}");
    }
    server.join().unwrap();
    assert_eq!(connections.load(Ordering::SeqCst), 4);
}

#[test]
fn a_silent_server_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let http = client(addr, &[("http.timeout", "200")]);
    let mut t = http.thread(ThreadContext::new(0, 1)).unwrap();
    let (_held, _) = listener.accept().unwrap();
    assert_eq!(t.delete("t", "k"), Status::ServiceUnavailable);
}

/// Sends `request` on a fresh connection and returns everything the
/// server sends until it closes or goes quiet.
fn raw(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    s.write_all(request).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Whether the server closed the connection after answering `request`.
fn closes_after(addr: SocketAddr, request: &[u8]) -> (String, bool) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(request).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    let closed = loop {
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got);
                if let Some(head_end) = text.find("\r\n\r\n") {
                    let len: usize = text[..head_end]
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    if got.len() >= head_end + 4 + len {
                        // The whole answer is here: is the connection kept?
                        s.set_read_timeout(Some(Duration::from_millis(300)))
                            .unwrap();
                        break matches!(s.read(&mut buf), Ok(0));
                    }
                }
            }
            Err(e) => panic!("no answer: {e}"),
        }
    };
    (String::from_utf8_lossy(&got).into_owned(), closed)
}

#[test]
fn malformed_requests_get_400_and_a_closed_connection() {
    let mut config = ServerConfig::default();
    config.max_message = 1000;
    let (_store, server) = start(config);
    let addr = server.local_addr();
    for bad in [
        &b"garbage\r\n\r\n"[..],
        b"GET /get?key=a HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        b"GET /get?key=a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"GET /get?key=a HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        b"PUT /t/k HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"GET /get?key=a HTTP/1.1\r\nBad Header\r\n\r\n",
        b"\x00\x01\x02\x03\r\n\r\n",
    ] {
        let (answer, closed) = closes_after(addr, bad);
        assert!(answer.starts_with("HTTP/1.1 400 "), "{bad:?}: {answer}");
        assert!(closed, "{bad:?}");
    }
    let mut huge = b"GET /get?key=a HTTP/1.1\r\nX: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 70_000));
    huge.extend_from_slice(b"\r\n\r\n");
    let (answer, closed) = closes_after(addr, &huge);
    assert!(answer.starts_with("HTTP/1.1 431 ") && closed, "{answer}");
    let (answer, closed) = closes_after(addr, b"PUT /t/k HTTP/1.1\r\nContent-Length: 5000\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 413 ") && closed, "{answer}");
    let mut chunked = b"PUT /t/k HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..3 {
        chunked.extend_from_slice(b"1f4\r\n");
        chunked.extend(std::iter::repeat_n(b'a', 500));
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let (answer, closed) = closes_after(addr, &chunked);
    assert!(answer.starts_with("HTTP/1.1 413 ") && closed, "{answer}");
    // A truncated request: the server just closes.
    assert_eq!(raw(addr, b"GET /get?key=a HTTP/1.1\r\nHost: x"), "");
    // Bad requests that are well-formed HTTP keep the connection.
    for (request, status) in [
        (&b"GET /get?key=%zz&format=txt HTTP/1.1\r\n\r\n"[..], "400"),
        (b"GET /nothing HTTP/1.1\r\n\r\n", "404"),
        (b"GET /a/ HTTP/1.1\r\n\r\n", "404"),
        (b"OPTIONS /t/k HTTP/1.1\r\n\r\n", "405"),
        (b"PUT /t/k HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", "400"),
        (b"GET /t/%FF HTTP/1.1\r\n\r\n", "400"),
        (b"GET /get?key=%FF&format=txt HTTP/1.1\r\n\r\n", "400"),
        (
            b"GET /range_match?start=b&end=a&format=txt HTTP/1.1\r\n\r\n",
            "400",
        ),
        (
            b"GET /range_match?start=a&end=b&limit=x&format=txt HTTP/1.1\r\n\r\n",
            "400",
        ),
        (b"GET /mput?format=txt HTTP/1.1\r\n\r\n", "400"),
        (
            b"POST /mput?format=txt HTTP/1.1\r\nContent-Length: 6\r\n\r\nnocomma",
            "400",
        ),
    ] {
        let (answer, closed) = closes_after(addr, request);
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status} ")),
            "{request:?}: {answer}"
        );
        assert!(!closed, "{request:?}");
    }
}

/// The base64url text of a one-field record, as simpleleveldb values are.
fn value_text(name: &str, value: &[u8]) -> String {
    let (mut scratch, mut text) = (Vec::new(), Vec::new());
    ycsb_http::encoding::encode_record_text(
        &record_bytes(&[(name, value)]),
        &mut scratch,
        &mut text,
    );
    String::from_utf8(text).unwrap()
}

#[test]
fn simpleleveldb_endpoints_speak_txt_and_json() {
    let (store, server) = start(ServerConfig::default());
    let addr = server.local_addr();
    let a = value_text("f", b"A");
    let b = value_text("f", b"B");
    let c = value_text("f", b"C");
    let body = |answer: &str| {
        answer
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default()
    };

    let (answer, _) = closes_after(
        addr,
        format!("GET /put?key=k1&value={a}&format=txt HTTP/1.1\r\n\r\n").as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    // A value as a POST body, with Expect: 100-continue.
    let answer = raw(
        addr,
        format!(
            "POST /put?key=k2 HTTP/1.1\r\nExpect: 100-continue\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{b}",
            b.len()
        )
        .as_bytes(),
    );
    assert!(
        answer.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 "),
        "{answer}"
    );
    // mput with a separator.
    let (answer, _) = closes_after(
        addr,
        format!(
            "POST /mput?separator=:&format=txt HTTP/1.1\r\nContent-Length: {}\r\n\r\nk3:{c}\n",
            c.len() + 4
        )
        .as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    assert_eq!(store.table_len("usertable"), 3);

    let (answer, _) = closes_after(addr, b"GET /get?key=k1&format=txt HTTP/1.1\r\n\r\n");
    assert_eq!(body(&answer), format!("k1,{a}\n"));
    let (answer, _) = closes_after(addr, b"GET /get?key=k1 HTTP/1.1\r\n\r\n");
    assert_eq!(
        body(&answer),
        format!("{{\"status_code\": 200, \"status_txt\": \"OK\", \"data\": \"{a}\"}}\n")
    );
    // JSON errors keep HTTP 200, as simpleleveldb does; txt uses the code.
    let (answer, _) = closes_after(addr, b"GET /get?key=none HTTP/1.1\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    assert!(
        body(&answer).contains("\"status_code\": 404, \"status_txt\": \"NOT_FOUND\""),
        "{answer}"
    );
    let (answer, _) = closes_after(addr, b"GET /get?key=none&format=txt HTTP/1.1\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    assert_eq!(body(&answer), "DB_ERROR: NOT_FOUND");
    let (answer, _) = closes_after(addr, b"GET /put?format=txt HTTP/1.1\r\n\r\n");
    assert_eq!(body(&answer), "DB_ERROR: MISSING_ARG_KEY");
    let (answer, _) = closes_after(addr, b"GET /put?key=x&format=txt HTTP/1.1\r\n\r\n");
    assert_eq!(body(&answer), "DB_ERROR: MISSING_ARG_VALUE");
    let (answer, _) = closes_after(addr, b"GET /put?key=x&value=!!&format=txt HTTP/1.1\r\n\r\n");
    assert_eq!(body(&answer), "DB_ERROR: INVALID_VALUE");

    let (answer, _) = closes_after(
        addr,
        b"GET /mget?key=k1&key=missing&key=k3&format=txt HTTP/1.1\r\n\r\n",
    );
    assert_eq!(body(&answer), format!("k1,{a}\nk3,{c}\n"));
    let (answer, _) = closes_after(addr, b"GET /mget?key=k2 HTTP/1.1\r\n\r\n");
    assert!(
        body(&answer).contains(&format!(
            "\"data\": [{{\"key\": \"k2\", \"value\": \"{b}\"}}]"
        )),
        "{answer}"
    );
    let (answer, _) = closes_after(
        addr,
        b"GET /range_match?start=k1&end=k2&format=txt HTTP/1.1\r\n\r\n",
    );
    assert_eq!(body(&answer), format!("k1,{a}\nk2,{b}\n"));
    let (answer, _) = closes_after(
        addr,
        b"GET /range_match?start=k2&end=k9&limit=0&format=txt HTTP/1.1\r\n\r\n",
    );
    assert_eq!(body(&answer), format!("k2,{b}\nk3,{c}\n"));
    let (answer, _) = closes_after(
        addr,
        b"GET /fwmatch?key=k&limit=2&format=txt HTTP/1.1\r\n\r\n",
    );
    assert_eq!(body(&answer), format!("k1,{a}\nk2,{b}\n"));
    let (answer, _) = closes_after(addr, b"GET /del?key=k1&format=txt HTTP/1.1\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    let (answer, _) = closes_after(addr, b"GET /del?key=k1&format=txt HTTP/1.1\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
}

#[test]
fn range_pages_through_many_records() {
    let (store, server) = start(ServerConfig::default());
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    for i in 0..1234 {
        let key = format!("key{i:05}");
        assert_eq!(
            t.insert("usertable", &key, &record_bytes(&[("f", b"x")])),
            Status::Ok
        );
    }
    let (answer, _) = closes_after(
        server.local_addr(),
        b"GET /fwmatch?key=key&limit=0&format=txt HTTP/1.1\r\n\r\n",
    );
    let body = answer.split_once("\r\n\r\n").unwrap().1;
    let keys: Vec<_> = body.lines().map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(keys.len(), 1234);
    assert_eq!(keys[0], "key00000");
    assert_eq!(keys[1233], "key01233");
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn keep_alive_pipelining_http10_and_head() {
    let (store, server) = start(ServerConfig::default());
    let addr = server.local_addr();
    let a = value_text("f", b"A");
    // Two pipelined requests in one write: both answered, in order.
    let answer = raw(
        addr,
        format!("GET /put?key=p&value={a}&format=txt HTTP/1.1\r\n\r\nGET /get?key=p&format=txt HTTP/1.1\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    assert_eq!(answer.matches("HTTP/1.1 200 OK").count(), 2, "{answer}");
    assert!(answer.ends_with(&format!("p,{a}\n")), "{answer}");
    // HTTP/1.0 without keep-alive closes; with it, stays open.
    let (_, closed) = closes_after(addr, b"GET /get?key=p&format=txt HTTP/1.0\r\n\r\n");
    assert!(closed);
    let (_, closed) = closes_after(
        addr,
        b"GET /get?key=p&format=txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    );
    assert!(!closed);
    // HEAD announces the length and sends no body.
    let answer = raw(
        addr,
        b"HEAD /usertable/p HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    assert!(answer.ends_with("\r\n\r\n"), "{answer}");
    assert!(!answer.contains("Content-Length: 0"), "{answer}");
    assert!(store.threads() >= 4);
}

#[test]
fn a_panicking_store_closes_only_its_connection() {
    let (store, server) = start(ServerConfig::default());
    let http = client(server.local_addr(), &[("http.preset", "webdav")]);
    let mut t = http.thread(ThreadContext::new(0, 1)).unwrap();
    // The server thread dies without answering; the client's retry on a
    // fresh connection meets the same fate.
    assert_eq!(t.delete("usertable", "panic"), Status::Error);
    // The same client thread reconnects and the server still serves.
    assert_eq!(
        t.insert("usertable", "k", &record_bytes(&[("f", b"v")])),
        Status::Ok
    );
    assert_eq!(t.delete("usertable", "k"), Status::Ok);
    assert_eq!(store.threads(), 3);
}

/// The memory and rocksdb stores served over HTTP keep the contract
/// through both presets: the simpleleveldb one scans in key order
/// (`range_match`), WebDAV has no scans.
#[test]
fn served_stores_keep_the_store_contract_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let rocks = ycsb_rocksdb::RocksStore::open(&ycsb_db::StoreContext::new(
        &Properties::new().with("rocksdb.dbname", dir.path().display()),
    ))
    .unwrap();
    // RocksDB's Delete cannot tell whether the key existed.
    let rocks_deletes = ycsb_db::testing::Deletes::MissingOk;
    let stores: [(&str, Arc<dyn Store>, Contract); 2] = [
        (
            "memory",
            Arc::new(ycsb_memory::MemoryStore::new()),
            Contract::new(),
        ),
        (
            "rocksdb",
            Arc::new(rocks),
            Contract::new().with_deletes(rocks_deletes),
        ),
    ];
    for (name, store, contract) in stores {
        let server = serve(
            &HTTP,
            store,
            "127.0.0.1:0".parse().unwrap(),
            ServerConfig::default(),
        )
        .unwrap();
        for (preset, scans) in [
            ("simpleleveldb", Scans::KeyOrder),
            ("webdav", Scans::NotImplemented),
        ] {
            eprintln!("{name} served over HTTP, {preset} preset");
            let http = client(server.local_addr(), &[("http.preset", preset)]);
            assert_conforms(&http, &contract.clone().with_scans(scans));
        }
        server.stop().unwrap();
    }
}

#[test]
fn both_presets_over_the_real_memory_store() {
    let memory = ycsb_memory::MemoryStore::new();
    let server = serve(
        &HTTP,
        Arc::new(memory.clone()),
        "127.0.0.1:0".parse().unwrap(),
        ServerConfig::default(),
    )
    .unwrap();
    let addr = server.local_addr();
    let simple = client(addr, &[]);
    let webdav = client(addr, &[("http.preset", "webdav")]);
    // Threads of both presets load interleaved halves of the keys at once.
    std::thread::scope(|s| {
        for (t, http) in [&simple, &webdav].into_iter().enumerate() {
            s.spawn(move || {
                let mut thread = http.thread(ThreadContext::new(t, 2)).unwrap();
                for i in (t..200).step_by(2) {
                    let key = format!("user{i:03}");
                    let v = record_bytes(&[("field0", key.as_bytes()), ("field1", b"x")]);
                    assert_eq!(thread.insert("usertable", &key, &v), Status::Ok);
                }
            });
        }
    });
    assert_eq!(memory.table_len("usertable"), 200);
    let mut s = simple.thread(ThreadContext::new(0, 2)).unwrap();
    let mut w = webdav.thread(ThreadContext::new(1, 2)).unwrap();
    // What one preset wrote the other reads: one record format for both.
    let mut out = Record::new();
    assert_eq!(
        w.read(&ReadOp::new("usertable", "user000", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(
        out,
        record_bytes(&[("field0", b"user000"), ("field1", b"x")])
    );
    assert_eq!(
        w.update("usertable", "user001", &record_bytes(&[("field1", b"y")])),
        Status::Ok
    );
    out.clear();
    assert_eq!(
        s.read(&ReadOp::new("usertable", "user001", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(
        out,
        record_bytes(&[("field0", b"user001"), ("field1", b"y")])
    );
    // simpleleveldb's range_match is the scan; the server pages through it.
    let mut scan = ScanResult::new();
    assert_eq!(
        s.scan(
            &ScanOp::new("usertable", "user100", 100, Fields::All),
            &mut scan
        ),
        Status::Ok
    );
    let keys: Vec<String> = scan.iter().map(|(k, _)| k.to_string()).collect();
    let expected: Vec<String> = (100..200).map(|i| format!("user{i:03}")).collect();
    assert_eq!(keys, expected);
    assert_eq!(s.delete("usertable", "user000"), Status::Ok);
    assert_eq!(w.delete("usertable", "user000"), Status::NotFound);
    assert_eq!(memory.table_len("usertable"), 199);
    drop((s, w));
    server.stop().unwrap();
}

/// With a password, every request needs `Authorization: Bearer
/// <password>`; others get 401 and a Bearer challenge before their body
/// is read, and nothing reaches the store.
#[test]
fn a_password_needs_a_bearer_token_on_every_request() {
    let password = ycsb_server::auth::Password::new("pw-7q");
    let (store, handle) = start(ServerConfig::default().with_password(password));
    let addr = handle.local_addr();
    let put = |auth: &str| {
        raw(
            addr,
            format!("PUT /t/k HTTP/1.1\r\nHost: x\r\n{auth}Content-Length: 3\r\nConnection: close\r\n\r\nabc")
                .as_bytes(),
        )
    };
    for (auth, challenge) in [
        ("", "WWW-Authenticate: Bearer realm=\"ycsb serve\"\r\n"),
        (
            "Authorization: Basic cHctN3E=\r\n",
            "WWW-Authenticate: Bearer realm=\"ycsb serve\"\r\n",
        ),
        ("Authorization: Bearer pw-7\r\n", "error=\"invalid_token\""),
        (
            "Authorization: Bearer pw-7qq\r\n",
            "error=\"invalid_token\"",
        ),
        (
            "Authorization: Bearer pw-7q\r\nAuthorization: Bearer pw-7q\r\n",
            "WWW-Authenticate: Bearer",
        ),
    ] {
        let answer = put(auth);
        assert!(
            answer.starts_with("HTTP/1.1 401 Unauthorized\r\n"),
            "{auth}: {answer}"
        );
        assert!(answer.contains(challenge), "{auth}: {answer}");
        assert!(answer.contains("Connection: close"), "{answer}");
        let get = raw(
            addr,
            format!("GET /get?key=k&format=txt HTTP/1.1\r\n{auth}\r\n").as_bytes(),
        );
        assert!(get.starts_with("HTTP/1.1 401 "), "{get}");
    }
    assert_eq!(
        store.table_len("t"),
        0,
        "a refused request reached the store"
    );

    // The right token: served, keep-alive as usual.
    let (answer, closed) = closes_after(
        addr,
        b"GET /get?key=missing&format=txt HTTP/1.1\r\nAuthorization: bearer pw-7q\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    assert!(!closed);

    // The http store sends it with http.headers.
    let authorised = client(addr, &[("http.headers", "Authorization: Bearer pw-7q")]);
    let mut t = authorised.thread(ThreadContext::new(0, 1)).unwrap();
    let mut r = Record::new();
    r.push("f", b"v");
    assert_eq!(t.insert("usertable", "user1", &r), Status::Ok);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new("usertable", "user1", Fields::All), &mut out),
        Status::Ok
    );
    let anonymous = client(addr, &[]);
    let mut t = anonymous.thread(ThreadContext::new(0, 1)).unwrap();
    assert_ne!(t.insert("usertable", "user2", &r), Status::Ok);
    assert_eq!(store.table_len("usertable"), 1);
}

/// An address other than loopback is refused without a password.
#[test]
fn only_loopback_serves_http_without_a_password() {
    let everywhere = SocketAddr::new(std::net::Ipv6Addr::UNSPECIFIED.into(), 0);
    let e = serve(
        &HTTP,
        Arc::new(map_store()),
        everywhere,
        ServerConfig::default(),
    )
    .unwrap_err();
    assert!(
        matches!(e, ycsb_server::ServeError::Unprotected(_)),
        "{e:?}"
    );
}
