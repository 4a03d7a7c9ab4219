//! A real PostgreSQL server for tests (this crate's and ycsb-cli's): a
//! cluster made by `initdb` in a temporary directory, its postmaster on a
//! free loopback port with its socket in that directory, run as `nobody`
//! when the tests run as root (PostgreSQL refuses root), killed when
//! dropped.
//!
//! Test code: it panics when the server cannot be made or started.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ycsb_db::testing::{free_port, ServerProcess, ServerSpec};
use ycsb_db::Properties;

/// The superuser's password in every test cluster.
pub const PASSWORD: &str = "S3cr3t-pg-pw";

/// An SSLRequest: a ready server answers `N` (no TLS here).
const SSL_REQUEST: &[u8] = &[0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f];

/// The directory of PostgreSQL's programs (Debian keeps them per major
/// version, off the PATH).
fn bin_dir() -> PathBuf {
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| {
            panic!(
                "{} ({e}): these tests need the Debian package postgresql, which .ci/run installs",
                root.display()
            )
        })
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("postgres").exists())
        .collect();
    versions.sort();
    versions
        .pop()
        .expect("a PostgreSQL under /usr/lib/postgresql")
}

/// `program args...`, as `nobody` when this process is root.
fn as_server_user(program: &Path, args: &[String]) -> (String, Vec<String>) {
    if ycsb_db::testing::is_root() {
        let mut all = vec![
            "--reuid=nobody".to_string(),
            "--regid=nogroup".to_string(),
            "--clear-groups".to_string(),
            program.display().to_string(),
        ];
        all.extend(args.iter().cloned());
        ("setpriv".to_string(), all)
    } else {
        (program.display().to_string(), args.to_vec())
    }
}

/// A PostgreSQL cluster of a test.
pub struct Postgres {
    server: ServerProcess,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    data: PathBuf,
    _dir: tempfile::TempDir,
}

