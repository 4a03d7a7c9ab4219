//! `cargo xtask stores`: what the store registry decides, written where
//! cargo needs it.
//!
//! A store is one crate and one line in the registry
//! (`crates/ycsb-stores/src/lib.rs`, `"name" => ycsb_name::DESCRIPTOR`).
//! Cargo cannot read that line, so the lists it needs are generated from
//! it, between marker comments: ycsb-stores' dependency on each store crate
//! and its feature per store, and ycsb-cli's features (each store's, and the
//! default set). `cargo xtask stores` checks the files against the registry
//! (`cargo xtask test` runs it first); `--write` rewrites them. Workspace
//! members are a glob (`crates/*`), so a new crate needs no line there.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The first line of a generated block.
const BEGIN: &str = "# BEGIN generated from the registry (crates/ycsb-stores/src/lib.rs) by `cargo xtask stores --write`";
/// The last line of a generated block.
const END: &str = "# END generated";

/// One store of the registry.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// The crate's name (`ycsb-rocksdb`).
    krate: String,
    /// The cargo feature that brings it in, when it is optional.
    feature: Option<String>,
}

/// The registry's stores, in its order: the ones always built, then those
/// behind a feature.
fn read_registry(lib_rs: &str) -> Result<Vec<Entry>> {
    let start = lib_rs
        .find("registry! {")
        .context("no `registry! {` in the registry")?;
    let body = &lib_rs[start..];
    let body = &body[..body.find("\n}").context("the registry! block has no end")?];
    let mut entries = Vec::new();
    let (always, features) = body
        .split_once("features:")
        .context("the registry has no `features:` list")?;
    let always = always
        .split_once("always:")
        .context("the registry has no `always:` list")?
        .1;
    for path in always.split([',', '[', ']']) {
        let path = path.trim();
        if path.is_empty() {
            continue;
        }
        entries.push(Entry {
            krate: crate_of(path)?,
            feature: None,
        });
    }
    for line in features.lines() {
        let line = line.trim().trim_end_matches(',');
        let Some((feature, path)) = line.split_once("=>") else {
            continue;
        };
        let feature = feature.trim().trim_matches('"');
        if feature.is_empty()
            || !feature
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            bail!("registry: {line:?} is not `\"store\" => ycsb_store::DESCRIPTOR`");
        }
        entries.push(Entry {
            krate: crate_of(path.trim())?,
            feature: Some(feature.to_string()),
        });
    }
    if !entries.iter().any(|e| e.feature.is_some()) {
        bail!("the registry lists no store behind a feature");
    }
    Ok(entries)
}

/// `ycsb_rocksdb::DESCRIPTOR` is the crate `ycsb-rocksdb`.
fn crate_of(path: &str) -> Result<String> {
    let module = path
        .strip_suffix("::DESCRIPTOR")
        .with_context(|| format!("registry: {path:?} does not name a DESCRIPTOR"))?;
    if module.contains(':') || !module.starts_with("ycsb_") {
        bail!("registry: {path:?} is not a store crate's DESCRIPTOR (ycsb_<store>::DESCRIPTOR)");
    }
    Ok(module.replace('_', "-"))
}

