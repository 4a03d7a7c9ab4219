//! Help and the properties reference, generated from the declarations:
//! each command's help from the [`CommandHelp`] declared beside its flags
//! (args.rs, report.rs, merge.rs), the properties from their
//! `PropertyDecl`s.

use crate::args::{self, CommandHelp, Flag, HelpTopic};

/// What `topic`'s `--help` prints.
pub fn help(topic: HelpTopic) -> String {
    match topic {
        HelpTopic::General => general_help(),
        HelpTopic::Benchmark => command_help(&args::RUN_HELP) + &stores_list(),
        HelpTopic::Shell => command_help(&args::SHELL_HELP) + "\n" + crate::shell::HELP,
        HelpTopic::Serve => {
            let mut out = command_help(&args::SERVE_HELP);
            out.push_str(
                "\nProperties of ycsb serve (with -p or -P; a store's own: 'ycsb properties'):\n",
            );
            #[cfg(feature = "serve")]
            for decls in [
                ycsb_server::resp::PROPERTIES,
                ycsb_server::http::PROPERTIES,
                ycsb_server::auth::PROPERTIES,
            ] {
                out.push_str(&plain_properties(decls));
            }
            #[cfg(not(feature = "serve"))]
            out.push_str("  (none: this build was made without the 'serve' feature)\n");
            out
        }
        HelpTopic::Properties => command_help(&args::PROPERTIES_HELP),
        HelpTopic::Stores => command_help(&args::STORES_HELP),
    }
}

/// A command's help: its usage lines, what it does, its flags (every
/// spelling, its value, its meaning) and its notes.
pub fn command_help<Id>(help: &CommandHelp<Id>) -> String {
    let mut out = String::new();
    for (i, line) in help.usage.iter().enumerate() {
        out.push_str(if i == 0 { "usage: " } else { "       " });
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&format!("\n{}\n\nOptions:\n", help.about));
    out.push_str(&flag_list(help.flags));
    if !help.notes.is_empty() {
        out.push_str(&format!("\n{}\n", help.notes));
    }
    out
}

/// The flags as `--help` lists them: spellings and value, then the
/// meaning in a column (from the next line when the spellings are long).
fn flag_list<Id>(flags: &[Flag<Id>]) -> String {
    const WIDTH: usize = 22;
    let mut out = String::new();
    for flag in flags {
        let mut head = flag.spellings().collect::<Vec<_>>().join(", ");
        if let Some(value) = flag.value {
            head.push(' ');
            head.push_str(value);
        }
        let mut lines = flag.doc.lines();
        if head.len() < WIDTH {
            out.push_str(&format!(
                "  {head:<WIDTH$} {}\n",
                lines.next().unwrap_or_default()
            ));
        } else {
            out.push_str(&format!("  {head}\n"));
        }
        for line in lines {
            out.push_str(&format!("  {:<WIDTH$} {line}\n", ""));
        }
    }
    out
}

/// `Stores:` and one line per store of this build.
fn stores_list() -> String {
    let mut out = String::from("\nStores:\n");
    for s in ycsb_stores::STORES {
        out.push_str(&format!("  {:<10} {}\n", s.name, s.summary));
    }
    out
}

