//! `serve(&RESP, ..)` over the real memory store, driven by the redis store,
//! `redis-cli` and `redis-benchmark`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use ycsb_db::testing::{assert_conforms, Contract, Deletes, UpdateMissing};
use ycsb_db::StoreContext;
use ycsb_db::{
    Fields, Properties, ReadOp, Record, ScanOp, ScanResult, Status, Store, ThreadContext,
};
use ycsb_memory::MemoryStore;
use ycsb_redis::RedisStore;
use ycsb_server::resp::RESP;
use ycsb_server::{serve, ServerConfig, ServerHandle};

const TABLE: &str = "usertable";

fn start() -> (MemoryStore, ServerHandle) {
    let memory = MemoryStore::new();
    let store: Arc<dyn Store> = Arc::new(memory.clone());
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let handle = serve(&RESP, store, addr, ServerConfig::default()).unwrap();
    (memory, handle)
}

fn redis_store(handle: &ServerHandle, extra: &[(&str, &str)]) -> RedisStore {
    let mut p = Properties::new()
        .with("redis.host", "127.0.0.1")
        .with("redis.port", handle.local_addr().port())
        .with("redis.index", "lex");
    for (k, v) in extra {
        p = p.with(*k, *v);
    }
    RedisStore::open(&StoreContext::new(&p)).unwrap()
}

fn tool(binary: &str, args: &[&str]) -> String {
    let out = Command::new(binary)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{binary} cannot run ({e}): these tests need the Debian packages redis-server \
                 and redis-tools; .ci/run installs them"
            )
        });
    assert!(out.status.success(), "{binary} {args:?} failed: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn cli(handle: &ServerHandle, args: &[&str]) -> String {
    let port = handle.local_addr().port().to_string();
    tool("redis-cli", &[&["-p", &port][..], args].concat())
}

fn record(i: usize) -> Record {
    let mut r = Record::new();
    for f in 0..4 {
        r.push(&format!("field{f}"), format!("v{i}.{f}").as_bytes());
    }
    r
}

/// The memory and rocksdb stores served over RESP keep the contract as the
/// redis store sees it: HSET updates make missing records, and scans are
/// the engine's ordered scan (ZRANGEBYLEX).
#[test]
fn served_stores_keep_the_store_contract_over_resp() {
    let dir = tempfile::tempdir().unwrap();
    let rocks = ycsb_rocksdb::RocksStore::open(&StoreContext::new(
        &Properties::new().with("rocksdb.dbname", dir.path().display()),
    ))
    .unwrap();
    let contract = Contract::new().with_update_missing(UpdateMissing::Creates);
    let stores: [(&str, Arc<dyn Store>, Contract); 2] = [
        ("memory", Arc::new(MemoryStore::new()), contract.clone()),
        // RocksDB's Delete cannot tell whether the key existed.
        (
            "rocksdb",
            Arc::new(rocks),
            contract.with_deletes(Deletes::MissingOk),
        ),
    ];
    for (name, store, contract) in stores {
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let handle = serve(&RESP, store, addr, ServerConfig::default()).unwrap();
        eprintln!("{name} served over RESP");
        assert_conforms(&redis_store(&handle, &[]), &contract);
    }
}

