//! The command line, turned into a validated [`Invocation`] in one place.
//!
//! Both forms that published blog posts use are accepted verbatim:
//!
//! * Java YCSB: `ycsb load|run <db> -P file -p k=v -s -threads N -target N -l label`
//! * YCSB-cpp: `ycsb -load -run -db <db> -P file -p k=v -s -threads N`
//!
//! The phase and status flags are the properties both programs turn them
//! into (`load`/`run`: Java's `dotransactions`; `-load`, `-run`/`-t`:
//! YCSB-cpp's `doload`, `dotransaction`; `-s`: `status`; `-l`: `label`),
//! so a property file or `-p` can set them too, and the library decides
//! the phases from them (`ycsb_core::ClientSettings`): with none, the run
//! phase runs, as in Java's `Client`.
//!
//! `-P` and `-p` apply in argv order and the last setting of a property
//! wins (YCSB-cpp's rule). Java YCSB instead lets every `-p` win over every
//! `-P` whatever the order; the two agree whenever `-p` follows `-P`, as in
//! every documented example.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

/// A source of properties, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PropertySource {
    /// `-P <file>`.
    File(PathBuf),
    /// `-p key=value` (or a flag such as `-threads`, with the flag's name).
    Assignment {
        /// The flag that set it (`-p`, `-threads`, `-target`, ...).
        flag: &'static str,
        /// The property's name.
        key: String,
        /// Its value.
        value: String,
    },
}

/// Which form the command line used, which decides the extra summary lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `ycsb load|run <db>`.
    Java,
    /// `ycsb -load -run -db <db>`.
    Cpp,
}

/// A benchmark to run: store and properties (the phase and status flags
/// among them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Benchmark {
    /// The store's name.
    pub db: String,
    /// Property files and assignments in argv order.
    pub sources: Vec<PropertySource>,
    /// The command-line form used.
    pub style: Style,
}

/// `ycsb shell <db>`: Java's and go-ycsb's interactive shell on a store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shell {
    /// The store's name.
    pub db: String,
    /// Property files and assignments in argv order.
    pub sources: Vec<PropertySource>,
}

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invocation {
    /// Load and/or run a workload.
    Benchmark(Benchmark),
    /// Print help.
    Help,
    /// Print the version.
    Version,
    /// Print the reference of every property.
    Properties {
        /// Markdown instead of plain text.
        markdown: bool,
    },
    /// List the stores.
    Stores,
    /// Serve an embedded store over RESP and HTTP (`ycsb serve`).
    Serve(Serve),
    /// Read, scan, insert, update and delete records typed on standard
    /// input (`ycsb shell`).
    Shell(Shell),
    /// `ycsb bench [db_bench flags]`: the arguments after `bench`, parsed
    /// by the `bench` module.
    Bench(Vec<String>),
    /// `ycsb merge [-o out] inputs...`: the arguments after `merge`,
    /// parsed by the `merge` module.
    Merge(Vec<String>),
    /// `ycsb report inputs... -o out`: the arguments after `report`,
    /// parsed by the `report` module.
    Report(Vec<String>),
}

/// `ycsb serve <db> [options]`: which store, with which properties, on
/// which addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Serve {
    /// The store's name.
    pub db: String,
    /// Property files and assignments in argv order.
    pub sources: Vec<PropertySource>,
    /// Where to serve RESP; `None` when turned off with `--resp off`.
    pub resp: Option<SocketAddr>,
    /// Where to serve HTTP; `None` when turned off with `--http off`.
    pub http: Option<SocketAddr>,
}

/// The default RESP address of `ycsb serve` (loopback only).
pub const DEFAULT_RESP_ADDR: &str = "127.0.0.1:6379";
/// The default HTTP address of `ycsb serve` (loopback only).
pub const DEFAULT_HTTP_ADDR: &str = "127.0.0.1:8080";