/// ycsb-stores' `[features]` block.
fn stores_features(entries: &[Entry]) -> String {
    let features: Vec<(&str, &str)> = entries
        .iter()
        .filter_map(|e| e.feature.as_deref().map(|f| (f, e.krate.as_str())))
        .collect();
    let mut out = format!(
        "default = [{}]\n",
        features
            .iter()
            .map(|(f, _)| format!("\"{f}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (feature, krate) in features {
        out.push_str(&format!("{feature} = [\"dep:{krate}\"]\n"));
    }
    out
}

/// ycsb-stores' dependencies on the store crates.
fn stores_dependencies(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| match e.feature {
            None => format!("{} = {{ path = \"../{}\" }}\n", e.krate, e.krate),
            Some(_) => format!(
                "{} = {{ path = \"../{}\", optional = true }}\n",
                e.krate, e.krate
            ),
        })
        .collect()
}

/// ycsb-cli's features: one per store, and the default set (every store,
/// then `others`, the defaults that are not stores, such as `serve`).
fn cli_features(entries: &[Entry], others: &[String]) -> String {
    let features: Vec<&str> = entries
        .iter()
        .filter_map(|e| e.feature.as_deref())
        .collect();
    let default: Vec<String> = features
        .iter()
        .map(|f| format!("\"{f}\""))
        .chain(others.iter().map(|o| format!("\"{o}\"")))
        .collect();
    let mut out = format!("default = [{}]\n", default.join(", "));
    for feature in features {
        out.push_str(&format!("{feature} = [\"ycsb-stores/{feature}\"]\n"));
    }
    out
}

/// The entries of a `default = [...]` line of `block` that are not
/// features of the registry's stores.
fn other_defaults(block: &str, entries: &[Entry]) -> Vec<String> {
    let Some(line) = block
        .lines()
        .find(|l| l.trim_start().starts_with("default"))
    else {
        return Vec::new();
    };
    let Some((_, list)) = line.split_once('=') else {
        return Vec::new();
    };
    list.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty() && !entries.iter().any(|e| e.feature.as_deref() == Some(s)))
        .collect()
}

/// The generated blocks of `text`, in order: (start, end) byte ranges of
/// their contents, between the marker lines.
fn blocks(text: &str) -> Result<Vec<(usize, usize)>> {
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(BEGIN) {
        let begin = from + at;
        let start = begin
            + text[begin..]
                .find('\n')
                .context("a marker without a newline")?
            + 1;
        let end = start
            + text[start..]
                .find(END)
                .with_context(|| format!("a `{BEGIN}` without `{END}`"))?;
        ranges.push((start, end));
        from = end + END.len();
    }
    Ok(ranges)
}

/// `text` with its generated blocks' contents replaced by `contents`, in
/// order.
fn replace_blocks(path: &Path, text: &str, contents: &[String]) -> Result<String> {
    let ranges = blocks(text)?;
    if ranges.len() != contents.len() {
        bail!(
            "{}: {} generated blocks, expected {} (each between `{BEGIN}` and `{END}`)",
            path.display(),
            ranges.len(),
            contents.len()
        );
    }
    let mut out = String::new();
    let mut last = 0;
    for ((start, end), content) in ranges.into_iter().zip(contents) {
        out.push_str(&text[last..start]);
        out.push_str(content);
        last = end;
    }
    out.push_str(&text[last..]);
    Ok(out)
}

/// Each generated file with what it should hold: (path, now, expected).
fn expected_files(root: &Path) -> Result<Vec<(PathBuf, String, String)>> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
    };
    let registry = read(&root.join("crates/ycsb-stores/src/lib.rs"))?;
    let entries = read_registry(&registry)?;
    let stores_toml = root.join("crates/ycsb-stores/Cargo.toml");
    let cli_toml = root.join("crates/ycsb-cli/Cargo.toml");
    let stores_now = read(&stores_toml)?;
    let cli_now = read(&cli_toml)?;
    let stores_expected = replace_blocks(
        &stores_toml,
        &stores_now,
        &[stores_features(&entries), stores_dependencies(&entries)],
    )?;
    let cli_block = blocks(&cli_now)?
        .first()
        .map(|&(s, e)| cli_now[s..e].to_string())
        .unwrap_or_default();
    let others = other_defaults(&cli_block, &entries);
    let cli_expected = replace_blocks(&cli_toml, &cli_now, &[cli_features(&entries, &others)])?;
    Ok(vec![
        (stores_toml, stores_now, stores_expected),
        (cli_toml, cli_now, cli_expected),
    ])
}

/// The store crates of the registry at `root` (`ycsb-rocksdb`, ...), in
/// its order.
///
/// # Errors
///
/// When the registry cannot be read or parsed.
pub fn store_crates(root: &Path) -> Result<Vec<String>> {
    let path = root.join("crates/ycsb-stores/src/lib.rs");
    let registry =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    Ok(read_registry(&registry)?
        .into_iter()
        .map(|e| e.krate)
        .collect())
}

