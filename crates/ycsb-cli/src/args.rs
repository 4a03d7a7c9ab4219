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

/// A command-line flag, declared once: the parser finds it here, and a
/// command's `--help` (rendered by `reference.rs`) and the "did you mean"
/// hint for a misspelt flag are made from the same declaration.
#[derive(Clone, Copy, Debug)]
pub struct Flag<Id: 'static> {
    /// What the parser does with it.
    pub id: Id,
    /// The spelling `--help` shows, and the origin a property it sets
    /// is reported with.
    pub name: &'static str,
    /// Other spellings accepted (go-ycsb's `--threads`, ...), not shown.
    pub also: &'static [&'static str],
    /// Its value's placeholder (`<file>`); `None` for a switch.
    pub value: Option<&'static str>,
    /// What it does, for `--help` (one line per `\n`).
    pub doc: &'static str,
}

impl<Id> Flag<Id> {
    /// Every spelling that names this flag.
    pub fn spellings(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.also.iter().copied())
    }
}

/// A command's help, declared beside its flags: `reference.rs` renders it
/// as `ycsb <command> --help` prints it.
#[derive(Clone, Copy, Debug)]
pub struct CommandHelp<Id: 'static> {
    /// The usage lines, each a whole command line; the first is printed
    /// after `usage: `.
    pub usage: &'static [&'static str],
    /// What the command does.
    pub about: &'static str,
    /// Its flags, in the order `--help` lists them.
    pub flags: &'static [Flag<Id>],
    /// What follows the flags (rules, exit status, examples); may be empty.
    pub notes: &'static str,
}

/// The declared flag that `arg` spells, if any.
pub fn find_flag<Id>(flags: &'static [Flag<Id>], arg: &str) -> Option<&'static Flag<Id>> {
    flags
        .iter()
        .find(|flag| flag.spellings().any(|name| name == arg))
}

/// The one line for a flag no declaration spells: the nearest declared
/// spelling ([`ycsb_db::nearest_name`], the rule unknown properties are
/// answered with) when one is near, and where the flags are listed.
pub fn unknown_flag<Id>(flags: &[Flag<Id>], arg: &str, help: &str) -> String {
    let hint = ycsb_db::nearest_name(arg, flags.iter().flat_map(Flag::spellings))
        .map(|name| format!("; did you mean '{name}'?"))
        .unwrap_or_default();
    format!("unknown flag '{arg}'{hint} (see '{help} --help')")
}

/// Which help to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelpTopic {
    /// `ycsb --help`: every command, and the options of load and run.
    General,
    /// `ycsb load|run --help`, `ycsb -load --help`.
    Benchmark,
    /// `ycsb shell --help`.
    Shell,
    /// `ycsb serve --help`.
    Serve,
    /// `ycsb properties --help`.
    Properties,
    /// `ycsb stores --help`.
    Stores,
}

const PROPERTY_FILE_DOC: &str = "read a property file (Java .properties syntax)";
const PROPERTY_DOC: &str = "set a property";
const HELP_DOC: &str = "print this help";

/// The flags of `ycsb load|run` and of YCSB-cpp's form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunFlag {
    /// `-P`.
    PropertyFile,
    /// `-p`.
    Property,
    /// `-threads`.
    Threads,
    /// `-target`.
    Target,
    /// `-s`.
    Status,
    /// `--interval` (go-ycsb).
    Interval,
    /// `-l`.
    Label,
    /// `-load` (YCSB-cpp).
    Load,
    /// `-run` (YCSB-cpp).
    Run,
    /// `-t` (YCSB-cpp).
    RunShort,
    /// `-db` (YCSB-cpp).
    Db,
    /// `-h`.
    Help,
}

