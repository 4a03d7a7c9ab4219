//! Serves a store over HTTP/1.1: simpleleveldb's endpoints and WebDAV-style
//! `/{table}/{key}` resources, so that the same engine can be measured
//! embedded and over TCP, and so that the `http` store's presets have a
//! server to talk to.
//!
//! Records travel as in [`ycsb_http::encoding`]: base64url text of the
//! record encoding in query strings and `key,value` lines, the binary
//! encoding in WebDAV bodies.
//!
//! simpleleveldb endpoints (any method; `format=txt` answers with the real
//! status code and `key,value` lines, otherwise JSON
//! `{"status_code":…,"status_txt":…,"data":…}` with HTTP 200, as
//! simpleleveldb does; the table is [`ServerConfig::table`]):
//!
//! | endpoint | parameters | store call |
//! |---|---|---|
//! | `/get` | `key` | read |
//! | `/mget` | `key` (repeated) | read each, missing keys left out |
//! | `/put` | `key`, `value` (or a POST body) | insert |
//! | `/mput` | POST body of `key,value` lines, `separator` | insert each |
//! | `/del` | `key` | delete |
//! | `/range_match` | `start`, `end`, `limit` (default 500, 0 = all) | scan while key ≤ end |
//! | `/fwmatch` | `key` (a prefix), `limit` | scan while the key has the prefix |
//! | `/update` | as `/put` | update (merges fields; not in simpleleveldb) |
//!
//! Two deliberate differences: `/del` of a missing key answers 404 when
//! the store reports `NOT_FOUND` (simpleleveldb always answers 200), and
//! `/mget` takes only parameters named exactly `key`.
//!
//! With a password ([`ServerConfig::password`], `serve.password`),
//! every request must carry `Authorization: Bearer <password>`; one that
//! does not is answered 401 with `WWW-Authenticate: Bearer` before its
//! body is read, and its connection closed.
//!
//! WebDAV-style resources `/{table}/{key}` (the key is the rest of the
//! path, percent-decoded): `GET`/`HEAD` read, `PUT` inserts, `PATCH` or
//! `POST` update (merge), `DELETE` deletes; successful writes answer 204.
//!
//! Each connection is served by its own thread with its own
//! [`StoreThread`], keep-alive by default. Malformed
//! requests answer 400 (431 for an oversized head, 413 for an oversized
//! body) and close the connection; nothing a client sends can panic the
//! server.
//!
//! # Limits
//!
//! What a client sends cannot make the server hold more than the limits
//! below ([`ServerConfig`], from the `serve.http.*` properties):
//!
//! - a request head is at most 64 KiB (431 past it);
//! - a body is read as it arrives, never reserved from its declared
//!   `Content-Length` or chunk sizes; one declared or sent longer than
//!   `serve.http.maxbody` is answered 413;
//! - the bodies all connections hold together are bounded by
//!   `serve.http.maxbuffered`: a request that would go over it is
//!   answered 503;
//! - at most `serve.http.maxconnections` connections are served at once;
//!   one more is answered 503 and closed;
//! - a connection idle for `serve.http.timeout` seconds is closed, a
//!   request not received within about twice that is answered 408, and a
//!   client that takes as long to accept a write of its answer is
//!   dropped.
//!
//! Every limit answered with an error closes the connection.
//! [`crate::ServerHandle::stop`] (what `ycsb serve` does on SIGTERM or
//! Ctrl-C) returns within a few seconds even while a client never reads
//! its answers; see [`crate::ServerHandle::stop`].
//!
//! One thing is not bounded: the answer to `/mget`, `/range_match` or
//! `/fwmatch` is built whole before it is sent, so a scan with `limit=0`
//! over a large table holds that table's text.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Duration;

use crate::auth::Password;
use crate::limits::{linger, timed_out, Budget, Charge, Timed};
pub use crate::listener::ServeError;
use crate::listener::{ConfigProperties, Protocol, ServerConfig};
use ycsb_db::{
    Fields, Property, PropertyDecl, Record, ScanOp, ScanResult, Status, StoreError, StoreThread,
};
use ycsb_http::encoding;
use ycsb_http::wire::{self, Conn, WireError};

/// Where `ycsb serve` listens for HTTP unless told otherwise: loopback
/// only, simpleleveldb's port.
pub const DEFAULT_ADDR: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8080));

