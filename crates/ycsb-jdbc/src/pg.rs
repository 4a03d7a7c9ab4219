//! PostgreSQL: a thread's connection to a shard (this crate's client,
//! pgwire.rs), its prepared statements cached by their SQL text; the
//! gauges' statistics and the server's description.

use std::fmt::Write as _;

use ycsb_db::{Fields, Record, ScanResult};

use crate::pgwire::{self, oid, Column, Login, Param, Row, Session, WireError};
use crate::thread::{Failure, Queued, Server};
use crate::{create_table_sql, FieldType, JdbcConfig, Shard, TableSpelling};

/// Whether a column of type `ty` holds a field: text or bytes (the binary
/// form of both is the bytes themselves).
fn holds_a_field(ty: pgwire::Oid) -> bool {
    ty == oid::BYTEA || pgwire::is_text(ty)
}

/// What the server's statistics say, for the gauges.
#[derive(Debug)]
pub(crate) struct Stats {
    pub(crate) xact_commit: i64,
    pub(crate) blks_hit: i64,
    pub(crate) blks_read: i64,
    pub(crate) hit_ratio_since_last: Option<f64>,
    pub(crate) table_bytes: Option<i64>,
}

/// One connection and its prepared statements.
pub(crate) struct Connection {
    session: Session,
    /// Whether a transaction is kept open (no autocommit).
    in_transaction: bool,
    /// Blocks hit and read at the previous statistics sample.
    last_blocks: Option<(i64, i64)>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// A bigint in its binary form.
fn int8(value: Option<&[u8]>) -> Option<i64> {
    Some(i64::from_be_bytes(value?.try_into().ok()?))
}

impl Connection {
    /// Connects to `shard`, with the session's `synchronous_commit` set
    /// and, without autocommit, a transaction begun.
    pub(crate) fn connect(shard: &Shard, config: &JdbcConfig) -> Result<Self, String> {
        let options = format!("-c synchronous_commit={}", config.synchronous_commit);
        let login = Login {
            host: &shard.url.host,
            port: shard.url.port,
            user: &shard.user,
            password: shard.password.as_ref().map(|p| p.expose()),
            database: &shard.url.database,
            parameters: &[("application_name", "ycsb-rs"), ("options", &options)],
            timeout: config.connect_timeout,
        };
        let mut session = Session::connect(&login).map_err(|e| e.to_string())?;
        if !config.autocommit {
            session.batch_execute("BEGIN").map_err(|e| e.to_string())?;
        }
        Ok(Self {
            session,
            in_transaction: !config.autocommit,
            last_blocks: None,
        })
    }

    /// Whether the connection is lost.
    pub(crate) fn is_closed(&self) -> bool {
        self.session.is_closed()
    }

