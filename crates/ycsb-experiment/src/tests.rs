//! Matrix validation table and expansion.

use std::path::Path;

use super::cells;
use super::matrix::{parse, parse_size};

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../matrices")
}

fn check(text: &str) -> Result<super::matrix::Matrix, String> {
    parse(&dir().join("test.toml"), text).map_err(|e| e.to_string())
}

const OK: &str = r#"
[experiment]
name = "t"
repeats = 2

[properties]
recordcount = 100

[axes]
db = ["leveldb", "memory"]
fieldlength = [32, 128]
"#;

#[test]
fn a_good_matrix_expands() {
    let m = check(OK).unwrap();
    assert_eq!(m.repeats, 2);
    assert_eq!(
        m.properties,
        vec![("recordcount".to_string(), "100".to_string())]
    );
    let cells = cells::expand(&m);
    assert_eq!(cells.len(), 8);
    assert_eq!(cells[0].id, "db=leveldb,fieldlength=32,r1");
    assert_eq!(cells[3].id, "db=memory,fieldlength=128,r1");
    assert_eq!(cells[7].id, "db=memory,fieldlength=128,r2");
    assert_eq!(cells[7].group, "db=memory,fieldlength=128");
    assert_eq!(
        cells[1].axis_properties(),
        vec![("fieldlength".to_string(), "128".to_string())]
    );
    let ids: std::collections::BTreeSet<_> = cells.iter().map(|c| &c.id).collect();
    assert_eq!(ids.len(), cells.len(), "ids are unique");
}

/// An axis over secret values (a password, credential headers, a URL
/// with user:password) names its cells `secretN`, never by the value.
#[test]
fn secret_axis_values_never_name_cells() {
    let m = check(
        r#"
[experiment]
name = "t"
baseline = { "redis.password" = "pw-one-9x" }

[axes]
db = ["memory"]
"redis.password" = ["pw-one-9x", "pw-two-9x"]
"http.headers" = ["Authorization: Bearer tok-9x", "Accept: */*"]
"#,
    )
    .unwrap();
    let cells = cells::expand(&m);
    assert_eq!(cells.len(), 4);
    for c in &cells {
        assert!(!c.id.contains("9x"), "{}", c.id);
    }
    assert_eq!(
        cells[0].id,
        "db=memory,redis.password=secret1,http.headers=secret1,r1"
    );
    assert_eq!(
        cells[3].id,
        "db=memory,redis.password=secret2,http.headers=Accept_____,r1"
    );
    // The value given to ycsb is the real one.
    assert!(cells[0]
        .axis_properties()
        .contains(&("redis.password".to_string(), "pw-one-9x".to_string())));
}