fn parse_listen(flag: &str, value: &str) -> Result<Option<SocketAddr>, UsageError> {
    if value.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    // A bare port means loopback: nothing is exposed unless asked for.
    let text = if value.chars().all(|c| c.is_ascii_digit()) {
        format!("127.0.0.1:{value}")
    } else {
        value.to_string()
    };
    text.parse().map(Some).map_err(|_| {
        usage(format!(
            "{flag} '{value}': expected an address such as 127.0.0.1:6379, a port, or off"
        ))
    })
}

fn parse_serve(args: Vec<String>) -> Result<Invocation, UsageError> {
    let mut it = args.into_iter();
    let mut db = None;
    let mut sources = Vec::new();
    let mut resp = parse_listen("--resp", DEFAULT_RESP_ADDR)?;
    let mut http = parse_listen("--http", DEFAULT_HTTP_ADDR)?;
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .ok_or_else(|| usage(format!("flag {flag} needs a value")))
        };
        match arg.as_str() {
            "-P" => sources.push(PropertySource::File(PathBuf::from(value("-P")?))),
            "-p" => {
                let assignment = value("-p")?;
                let (key, val) = split_assignment(&assignment)
                    .ok_or_else(|| usage(format!("-p '{assignment}': expected key=value")))?;
                sources.push(PropertySource::Assignment {
                    flag: "-p",
                    key,
                    value: val,
                });
            }
            "-db" | "--db" => db = Some(value("-db")?),
            "--resp" | "-resp" => resp = parse_listen("--resp", &value("--resp")?)?,
            "--http" | "-http" => http = parse_listen("--http", &value("--http")?)?,
            "-h" | "--help" => return Ok(Invocation::Help),
            other if other.starts_with('-') => {
                return Err(usage(format!(
                    "unknown flag '{other}' for 'ycsb serve' (see 'ycsb --help')"
                )))
            }
            other if db.is_none() => db = Some(other.to_string()),
            other => {
                return Err(usage(format!(
                    "unexpected argument '{other}' for 'ycsb serve'"
                )))
            }
        }
    }
    let db = db.filter(|d| !d.is_empty()).ok_or_else(|| usage("'ycsb serve' needs a store, as in 'ycsb serve memory' or 'ycsb serve rocksdb -p rocksdb.dbname=/tmp/db'"))?;
    if resp.is_none() && http.is_none() {
        return Err(usage(
            "'ycsb serve' with --resp off and --http off has nothing to serve",
        ));
    }
    Ok(Invocation::Serve(Serve {
        db,
        sources,
        resp,
        http,
    }))
}

/// A command line that cannot be understood: one line naming the argument.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