/// `ycsb load|run <db> [options]` and `ycsb -load -run -db <db> [options]`.
pub const RUN_HELP: CommandHelp<RunFlag> = CommandHelp {
    usage: &[
        "ycsb load <db> [options]             insert the data set",
        "ycsb run <db> [options]              run the operation mix",
        "ycsb -load -run -db <db> [options]   (YCSB-cpp's form) both phases in one process, one store",
        "ycsb -db <db> [options]              (YCSB-cpp's form) no phase flag: the run phase, as Java's Client",
    ],
    about: "Loads and runs a YCSB workload on a store ('ycsb stores' lists them; 'ycsb properties'\nlists every property a workload file or -p can set).",
    flags: &[
        Flag { id: RunFlag::PropertyFile, name: "-P", also: &[], value: Some("<file>"), doc: PROPERTY_FILE_DOC },
        Flag { id: RunFlag::Property, name: "-p", also: &[], value: Some("<key>=<value>"), doc: PROPERTY_DOC },
        Flag { id: RunFlag::Threads, name: "-threads", also: &["--threads"], value: Some("<n>"), doc: "client threads (property threadcount, default 1)" },
        Flag { id: RunFlag::Target, name: "-target", also: &["--target"], value: Some("<n>"), doc: "target operations per second over all threads (property target);\nlatency is then also measured from each operation's intended start" },
        Flag { id: RunFlag::Status, name: "-s", also: &[], value: None, doc: "print a status line every status.interval seconds on standard error\n(property status)" },
        Flag { id: RunFlag::Interval, name: "--interval", also: &[], value: Some("<n>"), doc: "(go-ycsb) -s with status.interval=n" },
        Flag { id: RunFlag::Label, name: "-l", also: &[], value: Some("<label>"), doc: "put <label> before each status line's date (property label)" },
        Flag { id: RunFlag::Load, name: "-load", also: &["--load"], value: None, doc: "(YCSB-cpp's form) run the load phase (property doload; Java's\ndotransactions=false)" },
        Flag { id: RunFlag::Run, name: "-run", also: &["--run"], value: None, doc: "(YCSB-cpp's form) run the transaction phase (property dotransaction)" },
        Flag { id: RunFlag::RunShort, name: "-t", also: &[], value: None, doc: "(YCSB-cpp's form) the same as -run" },
        Flag { id: RunFlag::Db, name: "-db", also: &["--db"], value: Some("<name>"), doc: "(YCSB-cpp's form) the store" },
        Flag { id: RunFlag::Help, name: "-h", also: &["--help", "-help"], value: None, doc: HELP_DOC },
    ],
    notes: "-P and -p apply in the order given; the last setting of a property wins.
The final report is printed on standard output in Java YCSB's format;
-p exporter=json -p exportfile=<path> also writes a JSON document.

Exit status: 0 done; 2 bad input (command line, property files, property
values) or a store that cannot be used (its server does not answer, its data
directory is unusable or in use): one line naming it and where it came from,
before any phase runs; 1 a failure while running (a store that stops working,
an incomplete load, more failed operations than errorbudget allows), with the
report and export of what ran still written; 130 stopped by Ctrl-C or SIGTERM, with a partial
report and export; 3 interrupted twice before the export was written: the
process ended at once and said on standard error that the export was not
written (a second interrupt while the export is being written lets it
finish, up to 10 s, and exits with 130).

Examples:
  ycsb load basic -P workloads/workloada -s
  ycsb -load -run -db memory -P workloads/workloada -p operationcount=100000 -threads 2",
};

/// The flags of `ycsb shell`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShellFlag {
    /// `-P`.
    PropertyFile,
    /// `-p`.
    Property,
    /// `-table`.
    Table,
    /// `-db`.
    Db,
    /// `-h`.
    Help,
}

/// `ycsb shell <db> [options]`.
pub const SHELL_HELP: CommandHelp<ShellFlag> = CommandHelp {
    usage: &["ycsb shell <db> [options]"],
    about: "Java YCSB's command-line client on a store: read, scan, insert, update, delete and\ntable commands, one per line of standard input, answered in Java's words.",
    flags: &[
        Flag { id: ShellFlag::PropertyFile, name: "-P", also: &[], value: Some("<file>"), doc: PROPERTY_FILE_DOC },
        Flag { id: ShellFlag::Property, name: "-p", also: &[], value: Some("<key>=<value>"), doc: PROPERTY_DOC },
        Flag { id: ShellFlag::Table, name: "-table", also: &[], value: Some("<name>"), doc: "the table to start with (property table, default usertable)" },
        Flag { id: ShellFlag::Db, name: "-db", also: &["--db"], value: Some("<name>"), doc: "the store, instead of <db>" },
        Flag { id: ShellFlag::Help, name: "-h", also: &["--help", "-help"], value: None, doc: HELP_DOC },
    ],
    notes: "",
};