/// `serve.http.table`: the table simpleleveldb endpoints use.
pub const TABLE: Property<String> = Property::new(
    "serve.http.table",
    "usertable",
    "Table that simpleleveldb-style endpoints (/get, /put, ...) read and write; WebDAV paths name their own.",
);
/// `serve.http.maxbody`: the largest request body accepted.
pub const MAX_BODY: Property<usize> = Property::new(
    "serve.http.maxbody",
    "67108864",
    "Largest request body in bytes the HTTP server accepts; larger ones are answered 413. Bodies are read as they arrive, never reserved from a declared length.",
);
/// `serve.http.maxbuffered`: the bodies all connections may hold together.
pub const MAX_BUFFERED: Property<usize> = Property::new(
    "serve.http.maxbuffered",
    "268435456",
    "Most bytes of request bodies all HTTP connections may hold together; a request that would need more is answered 503 and its connection closed.",
);
/// `serve.http.maxconnections`: the most connections served at once.
pub const MAX_CONNECTIONS: Property<usize> = Property::new(
    "serve.http.maxconnections",
    "512",
    "Most HTTP connections served at once (one thread each); one more is answered 503 and closed.",
);
/// `serve.http.timeout`: how long a client may be idle or slow.
pub const TIMEOUT: Property<Duration> = Property::new(
    "serve.http.timeout",
    "300",
    "Seconds an HTTP connection may stay idle, or take to accept a write of its answer, before it is closed; a request not received within about twice this is answered 408. 0 waits forever.",
);

/// The HTTP protocol, for [`crate::serve`] and
/// [`ServerConfig::from_properties`] ([`ServerConfig::max_message`] is
/// the largest request body).
pub const HTTP: Protocol = Protocol {
    name: "HTTP",
    refusal: REFUSAL,
    serve: serve_connection,
    properties: ConfigProperties {
        table: &TABLE,
        max_message: &MAX_BODY,
        max_buffered: &MAX_BUFFERED,
        max_connections: &MAX_CONNECTIONS,
        timeout: &TIMEOUT,
    },
};

/// Every property of the HTTP server.
pub const PROPERTIES: &[&PropertyDecl] = &[
    TABLE.decl(),
    MAX_BODY.decl(),
    MAX_BUFFERED.decl(),
    MAX_CONNECTIONS.decl(),
    TIMEOUT.decl(),
];

/// The longest request head accepted.
const MAX_HEAD: usize = 64 << 10;
/// Scan batch size when paging through a range.
const SCAN_BATCH: usize = 500;
/// The most a body buffer grows by at once: it grows as the body arrives.
const BODY_STEP: usize = 1 << 20;
/// A body buffer larger than this is given back after its request.
const MAX_IDLE_BODY: usize = 1 << 20;
/// The answer to a connection over [`MAX_CONNECTIONS`].
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
Content-Length: 20\r\nConnection: close\r\n\r\ntoo many connections";

/// An answer being built.
struct Reply {
    code: u16,
    content_type: &'static str,
    /// Extra header lines, each ending in CRLF.
    extra: &'static str,
    /// Close the connection after this answer.
    close: bool,
}

impl Reply {
    fn new(code: u16) -> Self {
        Reply {
            code,
            content_type: "text/plain",
            extra: "",
            close: false,
        }
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

/// The HTTP code for a store status.
fn code_for_status(status: Status) -> u16 {
    match status {
        Status::Ok | Status::BatchedOk => 200,
        Status::NotFound => 404,
        Status::BadRequest => 400,
        Status::Forbidden => 403,
        Status::NotImplemented => 501,
        Status::ServiceUnavailable => 503,
        _ => 500,
    }
}

/// Decoded query parameters, in reused buffers.
#[derive(Default)]
struct Query {
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
    len: usize,
}

impl Query {
    /// Parses `query`; `Err` on a bad percent escape.
    fn parse(&mut self, query: &str) -> Result<(), ()> {
        self.len = 0;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if self.len == self.pairs.len() {
                self.pairs.push(Default::default());
            }
            let (n, v) = &mut self.pairs[self.len];
            n.clear();
            v.clear();
            encoding::percent_decode(name.as_bytes(), true, n).map_err(|_| ())?;
            encoding::percent_decode(value.as_bytes(), true, v).map_err(|_| ())?;
            self.len += 1;
        }
        Ok(())
    }

    fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.pairs[..self.len]
            .iter()
            .filter(move |(n, _)| n == name.as_bytes())
            .map(|(_, v)| v.as_slice())
    }

    fn get<'a>(&'a self, name: &'a str) -> Option<&'a [u8]> {
        self.all(name).next()
    }
}

