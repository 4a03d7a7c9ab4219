//! Data files of every syntax, their errors, and the CoreWorkload loading
//! them into the real memory store.

use std::io::Write;
use std::sync::Arc;

use ycsb_db::{Fields, Properties, ReadOp, Record, Status, Store, ThreadContext};

use super::*;
use crate::workload::CoreWorkload;

fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    path.display().to_string()
}

fn data(props: Properties) -> Result<DataSet, String> {
    DataSet::from_properties(&props)
        .map(|d| d.expect("a data set"))
        .map_err(|e| e.to_string())
}

#[test]
fn tsv_with_header_and_composite_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(
        &dir,
        "pages.tsv",
        "lang\tid\ttitle\ttext\nen\t1\tRust\tA language\r\n\nde\t1\tRost\tOxid\n",
    );
    let d = data(
        Properties::new()
            .with("datafile", &path)
            .with("keyfield", "lang,id"),
    )
    .unwrap();
    assert_eq!(d.rows(), 2);
    assert_eq!(d.field_names(), vec!["title", "text"]);
    assert_eq!(d.load_key(0), Some("en:1"));
    assert_eq!(d.run_key(3), Some("de:1"));
    assert_eq!(d.value_bytes(), 4 + 10 + 4 + 4);
    let d = Arc::new(d);
    let mut reader = d.reader(1).unwrap();
    let (mut key, mut rec) = (String::new(), Record::new());
    reader.next_row(&mut key, &mut rec).unwrap();
    assert_eq!(key, "de:1");
    assert_eq!(rec.get("text"), Some(&b"Oxid"[..]));
}

#[test]
fn csv_quotes_and_fieldnames() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(
        &dir,
        "q.csv",
        "k1,\"a, \"\"quoted\"\" text\",x\nk2,plain,\"\"\n",
    );
    let d = data(
        Properties::new()
            .with("datafile", &path)
            .with("fieldnames", "key,body,extra"),
    )
    .unwrap();
    assert_eq!(d.rows(), 2);
    let d = Arc::new(d);
    let mut reader = d.reader(0).unwrap();
    let (mut key, mut rec) = (String::new(), Record::new());
    reader.next_row(&mut key, &mut rec).unwrap();
    assert_eq!(key, "k1");
    assert_eq!(rec.get("body"), Some(&b"a, \"quoted\" text"[..]));
    reader.next_row(&mut key, &mut rec).unwrap();
    assert_eq!(rec.get("extra"), Some(&b""[..]));
}

#[test]
fn json_lines_members_and_generated_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(
        &dir,
        "a.jsonl",
        "{\"id\": 7, \"title\": \"T\", \"n\": [1,2]}\n{\"id\": 8, \"title\": \"U\"}\n",
    );
    let d = data(
        Properties::new()
            .with("datafile", &path)
            .with("keyfield", "id"),
    )
    .unwrap();
    assert_eq!(d.field_names(), vec!["n", "title"]);
    assert_eq!(d.load_key(1), Some("8"));
    // Without custom keys every member is a field and keys are YCSB's.
    let d = data(
        Properties::new()
            .with("datafile", &path)
            .with("usecustomkey", false),
    )
    .unwrap();
    assert_eq!(d.field_names(), vec!["id", "n", "title"]);
    assert_eq!(d.load_key(0), None);
    assert_eq!(d.run_key(0), None);
}

