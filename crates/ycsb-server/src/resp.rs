//! Serves a store over RESP, the Redis protocol: the commands the `redis`
//! store uses, plus what `redis-cli` and `redis-benchmark -t set,get` need,
//! so that an engine can be measured embedded and over TCP side by side.
//!
//! Every key lives in one table of the store ([`ServerConfig::table`]).
//! Commands map onto store operations:
//!
//! | command | store call | reply |
//! |---|---|---|
//! | `HMSET key f v ...`, `HSET key f v ...` | update (insert when `NOT_FOUND`) | `+OK`; `HSET`: the number of pairs given (all counted as new) |
//! | `HGETALL key` | read all fields | field/value pairs, empty when missing |
//! | `HMGET key f ...`, `HGET key f` | read all fields, then pick | values, nil where missing |
//! | `SET key value` | insert a record with one field `value` | `+OK` |
//! | `GET key` | read | the `value` field; `-WRONGTYPE` for other records |
//! | `DEL key ...`, `EXISTS key ...` | delete / read each | how many were `OK` |
//! | `ZADD key score member ...` | nothing | the number of members |
//! | `ZREM key member ...` | nothing | `0` |
//! | `ZRANGEBYLEX key min + LIMIT offset count` | scan from `min` | the keys |
//!
//! The scan index: the engine's records are already ordered by key, so the
//! sorted set the redis store keeps for scans is not stored at all. `ZADD`
//! and `ZREM` (on any key) succeed without effect, and `ZRANGEBYLEX` with
//! an inclusive (`[key`), exclusive (`(key`) or open (`-`) start and an
//! open end (`+`) is the engine's ordered scan, returning record keys.
//! That is exactly the redis store's `redis.index=lex` layout, which is
//! the one to use against this server. `ZRANGEBYSCORE` (Java's layout,
//! keyed by hash codes) has no equivalent and is answered with an error.
//!
//! With a password ([`ServerConfig::password`], `serve.password`),
//! a client must send `AUTH <password>` (or Redis 6's `AUTH default
//! <password>`) first: until then every command but `AUTH` and `QUIT` is
//! answered `-NOAUTH Authentication required.`, and a wrong password
//! `-WRONGPASS invalid username-password pair or user is disabled.`, as
//! Redis answers with `requirepass`.
//!
//! Also answered: `PING`, `ECHO`, `SELECT 0`, `QUIT`, `INFO` (a version
//! line), `COMMAND` (an empty list), `CONFIG GET` (`save` and `appendonly`,
//! for `redis-benchmark`), `CLIENT` (`+OK`). Anything else is
//! `-ERR unknown command`. Inline commands (plain text lines) are accepted
//! as Redis accepts them.
//!
//! Each connection is served by its own thread with its own
//! [`StoreThread`]; pipelined commands are answered with one write per
//! batch read from the socket (or sooner, once 64 KiB of replies are
//! pending), and a connection's buffers are reused, so serving a command
//! allocates nothing once they have grown.
//!
//! # Limits
//!
//! What a client sends cannot make the server hold more than the limits
//! below ([`ServerConfig`], from the `serve.resp.*` properties):
//!
//! - input is buffered as it arrives, never reserved from a declared
//!   length; a bulk string declared longer than `serve.resp.maxbulk` is
//!   answered `-ERR Protocol error: ...` before its bytes arrive, and the
//!   connection closed;
//! - the input all connections hold together (their read buffers, with
//!   any partial command) is bounded by `serve.resp.maxbuffered`: a
//!   connection that would go over it is answered `-ERR ...` and closed;
//! - replies are written as they are produced: pending output is written
//!   once it passes 64 KiB, so a pipeline of large reads left unread
//!   costs a few socket buffers, not the sum of its replies;
//! - at most `serve.resp.maxconnections` connections are served at once;
//!   one more is answered `-ERR max number of clients reached` and closed;
//! - a connection that completes no command for `serve.resp.timeout`
//!   seconds (idle, or sending one too slowly: about twice that at most)
//!   is closed, and so is one whose client takes as long to accept a
//!   write of its replies.
//!
//! [`crate::ServerHandle::stop`] (what `ycsb serve` does on SIGTERM or
//! Ctrl-C) returns within a few seconds even while a client never reads
//! its replies; see [`crate::ServerHandle::stop`].

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, SocketAddrV4};
use std::time::Duration;

