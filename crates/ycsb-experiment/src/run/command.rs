//! The commands of a cell: the client's `ycsb` command line and its
//! server's, argv only (no shell).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use ycsb_db::{Protocol, ServerClient};

use super::{Kind, Runner, CDF_PERCENTILES};
use crate::cells::Cell;
use crate::matrix::{descriptor, dir_property, Matrix, Server};

impl Runner {
    /// The client's argv for a cell (without pinning) and its server's
    /// (empty without a server), which listens on `port`.
    pub(crate) fn commands(
        &self,
        m: &Matrix,
        cell: &Cell,
        kind: Kind,
        db_dir: &Path,
        export: &Path,
        port: u16,
    ) -> (Vec<String>, Vec<String>) {
        let mut argv: Vec<String> = vec![self.ycsb.display().to_string()];
        argv.extend(kind.phases(m).into_iter().map(|p| format!("-{p}")));
        argv.extend(["-db".into(), cell.db.store.clone()]);
        for f in property_files(m, cell) {
            argv.extend(["-P".into(), f.display().to_string()]);
        }
        let mut props = matrix_properties(m, cell);
        let client = descriptor(&cell.db.store).and_then(|d| d.server);
        let server = match (&cell.db.server, client) {
            (Some(server), Some(client)) => {
                let address = SocketAddr::from(([127, 0, 0, 1], port));
                props.extend(client.address_properties(address));
                match server {
                    Server::Redis => redis_server(port, db_dir),
                    Server::Memcached => memcached_server(port),
                    Server::Postgres | Server::MariaDb => {
                        let name = server_name(server);
                        props.extend(for_server(m, cell, client, name));
                        if matches!(server, Server::Postgres) {
                            postgres_server(port, db_dir)
                        } else {
                            mariadb_server(port, db_dir)
                        }
                    }
                    Server::YcsbServe {
                        engine,
                        property_files,
                        properties,
                    } => {
                        props.extend(ycsb_serve_defaults(m, cell, client));
                        let served = ServedEngine {
                            engine,
                            property_files,
                            properties,
                        };
                        self.ycsb_serve(&served, db_dir, address, client.protocol)
                    }
                }
            }
            _ => {
                if let Some((_, p)) = cell.db.data_engine() {
                    props.push((p.into(), db_dir.display().to_string()));
                }
                Vec::new()
            }
        };
        props.extend(runner_properties(m, export));
        for (k, v) in props {
            argv.extend(["-p".into(), format!("{k}={v}")]);
        }
        argv.push("-s".into());
        (argv, server)
    }

    /// `ycsb serve <engine>` with the engine's files and properties, its
    /// data in `db_dir`, serving the client's protocol on `address` and
    /// not the other.
    fn ycsb_serve(
        &self,
        served: &ServedEngine<'_>,
        db_dir: &Path,
        address: SocketAddr,
        protocol: Protocol,
    ) -> Vec<String> {
        let engine = served.engine;
        let mut server = vec![
            self.ycsb.display().to_string(),
            "serve".into(),
            engine.into(),
        ];
        for f in served.property_files {
            server.extend(["-P".into(), f.display().to_string()]);
        }
        for (k, v) in served.properties {
            server.extend(["-p".into(), format!("{k}={v}")]);
        }
        if let Some(dp) = dir_property(engine) {
            server.extend(["-p".into(), format!("{dp}={}", db_dir.display())]);
        }
        let (on, off) = match protocol {
            Protocol::Http => ("--http", "--resp"),
            _ => ("--resp", "--http"),
        };
        server.extend([on.into(), address.to_string(), off.into(), "off".into()]);
        server
    }
}

/// The engine a `ycsb serve` server embeds, as the matrix's db entry
/// gives it.
struct ServedEngine<'a> {
    engine: &'a str,
    property_files: &'a [PathBuf],
    properties: &'a [(String, String)],
}

/// The property files of a cell, in the order `ycsb` reads them (later
/// ones win): the matrix's, the workload axis', the db entry's.
fn property_files<'a>(m: &'a Matrix, cell: &'a Cell) -> impl Iterator<Item = PathBuf> + 'a {
    m.property_files
        .iter()
        .cloned()
        .chain(cell.workload_files())
        .chain(cell.db.property_files.iter().cloned())
}

/// The properties the matrix sets for a cell, in the order `ycsb` reads
/// them (later ones win): the CDF's percentiles unless the matrix sets
/// them, the matrix's properties, the db entry's, the axes'.
fn matrix_properties(m: &Matrix, cell: &Cell) -> Vec<(String, String)> {
    let mut props: Vec<(String, String)> = Vec::new();
    if !m
        .properties
        .iter()
        .chain(&cell.db.properties)
        .any(|(k, _)| k == "hdrhistogram.percentiles")
    {
        props.push(("hdrhistogram.percentiles".into(), CDF_PERCENTILES.into()));
    }
    props.extend(m.properties.iter().cloned());
    props.extend(cell.db.properties.iter().cloned());
    props.extend(cell.axis_properties());
    props
}

