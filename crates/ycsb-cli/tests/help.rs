//! Issue 35 item 8, help that helps: every command's `--help` (and `-h`,
//! and `ycsb help <command>`) prints that command's own help on standard
//! output and exits 0, with nothing on standard error; what the help
//! documents is what the command does. (Misspelt stores, flags and
//! commands are rows of bad_input.rs's table.)

mod common;

use common::*;

struct Case {
    args: &'static str,
    /// How standard output starts: the command's usage line.
    starts: &'static str,
    /// What else its help must say (the flags it declares, ...).
    mentions: &'static [&'static str],
}

const RUN_USAGE: &str = "usage: ycsb load <db> [options]";

const CASES: &[Case] = &[
    Case {
        args: "--help",
        starts: "ycsb ",
        mentions: &[
            "ycsb <command> --help",
            "ycsb load <db>",
            "-load -run -db <db>",
            "-threads",
            "Exit status",
        ],
    },
    Case {
        args: "-h",
        starts: "ycsb ",
        mentions: &["ycsb <command> --help"],
    },
    Case {
        args: "help",
        starts: "ycsb ",
        mentions: &["ycsb <command> --help"],
    },
    Case {
        args: "run --help",
        starts: RUN_USAGE,
        mentions: &[
            "ycsb run <db>",
            "-threads",
            "-target",
            "--interval",
            "Exit status",
            "Stores:",
            "rocksdb",
        ],
    },
    Case {
        args: "run -h",
        starts: RUN_USAGE,
        mentions: &["-threads"],
    },
    Case {
        args: "load --help",
        starts: RUN_USAGE,
        mentions: &["-threads"],
    },
    Case {
        args: "load -h",
        starts: RUN_USAGE,
        mentions: &["-threads"],
    },
    Case {
        args: "load -help",
        starts: RUN_USAGE,
        mentions: &["-threads"],
    },
    Case {
        args: "run basic -P workloads/workloada --help",
        starts: RUN_USAGE,
        mentions: &["-threads"],
    },
    Case {
        args: "-load --help",
        starts: RUN_USAGE,
        mentions: &["-load, --load", "-run, --run"],
    },
    Case {
        args: "-load -run -db basic -h",
        starts: RUN_USAGE,
        mentions: &["-db, --db <name>"],
    },
    Case {
        args: "help run",
        starts: RUN_USAGE,
        mentions: &["-threads"],
    },
    Case {
        args: "shell --help",
        starts: "usage: ycsb shell <db> [options]",
        mentions: &["-table <name>", "read key", "quit"],
    },
    Case {
        args: "shell memory -h",
        starts: "usage: ycsb shell <db> [options]",
        mentions: &["-table <name>"],
    },
    Case {
        args: "serve --help",
        starts: "usage: ycsb serve <db> [options]",
        mentions: &[
            "--resp",
            "--http",
            "127.0.0.1:6379",
            "serve.password_file",
            "serve.resp.maxconnections",
            "serve.http.timeout",
        ],
    },
    Case {
        args: "serve memory -h",
        starts: "usage: ycsb serve <db> [options]",
        mentions: &["--resp"],
    },
    Case {
        args: "bench --help",
        starts: "ycsb bench: db_bench's benchmarks",
        mentions: &[
            "Usage:\n  ycsb bench",
            "--benchmarks",
            "--num",
            "Exit status",
        ],
    },
    Case {
        args: "bench -h",
        starts: "ycsb bench: db_bench's benchmarks",
        mentions: &["--benchmarks"],
    },
    Case {
        args: "help bench",
        starts: "ycsb bench: db_bench's benchmarks",
        mentions: &["--benchmarks"],
    },
    Case {
        args: "report --help",
        starts: "usage: ycsb report export.json... -o charts.html|charts.svg",
        mentions: &[
            "-o, --output <file>",
            "--title <text>",
            "'ycsb report: '",
            "exporter=json",
        ],
    },
    Case {
        args: "report -h",
        starts: "usage: ycsb report",
        mentions: &["--title <text>"],
    },
    Case {
        args: "help report",
        starts: "usage: ycsb report",
        mentions: &["--title <text>"],
    },
    Case {
        args: "merge --help",
        starts: "usage: ycsb merge [--force] [-o merged.json] export.json...",
        mentions: &[
            "ycsb merge -o merged/READ.hdr",
            "--force",
            "-o, --output <file>",
        ],
    },
    Case {
        args: "merge -h",
        starts: "usage: ycsb merge",
        mentions: &["--force"],
    },
    Case {
        args: "properties --help",
        starts: "usage: ycsb properties [--markdown]",
        mentions: &["--markdown"],
    },
    Case {
        args: "stores --help",
        starts: "usage: ycsb stores",
        mentions: &["one per line"],
    },
    Case {
        args: "help stores",
        starts: "usage: ycsb stores",
        mentions: &["one per line"],
    },
];