use crate::auth::Password;
use crate::limits::{linger, timed_out, Budget, Charge, Timed};
pub use crate::listener::ServeError;
use crate::listener::{ConfigProperties, Protocol, ServerConfig};
use ycsb_db::{
    Fields, Property, PropertyDecl, Record, ScanOp, ScanResult, Status, StoreError, StoreThread,
};
use ycsb_redis::resp::{self as wire, Token, Tokens};

/// Where `ycsb serve` listens for RESP unless told otherwise: loopback
/// only, Redis's port.
pub const DEFAULT_ADDR: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 6379));

/// `serve.resp.table`: the table every key lives in.
pub const TABLE: Property<String> = Property::new(
    "serve.resp.table",
    "usertable",
    "Table of the served store that RESP keys are read from and written to.",
);

/// `serve.resp.maxbulk`: the longest bulk string (one argument) accepted.
pub const MAX_BULK: Property<usize> = Property::new(
    "serve.resp.maxbulk",
    "67108864",
    "Longest RESP bulk string (one command argument) in bytes the RESP server accepts; a longer one is answered -ERR as soon as its length is read, before its bytes arrive, and the connection closed.",
);
/// `serve.resp.maxbuffered`: the input all connections may hold together.
pub const MAX_BUFFERED: Property<usize> = Property::new(
    "serve.resp.maxbuffered",
    "268435456",
    "Most bytes of client input (read buffers with partial commands) all RESP connections may hold together; a connection that would need more is answered -ERR and closed. Input is buffered as it arrives, never reserved from a declared length.",
);
/// `serve.resp.maxconnections`: the most connections served at once.
pub const MAX_CONNECTIONS: Property<usize> = Property::new(
    "serve.resp.maxconnections",
    "512",
    "Most RESP connections served at once (one thread each); one more is answered -ERR max number of clients reached and closed.",
);
/// `serve.resp.timeout`: how long a client may be idle or slow.
pub const TIMEOUT: Property<Duration> = Property::new(
    "serve.resp.timeout",
    "300",
    "Seconds a RESP connection may go without completing a command (idle, or sending one too slowly), or take to accept a write of its replies, before it is closed; 0 waits forever.",
);

/// The RESP protocol, for [`crate::serve`] and
/// [`ServerConfig::from_properties`] ([`ServerConfig::max_message`] is
/// the longest bulk string).
pub const RESP: Protocol = Protocol {
    name: "RESP",
    refusal: REFUSAL,
    serve: serve_connection,
    properties: ConfigProperties {
        table: &TABLE,
        max_message: &MAX_BULK,
        max_buffered: &MAX_BUFFERED,
        max_connections: &MAX_CONNECTIONS,
        timeout: &TIMEOUT,
    },
};

/// Every property of the RESP server.
pub const PROPERTIES: &[&PropertyDecl] = &[
    TABLE.decl(),
    MAX_BULK.decl(),
    MAX_BUFFERED.decl(),
    MAX_CONNECTIONS.decl(),
    TIMEOUT.decl(),
];

/// The name of the single field that `SET` writes and `GET` reads.
pub const VALUE_FIELD: &str = "value";

/// The longest inline command line accepted.
const MAX_INLINE: usize = 64 << 10;
/// The first size of a connection's read buffer, and the least it grows
/// by when a command does not fit.
const READ_CHUNK: usize = 16 << 10;
/// The most a read buffer grows by at once: it grows as input arrives.
const MAX_GROWTH: usize = 1 << 20;
/// A read buffer larger than this goes back to [`READ_CHUNK`] once the
/// command that needed it is done.
const SHRINK_ABOVE: usize = 1 << 20;
/// Pending replies are written once they pass this many bytes.
const FLUSH_AT: usize = 64 << 10;
/// An output buffer whose capacity grew past this (one large reply) is
/// given back once written.
const MAX_IDLE_OUT: usize = 1 << 20;
/// The error for a connection over [`MAX_CONNECTIONS`] (Redis's words).
const REFUSAL: &[u8] = b"-ERR max number of clients reached\r\n";

