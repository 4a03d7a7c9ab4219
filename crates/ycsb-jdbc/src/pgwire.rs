//! A blocking PostgreSQL client on a plain `TcpStream`: the frontend and
//! backend messages of `postgres-protocol`, its MD5 and SCRAM-SHA-256
//! logins, and nothing else (no TLS, no runtime).
//!
//! Why not the `postgres` crate: its blocking `Client` drives a tokio
//! runtime for every statement, which doubled the client's CPU time per
//! read against pgbench's (same system calls, twice the user time). Here a
//! prepared statement's execution is one write (Bind, Execute, Sync built
//! in one buffer) and the reads of its reply into a buffer kept by the
//! connection.
//!
//! Every reply is checked: a message the protocol does not allow at that
//! point, or one that does not parse, is an error that closes the
//! connection ([`WireError::Lost`]), never a panic.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::ops::Range;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::{md5_hash, sasl};
use postgres_protocol::message::backend::{self, Message};
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;
/// A type's object id in `pg_type`.
pub(crate) use postgres_protocol::Oid;

/// Type OIDs this client knows by name (`pg_type`).
pub(crate) mod oid {
    use postgres_protocol::Oid;
    /// `bytea`.
    pub const BYTEA: Oid = 17;
    /// `name`.
    pub const NAME: Oid = 19;
    /// `int8` (bigint).
    pub const INT8: Oid = 20;
    /// `int2`.
    pub const INT2: Oid = 21;
    /// `int4`.
    pub const INT4: Oid = 23;
    /// `text`.
    pub const TEXT: Oid = 25;
    /// `char(n)`.
    pub const BPCHAR: Oid = 1042;
    /// `varchar(n)`.
    pub const VARCHAR: Oid = 1043;
}

/// A type's name for messages: `text`, `int4`, or its OID.
pub(crate) fn type_name(ty: Oid) -> String {
    match ty {
        oid::BYTEA => "bytea".into(),
        oid::NAME => "name".into(),
        oid::INT8 => "int8".into(),
        oid::INT2 => "int2".into(),
        oid::INT4 => "int4".into(),
        oid::TEXT => "text".into(),
        oid::BPCHAR => "bpchar".into(),
        oid::VARCHAR => "varchar".into(),
        other => format!("type oid {other}"),
    }
}

/// Whether values of type `ty` are text (their binary form is their
/// UTF-8 bytes).
pub(crate) fn is_text(ty: Oid) -> bool {
    matches!(ty, oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME)
}

/// The largest message accepted from the server: PostgreSQL's own limit
/// on a field is 1 GB; a length beyond is a corrupt stream, not a
/// reason to allocate.
const MAX_MESSAGE: usize = 1 << 30;

/// How much one read asks of the socket.
const READ_CHUNK: usize = 16 * 1024;

/// What the server said when it refused something (an `ErrorResponse`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ServerError {
    /// `ERROR`, `FATAL`, ... (localized, as the server sent it).
    pub severity: String,
    /// The SQLSTATE, `28P01` for a wrong password.
    pub code: String,
    /// The primary message.
    pub message: String,
    /// The detail, if any.
    pub detail: Option<String>,
}

impl ServerError {
    /// Reads an `ErrorResponse`'s (or `NoticeResponse`'s) fields.
    fn from_fields(mut fields: backend::ErrorFields<'_>) -> io::Result<Self> {
        let mut error = ServerError::default();
        let mut nonlocalized = None;
        while let Some(field) = fields.next()? {
            let value = String::from_utf8_lossy(field.value_bytes()).into_owned();
            match field.type_() {
                b'S' => error.severity = value,
                b'V' => nonlocalized = Some(value),
                b'C' => error.code = value,
                b'M' => error.message = value,
                b'D' => error.detail = Some(value),
                _ => {}
            }
        }
        if error.severity.is_empty() {
            error.severity = nonlocalized.unwrap_or_else(|| "ERROR".into());
        }
        Ok(error)
    }
}

impl fmt::Display for ServerError {
    /// `FATAL: password authentication failed for user "postgres"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity, self.message)
    }
}