    /// Java's `JdbcDBCreateTable`: the table with `YCSB_KEY` and
    /// `FIELD0..FIELD<fields-1>`, unless it exists.
    pub(crate) fn create_table(
        &mut self,
        table: &str,
        fields: u64,
        field_type: FieldType,
    ) -> Result<(), String> {
        // The C collation orders keys bytewise.
        let spelling = TableSpelling {
            key: "VARCHAR(255) COLLATE \"C\"",
            text: "TEXT",
            binary: "BYTEA",
            options: "",
        };
        let sql = create_table_sql(table, fields, field_type, &spelling)?;
        self.session
            .batch_execute(&sql)
            .map_err(|e| format!("cannot create table {table}: {e}"))?;
        if self.in_transaction {
            self.session
                .batch_execute("COMMIT; BEGIN")
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// `15.8 (Debian 15.8-1); synchronous_commit=on, fsync=on`.
    pub(crate) fn describe_server(&mut self) -> Result<String, String> {
        let mut settings: Vec<String> = Vec::new();
        self.session
            .simple_query(
                "SELECT current_setting('synchronous_commit'), current_setting('fsync')",
                |row| {
                    settings = (0..row.len())
                        .map(|i| {
                            String::from_utf8_lossy(row.get(i).unwrap_or_default()).into_owned()
                        })
                        .collect();
                    Ok(())
                },
            )
            .map_err(|e| e.to_string())?;
        let text = |i: usize| settings.get(i).map_or("", String::as_str);
        // Reported at the login (ParameterStatus), as current_setting has it.
        let version = self.session.parameter("server_version").unwrap_or("");
        Ok(format!(
            "{version}; synchronous_commit={}, fsync={}",
            text(0),
            text(1)
        ))
    }

    /// The database's commits and block counts, and `table`'s size.
    pub(crate) fn stats(&mut self, table: &str) -> Result<Stats, String> {
        // A session keeps the statistics it read (stats_fetch_consistency):
        // each sample must see the server's current ones.
        self.session
            .batch_execute("SELECT pg_stat_clear_snapshot()")
            .map_err(|e| e.to_string())?;
        let statement = self
            .session
            .prepare(
                "SELECT xact_commit, blks_hit, blks_read, pg_total_relation_size(to_regclass($1)) \
                 FROM pg_stat_database WHERE datname = current_database()",
            )
            .map_err(|e| e.to_string())?;
        let mut numbers: [Option<i64>; 4] = [None; 4];
        let mut rows = 0;
        self.session
            .execute(statement, &[Param::Text(table)], |columns, row| {
                rows += 1;
                for (i, number) in numbers.iter_mut().enumerate() {
                    if columns.get(i).is_some_and(|c| c.ty == oid::INT8) {
                        *number = int8(row.get(i));
                    }
                }
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        if rows != 1 {
            return Err(format!(
                "pg_stat_database has {rows} rows for the current database"
            ));
        }
        let [xact_commit, blks_hit, blks_read, table_bytes] = numbers;
        let (xact_commit, blks_hit, blks_read) = (
            xact_commit.unwrap_or(0),
            blks_hit.unwrap_or(0),
            blks_read.unwrap_or(0),
        );
        let hit_ratio_since_last = match self.last_blocks {
            Some((hit, read)) if hit <= blks_hit && read <= blks_read => {
                let (hits, reads) = (blks_hit - hit, blks_read - read);
                (hits + reads > 0).then(|| hits as f64 / (hits + reads) as f64)
            }
            _ => None,
        };
        self.last_blocks = Some((blks_hit, blks_read));
        Ok(Stats {
            xact_commit,
            blks_hit,
            blks_read,
            hit_ratio_since_last,
            table_bytes,
        })
    }
}

/// Copies the fields of `row` (with `columns`) selected by `fields` into
/// `out`; a column that cannot hold a field is refused, naming it.
fn fill(
    columns: &[Column],
    row: &Row<'_>,
    fields: Fields<'_>,
    out: &mut Record,
) -> Result<(), String> {
    for (i, column) in columns.iter().enumerate() {
        let name = column.name.as_str();
        if name.eq_ignore_ascii_case("ycsb_key") {
            continue;
        }
        let shown = match fields {
            Fields::All => name,
            Fields::Only(names) => match names.iter().find(|n| n.eq_ignore_ascii_case(name)) {
                Some(n) => n.as_str(),
                None => continue,
            },
        };
        if !holds_a_field(column.ty) {
            return Err(format!(
                "column {name} of type {} is not a field (text or bytea)",
                pgwire::type_name(column.ty)
            ));
        }
        if let Some(value) = row.get(i) {
            out.push(shown, value);
        }
    }
    Ok(())
}

/// A failure of the client as the thread counts it.
fn failure(error: WireError) -> Failure {
    match error {
        WireError::Lost(why) => Failure::Lost(why),
        WireError::Row(why) => Failure::NotARecord(why),
        e @ (WireError::Server(_) | WireError::Value(_)) => Failure::Refused(e.to_string()),
    }
}

impl Connection {
    /// Runs `sql`, prepared once, with `params`, `on_row` seeing its rows.
    fn run(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        on_row: impl FnMut(&[Column], &Row<'_>) -> Result<(), String>,
    ) -> Result<u64, Failure> {
        let statement = self.session.prepare(sql).map_err(failure)?;
        self.session
            .execute(statement, params, on_row)
            .map_err(failure)
    }

    /// `sql` run for its effect (simple query protocol).
    fn simple(&mut self, sql: &str) -> Result<(), Failure> {
        self.session.batch_execute(sql).map_err(failure)
    }
}

/// Values as parameters (a text parameter takes only UTF-8 without NUL).
fn params_of<'a>(values: &[&'a [u8]]) -> Vec<Param<'a>> {
    values.iter().map(|v| Param::Bytes(v)).collect()
}

impl Server for Connection {
    fn connect(shard: &Shard, config: &JdbcConfig) -> Result<Self, String> {
        Connection::connect(shard, config)
    }

    fn placeholder(sql: &mut String, n: usize) {
        let _ = write!(sql, "${n}");
    }

    fn write(&mut self, sql: &str, params: &[&[u8]]) -> Result<u64, Failure> {
        self.run(sql, &params_of(params), |_, _| Ok(()))
    }

    fn read(
        &mut self,
        sql: &str,
        key: &str,
        fields: Fields<'_>,
        out: &mut Record,
    ) -> Result<bool, Failure> {
        let mut found = false;
        self.run(sql, &[Param::Text(key)], |columns, row| {
            if found {
                return Err("more than one row has the key".into());
            }
            found = true;
            fill(columns, row, fields, out)
        })?;
        Ok(found)
    }

    fn scan(
        &mut self,
        sql: &str,
        start: &str,
        limit: usize,
        fields: Fields<'_>,
        out: &mut ScanResult,
    ) -> Result<(), Failure> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let params = [Param::Text(start), Param::Int(limit)];
        self.run(sql, &params, |columns, row| {
            let key = columns
                .first()
                .filter(|c| pgwire::is_text(c.ty))
                .and_then(|_| row.get(0))
                .and_then(|k| std::str::from_utf8(k).ok())
                .ok_or("the first column is not YCSB_KEY (text)")?;
            fill(columns, row, fields, out.push_row(key))
        })
        .map(|_| ())
    }

    fn insert_batch(&mut self, batch: &[&Queued], autocommit: bool) -> Result<(), Failure> {
        if autocommit {
            self.simple("BEGIN")?;
        }
        let sent = batch.iter().try_for_each(|q| {
            self.run(&q.sql, &params_of(&q.params()), |_, _| Ok(()))
                .map(|_| ())
        });
        if let Err(e) = sent {
            // The transaction begun here ends here, refused or not.
            if autocommit && !self.is_closed() {
                let _ = self.simple("ROLLBACK");
            }
            return Err(e);
        }
        self.simple(if autocommit {
            "COMMIT"
        } else {
            "COMMIT; BEGIN"
        })
    }

    fn commit(&mut self) -> Result<(), Failure> {
        self.simple("COMMIT; BEGIN")
    }

    fn finish(&mut self) -> Result<(), Failure> {
        self.simple("COMMIT")
    }

    /// A refused statement spoils PostgreSQL's transaction (every later
    /// statement would be refused); a value that was never sent does not.
    fn recover(&mut self) -> Result<bool, Failure> {
        if self.session.transaction_status() != b'E' {
            return Ok(false);
        }
        self.simple("ROLLBACK; BEGIN").map(|()| true)
    }

    fn is_closed(&self) -> bool {
        self.session.is_closed()
    }
}