/// One connection's state apart from its read buffer.
struct Session<'s> {
    thread: Box<dyn StoreThread + 's>,
    table: &'s str,
    /// The password the client must give with `AUTH`, if any.
    password: Option<&'s Password>,
    /// Whether the client may run commands: it gave the password, or none
    /// is needed.
    authenticated: bool,
    out: Vec<u8>,
    record: Record,
    scan: ScanResult,
}

fn serve_connection(
    thread: Result<Box<dyn StoreThread + '_>, StoreError>,
    mut stream: Timed,
    config: &ServerConfig,
    budget: &Budget,
) {
    let thread = match thread {
        Ok(t) => t,
        Err(e) => {
            fail(
                &mut stream,
                &mut Vec::new(),
                &format!("ERR cannot open the store: {e}"),
            );
            return;
        }
    };
    let mut session = Session {
        thread,
        table: &config.table,
        password: config.password.as_ref(),
        authenticated: config.password.is_none(),
        out: Vec::with_capacity(4096),
        record: Record::new(),
        scan: ScanResult::new(),
    };
    let mut charge = Charge::new(budget);
    let over_budget = format!(
        "ERR ycsb serve: the input all connections hold would pass serve.resp.maxbuffered ({} bytes)",
        budget.limit()
    );
    let mut buf = Vec::new();
    if charge.hold(READ_CHUNK) {
        buf.resize(READ_CHUNK, 0);
        serve_commands(
            &mut stream,
            &mut session,
            &mut buf,
            &mut charge,
            config,
            &over_budget,
        );
    } else {
        fail(&mut stream, &mut session.out, &over_budget);
    }
    let _ = session.thread.cleanup();
    // The handle keeps a clone of the stream until the next accept: shut
    // the socket down so that the client sees the connection end now.
    let _ = stream.stream.shutdown(Shutdown::Both);
}

/// Reads, runs and answers commands until the client leaves, quits, errs
/// or passes a limit. `buf` is the read buffer, `charge` what it holds of
/// the server's budget.
fn serve_commands(
    stream: &mut Timed,
    session: &mut Session<'_>,
    buf: &mut Vec<u8>,
    charge: &mut Charge<'_>,
    config: &ServerConfig,
    over_budget: &str,
) {
    let mut len = 0;
    let mut args: Vec<(usize, usize)> = Vec::new();
    loop {
        let mut pos = 0;
        while pos < len {
            match parse_command(&buf[pos..len], &mut args) {
                Ok(Some(used)) => {
                    let quit = session.execute(&buf[pos..pos + used], &args);
                    pos += used;
                    if quit {
                        let _ = stream.write_all(&session.out);
                        return;
                    }
                    // Replies are written as they are produced, not
                    // gathered for a whole pipeline.
                    if session.out.len() >= FLUSH_AT {
                        if stream.write_all(&session.out).is_err() {
                            return;
                        }
                        session.out.clear();
                    }
                }
                Ok(None) => {
                    if let Err(e) = check_pending(&buf[pos..len], config.max_message) {
                        return fail(
                            stream,
                            &mut session.out,
                            &format!("ERR Protocol error: {e}"),
                        );
                    }
                    break;
                }
                Err(e) => {
                    return fail(
                        stream,
                        &mut session.out,
                        &format!("ERR Protocol error: {e}"),
                    );
                }
            }
        }
        if pos > 0 {
            buf.copy_within(pos..len, 0);
            len -= pos;
            // A new command may start: its time counts from its first byte.
            stream.rearm();
        }
        if !session.out.is_empty() {
            if stream.write_all(&session.out).is_err() {
                return;
            }
            session.out.clear();
        }
        if session.out.capacity() > MAX_IDLE_OUT {
            session.out = Vec::with_capacity(4096);
        }
        if len <= READ_CHUNK && buf.len() > SHRINK_ABOVE {
            buf.truncate(READ_CHUNK);
            buf.shrink_to_fit();
            charge.hold(READ_CHUNK);
        }
        if len == buf.len() {
            // Grow by what is likely to arrive, never by a declared length:
            // memory follows the input, within the shared budget.
            let size = len + len.clamp(READ_CHUNK, MAX_GROWTH);
            if !charge.hold(size) {
                return fail(stream, &mut session.out, over_budget);
            }
            buf.resize(size, 0);
        }
        match stream.read(&mut buf[len..]) {
            Ok(0) => return,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if timed_out(&e) && len > 0 => {
                return fail(
                    stream,
                    &mut session.out,
                    "ERR ycsb serve: command not complete in time (serve.resp.timeout)",
                );
            }
            Err(_) => return,
        }
    }
}