#[test]
fn redis_store_runs_every_operation_over_resp() {
    let (memory, handle) = start();
    let store = redis_store(&handle, &[]);
    assert!(store.engine_info().version.starts_with("ycsb-serve-"));
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    for i in (0..40).rev() {
        assert_eq!(
            t.insert(TABLE, &format!("user{i:02}"), &record(i)),
            Status::Ok
        );
    }
    assert_eq!(memory.table_len(TABLE), 40);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user07", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.len(), 4);
    assert_eq!(out.get("field3"), Some(&b"v7.3"[..]));
    let only = vec!["field2".to_string(), "nofield".to_string()];
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user07", Fields::Only(&only)), &mut out),
        Status::Ok
    );
    assert_eq!(out.len(), 1);
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user99", Fields::All), &mut out),
        Status::NotFound
    );

    let mut change = Record::new();
    change.push("field1", b"new");
    assert_eq!(t.update(TABLE, "user03", &change), Status::Ok);
    out.clear();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "user03", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.get("field1"), Some(&b"new"[..]));
    assert_eq!(out.get("field0"), Some(&b"v3.0"[..]));

    assert_eq!(t.delete(TABLE, "user05"), Status::Ok);
    assert_eq!(t.delete(TABLE, "user05"), Status::NotFound);

    // Scans are the engine's ordered scan, through ZRANGEBYLEX.
    let mut scan = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, "user03", 4, Fields::All), &mut scan),
        Status::Ok
    );
    let keys: Vec<&str> = scan.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["user03", "user04", "user06", "user07"]);
    assert_eq!(
        scan.iter().nth(1).unwrap().1.get("field0"),
        Some(&b"v4.0"[..])
    );
    scan.clear();
    assert_eq!(
        t.scan(
            &ScanOp::new(TABLE, "user385", 10, Fields::Only(&only)),
            &mut scan
        ),
        Status::Ok
    );
    let keys: Vec<&str> = scan.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["user39"]);
    t.cleanup().unwrap();

    // Pipelined writes arrive too.
    let piped = redis_store(&handle, &[("redis.pipeline", "8")]);
    let mut t = piped.thread(ThreadContext::new(0, 1)).unwrap();
    for i in 100..120 {
        let status = t.insert(TABLE, &format!("user{i}"), &record(i));
        assert!(status.is_ok(), "{status}");
    }
    t.cleanup().unwrap();
    assert_eq!(memory.table_len(TABLE), 39 + 20);
    handle.stop().unwrap();
}

#[test]
fn java_hash_index_scans_are_refused_clearly() {
    let (_memory, handle) = start();
    let store = redis_store(&handle, &[("redis.index", "hash")]);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(t.insert(TABLE, "user1", &record(1)), Status::Ok);
    let mut scan = ScanResult::new();
    assert_eq!(
        t.scan(&ScanOp::new(TABLE, "user1", 5, Fields::All), &mut scan),
        Status::Error
    );
    let reply = cli(&handle, &["zrangebyscore", "_indices", "0", "+inf"]);
    assert!(reply.contains("ZRANGEBYLEX"), "{reply}");
}

#[test]
fn redis_cli_commands() {
    let (memory, handle) = start();
    assert_eq!(cli(&handle, &["ping"]).trim(), "PONG");
    assert_eq!(cli(&handle, &["echo", "hi there"]).trim(), "hi there");
    assert_eq!(cli(&handle, &["set", "greeting", "hello"]).trim(), "OK");
    assert_eq!(cli(&handle, &["get", "greeting"]).trim(), "hello");
    assert_eq!(cli(&handle, &["get", "missing"]).trim(), "");
    assert_eq!(cli(&handle, &["hset", "h", "a", "1", "b", "2"]).trim(), "2");
    assert_eq!(cli(&handle, &["hmset", "h", "b", "3"]).trim(), "OK");
    assert_eq!(cli(&handle, &["hgetall", "h"]), "a\n1\nb\n3\n");
    assert_eq!(cli(&handle, &["hmget", "h", "b", "zz"]), "3\n\n");
    assert_eq!(cli(&handle, &["hget", "h", "a"]).trim(), "1");
    assert!(cli(&handle, &["get", "h"]).contains("WRONGTYPE"));
    assert_eq!(
        cli(&handle, &["exists", "h", "greeting", "nope"]).trim(),
        "2"
    );
    assert_eq!(memory.table_len(TABLE), 2);
    assert_eq!(
        cli(
            &handle,
            &["zrangebylex", "_indices", "-", "+", "limit", "0", "10"]
        ),
        "greeting\nh\n"
    );
    assert_eq!(
        cli(
            &handle,
            &[
                "zrangebylex",
                "_indices",
                "(greeting",
                "+",
                "limit",
                "0",
                "10"
            ]
        ),
        "h\n"
    );
    assert_eq!(cli(&handle, &["del", "h", "nope"]).trim(), "1");
    assert_eq!(cli(&handle, &["select", "0"]).trim(), "OK");
    assert!(cli(&handle, &["select", "1"]).contains("out of range"));
    assert!(cli(&handle, &["flushall"]).contains("unknown command 'flushall'"));
    assert!(cli(&handle, &["info"]).contains("redis_version:ycsb-serve-"));
    // Interactive redis-cli sends COMMAND DOCS first; it must still work.
    let port = handle.local_addr().port().to_string();
    let mut child = Command::new("redis-cli")
        .args(["-p", &port])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"get greeting\nquit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("hello"));
}

