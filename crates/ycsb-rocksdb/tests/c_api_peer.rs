//! The C peer of `docs/journal/performance-engines.md` ("fillseq: the C
//! API's share, measured with a C program"), `peer/c_api_fillseq.c`: it
//! compiles against the installed librocksdb, opens its database with the
//! OPTIONS of one db_bench wrote, and in both of its modes writes exactly
//! db_bench's fillseq records.
//!
//! CI has gcc and installs librocksdb-dev and db_bench (rocksdb-tools), so a
//! missing one is a failure here, not a skip.

use std::path::Path;
use std::process::Command;

fn run(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_c_api_fillseq_peer_builds_and_writes_db_bench_s_records_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("peer/c_api_fillseq.c");
    let program = dir.path().join("c_api_fillseq");
    run(Command::new("gcc")
        .args(["-O2", "-Wall", "-Werror", "-o"])
        .arg(&program)
        .arg(&source)
        .arg("-lrocksdb"));
    let options = dir.path().join("options");
    run(Command::new("/usr/bin/db_bench")
        .args([
            "--benchmarks=fillseq",
            "--num=100",
            "--value_size=100",
            "--key_size=16",
        ])
        .arg(format!("--db={}", options.display())));

    for mode in ["put", "reuse"] {
        let db = dir.path().join(mode);
        let out = run(Command::new(&program)
            .arg(&options)
            .arg(&db)
            .arg("1000")
            .arg(mode));
        assert!(
            out.starts_with(&format!("{mode} 1000 writes: ")) && out.contains(" ops/s, "),
            "{out}"
        );

        let store = rocksdb::DB::open_for_read_only(&rocksdb::Options::default(), &db, false)
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        let records: Vec<_> = store
            .iterator(rocksdb::IteratorMode::Start)
            .map(Result::unwrap)
            .collect();
        assert_eq!(records.len(), 1000, "{mode}");
        // db_bench's GenerateKeyFromInt: the number's 8 bytes big-endian,
        // then '0' up to --key_size.
        for (i, (key, value)) in records.iter().enumerate() {
            let mut expected = (i as u64).to_be_bytes().to_vec();
            expected.extend_from_slice(b"00000000");
            assert_eq!(&key[..], &expected[..], "{mode}: key {i}");
            assert_eq!(value.len(), 100, "{mode}: value {i}");
        }
    }
}