/// One connection's state: its store thread and reused buffers.
struct Session<'s> {
    thread: Box<dyn StoreThread + 's>,
    table: &'s str,
    /// The bearer token every request must carry, if any.
    password: Option<&'s Password>,
    max_body: usize,
    /// What `body` holds of the server's budget.
    charge: Charge<'s>,
    method: String,
    target: String,
    query: Query,
    body: Vec<u8>,
    /// The answer's body.
    out: Vec<u8>,
    scratch: Vec<u8>,
    key: Vec<u8>,
    /// A WebDAV path's table.
    table_buf: Vec<u8>,
    /// A range's end key.
    end: Vec<u8>,
    /// The head of an answer.
    head: Vec<u8>,
    record: Record,
    scan: ScanResult,
    /// A scan's paging key.
    cursor: String,
}

fn serve_connection(
    thread: Result<Box<dyn StoreThread + '_>, StoreError>,
    stream: Timed,
    config: &ServerConfig,
    budget: &Budget,
) {
    let mut conn = Conn::new(stream);
    let thread = match thread {
        Ok(t) => t,
        Err(e) => {
            let mut reply = Reply::new(503);
            reply.close = true;
            let _ = send(
                &mut conn,
                &mut Vec::new(),
                &reply,
                format!("store thread failed: {e}").as_bytes(),
                false,
            );
            linger(&mut conn.stream().stream);
            return;
        }
    };
    let mut session = Session {
        thread,
        table: &config.table,
        password: config.password.as_ref(),
        max_body: config.max_message,
        charge: Charge::new(budget),
        method: String::new(),
        target: String::new(),
        query: Query::default(),
        body: Vec::new(),
        out: Vec::new(),
        scratch: Vec::new(),
        key: Vec::new(),
        table_buf: Vec::new(),
        end: Vec::new(),
        head: Vec::with_capacity(256),
        record: Record::new(),
        scan: ScanResult::new(),
        cursor: String::new(),
    };
    while session.one_request(&mut conn) {}
    let _ = session.thread.cleanup();
}

/// Writes an answer with `body` (left out for HEAD, but counted).
fn send(
    conn: &mut Conn<Timed>,
    head: &mut Vec<u8>,
    reply: &Reply,
    body: &[u8],
    head_only: bool,
) -> io::Result<()> {
    head.clear();
    let _ = write!(
        head,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}",
        reply.code,
        reason(reply.code),
        reply.content_type,
        body.len(),
        reply.extra
    );
    if reply.close {
        head.extend_from_slice(b"Connection: close\r\n");
    }
    head.extend_from_slice(b"\r\n");
    let stream = conn.stream();
    if head_only || body.is_empty() {
        stream.write_all(head)
    } else if body.len() <= 16 * 1024 {
        // One write, one segment, for the common small answer.
        head.extend_from_slice(body);
        stream.write_all(head)
    } else {
        stream.write_all(head)?;
        stream.write_all(body)
    }
}

/// A body would take the server past `serve.http.maxbuffered`.
struct OverBudget;

/// Whether a request may be served.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// No password is needed, or the right one came.
    Granted,
    /// No bearer token came.
    NoToken,
    /// A bearer token came, not the password.
    WrongToken,
}

/// Output format of a simpleleveldb endpoint.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Txt,
    Json,
}