/// Parses the arguments after the program name.
///
/// # Errors
///
/// A [`UsageError`] naming the offending argument.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, UsageError> {
    let args: Vec<String> = args
        .into_iter()
        .map(|a| {
            a.into_string()
                .map_err(|a| usage(format!("argument {a:?} is not valid UTF-8")))
        })
        .collect::<Result<_, _>>()?;
    let mut it = args.into_iter().peekable();
    let mut bench = Benchmark {
        db: String::new(),
        sources: Vec::new(),
        style: Style::Cpp,
    };
    let mut db: Option<String> = None;

    match it.peek().map(String::as_str) {
        None => return Ok(Invocation::Help),
        Some("help" | "-h" | "--help" | "-help") => return Ok(Invocation::Help),
        Some("-V" | "--version" | "version" | "-version") => return Ok(Invocation::Version),
        Some("stores") => return Ok(Invocation::Stores),
        Some("serve") => {
            it.next();
            return parse_serve(it.collect());
        }
        Some("shell") => {
            it.next();
            return parse_shell(it.collect());
        }
        Some("bench") => {
            it.next();
            return Ok(Invocation::Bench(it.collect()));
        }
        Some("merge") => {
            it.next();
            return Ok(Invocation::Merge(it.collect()));
        }
        Some("report") => {
            it.next();
            return Ok(Invocation::Report(it.collect()));
        }
        Some("properties") => {
            it.next();
            let markdown = match it.next().as_deref() {
                None => false,
                Some("--markdown") => true,
                Some(other) => {
                    return Err(usage(format!(
                        "unknown argument '{other}' for 'properties' (expected --markdown)"
                    )))
                }
            };
            return Ok(Invocation::Properties { markdown });
        }
        Some("load" | "run") => {
            let command = it.next().unwrap_or_default();
            bench.style = Style::Java;
            // What Java's bin/ycsb passes its Client: -load or -t.
            bench.sources.push(flag_assignment(
                if command == "load" { "load" } else { "run" },
                "dotransactions",
                if command == "load" { "false" } else { "true" },
            ));
            match it.next() {
                Some(name) if !name.starts_with('-') && !name.is_empty() => db = Some(name),
                Some(flag) => {
                    return Err(usage(format!(
                        "'ycsb {command}' needs the store's name before the options, as in 'ycsb {command} basic -P workloads/workloada' (found '{flag}')"
                    )))
                }
                None => {
                    return Err(usage(format!(
                        "'ycsb {command}' needs the store's name, as in 'ycsb {command} basic -P workloads/workloada'"
                    )))
                }
            }
        }
        Some(_) => {}
    }

    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .ok_or_else(|| usage(format!("flag {flag} needs a value")))
        };
        match arg.as_str() {
            "-P" => bench
                .sources
                .push(PropertySource::File(PathBuf::from(value("-P")?))),
            "-p" => {
                let assignment = value("-p")?;
                let (key, val) = split_assignment(&assignment)
                    .ok_or_else(|| usage(format!("-p '{assignment}': expected key=value")))?;
                bench.sources.push(PropertySource::Assignment {
                    flag: "-p",
                    key,
                    value: val,
                });
            }
            "-s" => bench.sources.push(flag_assignment("-s", "status", "true")),
            // go-ycsb's: its measurements every N seconds, which it
            // always prints: status lines at status.interval=N.
            "--interval" => {
                let every = value("--interval")?;
                bench
                    .sources
                    .push(flag_assignment("--interval", "status", "true"));
                bench
                    .sources
                    .push(flag_assignment("--interval", "status.interval", &every));
            }
            "-l" => {
                let label = value("-l")?;
                bench.sources.push(flag_assignment("-l", "label", &label));
            }
            "-threads" | "--threads" => bench.sources.push(PropertySource::Assignment {
                flag: "-threads",
                key: "threadcount".into(),
                value: value("-threads")?,
            }),
            "-target" | "--target" => bench.sources.push(PropertySource::Assignment {
                flag: "-target",
                key: "target".into(),
                value: value("-target")?,
            }),
            "-db" | "--db" => {
                let name = value("-db")?;
                if db.is_some() && bench.style == Style::Java {
                    return Err(usage(format!(
                        "-db {name}: the store is already named by 'ycsb load|run <db>'"
                    )));
                }
                db = Some(name);
            }
            "-load" | "--load" => bench
                .sources
                .push(flag_assignment("-load", "doload", "true")),
            "-run" | "--run" => {
                bench
                    .sources
                    .push(flag_assignment("-run", "dotransaction", "true"))
            }
            "-t" => bench
                .sources
                .push(flag_assignment("-t", "dotransaction", "true")),
            "-h" | "--help" | "-help" => return Ok(Invocation::Help),
            other if other.starts_with('-') => {
                return Err(usage(format!("unknown flag '{other}' (see 'ycsb --help')")))
            }
            other => {
                return Err(usage(format!(
                    "unexpected argument '{other}' (see 'ycsb --help')"
                )))
            }
        }
    }

    bench.db = db.filter(|d| !d.is_empty()).ok_or_else(|| {
        usage("no store named: add -db <name> (for example -db basic); 'ycsb stores' lists them")
    })?;
    Ok(Invocation::Benchmark(bench))
}

