//! A library user reproduces the binary's results: the same properties
//! through `ycsb_core::Session` give the same operations, statuses and
//! configuration as `ycsb -load -run`.

mod common;

use common::*;
use ycsb_core::db::{Origin, Properties};
use ycsb_core::{Phase, Session, Silent, StopSignal};

/// What must agree between two runs of one seed: per phase and section,
/// the operation count and the statuses.
fn figures(export: &serde_json::Value) -> Vec<(String, String, u64, String)> {
    let mut out = Vec::new();
    for phase in export["phases"].as_array().unwrap() {
        for section in phase["sections"].as_array().unwrap() {
            out.push((
                phase["phase"].as_str().unwrap().to_string(),
                section["name"].as_str().unwrap().to_string(),
                section["operations"].as_u64().unwrap(),
                section["returns"].to_string(),
            ));
        }
    }
    out
}

#[test]
fn the_library_and_the_binary_agree_on_the_same_properties() {
    let dir = tempfile::tempdir().unwrap();
    let cli_export = dir.path().join("cli.json");
    let settings = [
        ("recordcount", "300"),
        ("operationcount", "2000"),
        ("readproportion", "0.5"),
        ("updateproportion", "0.3"),
        ("scanproportion", "0.1"),
        ("insertproportion", "0.1"),
        ("requestdistribution", "zipfian"),
        ("seed", "42"),
        ("exporter", "json"),
    ];
    let mut cli = ycsb();
    cli.args(["-load", "-run", "-db", "memory"]);
    for (key, value) in settings {
        cli.args(["-p", &format!("{key}={value}")]);
    }
    cli.args(["-p", &format!("exportfile={}", cli_export.display())]);
    let output = cli.output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let cli_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cli_export).unwrap()).unwrap();

    let mut props = Properties::new();
    for (key, value) in settings {
        props.set(key, value, Origin::Api);
    }
    // A private memory instance, as the binary's process has its own.
    props.set("memory.instance", "", Origin::Api);
    let session = Session::new(props, ycsb_stores::find("memory").unwrap()).unwrap();
    let store = session.open_store(None).unwrap();
    let report = session
        .execute(
            store,
            &[Phase::Load, Phase::Run],
            &StopSignal::new(),
            &mut Silent,
        )
        .unwrap();
    let library_json = serde_json::to_value(&report).unwrap();

    let cli_figures = figures(&cli_json);
    assert!(cli_figures.len() >= 5, "{cli_figures:?}");
    assert_eq!(figures(&library_json), cli_figures);
    let config = |json: &serde_json::Value, key: &str| {
        json["config"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"] == key)
            .map(|e| e["value"].clone())
    };
    for key in ["recordcount", "seed", "fieldcount", "requestdistribution"] {
        assert_eq!(config(&library_json, key), config(&cli_json, key), "{key}");
    }
}

#[test]
fn serve_refuses_a_store_that_is_itself_a_client() {
    let out = run("serve redis");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("'redis' is a client of a server"));
}
