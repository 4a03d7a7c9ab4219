//! The etcd store against real three-member etcd clusters on loopback:
//! the conformance kit, atomic read-modify-write updates, a member killed
//! while threads work, and authentication.

use std::time::{Duration, Instant};

use ycsb_db::testing::{assert_conforms, Contract};
use ycsb_db::{Batch, Fields, Properties, ReadOp, Record, Status, Store, ThreadContext};
use ycsb_etcd::testing::EtcdCluster;
use ycsb_etcd::EtcdStore;

const TABLE: &str = "usertable";

fn cluster(dir: &tempfile::TempDir) -> EtcdCluster {
    EtcdCluster::start(dir.path(), 3).expect("etcd cluster starts")
}

fn props(cluster: &EtcdCluster) -> Properties {
    Properties::new()
        .with("etcd.endpoints", cluster.endpoints())
        .with("etcd.timeout", "2000")
}

#[test]
fn a_three_member_cluster_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = cluster(&dir);
    let store = EtcdStore::open(&props(&cluster)).unwrap();
    assert_eq!(store.engine_info().name, "etcd");
    assert!(
        store.engine_info().version.starts_with('3'),
        "{:?}",
        store.engine_info()
    );
    assert_conforms(&store, &Contract::new());
    // The same with serializable reads, answered by each member itself.
    let store = EtcdStore::open(&props(&cluster).with("etcd.serializable_reads", "true")).unwrap();
    assert_conforms(&store, &Contract::new());

    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    let gauge = |name: &str| gauges.iter().find(|g| g.name == name).map(|g| g.value);
    assert_eq!(gauge("etcd.members-up"), Some(3.0));
    assert!(gauge("etcd.db-size-bytes").unwrap() > 0.0, "{gauges:?}");
    assert!(gauge("etcd.raft-term").unwrap() >= 1.0, "{gauges:?}");
    let reports = store.final_reports();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].text.lines().count(), 3, "{}", reports[0].text);
}

/// A batch larger than etcd's `--max-txn-ops` (128) goes as several
/// `Txn`s: every record of 300 inserts is acknowledged and reads back, by
/// single reads and by one batched read (with two missing keys answered
/// NOT_FOUND in their places), and one batched delete removes them all.
#[test]
fn batches_of_300_go_in_txns_of_at_most_128() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = cluster(&dir);
    let store = EtcdStore::open(&props(&cluster)).unwrap();
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut batch = Batch::new();
    for i in 0..300 {
        batch
            .push(&format!("batched{i:03}"))
            .push("field0", format!("value {i}").as_bytes());
    }
    let mut statuses = vec![Status::Error; batch.len()];
    assert_eq!(t.insert_batch(TABLE, &batch, &mut statuses), Status::Ok);
    assert!(statuses.iter().all(|s| *s == Status::Ok), "{statuses:?}");
    for i in [0, 127, 128, 255, 256, 299] {
        let mut out = Record::new();
        let key = format!("batched{i:03}");
        assert_eq!(
            t.read(&ReadOp::new(TABLE, &key, Fields::All), &mut out),
            Status::Ok,
            "{key}"
        );
        assert_eq!(out.get("field0"), Some(format!("value {i}").as_bytes()));
    }
    let mut keys = Batch::new();
    for i in 0..302 {
        keys.push(&format!("batched{i:03}"));
    }
    let mut reads = vec![Record::new(); keys.len()];
    let mut statuses = vec![Status::Error; keys.len()];
    assert_eq!(
        t.read_batch(TABLE, &keys, Fields::All, &mut reads, &mut statuses),
        Status::NotFound
    );
    for (i, (status, record)) in statuses.iter().zip(&reads).enumerate() {
        if i < 300 {
            assert_eq!(*status, Status::Ok, "batched{i:03}");
            assert_eq!(record.get("field0"), Some(format!("value {i}").as_bytes()));
        } else {
            assert_eq!(*status, Status::NotFound, "batched{i:03}");
        }
    }
    let mut statuses = vec![Status::Error; keys.len()];
    assert_eq!(
        t.delete_batch(TABLE, &keys, &mut statuses),
        Status::NotFound
    );
    assert!(
        statuses[..300].iter().all(|s| *s == Status::Ok),
        "{statuses:?}"
    );
    assert_eq!(statuses[300..], [Status::NotFound, Status::NotFound]);
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new(TABLE, "batched200", Fields::All), &mut out),
        Status::NotFound
    );
}

