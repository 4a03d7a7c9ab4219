use super::*;
use proptest::prelude::*;
use std::path::Path;
use ycsb_db::Property;

fn parse(text: &str) -> Vec<(String, String, usize)> {
    parse_str(text, Path::new("t.properties"))
        .unwrap_or_else(|e| panic!("{text:?}: {e}"))
        .into_iter()
        .map(|l| (l.key, l.value, l.line))
        .collect()
}

type Entries = &'static [(&'static str, &'static str, usize)];

/// Each case: the file text and the entries `java.util.Properties.load`
/// reads from it (key, value, line the entry starts on). The expectations
/// follow the `Properties.load(Reader)` documentation and its examples, and
/// every case was checked against OpenJDK 17's `Properties.load` (key and
/// value; Java does not report lines), as were 20,000 random files built
/// from the syntax's special characters; the one deliberate difference is
/// the byte-order mark.
const CASES: &[(&str, Entries)] = &[
    // The three separators of the Javadoc example, with surrounding blanks.
    ("Truth = Beauty", &[("Truth", "Beauty", 1)]),
    (" Truth:Beauty", &[("Truth", "Beauty", 1)]),
    ("Truth                    :Beauty", &[("Truth", "Beauty", 1)]),
    ("Truth Beauty", &[("Truth", "Beauty", 1)]),
    ("Truth\tBeauty", &[("Truth", "Beauty", 1)]),
    ("Truth\x0c=\x0cBeauty", &[("Truth", "Beauty", 1)]),
    // The Javadoc's continuation example: leading blanks of continued
    // lines are dropped, the rest kept.
    (
        "fruits                           apple, banana, pear, \\\n                                 cantaloupe, watermelon, \\\n                                 kiwi, mango",
        &[("fruits", "apple, banana, pear, cantaloupe, watermelon, kiwi, mango", 1)],
    ),
    // A key alone: empty value. A key with only a separator: empty value.
    ("cheeses", &[("cheeses", "", 1)]),
    ("cheeses=", &[("cheeses", "", 1)]),
    ("cheeses   :   ", &[("cheeses", "", 1)]),
    // Only the first separator is consumed; a second belongs to the value.
    ("key = = value", &[("key", "= value", 1)]),
    ("key:=value", &[("key", "=value", 1)]),
    ("key==value", &[("key", "=value", 1)]),
    ("key value=x", &[("key", "value=x", 1)]),
    // Trailing blanks of a value are kept.
    ("key=value  ", &[("key", "value  ", 1)]),
    // Escaped separators and blanks belong to the key (Javadoc: `\:\=`).
    ("\\:\\=", &[(":=", "", 1)]),
    ("a\\=b=c", &[("a=b", "c", 1)]),
    ("a\\ b c", &[("a b", "c", 1)]),
    ("a\\:b:c", &[("a:b", "c", 1)]),
    // Escapes; a backslash before any other character means that character.
    ("k=\\t\\n\\r\\f\\\\", &[("k", "\t\n\r\x0c\\", 1)]),
    ("k=\\z\\b\\#\\!\\\"", &[("k", "zb#!\"", 1)]),
    ("k=\\u0041\\u00e9\\u20AC", &[("k", "A\u{e9}\u{20ac}", 1)]),
    ("k=\\uD83D\\uDE00", &[("k", "\u{1f600}", 1)]),
    ("\\u006b=v", &[("k", "v", 1)]),
    ("k=\\u0000", &[("k", "\0", 1)]),
    // A value may start with an escaped blank.
    ("k=\\ x", &[("k", " x", 1)]),
    // Comments, only at the start of a logical line, after blanks.
    (
        "# c\n! c\n   # c\nk=v # not a comment",
        &[("k", "v # not a comment", 4)],
    ),
    ("k=v\\\n#not a comment", &[("k", "v#not a comment", 1)]),
    // A comment line ending in a backslash does not continue.
    ("# comment \\\nk=v", &[("k", "v", 2)]),
    // An even number of trailing backslashes does not continue.
    ("a=b\\\\\nc=d", &[("a", "b\\", 1), ("c", "d", 2)]),
    ("a=b\\\\\\\nc=d", &[("a", "b\\c=d", 1)]),
    // A blank line ends a continuation.
    ("a=b\\\n\nc=d", &[("a", "b", 1), ("c", "d", 3)]),
    ("a=b\\\n   \nc=d", &[("a", "b", 1), ("c", "d", 3)]),
    // A continuation into the end of input drops the backslash.
    ("a=b\\", &[("a", "b", 1)]),
    ("a=b\\\n", &[("a", "b", 1)]),
    // A line holding only `\\` at the very end is an entry with an empty
    // key; with anything after it (even blanks or the `\n` of `\r\n`),
    // the continuation swallows it instead.
    ("\\", &[("", "", 1)]),
    ("\\\n", &[("", "", 1)]),
    ("\\\r\n", &[]),
    ("\\\n   ", &[]),
    // After a continued line that held only `\\`, `#` starts a comment.
    ("\\\n#c\nk=v", &[("k", "v", 3)]),
    // Continuation inside a key.
    ("ke\\\n  y=v", &[("key", "v", 1)]),
    // Line ends: \n, \r, \r\n; blank lines counted.
    ("a=1\r\nb=2\rc=3\n\n\nd=4", &[("a", "1", 1), ("b", "2", 2), ("c", "3", 3), ("d", "4", 6)]),
    ("a=1\\\r\n  2\r\nb=3", &[("a", "12", 1), ("b", "3", 3)]),
    // Entries start on the line of their first character.
    ("\n\n  x=1\\\n  2\\\n  3\ny=4", &[("x", "123", 3), ("y", "4", 6)]),
    // A key set twice appears twice, in order.
    ("k=1\nk=2", &[("k", "1", 1), ("k", "2", 2)]),
    // An empty key.
    ("=v", &[("", "v", 1)]),
    // Other Unicode white space is not a separator.
    ("a\u{a0}b=c", &[("a\u{a0}b", "c", 1)]),
    // A byte-order mark is ignored.
    ("\u{feff}k=v", &[("k", "v", 1)]),
    // Nothing but blanks and comments.
    ("", &[]),
    ("  \n\t\n# x\n", &[]),
];