/// Why a call failed.
#[derive(Debug)]
pub(crate) enum WireError {
    /// The connection is gone or its replies cannot be understood: it is
    /// closed and cannot be used again.
    Lost(String),
    /// The server refused the statement; the connection is still usable.
    Server(ServerError),
    /// A value could not be sent as its parameter's type (nothing was
    /// sent); the connection is still usable.
    Value(String),
    /// A row's handler refused a row (the reply was read to its end); the
    /// connection is still usable.
    Row(String),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Lost(why) | WireError::Value(why) | WireError::Row(why) => f.write_str(why),
            WireError::Server(e) => e.fmt(f),
        }
    }
}

impl WireError {
    fn protocol(what: impl fmt::Display) -> Self {
        WireError::Lost(format!("the server's reply is not understood: {what}"))
    }
}

/// A statement parameter.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Param<'a> {
    /// Bytes: sent as they are to a `bytea` parameter; to a text one, only
    /// when they are UTF-8 without NUL.
    Bytes(&'a [u8]),
    /// Text.
    Text(&'a str),
    /// An integer, to an integer or text parameter.
    Int(i64),
}

/// Appends `param`'s binary form for a parameter of type `ty`.
fn encode(param: Param<'_>, ty: Oid, out: &mut BytesMut) -> Result<(), String> {
    match (param, ty) {
        (Param::Bytes(bytes), oid::BYTEA) => out.extend_from_slice(bytes),
        (Param::Text(text), oid::BYTEA) => out.extend_from_slice(text.as_bytes()),
        (Param::Bytes(bytes), ty) if is_text(ty) => {
            if std::str::from_utf8(bytes).is_err() {
                return Err(
                    "the value is not UTF-8 text, which a text column cannot hold \
                            (jdbc.fieldtype=binary makes BYTEA columns)"
                        .into(),
                );
            }
            if bytes.contains(&0) {
                return Err(
                    "the value holds a NUL byte, which a text column cannot hold \
                            (jdbc.fieldtype=binary makes BYTEA columns)"
                        .into(),
                );
            }
            out.extend_from_slice(bytes);
        }
        (Param::Text(text), ty) if is_text(ty) => {
            if text.contains('\0') {
                return Err(
                    "the text holds a NUL byte, which PostgreSQL's text cannot hold".into(),
                );
            }
            out.extend_from_slice(text.as_bytes());
        }
        (Param::Int(n), oid::INT8) => out.put_i64(n),
        (Param::Int(n), oid::INT4) => {
            out.put_i32(i32::try_from(n).map_err(|_| format!("{n} does not fit an int4"))?)
        }
        (Param::Int(n), oid::INT2) => {
            out.put_i16(i16::try_from(n).map_err(|_| format!("{n} does not fit an int2"))?)
        }
        (Param::Int(n), ty) if is_text(ty) => out.extend_from_slice(n.to_string().as_bytes()),
        (param, ty) => {
            let what = match param {
                Param::Bytes(_) => "bytes",
                Param::Text(_) => "text",
                Param::Int(_) => "an integer",
            };
            return Err(format!(
                "{what} cannot be sent as a parameter of type {}",
                type_name(ty)
            ));
        }
    }
    Ok(())
}

/// A result column: its name and type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Column {
    /// The column's name as the server reports it (lower case unless quoted).
    pub name: String,
    /// Its type.
    pub ty: Oid,
}

/// A statement prepared on a connection.
#[derive(Debug)]
struct Prepared {
    /// Its name on the server: `s<n>`.
    name: String,
    /// Its parameters' types, as the server inferred them.
    params: Vec<Oid>,
    /// Its result columns (none for a statement that returns no rows).
    columns: Vec<Column>,
}

/// A prepared statement of one connection (an index into its cache).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Statement(usize);

/// A row of a reply: its values in the server's binary form (`None` for
/// NULL), borrowed from the connection's read buffer.
pub(crate) struct Row<'a> {
    data: &'a [u8],
    ranges: &'a [Option<Range<usize>>],
}

impl Row<'_> {
    /// How many values.
    pub(crate) fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Value `i` (`None` for NULL or past the end).
    pub(crate) fn get(&self, i: usize) -> Option<&[u8]> {
        self.ranges
            .get(i)?
            .as_ref()
            .and_then(|r| self.data.get(r.clone()))
    }
}