/// Answers with an error after what is pending, and closes.
fn fail(stream: &mut Timed, out: &mut Vec<u8>, message: &str) {
    wire::write_error(out, message);
    let _ = stream.write_all(out);
    out.clear();
    linger(&mut stream.stream);
}

/// Checks the bulk strings an incomplete command declares so far, so that
/// one over `max_bulk` is refused before its bytes arrive. Malformed
/// headers are left to the parser.
fn check_pending(buf: &[u8], max_bulk: usize) -> Result<(), String> {
    if buf.first() != Some(&b'*') {
        return Ok(());
    }
    let mut at = 0usize;
    while let Some(&kind) = buf.get(at) {
        let Some(newline) = buf[at..].iter().take(32).position(|&b| b == b'\n') else {
            return Ok(());
        };
        let text = &buf[at + 1..at + newline];
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let next = at + newline + 1;
        at = match (kind, wire::parse_integer(text)) {
            (b'$', Some(n)) if n > 0 => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                if n > max_bulk {
                    return Err(format!(
                        "bulk string of {n} bytes is over serve.resp.maxbulk ({max_bulk})"
                    ));
                }
                next.saturating_add(n).saturating_add(2)
            }
            (b'$' | b'*', Some(_)) => next,
            _ => return Ok(()),
        };
    }
    Ok(())
}

/// Parses one command at the start of `buf` into argument ranges; the
/// bytes it used, or `None` when the command is not complete yet.
fn parse_command(buf: &[u8], args: &mut Vec<(usize, usize)>) -> Result<Option<usize>, String> {
    args.clear();
    if buf.first() == Some(&b'*') {
        let Some(used) = wire::value_len(buf, 0).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        let mut tokens = Tokens::new(&buf[..used]);
        let count = match tokens.next_token().map_err(|e| e.to_string())? {
            Some(Token::Array(Some(n))) => n,
            _ => 0,
        };
        for _ in 0..count {
            let offset = tokens.position();
            match tokens.next_token().map_err(|e| e.to_string())? {
                Some(Token::Bulk(Some(arg))) => {
                    let start = arg.as_ptr() as usize - buf.as_ptr() as usize;
                    args.push((start, start + arg.len()));
                }
                _ => return Err(format!("expected a bulk string argument at byte {offset}")),
            }
        }
        return Ok(Some(used));
    }
    // An inline command: one line of space-separated words.
    let Some(newline) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > MAX_INLINE {
            return Err("inline command too long".into());
        }
        return Ok(None);
    };
    let mut start = None;
    for (i, &b) in buf[..newline].iter().enumerate() {
        let space = b == b' ' || b == b'\t' || b == b'\r';
        match (space, start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                args.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        args.push((s, newline));
    }
    Ok(Some(newline + 1))
}