/// A flag that stands for a property (`-s` is `status=true`).
fn flag_assignment(flag: &'static str, key: &str, value: &str) -> PropertySource {
    PropertySource::Assignment {
        flag,
        key: key.to_string(),
        value: value.to_string(),
    }
}

/// `ycsb shell <db> [-P file] [-p k=v] [-table name]`.
fn parse_shell(args: Vec<String>) -> Result<Invocation, UsageError> {
    let mut it = args.into_iter();
    let mut db = None;
    let mut sources = Vec::new();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .ok_or_else(|| usage(format!("flag {flag} needs a value")))
        };
        match arg.as_str() {
            "-P" => sources.push(PropertySource::File(PathBuf::from(value("-P")?))),
            "-p" => {
                let assignment = value("-p")?;
                let (key, val) = split_assignment(&assignment)
                    .ok_or_else(|| usage(format!("-p '{assignment}': expected key=value")))?;
                sources.push(PropertySource::Assignment {
                    flag: "-p",
                    key,
                    value: val,
                });
            }
            "-table" => {
                let table = value("-table")?;
                sources.push(flag_assignment("-table", "table", &table));
            }
            "-db" | "--db" => db = Some(value("-db")?),
            "-h" | "--help" | "-help" => return Ok(Invocation::Help),
            other if other.starts_with('-') => {
                return Err(usage(format!(
                    "unknown flag '{other}' for 'ycsb shell' (see 'ycsb --help')"
                )))
            }
            other if db.is_none() => db = Some(other.to_string()),
            other => {
                return Err(usage(format!(
                    "unexpected argument '{other}' for 'ycsb shell'"
                )))
            }
        }
    }
    let db = db.filter(|d| !d.is_empty()).ok_or_else(|| {
        usage("'ycsb shell' needs a store, as in 'ycsb shell memory' or 'ycsb shell rocksdb -p rocksdb.dbname=/tmp/db'")
    })?;
    Ok(Invocation::Shell(Shell { db, sources }))
}