/// What one statement did: the rows it affected (its command tag's count).
pub(crate) type Affected = u64;

/// What a login needs.
#[derive(Clone, Debug)]
pub(crate) struct Login<'a> {
    /// Host name or address.
    pub host: &'a str,
    /// TCP port.
    pub port: u16,
    /// User.
    pub user: &'a str,
    /// Password, if any.
    pub password: Option<&'a str>,
    /// Database (empty: the user's name, the server's default).
    pub database: &'a str,
    /// Run-time parameters (`options`, `application_name`, ...).
    pub parameters: &'a [(&'a str, &'a str)],
    /// How long connecting and logging in may take.
    pub timeout: Duration,
}

/// One connection to a PostgreSQL server.
pub(crate) struct Session {
    stream: TcpStream,
    /// Messages to send, written out at once.
    out: BytesMut,
    /// Bytes read and not yet parsed.
    input: BytesMut,
    /// What one read of the socket fills.
    chunk: Box<[u8]>,
    /// A data row's value ranges, reused row after row.
    ranges: Vec<Option<Range<usize>>>,
    prepared: Vec<Prepared>,
    by_sql: HashMap<String, Statement>,
    /// The server's run-time parameters it reported (`server_version`, ...).
    parameters: Vec<(String, String)>,
    /// The last `NoticeResponse`'s message.
    last_notice: Option<String>,
    /// `I` idle, `T` in a transaction, `E` in a failed transaction.
    transaction: u8,
    closed: bool,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("prepared", &self.prepared.len())
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Connects and logs in (trust, password, MD5 or SCRAM-SHA-256).
    ///
    /// # Errors
    ///
    /// [`WireError::Lost`] when the server cannot be reached or answers
    /// what this client does not understand; [`WireError::Server`] when it
    /// refuses the login.
    pub(crate) fn connect(login: &Login<'_>) -> Result<Self, WireError> {
        let stream = connect_tcp(login.host, login.port, login.timeout)
            .map_err(|e| WireError::Lost(format!("cannot connect: {e}")))?;
        let setup = |e: io::Error| WireError::Lost(format!("cannot set up the connection: {e}"));
        stream.set_nodelay(true).map_err(setup)?;
        let timeout = (!login.timeout.is_zero()).then_some(login.timeout);
        stream.set_read_timeout(timeout).map_err(setup)?;
        stream.set_write_timeout(timeout).map_err(setup)?;
        let mut session = Self::over(stream);
        session.start(login)?;
        // Statements wait as long as the server takes.
        session.stream.set_read_timeout(None).map_err(setup)?;
        session.stream.set_write_timeout(None).map_err(setup)?;
        Ok(session)
    }

    fn over(stream: TcpStream) -> Self {
        Self {
            stream,
            out: BytesMut::with_capacity(1024),
            input: BytesMut::with_capacity(READ_CHUNK),
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
            ranges: Vec::new(),
            prepared: Vec::new(),
            by_sql: HashMap::new(),
            parameters: Vec::new(),
            last_notice: None,
            transaction: b'I',
            closed: false,
        }
    }