#[test]
fn every_help_prints_its_commands_help_on_stdout_and_exits_0() {
    for case in CASES {
        let o = run(case.args);
        let (out, err) = (stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(0), "`ycsb {}`: {err}", case.args);
        assert!(
            err.is_empty(),
            "`ycsb {}` wrote on stderr: {err}",
            case.args
        );
        assert!(
            out.starts_with(case.starts),
            "`ycsb {}` starts with '{}', expected '{}'",
            case.args,
            out.lines().next().unwrap_or_default(),
            case.starts
        );
        for needle in case.mentions {
            assert!(
                out.contains(needle),
                "`ycsb {}`: '{needle}' not in:\n{out}",
                case.args
            );
        }
    }
}

/// Each command's help is its own, not the general one (before issue 35,
/// `serve --help` and `shell --help` printed `ycsb --help`).
#[test]
fn no_command_prints_another_commands_help() {
    let general = stdout(&run("--help"));
    for args in [
        "run --help",
        "shell --help",
        "serve --help",
        "bench --help",
        "report --help",
        "merge --help",
        "properties --help",
        "stores --help",
    ] {
        let help = stdout(&run(args));
        assert_ne!(help, general, "`ycsb {args}` printed the general help");
    }
    // The same help whichever way it is asked for.
    assert_eq!(stdout(&run("run --help")), stdout(&run("load -h")));
    assert_eq!(stdout(&run("run --help")), stdout(&run("-load --help")));
    assert_eq!(stdout(&run("shell --help")), stdout(&run("help shell")));
}

/// `ycsb report --title`, as `ycsb report --help` documents it: the page's
/// title (escaped), on the HTML page and the SVG; without it, the runs'
/// names after `ycsb report: `.
#[test]
fn report_title_names_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("memory.json");
    let load = ycsb()
        .args(["load", "memory", "-p", "recordcount=200"])
        .args(json_export(&export))
        .output()
        .unwrap();
    assert!(load.status.success(), "{}", stderr(&load));
    let report = |page: &str, title: Option<&str>| {
        let path = dir.path().join(page);
        let mut command = ycsb();
        command.arg("report").arg(&export).arg("-o").arg(&path);
        if let Some(title) = title {
            command.args(["--title", title]);
        }
        let o = command.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(&path).unwrap()
    };
    let html = report("titled.html", Some("Nightly <A & B>"));
    assert!(
        html.contains("<title>Nightly &lt;A &amp; B&gt;</title>")
            && html.contains("<h1>Nightly &lt;A &amp; B&gt;</h1>"),
        "{html}"
    );
    let svg = report("titled.svg", Some("Nightly <A & B>"));
    assert!(svg.contains("Nightly &lt;A &amp; B&gt;"), "{svg}");
    let untitled = report("untitled.html", None);
    assert!(untitled.contains("<title>ycsb report: "), "{untitled}");
    assert!(!untitled.contains("Nightly"), "{untitled}");
}