/// `ycsb --help`: every command in a line or two, then the options of
/// `load` and `run`, which most invocations are.
fn general_help() -> String {
    format!(
        "ycsb {version}: benchmark key-value stores with YCSB's workloads

Usage (Java YCSB's form):
  ycsb load <db> [options]      insert the data set
  ycsb run <db> [options]       run the operation mix

Usage (YCSB-cpp's form):
  ycsb -load -run -db <db> [options]   both phases in one process, one store
  ycsb -db <db> [options]              no phase flag: the run phase, as Java's Client

Other commands:
  ycsb shell <db> [options]     Java YCSB's command-line client: read, scan, insert,
                                update, delete and table commands on standard input
  ycsb serve <db> [options]     serve an embedded store over RESP and simpleleveldb-style
                                HTTP (loopback unless told otherwise)
  ycsb bench [flags]            db_bench's benchmarks, flags and output on any store
  ycsb merge [-o merged.json] a.json b.json...
                                one report from several clients' JSON exports (or one
                                HdrHistogram interval log from several clients' logs)
  ycsb report export.json... -o charts.html|charts.svg
                                charts over time: throughput, latency percentiles, CPU,
                                files per LSM level (self-contained HTML or SVG)
  ycsb stores                   list the stores
  ycsb properties [--markdown]  list every property with its default and meaning
  ycsb --help | --version

'ycsb <command> --help' (or 'ycsb help <command>') prints a command's own help:
its usage, its options and what it prints.

Options of load and run:
{options}
{notes}
{stores}",
        version = env!("CARGO_PKG_VERSION"),
        options = flag_list(args::RUN_HELP.flags),
        notes = args::RUN_HELP.notes,
        stores = stores_list(),
    )
}

/// Properties as `ycsb properties` lists them in plain text.
fn plain_properties(decls: &[&ycsb_db::PropertyDecl]) -> String {
    let mut out = String::new();
    for d in decls {
        let default = d.default.unwrap_or("(unset)");
        let mut name = d.name.to_string();
        if !d.aliases.is_empty() {
            name.push_str(&format!(" (alias {})", d.aliases.join(", ")));
        }
        out.push_str(&format!(
            "  {name} = {default}  [{}]\n      {}\n",
            d.type_text(),
            d.doc
        ));
    }
    out
}

/// The reference of every property, generated from the declarations.
pub fn properties_reference(markdown: bool) -> String {
    let mut groups = ycsb_core::property_groups().to_vec();
    let stores = ycsb_stores::STORES;
    for store in stores {
        groups.push((store.name, store.properties));
    }
    #[cfg(feature = "serve")]
    groups.extend([
        ("ycsb serve: RESP", ycsb_server::resp::PROPERTIES),
        ("ycsb serve: HTTP", ycsb_server::http::PROPERTIES),
        ("ycsb serve: access", ycsb_server::auth::PROPERTIES),
    ]);
    let mut out = String::new();
    // Every other name accepted, for a reader who arrives with Java's,
    // YCSB-cpp's or go-ycsb's.
    let mut aliases: Vec<(&str, &str, &str)> = groups
        .iter()
        .flat_map(|(group, decls)| {
            decls
                .iter()
                .flat_map(move |d| d.aliases.iter().map(move |a| (*a, d.name, *group)))
        })
        .collect();
    aliases.sort();
    if markdown {
        out.push_str("# Properties\n\nGenerated by `ycsb properties --markdown` from the property declarations; do not edit by hand.\n");
    }
    for (group, decls) in groups.iter().copied() {
        if decls.is_empty() {
            continue;
        }
        if markdown {
            out.push_str(&format!(
                "\n## {group}\n\n| property | also accepted as | type | default | meaning |\n|---|---|---|---|---|\n"
            ));
        } else {
            out.push_str(&format!("\n{group}\n"));
        }
        for d in decls {
            let default = d.default.unwrap_or("(unset)");
            if markdown {
                let default = if default.is_empty() {
                    "(empty)"
                } else {
                    default
                };
                // The names other YCSBs (Java's bindings, YCSB-cpp,
                // go-ycsb) give the same setting, beside ours.
                let aliases = d
                    .aliases
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                out.push_str(&format!(
                    "| `{}` | {aliases} | {} | `{}` | {} |\n",
                    d.name,
                    d.type_text(),
                    default.replace('|', "\\|"),
                    d.doc.replace('|', "\\|")
                ));
            } else {
                out.push_str(&plain_properties(&[*d]));
            }
        }
    }
    if markdown && !aliases.is_empty() {
        out.push_str("\n## Other names\n\nNames other YCSBs (Java YCSB's bindings, YCSB-cpp, go-ycsb) give a setting, and the property that reads them here.\n\n| name | property | group |\n|---|---|---|\n");
        for (alias, name, group) in aliases {
            out.push_str(&format!("| `{alias}` | `{name}` | {group} |\n"));
        }
    }
    out
}