/// Threads that each change their own field of one record, at once: an
/// update that read the record before another thread's write would, as a
/// plain read-then-put, write back the other field's old value. With the
/// transaction every thread's last value survives.
#[test]
fn concurrent_updates_of_one_record_lose_no_field() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = cluster(&dir);
    let store = EtcdStore::open(&props(&cluster)).unwrap();
    let threads = 4;
    let rounds = 25;
    let mut initial = Record::new();
    for t in 0..threads {
        initial.push(&format!("field{t}"), b"start");
    }
    let mut first = store.thread(ThreadContext::new(0, 1)).unwrap();
    assert_eq!(first.insert(TABLE, "hot", &initial), Status::Ok);
    std::thread::scope(|s| {
        for t in 0..threads {
            let store = &store;
            s.spawn(move || {
                let mut thread = store.thread(ThreadContext::new(t, threads)).unwrap();
                for round in 0..rounds {
                    let mut change = Record::new();
                    change.push(&format!("field{t}"), format!("t{t}-r{round}").as_bytes());
                    assert_eq!(
                        thread.update(TABLE, "hot", &change),
                        Status::Ok,
                        "{:?}",
                        thread.last_error()
                    );
                }
            });
        }
    });
    let mut out = Record::new();
    assert_eq!(
        first.read(&ReadOp::new(TABLE, "hot", Fields::All), &mut out),
        Status::Ok
    );
    for t in 0..threads {
        assert_eq!(
            out.get(&format!("field{t}")),
            Some(format!("t{t}-r{}", rounds - 1).as_bytes()),
            "field{t} of {out:?}"
        );
    }
}

/// Kills the member a thread talks to: the operations that used it fail
/// with SERVICE_UNAVAILABLE, the thread moves on, and every acknowledged
/// insert is in the surviving members.
///
/// The member killed is a follower. A killed leader adds an election whose
/// length is etcd's and the machine's business (on a loaded machine its
/// 500 ms timeouts can run out again and again), not the store's; what the
/// store does, failing the operation in flight and moving to the next
/// member, is the same either way.
#[test]
fn a_killed_member_costs_only_failed_operations() {
    let dir = tempfile::tempdir().unwrap();
    let mut cluster = cluster(&dir);
    let store = EtcdStore::open(&props(&cluster)).unwrap();
    let victim = (cluster.leader().unwrap() + 1) % 3;
    // Thread `victim` starts on member `victim`.
    let mut thread = store.thread(ThreadContext::new(victim, 3)).unwrap();
    let mut record = Record::new();
    record.push("field0", b"v");
    let mut acknowledged = Vec::new();
    let mut errors = std::collections::BTreeMap::<String, u32>::new();
    let started = Instant::now();
    for i in 0..400 {
        if i == 100 {
            cluster.kill(victim).unwrap();
        }
        let key = format!("user{i:04}");
        match thread.insert(TABLE, &key, &record) {
            Status::Ok => acknowledged.push(key),
            Status::ServiceUnavailable => {
                let error = thread.last_error().unwrap_or("none").to_string();
                *errors.entry(error).or_default() += 1;
            }
            other => panic!("insert {i}: {other:?} ({:?})", thread.last_error()),
        }
    }
    let failed: u32 = errors.values().sum();
    let context = format!(
        "{failed} failed inserts in {:?}; their errors: {errors:#?}\n{}",
        started.elapsed(),
        cluster.report()
    );
    assert!(failed >= 1, "the insert that found its member dead fails");
    assert!(failed <= 50, "{context}");
    assert!(acknowledged.len() >= 350, "{context}");
    assert!(started.elapsed() < Duration::from_secs(60), "{context}");
    let mut gauges = Vec::new();
    store.gauges(&mut gauges);
    assert!(
        gauges
            .iter()
            .any(|g| g.name == "etcd.members-up" && g.value == 2.0),
        "{gauges:?}"
    );
    assert_readable(&store, (victim + 1) % 3, &acknowledged);
}

/// Kills the leader under a thread that talks to it: operations fail with
/// SERVICE_UNAVAILABLE while the survivors elect a new leader, and once
/// they have one the thread's operations succeed again, with nothing
/// acknowledged lost. How long the election takes is left to etcd: the
/// test waits for it rather than counting failures.
#[test]
fn a_killed_leader_is_replaced_and_the_thread_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let mut cluster = cluster(&dir);
    let store = EtcdStore::open(&props(&cluster)).unwrap();
    let leader = cluster.leader().unwrap();
    let mut thread = store.thread(ThreadContext::new(leader, 3)).unwrap();
    let mut record = Record::new();
    record.push("field0", b"v");
    let mut acknowledged = Vec::new();
    let mut insert = |thread: &mut Box<dyn ycsb_db::StoreThread + '_>, i: usize| {
        let key = format!("user{i:04}");
        let status = thread.insert(TABLE, &key, &record);
        match status {
            Status::Ok => acknowledged.push(key),
            Status::ServiceUnavailable => {}
            other => panic!("insert {i}: {other:?} ({:?})", thread.last_error()),
        }
        status
    };
    for i in 0..50 {
        assert_eq!(insert(&mut thread, i), Status::Ok);
    }
    cluster.kill(leader).unwrap();
    assert_eq!(
        insert(&mut thread, 50),
        Status::ServiceUnavailable,
        "the insert that found its member dead fails"
    );
    if let Err(e) = cluster.wait_healthy(Duration::from_secs(60)) {
        panic!("the survivors elect no leader: {e}\n{}", cluster.report());
    }
    for i in 51..100 {
        let status = insert(&mut thread, i);
        assert_eq!(
            status,
            Status::Ok,
            "insert {i} after the election: {:?}\n{}",
            thread.last_error(),
            cluster.report()
        );
    }
    let new_leader = cluster.leader().unwrap();
    assert_ne!(new_leader, leader);
    assert_readable(&store, new_leader, &acknowledged);
    assert_eq!(acknowledged.len(), 99);
}