#[test]
fn redis_benchmark_set_get() {
    let (memory, handle) = start();
    let port = handle.local_addr().port().to_string();
    for pipeline in ["1", "16"] {
        let out = tool(
            "redis-benchmark",
            &[
                "-p", &port, "-t", "set,get", "-n", "2000", "-q", "-P", pipeline,
            ],
        );
        assert!(out.contains("SET: ") && out.contains("GET: "), "{out}");
        assert!(!out.to_ascii_lowercase().contains("error"), "{out}");
    }
    // Without -r, redis-benchmark writes the key "key:__rand_int__" as is,
    // with a 3-byte value (-d 3).
    assert_eq!(memory.table_len(TABLE), 1);
    assert_eq!(cli(&handle, &["get", "key:__rand_int__"]).trim().len(), 3);
}

#[test]
fn bad_input_gets_errors_and_the_server_keeps_serving() {
    let (_memory, handle) = start();
    let addr = handle.local_addr();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"*2\r\n$3\r\nGET\r\n:5\r\n").unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("-ERR Protocol error"), "{reply}");

    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // Pipelined: an unknown command, wrong arity, a non-UTF-8 key, PING.
    s.write_all(
        b"NOPE 1\r\nGET\r\n*2\r\n$3\r\nGET\r\n$1\r\n\xff\r\n*2\r\n$4\r\nECHO\r\n$1\r\n\xfe\r\nPING\r\nQUIT\r\n",
    )
        .unwrap();
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).unwrap();
    let reply = String::from_utf8_lossy(&reply);
    assert_eq!(
        reply,
        "-ERR unknown command 'NOPE'\r\n\
         -ERR wrong number of arguments for 'get' command\r\n\
         -ERR keys must be UTF-8 text\r\n$1\r\n\u{fffd}\r\n+PONG\r\n+OK\r\n"
    );
    assert_eq!(cli(&handle, &["ping"]).trim(), "PONG");
}

#[test]
fn stop_closes_connections_and_the_port() {
    let (_memory, handle) = start();
    let addr = handle.local_addr();
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    idle.write_all(b"PING\r\n").unwrap();
    let mut buf = [0u8; 7];
    idle.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"+PONG\r\n");
    handle.stop().unwrap();
    // The idle connection sees the end of the stream.
    assert_eq!(idle.read(&mut buf).unwrap(), 0);
    // The port is closed. A child process that another test is spawning
    // at that moment can hold a copy of the listening socket until it
    // execs (fork copies descriptors before close-on-exec applies), so a
    // connect right after stop may still complete and then be reset: give
    // that instant a second to pass, then nothing may accept.
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    while TcpStream::connect(addr).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "{addr} still accepts connections a second after stop"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `commands` (inline, one per line) on one connection and returns
/// every reply line until the server goes quiet.
fn session(addr: SocketAddr, commands: &str) -> Vec<String> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    s.write_all(commands.as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got)
        .lines()
        .map(str::to_string)
        .collect()
}

fn start_with_password(password: &str) -> (MemoryStore, ServerHandle) {
    let memory = MemoryStore::new();
    let store: Arc<dyn Store> = Arc::new(memory.clone());
    let config = ServerConfig::default().with_password(ycsb_server::auth::Password::new(password));
    let handle = serve(&RESP, store, "127.0.0.1:0".parse().unwrap(), config).unwrap();
    (memory, handle)
}