/// `cargo xtask stores [--write] [--root DIR]`.
///
/// # Errors
///
/// When the registry cannot be read, a file lacks its markers, or (without
/// `--write`) a generated block is not what the registry gives.
pub fn main(default_root: &Path, args: &[String]) -> Result<()> {
    let mut write = false;
    let mut root = default_root.to_path_buf();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--write" => write = true,
            "--root" => root = PathBuf::from(args.next().context("--root needs a directory")?),
            other => bail!("stores: unknown option {other} (--write, --root DIR)"),
        }
    }
    let mut stale = Vec::new();
    for (path, now, expected) in expected_files(&root)? {
        if now == expected {
            continue;
        }
        if write {
            std::fs::write(&path, &expected)
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("xtask: stores: wrote {}", path.display());
        } else {
            stale.push(path.display().to_string());
        }
    }
    if !stale.is_empty() {
        bail!(
            "{} not what the store registry gives: run `cargo xtask stores --write`",
            stale.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTRY: &str = "use x;\nregistry! {\n    always: [ycsb_basic::DESCRIPTOR, ycsb_memory::DESCRIPTOR],\n    features: [\n        \"rocksdb\" => ycsb_rocksdb::DESCRIPTOR,\n        \"toy\" => ycsb_toy::DESCRIPTOR,\n    ],\n}\n";

    fn entries() -> Vec<Entry> {
        read_registry(REGISTRY).unwrap()
    }

    #[test]
    fn the_registry_gives_crates_and_features() {
        let krates: Vec<_> = entries()
            .into_iter()
            .map(|e| (e.krate, e.feature))
            .collect();
        assert_eq!(
            krates,
            [
                ("ycsb-basic".to_string(), None),
                ("ycsb-memory".to_string(), None),
                ("ycsb-rocksdb".to_string(), Some("rocksdb".to_string())),
                ("ycsb-toy".to_string(), Some("toy".to_string())),
            ]
        );
        assert!(read_registry(
            "registry! {\n always: [], features: [\n \"a b\" => ycsb_a::DESCRIPTOR,\n ],\n}"
        )
        .is_err());
        assert!(read_registry(
            "registry! {\n always: [], features: [\n \"a\" => other::DESCRIPTOR,\n ],\n}"
        )
        .is_err());
    }

    #[test]
    fn generated_lists_follow_the_registry() {
        assert_eq!(
            stores_features(&entries()),
            "default = [\"rocksdb\", \"toy\"]\nrocksdb = [\"dep:ycsb-rocksdb\"]\ntoy = [\"dep:ycsb-toy\"]\n"
        );
        assert!(stores_dependencies(&entries())
            .contains("ycsb-toy = { path = \"../ycsb-toy\", optional = true }\n"));
        assert!(
            stores_dependencies(&entries()).contains("ycsb-basic = { path = \"../ycsb-basic\" }\n")
        );
        let others = other_defaults("default = [\"rocksdb\", \"gone\", \"serve\"]\n", &entries());
        assert_eq!(others, ["gone", "serve"]);
        assert_eq!(
            cli_features(&entries(), &["serve".to_string()]),
            "default = [\"rocksdb\", \"toy\", \"serve\"]\nrocksdb = [\"ycsb-stores/rocksdb\"]\ntoy = [\"ycsb-stores/toy\"]\n"
        );
    }

    #[test]
    fn blocks_are_replaced_between_their_markers_only() {
        let text = format!("a\n{BEGIN}\nold\n{END}\nb\n{BEGIN}\n{END}\nc\n");
        let out = replace_blocks(Path::new("f"), &text, &["new\n".into(), "x\n".into()]).unwrap();
        assert_eq!(
            out,
            format!("a\n{BEGIN}\nnew\n{END}\nb\n{BEGIN}\nx\n{END}\nc\n")
        );
        assert!(replace_blocks(Path::new("f"), &text, &["one\n".into()]).is_err());
        assert!(blocks(&format!("{BEGIN}\nno end\n")).is_err());
    }
}