/// Reads every key in `keys` through a thread that starts on `member`.
fn assert_readable(store: &EtcdStore, member: usize, keys: &[String]) {
    let mut reader = store.thread(ThreadContext::new(member, 3)).unwrap();
    let mut out = Record::new();
    for key in keys {
        out.clear();
        assert_eq!(
            reader.read(&ReadOp::new(TABLE, key, Fields::All), &mut out),
            Status::Ok,
            "{key}"
        );
    }
}

#[test]
fn authentication_with_a_token_per_thread() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = cluster(&dir);
    for (path, body) in [
        (
            "/v3/auth/user/add",
            r#"{"name":"root","password":"pw-secret"}"#,
        ),
        ("/v3/auth/role/add", r#"{"name":"root"}"#),
        ("/v3/auth/user/grant", r#"{"user":"root","role":"root"}"#),
        ("/v3/auth/enable", "{}"),
    ] {
        cluster.post(0, path, body, None).unwrap();
    }
    let with_user = |password: &str| {
        props(&cluster)
            .with("etcd.user", "root")
            .with("etcd.password", password)
    };
    let store = EtcdStore::open(&with_user("pw-secret")).unwrap();
    assert_conforms(&store, &Contract::new().with_threads(2));

    let err = EtcdStore::open(&with_user("wrong"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("authentication as 'root' failed"), "{err}");
    assert!(!err.contains("wrong"), "{err}");
    // Without credentials every operation is refused, not an outage.
    let store = EtcdStore::open(&props(&cluster)).unwrap();
    let mut thread = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    assert_eq!(
        thread.read(&ReadOp::new(TABLE, "user1", Fields::All), &mut out),
        Status::Forbidden
    );
}

#[test]
fn no_member_reachable_is_one_clear_error() {
    let err = EtcdStore::open(
        &Properties::new()
            .with("etcd.endpoints", "127.0.0.1:1,127.0.0.1:2")
            .with("etcd.dial_timeout", "200ms"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("cannot open etcd: no member answered"),
        "{err}"
    );
    assert!(
        err.contains("127.0.0.1:1") && err.contains("127.0.0.1:2"),
        "{err}"
    );
}

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs (Debian package openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, in
/// `dir`.
fn certificates(dir: &std::path::Path) {
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=ycsb test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
    );
    for name in ["server", "client"] {
        openssl(
            dir,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                &format!("/CN={name}"),
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "san.ext",
                "-out",
                &format!("{name}.pem"),
            ],
        );
    }
}

#[test]
fn tls_endpoints_verify_the_members_certificate() {
    let dir = tempfile::tempdir().unwrap();
    certificates(dir.path());
    let tls = ycsb_etcd::testing::ServerTls {
        cert: dir.path().join("server.pem"),
        key: dir.path().join("server.key"),
    };
    let cluster = EtcdCluster::start_with(dir.path(), 1, Some(&tls)).unwrap();
    let file = |name: &str| dir.path().join(name).display().to_string();
    let store = EtcdStore::open(
        &props(&cluster)
            .with("etcd.cacert_file", file("ca.pem"))
            .with("etcd.cert_file", file("client.pem"))
            .with("etcd.key_file", file("client.key")),
    )
    .unwrap();
    assert_eq!(
        store.config().endpoints()[0].split("://").next(),
        Some("https")
    );
    assert_conforms(&store, &Contract::new().with_threads(2));
    // Without the CA the member's certificate is not trusted.
    let err = EtcdStore::open(
        &Properties::new().with("etcd.endpoints", format!("https://{}", cluster.endpoints())),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("TLS"), "{err}");
    // Plain HTTP to a TLS member gets no gateway answer.
    assert!(EtcdStore::open(&props(&cluster)).is_err());
}