#[test]
fn syntax_table_matches_java() {
    for (text, expected) in CASES {
        let expected: Vec<_> = expected
            .iter()
            .map(|(k, v, l)| (k.to_string(), v.to_string(), *l))
            .collect();
        assert_eq!(parse(text), expected, "input {text:?}");
    }
}

#[test]
fn malformed_escapes_name_file_and_line() {
    let path = Path::new("workloads/bad");
    for (text, message) in [
        (
            "a=1\nb=\\u12",
            "workloads/bad:2: in value: malformed \\uXXXX escape '\\u12'",
        ),
        (
            "a=1\n\nb\\u12G4=1",
            "workloads/bad:3: in key: malformed \\uXXXX escape '\\u12G4'",
        ),
        (
            "x=\\\n  \\uD83Dx",
            "workloads/bad:1: in value: unpaired UTF-16 surrogate \\uD83D",
        ),
        (
            "x=\\uDE00",
            "workloads/bad:1: in value: unpaired UTF-16 surrogate \\uDE00",
        ),
        (
            "x=\\uD83D",
            "workloads/bad:1: in value: unpaired UTF-16 surrogate \\uD83D",
        ),
    ] {
        let err = parse_str(text, path).unwrap_err();
        assert_eq!(err.to_string(), message, "input {text:?}");
        assert!(matches!(err, PropertyFileError::Syntax { .. }));
    }
}