fn utf8(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

impl Session<'_> {
    fn error(&mut self, message: &str) {
        wire::write_error(&mut self.out, message);
    }

    fn store_error(&mut self, status: Status) {
        wire::write_error(&mut self.out, &format!("ERR store answered {status}"));
    }

    fn wrong_args(&mut self, name: &[u8]) {
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        self.error(&format!(
            "ERR wrong number of arguments for '{name}' command"
        ));
    }

    /// Runs one command, appending its reply; whether to close the
    /// connection.
    fn execute(&mut self, buf: &[u8], ranges: &[(usize, usize)]) -> bool {
        let arg = |i: usize| &buf[ranges[i].0..ranges[i].1];
        let Some(&(s, e)) = ranges.first() else {
            return false;
        };
        let name = &buf[s..e];
        let n = ranges.len();
        let is = |cmd: &str| name.eq_ignore_ascii_case(cmd.as_bytes());
        if is("AUTH") {
            self.auth(buf, &ranges[1..]);
            return false;
        }
        // Redis's rule with requirepass: nothing but AUTH, HELLO and QUIT
        // before the password (HELLO is not served: it is answered as an
        // unknown command, which runs nothing).
        if !(self.authenticated || is("QUIT") || is("HELLO")) {
            self.error("NOAUTH Authentication required.");
            return false;
        }
        // Keys are text in the store API; other arguments (ECHO's) need not be.
        let keyed = ["GET", "SET", "HMSET", "HSET", "HGETALL", "HMGET", "HGET"]
            .iter()
            .any(|c| is(c));
        let key = match (n > 1).then(|| utf8(arg(1))).flatten() {
            Some(key) => key,
            None if keyed && n > 1 => {
                self.error("ERR keys must be UTF-8 text");
                return false;
            }
            None => "",
        };
        if !self.data_command(name, key, buf, ranges) {
            return self.server_command(name, buf, ranges);
        }
        false
    }

    /// The commands on records (GET, SET, the hash and sorted-set
    /// commands, DEL, EXISTS), their reply appended; whether `name` was
    /// one of them.
    fn data_command(
        &mut self,
        name: &[u8],
        key: &str,
        buf: &[u8],
        ranges: &[(usize, usize)],
    ) -> bool {
        let arg = |i: usize| &buf[ranges[i].0..ranges[i].1];
        let n = ranges.len();
        let is = |cmd: &str| name.eq_ignore_ascii_case(cmd.as_bytes());
        if is("GET") {
            if n != 2 {
                self.wrong_args(name);
            } else {
                self.get(key);
            }
        } else if is("SET") {
            if n != 3 {
                self.wrong_args(name);
            } else {
                self.record.clear();
                self.record.push(VALUE_FIELD, arg(2));
                match self.thread.insert(self.table, key, &self.record) {
                    Status::Ok | Status::BatchedOk => wire::write_simple(&mut self.out, "OK"),
                    status => self.store_error(status),
                }
            }
        } else if is("HMSET") || is("HSET") {
            if n < 4 || !n.is_multiple_of(2) {
                self.wrong_args(name);
            } else {
                self.hset(key, buf, &ranges[2..], is("HSET"));
            }
        } else if is("HGETALL") {
            if n != 2 {
                self.wrong_args(name);
            } else {
                self.hgetall(key);
            }
        } else if is("HMGET") || is("HGET") {
            if n < 3 || (is("HGET") && n != 3) {
                self.wrong_args(name);
            } else {
                self.hmget(key, buf, &ranges[2..], is("HGET"));
            }
        } else if is("DEL") || is("EXISTS") {
            if n < 2 {
                self.wrong_args(name);
            } else {
                self.count_keys(buf, &ranges[1..], is("DEL"));
            }
        } else if is("ZADD") {
            if n < 4 {
                self.wrong_args(name);
            } else {
                wire::write_integer(&mut self.out, ((n - 2) / 2) as i64);
            }
        } else if is("ZREM") {
            if n < 3 {
                self.wrong_args(name);
            } else {
                wire::write_integer(&mut self.out, 0);
            }
        } else if is("ZRANGEBYLEX") {
            self.zrangebylex(buf, ranges);
        } else if is("ZRANGEBYSCORE") {
            self.error(
                "ERR ycsb serve keeps no score index: scan in key order with ZRANGEBYLEX \
                 (the redis store's redis.index=lex)",
            );
        } else {
            return false;
        }
        true
    }

    /// The connection and server commands (PING, ECHO, SELECT, QUIT,
    /// COMMAND, CLIENT, CONFIG GET, INFO), or the unknown-command error;
    /// whether to close the connection.
    fn server_command(&mut self, name: &[u8], buf: &[u8], ranges: &[(usize, usize)]) -> bool {
        let arg = |i: usize| &buf[ranges[i].0..ranges[i].1];
        let n = ranges.len();
        let is = |cmd: &str| name.eq_ignore_ascii_case(cmd.as_bytes());
        if is("PING") {
            match n {
                1 => wire::write_simple(&mut self.out, "PONG"),
                2 => wire::write_bulk(&mut self.out, arg(1)),
                _ => self.wrong_args(name),
            }
        } else if is("ECHO") {
            if n != 2 {
                self.wrong_args(name);
            } else {
                wire::write_bulk(&mut self.out, arg(1));
            }
        } else if is("SELECT") {
            if n != 2 {
                self.wrong_args(name);
            } else if arg(1) == b"0" {
                wire::write_simple(&mut self.out, "OK");
            } else {
                self.error("ERR DB index is out of range");
            }
        } else if is("QUIT") {
            wire::write_simple(&mut self.out, "OK");
            return true;
        } else if is("COMMAND") {
            wire::write_array_header(&mut self.out, 0);
        } else if is("CLIENT") {
            wire::write_simple(&mut self.out, "OK");
        } else if is("CONFIG") {
            if n == 3 && arg(1).eq_ignore_ascii_case(b"GET") {
                let wanted = arg(2);
                let known: &[(&[u8], &[u8])] = &[(b"save", b""), (b"appendonly", b"no")];
                let hits = known.iter().filter(|(k, _)| pattern_matches(wanted, k));
                wire::write_array_header(&mut self.out, 2 * hits.clone().count());
                for (k, v) in hits {
                    wire::write_bulk(&mut self.out, k);
                    wire::write_bulk(&mut self.out, v);
                }
            } else {
                self.error("ERR ycsb serve supports only CONFIG GET");
            }
        } else if is("INFO") {
            let text = concat!(
                "# Server\r\nredis_version:ycsb-serve-",
                env!("CARGO_PKG_VERSION"),
                "\r\nredis_mode:standalone\r\n"
            );
            wire::write_bulk(&mut self.out, text.as_bytes());
        } else {
            let shown = String::from_utf8_lossy(&name[..name.len().min(128)]).into_owned();
            self.error(&format!("ERR unknown command '{shown}'"));
        }
        false
    }

    /// `AUTH <password>` or `AUTH <user> <password>`, as Redis 6 answers
    /// them: the only user is `default`, whose password is the server's
    /// (without one, `default` takes any password, as Redis's `nopass`).
    /// A refused `AUTH` leaves the connection as it was.
    fn auth(&mut self, buf: &[u8], args: &[(usize, usize)]) {
        let arg = |i: usize| &buf[args[i].0..args[i].1];
        let (user, given) = match args.len() {
            1 => (None, arg(0)),
            2 => (Some(arg(0)), arg(1)),
            0 => return self.wrong_args(b"auth"),
            _ => return self.error("ERR syntax error"),
        };
        let accepted = match (self.password, user) {
            (None, None) => {
                return self.error(
                    "ERR AUTH <password> called without any password configured for the \
                     default user. Are you sure your configuration is correct?",
                )
            }
            (None, Some(user)) => user == b"default",
            (Some(password), user) => {
                // The password is compared whatever the user, so that the
                // time taken does not tell a wrong user from a wrong
                // password.
                let matches = password.matches(given);
                matches && user.is_none_or(|u| u == b"default")
            }
        };
        if accepted {
            self.authenticated = true;
            wire::write_simple(&mut self.out, "OK");
        } else {
            self.error("WRONGPASS invalid username-password pair or user is disabled.");
        }
    }

    fn get(&mut self, key: &str) {
        match crate::read_whole_record(&mut *self.thread, self.table, key, &mut self.record) {
            Status::Ok => {
                let single = (self.record.len() == 1)
                    .then(|| self.record.field(0))
                    .flatten()
                    .filter(|f| f.name == VALUE_FIELD);
                match single {
                    Some(field) => wire::write_bulk(&mut self.out, field.value),
                    None => wire::write_error(
                        &mut self.out,
                        "WRONGTYPE Operation against a key holding the wrong kind of value",
                    ),
                }
            }
            Status::NotFound => wire::write_null(&mut self.out),
            status => self.store_error(status),
        }
    }

    fn hset(&mut self, key: &str, buf: &[u8], pairs: &[(usize, usize)], count: bool) {
        self.record.clear();
        for pair in pairs.chunks_exact(2) {
            let Some(field) = utf8(&buf[pair[0].0..pair[0].1]) else {
                self.error("ERR field names must be UTF-8 text");
                return;
            };
            self.record.push(field, &buf[pair[1].0..pair[1].1]);
        }
        let mut status = self.thread.update(self.table, key, &self.record);
        if status == Status::NotFound {
            status = self.thread.insert(self.table, key, &self.record);
        }
        match status {
            Status::Ok | Status::BatchedOk if count => {
                wire::write_integer(&mut self.out, (pairs.len() / 2) as i64)
            }
            Status::Ok | Status::BatchedOk => wire::write_simple(&mut self.out, "OK"),
            status => self.store_error(status),
        }
    }

    fn hgetall(&mut self, key: &str) {
        match crate::read_whole_record(&mut *self.thread, self.table, key, &mut self.record) {
            Status::Ok | Status::NotFound => {
                wire::write_array_header(&mut self.out, 2 * self.record.len());
                for field in self.record.iter() {
                    wire::write_bulk(&mut self.out, field.name.as_bytes());
                    wire::write_bulk(&mut self.out, field.value);
                }
            }
            status => self.store_error(status),
        }
    }

    fn hmget(&mut self, key: &str, buf: &[u8], names: &[(usize, usize)], single: bool) {
        match crate::read_whole_record(&mut *self.thread, self.table, key, &mut self.record) {
            Status::Ok | Status::NotFound => {
                if !single {
                    wire::write_array_header(&mut self.out, names.len());
                }
                for &(s, e) in names {
                    let value = utf8(&buf[s..e]).and_then(|name| self.record.get(name));
                    match value {
                        Some(v) => wire::write_bulk(&mut self.out, v),
                        None => wire::write_null(&mut self.out),
                    }
                }
            }
            status => self.store_error(status),
        }
    }

    fn count_keys(&mut self, buf: &[u8], keys: &[(usize, usize)], delete: bool) {
        let mut count = 0;
        for &(s, e) in keys {
            let Some(key) = utf8(&buf[s..e]) else {
                continue;
            };
            let status = if delete {
                self.thread.delete(self.table, key)
            } else {
                crate::read_whole_record(&mut *self.thread, self.table, key, &mut self.record)
            };
            match status {
                Status::Ok | Status::BatchedOk => count += 1,
                Status::NotFound => {}
                status => return self.store_error(status),
            }
        }
        wire::write_integer(&mut self.out, count);
    }

    /// `ZRANGEBYLEX key min + [LIMIT offset count]` as a scan.
    fn zrangebylex(&mut self, buf: &[u8], ranges: &[(usize, usize)]) {
        let arg = |i: usize| &buf[ranges[i].0..ranges[i].1];
        let n = ranges.len();
        if n != 4 && n != 7 {
            return self.wrong_args(b"zrangebylex");
        }
        if arg(3) != b"+" {
            return self.error("ERR ycsb serve scans only to the end ('+' as max)");
        }
        let (start, exclusive) = match arg(2).split_first() {
            Some((b'[', rest)) => (rest, false),
            Some((b'(', rest)) => (rest, true),
            _ if arg(2) == b"-" => (&b""[..], false),
            _ => return self.error("ERR min or max not valid string range item"),
        };
        let Some(start) = utf8(start) else {
            return self.error("ERR keys must be UTF-8 text");
        };
        if n != 7 || !arg(4).eq_ignore_ascii_case(b"LIMIT") {
            return self.error("ERR ycsb serve needs LIMIT <offset> <count> for ZRANGEBYLEX");
        }
        let (Some(offset), Some(count)) =
            (wire::parse_integer(arg(5)), wire::parse_integer(arg(6)))
        else {
            return self.error("ERR value is not an integer or out of range");
        };
        if offset < 0 || count < 0 {
            return self.error("ERR ycsb serve needs a non-negative LIMIT offset and count");
        }
        let (offset, count) = (offset as usize, count as usize);
        let wanted = offset
            .saturating_add(count)
            .saturating_add(usize::from(exclusive));
        self.scan.clear();
        match self.thread.scan(
            &ScanOp {
                table: self.table,
                start_key: start,
                count: wanted,
                fields: Fields::All,
            },
            &mut self.scan,
        ) {
            Status::Ok => {}
            status => return self.store_error(status),
        }
        let skip_first = exclusive && self.scan.iter().next().is_some_and(|(k, _)| k == start);
        let keys = self
            .scan
            .iter()
            .skip(usize::from(skip_first) + offset)
            .take(count);
        wire::write_array_header(&mut self.out, keys.len());
        for (k, _) in keys {
            wire::write_bulk(&mut self.out, k.as_bytes());
        }
    }
}