impl Postgres {
    /// Makes a cluster (C locale, password authentication over TCP) and
    /// starts it on a free port.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        if ycsb_db::testing::is_root() {
            // nobody owns the cluster.
            std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
        }
        let data = dir.path().join("data");
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        if ycsb_db::testing::is_root() {
            std::os::unix::fs::chown(&pwfile, Some(65534), Some(65534)).unwrap();
        }
        let bin = bin_dir();
        let args: Vec<String> = [
            "-D",
            &data.display().to_string(),
            "-U",
            "postgres",
            "--locale=C",
            "-E",
            "UTF8",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            &format!("--pwfile={}", pwfile.display()),
            "--no-sync",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (program, args) = as_server_user(&bin.join("initdb"), &args);
        let out = Command::new(program)
            .args(&args)
            .current_dir(dir.path())
            .output()
            .expect("initdb runs");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let args: Vec<String> = [
            "-D",
            &data.display().to_string(),
            "-p",
            &port.to_string(),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            &format!("unix_socket_directories={}", dir.path().display()),
            // A test's cluster need not survive a machine crash.
            "-c",
            "fsync=off",
            "-c",
            "max_connections=60",
            "-c",
            "shared_buffers=16MB",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (program, args) = as_server_user(&bin.join("postgres"), &args);
        let spec = ServerSpec {
            program: Box::leak(program.into_boxed_str()),
            package: "postgresql",
            probe: SSL_REQUEST,
            ready: b"N",
        };
        let server = ServerProcess::start(spec, port, args);
        let pg = Self {
            server,
            port,
            data,
            _dir: dir,
        };
        pg.wait_accepting();
        pg
    }

    /// Until a login succeeds: the postmaster answers SSLRequest before
    /// its startup (recovery after a crash) lets sessions in.
    fn wait_accepting(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match PgClient::connect(self.port, "postgres", Some(PASSWORD)) {
                Ok(_) => return,
                Err(e) => assert!(
                    Instant::now() < deadline,
                    "PostgreSQL on {} does not let sessions in: {e}",
                    self.port
                ),
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The store's properties for this server (database `postgres`).
    pub fn properties(&self) -> Properties {
        Properties::new()
            .with("db.url", self.url())
            .with("db.user", "postgres")
            .with("db.passwd", PASSWORD)
    }

    /// `jdbc:postgresql://127.0.0.1:port/postgres`.
    pub fn url(&self) -> String {
        format!("jdbc:postgresql://127.0.0.1:{}/postgres", self.port)
    }

    /// A client of its own (the superuser, database `postgres`), for
    /// checks behind the store's back.
    pub fn client(&self) -> PgClient {
        PgClient::connect(self.port, "postgres", Some(PASSWORD)).unwrap()
    }

    /// A client logged in as `user` with `password` (database `postgres`).
    ///
    /// # Errors
    ///
    /// The server's refusal or why it cannot be reached, as a line.
    pub fn client_as(&self, user: &str, password: Option<&str>) -> Result<PgClient, String> {
        PgClient::connect(self.port, user, password)
    }

    /// Puts `rules` (pg_hba.conf lines, `host all alice 127.0.0.1/32
    /// md5`) before the cluster's own and has the server read them again;
    /// returns once a login under the first rule's user is answered by
    /// them (the reload is asynchronous).
    pub fn add_hba_rules(&self, rules: &[&str]) {
        let file = self.data.join("pg_hba.conf");
        let old = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{}\n{old}", rules.join("\n"))).unwrap();
        self.client().execute("SELECT pg_reload_conf()").unwrap();
        // The postmaster reloads on its signal; a new backend then uses the
        // new rules, which pg_hba_file_rules cannot tell: wait a little.
        std::thread::sleep(Duration::from_millis(300));
    }

    /// The postmaster's process id.
    pub fn pid(&self) -> u32 {
        self.server.child().id()
    }

    /// Kills the postmaster (as a crash would) and waits until its
    /// backends, which notice, are gone too.
    pub fn kill(&mut self) {
        self.server.kill();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.has_backends() {
            assert!(Instant::now() < deadline, "backends outlive the postmaster");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts it again on the same port and data directory (it recovers
    /// from its write-ahead log).
    pub fn restart(&mut self) {
        self.kill();
        self.server.restart();
        self.wait_accepting();
    }

    /// Whether a process of this cluster still runs: PostgreSQL's
    /// processes work in the data directory.
    fn has_backends(&self) -> bool {
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return false;
        };
        procs
            .flatten()
            .any(|p| std::fs::read_link(p.path().join("cwd")).is_ok_and(|cwd| cwd == self.data))
    }
}

/// A connection to a test's PostgreSQL, for checks behind the store's
/// back: statements in SQL text, results as text (the simple query
/// protocol).
pub struct PgClient {
    session: crate::pgwire::Session,
}

impl PgClient {
    fn connect(port: u16, user: &str, password: Option<&str>) -> Result<Self, String> {
        let login = crate::pgwire::Login {
            host: "127.0.0.1",
            port,
            user,
            password,
            database: "postgres",
            parameters: &[("application_name", "ycsb-rs tests")],
            timeout: Duration::from_secs(10),
        };
        crate::pgwire::Session::connect(&login)
            .map(|session| Self { session })
            .map_err(|e| e.to_string())
    }

    /// The rows of `sql` (one or more statements), each value as text
    /// (`None` for NULL).
    ///
    /// # Errors
    ///
    /// The server's refusal or a lost connection, as a line.
    pub fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
        let mut rows = Vec::new();
        self.session
            .simple_query(sql, |row| {
                rows.push(
                    (0..row.len())
                        .map(|i| row.get(i).map(|v| String::from_utf8_lossy(v).into_owned()))
                        .collect(),
                );
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        Ok(rows)
    }

    /// The one value `sql` returns, as an integer.
    ///
    /// # Errors
    ///
    /// As [`PgClient::query`], or when the result is not one integer.
    pub fn count(&mut self, sql: &str) -> Result<i64, String> {
        let rows = self.query(sql)?;
        match rows.as_slice() {
            [row] => match row.as_slice() {
                [Some(n)] => n.parse().map_err(|e| format!("{sql}: '{n}': {e}")),
                _ => Err(format!("{sql}: not one value")),
            },
            _ => Err(format!("{sql}: {} rows, not one", rows.len())),
        }
    }

    /// Runs `sql` for its effect.
    ///
    /// # Errors
    ///
    /// As [`PgClient::query`].
    pub fn execute(&mut self, sql: &str) -> Result<(), String> {
        self.session.batch_execute(sql).map_err(|e| e.to_string())
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.server.kill();
    }
}

/// The password of the `ycsb` user of every test MariaDB server.
pub const MARIADB_PASSWORD: &str = "S3cr3t-my-pw";

/// A MariaDB server of a test: `mariadb-install-db` in a temporary
/// directory, `mariadbd` on a free loopback port with its socket there, a
/// `ycsb` user with a password allowed from 127.0.0.1 and a database
/// `test`; killed when dropped.
pub struct MariaDb {
    server: ServerProcess,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    _dir: tempfile::TempDir,
}

/// mariadbd greets every connection first: any answer means it listens.
const MARIADBD_PROBE: &[u8] = b"";

impl MariaDb {
    /// Installs a data directory and starts the server on a free port.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let data = dir.path().join("data");
        let socket = dir.path().join("sock");
        let user: &[&str] = if ycsb_db::testing::is_root() {
            &["--user=root"]
        } else {
            &[]
        };
        // mariadbd's bootstrap, run by mariadb-install-db, now and then
        // dies of a signal when several start at once (a server bug it
        // reports itself): a fresh directory is tried again.
        let mut failure = String::new();
        for _ in 0..3 {
            let out = Command::new("mariadb-install-db")
                .arg("--no-defaults")
                .arg(format!("--datadir={}", data.display()))
                .args(user)
                .args(["--skip-test-db", "--auth-root-authentication-method=socket"])
                .current_dir(dir.path())
                .output()
                .unwrap_or_else(|e| {
                    panic!(
                        "mariadb-install-db cannot be started ({e}): these tests need the \
                         Debian package mariadb-server, which .ci/run installs"
                    )
                });
            if out.status.success() {
                failure.clear();
                break;
            }
            failure = String::from_utf8_lossy(&out.stderr).into_owned();
            let _ = std::fs::remove_dir_all(&data);
        }
        assert!(failure.is_empty(), "mariadb-install-db failed: {failure}");
        let port = free_port();
        let mut args: Vec<String> = vec![
            "--no-defaults".into(),
            format!("--datadir={}", data.display()),
            format!("--socket={}", socket.display()),
            format!("--port={port}"),
            "--bind-address=127.0.0.1".into(),
            format!("--pid-file={}", dir.path().join("pid").display()),
            format!("--log-error={}", dir.path().join("err.log").display()),
            "--skip-name-resolve".into(),
            "--skip-log-bin".into(),
            "--innodb-buffer-pool-size=32M".into(),
            "--innodb-log-file-size=16M".into(),
            "--max-connections=100".into(),
        ];
        args.extend(user.iter().map(|s| s.to_string()));
        let spec = ServerSpec {
            program: "mariadbd",
            package: "mariadb-server",
            probe: MARIADBD_PROBE,
            ready: b"",
        };
        let server = ServerProcess::start(spec, port, args);
        let sql = format!(
            "CREATE USER 'ycsb'@'127.0.0.1' IDENTIFIED BY '{MARIADB_PASSWORD}'; \
             GRANT ALL ON *.* TO 'ycsb'@'127.0.0.1'; CREATE DATABASE test;"
        );
        let out = Command::new("mariadb")
            .arg("--no-defaults")
            .arg(format!("--socket={}", socket.display()))
            .args(["-uroot", "-e", &sql])
            .output()
            .expect("the mariadb client runs");
        assert!(
            out.status.success(),
            "cannot create the test user: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let db = Self {
            server,
            port,
            _dir: dir,
        };
        db.wait_accepting();
        db
    }

    /// Until the `ycsb` user can log in (after a restart, InnoDB recovers
    /// first).
    fn wait_accepting(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match mysql::Conn::new(self.opts()) {
                Ok(_) => return,
                Err(e) => assert!(
                    Instant::now() < deadline,
                    "MariaDB on {} does not let sessions in: {e}",
                    self.port
                ),
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn opts(&self) -> mysql::OptsBuilder {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(self.port)
            .prefer_socket(false)
            .user(Some("ycsb"))
            .pass(Some(MARIADB_PASSWORD))
            .db_name(Some("test"))
    }

    /// `jdbc:mysql://127.0.0.1:port/test`.
    pub fn url(&self) -> String {
        format!("jdbc:mysql://127.0.0.1:{}/test", self.port)
    }

    /// The store's properties for this server.
    pub fn properties(&self) -> Properties {
        Properties::new()
            .with("db.url", self.url())
            .with("db.user", "ycsb")
            .with("db.passwd", MARIADB_PASSWORD)
    }

    /// A client of the server's own, for checks behind the store's back.
    pub fn client(&self) -> mysql::Conn {
        mysql::Conn::new(self.opts()).unwrap()
    }

    /// Kills the server, as a crash would.
    pub fn kill(&mut self) {
        self.server.kill();
    }

    /// Starts it again on the same port and data directory.
    pub fn restart(&mut self) {
        self.server.restart();
        self.wait_accepting();
    }
}