#[test]
fn load_file_sets_values_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("workloada");
    std::fs::write(
        &path,
        "# A\nrecordcount=1000\n\noperationcount = 5\\\n  0\n",
    )
    .unwrap();
    let mut props = Properties::new();
    props.set("recordcount", "7", Origin::Flag("-p"));
    load_file(&path, &mut props).unwrap();
    assert_eq!(props.get_str("recordcount"), Some("1000"));
    assert_eq!(props.get_str("operationcount"), Some("50"));
    assert_eq!(
        props.origin("operationcount").unwrap().to_string(),
        format!("{}:4", path.display())
    );
    const OPS: Property<u64> = Property::new("operationcount", "0", "Operations.");
    props.set(
        "operationcount",
        "x",
        props.origin("operationcount").unwrap().clone(),
    );
    assert_eq!(
        props.get(&OPS).unwrap_err().to_string(),
        format!(
            "operationcount: invalid value 'x' ({}:4): expected an unsigned integer",
            path.display()
        )
    );
}

#[test]
fn load_file_reads_latin1_when_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1");
    std::fs::write(&path, b"name=caf\xe9\nutf=\\u00e9\n").unwrap();
    let mut props = Properties::new();
    load_file(&path, &mut props).unwrap();
    assert_eq!(props.get_str("name"), Some("caf\u{e9}"));
    assert_eq!(props.get_str("utf"), Some("\u{e9}"));

    let utf8 = dir.path().join("utf8");
    std::fs::write(&utf8, "name=caf\u{e9}\n").unwrap();
    load_file(&utf8, &mut props).unwrap();
    assert_eq!(props.get_str("name"), Some("caf\u{e9}"));
}

#[test]
fn load_file_errors_leave_properties_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let mut props = Properties::new();
    let err = load_file(&missing, &mut props).unwrap_err();
    assert!(matches!(err, PropertyFileError::Io { .. }));
    assert!(
        err.to_string().starts_with(&format!(
            "cannot read property file {}: ",
            missing.display()
        )),
        "{err}"
    );

    let bad = dir.path().join("bad");
    std::fs::write(&bad, "a=1\nb=\\uXYZW\n").unwrap();
    let err = load_file(&bad, &mut props).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:2: in value: malformed \\uXXXX escape '\\uXYZW'",
            bad.display()
        )
    );
    assert!(props.is_empty());
}

#[test]
fn assignments_split_at_the_first_equals() {
    let ok = |arg: &str| parse_assignment(arg).unwrap();
    assert_eq!(ok("a=b"), ("a".into(), "b".into()));
    assert_eq!(ok("a="), ("a".into(), "".into()));
    assert_eq!(ok("a=b=c"), ("a".into(), "b=c".into()));
    assert_eq!(ok("a= b "), ("a".into(), " b ".into()));
    assert_eq!(ok("path=C:\\x\\t"), ("path".into(), "C:\\x\\t".into()));
    assert_eq!(
        parse_assignment("threads").unwrap_err().to_string(),
        "invalid property assignment 'threads': expected key=value"
    );
    assert_eq!(
        parse_assignment("=5").unwrap_err().to_string(),
        "invalid property assignment '=5': the key before '=' is empty"
    );
}

#[test]
fn format_entry_escapes_like_java_store() {
    assert_eq!(format_entry("a b", " x y"), "a\\ b=\\ x y");
    assert_eq!(format_entry("k:=#!", "\\\t\n"), "k\\:\\=\\#\\!=\\\\\\t\\n");
    assert_eq!(
        format_entry("k", "\u{e9}\u{1f600}"),
        "k=\\u00E9\\uD83D\\uDE00"
    );
}

/// Text made mostly of the characters that matter to the syntax, so that
/// the fuzz reaches escapes, separators and continuations often.
fn syntax_heavy() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("\\".to_string()),
        Just("\\u".to_string()),
        Just("\\uD83D".to_string()),
        Just("\\uDE00".to_string()),
        Just("=".to_string()),
        Just(":".to_string()),
        Just(" ".to_string()),
        Just("\t".to_string()),
        Just("\n".to_string()),
        Just("\r".to_string()),
        Just("#".to_string()),
        Just("!".to_string()),
        proptest::sample::select(&["0", "41", "d83D", "DE00", "12G", "ffff"][..])
            .prop_map(String::from),
        any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

