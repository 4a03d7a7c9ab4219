//! File workloads through the binary: records loaded from the TSV, CSV and
//! JSON-lines files in `tests/data` (real license texts, see
//! `tests/data/make_licenses.py`), run-phase keys from the loaded keys or
//! a key file, and the bytes-on-disk figures.

mod common;

use common::*;

const DATA: &str = "crates/ycsb-cli/tests/data";

fn ycsb_ok(args: &[&str]) -> (String, String) {
    let o = ycsb().args(args).output().unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{args:?}: {err}\n{out}");
    (out, err)
}

fn value(report: &str, section: &str, name: &str) -> Option<u64> {
    report_value(report, section, name).map(|v| v.parse().unwrap())
}

#[test]
fn real_text_into_leveldb_and_zipfian_reads_of_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("leveldb.dbname={}", dir.path().join("db").display());
    let file = format!("datafile={DATA}/licenses.tsv");
    let common = [
        "-p",
        &db,
        "-p",
        &file,
        "-p",
        "keyfield=license,paragraph",
        "-p",
        "leveldb.compression=snappy",
    ];
    let export = dir.path().join("load.json");
    let export_file = format!("exportfile={}", export.display());
    ycsb_ok(
        &[
            &["load", "leveldb"][..],
            &common,
            &["-p", "exporter=json", "-p", &export_file],
        ]
        .concat(),
    );
    let load: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let load = &load["phases"][0];
    // Every row of the file, one record each.
    assert_eq!(load["sections"][0]["name"], "INSERT", "{load}");
    assert_eq!(
        load["sections"][0]["returns"][0],
        serde_json::json!({"status": "OK", "count": 793}),
        "{load}"
    );
    // Raw bytes loaded against bytes on disk (the terminal, for so short
    // a load, says only that it is too short to judge).
    let amplification = &load["observation"]["amplification"];
    assert!(
        amplification["data_bytes"].as_f64().unwrap() > 0.0
            && amplification["db_size_bytes"].as_u64().unwrap() > 0,
        "{load}"
    );
    let (out, _) = ycsb_ok(
        &[
            &["run", "leveldb"][..],
            &common,
            &["-p", "operationcount=3000", "-p", "readproportion=1"],
            &[
                "-p",
                "updateproportion=0",
                "-p",
                "requestdistribution=zipfian",
            ],
            &["-threads", "2"],
        ]
        .concat(),
    );
    // Every read targets a loaded key (license:paragraph) and finds it.
    assert_eq!(value(&out, "READ", "Return=OK"), Some(3000), "{out}");
    assert_eq!(value(&out, "READ", "Return=NOT_FOUND"), None, "{out}");
}

#[test]
fn csv_and_json_lines_with_every_distribution() {
    for (file, extra) in [
        ("bsd.csv", &["-p", "keyfield=license,paragraph"][..]),
        ("bsd.jsonl", &["-p", "keyfield=license,paragraph"][..]),
        ("licenses.tsv", &["-p", "usecustomkey=false"][..]),
    ] {
        for dist in [
            "uniform",
            "zipfian",
            "latest",
            "hotspot",
            "sequential",
            "exponential",
        ] {
            let datafile = format!("datafile={DATA}/{file}");
            let distribution = format!("requestdistribution={dist}");
            let (out, _) = ycsb_ok(
                &[
                    &["-load", "-run", "-db", "memory", "-p", &datafile][..],
                    extra,
                    &["-p", &distribution, "-p", "operationcount=300"],
                    &["-p", "readproportion=0.5", "-p", "updateproportion=0.5"],
                    // Three rows need a hot set of more than a fifth.
                    &["-p", "hotspotdatafraction=0.5"],
                ]
                .concat(),
            );
            let rows = if file == "licenses.tsv" { 793 } else { 3 };
            assert_eq!(
                value(&out, "INSERT", "Return=OK"),
                Some(rows),
                "{file} {dist}"
            );
            let ok = value(&out, "READ", "Return=OK").unwrap_or(0)
                + value(&out, "UPDATE", "Return=OK").unwrap_or(0);
            assert_eq!(ok, 300, "{file} {dist}: {out}");
        }
    }
}

#[test]
fn run_keys_from_a_key_file() {
    let datafile = format!("datafile={DATA}/bsd.csv");
    // Reads `operations` keys of `keys` from the data file's records.
    let read_keys = |keys: &str, operations: &str| {
        ycsb_ok(&[
            "-load",
            "-run",
            "-db",
            "memory",
            "-p",
            &datafile,
            "-p",
            "keyfield=license,paragraph",
            "-p",
            &format!("keyfile={keys}"),
            "-p",
            &format!("operationcount={operations}"),
            "-p",
            "readproportion=1",
            "-p",
            "updateproportion=0",
        ])
        .0
    };
    let out = read_keys(&format!("{DATA}/bsd.keys"), "100");
    assert_eq!(value(&out, "READ", "Return=OK"), Some(100), "{out}");
    // Keys that were never loaded are not found: the run really uses the
    // key file.
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.keys");
    std::fs::write(&other, "nothere\n").unwrap();
    let out = read_keys(&other.display().to_string(), "10");
    assert_eq!(value(&out, "READ", "Return=NOT_FOUND"), Some(10), "{out}");
}