/// The flags of `ycsb serve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServeFlag {
    /// `-P`.
    PropertyFile,
    /// `-p`.
    Property,
    /// `--resp`.
    Resp,
    /// `--http`.
    Http,
    /// `-db`.
    Db,
    /// `-h`.
    Help,
}

/// `ycsb serve <db> [options]`.
pub const SERVE_HELP: CommandHelp<ServeFlag> = CommandHelp {
    usage: &["ycsb serve <db> [options]"],
    about: "Serves an embedded store over RESP and simpleleveldb-style HTTP until Ctrl-C or\nSIGTERM, then stops both servers within seconds and closes the store\n(docs/serve.md: limits, stopping).",
    flags: &[
        Flag { id: ServeFlag::PropertyFile, name: "-P", also: &[], value: Some("<file>"), doc: PROPERTY_FILE_DOC },
        Flag { id: ServeFlag::Property, name: "-p", also: &[], value: Some("<key>=<value>"), doc: PROPERTY_DOC },
        Flag { id: ServeFlag::Resp, name: "--resp", also: &["-resp"], value: Some("<addr>|off"), doc: "where to serve RESP (default 127.0.0.1:6379); a bare port means\n127.0.0.1:<port>" },
        Flag { id: ServeFlag::Http, name: "--http", also: &["-http"], value: Some("<addr>|off"), doc: "where to serve HTTP (default 127.0.0.1:8080); a bare port means\n127.0.0.1:<port>" },
        Flag { id: ServeFlag::Db, name: "-db", also: &["--db"], value: Some("<name>"), doc: "the store, instead of <db>" },
        Flag { id: ServeFlag::Help, name: "-h", also: &["--help", "-help"], value: None, doc: HELP_DOC },
    ],
    notes: "Any address but loopback needs -p serve.password_file=<file> (or serve.password):
clients then AUTH (RESP) or send a Bearer token (HTTP).",
};

/// The flags of `ycsb properties`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertiesFlag {
    /// `--markdown`.
    Markdown,
    /// `-h`.
    Help,
}

/// `ycsb properties [--markdown]`.
pub const PROPERTIES_HELP: CommandHelp<PropertiesFlag> = CommandHelp {
    usage: &["ycsb properties [--markdown]"],
    about: "Lists every property with its type, default and meaning: the workload's, the\nrunner's, the measurements', each store's and ycsb serve's.",
    flags: &[
        Flag { id: PropertiesFlag::Markdown, name: "--markdown", also: &[], value: None, doc: "as Markdown tables (docs/properties.md is this output)" },
        Flag { id: PropertiesFlag::Help, name: "-h", also: &["--help", "-help"], value: None, doc: HELP_DOC },
    ],
    notes: "",
};

/// The flags of `ycsb stores`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoresFlag {
    /// `-h`.
    Help,
}

/// `ycsb stores`.
pub const STORES_HELP: CommandHelp<StoresFlag> = CommandHelp {
    usage: &["ycsb stores"],
    about: "Lists the stores of this build, one per line on standard output (and on standard\nerror, those this build was made without).",
    flags: &[
        Flag { id: StoresFlag::Help, name: "-h", also: &["--help", "-help"], value: None, doc: HELP_DOC },
    ],
    notes: "",
};