/// The client store's `defaults` for its server (from its descriptor),
/// less those the matrix sets itself (in its properties, the cell's
/// store's or an axis').
fn unless_set(m: &Matrix, cell: &Cell, defaults: &[(&str, &str)]) -> Vec<(String, String)> {
    let axis_properties = cell.axis_properties();
    let user_set = |k: &str| {
        m.properties
            .iter()
            .chain(&cell.db.properties)
            .chain(&axis_properties)
            .any(|(u, _)| u == k)
    };
    defaults
        .iter()
        .filter(|(k, _)| !user_set(k))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// What a client store needs to talk to `ycsb serve`, unless the matrix
/// chose otherwise.
fn ycsb_serve_defaults(m: &Matrix, cell: &Cell, client: ServerClient) -> Vec<(String, String)> {
    unless_set(m, cell, client.for_ycsb_serve)
}

/// A server's name in a matrix (`server = "postgres"`).
pub(crate) fn server_name(server: &Server) -> &'static str {
    match server {
        Server::Redis => "redis-server",
        Server::Memcached => "memcached",
        Server::Postgres => "postgres",
        Server::MariaDb => "mariadb",
        Server::YcsbServe { .. } => "ycsb-serve",
    }
}

/// What the client store needs against the runner's server `name`, as its
/// descriptor says, unless the matrix chose otherwise.
fn for_server(m: &Matrix, cell: &Cell, client: ServerClient, name: &str) -> Vec<(String, String)> {
    unless_set(m, cell, client.properties_for(name).unwrap_or_default())
}

/// Whether the runner runs as root (PostgreSQL refuses to, MariaDB needs
/// `--user=root`).
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The directory of PostgreSQL's programs: Debian keeps them per major
/// version, off the PATH (the newest installed).
pub(crate) fn postgres_bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("postgres").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// `program` of PostgreSQL's, by its full path when installed.
pub(crate) fn postgres_program(program: &str) -> String {
    postgres_bin_dir()
        .map(|bin| bin.join(program).display().to_string())
        .unwrap_or_else(|| program.to_string())
}

/// `argv` as user `nobody` when the runner is root.
fn as_nobody_when_root(argv: Vec<String>) -> Vec<String> {
    if !is_root() {
        return argv;
    }
    let mut all: Vec<String> = [
        "setpriv",
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    all.extend(argv);
    all
}

/// The commands that make the server's data directory in `db_dir` when
/// it has none yet: PostgreSQL's cluster (trusting loopback logins: the
/// server is the cell's own) or MariaDB's system tables.
pub(crate) fn server_init(server: &Server, db_dir: &Path) -> Option<(PathBuf, Vec<String>)> {
    match server {
        Server::Postgres => {
            let data = db_dir.join("pgdata");
            let argv = vec![
                postgres_program("initdb"),
                "-D".into(),
                data.display().to_string(),
                "-U".into(),
                "postgres".into(),
                "--auth=trust".into(),
                "--locale=C".into(),
                "-E".into(),
                "UTF8".into(),
            ];
            Some((data, as_nobody_when_root(argv)))
        }
        Server::MariaDb => {
            let data = db_dir.join("mariadb");
            let mut argv = vec![
                "mariadb-install-db".to_string(),
                "--no-defaults".into(),
                format!("--datadir={}", data.display()),
            ];
            if is_root() {
                argv.push("--user=root".into());
            }
            Some((data, argv))
        }
        _ => None,
    }
}

/// PostgreSQL's postmaster on loopback `port`, its cluster in `db_dir`.
fn postgres_server(port: u16, db_dir: &Path) -> Vec<String> {
    as_nobody_when_root(vec![
        postgres_program("postgres"),
        "-D".into(),
        db_dir.join("pgdata").display().to_string(),
        "-p".into(),
        port.to_string(),
        "-c".into(),
        "listen_addresses=127.0.0.1".into(),
        // TCP only: the client connects over loopback, and the cell's
        // directory names hold commas, which this list setting splits on.
        "-c".into(),
        "unix_socket_directories=".into(),
    ])
}

/// `mariadbd` on loopback `port`, its data and socket in `db_dir`, without
/// grant tables (the cell's own server, on loopback only) or binary log.
fn mariadb_server(port: u16, db_dir: &Path) -> Vec<String> {
    let mut argv = vec![
        "mariadbd".to_string(),
        "--no-defaults".into(),
        format!("--datadir={}", db_dir.join("mariadb").display()),
        format!("--socket={}", db_dir.join("mariadb.sock").display()),
        format!("--pid-file={}", db_dir.join("mariadb.pid").display()),
        format!("--port={port}"),
        "--bind-address=127.0.0.1".into(),
        "--skip-grant-tables".into(),
        "--skip-name-resolve".into(),
        "--skip-log-bin".into(),
    ];
    if is_root() {
        argv.push("--user=root".into());
    }
    argv
}

/// `redis-server` on loopback `port`, without persistence, its directory
/// `db_dir`.
fn redis_server(port: u16, db_dir: &Path) -> Vec<String> {
    let port = port.to_string();
    let mut server: Vec<String> = [
        "redis-server",
        "--port",
        &port,
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    server.push(db_dir.display().to_string());
    server
}

/// `memcached` on loopback `port`, TCP only, with 1 GiB for items
/// (allocated as items arrive). `-u root` lets it start when the runner
/// is root; memcached ignores it otherwise.
fn memcached_server(port: u16) -> Vec<String> {
    let port = port.to_string();
    [
        "memcached",
        "-l",
        "127.0.0.1",
        "-p",
        &port,
        "-U",
        "0",
        "-m",
        "1024",
        "-u",
        "root",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The properties the runner sets last: the time limit, the status
/// interval and the JSON export the cell's facts are read from.
fn runner_properties(m: &Matrix, export: &Path) -> Vec<(String, String)> {
    let mut props = Vec::new();
    if let Some(t) = m.time_limit {
        props.push(("maxexecutiontime".into(), t.to_string()));
    }
    props.push(("status.interval".into(), m.status_interval.to_string()));
    props.push(("exporter".into(), "json".into()));
    props.push(("exportfile".into(), export.display().to_string()));
    props
}
