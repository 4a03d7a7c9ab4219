//! One exit status per kind of failure, the same for every store: a store
//! that cannot be used (a client store whose server is not there, an
//! embedded store whose data directory is unusable) is refused before
//! anything runs, as bad input is: exit status 2, one line on standard
//! error naming the store and the property that named it with where it
//! was set, nothing on standard output. Each subcommand that opens a store
//! agrees. (A store that stops working while a phase runs is status 1:
//! `faults.rs`.)

mod common;
mod rel_support;

use std::process::{Output, Stdio};

use common::*;
use rel_support::*;
use ycsb_db::{ServerAddress, StoreDescriptor};

/// Asserts the refusal of an unusable store: status 2, one line naming
/// `store` and every one of `named`, nothing on standard output.
#[track_caller]
fn assert_unusable(o: &Output, store: &str, named: &[&str], what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(
        err.starts_with(&format!("ycsb: error: cannot open {store}: ")),
        "{what}: {err}"
    );
    for name in named {
        assert!(err.contains(name), "{what}: '{name}' not named: {err}");
    }
    assert!(stdout(o).is_empty(), "{what}: {}", stdout(o));
}

/// `ycsb <command> <store> <properties>` for each command that opens a
/// store, with an empty standard input (the shell's).
fn every_command(store: &str, properties: &[String]) -> Vec<(String, Output)> {
    let commands: [&[&str]; 4] = [
        &["load", store, "-p", "recordcount=10"],
        &["run", store, "-p", "operationcount=10"],
        &["shell", store],
        &["bench", "--db-engine", store, "--num=10"],
    ];
    commands
        .iter()
        .map(|command| {
            let mut ycsb = ycsb();
            ycsb.args(*command);
            for p in properties {
                ycsb.args(["-p", p]);
            }
            let what = format!("ycsb {} {}", command.join(" "), properties.join(" "));
            (what, ycsb.stdin(Stdio::null()).output().unwrap())
        })
        .collect()
}

/// Every client store (found by its descriptor's server address) pointed
/// at a loopback port nothing listens on.
#[test]
fn a_client_store_whose_server_is_not_there_is_refused_with_status_2() {
    let clients: Vec<&StoreDescriptor> = ycsb_stores::STORES
        .iter()
        .filter(|d| d.server.is_some())
        .collect();
    assert!(clients.len() >= 2, "redis and http at least");
    for store in clients {
        let port = free_port();
        let server = store.server.unwrap();
        let (properties, named) = match server.address {
            ServerAddress::HostPort {
                host,
                port: port_property,
            } => (
                vec![
                    format!("{host}=127.0.0.1"),
                    format!("{port_property}={port}"),
                ],
                vec![format!("{port_property}={port} (-p flag)")],
            ),
            ServerAddress::Url(url) => (
                vec![format!("{url}=http://127.0.0.1:{port}")],
                vec![format!("{url}=http://127.0.0.1:{port} (-p flag)")],
            ),
            other => panic!(
                "{}: an address this test does not know: {other:?}",
                store.name
            ),
        };
        let named: Vec<&str> = named.iter().map(String::as_str).collect();
        for (what, o) in every_command(store.name, &properties) {
            assert_unusable(&o, store.name, &named, &what);
        }
    }
}

/// etcd names its members in one list (no single server address).
#[test]
fn etcd_without_a_member_is_refused_with_status_2() {
    if !registered_stores().iter().any(|s| s == "etcd") {
        return;
    }
    let port = free_port();
    let endpoints = format!("etcd.endpoints=127.0.0.1:{port}");
    let named = format!("{endpoints} (-p flag)");
    for (what, o) in every_command("etcd", std::slice::from_ref(&endpoints)) {
        assert_unusable(&o, "etcd", &[&named], &what);
    }
}

/// Every embedded store whose data directory is a regular file.
#[test]
fn an_embedded_store_on_an_unusable_directory_is_refused_with_status_2() {
    let embedded: Vec<&StoreDescriptor> = ycsb_stores::STORES
        .iter()
        .filter(|d| d.data_dir.is_some())
        .collect();
    assert!(embedded.len() >= 7, "{}", embedded.len());
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "not a database").unwrap();
    for store in embedded {
        let property = store.data_dir.unwrap().name;
        let at = format!("{property}={}", file.display());
        let named = format!("{at} (-p flag)");
        for (what, o) in every_command(store.name, std::slice::from_ref(&at)) {
            assert_unusable(&o, store.name, &[&named], &what);
        }
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "not a database",
            "{}",
            store.name
        );
    }
}