    /// The startup message, the login's exchange, and the server's
    /// parameters up to its first `ReadyForQuery`.
    fn start(&mut self, login: &Login<'_>) -> Result<(), WireError> {
        let mut parameters: Vec<(&str, &str)> = vec![("user", login.user)];
        if !login.database.is_empty() {
            parameters.push(("database", login.database));
        }
        parameters.push(("client_encoding", "UTF8"));
        parameters.extend(login.parameters.iter().copied());
        frontend::startup_message(parameters.iter().copied(), &mut self.out)
            .map_err(|e| WireError::Value(format!("cannot send the login: {e}")))?;
        self.send()?;
        let needs_password = || {
            login.password.ok_or_else(|| {
                WireError::Lost("the server asks for a password and none is given".into())
            })
        };
        let mut scram: Option<sasl::ScramSha256> = None;
        loop {
            match self.receive()? {
                Message::AuthenticationOk => break,
                Message::AuthenticationCleartextPassword => {
                    let password = needs_password()?;
                    self.put(|out| frontend::password_message(password.as_bytes(), out))?;
                    self.send()?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let password = needs_password()?;
                    let hash = md5_hash(login.user.as_bytes(), password.as_bytes(), body.salt());
                    self.put(|out| frontend::password_message(hash.as_bytes(), out))?;
                    self.send()?;
                }
                Message::AuthenticationSasl(body) => {
                    let password = needs_password()?;
                    let mut mechanisms = body.mechanisms();
                    let mut offered = Vec::new();
                    while let Some(m) = mechanisms.next().map_err(WireError::protocol)? {
                        offered.push(m.to_string());
                    }
                    if !offered.iter().any(|m| m == sasl::SCRAM_SHA_256) {
                        return Err(self.lose(format!(
                            "the server offers SASL mechanisms {} and this client speaks only {}",
                            offered.join(", "),
                            sasl::SCRAM_SHA_256
                        )));
                    }
                    let exchange = sasl::ScramSha256::new(
                        password.as_bytes(),
                        sasl::ChannelBinding::unsupported(),
                    );
                    self.put(|out| {
                        frontend::sasl_initial_response(
                            sasl::SCRAM_SHA_256,
                            exchange.message(),
                            out,
                        )
                    })?;
                    self.send()?;
                    scram = Some(exchange);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let Some(exchange) = scram.as_mut() else {
                        return Err(self.lose("a SASL continuation before its start"));
                    };
                    if let Err(e) = exchange.update(body.data()) {
                        return Err(self.lose(format!("the SCRAM exchange failed: {e}")));
                    }
                    let message = exchange.message().to_vec();
                    self.put(|out| frontend::sasl_response(&message, out))?;
                    self.send()?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let Some(exchange) = scram.as_mut() else {
                        return Err(self.lose("a SASL final message before its start"));
                    };
                    if let Err(e) = exchange.finish(body.data()) {
                        return Err(
                            self.lose(format!("the server's SCRAM signature does not verify: {e}"))
                        );
                    }
                }
                Message::ErrorResponse(body) => return Err(self.login_refused(&body)),
                Message::AuthenticationKerberosV5
                | Message::AuthenticationScmCredential
                | Message::AuthenticationGss
                | Message::AuthenticationGssContinue(_)
                | Message::AuthenticationSspi => {
                    return Err(self.lose(
                        "the server asks for an authentication this client does not speak \
                         (it speaks trust, password, md5 and scram-sha-256)",
                    ))
                }
                _ => return Err(self.lose("an unexpected message during the login")),
            }
        }
        loop {
            match self.receive()? {
                Message::BackendKeyData(_) => {}
                Message::ReadyForQuery(body) => {
                    self.transaction = body.status();
                    return Ok(());
                }
                Message::ErrorResponse(body) => return Err(self.login_refused(&body)),
                _ => return Err(self.lose("an unexpected message after the login")),
            }
        }
    }