proptest! {
    // 2048 cases of arbitrary text, 1024 of syntax-heavy text: far more
    // than the combinations of the dozen special characters at a few
    // positions, in seconds of a debug build (generating the text is most
    // of the cost). The parser was also compared with OpenJDK 17 on 20,000
    // random syntax-heavy files.
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn parse_never_panics(text in any::<String>()) {
        let _ = parse_str(&text, Path::new("fuzz"));
    }
}

proptest! {
    // See above: 1024 syntax-heavy cases.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn parse_never_panics_on_syntax_heavy_text(text in syntax_heavy()) {
        if let Ok(lines) = parse_str(&text, Path::new("fuzz")) {
            let natural = text.split(['\n', '\r']).count();
            for l in lines {
                prop_assert!(l.line >= 1 && l.line <= natural);
            }
        }
    }
}

proptest! {
    // 1024 files of up to 8 arbitrary entries each: every character class
    // (blanks, separators, backslashes, controls, non-BMP) appears in keys
    // and values many times over.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn escaped_entries_read_back_unchanged(
        entries in proptest::collection::vec((any::<String>(), any::<String>()), 0..8),
        comments in any::<bool>(),
    ) {
        let mut text = String::new();
        for (key, value) in &entries {
            if comments {
                text.push_str("# a comment \\\n\n");
            }
            text.push_str(&format_entry(key, value));
            text.push('\n');
        }
        let parsed: Vec<_> = parse_str(&text, Path::new("fuzz"))
            .unwrap()
            .into_iter()
            .map(|l| (l.key, l.value))
            .collect();
        prop_assert_eq!(parsed, entries);
    }
}

/// The shipped workload files parse and carry Java YCSB's values.
#[test]
fn shipped_workloads_have_javas_values() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads");
    let load = |name: &str| {
        let mut props = Properties::new();
        load_file(&dir.join(name), &mut props).unwrap_or_else(|e| panic!("{e}"));
        props
    };
    // (file, read, update, insert, scan, read-modify-write, distribution)
    let mixes = [
        ("workloada", "0.5", "0.5", "0", "0", None, "zipfian"),
        ("workloadb", "0.95", "0.05", "0", "0", None, "zipfian"),
        ("workloadc", "1", "0", "0", "0", None, "zipfian"),
        ("workloadd", "0.95", "0", "0.05", "0", None, "latest"),
        ("workloade", "0", "0", "0.05", "0.95", None, "zipfian"),
        ("workloadf", "0.5", "0", "0", "0", Some("0.5"), "zipfian"),
    ];
    for (file, read, update, insert, scan, rmw, dist) in mixes {
        let p = load(file);
        let get = |k: &str| p.get_str(k);
        assert_eq!(get("recordcount"), Some("1000"), "{file}");
        assert_eq!(get("operationcount"), Some("1000"), "{file}");
        assert_eq!(get("workload"), Some("site.ycsb.workloads.CoreWorkload"));
        assert_eq!(get("readallfields"), Some("true"), "{file}");
        assert_eq!(get("readproportion"), Some(read), "{file}");
        assert_eq!(get("updateproportion"), Some(update), "{file}");
        assert_eq!(get("insertproportion"), Some(insert), "{file}");
        assert_eq!(get("scanproportion"), Some(scan), "{file}");
        assert_eq!(get("readmodifywriteproportion"), rmw, "{file}");
        assert_eq!(get("requestdistribution"), Some(dist), "{file}");
    }
    let e = load("workloade");
    assert_eq!(e.get_str("maxscanlength"), Some("100"));
    assert_eq!(e.get_str("scanlengthdistribution"), Some("uniform"));

    // Java's template (verbatim) and ours set each property once.
    for (file, at_least) in [
        ("workload_template", 27),
        ("workload_template_annotated", 40),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let lines = parse_str(&text, Path::new(file)).unwrap();
        let mut keys: Vec<_> = lines.iter().map(|l| l.key.as_str()).collect();
        let count = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), count, "a key is set twice in {file}");
        assert!(count >= at_least, "{file}: {count}");
    }
}
