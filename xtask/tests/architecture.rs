//! docs/ARCHITECTURE.md stays true where it can be checked: every
//! invariant says what keeps it ("*Enforced by:* ..."), and each test,
//! function or file it names there must exist. A renamed test or a moved
//! file otherwise leaves an invariant that nothing checks any more while
//! the page still says something does.

mod common;

use std::path::{Path, PathBuf};

use common::{root, rust_files};

/// The text of each "*Enforced by:*" clause: from the marker to the end
/// of its list item (the next line starting a new item or a blank line).
fn enforced_by_clauses(architecture: &str) -> Vec<String> {
    let mut clauses = Vec::new();
    let mut rest = architecture;
    while let Some(at) = rest.find("*Enforced by:*") {
        let after = &rest[at + "*Enforced by:*".len()..];
        let end = after
            .find("\n- ")
            .into_iter()
            .chain(after.find("\n\n"))
            .chain(after.find("\n#"))
            .min()
            .unwrap_or(after.len());
        clauses.push(after[..end].replace('\n', " "));
        rest = &after[end..];
    }
    clauses
}

/// The backticked names of a clause.
fn quoted(clause: &str) -> Vec<&str> {
    clause.split('`').skip(1).step_by(2).collect()
}

/// A test or function name: a snake_case identifier with an underscore
/// (single words such as `review` are prose, not names).
fn is_function_name(text: &str) -> bool {
    text.contains('_')
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !text.starts_with('_')
}

/// A file named by its path or its file name.
fn is_file_name(text: &str) -> bool {
    !text.contains(' ')
        && (text.ends_with(".rs") || text.ends_with(".md") || text.ends_with(".toml"))
}

fn file_exists(root: &Path, files: &[PathBuf], name: &str) -> bool {
    if root.join(name).exists() {
        return true;
    }
    // A bare or partial path (`outputs.rs`, `generator/counter.rs`): some
    // file of the workspace ends with it.
    files
        .iter()
        .any(|f| f.to_string_lossy().ends_with(&format!("/{name}")))
}

#[test]
fn every_name_an_invariant_says_enforces_it_exists() {
    let root = root();
    let architecture = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let clauses = enforced_by_clauses(&architecture);
    assert!(
        clauses.len() >= 15,
        "found only {} 'Enforced by' clauses: has the page's form changed?",
        clauses.len()
    );
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let sources: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap_or_default())
        .collect();
    let mut checked = 0;
    let mut missing = Vec::new();
    for clause in &clauses {
        for name in quoted(clause) {
            if is_file_name(name) {
                checked += 1;
                if !file_exists(&root, &files, name) {
                    missing.push(format!("file {name}"));
                }
            } else if is_function_name(name) {
                checked += 1;
                let defined = format!("fn {name}(");
                let defined_generic = format!("fn {name}<");
                if !sources
                    .iter()
                    .any(|s| s.contains(&defined) || s.contains(&defined_generic))
                {
                    missing.push(format!("function {name}"));
                }
            }
        }
    }
    assert!(checked >= 20, "only {checked} names checked");
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md says these enforce an invariant, but they do not exist: {missing:?}"
    );
}

#[test]
fn the_clause_reader_finds_names_and_misses_prose() {
    let page =
        "- **A.** *Enforced by:* `a_test` (crates/x/tests/y.rs) and\n  `other.rs`.\n- **B.** \
                *Enforced by:* review, `cargo fmt --all --check`.\n";
    let clauses = enforced_by_clauses(page);
    assert_eq!(clauses.len(), 2, "{clauses:?}");
    assert_eq!(quoted(&clauses[0]), ["a_test", "other.rs"]);
    assert!(is_function_name("a_test") && !is_function_name("review"));
    assert!(is_file_name("other.rs") && !is_file_name("cargo fmt --all --check"));
    assert!(!is_function_name("clippy::print_stdout"));
}