fn split_assignment(text: &str) -> Option<(String, String)> {
    let (key, value) = text.split_once('=')?;
    let key = key.trim();
    if key.is_empty() {
        return None;
    }
    Some((key.to_string(), value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(line: &str) -> Result<Invocation, UsageError> {
        parse(line.split_whitespace().map(OsString::from))
    }

    fn bench(line: &str) -> Benchmark {
        match parse_str(line) {
            Ok(Invocation::Benchmark(b)) => b,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn assignment(flag: &'static str, key: &str, value: &str) -> PropertySource {
        PropertySource::Assignment {
            flag,
            key: key.into(),
            value: value.into(),
        }
    }

    #[test]
    fn java_form() {
        let b = bench(
            "load basic -P workloads/workloada -p recordcount=5 -s -threads 4 -target 100 -l exp1",
        );
        assert_eq!(b.db, "basic");
        assert_eq!(b.style, Style::Java);
        assert_eq!(
            b.sources,
            vec![
                assignment("load", "dotransactions", "false"),
                PropertySource::File("workloads/workloada".into()),
                assignment("-p", "recordcount", "5"),
                assignment("-s", "status", "true"),
                assignment("-threads", "threadcount", "4"),
                assignment("-target", "target", "100"),
                assignment("-l", "label", "exp1"),
            ]
        );
        let r = bench("run rocksdb -s -P workloads/workloada -p rocksdb.dir=/tmp/x");
        assert_eq!(r.sources[0], assignment("run", "dotransactions", "true"));
        // go-ycsb's --interval: status lines every N seconds.
        let g = bench("run basic -P workloads/workloada --interval 2");
        assert!(g
            .sources
            .contains(&assignment("--interval", "status", "true")));
        assert!(g
            .sources
            .contains(&assignment("--interval", "status.interval", "2")));
    }

    #[test]
    fn cpp_form() {
        let b = bench("-load -run -db leveldb -P w -P leveldb/leveldb.properties -p a=b=c -s");
        assert_eq!(b.db, "leveldb");
        assert_eq!(b.style, Style::Cpp);
        assert_eq!(b.sources[0], assignment("-load", "doload", "true"));
        assert_eq!(b.sources[1], assignment("-run", "dotransaction", "true"));
        assert_eq!(b.sources[4], assignment("-p", "a", "b=c"));
        assert_eq!(b.sources[5], assignment("-s", "status", "true"));
        assert_eq!(
            bench("-t -db basic").sources,
            [assignment("-t", "dotransaction", "true")]
        );
        // No phase flag: Java's Client runs the transaction phase, which
        // the library decides from the (absent) properties.
        assert!(bench("-db basic").sources.is_empty());
    }

    #[test]
    fn shell_form() {
        let Ok(Invocation::Shell(s)) = parse_str("shell memory -P w -p a=b -table t") else {
            panic!()
        };
        assert_eq!(s.db, "memory");
        assert_eq!(
            s.sources,
            vec![
                PropertySource::File("w".into()),
                assignment("-p", "a", "b"),
                assignment("-table", "table", "t"),
            ]
        );
        for (line, expected) in [
            ("shell", "needs a store"),
            ("shell memory extra", "unexpected argument 'extra'"),
            ("shell memory -x", "unknown flag '-x'"),
            ("shell memory -p", "flag -p needs a value"),
        ] {
            let err = parse_str(line).expect_err(line);
            assert!(err.0.contains(expected), "{line}: {}", err.0);
        }
    }

    #[test]
    fn bad_command_lines_name_the_argument() {
        for (line, expected) in [
            ("load", "needs the store's name"),
            ("load -P x", "found '-P'"),
            ("-s -l", "flag -l needs a value"),
            ("-load", "no store named"),
            ("-load -db basic -P", "flag -P needs a value"),
            (
                "-load -db basic -p novalue",
                "-p 'novalue': expected key=value",
            ),
            ("-load -db basic -p =v", "expected key=value"),
            (
                "-load -db basic --frobnicate",
                "unknown flag '--frobnicate'",
            ),
            ("-load -db basic stray", "unexpected argument 'stray'"),
            ("run basic -db other", "already named"),
            ("properties --json", "unknown argument '--json'"),
        ] {
            let err = parse_str(line).expect_err(line);
            assert!(err.0.contains(expected), "{line}: {}", err.0);
        }
    }

    #[test]
    fn serve_form() {
        let Ok(Invocation::Serve(s)) = parse_str("serve memory -p a=b --resp 7000 --http off")
        else {
            panic!()
        };
        assert_eq!(s.db, "memory");
        assert_eq!(s.resp, Some("127.0.0.1:7000".parse().unwrap()));
        assert_eq!(s.http, None);
        let Ok(Invocation::Serve(s)) = parse_str("serve -db leveldb") else {
            panic!()
        };
        assert_eq!(s.resp, Some(DEFAULT_RESP_ADDR.parse().unwrap()));
        assert_eq!(s.http, Some(DEFAULT_HTTP_ADDR.parse().unwrap()));
        for (line, expected) in [
            ("serve", "needs a store"),
            ("serve memory --resp nowhere", "--resp 'nowhere'"),
            ("serve memory --resp off --http off", "nothing to serve"),
            ("serve memory --bogus", "unknown flag '--bogus'"),
        ] {
            let err = parse_str(line).expect_err(line);
            assert!(err.0.contains(expected), "{line}: {}", err.0);
        }
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse_str(""), Ok(Invocation::Help));
        assert_eq!(parse_str("--help"), Ok(Invocation::Help));
        assert_eq!(parse_str("--version"), Ok(Invocation::Version));
        assert_eq!(parse_str("stores"), Ok(Invocation::Stores));
        assert_eq!(
            parse_str("properties --markdown"),
            Ok(Invocation::Properties { markdown: true })
        );
    }
}

#[cfg(test)]
#[path = "args_fuzz.rs"]
mod fuzz;