pub use ycsb_core::properties::PropertySource;

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
    /// Print the help of a command (`ycsb --help`, `ycsb run --help`).
    Help(HelpTopic),
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
        match find_flag(SERVE_HELP.flags, &arg).map(|flag| flag.id) {
            Some(ServeFlag::PropertyFile) => {
                sources.push(PropertySource::File(PathBuf::from(value("-P")?)))
            }
            Some(ServeFlag::Property) => sources.push(property_assignment(&value("-p")?)?),
            Some(ServeFlag::Db) => db = Some(value("-db")?),
            Some(ServeFlag::Resp) => resp = parse_listen("--resp", &value("--resp")?)?,
            Some(ServeFlag::Http) => http = parse_listen("--http", &value("--http")?)?,
            Some(ServeFlag::Help) => return Ok(Invocation::Help(HelpTopic::Serve)),
            None if arg.starts_with('-') => {
                return Err(usage(unknown_flag(SERVE_HELP.flags, &arg, "ycsb serve")))
            }
            None if db.is_none() => db = Some(arg),
            None => {
                return Err(usage(format!(
                    "unexpected argument '{arg}' for 'ycsb serve' (see 'ycsb serve --help')"
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
    let Some(first) = it.peek().cloned() else {
        return Ok(Invocation::Help(HelpTopic::General));
    };
    let mut rest = || {
        it.next();
        it.by_ref().collect::<Vec<String>>()
    };
    match first.as_str() {
        "-h" | "--help" | "-help" => Ok(Invocation::Help(HelpTopic::General)),
        "help" => {
            let mut rest = rest().into_iter();
            help_on(rest.next(), rest.next())
        }
        "-V" | "--version" | "version" | "-version" => Ok(Invocation::Version),
        "stores" => parse_stores(rest()),
        "serve" => parse_serve(rest()),
        "shell" => parse_shell(rest()),
        "bench" => Ok(Invocation::Bench(rest())),
        "merge" => Ok(Invocation::Merge(rest())),
        "report" => Ok(Invocation::Report(rest())),
        "properties" => parse_properties(rest()),
        "load" | "run" => {
            let mut rest = rest().into_iter();
            parse_java_form(&first, &mut rest)
        }
        _ => {
            let bench = Benchmark {
                db: String::new(),
                sources: Vec::new(),
                style: Style::Cpp,
            };
            parse_benchmark_flags(bench, None, "ycsb run", &mut it)
        }
    }
}

/// `ycsb stores [--help]`.
fn parse_stores(args: Vec<String>) -> Result<Invocation, UsageError> {
    match args.into_iter().next() {
        None => Ok(Invocation::Stores),
        Some(arg) => match find_flag(STORES_HELP.flags, &arg).map(|flag| flag.id) {
            Some(StoresFlag::Help) => Ok(Invocation::Help(HelpTopic::Stores)),
            None if arg.starts_with('-') => {
                Err(usage(unknown_flag(STORES_HELP.flags, &arg, "ycsb stores")))
            }
            None => Err(usage(format!(
                "unexpected argument '{arg}' for 'ycsb stores' (see 'ycsb stores --help')"
            ))),
        },
    }
}

/// `ycsb properties [--markdown] [--help]`.
fn parse_properties(args: Vec<String>) -> Result<Invocation, UsageError> {
    let mut markdown = false;
    for arg in args {
        match find_flag(PROPERTIES_HELP.flags, &arg).map(|flag| flag.id) {
            Some(PropertiesFlag::Markdown) => markdown = true,
            Some(PropertiesFlag::Help) => return Ok(Invocation::Help(HelpTopic::Properties)),
            None if arg.starts_with('-') => {
                return Err(usage(unknown_flag(
                    PROPERTIES_HELP.flags,
                    &arg,
                    "ycsb properties",
                )))
            }
            None => {
                return Err(usage(format!(
                "unexpected argument '{arg}' for 'ycsb properties' (see 'ycsb properties --help')"
            )))
            }
        }
    }
    Ok(Invocation::Properties { markdown })
}

/// Java's form, `ycsb load|run <db> [options]`: the store's name first,
/// then the flags of YCSB-cpp's form.
fn parse_java_form(
    command: &str,
    args: &mut impl Iterator<Item = String>,
) -> Result<Invocation, UsageError> {
    let load = command == "load";
    let bench = Benchmark {
        db: String::new(),
        // What Java's bin/ycsb passes its Client: -load or -t.
        sources: vec![flag_assignment(
            if load { "load" } else { "run" },
            "dotransactions",
            if load { "false" } else { "true" },
        )],
        style: Style::Java,
    };
    let run_help = if load { "ycsb load" } else { "ycsb run" };
    let db = match args.next() {
        Some(name) if !name.starts_with('-') && !name.is_empty() => name,
        Some(flag)
            if find_flag(RUN_HELP.flags, &flag).map(|flag| flag.id) == Some(RunFlag::Help) =>
        {
            return Ok(Invocation::Help(HelpTopic::Benchmark))
        }
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
    };
    parse_benchmark_flags(bench, Some(db), run_help, args)
}

/// The flags of a benchmark (`-P`, `-p`, `-s`, `-threads`, `-db`, ...),
/// in order, into `bench`; `db` is the store already named (Java's
/// form), `run_help` the command an unknown flag is told to look at.
fn parse_benchmark_flags(
    mut bench: Benchmark,
    mut db: Option<String>,
    run_help: &str,
    it: &mut impl Iterator<Item = String>,
) -> Result<Invocation, UsageError> {
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .ok_or_else(|| usage(format!("flag {flag} needs a value")))
        };
        let Some(flag) = find_flag(RUN_HELP.flags, &arg) else {
            if arg.starts_with('-') {
                return Err(usage(unknown_flag(RUN_HELP.flags, &arg, run_help)));
            }
            return Err(usage(format!(
                "unexpected argument '{arg}' (see '{run_help} --help')"
            )));
        };
        match flag.id {
            RunFlag::PropertyFile => bench
                .sources
                .push(PropertySource::File(PathBuf::from(value("-P")?))),
            RunFlag::Property => bench.sources.push(property_assignment(&value("-p")?)?),
            RunFlag::Status => bench.sources.push(flag_assignment("-s", "status", "true")),
            // go-ycsb's: its measurements every N seconds, which it
            // always prints: status lines at status.interval=N.
            RunFlag::Interval => {
                let every = value("--interval")?;
                bench
                    .sources
                    .push(flag_assignment("--interval", "status", "true"));
                bench
                    .sources
                    .push(flag_assignment("--interval", "status.interval", &every));
            }
            RunFlag::Label => {
                let label = value("-l")?;
                bench.sources.push(flag_assignment("-l", "label", &label));
            }
            RunFlag::Threads => bench.sources.push(PropertySource::Assignment {
                flag: "-threads",
                key: "threadcount".into(),
                value: value("-threads")?,
            }),
            RunFlag::Target => bench.sources.push(PropertySource::Assignment {
                flag: "-target",
                key: "target".into(),
                value: value("-target")?,
            }),
            RunFlag::Db => {
                let name = value("-db")?;
                if db.is_some() && bench.style == Style::Java {
                    return Err(usage(format!(
                        "-db {name}: the store is already named by 'ycsb load|run <db>'"
                    )));
                }
                db = Some(name);
            }
            RunFlag::Load => bench
                .sources
                .push(flag_assignment("-load", "doload", "true")),
            RunFlag::Run => bench
                .sources
                .push(flag_assignment("-run", "dotransaction", "true")),
            RunFlag::RunShort => bench
                .sources
                .push(flag_assignment("-t", "dotransaction", "true")),
            RunFlag::Help => return Ok(Invocation::Help(HelpTopic::Benchmark)),
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
        match find_flag(SHELL_HELP.flags, &arg).map(|flag| flag.id) {
            Some(ShellFlag::PropertyFile) => {
                sources.push(PropertySource::File(PathBuf::from(value("-P")?)))
            }
            Some(ShellFlag::Property) => sources.push(property_assignment(&value("-p")?)?),
            Some(ShellFlag::Table) => {
                let table = value("-table")?;
                sources.push(flag_assignment("-table", "table", &table));
            }
            Some(ShellFlag::Db) => db = Some(value("-db")?),
            Some(ShellFlag::Help) => return Ok(Invocation::Help(HelpTopic::Shell)),
            None if arg.starts_with('-') => {
                return Err(usage(unknown_flag(SHELL_HELP.flags, &arg, "ycsb shell")))
            }
            None if db.is_none() => db = Some(arg),
            None => {
                return Err(usage(format!(
                    "unexpected argument '{arg}' for 'ycsb shell' (see 'ycsb shell --help')"
                )))
            }
        }
    }
    let db = db.filter(|d| !d.is_empty()).ok_or_else(|| {
        usage("'ycsb shell' needs a store, as in 'ycsb shell memory' or 'ycsb shell rocksdb -p rocksdb.dbname=/tmp/db'")
    })?;
    Ok(Invocation::Shell(Shell { db, sources }))
}

/// `-p key=value`.
fn property_assignment(assignment: &str) -> Result<PropertySource, UsageError> {
    PropertySource::assignment("-p", assignment)
        .ok_or_else(|| usage(format!("-p '{assignment}': expected key=value")))
}

/// `ycsb help [command]`: the help `ycsb <command> --help` prints.
fn help_on(command: Option<String>, extra: Option<String>) -> Result<Invocation, UsageError> {
    if let Some(extra) = extra {
        return Err(usage(format!(
            "unexpected argument '{extra}' for 'ycsb help' (expected one command)"
        )));
    }
    let help = || vec!["--help".to_string()];
    Ok(match command.as_deref() {
        None => Invocation::Help(HelpTopic::General),
        Some("load" | "run") => Invocation::Help(HelpTopic::Benchmark),
        Some("shell") => Invocation::Help(HelpTopic::Shell),
        Some("serve") => Invocation::Help(HelpTopic::Serve),
        Some("properties") => Invocation::Help(HelpTopic::Properties),
        Some("stores") => Invocation::Help(HelpTopic::Stores),
        Some("bench") => Invocation::Bench(help()),
        Some("merge") => Invocation::Merge(help()),
        Some("report") => Invocation::Report(help()),
        Some(other) => {
            const COMMANDS: &[&str] = &[
                "load",
                "run",
                "shell",
                "serve",
                "bench",
                "merge",
                "report",
                "stores",
                "properties",
            ];
            let hint = ycsb_db::nearest_name(other, COMMANDS.iter().copied())
                .map(|name| format!("; did you mean '{name}'?"))
                .unwrap_or_default();
            return Err(usage(format!(
                "'ycsb help {other}': no such command{hint} (commands: {})",
                COMMANDS.join(", ")
            )));
        }
    })
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
            ("properties --json", "unknown flag '--json'"),
            ("properties extra", "unexpected argument 'extra'"),
            ("stores extra", "unexpected argument 'extra'"),
            ("help frob", "no such command"),
        ] {
            let err = parse_str(line).expect_err(line);
            assert!(err.0.contains(expected), "{line}: {}", err.0);
        }
    }

    #[test]
    fn a_misspelt_flag_is_answered_with_the_nearest_declared_one() {
        for (line, expected) in [
            (
                "run basic -threds 2",
                "unknown flag '-threds'; did you mean '-threads'? (see 'ycsb run --help')",
            ),
            ("load basic --targte 5", "did you mean '--target'?"),
            ("-load -db basic -lod", "did you mean '-load'?"),
            (
                "shell memory -tabel t",
                "did you mean '-table'? (see 'ycsb shell --help')",
            ),
            ("serve memory --htp off", "did you mean '--http'?"),
            ("properties --markdwn", "did you mean '--markdown'?"),
        ] {
            let err = parse_str(line).expect_err(line);
            assert!(err.0.contains(expected), "{line}: {}", err.0);
        }
        // Nothing near: no guess.
        let err = parse_str("run basic -x").expect_err("-x");
        assert_eq!(err.0, "unknown flag '-x' (see 'ycsb run --help')");
    }

    #[test]
    fn every_declared_spelling_is_parsed_as_its_flag() {
        fn spelled<Id: Copy + PartialEq + std::fmt::Debug>(flags: &'static [Flag<Id>]) {
            for flag in flags {
                for name in flag.spellings() {
                    assert_eq!(
                        find_flag(flags, name).map(|f| f.id),
                        Some(flag.id),
                        "{name}"
                    );
                }
            }
        }
        spelled(RUN_HELP.flags);
        spelled(SHELL_HELP.flags);
        spelled(SERVE_HELP.flags);
        spelled(PROPERTIES_HELP.flags);
        spelled(STORES_HELP.flags);
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
        assert_eq!(parse_str(""), Ok(Invocation::Help(HelpTopic::General)));
        assert_eq!(
            parse_str("--help"),
            Ok(Invocation::Help(HelpTopic::General))
        );
        assert_eq!(parse_str("help"), Ok(Invocation::Help(HelpTopic::General)));
        for (line, topic) in [
            ("run --help", HelpTopic::Benchmark),
            ("load -h", HelpTopic::Benchmark),
            ("run basic -P w --help", HelpTopic::Benchmark),
            ("-load --help", HelpTopic::Benchmark),
            ("-db basic -help", HelpTopic::Benchmark),
            ("help run", HelpTopic::Benchmark),
            ("shell --help", HelpTopic::Shell),
            ("shell memory -h", HelpTopic::Shell),
            ("serve --help", HelpTopic::Serve),
            ("serve memory -help", HelpTopic::Serve),
            ("properties --help", HelpTopic::Properties),
            ("stores -h", HelpTopic::Stores),
        ] {
            assert_eq!(parse_str(line), Ok(Invocation::Help(topic)), "{line}");
        }
        assert_eq!(
            parse_str("help report"),
            Ok(Invocation::Report(vec!["--help".into()]))
        );
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