    /// Whether the connection is closed (lost, or refused its login).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// A run-time parameter the server reported (`server_version`).
    pub(crate) fn parameter(&self, name: &str) -> Option<&str> {
        self.parameters
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The last notice the server sent (a warning), if any.
    #[cfg(test)]
    fn last_notice(&self) -> Option<&str> {
        self.last_notice.as_deref()
    }

    /// `I` idle, `T` in a transaction block, `E` in a failed one.
    pub(crate) fn transaction_status(&self) -> u8 {
        self.transaction
    }

    /// The server's refusal during the login: it ends the connection.
    fn login_refused(&mut self, body: &backend::ErrorResponseBody) -> WireError {
        self.closed = true;
        match ServerError::from_fields(body.fields()) {
            Ok(e) => WireError::Server(e),
            Err(e) => WireError::protocol(e),
        }
    }

    /// Closes the connection for good, saying why.
    fn lose(&mut self, why: impl fmt::Display) -> WireError {
        self.closed = true;
        WireError::protocol(why)
    }

    /// Appends a message built by `build` to what is to be sent.
    fn put(
        &mut self,
        build: impl FnOnce(&mut BytesMut) -> io::Result<()>,
    ) -> Result<(), WireError> {
        let start = self.out.len();
        build(&mut self.out).map_err(|e| {
            self.out.truncate(start);
            WireError::Value(format!("cannot encode a message: {e}"))
        })
    }

    /// Writes what is to be sent, in one write.
    fn send(&mut self) -> Result<(), WireError> {
        if self.closed {
            self.out.clear();
            return Err(WireError::Lost("the connection is closed".into()));
        }
        let written = self.stream.write_all(&self.out);
        self.out.clear();
        written.map_err(|e| {
            self.closed = true;
            WireError::Lost(format!("cannot send to the server: {e}"))
        })
    }

    /// The next message from the server that is not asynchronous: notices
    /// are kept, parameters recorded, notifications dropped.
    fn receive(&mut self) -> Result<Message, WireError> {
        loop {
            let message = self.next_message()?;
            match message {
                Message::NoticeResponse(body) => match ServerError::from_fields(body.fields()) {
                    Ok(notice) => self.last_notice = Some(notice.to_string()),
                    Err(e) => return Err(self.lose(e)),
                },
                Message::ParameterStatus(body) => {
                    let (Ok(name), Ok(value)) = (body.name(), body.value()) else {
                        return Err(self.lose("a parameter status that is not UTF-8"));
                    };
                    match self.parameters.iter_mut().find(|(n, _)| n == name) {
                        Some((_, v)) => {
                            v.clear();
                            v.push_str(value);
                        }
                        None => self.parameters.push((name.to_string(), value.to_string())),
                    }
                }
                Message::NotificationResponse(_) => {}
                other => return Ok(other),
            }
        }
    }

    /// The next message, reading the socket as needed.
    fn next_message(&mut self) -> Result<Message, WireError> {
        loop {
            if let Some(header) = backend::Header::parse(&self.input).map_err(|e| self.lose(e))? {
                let length = header.len() as u32 as usize;
                if !(4..=MAX_MESSAGE).contains(&length) {
                    return Err(self.lose(format!(
                        "a message of tag {} claims {length} bytes",
                        header.tag()
                    )));
                }
            }
            match Message::parse(&mut self.input) {
                Ok(Some(message)) => return Ok(message),
                Ok(None) => self.fill()?,
                Err(e) => return Err(self.lose(e)),
            }
        }
    }

    /// Reads what the socket has into the input buffer.
    fn fill(&mut self) -> Result<(), WireError> {
        if self.closed {
            return Err(WireError::Lost("the connection is closed".into()));
        }
        let read = loop {
            match self.stream.read(&mut self.chunk) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        match read {
            Ok(0) => {
                self.closed = true;
                Err(WireError::Lost(
                    "the server closed the connection".to_string(),
                ))
            }
            Ok(n) => {
                self.input.extend_from_slice(&self.chunk[..n]);
                Ok(())
            }
            Err(e) => {
                self.closed = true;
                Err(WireError::Lost(format!("cannot read from the server: {e}")))
            }
        }
    }

    /// Runs `sql` (one or more statements, no parameters) with the simple
    /// query protocol; `on_row` sees each row's values as text.
    ///
    /// # Errors
    ///
    /// The first statement the server refused (the rest are not run), a
    /// lost connection, or `on_row`'s refusal.
    pub(crate) fn simple_query(
        &mut self,
        sql: &str,
        mut on_row: impl FnMut(&Row<'_>) -> Result<(), String>,
    ) -> Result<(), WireError> {
        self.put(|out| frontend::query(sql, out))?;
        self.send()?;
        let mut failure: Option<WireError> = None;
        loop {
            match self.receive()? {
                Message::RowDescription(_)
                | Message::CommandComplete(_)
                | Message::EmptyQueryResponse => {}
                Message::DataRow(body) => {
                    if failure.is_none() {
                        match self.row(&body, &mut on_row) {
                            Err(lost @ WireError::Lost(_)) => return Err(lost),
                            Err(e) => failure = Some(e),
                            Ok(()) => {}
                        }
                    }
                }
                Message::ErrorResponse(body) => self.refused(&body, &mut failure)?,
                Message::ReadyForQuery(body) => {
                    self.transaction = body.status();
                    return failure.map_or(Ok(()), Err);
                }
                Message::CopyInResponse(_) | Message::CopyOutResponse(_) => {
                    return Err(self.lose("COPY is not supported"));
                }
                _ => return Err(self.lose("an unexpected message in a query's reply")),
            }
        }
    }

    /// `sql` run for its effect (simple query protocol).
    ///
    /// # Errors
    ///
    /// As [`Session::simple_query`].
    pub(crate) fn batch_execute(&mut self, sql: &str) -> Result<(), WireError> {
        self.simple_query(sql, |_| Ok(()))
    }

    /// Keeps the server's refusal as the reply's failure unless one came
    /// first (the reply goes on to its `ReadyForQuery`).
    fn refused(
        &mut self,
        body: &backend::ErrorResponseBody,
        failure: &mut Option<WireError>,
    ) -> Result<(), WireError> {
        let error = ServerError::from_fields(body.fields()).map_err(|e| self.lose(e))?;
        failure.get_or_insert(WireError::Server(error));
        Ok(())
    }

    /// Hands a data row to `on_row`, its values split into the reused
    /// range list.
    fn row(
        &mut self,
        body: &backend::DataRowBody,
        on_row: &mut impl FnMut(&Row<'_>) -> Result<(), String>,
    ) -> Result<(), WireError> {
        self.ranges.clear();
        let mut ranges = body.ranges();
        loop {
            match ranges.next() {
                Ok(Some(range)) => self.ranges.push(range),
                Ok(None) => break,
                Err(e) => return Err(self.lose(e)),
            }
        }
        let row = Row {
            data: body.buffer(),
            ranges: &self.ranges,
        };
        on_row(&row).map_err(WireError::Row)
    }

    /// The statement for `sql`, prepared once per connection (Parse and
    /// Describe, one round trip) and then found by its text.
    ///
    /// # Errors
    ///
    /// The server's refusal of the statement, or a lost connection.
    pub(crate) fn prepare(&mut self, sql: &str) -> Result<Statement, WireError> {
        if let Some(statement) = self.by_sql.get(sql) {
            return Ok(*statement);
        }
        let name = format!("s{}", self.prepared.len());
        self.put(|out| frontend::parse(&name, sql, std::iter::empty(), out))?;
        self.put(|out| frontend::describe(b'S', &name, out))?;
        frontend::sync(&mut self.out);
        self.send()?;
        let mut params = Vec::new();
        let mut columns = Vec::new();
        let mut failure: Option<WireError> = None;
        loop {
            match self.receive()? {
                Message::ParseComplete | Message::NoData => {}
                Message::ParameterDescription(body) => {
                    let mut types = body.parameters();
                    while let Some(ty) = types.next().map_err(|e| self.lose(e))? {
                        params.push(ty);
                    }
                }
                Message::RowDescription(body) => {
                    let mut fields = body.fields();
                    while let Some(field) = fields.next().map_err(|e| self.lose(e))? {
                        columns.push(Column {
                            name: field.name().to_string(),
                            ty: field.type_oid(),
                        });
                    }
                }
                Message::ErrorResponse(body) => self.refused(&body, &mut failure)?,
                Message::ReadyForQuery(body) => {
                    self.transaction = body.status();
                    break;
                }
                _ => return Err(self.lose("an unexpected message in a Parse's reply")),
            }
        }
        if let Some(failure) = failure {
            return Err(failure);
        }
        let statement = Statement(self.prepared.len());
        self.prepared.push(Prepared {
            name,
            params,
            columns,
        });
        self.by_sql.insert(sql.to_string(), statement);
        Ok(statement)
    }

    /// Executes a prepared statement with `params` (Bind, Execute and
    /// Sync in one write; results in binary form); `on_row` sees each row
    /// with the statement's columns.
    ///
    /// # Errors
    ///
    /// A value its parameter cannot hold (nothing is sent), the server's
    /// refusal, `on_row`'s refusal (the reply is read to its end all the
    /// same), or a lost connection.
    pub(crate) fn execute(
        &mut self,
        statement: Statement,
        params: &[Param<'_>],
        mut on_row: impl FnMut(&[Column], &Row<'_>) -> Result<(), String>,
    ) -> Result<Affected, WireError> {
        let Some(prepared) = self.prepared.get(statement.0) else {
            return Err(WireError::Value("no such prepared statement".into()));
        };
        if prepared.params.len() != params.len() {
            return Err(WireError::Value(format!(
                "the statement takes {} parameters, not {}",
                prepared.params.len(),
                params.len()
            )));
        }
        let start = self.out.len();
        let mut refusal: Option<String> = None;
        let bound = frontend::bind(
            "",
            &prepared.name,
            [1],
            params.iter().zip(&prepared.params),
            |(param, ty), out| match encode(*param, *ty, out) {
                Ok(()) => Ok(IsNull::No),
                Err(why) => {
                    refusal = Some(why.clone());
                    Err(why.into())
                }
            },
            [1],
            &mut self.out,
        );
        if let Err(e) = bound {
            self.out.truncate(start);
            return Err(WireError::Value(refusal.unwrap_or_else(|| match e {
                frontend::BindError::Conversion(e) => e.to_string(),
                frontend::BindError::Serialization(e) => e.to_string(),
            })));
        }
        self.put(|out| frontend::execute("", 0, out))?;
        frontend::sync(&mut self.out);
        self.send()?;
        let mut affected = 0;
        let mut failure: Option<WireError> = None;
        loop {
            match self.receive()? {
                Message::BindComplete | Message::EmptyQueryResponse | Message::PortalSuspended => {}
                Message::DataRow(body) => {
                    if failure.is_none() {
                        // The columns are the statement's, which stays in
                        // the cache while its rows are read.
                        let columns = std::mem::take(&mut self.prepared[statement.0].columns);
                        let handled = self.row(&body, &mut |row| on_row(&columns, row));
                        self.prepared[statement.0].columns = columns;
                        if let Err(e) = handled {
                            if matches!(e, WireError::Lost(_)) {
                                return Err(e);
                            }
                            failure = Some(e);
                        }
                    }
                }
                Message::CommandComplete(body) => {
                    let tag = body.tag().map_err(|e| self.lose(e))?;
                    affected = rows_of(tag);
                }
                Message::ErrorResponse(body) => self.refused(&body, &mut failure)?,
                Message::ReadyForQuery(body) => {
                    self.transaction = body.status();
                    return failure.map_or(Ok(affected), Err);
                }
                _ => return Err(self.lose("an unexpected message in an Execute's reply")),
            }
        }
    }
}

impl Drop for Session {
    /// Says goodbye (Terminate), so the server does not log a lost client.
    fn drop(&mut self) {
        if !self.closed {
            frontend::terminate(&mut self.out);
            let _ = self.stream.write_all(&self.out);
        }
    }
}

/// The count of a command tag (`UPDATE 1`, `INSERT 0 1`, `SELECT 3`): its
/// last word, 0 when it has none.
fn rows_of(tag: &str) -> Affected {
    tag.rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Connects to `host:port` trying each of its addresses in turn.
fn connect_tcp(host: &str, port: u16, timeout: Duration) -> io::Result<TcpStream> {
    let mut last = None;
    for address in (host, port).to_socket_addrs()? {
        let attempt = if timeout.is_zero() {
            TcpStream::connect(address)
        } else {
            TcpStream::connect_timeout(&address, timeout)
        };
        match attempt {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A session over a socket whose other end is a scripted server.
    fn scripted(reply: &[u8]) -> (Session, std::thread::JoinHandle<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let reply = reply.to_vec();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            socket.write_all(&reply).unwrap();
            socket.shutdown(std::net::Shutdown::Write).unwrap();
            let mut got = Vec::new();
            let _ = socket.read_to_end(&mut got);
            got
        });
        let stream = TcpStream::connect(address).unwrap();
        (Session::over(stream), server)
    }

    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn error_response(severity: &str, code: &str, text: &str) -> Vec<u8> {
        let mut body = Vec::new();
        for (t, v) in [
            (b'S', severity),
            (b'V', severity),
            (b'C', code),
            (b'M', text),
        ] {
            body.push(t);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        message(b'E', &body)
    }

    #[test]
    fn an_error_response_is_the_servers_refusal_and_the_connection_stays() {
        let mut reply = message(b'N', b"SWARNING\0Mcareful\0\0");
        reply.extend(error_response(
            "ERROR",
            "42P01",
            "relation \"x\" does not exist",
        ));
        reply.extend(message(b'Z', b"I"));
        let (mut session, _server) = scripted(&reply);
        let e = session.batch_execute("SELECT * FROM x").unwrap_err();
        let WireError::Server(error) = &e else {
            panic!("{e:?}")
        };
        assert_eq!(error.code, "42P01");
        assert_eq!(e.to_string(), "ERROR: relation \"x\" does not exist");
        assert_eq!(session.last_notice(), Some("WARNING: careful"));
        assert!(!session.is_closed());
        assert_eq!(session.transaction_status(), b'I');
    }

    #[test]
    fn malformed_replies_close_the_connection_without_panicking() {
        for (what, reply) in [
            ("unknown tag", message(b'?', b"")),
            ("short length", vec![b'Z', 0, 0, 0, 2]),
            ("huge length", vec![b'D', 0x7f, 0xff, 0xff, 0xff]),
            ("truncated data row", {
                let mut m = message(b'D', &[0, 2, 0, 0, 0, 9, b'a']);
                m.extend(message(b'Z', b"I"));
                m
            }),
            ("bad error fields", message(b'E', b"Mno terminator")),
            ("ready without status", message(b'Z', b"")),
            ("eof", Vec::new()),
        ] {
            let (mut session, _server) = scripted(&reply);
            let e = session.simple_query("SELECT 1", |_| Ok(())).unwrap_err();
            assert!(matches!(e, WireError::Lost(_)), "{what}: {e:?}");
            assert!(session.is_closed(), "{what}");
            assert!(session.batch_execute("SELECT 1").is_err(), "{what}");
        }
    }

    #[test]
    fn rows_and_parameters_are_read() {
        let mut reply = message(b'S', b"server_version\x0016.4\0");
        reply.extend(message(b'T', &[0, 0]));
        reply.extend(message(
            b'D',
            &[0, 2, 0, 0, 0, 2, b'h', b'i', 0xff, 0xff, 0xff, 0xff],
        ));
        reply.extend(message(b'C', b"SELECT 1\0"));
        reply.extend(message(b'Z', b"T"));
        let (mut session, _server) = scripted(&reply);
        let mut seen = Vec::new();
        session
            .simple_query("SELECT 'hi', NULL", |row| {
                seen.push((
                    row.len(),
                    row.get(0).map(<[u8]>::to_vec),
                    row.get(1).is_none(),
                ));
                Ok(())
            })
            .unwrap();
        assert_eq!(seen, [(2, Some(b"hi".to_vec()), true)]);
        assert_eq!(session.parameter("server_version"), Some("16.4"));
        assert_eq!(session.transaction_status(), b'T');
    }

    #[test]
    fn values_are_encoded_as_their_parameters_types() {
        let mut out = BytesMut::new();
        encode(Param::Bytes(b"\xff\0"), oid::BYTEA, &mut out).unwrap();
        encode(Param::Int(7), oid::INT8, &mut out).unwrap();
        encode(Param::Int(7), oid::INT4, &mut out).unwrap();
        assert_eq!(&out[..], b"\xff\0\0\0\0\0\0\0\0\x07\0\0\0\x07");
        let e = encode(Param::Bytes(b"\xff"), oid::TEXT, &mut out).unwrap_err();
        assert!(e.contains("not UTF-8"), "{e}");
        let e = encode(Param::Bytes(b"a\0"), oid::VARCHAR, &mut out).unwrap_err();
        assert!(e.contains("NUL"), "{e}");
        let e = encode(Param::Int(1 << 40), oid::INT4, &mut out).unwrap_err();
        assert!(e.contains("does not fit"), "{e}");
        assert!(encode(Param::Text("x"), 16, &mut out).is_err());
    }

    #[test]
    fn command_tags_give_their_counts() {
        assert_eq!(rows_of("UPDATE 3"), 3);
        assert_eq!(rows_of("INSERT 0 1"), 1);
        assert_eq!(rows_of("BEGIN"), 0);
        assert_eq!(rows_of(""), 0);
    }
}