impl Session<'_> {
    /// Serves one request; `false` when the connection should close.
    fn one_request(&mut self, conn: &mut Conn<Timed>) -> bool {
        conn.stream().rearm();
        let head_len = match conn.read_head(MAX_HEAD) {
            Ok(Some(n)) => n,
            Err(WireError::Io(e)) if timed_out(&e) && !conn.buffered().is_empty() => {
                return self.fail(conn, 408, "request not received in time");
            }
            Ok(None) | Err(WireError::Closed | WireError::Io(_)) => return false,
            Err(WireError::HeadTooLarge(_)) => {
                return self.fail(conn, 431, "request head too large")
            }
            Err(_) => return self.fail(conn, 400, "malformed request"),
        };
        let (info, framing, access) = match wire::parse_request(&conn.buffered()[..head_len]) {
            Ok(head) => {
                self.method.clear();
                self.method.push_str(head.method);
                self.target.clear();
                self.target.push_str(head.target);
                let access = match self.password {
                    None => Access::Granted,
                    Some(password) => match head.authorization.bearer() {
                        Some(token) if password.matches(token) => Access::Granted,
                        Some(_) => Access::WrongToken,
                        None => Access::NoToken,
                    },
                };
                (head.info, head.framing(), access)
            }
            Err(_) => return self.fail(conn, 400, "malformed request"),
        };
        conn.consume(head_len);
        // Before the body is read: a client without the password holds
        // nothing of the server's memory.
        if access != Access::Granted {
            return self.refuse_access(conn, access);
        }
        if matches!(framing, wire::Framing::Length(n) if n > self.max_body as u64) {
            return self.fail(conn, 413, "request body too large");
        }
        let continue_needed = info.expect_continue && framing != wire::Framing::Empty;
        if continue_needed
            && conn
                .stream()
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .is_err()
        {
            return false;
        }
        if let Err((code, message)) = self.read_body(conn, framing) {
            return match code {
                0 => false,
                code => self.fail(conn, code, message),
            };
        }
        self.out.clear();
        let mut reply = self.dispatch();
        reply.close |= !info.persistent();
        let head_only = self.method == "HEAD";
        if self.body.capacity() > MAX_IDLE_BODY {
            self.body = Vec::new();
        }
        // Between requests: the kept buffer, at most MAX_IDLE_BODY.
        self.charge.hold(self.body.capacity());
        send(conn, &mut self.head, &reply, &self.out, head_only).is_ok() && !reply.close
    }

    /// Reads the request's body into `self.body` as it arrives, within
    /// `serve.http.maxbody` and the server's budget; on failure the code
    /// and message to answer (code 0: close without one).
    fn read_body(
        &mut self,
        conn: &mut Conn<Timed>,
        framing: wire::Framing,
    ) -> Result<(), (u16, &'static str)> {
        const OVER_BUDGET: (u16, &str) = (503, "request bodies over serve.http.maxbuffered");
        self.body.clear();
        let result = match framing {
            wire::Framing::Length(n) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                match self.read_sized_body(conn, n) {
                    Ok(result) => result,
                    Err(OverBudget) => return Err(OVER_BUDGET),
                }
            }
            other => {
                // Chunked: the wire code grows the body as chunks arrive;
                // what it may hold is what this connection holds already
                // and what the budget has left.
                let room = self.charge.held() + self.charge.available();
                match conn.read_body(other, self.max_body.min(room), &mut self.body) {
                    Err(WireError::BodyTooLarge(_)) if room < self.max_body => {
                        return Err(OVER_BUDGET)
                    }
                    result => result,
                }
            }
        };
        match result {
            Ok(()) if self.charge.hold(self.body.len().max(self.charge.held())) => Ok(()),
            Ok(()) => Err(OVER_BUDGET),
            Err(WireError::BodyTooLarge(_)) => Err((413, "request body too large")),
            Err(WireError::Malformed(_)) => Err((400, "malformed request body")),
            Err(WireError::Io(e)) if timed_out(&e) => Err((408, "request not received in time")),
            Err(_) => Err((0, "")),
        }
    }

    /// Reads a body of exactly `n` bytes, growing the buffer by at most
    /// [`BODY_STEP`] at a time as bytes arrive.
    fn read_sized_body(
        &mut self,
        conn: &mut Conn<Timed>,
        n: usize,
    ) -> Result<Result<(), WireError>, OverBudget> {
        let take = n.min(conn.buffered().len());
        self.body.extend_from_slice(&conn.buffered()[..take]);
        conn.consume(take);
        while self.body.len() < n {
            let at = self.body.len();
            let end = at + (n - at).min(BODY_STEP);
            // What is held is what is written (and so resident); the
            // vector's spare capacity is not touched.
            if !self.charge.hold(end.max(self.charge.held())) {
                return Err(OverBudget);
            }
            self.body.resize(end, 0);
            let mut filled = at;
            while filled < end {
                match conn.stream().read(&mut self.body[filled..end]) {
                    Ok(0) => {
                        self.body.truncate(filled);
                        return Ok(Err(WireError::Closed));
                    }
                    Ok(k) => filled += k,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.body.truncate(filled);
                        return Ok(Err(WireError::Io(e)));
                    }
                }
            }
        }
        Ok(Ok(()))
    }

    /// Answers 401 to a request without the password (RFC 6750's
    /// challenge), and closes.
    fn refuse_access(&mut self, conn: &mut Conn<Timed>, access: Access) -> bool {
        let mut reply = Reply::new(401);
        reply.close = true;
        let body: &[u8] = if access == Access::WrongToken {
            reply.extra =
                "WWW-Authenticate: Bearer realm=\"ycsb serve\", error=\"invalid_token\"\r\n";
            b"wrong bearer token"
        } else {
            reply.extra = "WWW-Authenticate: Bearer realm=\"ycsb serve\"\r\n";
            b"authentication required: send Authorization: Bearer <serve.password>"
        };
        let _ = send(conn, &mut self.head, &reply, body, false);
        linger(&mut conn.stream().stream);
        false
    }

    /// Answers a request that cannot be read, and closes.
    fn fail(&mut self, conn: &mut Conn<Timed>, code: u16, message: &str) -> bool {
        let mut reply = Reply::new(code);
        reply.close = true;
        let _ = send(conn, &mut self.head, &reply, message.as_bytes(), false);
        linger(&mut conn.stream().stream);
        false
    }

    fn dispatch(&mut self) -> Reply {
        let target = std::mem::take(&mut self.target);
        let reply = self.route(&target);
        self.target = target;
        reply
    }

    fn route(&mut self, target: &str) -> Reply {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if !path.starts_with('/') {
            return self.plain(400, "request target must be a path");
        }
        let rest = &path[1..];
        match rest.split_once('/') {
            Some((table, key)) if !table.is_empty() && !key.is_empty() => {
                return self.resource(table, key);
            }
            Some(_) => return self.plain(404, "no such resource"),
            None => {}
        }
        if self.query.parse(query).is_err() {
            return self.plain(400, "invalid percent escape in the query");
        }
        let format = match self.query.get("format") {
            Some(b"txt") => Format::Txt,
            _ => Format::Json,
        };
        match rest {
            "get" => self.get(format),
            "mget" => self.mget(format),
            "put" => self.put(format, false),
            "update" => self.put(format, true),
            "mput" => self.mput(format),
            "del" => self.del(format),
            "range_match" => self.range(format, false),
            "fwmatch" => self.range(format, true),
            _ => self.plain(404, "no such endpoint"),
        }
    }

    fn plain(&mut self, code: u16, message: &str) -> Reply {
        self.out.clear();
        self.out.extend_from_slice(message.as_bytes());
        Reply::new(code)
    }

    /// A simpleleveldb answer: in txt, `self.out` as built (or
    /// `DB_ERROR: <error>`) with the real code; in JSON, an envelope with
    /// HTTP 200 whose `data` is `json_data` (already JSON).
    fn simple(
        &mut self,
        format: Format,
        code: u16,
        error: Option<&str>,
        json_data: Option<std::ops::Range<usize>>,
    ) -> Reply {
        match format {
            Format::Txt => {
                if let Some(e) = error {
                    self.out.clear();
                    self.out.extend_from_slice(b"DB_ERROR: ");
                    self.out.extend_from_slice(e.as_bytes());
                }
                Reply::new(code)
            }
            Format::Json => {
                let mut envelope = std::mem::take(&mut self.scratch);
                envelope.clear();
                let _ = write!(envelope, "{{\"status_code\": {code}, \"status_txt\": ");
                json_string(error.unwrap_or("OK").as_bytes(), &mut envelope);
                envelope.extend_from_slice(b", \"data\": ");
                match json_data {
                    Some(range) if error.is_none() => envelope.extend_from_slice(&self.out[range]),
                    _ => envelope.extend_from_slice(b"\"\""),
                }
                envelope.extend_from_slice(b"}\n");
                std::mem::swap(&mut self.out, &mut envelope);
                self.scratch = envelope;
                let mut reply = Reply::new(200);
                reply.content_type = "application/json";
                reply
            }
        }
    }

    /// The `key` parameter as a store key, or the error answer.
    fn key_param(&mut self, name: &str, format: Format) -> Result<(), Reply> {
        let Some(key) = self.query.get(name) else {
            return Err(self.simple(format, 400, Some("MISSING_ARG_KEY"), None));
        };
        if std::str::from_utf8(key).is_err() {
            return Err(self.simple(format, 400, Some("INVALID_KEY"), None));
        }
        self.key.clear();
        self.key.extend_from_slice(key);
        Ok(())
    }

    fn status_reply(&mut self, format: Format, status: Status) -> Reply {
        let code = code_for_status(status);
        if code == 200 {
            self.simple(format, 200, None, None)
        } else {
            self.simple(format, code, Some(status.name()), None)
        }
    }

    fn get(&mut self, format: Format) -> Reply {
        if let Err(r) = self.key_param("key", format) {
            return r;
        }
        let key = std::mem::take(&mut self.key);
        let key_str = std::str::from_utf8(&key).unwrap_or_default();
        let status =
            crate::read_whole_record(&mut *self.thread, self.table, key_str, &mut self.record);
        let reply = if status == Status::Ok {
            self.out.clear();
            let data = match format {
                Format::Txt => {
                    self.out.extend_from_slice(&key);
                    self.out.push(b',');
                    encoding::encode_record_text(&self.record, &mut self.scratch, &mut self.out);
                    self.out.push(b'\n');
                    None
                }
                Format::Json => {
                    self.out.push(b'"');
                    encoding::encode_record_text(&self.record, &mut self.scratch, &mut self.out);
                    self.out.push(b'"');
                    Some(0..self.out.len())
                }
            };
            self.simple(format, 200, None, data)
        } else if status == Status::NotFound {
            self.simple(format, 404, Some("NOT_FOUND"), None)
        } else {
            self.status_reply(format, status)
        };
        self.key = key;
        reply
    }

    fn mget(&mut self, format: Format) -> Reply {
        if self.query.get("key").is_none() {
            return self.simple(format, 400, Some("MISSING_ARG_KEY"), None);
        }
        self.out.clear();
        if format == Format::Json {
            self.out.push(b'[');
        }
        let query = std::mem::take(&mut self.query);
        let mut failure = None;
        let mut first = true;
        for key in query.all("key") {
            let Ok(key) = std::str::from_utf8(key) else {
                failure = Some(Status::BadRequest);
                break;
            };
            match crate::read_whole_record(&mut *self.thread, self.table, key, &mut self.record) {
                Status::Ok => {}
                Status::NotFound => continue,
                other => {
                    failure = Some(other);
                    break;
                }
            }
            write_row(
                &mut self.out,
                &mut self.scratch,
                format,
                key,
                &self.record,
                first,
            );
            first = false;
        }
        self.query = query;
        if format == Format::Json {
            self.out.push(b']');
        }
        match failure {
            Some(s) => self.status_reply(format, s),
            None => {
                let len = self.out.len();
                self.simple(format, 200, None, Some(0..len))
            }
        }
    }

    fn put(&mut self, format: Format, merge: bool) -> Reply {
        if let Err(r) = self.key_param("key", format) {
            return r;
        }
        let value = match self.query.get("value") {
            Some(v) => v,
            None if self.method == "POST" && !self.body.is_empty() => trim_newline(&self.body),
            None => return self.simple(format, 400, Some("MISSING_ARG_VALUE"), None),
        };
        self.record.clear();
        if encoding::decode_record_text(value, Fields::All, &mut self.scratch, &mut self.record)
            .is_err()
        {
            return self.simple(format, 400, Some("INVALID_VALUE"), None);
        }
        let key = std::mem::take(&mut self.key);
        let key_str = std::str::from_utf8(&key).unwrap_or_default();
        let status = if merge {
            self.thread.update(self.table, key_str, &self.record)
        } else {
            self.thread.insert(self.table, key_str, &self.record)
        };
        self.key = key;
        self.out.clear();
        self.status_reply(format, status)
    }

    fn mput(&mut self, format: Format) -> Reply {
        if self.method != "POST" {
            return self.simple(format, 400, Some("MUST_POST_DATA"), None);
        }
        let separator = match self.query.get("separator") {
            None => b',',
            Some([c]) => *c,
            Some(_) => return self.simple(format, 400, Some("INVALID_SEPARATOR"), None),
        };
        let body = std::mem::take(&mut self.body);
        let mut status = Status::Ok;
        for line in body.split(|&c| c == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            let Some(at) = line.iter().position(|&c| c == separator) else {
                status = Status::BadRequest;
                break;
            };
            let Ok(key) = std::str::from_utf8(&line[..at]) else {
                status = Status::BadRequest;
                break;
            };
            self.record.clear();
            if encoding::decode_record_text(
                &line[at + 1..],
                Fields::All,
                &mut self.scratch,
                &mut self.record,
            )
            .is_err()
            {
                status = Status::BadRequest;
                break;
            }
            status = self.thread.insert(self.table, key, &self.record);
            if status != Status::Ok {
                break;
            }
        }
        self.body = body;
        self.out.clear();
        if status == Status::BadRequest {
            return self.simple(format, 400, Some("MALFORMED_CSV"), None);
        }
        self.status_reply(format, status)
    }

    fn del(&mut self, format: Format) -> Reply {
        if let Err(r) = self.key_param("key", format) {
            return r;
        }
        let key = std::mem::take(&mut self.key);
        let status = self
            .thread
            .delete(self.table, std::str::from_utf8(&key).unwrap_or_default());
        self.key = key;
        self.out.clear();
        self.status_reply(format, status)
    }

    /// `/range_match` (keys from `start` to `end`) and `/fwmatch` (keys
    /// with the prefix `key`), paging through the store's scan.
    fn range(&mut self, format: Format, prefix: bool) -> Reply {
        // The start key (or prefix) goes to self.key, the end key to
        // self.end, both reused buffers.
        if prefix {
            if let Err(r) = self.key_param("key", format) {
                return r;
            }
        } else {
            let (Some(start), Some(end)) = (self.query.get("start"), self.query.get("end")) else {
                return self.simple(format, 400, Some("MISSING_ARG_KEY"), None);
            };
            if start > end {
                return self.simple(format, 400, Some("INVALID_START_KEY"), None);
            }
            if std::str::from_utf8(start).is_err() {
                return self.simple(format, 400, Some("INVALID_KEY"), None);
            }
            self.key.clear();
            self.key.extend_from_slice(start);
            self.end.clear();
            self.end.extend_from_slice(end);
        }
        let limit = match self.query.get("limit").map(std::str::from_utf8) {
            None => SCAN_BATCH,
            Some(Ok(text)) => match text.trim().parse::<usize>() {
                Ok(0) => usize::MAX,
                Ok(n) => n,
                Err(_) => return self.simple(format, 400, Some("INVALID_LIMIT"), None),
            },
            Some(Err(_)) => return self.simple(format, 400, Some("INVALID_LIMIT"), None),
        };
        self.out.clear();
        if format == Format::Json {
            self.out.push(b'[');
        }
        let (start, end) = (std::mem::take(&mut self.key), std::mem::take(&mut self.end));
        self.cursor.clear();
        self.cursor
            .push_str(std::str::from_utf8(&start).unwrap_or_default());
        let mut emitted = 0usize;
        let mut scan = std::mem::take(&mut self.scan);
        let mut failure = None;
        'pages: while emitted < limit {
            let batch = (limit - emitted).min(SCAN_BATCH);
            scan.clear();
            let status = self.thread.scan(
                &ScanOp {
                    table: self.table,
                    start_key: &self.cursor,
                    count: batch,
                    fields: Fields::All,
                },
                &mut scan,
            );
            if status != Status::Ok {
                failure = Some(status);
                break;
            }
            for (key, record) in scan.iter() {
                let beyond = if prefix {
                    !key.as_bytes().starts_with(&start)
                } else {
                    key.as_bytes() > end.as_slice()
                };
                if beyond || emitted == limit {
                    break 'pages;
                }
                write_row(
                    &mut self.out,
                    &mut self.scratch,
                    format,
                    key,
                    record,
                    emitted == 0,
                );
                emitted += 1;
            }
            if scan.len() < batch {
                break;
            }
            // Continue just after the last key: its successor in byte
            // order is the key followed by a NUL.
            let Some((last, _)) = scan.iter().last() else {
                break;
            };
            self.cursor.clear();
            self.cursor.push_str(last);
            self.cursor.push('\0');
        }
        self.scan = scan;
        self.key = start;
        self.end = end;
        if let Some(status) = failure {
            self.out.clear();
            return self.status_reply(format, status);
        }
        if format == Format::Json {
            self.out.push(b']');
        }
        let len = self.out.len();
        self.simple(format, 200, None, Some(0..len))
    }

    /// WebDAV-style `/{table}/{key}`.
    fn resource(&mut self, table: &str, key: &str) -> Reply {
        let mut table_bytes = std::mem::take(&mut self.table_buf);
        table_bytes.clear();
        self.key.clear();
        let decoded = encoding::percent_decode(table.as_bytes(), false, &mut table_bytes).is_ok()
            && encoding::percent_decode(key.as_bytes(), false, &mut self.key).is_ok();
        let reply = match (
            decoded,
            std::str::from_utf8(&table_bytes),
            std::str::from_utf8(&self.key),
        ) {
            (true, Ok(table), Ok(_)) => self.resource_op(table),
            _ => self.plain(400, "invalid table or key in the path"),
        };
        self.table_buf = table_bytes;
        reply
    }

    fn resource_op(&mut self, table: &str) -> Reply {
        let key = std::mem::take(&mut self.key);
        let key_str = std::str::from_utf8(&key).unwrap_or_default();
        self.record.clear();
        let reply = match self.method.as_str() {
            "GET" | "HEAD" => {
                let status =
                    crate::read_whole_record(&mut *self.thread, table, key_str, &mut self.record);
                self.out.clear();
                if status == Status::Ok {
                    encoding::encode_record(&self.record, &mut self.out);
                    let mut r = Reply::new(200);
                    r.content_type = "application/octet-stream";
                    r
                } else {
                    self.plain(code_for_status(status), status.name())
                }
            }
            "PUT" | "PATCH" | "POST" => {
                if encoding::decode_record(&self.body, Fields::All, &mut self.record).is_err() {
                    self.plain(400, "the body is not a record encoding")
                } else {
                    let status = if self.method == "PUT" {
                        self.thread.insert(table, key_str, &self.record)
                    } else {
                        self.thread.update(table, key_str, &self.record)
                    };
                    self.write_status(status)
                }
            }
            "DELETE" => {
                let status = self.thread.delete(table, key_str);
                self.write_status(status)
            }
            _ => {
                let mut r = self.plain(405, "method not allowed");
                r.extra = "Allow: GET, HEAD, PUT, PATCH, POST, DELETE\r\n";
                r
            }
        };
        self.key = key;
        reply
    }

    fn write_status(&mut self, status: Status) -> Reply {
        if status.is_ok() {
            self.out.clear();
            Reply::new(204)
        } else {
            self.plain(code_for_status(status), status.name())
        }
    }
}