#[test]
fn bad_rows_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, props, expected) in [
        (
            "a.tsv",
            "k\tv\nx\ty\nbad\n",
            vec![],
            "a.tsv:3: 1 columns, expected 2",
        ),
        (
            "b.csv",
            "k,v\nx,\"open\n",
            vec![],
            "b.csv:2: a quoted field continues",
        ),
        (
            "c.csv",
            "k,v\nx,\"a\"b\n",
            vec![],
            "c.csv:2: unexpected 'b' after a closing quote",
        ),
        (
            "d.jsonl",
            "{\"k\":1,\"v\":2}\n[1]\n",
            vec![],
            "d.jsonl:2: expected a JSON object",
        ),
        (
            "e.jsonl",
            "{\"k\":1,\"v\":2}\n{oops\n",
            vec![],
            "e.jsonl:2: invalid JSON",
        ),
        (
            "f.jsonl",
            "{\"k\":1,\"v\":2}\n{\"v\":3}\n",
            vec![],
            "f.jsonl:2: no key field 'k'",
        ),
        ("g.tsv", "k\tv\n", vec![], "g.tsv: no data rows"),
        (
            "h.tsv",
            "k\tv\n1\t2\n",
            vec![("keyfield", "id")],
            "keyfield 'id' is not a column",
        ),
        (
            "i.tsv",
            "k\tk\n1\t2\n",
            vec![],
            "column names must be unique",
        ),
        ("j.tsv", "k\n1\n", vec![], "no field to store"),
        (
            "k.tsv",
            "k;v\n1;2\n",
            vec![("delimiter", "ab")],
            "delimiter",
        ),
    ] {
        let path = file(&dir, name, text);
        let mut p = Properties::new().with("datafile", &path);
        for (k, v) in props {
            p = p.with(k, v);
        }
        let err = data(p).unwrap_err();
        assert!(err.contains(expected), "{name}: {err}");
    }
    let mut p = Properties::new().with("datafile", "/nonexistent/x.tsv");
    assert!(data(p.clone())
        .unwrap_err()
        .starts_with("/nonexistent/x.tsv: "));
    p = Properties::new().with("keyfile", file(&dir, "empty.keys", "\n"));
    assert!(data(p).unwrap_err().contains("empty.keys: no keys"));
    let bytes = dir.path().join("bin.tsv");
    std::fs::write(&bytes, b"k\tv\n1\t\xff\n").unwrap();
    let p = Properties::new().with("datafile", bytes.display().to_string());
    assert!(data(p).unwrap_err().contains("bin.tsv:2: not UTF-8"));
}

#[test]
fn readers_start_at_any_row_across_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("k\tv\n");
    for i in 0..3000 {
        text.push_str(&format!("key{i}\tvalue{i}\n"));
        if i % 7 == 0 {
            text.push('\n');
        }
    }
    let path = file(&dir, "big.tsv", &text);
    let d = Arc::new(data(Properties::new().with("datafile", &path)).unwrap());
    assert_eq!(d.rows(), 3000);
    for first in [0, 1, 1023, 1024, 1025, 2999] {
        let mut r = d.reader(first).unwrap();
        let (mut key, mut rec) = (String::new(), Record::new());
        r.next_row(&mut key, &mut rec).unwrap();
        assert_eq!(key, format!("key{first}"));
        assert_eq!(rec.get("v").unwrap(), format!("value{first}").as_bytes());
    }
}

#[test]
fn workload_loads_the_file_and_runs_on_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("id\tbody\n");
    for i in 0..500 {
        text.push_str(&format!("doc{i}\tsome text number {i}\n"));
    }
    let path = file(&dir, "docs.tsv", &text);
    let props = Properties::new()
        .with("datafile", &path)
        .with("keyfield", "id")
        .with("operationcount", 2000)
        .with("requestdistribution", "zipfian")
        .with("readproportion", 1)
        .with("updateproportion", 0)
        .with("threadcount", 3);
    let w = CoreWorkload::from_properties(&props).unwrap();
    assert_eq!(w.record_count(), 500);
    assert_eq!(w.field_names(), &["body".to_string()]);
    assert_eq!(w.key_name(42), "doc42");
    let bench = crate::Benchmark::from_properties(&props).unwrap();
    let store = ycsb_memory::MemoryStore::new();
    let load = bench.load(&store).unwrap();
    assert_eq!(load.operations, 500);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    assert_eq!(
        t.read(&ReadOp::new("usertable", "doc499", Fields::All), &mut out),
        Status::Ok
    );
    assert_eq!(out.get("body"), Some(&b"some text number 499"[..]));
    let run = bench.run(&store).unwrap();
    assert_eq!(run.operations, 2000);
    let read = run
        .report
        .sections
        .iter()
        .find(|s| s.name == "READ")
        .expect("a READ section");
    // Every read finds a loaded key: all 2000 returned OK.
    let returns: Vec<(&str, u64)> = read
        .returns
        .iter()
        .map(|r| (r.status.as_str(), r.count))
        .collect();
    assert_eq!(returns, vec![(Status::Ok.name(), 2000)]);
    // A keyfile alone: the run draws from its keys.
    let keys = file(&dir, "some.keys", "doc1\ndoc2\n");
    let w = CoreWorkload::from_properties(&Properties::new().with("keyfile", &keys)).unwrap();
    assert_eq!(w.record_count(), 2);
    // dataintegrity makes no sense on file values.
    let err = CoreWorkload::from_properties(&props.clone().with("dataintegrity", true))
        .unwrap_err()
        .to_string();
    assert!(err.contains("dataintegrity"), "{err}");
}