/// With a password, nothing but AUTH and QUIT runs before AUTH, and the
/// answers are Redis 6's words.
#[test]
fn a_password_gates_every_command_as_redis_does() {
    let (memory, handle) = start_with_password("pw-9x");
    let addr = handle.local_addr();
    let noauth = "-NOAUTH Authentication required.";
    let wrongpass = "-WRONGPASS invalid username-password pair or user is disabled.";
    assert_eq!(
        session(
            addr,
            "PING\r\nSET k v\r\nGET k\r\nHGETALL k\r\nCONFIG GET save\r\nINFO\r\nHELLO 3\r\n"
        ),
        [
            noauth,
            noauth,
            noauth,
            noauth,
            noauth,
            noauth,
            "-ERR unknown command 'HELLO'"
        ]
    );
    assert_eq!(memory.table_len(TABLE), 0, "SET ran without the password");
    assert_eq!(
        session(
            addr,
            "AUTH wrong\r\nAUTH pw-9x9\r\nAUTH pw-9\r\nAUTH someone pw-9x\r\nAUTH\r\nAUTH a b c\r\nPING\r\nQUIT\r\n"
        ),
        [
            wrongpass,
            wrongpass,
            wrongpass,
            wrongpass,
            "-ERR wrong number of arguments for 'auth' command",
            "-ERR syntax error",
            noauth,
            "+OK"
        ]
    );
    // The right password, alone or as the default user's; a later wrong
    // AUTH does not log the connection out.
    assert_eq!(
        session(addr, "AUTH pw-9x\r\nSET k v\r\nAUTH bad\r\nGET k\r\n"),
        ["+OK", "+OK", wrongpass, "$1", "v"]
    );
    assert_eq!(
        session(addr, "AUTH default pw-9x\r\nPING\r\n"),
        ["+OK", "+PONG"]
    );
    assert_eq!(memory.table_len(TABLE), 1);

    // The redis store authenticates with redis.password (and
    // redis.username=default); without it, it is refused with a clear
    // message that it needs one.
    for extra in [
        &[("redis.password", "pw-9x")][..],
        &[("redis.password", "pw-9x"), ("redis.username", "default")],
    ] {
        let store = redis_store(&handle, extra);
        let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
        assert_eq!(t.insert(TABLE, "user1", &record(1)), Status::Ok);
        let mut out = Record::new();
        assert_eq!(
            t.read(&ReadOp::new(TABLE, "user1", Fields::All), &mut out),
            Status::Ok
        );
    }
    let p = Properties::new()
        .with("redis.host", "127.0.0.1")
        .with("redis.port", addr.port())
        .with("redis.index", "lex");
    let Err(refused) = RedisStore::open(&StoreContext::new(&p)) else {
        panic!("no password: refused");
    };
    let refused = refused.to_string();
    assert!(refused.contains("needs a password"), "{refused}");
    let Err(wrong) = RedisStore::open(&StoreContext::new(
        &p.clone().with("redis.password", "not-it"),
    )) else {
        panic!("a wrong password: refused");
    };
    let wrong = wrong.to_string();
    assert!(wrong.contains("WRONGPASS"), "{wrong}");
    assert!(!wrong.contains("not-it"), "{wrong}");
}

/// Without a password, AUTH is answered as Redis without requirepass
/// answers it, and every command runs.
#[test]
fn without_a_password_auth_is_redis_s_nopass() {
    let (_memory, handle) = start();
    assert_eq!(
        session(
            handle.local_addr(),
            "PING\r\nAUTH x\r\nAUTH default any\r\nAUTH other any\r\n"
        ),
        [
            "+PONG",
            "-ERR AUTH <password> called without any password configured for the default user. \
             Are you sure your configuration is correct?",
            "+OK",
            "-WRONGPASS invalid username-password pair or user is disabled."
        ]
    );
}

/// An address other than loopback is refused without a password, before
/// anything is bound.
#[test]
fn only_loopback_serves_without_a_password() {
    let everywhere = SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), 0);
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let e = serve(&RESP, store, everywhere, ServerConfig::default()).unwrap_err();
    assert!(
        matches!(e, ycsb_server::ServeError::Unprotected(_)),
        "{e:?}"
    );
    assert!(e.to_string().contains("serve.password"), "{e}");
}