/// Appends `key` and `record` to `out` as a txt line or a JSON object
/// (`first` says whether a JSON separator is needed).
fn write_row(
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    format: Format,
    key: &str,
    record: &Record,
    first: bool,
) {
    match format {
        Format::Txt => {
            out.extend_from_slice(key.as_bytes());
            out.push(b',');
            encoding::encode_record_text(record, scratch, out);
            out.push(b'\n');
        }
        Format::Json => {
            if !first {
                out.extend_from_slice(b", ");
            }
            out.extend_from_slice(b"{\"key\": ");
            json_string(key.as_bytes(), out);
            out.extend_from_slice(b", \"value\": \"");
            encoding::encode_record_text(record, scratch, out);
            out.extend_from_slice(b"\"}");
        }
    }
}

fn trim_newline(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

/// Appends `bytes` as a JSON string (invalid UTF-8 replaced).
fn json_string(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use ycsb_db::Properties;

    #[test]
    fn json_strings_are_escaped() {
        let mut out = Vec::new();
        json_string(b"a\"b\\c\nd\x01\xff", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\\"b\\\\c\\nd\\u0001\u{fffd}\""
        );
    }

    #[test]
    fn queries_decode_and_repeat() {
        let mut q = Query::default();
        q.parse("key=a%2Cb&key=c+d&&flag&format=txt").unwrap();
        let keys: Vec<_> = q.all("key").collect();
        assert_eq!(keys, vec![&b"a,b"[..], b"c d"]);
        assert_eq!(q.get("flag"), Some(&b""[..]));
        assert_eq!(q.get("format"), Some(&b"txt"[..]));
        assert!(q.parse("key=%zz").is_err());
        q.parse("x=1").unwrap();
        assert_eq!(q.get("key"), None);
    }

    #[test]
    fn statuses_map_to_codes() {
        assert_eq!(code_for_status(Status::Ok), 200);
        assert_eq!(code_for_status(Status::NotFound), 404);
        assert_eq!(code_for_status(Status::Error), 500);
        assert_eq!(code_for_status(Status::UnexpectedState), 500);
        assert_eq!(code_for_status(Status::NotImplemented), 501);
        assert_eq!(code_for_status(Status::ServiceUnavailable), 503);
    }

    #[test]
    fn config_reads_properties() {
        let p = Properties::new()
            .with("serve.http.table", "t2")
            .with("serve.http.maxbody", "10");
        let c = ServerConfig::from_properties(&p, &HTTP).unwrap();
        assert_eq!((c.table.as_str(), c.max_message), ("t2", 10));
        assert_eq!(
            ServerConfig::from_properties(&Properties::new(), &HTTP).unwrap(),
            ServerConfig::default()
        );
        assert!(ServerConfig::from_properties(
            &Properties::new().with("serve.http.table", ""),
            &HTTP
        )
        .is_err());
    }
}
