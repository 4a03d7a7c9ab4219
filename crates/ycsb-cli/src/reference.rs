//! Help and the properties reference, generated from the declarations.

pub fn help_text() -> String {
    let mut stores = String::new();
    for s in ycsb_stores::STORES {
        stores.push_str(&format!("  {:<10} {}\n", s.name, s.summary));
    }
    format!(
        "ycsb {version}: benchmark key-value stores with YCSB's workloads

Usage (Java YCSB's form):
  ycsb load <db> [options]      insert the data set
  ycsb run <db> [options]       run the operation mix

Usage (YCSB-cpp's form):
  ycsb -load -run -db <db> [options]   both phases in one process, one store
  ycsb -db <db> [options]              no phase flag: the run phase, as Java's Client

Other commands:
  ycsb shell <db> [-P f] [-p k=v] [-table name]
                                Java YCSB's command-line client: read, scan, insert,
                                update, delete and table commands, one per line of
                                standard input ('help' lists them, 'quit' ends)
  ycsb serve <db> [-P f] [-p k=v] [--resp ADDR|off] [--http ADDR|off]
                                serve an embedded store over RESP (default 127.0.0.1:6379)
                                and simpleleveldb-style HTTP (default 127.0.0.1:8080)
                                until Ctrl-C or SIGTERM (docs/serve.md: limits, stopping);
                                a bare port means 127.0.0.1:<port>; any address but
                                loopback needs -p serve.password_file=<file> (or
                                serve.password): clients then AUTH or send a Bearer token
  ycsb bench [--db-engine <db>] --benchmarks=fillseq,readrandom,... [--num=N ...]
                                db_bench's benchmarks, flags and output on any store
                                (see 'ycsb bench --help')
  ycsb merge [-o merged.json] a.json b.json...
                                one report from several clients' JSON exports: counts
                                summed, percentiles from the merged histograms
  ycsb merge -o merged/READ.hdr a/READ.hdr b/READ.hdr...
                                one HdrHistogram interval log from several clients' logs
  ycsb report export.json... -o charts.html|charts.svg
                                charts over time: throughput, latency percentiles, CPU,
                                files per LSM level (self-contained HTML or SVG)
  ycsb stores                   list the stores
  ycsb properties [--markdown]  list every property with its default and meaning
  ycsb --help | --version

Options:
  -P <file>        read a property file (Java .properties syntax)
  -p <key>=<value> set a property
  -threads <n>     client threads (property threadcount, default 1)
  -target <n>      target operations per second over all threads (property target);
                   latency is then also measured from each operation's intended start
  -s               print a status line every status.interval seconds on standard error
                   (property status)
  --interval <n>   (go-ycsb) -s with status.interval=n
  -l <label>       put <label> before each status line's date (property label)
  -load, -run, -t  (YCSB-cpp form) the phases to run; -t means -run (properties
                   doload, dotransaction; Java's dotransactions=false is -load)
  -db <name>       (YCSB-cpp form) the store

-P and -p apply in the order given; the last setting of a property wins.
The final report is printed on standard output in Java YCSB's format;
-p exporter=json -p exportfile=<path> also writes a JSON document.

Exit status: 0 done; 2 bad input (command line, property files, property
values: one line naming it and where it came from, before any phase runs);
1 a failure while running (a store that cannot be used, an incomplete load,
more failed operations than errorbudget allows), with the report and export
of what ran still written; 130 stopped by Ctrl-C or SIGTERM, with a partial
report and export; 3 interrupted twice before the export was written: the
process ended at once and said on standard error that the export was not
written (a second interrupt while the export is being written lets it
finish, up to 10 s, and exits with 130).

Stores:
{stores}
Examples:
  ycsb load basic -P workloads/workloada -s
  ycsb -load -run -db memory -P workloads/workloada -p operationcount=100000 -threads 2
",
        version = env!("CARGO_PKG_VERSION"),
    )
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