/// Whether a `CONFIG GET` pattern (`*` and `?` wildcards) matches `name`.
fn pattern_matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|i| pattern_matches(rest, &name[i..])),
        Some((&p, rest)) => match name.split_first() {
            Some((&c, tail)) if p == b'?' || p.eq_ignore_ascii_case(&c) => {
                pattern_matches(rest, tail)
            }
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ycsb_db::Properties;

    fn parsed(buf: &[u8]) -> Option<(usize, Vec<&[u8]>)> {
        let mut args = Vec::new();
        let used = parse_command(buf, &mut args).unwrap()?;
        Some((used, args.iter().map(|&(s, e)| &buf[s..e]).collect()))
    }

    #[test]
    fn parses_array_and_inline_commands() {
        let (used, args) = parsed(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n").unwrap();
        assert_eq!(used, 20);
        assert_eq!(args, vec![&b"GET"[..], b"k"]);
        let (used, args) = parsed(b"  set  a b\r\nrest").unwrap();
        assert_eq!(used, 12);
        assert_eq!(args, vec![&b"set"[..], b"a", b"b"]);
        assert_eq!(parsed(b"*2\r\n$3\r\nGET\r\n$1\r\n"), None);
        assert_eq!(parsed(b"PIN"), None);
        let mut args = Vec::new();
        assert!(parse_command(b"*1\r\n:1\r\n", &mut args).is_err());
        assert!(parse_command(b"*1\r\n$x\r\n", &mut args).is_err());
    }

    #[test]
    fn pending_bulk_lengths_are_checked_before_the_bytes() {
        assert!(check_pending(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\n", 100).is_ok());
        let e = check_pending(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$101\r\nxx", 100).unwrap_err();
        assert!(e.contains("101 bytes"), "{e}");
        assert!(check_pending(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10", 100).is_ok());
        assert!(check_pending(b"PING", 0).is_ok());
    }

    #[test]
    fn config_reads_properties() {
        let p = Properties::new()
            .with("serve.resp.maxbulk", "10")
            .with("serve.resp.maxbuffered", "20")
            .with("serve.resp.maxconnections", "3")
            .with("serve.resp.timeout", "1.5");
        let c = ServerConfig::from_properties(&p, &RESP).unwrap();
        assert_eq!(
            (c.max_message, c.max_buffered, c.max_connections, c.timeout),
            (10, 20, 3, Duration::from_millis(1500))
        );
        assert_eq!(
            ServerConfig::from_properties(&Properties::new(), &RESP).unwrap(),
            ServerConfig::default()
        );
        for bad in ["serve.resp.maxconnections", "serve.resp.maxbuffered"] {
            assert!(
                ServerConfig::from_properties(&Properties::new().with(bad, "0"), &RESP).is_err()
            );
        }
    }

    #[test]
    fn config_patterns() {
        assert!(pattern_matches(b"save", b"save"));
        assert!(pattern_matches(b"*", b"appendonly"));
        assert!(pattern_matches(b"append*", b"appendonly"));
        assert!(pattern_matches(b"s?ve", b"SAVE"));
        assert!(!pattern_matches(b"sav", b"save"));
    }
}