/// Bad matrices and the line and words their refusal must name.
const BAD: &[(&str, &str, &str)] = &[
    ("[experiment]\nrepaets = 2\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "unknown field `repaets`"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\n[colours]\nx = 1\n", "test.toml:4:", "unknown field `colours`"),
    ("[experiment]\n[axes]\ndb = []\n", "test.toml:3:", "axes.db is empty"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\nfieldlength = []\n", "test.toml:4:", "axes.fieldlength is empty"),
    ("[experiment]\n[axes]\ndb = [\"memory\",\n  \"mongodb\"]\n", "test.toml:4:", "unknown db 'mongodb'"),
    ("[experiment]\n[axes]\nfieldlength = [1]\n", "test.toml:2:", "no 'db' axis"),
    ("[experiment]\n[axes]\ndb = [\"memory\", \"memory\"]\n", "test.toml:3:", "listed twice"),
    ("[experiment]\nrepeats = 0\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "at least 1"),
    ("[experiment]\nrepeats = 1e9\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "expected u32"),
    ("[experiment]\nrepeats = 1000000000\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "at most 1000"),
    ("[experiment]\nrepeats = 1000\n[axes]\ndb = [\"memory\"]\nfieldcount = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nfieldlength = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n", "test.toml:3:", "110000 cells"),
    ("[experiment]\nphases = [\"warmup\"]\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "unknown phase 'warmup'"),
    ("[experiment]\nmemory_limit = \"lots\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "expected a size"),
    ("[experiment]\ncpus = \"0;1\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "CPU list"),
    ("[experiment]\nname = \"a/b\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "names a directory"),
    ("[experiment]\nproperty_files = [\"nope.properties\"]\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "'nope.properties' not found"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\nworkload = [\"../workloads/nothere\"]\n", "test.toml:4:", "workload file"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\nthreadcount = [[1]]\n", "test.toml:4:", "expected a string, number or boolean"),
    ("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\nproperties = {}\n", "test.toml:4:", "set store"),
    ("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\nstore = \"mongodb\"\n", "test.toml:5:", "unknown store 'mongodb'"),
    ("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\nstore = \"redis\"\nserver = \"mongod\"\n", "test.toml:6:", "unknown server 'mongod' (redis-server, memcached, postgres, mariadb or ycsb-serve)"),
    ("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\nstore = \"redis\"\nserver = \"ycsb-serve\"\n", "test.toml:6:", "needs engine"),
    ("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\nstore = \"leveldb\"\nserver = \"redis-server\"\n", "test.toml:6:", "must be a client of a server"),
    ("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\nstore = \"redis\"\nserver = \"ycsb-serve\"\nengine = \"redis\"\n", "test.toml:7:", "ycsb serve embeds"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\n[db.levledb]\n", "test.toml:4:", "not on the db axis"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\n[db.memory]\nstoer = \"x\"\n", "test.toml:5:", "unknown field `stoer`"),
    ("[experiment]\nreuse_load_across = [\"threads\"]\n[axes]\ndb = [\"leveldb\"]\nthreadcount = [1, 2]\n", "test.toml:2:", "no axis 'threads'"),
    ("[experiment]\nreuse_load_across = [\"threadcount\"]\n[axes]\ndb = [\"memory\"]\nthreadcount = [1, 2]\n", "test.toml:1:", "keeps no data directory"),
    ("[experiment]\nreuse_load_across = [\"threadcount\"]\nphases = [\"run\"]\n[axes]\ndb = [\"leveldb\"]\nthreadcount = [1, 2]\n", "test.toml:1:", "needs phases"),
    ("[experiment]\nbaseline = { db = \"rocksdb\" }\n[axes]\ndb = [\"leveldb\"]\n", "test.toml:2:", "not a value of axis 'db'"),
    ("[experiment]\nbaseline = { engine = \"leveldb\" }\n[axes]\ndb = [\"leveldb\"]\n", "test.toml:2:", "no axis 'engine'"),
    ("[experiment]\ntime_limit = 0\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "at least 1 second"),
    ("[experiment\n[axes]\n", "test.toml:1:", ""),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\nclients = [1, 2]\n", "test.toml:4:", "db 'memory' is embedded in each ycsb process"),
    ("[experiment]\n[axes]\ndb = [\"redis\"]\nclients = [0]\n", "test.toml:4:", "from 1 to 64"),
    ("[experiment]\n[axes]\ndb = [\"redis\"]\nclients = [\"two\"]\n", "test.toml:4:", "axes.clients 'two'"),
    ("[experiment]\n[properties]\n\"client.count\" = 2\n[axes]\ndb = [\"redis\"]\nclients = [2]\n", "test.toml:6:", "remove it from [properties]"),
    ("[axes]\ndb = [\"memory\"]\n", "test.toml:1:", "missing field `experiment`"),
    ("[experiment]\nstatus_interval = 0\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "experiment.status_interval = 0: expected seconds, at least 0.05"),
    ("[experiment]\nstatus_interval = 0.01\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "at least 0.05"),
    ("[experiment]\nstatus_interval = \"1s\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "expected f64"),
    // A target axis holds rates: numbers, 0 or more (0: unthrottled).
    ("[experiment]\n[axes]\ndb = [\"memory\"]\ntarget = [1000,\n  -5]\n", "test.toml:5:", "axes.target '-5': expected a rate in operations per second, 0 or more"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\ntarget = [\"fast\"]\n", "test.toml:4:", "axes.target 'fast'"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\ntarget = [true]\n", "test.toml:4:", "axes.target 'true'"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\ntarget = [nan]\n", "test.toml:4:", "axes.target 'NaN'"),
    // Names that become directory names never leave the results directory.
    ("[experiment]\nname = \"..\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "experiment.name '..' cannot name a directory"),
    ("[experiment]\nname = \".\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "experiment.name '.' cannot name a directory"),
    ("[experiment]\nname = \"\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "it is empty"),
    ("[experiment]\nname = \"/etc\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "names a directory"),
    ("[experiment]\nname = \"a\\u0000b\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "names a directory"),
    ("[experiment]\nname = \"io-ceiling.json\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "a file of the results directory"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\n\"../../x\" = [1]\n", "test.toml:4:", "axis name is part of cell directory names"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\n\"a/b\" = [1]\n", "test.toml:4:", "axis name is part of cell directory names"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\n\"\" = [1]\n", "test.toml:4:", "axis '' cannot name a directory"),
    ("[experiment]\n[axes]\ndb = [\"memory\",\n \"..\"]\n", "test.toml:4:", "axes.db '..' cannot name a directory"),
    // Refusals whose checks moved when the parser was split into steps.
    ("[experiment]\n[axes]\ndb = [\"memory\"]\nworkload = [\"../workloads/workloada\",\n  \"../matrices/../workloads/workloada\"]\n", "test.toml:5:", "axes.workload: two files named 'workloada'; cell names would clash"),
    ("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\nstore = \"redis\"\nengine = \"memory\"\n", "test.toml:6:", "db.x.engine needs server = \"ycsb-serve\""),
    ("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\nstore = \"redis\"\nserver = \"redis-server\"\nengine = \"memory\"\n", "test.toml:7:", "db.x.engine is only for server = \"ycsb-serve\""),
    ("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\nstore = \"http\"\nserver = \"redis-server\"\n", "test.toml:6:", "redis-server speaks RESP, which 'http' does not"),
    ("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\nstore = \"leveldb\"\nengine_properties = { a = 1 }\n", "test.toml:4:", "db.x: engine_property_files and engine_properties need server"),
    ("[experiment]\ndata_dir = \"\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "experiment.data_dir is empty"),
    ("[experiment]\nserver_cpus = \"a\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "experiment.server_cpus 'a'"),
    ("[experiment]\nio_ceiling = \"much\"\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "experiment.io_ceiling 'much': expected a size"),
    ("[experiment]\nphases = [\"run\", \"run\"]\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "experiment.phases: 'run' listed twice"),
    ("[experiment]\nphases = []\n[axes]\ndb = [\"memory\"]\n", "test.toml:2:", "experiment.phases is empty"),
    ("[experiment]\nreuse_load_across = [\"db\"]\n[axes]\ndb = [\"leveldb\"]\n", "test.toml:2:", "the db axis cannot share a load"),
    ("[experiment]\n[axes]\ndb = [\"memory\"]\nmemory_limit = [\"lots\"]\n", "test.toml:4:", "axes.memory_limit 'lots'"),
];

#[test]
fn bad_matrices_are_refused_naming_the_line() {
    for (text, at, words) in BAD {
        match check(text) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => {
                assert!(
                    e.contains(at) && e.contains(words),
                    "for\n{text}\nexpected '{at}' and '{words}' in: {e}"
                );
                assert!(!e.contains('\n'), "one line: {e}");
            }
        }
    }
}

#[test]
fn shared_loads_group_run_cells() {
    let text = "[experiment]\nreuse_load_across = [\"threadcount\"]\n[axes]\ndb = [\"leveldb\", \"rocksdb\"]\nthreadcount = [1, 2]\n";
    let m = check(text).unwrap();
    let all = cells::expand(&m);
    assert_eq!(all[0].load.as_deref(), Some("load,db=leveldb,r1"));
    assert_eq!(all[1].load, all[0].load);
    assert_ne!(all[2].load, all[0].load);
    let loads = cells::load_cells(&m, &all);
    assert_eq!(loads.len(), 2);
    // The load runs with the shared axis at its first value.
    assert_eq!(
        loads[0].axis_properties(),
        vec![("threadcount".to_string(), "1".to_string())]
    );
}

#[test]
fn a_fractional_status_interval_refines_the_series_and_the_sampling() {
    let m = check("[experiment]\nstatus_interval = 0.25\n[axes]\ndb = [\"memory\"]\n").unwrap();
    assert_eq!(m.status_interval, 0.25);
    assert_eq!(m.sample_interval(), std::time::Duration::from_millis(250));
    let m = check("[experiment]\nstatus_interval = 2\n[axes]\ndb = [\"memory\"]\n").unwrap();
    // Whole seconds are given to ycsb as before (the cells' fingerprints
    // do not change); the processes are sampled twice a second anyway.
    assert_eq!(m.status_interval.to_string(), "2");
    assert_eq!(m.sample_interval(), std::time::Duration::from_millis(500));
}

#[test]
fn a_target_sweep_shares_a_load_run_unthrottled() {
    let text = "[experiment]\nreuse_load_across = [\"target\"]\n[axes]\ndb = [\"leveldb\"]\ntarget = [1000, 2500.5, 0]\n";
    let m = check(text).unwrap();
    let all = cells::expand(&m);
    let ids: Vec<&str> = all.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "db=leveldb,target=1000,r1",
            "db=leveldb,target=2500.5,r1",
            "db=leveldb,target=0,r1"
        ]
    );
    assert!(all
        .iter()
        .all(|c| c.load.as_deref() == Some("load,db=leveldb,r1")));
    assert_eq!(
        all[1].axis_properties(),
        vec![("target".to_string(), "2500.5".to_string())]
    );
    let loads = cells::load_cells(&m, &all);
    assert_eq!(loads.len(), 1);
    // Not at the first target: as fast as the store goes.
    assert_eq!(
        loads[0].axis_properties(),
        vec![("target".to_string(), "0".to_string())]
    );
}

#[test]
fn servers_and_workloads() {
    let text = "[experiment]\n[axes]\ndb = [\"lv\", \"rd\"]\nworkload = [\"../workloads/workloada\", \"../workloads/workloadc\"]\n[db.lv]\nstore = \"redis\"\nserver = \"ycsb-serve\"\nengine = \"leveldb\"\n[db.rd]\nstore = \"redis\"\nserver = \"redis-server\"\n";
    let m = check(text).unwrap();
    let all = cells::expand(&m);
    assert_eq!(all[0].id, "db=lv,workload=workloada,r1");
    assert!(all[0].workload_files()[0].ends_with("workloads/workloada"));
    assert_eq!(
        m.dbs["lv"].data_engine(),
        Some(("leveldb", "leveldb.dbname"))
    );
    assert!(!m.dbs["rd"].data_is_reusable());
}

#[test]
fn sizes() {
    assert_eq!(parse_size("512M"), Some(512 << 20));
    assert_eq!(parse_size("2GiB"), Some(2 << 30));
    assert_eq!(parse_size("1000"), Some(1000));
    assert_eq!(parse_size("0"), None);
    assert_eq!(parse_size("12Q"), None);
}

#[test]
fn shipped_matrices_are_valid() {
    let mut n = 0;
    for e in std::fs::read_dir(dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            super::matrix::load(&p).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 3, "matrices/ has the examples");
}

/// The shipped batching matrix: every db at every batch size, each cell
/// handing `batch.size` to ycsb as a property (an axis of any property
/// name).
#[test]
fn the_batching_matrix_gives_each_cell_its_batch_size() {
    let m = super::matrix::load(&dir().join("batching.toml")).unwrap();
    let cells = cells::expand(&m);
    assert_eq!(cells.len(), 8 * 4 * 2);
    let mut sizes: Vec<String> = cells
        .iter()
        .filter(|c| c.repeat == 1 && c.label("db") == Some("rocksdb"))
        .flat_map(|c| c.axis_properties())
        .filter(|(name, _)| name == "batch.size")
        .map(|(_, value)| value)
        .collect();
    sizes.sort_by_key(|v| v.parse::<u32>().unwrap());
    assert_eq!(sizes, ["1", "10", "100", "1000"]);
}

/// A result as a cell would leave it, with the figures the summary reads.
fn result(
    m: &super::matrix::Matrix,
    id: &str,
    throughput: f64,
    p99_ns: f64,
) -> super::summary::CellResult {
    let cell = cells::expand(m).into_iter().find(|c| c.id == id).unwrap();
    let section = |name: &str, operations: u64, percentiles: serde_json::Value| {
        serde_json::json!({"name": name, "operation": name, "intended": false,
            "operations": operations, "average_us": 0.0, "min_us": 0, "max_us": 0,
            "average_ns": 0.0, "min_ns": 0, "max_ns": 0, "percentiles": percentiles,
            "returns": []})
    };
    let p = |percentile: f64, ns: f64| serde_json::json!({"percentile": percentile, "us": (ns / 1000.0) as u64, "ns": ns as u64});
    let export = serde_json::json!({
        "metadata": {"tool": "ycsb", "version": "0", "git_revision": null, "host": null,
                     "start_time": "2026-12-04T00:00:00+00:00", "command_line": []},
        "config": [{"key": "fieldcount", "value": "1", "origin": "-p"},
                   {"key": "fieldlength", "value": "100", "origin": "-p"}],
        "phases": [{"phase": "run", "throughput": throughput, "runtime_ms": 1000,
            "runtime_ns": 1_000_000_000_u64, "operations": 1000, "sections": [
            section("INSERT", 1000, serde_json::json!([p(50.0, 1000.0), p(99.0, p99_ns), p(99.9, 9000.0)])),
            section("CLEANUP", 1, serde_json::json!([]))
        ]}]
    });
    let export = ycsb_results::read_export(export.to_string().as_bytes()).unwrap();
    super::summary::CellResult {
        cell,
        export,
        series: Vec::new(),
        io_ceiling: Some(super::records::IoCeiling {
            host: "h".into(),
            device: "vda".into(),
            mount: "/".into(),
            fstype: "ext4".into(),
            bytes_written: 1 << 20,
            write_bytes_per_sec: 1e6,
            measured_at: "t".into(),
            method: "m".into(),
        }),
    }
}

#[test]
fn summary_groups_repeats_and_divides_by_the_baseline() {
    let text = "[experiment]\nrepeats = 2\nphases = [\"run\"]\nbaseline = { db = \"leveldb\" }\n[axes]\ndb = [\"leveldb\", \"memory\"]\n";
    let m = check(text).unwrap();
    let rs = vec![
        result(&m, "db=leveldb,r1", 100.0, 2000.0),
        result(&m, "db=leveldb,r2", 300.0, 4000.0),
        result(&m, "db=memory,r1", 400.0, 1000.0),
        result(&m, "db=memory,r2", 400.0, 1000.0),
    ];
    let rows = super::summary::rows(&m, &rs, "run");
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0].n, rows[0].ops_mean), (2, 200.0));
    assert!((rows[0].ops_sd - 20_000f64.sqrt()).abs() < 1e-9);
    assert_eq!(rows[0].ratio, Some(1.0));
    assert_eq!(rows[1].ratio, Some(2.0));
    assert_eq!(rows[1].ops_sd, 0.0);
    // Latencies are means over repeats, in microseconds; CLEANUP is not an operation row.
    assert_eq!(rows[0].latency.keys().collect::<Vec<_>>(), vec!["INSERT"]);
    assert_eq!(rows[0].latency["INSERT"].p99, 3.0);
    // Inserts of a 23-byte key and one 100-byte field, 1000 per second, on a 1 MB/s device;
    // only engines with a data directory are compared with the device.
    assert_eq!(rows[0].user_bytes_per_sec, Some(123_000.0));
    assert_eq!(rows[0].io_fraction, Some(0.123));
    assert_eq!(rows[1].user_bytes_per_sec, None);
    let csv = super::summary::csv(&m, &rows);
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with("leveldb,2,200,141.42"),
        "{csv}"
    );
    let md = super::summary::markdown(&m, "run", &rows);
    assert!(
        md.contains("| leveldb | 2 | 200 ± 141 | 1.00x | 1.00/3.00/9.00 |"),
        "{md}"
    );
}

#[test]
fn summary_names_the_engine_build_and_marks_assertions() {
    let text = "[experiment]\nphases = [\"run\"]\n[axes]\ndb = [\"leveldb\", \"memory\"]\n";
    let m = check(text).unwrap();
    let mut debian = result(&m, "db=leveldb,r1", 100.0, 2000.0);
    debian.export.metadata.engine = Some("LevelDB".into());
    debian.export.metadata.engine_build = Some(ycsb_results::EngineBuildEntry {
        library: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1d.23.0".into(),
        assertions: "enabled".into(),
        evidence: "imports __assert_fail".into(),
    });
    let mut release = result(&m, "db=memory,r1", 400.0, 1000.0);
    release.export.metadata.engine = Some("x".into());
    release.export.metadata.engine_build = Some(ycsb_results::EngineBuildEntry {
        library: "static".into(),
        assertions: "disabled".into(),
        evidence: String::new(),
    });
    let rows = super::summary::rows(&m, &[debian, release], "run");
    assert_eq!(
        rows[0].build.as_deref(),
        Some("libleveldb.so.1d.23.0, assertions enabled")
    );
    assert!(rows[0].assertions_enabled);
    assert_eq!(
        rows[1].build.as_deref(),
        Some("static, assertions disabled")
    );
    assert!(!rows[1].assertions_enabled);
    let md = super::summary::markdown(&m, "run", &rows);
    assert!(
        md.contains("| libleveldb.so.1d.23.0, assertions enabled (!) |"),
        "{md}"
    );
    assert!(md.contains("| static, assertions disabled |"), "{md}");
    assert!(
        md.contains("WARNING: Assertions are enabled; benchmarks unnecessarily slow"),
        "{md}"
    );
    assert!(super::summary::terminal(&m, "run", &rows).contains("(!) WARNING"));
    let csv = super::summary::csv(&m, &rows);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",engine_build,assertions_enabled,writes_synced,durability_setting"),
        "{csv}"
    );
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .ends_with(",\"libleveldb.so.1d.23.0, assertions enabled\",true,,"),
        "{csv}"
    );
    // Without a recorded build (older exports), no column and no warning.
    let rows = super::summary::rows(&m, &[result(&m, "db=memory,r1", 1.0, 1.0)], "run");
    assert!(!super::summary::markdown(&m, "run", &rows).contains("engine build"));
}

#[test]
fn summary_shows_each_cells_durability_and_warns_when_they_differ() {
    let text = "[experiment]\nphases = [\"run\"]\n[axes]\ndb = [\"leveldb\", \"redb\"]\nthreadcount = [1, 2]\n";
    let m = check(text).unwrap();
    let durability = |property: &str, value: &str, durable: bool| {
        Some(ycsb_results::DurabilityEntry {
            property: property.into(),
            value: value.into(),
            durable,
        })
    };
    let mut results = Vec::new();
    for threads in [1, 2] {
        let mut leveldb = result(
            &m,
            &format!("db=leveldb,threadcount={threads},r1"),
            100.0,
            1.0,
        );
        leveldb.export.metadata.durability = durability("leveldb.sync", "false", false);
        let mut redb = result(&m, &format!("db=redb,threadcount={threads},r1"), 10.0, 1.0);
        redb.export.metadata.durability = durability("redb.durability", "immediate", true);
        results.extend([leveldb, redb]);
    }
    let rows = super::summary::rows(&m, &results, "run");
    assert_eq!(rows[1].durable, Some(true));
    assert_eq!(
        rows[1].durability.as_deref(),
        Some("redb.durability=immediate")
    );
    let md = super::summary::markdown(&m, "run", &rows);
    assert!(md.contains("| writes synced |"), "{md}");
    assert!(md.contains("| no (leveldb.sync=false) |"), "{md}");
    assert!(md.contains("| yes (redb.durability=immediate) |"), "{md}");
    let warning = "these cells differ in durability: db=redb synced every write to disk, db=leveldb did not; their write figures are not comparable";
    assert!(md.contains(warning), "{md}");
    assert!(super::summary::terminal(&m, "run", &rows).contains(warning));
    let csv = super::summary::csv(&m, &rows);
    assert!(
        csv.lines()
            .nth(2)
            .unwrap()
            .ends_with(",true,redb.durability=immediate"),
        "{csv}"
    );
    let html = super::report::html(
        &m,
        &results,
        &[("run".into(), rows.clone())],
        &[],
        &super::records::RunContext::default(),
    );
    assert!(html.contains(warning), "the report warns too");

    // One db synced at one thread count only: the rows are named.
    results[2].export.metadata.durability = durability("leveldb.sync", "true", true);
    let rows = super::summary::rows(&m, &results, "run");
    assert_eq!(
        super::summary::durability_warning(&rows).unwrap(),
        "these cells differ in durability: db=redb, db=leveldb,threadcount=2 synced every write to disk, db=leveldb,threadcount=1 did not; their write figures are not comparable"
    );
    // Cells that agree, or whose durability is not known: no warning.
    let same: Vec<_> = rows
        .iter()
        .filter(|r| r.durable == Some(true))
        .cloned()
        .collect();
    assert_eq!(super::summary::durability_warning(&same), None);
    let unknown = super::summary::rows(
        &m,
        &[result(&m, "db=leveldb,threadcount=1,r1", 1.0, 1.0)],
        "run",
    );
    assert_eq!(unknown[0].durable, None);
    assert!(!super::summary::markdown(&m, "run", &unknown).contains("writes synced"));
}

#[test]
fn cells_too_short_to_chart_are_named_with_what_lengthens_them() {
    let text = "[experiment]\nphases = [\"run\"]\n[axes]\ndb = [\"leveldb\", \"memory\"]\n";
    let m = check(text).unwrap();
    let with_series = |id: &str, seconds: f64, sampled: bool| {
        let mut r = result(&m, id, 100.0, 1.0);
        r.series = vec![super::series::PhaseSeries {
            phase: "run".into(),
            start_s: 0.1,
            end_s: 0.1 + seconds,
            resources: if sampled {
                vec![super::series::ResourcePoint {
                    t: 0.5,
                    cpu_percent: 99.0,
                    rss_bytes: 1,
                    server_cpu_percent: None,
                    server_rss_bytes: None,
                }]
            } else {
                Vec::new()
            },
            ..Default::default()
        }];
        r
    };
    let long = [
        with_series("db=leveldb,r1", 12.0, true),
        with_series("db=memory,r1", 6.0, true),
    ];
    assert_eq!(super::summary::too_short_note(&m, &long, "run"), None);

    let short = [
        with_series("db=leveldb,r1", 0.3, false),
        with_series("db=memory,r1", 0.45, false),
    ];
    assert_eq!(
        super::summary::too_short_note(&m, &short, "run").unwrap(),
        "too short for time charts: 2 of 2 cells' run phases lasted 0.30 to 0.45 s (shortest db=leveldb,r1), fewer than 5 status intervals of 1 s, so their charts over time show a few points each. To lengthen them, raise operationcount, or give a large one and a time_limit, which each run then lasts; or set a shorter experiment.status_interval (0.1 gives ten points a second)."
    );
    // Already at a fine interval: only lengthening is suggested.
    let fine = check(&format!(
        "[experiment]\nstatus_interval = 0.1\n{}",
        &text[13..]
    ))
    .unwrap();
    let note = super::summary::too_short_note(&fine, &short[..1], "run").unwrap();
    assert!(
        note.contains("fewer than 5 status intervals of 0.1 s"),
        "{note}"
    );
    assert!(note.ends_with("which each run then lasts."), "{note}");
}

/// Store capabilities come from the registry's descriptors, not from names
/// spelled in the runner: these tests ask the registry which stores have
/// a capability and check that the matrix and the commands follow it.
mod capabilities {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    use ycsb_db::{Protocol, StoreDescriptor};

    use super::check;
    use crate::cells::{self, Cell};
    use crate::matrix::Matrix;
    use crate::run::{fingerprint, Kind, Runner};

    fn stores(keep: impl Fn(&StoreDescriptor) -> bool) -> Vec<&'static StoreDescriptor> {
        ycsb_stores::STORES.iter().filter(|s| keep(s)).collect()
    }

    fn runner() -> Runner {
        Runner {
            ycsb: PathBuf::from("/bin/ycsb"),
            results: PathBuf::from("/r"),
            data: PathBuf::from("/d"),
            force: false,
            stop: Arc::new(AtomicBool::new(false)),
            host: crate::records::HostFacts::default(),
            git: None,
            io_ceiling: None,
        }
    }

    /// The client's and the server's argv of the first cell, on `port`.
    fn commands(m: &Matrix, port: u16) -> (Cell, Vec<String>, Vec<String>) {
        let cell = cells::expand(m).remove(0);
        let (argv, server) = runner().commands(
            m,
            &cell,
            Kind::Fresh,
            Path::new("/d/cell/db"),
            Path::new("/e.json"),
            port,
        );
        (cell, argv, server)
    }

    fn one_db(table: &str) -> String {
        format!("[experiment]\n[axes]\ndb = [\"x\"]\n[db.x]\n{table}")
    }

    #[test]
    fn n_clients_run_each_phase_together_with_their_own_index_and_export() {
        let client = stores(|s| s.server.is_some())[0].name;
        let m = check(&format!(
            "[experiment]\n[properties]\nrecordcount = 10\n[axes]\ndb = [\"x\"]\nclients = [1, 3]\n[db.x]\nstore = \"{client}\"\nserver = \"ycsb-serve\"\nengine = \"memory\"\n"
        ))
        .unwrap();
        let all = cells::expand(&m);
        assert_eq!(all[0].id, "db=x,clients=1,r1");
        assert_eq!((all[0].clients(), all[1].clients()), (1, 3));
        // clients is no ycsb property.
        assert!(all[1].axis_properties().is_empty());
        let (argv, _) = runner().commands(
            &m,
            &all[1],
            Kind::Fresh,
            Path::new("/d/c/db"),
            Path::new("/p/export.json"),
            7000,
        );
        // One client: the cell's own command, unchanged.
        let one = crate::run::client_groups(&m, Kind::Fresh, &argv, 1, Path::new("/p"));
        assert_eq!(one, vec![("", vec![argv.clone()])]);
        // Three: the load by all three, then the run by all three, so no
        // run starts before every share of the data set is loaded.
        let groups = crate::run::client_groups(&m, Kind::Fresh, &argv, 3, Path::new("/p"));
        assert_eq!(
            groups.iter().map(|g| g.0).collect::<Vec<_>>(),
            ["load", "run"]
        );
        for (phase, clients) in &groups {
            assert_eq!(clients.len(), 3);
            for (i, c) in clients.iter().enumerate() {
                let flag = format!("-{phase}");
                assert_eq!(c[1], flag);
                assert!(!c
                    .iter()
                    .any(|a| (a == "-load" || a == "-run") && *a != flag));
                let props: Vec<&str> = c
                    .windows(2)
                    .filter(|w| w[0] == "-p")
                    .map(|w| w[1].as_str())
                    .collect();
                assert!(props.contains(&"client.count=3"), "{c:?}");
                assert!(
                    props.contains(&format!("client.index={i}").as_str()),
                    "{c:?}"
                );
                let export = format!("exportfile=/p/clients/{phase}-client-{i}.json");
                assert_eq!(
                    props
                        .iter()
                        .filter(|p| p.starts_with("exportfile="))
                        .collect::<Vec<_>>(),
                    [&export.as_str()]
                );
                // The same server and properties as the single client.
                assert!(props.contains(&"recordcount=10"));
                assert!(c.iter().any(|a| a.ends_with(":7000")), "{c:?}");
            }
        }
        let run_only = crate::run::client_groups(&m, Kind::RunOnCopy, &argv, 2, Path::new("/p"));
        assert_eq!(run_only.len(), 1);
        assert_eq!(run_only[0].0, "run");
    }

    #[test]
    fn only_stores_with_a_data_dir_can_share_a_load() {
        let with_dir = stores(|s| s.data_dir.is_some());
        let without = stores(|s| s.data_dir.is_none() && s.is_embedded());
        assert!(!with_dir.is_empty() && !without.is_empty());
        let matrix = |store: &str| {
            format!("[experiment]\nname = \"t\"\nreuse_load_across = [\"threadcount\"]\n[axes]\ndb = [\"{store}\"]\nthreadcount = [1, 2]\n")
        };
        for s in &with_dir {
            check(&matrix(s.name)).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        }
        let names: Vec<&str> = with_dir.iter().map(|s| s.name).collect();
        for s in &without {
            let e = check(&matrix(s.name)).unwrap_err();
            assert!(e.contains("test.toml:1:"), "{e}");
            assert!(e.contains("keeps no data directory"), "{e}");
            // The stores that can are listed, as the registry says.
            assert!(e.contains(&format!("only {} ", names.join(", "))), "{e}");
        }
    }

    #[test]
    fn an_embedded_store_gets_its_data_dir_property() {
        for s in stores(|s| s.data_dir.is_some()) {
            let m = check(&format!("[experiment]\n[axes]\ndb = [\"{}\"]\n", s.name)).unwrap();
            let (_, argv, server) = commands(&m, 0);
            let dir = s.data_dir.map(|d| d.name).unwrap();
            assert!(argv.contains(&format!("{dir}=/d/cell/db")), "{argv:?}");
            assert!(server.is_empty());
        }
        for s in stores(|s| s.data_dir.is_none() && s.is_embedded()) {
            let m = check(&format!("[experiment]\n[axes]\ndb = [\"{}\"]\n", s.name)).unwrap();
            let (_, argv, _) = commands(&m, 0);
            assert!(!argv.iter().any(|a| a.contains("/d/cell/db")), "{argv:?}");
        }
    }

    #[test]
    fn a_client_gets_its_address_from_its_descriptor() {
        let resp = stores(|s| s.server.is_some_and(|c| c.protocol == Protocol::Resp));
        assert!(!resp.is_empty(), "the registry has a RESP client");
        for client in resp {
            let m = check(&one_db(&format!(
                "store = \"{}\"\nserver = \"redis-server\"\n",
                client.name
            )))
            .unwrap();
            let (cell, argv, server) = commands(&m, 4242);
            let address = "127.0.0.1:4242".parse().unwrap();
            for (k, v) in client.server.unwrap().address_properties(address) {
                assert!(argv.contains(&format!("{k}={v}")), "{k}: {argv:?}");
            }
            assert_eq!("redis-server", server[0]);
            assert!(
                server.windows(2).any(|w| w == ["--port", "4242"]),
                "{server:?}"
            );
            assert!(
                server.windows(2).any(|w| w == ["--bind", "127.0.0.1"]),
                "{server:?}"
            );
            // The client's port property is not an input: another attempt
            // on another port is the same cell.
            let (_, argv2, _) = commands(&m, 4343);
            assert_ne!(argv, argv2);
            assert_eq!(
                fingerprint(&m, &cell, Kind::Fresh, &argv, &[]),
                fingerprint(&m, &cell, Kind::Fresh, &argv2, &[])
            );
        }
    }

    /// `server = "memcached"` starts memcached on the cell's port for a
    /// client of its protocol, and is refused for any other client.
    #[test]
    fn memcached_is_started_for_a_memcached_client_only() {
        let clients = stores(|s| s.server.is_some_and(|c| c.protocol == Protocol::Memcached));
        assert!(!clients.is_empty(), "the registry has a memcached client");
        for client in clients {
            let m = check(&one_db(&format!(
                "store = \"{}\"\nserver = \"memcached\"\n",
                client.name
            )))
            .unwrap();
            let (_, argv, server) = commands(&m, 4242);
            for (k, v) in client
                .server
                .unwrap()
                .address_properties("127.0.0.1:4242".parse().unwrap())
            {
                assert!(argv.contains(&format!("{k}={v}")), "{k}: {argv:?}");
            }
            assert_eq!("memcached", server[0]);
            for pair in [["-p", "4242"], ["-l", "127.0.0.1"], ["-U", "0"]] {
                assert!(server.windows(2).any(|w| w == pair), "{server:?}");
            }
            assert!(!m.dbs["x"].data_is_reusable());
        }
        for other in stores(|s| s.server.is_some_and(|c| c.protocol != Protocol::Memcached)) {
            let e = check(&one_db(&format!(
                "store = \"{}\"\nserver = \"memcached\"\n",
                other.name
            )))
            .unwrap_err();
            assert!(
                e.contains("test.toml:6:") && e.contains("memcached speaks its own protocol"),
                "{e}"
            );
        }
    }

    /// `server = "postgres"` / `"mariadb"` start the server on the cell's
    /// port with its data in the cell's directory, for a client whose
    /// descriptor says what it needs against it; others are refused.
    #[test]
    fn sql_servers_are_started_for_their_clients_only() {
        for (name, program) in [("postgres", "postgres"), ("mariadb", "mariadbd")] {
            let clients = stores(|s| s.server.is_some_and(|c| c.properties_for(name).is_some()));
            assert!(!clients.is_empty(), "the registry has a client of {name}");
            for client in clients {
                let m = check(&one_db(&format!(
                    "store = \"{}\"\nserver = \"{name}\"\n",
                    client.name
                )))
                .unwrap();
                let (_, argv, server) = commands(&m, 4242);
                let c = client.server.unwrap();
                for (k, v) in c.address_properties("127.0.0.1:4242".parse().unwrap()) {
                    assert!(argv.contains(&format!("{k}={v}")), "{k}: {argv:?}");
                }
                for (k, v) in c.properties_for(name).unwrap() {
                    assert!(argv.contains(&format!("{k}={v}")), "{k}: {argv:?}");
                }
                assert!(server.iter().any(|a| a.ends_with(program)), "{server:?}");
                assert!(
                    server.iter().any(|a| a.contains("/d/cell/db")),
                    "{server:?}"
                );
                assert!(server.iter().any(|a| a.contains("4242")), "{server:?}");
                assert!(server.iter().any(|a| a.contains("127.0.0.1")), "{server:?}");
                assert!(!m.dbs["x"].data_is_reusable());
            }
            for other in stores(|s| s.server.is_some_and(|c| c.properties_for(name).is_none())) {
                let e = check(&one_db(&format!(
                    "store = \"{}\"\nserver = \"{name}\"\n",
                    other.name
                )))
                .unwrap_err();
                assert!(
                    e.contains("test.toml:6:") && e.contains("the runner cannot point"),
                    "{e}"
                );
            }
        }
    }

    /// The data directories the SQL servers need are made by their own
    /// tools (real initdb and mariadb-install-db), once: a second attempt
    /// finds them.
    #[test]
    fn sql_servers_data_directories_are_made_once() {
        use crate::matrix::Server;
        use crate::run::attempt::init_server_data;
        for (server, made) in [
            (Server::Postgres, "pgdata/PG_VERSION"),
            (Server::MariaDb, "mariadb/mysql"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let db = dir.path().join("db");
            std::fs::create_dir_all(&db).unwrap();
            init_server_data(&server, &db).unwrap_or_else(|e| panic!("{server:?}: {e}"));
            assert!(db.join(made).exists(), "{server:?}");
            init_server_data(&server, &db).unwrap();
        }
    }

    #[test]
    fn ycsb_serve_embeds_an_engine_and_speaks_the_clients_protocol() {
        let engine = stores(|s| s.data_dir.is_some())[0];
        for client in stores(|s| s.server.is_some_and(|c| c.protocol.served_by_ycsb_serve())) {
            let c = client.server.unwrap();
            let m = check(&one_db(&format!(
                "store = \"{}\"\nserver = \"ycsb-serve\"\nengine = \"{}\"\n",
                client.name, engine.name
            )))
            .unwrap();
            let (_, argv, server) = commands(&m, 4242);
            for (k, v) in c.address_properties("127.0.0.1:4242".parse().unwrap()) {
                assert!(argv.contains(&format!("{k}={v}")), "{k}: {argv:?}");
            }
            for (k, v) in c.for_ycsb_serve {
                assert!(argv.contains(&format!("{k}={v}")), "{k}: {argv:?}");
            }
            let (on, off) = match c.protocol {
                Protocol::Http => ("--http", "--resp"),
                _ => ("--resp", "--http"),
            };
            assert!(
                server.windows(2).any(|w| w == [on, "127.0.0.1:4242"]),
                "{server:?}"
            );
            assert!(server.windows(2).any(|w| w == [off, "off"]), "{server:?}");
            let dir = engine.data_dir.unwrap().name;
            assert!(server.contains(&format!("{dir}=/d/cell/db")), "{server:?}");
            assert_eq!(m.dbs["x"].data_engine(), Some((engine.name, dir)));
            // A served engine with a data directory can share a load.
            assert!(m.dbs["x"].data_is_reusable());
        }
    }

    #[test]
    fn servers_need_the_right_kind_of_store() {
        // redis-server speaks RESP: a client of another protocol is refused.
        for client in stores(|s| s.server.is_some_and(|c| c.protocol != Protocol::Resp)) {
            let e = check(&one_db(&format!(
                "store = \"{}\"\nserver = \"redis-server\"\n",
                client.name
            )))
            .unwrap_err();
            assert!(
                e.contains("test.toml:6:") && e.contains("speaks RESP"),
                "{e}"
            );
        }
        // ycsb serve speaks RESP and HTTP: a client of another protocol is
        // refused.
        for client in stores(|s| s.server.is_some_and(|c| !c.protocol.served_by_ycsb_serve())) {
            let engine = stores(|s| s.data_dir.is_some())[0];
            let e = check(&one_db(&format!(
                "store = \"{}\"\nserver = \"ycsb-serve\"\nengine = \"{}\"\n",
                client.name, engine.name
            )))
            .unwrap_err();
            assert!(
                e.contains("test.toml:6:") && e.contains("ycsb serve speaks RESP and HTTP"),
                "{e}"
            );
        }
        let client = stores(|s| s.server.is_some())[0];
        // ycsb serve embeds in-process stores only.
        for served in stores(|s| s.server.is_some()) {
            let e = check(&one_db(&format!(
                "store = \"{}\"\nserver = \"ycsb-serve\"\nengine = \"{}\"\n",
                client.name, served.name
            )))
            .unwrap_err();
            assert!(
                e.contains("test.toml:7:") && e.contains("ycsb serve embeds"),
                "{e}"
            );
        }
        // An embedded store is a client of no server.
        let embedded = stores(StoreDescriptor::is_embedded)[0];
        let e = check(&one_db(&format!(
            "store = \"{}\"\nserver = \"redis-server\"\n",
            embedded.name
        )))
        .unwrap_err();
        assert!(
            e.contains("test.toml:6:") && e.contains("client of a server"),
            "{e}"
        );
    }
}

#[test]
fn matrix_files_that_are_not_regular_files_are_refused() {
    let e = super::matrix::load(Path::new("/dev/zero"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/zero") && e.contains("character device, not a regular file"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("matrix.toml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped the FIFO case: mkfifo is not available");
        return;
    }
    // Read, this would block for ever: no writer opens the FIFO.
    let e = super::matrix::load(&fifo).unwrap_err().to_string();
    assert!(e.contains("matrix.toml") && e.contains("a FIFO"), "{e}");
}

/// A name that would reach past the results directory as a derived name
/// (the file name), as a very long one, or as a cell name made long by
/// its axes, is refused on the line that makes it.
#[test]
fn names_too_long_or_derived_are_refused_too() {
    let long = "x".repeat(300);
    let e = check(&format!(
        "[experiment]\nname = \"{long}\"\n[axes]\ndb = [\"memory\"]\n"
    ))
    .unwrap_err();
    assert!(
        e.contains("test.toml:2:") && e.contains("at most 246"),
        "{e}"
    );
    // Each part is short enough; together they make a cell name too long.
    let value = "v".repeat(120);
    let e = check(&format!(
        "[experiment]\n[axes]\ndb = [\"memory\"]\nfieldlength = [\"{value}\"]\nfieldcount = [\"{value}\"]\n"
    ))
    .unwrap_err();
    assert!(
        e.contains("test.toml:2:") && e.contains("longest cell name"),
        "{e}"
    );
    // `..toml` has the stem `.`: the default name would be the results root.
    let e = parse(
        &dir().join("..toml"),
        "[experiment]\n[axes]\ndb = [\"memory\"]\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("..toml:1:") && e.contains("set experiment.name"),
        "{e}"
    );
}

struct Collect(Vec<String>);

impl super::Progress for Collect {
    fn status(&mut self, line: &str) {
        self.0.push(line.to_string());
    }
    fn result(&mut self, text: &str) {
        self.0.push(text.to_string());
    }
}

fn run_mode(
    matrix: &Path,
    results: &Path,
    mode: super::Mode,
) -> (Result<(), super::ExperimentError>, Vec<String>) {
    let mut options = super::Options::new(dir(), matrix.to_path_buf(), mode);
    options.results = Some(results.to_path_buf());
    let mut out = Collect(Vec::new());
    let result = super::run(
        &options,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        &mut out,
    );
    (result, out.0)
}

/// Every file under `dir`, with its contents.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p.clone());
                out.push((p, Vec::new()));
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// `name = ".."` once wrote `summary.md` and `matrix.toml` into the parent
/// of the results directory. Now neither `--check` nor a run that writes
/// (here `--report`, which needs no ycsb binary) touches anything.
#[test]
fn a_name_outside_the_results_is_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = tmp.path().join("m.toml");
    std::fs::write(tmp.path().join("summary.md"), "the user's own\n").unwrap();
    for name in ["..", ".", "../.."] {
        std::fs::write(
            &matrix,
            format!("[experiment]\nname = \"{name}\"\nio_ceiling = \"off\"\n[axes]\ndb = [\"memory\"]\n"),
        )
        .unwrap();
        let before = snapshot(tmp.path());
        for mode in [super::Mode::Check, super::Mode::ReportOnly] {
            let (result, _) = run_mode(&matrix, &tmp.path().join("results"), mode);
            let e = result.unwrap_err();
            assert!(
                matches!(e, super::ExperimentError::Matrix(_)),
                "{name}: {e}"
            );
            assert!(e.to_string().contains("m.toml:2:"), "{e}");
            assert_eq!(
                snapshot(tmp.path()),
                before,
                "{name} {mode:?} wrote something"
            );
        }
    }
}

/// An existing `<results>/<name>/` that no experiment made (a user's own
/// directory) is not written into: its files are not overwritten.
#[test]
fn a_results_directory_the_runner_did_not_make_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = tmp.path().join("m.toml");
    std::fs::write(
        &matrix,
        "[experiment]\nname = \"docs\"\nio_ceiling = \"off\"\n[axes]\ndb = [\"memory\"]\n",
    )
    .unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir_all(results.join("docs")).unwrap();
    std::fs::write(results.join("docs").join("summary.md"), "the user's own\n").unwrap();
    let before = snapshot(tmp.path());
    let (result, _) = run_mode(&matrix, &results, super::Mode::ReportOnly);
    let e = result.unwrap_err();
    assert!(matches!(e, super::ExperimentError::NotOwned { .. }), "{e}");
    assert!(e.to_string().contains("was not made by"), "{e}");
    assert_eq!(snapshot(tmp.path()), before);
    // One of its own it recognises, and reports into again.
    std::fs::remove_dir_all(results.join("docs")).unwrap();
    for _ in 0..2 {
        let (result, _) = run_mode(&matrix, &results, super::Mode::ReportOnly);
        result.unwrap();
    }
    assert!(results.join("docs").join("summary.md").is_file());
}

/// A matrix of 2,000,000 values on one axis is refused at once, stating
/// the count; the largest matrix allowed (100,000 cells), with shared
/// loads, is checked in time linear in its cells.
#[test]
fn huge_axes_are_refused_or_expanded_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = tmp.path().join("m.toml");
    let values = |n: usize| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    std::fs::write(
        &matrix,
        format!(
            "[experiment]\nname = \"big\"\n[axes]\ndb = [\"memory\"]\nfieldlength = [{}]\n",
            values(2_000_000)
        ),
    )
    .unwrap();
    // A generous bound: parsing the 15 MB file takes about 4 s in a debug
    // build; the quadratic duplicate check took 100 s in a release build
    // and hours in a debug one. A quadratic loop fails, a slow machine
    // does not.
    let started = std::time::Instant::now();
    let (result, _) = run_mode(&matrix, &tmp.path().join("results"), super::Mode::Check);
    let e = result.unwrap_err().to_string();
    assert!(
        e.contains("m.toml:3:") && e.contains("2000000 cells") && e.contains("at most 100000"),
        "{e}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );

    std::fs::write(
        &matrix,
        format!(
            "[experiment]\nname = \"big\"\nreuse_load_across = [\"threadcount\"]\n[axes]\ndb = [\"leveldb\"]\nfieldlength = [{}]\nthreadcount = [1, 2]\n",
            values(50_000)
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let (result, out) = run_mode(&matrix, &tmp.path().join("results"), super::Mode::Check);
    result.unwrap();
    // The same bound, for the same reason: 100,000 cells and 50,000 loads
    // take about 2 s in a debug build when linear; matching each cell to
    // its load by a scan took an hour.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    let text = out.join("\n");
    assert!(
        text.starts_with("big: 100000 cells and 50000 shared loads"),
        "{}",
        &text[..200]
    );
    assert_eq!(text.lines().count(), 1 + 150_000);
    assert!(
        !tmp.path().join("results").exists(),
        "--check writes nothing"
    );
}

/// The experiment's report is a page of `ycsb report`'s model: its own
/// overview, tables and bars, then the charts every report draws.
#[test]
fn the_report_shares_ycsb_report_s_model_and_renderer() {
    let text = "[experiment]\nname = \"t\"\nrepeats = 2\nphases = [\"run\"]\n[axes]\ndb = [\"leveldb\", \"memory\"]\n";
    let m = check(text).unwrap();
    let rs = vec![
        result(&m, "db=leveldb,r1", 100.0, 2000.0),
        result(&m, "db=leveldb,r2", 300.0, 4000.0),
        result(&m, "db=memory,r1", 400.0, 1000.0),
    ];
    let rows = super::summary::rows(&m, &rs, "run");
    let failed_cell = cells::expand(&m)
        .into_iter()
        .find(|c| c.id == "db=memory,r2")
        .unwrap();
    let failed = vec![(failed_cell, "ycsb exited with status 1".to_string())];
    let extra = super::records::RunContext {
        git: Some("abc".into()),
        ..Default::default()
    };
    let phases = vec![("run".to_string(), rows)];
    let page = super::report::page(&m, &rs, &phases, &failed, &extra);
    let headings: Vec<&str> = page.sections.iter().map(|s| s.heading.as_str()).collect();
    assert_eq!(
        headings,
        ["Overview", "Failed cells", "run phase", "Matrix"]
    );
    let run = &page.sections[2];
    let ycsb_report::Block::Table(table) = &run.blocks[1] else {
        panic!("{:?}", run.blocks[1])
    };
    assert_eq!((table.key_columns, table.rows.len()), (1, 2));
    let ycsb_report::Block::Bars(bars) = &run.blocks[2] else {
        panic!("{:?}", run.blocks[2])
    };
    assert_eq!(bars.bars[0].value, 200.0);
    assert!((bars.bars[0].error - 20_000f64.sqrt()).abs() < 1e-9);
    // The shared charts: a latency distribution per operation, a line per
    // combination (the first repeat), named by its db; and the true reason
    // where the exports have no time series.
    let cdf = page
        .charts()
        .into_iter()
        .find(|c| c.title == "INSERT latency distribution")
        .expect("the shared latency distribution");
    let names: Vec<&str> = cdf.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["leveldb", "memory"]);
    assert!(run.blocks.iter().any(|b| matches!(b,
        ycsb_report::Block::Missing { title, reason }
            if title == "Throughput" && reason.contains("no time series"))));
    let html = super::report::html(&m, &rs, &phases, &failed, &extra);
    assert!(html.contains("<section id=\"failed\"><h2>Failed cells</h2>"));
    assert!(html.contains("ycsb exited with status 1"));
    assert!(!html.contains("<script") && !html.contains("src="));
}
