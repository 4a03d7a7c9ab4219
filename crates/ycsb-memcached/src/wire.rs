//! One connection to a memcached server, speaking its text or its binary
//! protocol: the few commands the binding needs (`get`/`gets`, `add`,
//! `replace`, `cas`, `delete`, `version`, `stats`), over buffers reused
//! from one operation to the next.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

ycsb_db::choice_property! {
    /// The protocol spoken to the servers (`memcached.protocol`).
    pub enum WireProtocol {
        /// The text protocol (spymemcached's and Java's default).
        Text = "text",
        /// The binary protocol.
        Binary = "binary",
    }
}

/// Why a command failed.
#[derive(Debug)]
pub(crate) enum WireError {
    /// The connection failed (refused, reset, closed, timed out): the
    /// server may be down; the connection is unusable.
    Io(io::Error),
    /// The server answered something this client cannot follow; the
    /// connection is unusable.
    Protocol(String),
    /// The server refused the command (`SERVER_ERROR ...`, a binary error
    /// status); the connection is still good.
    Server(String),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Io(e) => write!(f, "{e}"),
            WireError::Protocol(m) => write!(f, "unexpected reply: {m}"),
            WireError::Server(m) => write!(f, "the server answered {m}"),
        }
    }
}

impl From<io::Error> for WireError {
    fn from(e: io::Error) -> Self {
        WireError::Io(e)
    }
}

/// A storage command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Storage {
    /// Store only if the key holds nothing (an insert).
    Add,
    /// Store only if the key holds something (Java's update).
    Replace,
    /// Store only if the item is unchanged since `gets` gave this CAS
    /// value (a merged update).
    Cas(u64),
}

/// A storage or delete command's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Stored (or deleted).
    Done,
    /// Not stored: `add` of a key that holds something, `replace` of one
    /// that holds nothing.
    NotStored,
    /// `cas` of an item changed since its `gets`.
    Exists,
    /// `cas` or `delete` of a key that holds nothing.
    NotFound,
}

/// What a get found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Item {
    /// The item's client flags.
    pub flags: u32,
    /// Its CAS value (0 when not asked for in the text protocol).
    pub cas: u64,
}

const MAGIC_REQUEST: u8 = 0x80;
const MAGIC_RESPONSE: u8 = 0x81;
const OP_GET: u8 = 0x00;
const OP_SET: u8 = 0x01;
const OP_ADD: u8 = 0x02;
const OP_REPLACE: u8 = 0x03;
const OP_DELETE: u8 = 0x04;
const OP_NOOP: u8 = 0x0a;
const OP_VERSION: u8 = 0x0b;
const OP_STAT: u8 = 0x10;
/// Added to a storage or delete opcode: the quiet form, answered only on
/// failure.
const QUIET: u8 = 0x10;
const STATUS_NOT_FOUND: u16 = 0x0001;
const STATUS_EXISTS: u16 = 0x0002;
const STATUS_NOT_STORED: u16 = 0x0005;

/// A connection to one server.
pub(crate) struct Conn {
    reader: BufReader<TcpStream>,
    protocol: WireProtocol,
    request: Vec<u8>,
    line: Vec<u8>,
    /// The binary protocol's request tag: replies to quiet commands that
    /// failed carry earlier tags and are skipped.
    opaque: u32,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("peer", &self.reader.get_ref().peer_addr().ok())
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

/// The addresses `host:port` names.
pub(crate) fn resolve(address: &str) -> io::Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = address.to_socket_addrs()?.collect();
    if addrs.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{address} names no address"),
        ));
    }
    Ok(addrs)
}

impl Conn {
    /// Connects to `address` (`host:port`) within `timeout`, which also
    /// bounds every later read and write.
    pub(crate) fn connect(
        address: &str,
        protocol: WireProtocol,
        timeout: Duration,
        read_buffer: usize,
    ) -> io::Result<Self> {
        let mut last = None;
        for addr in resolve(address)? {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    stream.set_read_timeout(Some(timeout))?;
                    stream.set_write_timeout(Some(timeout))?;
                    return Ok(Self {
                        reader: BufReader::with_capacity(read_buffer, stream),
                        protocol,
                        request: Vec::with_capacity(2048),
                        line: Vec::with_capacity(128),
                        opaque: 0,
                    });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::NotFound)))
    }

    /// Sets how long a read or a write may wait.
    pub(crate) fn set_timeout(&self, timeout: Duration) -> io::Result<()> {
        let stream = self.reader.get_ref();
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))
    }

    fn send(&mut self) -> Result<(), WireError> {
        self.reader.get_mut().write_all(&self.request)?;
        Ok(())
    }

    /// Reads the item at `key` into `value` (cleared first): `None` when
    /// the key holds nothing. With `with_cas` the item's CAS value too.
    pub(crate) fn get(
        &mut self,
        key: &[u8],
        with_cas: bool,
        value: &mut Vec<u8>,
    ) -> Result<Option<Item>, WireError> {
        value.clear();
        match self.protocol {
            WireProtocol::Text => {
                self.request.clear();
                self.request
                    .extend_from_slice(if with_cas { b"gets " } else { b"get " });
                self.request.extend_from_slice(key);
                self.request.extend_from_slice(b"\r\n");
                self.send()?;
                self.read_line()?;
                if self.line == b"END" {
                    return Ok(None);
                }
                let item = self.value_header(key)?;
                let len = item.1;
                value.resize(len, 0);
                self.reader.read_exact(value)?;
                let mut crlf = [0u8; 2];
                self.reader.read_exact(&mut crlf)?;
                self.read_line()?;
                if crlf != *b"\r\n" || self.line != b"END" {
                    return Err(WireError::Protocol(format!(
                        "a value of {len} bytes not followed by END"
                    )));
                }
                Ok(Some(item.0))
            }
            WireProtocol::Binary => {
                let opaque = self.binary_request(OP_GET, &[], key, &[], 0);
                self.send()?;
                let header = self.binary_reply(opaque, value)?;
                match header.status {
                    0 => {
                        if header.extras < 4 || value.len() < usize::from(header.extras) {
                            return Err(WireError::Protocol("a get reply without flags".into()));
                        }
                        let flags = u32::from_be_bytes([value[0], value[1], value[2], value[3]]);
                        value.drain(..usize::from(header.extras));
                        Ok(Some(Item {
                            flags,
                            cas: header.cas,
                        }))
                    }
                    STATUS_NOT_FOUND => {
                        value.clear();
                        Ok(None)
                    }
                    status => Err(binary_error(status, value)),
                }
            }
        }
    }

    /// Whether [`get_many`](Self::get_many) can ask for several keys in
    /// one command (the text protocol's `get k1 k2 ...`).
    pub(crate) fn has_multi_get(&self) -> bool {
        self.protocol == WireProtocol::Text
    }

    /// Text protocol: the items at several keys with one `get k1 k2 ...`
    /// (memcached answers the keys it holds in the order asked, then
    /// `END`). `keys` holds them back to back, key `i` ending at
    /// `ends[i]`; item `i` goes into `items[i]` (`None` when missing) and
    /// its value into `values[i]` (cleared first).
    ///
    /// # Panics
    ///
    /// When `items` or `values` is shorter than `ends`.
    pub(crate) fn get_many(
        &mut self,
        keys: &[u8],
        ends: &[usize],
        items: &mut [Option<Item>],
        values: &mut [Vec<u8>],
    ) -> Result<(), WireError> {
        let key = |i: usize| &keys[if i == 0 { 0 } else { ends[i - 1] }..ends[i]];
        self.request.clear();
        self.request.extend_from_slice(b"get");
        for i in 0..ends.len() {
            self.request.push(b' ');
            self.request.extend_from_slice(key(i));
            items[i] = None;
            values[i].clear();
        }
        self.request.extend_from_slice(b"\r\n");
        self.send()?;
        // The next key asked that an answer can be for: answers come in
        // the order asked, missing keys skipped.
        let mut next = 0;
        loop {
            self.read_line()?;
            if self.line == b"END" {
                return Ok(());
            }
            let named = self.line.split(|&b| b == b' ').nth(1).unwrap_or_default();
            let Some(offset) = (next..ends.len()).position(|i| key(i) == named) else {
                return Err(self.text_error());
            };
            let index = next + offset;
            next = index + 1;
            let (item, len) = self.value_header(key(index))?;
            let value = &mut values[index];
            value.resize(len, 0);
            self.reader.read_exact(value)?;
            let mut crlf = [0u8; 2];
            self.reader.read_exact(&mut crlf)?;
            if crlf != *b"\r\n" {
                return Err(WireError::Protocol(format!(
                    "a value of {len} bytes not followed by CRLF"
                )));
            }
            items[index] = Some(item);
        }
    }

    /// `VALUE <key> <flags> <bytes> [<cas>]`: the item and its length.
    fn value_header(&self, key: &[u8]) -> Result<(Item, usize), WireError> {
        let bad = || {
            let line = String::from_utf8_lossy(&self.line).into_owned();
            if self.line.starts_with(b"SERVER_ERROR") || self.line.starts_with(b"CLIENT_ERROR") {
                WireError::Server(line)
            } else {
                WireError::Protocol(line)
            }
        };
        let mut words = self.line.split(|&b| b == b' ');
        if words.next() != Some(b"VALUE") || words.next() != Some(key) {
            return Err(bad());
        }
        let mut number = || {
            words
                .next()
                .and_then(|w| std::str::from_utf8(w).ok())
                .and_then(|w| w.parse::<u64>().ok())
        };
        let flags = number()
            .and_then(|f| u32::try_from(f).ok())
            .ok_or_else(bad)?;
        let len = number()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(bad)?;
        let cas = number().unwrap_or(0);
        Ok((Item { flags, cas }, len))
    }

    /// Stores `value` at `key` with `flags` and `expiration`. With `quiet`
    /// the server sends no answer (text `noreply`, binary quiet opcodes) and
    /// the outcome is `None`.
    pub(crate) fn store(
        &mut self,
        command: Storage,
        key: &[u8],
        flags: u32,
        expiration: i32,
        value: &[u8],
        quiet: bool,
    ) -> Result<Option<Outcome>, WireError> {
        match self.protocol {
            WireProtocol::Text => {
                self.request.clear();
                let name: &[u8] = match command {
                    Storage::Add => b"add ",
                    Storage::Replace => b"replace ",
                    Storage::Cas(_) => b"cas ",
                };
                self.request.extend_from_slice(name);
                self.request.extend_from_slice(key);
                let _ = write!(self.request, " {flags} {expiration} {}", value.len());
                if let Storage::Cas(cas) = command {
                    let _ = write!(self.request, " {cas}");
                }
                if quiet {
                    self.request.extend_from_slice(b" noreply");
                }
                self.request.extend_from_slice(b"\r\n");
                self.request.extend_from_slice(value);
                self.request.extend_from_slice(b"\r\n");
                if !self.send_text(quiet)? {
                    return Ok(None);
                }
                match self.line.as_slice() {
                    b"STORED" => Ok(Some(Outcome::Done)),
                    b"NOT_STORED" => Ok(Some(Outcome::NotStored)),
                    b"EXISTS" => Ok(Some(Outcome::Exists)),
                    b"NOT_FOUND" => Ok(Some(Outcome::NotFound)),
                    _ => Err(self.text_error()),
                }
            }
            WireProtocol::Binary => {
                let (opcode, cas) = match command {
                    Storage::Add => (OP_ADD, 0),
                    Storage::Replace => (OP_REPLACE, 0),
                    Storage::Cas(cas) => (OP_SET, cas),
                };
                let mut extras = [0u8; 8];
                extras[..4].copy_from_slice(&flags.to_be_bytes());
                extras[4..].copy_from_slice(&expiration.to_be_bytes());
                let opcode = if quiet { opcode + QUIET } else { opcode };
                let opaque = self.binary_request(opcode, &extras, key, value, cas);
                self.send_binary(opaque, quiet)
            }
        }
    }

    /// Deletes the item at `key`; with `quiet`, unanswered.
    pub(crate) fn delete(&mut self, key: &[u8], quiet: bool) -> Result<Option<Outcome>, WireError> {
        match self.protocol {
            WireProtocol::Text => {
                self.request.clear();
                self.request.extend_from_slice(b"delete ");
                self.request.extend_from_slice(key);
                if quiet {
                    self.request.extend_from_slice(b" noreply");
                }
                self.request.extend_from_slice(b"\r\n");
                if !self.send_text(quiet)? {
                    return Ok(None);
                }
                match self.line.as_slice() {
                    b"DELETED" => Ok(Some(Outcome::Done)),
                    b"NOT_FOUND" => Ok(Some(Outcome::NotFound)),
                    _ => Err(self.text_error()),
                }
            }
            WireProtocol::Binary => {
                let opcode = if quiet { OP_DELETE + QUIET } else { OP_DELETE };
                let opaque = self.binary_request(opcode, &[], key, &[], 0);
                self.send_binary(opaque, quiet)
            }
        }
    }

    /// Sends the text request built and, unless `quiet` (no answer comes
    /// then), reads its one-line answer into `self.line`: whether it did.
    fn send_text(&mut self, quiet: bool) -> Result<bool, WireError> {
        self.send()?;
        if quiet {
            return Ok(false);
        }
        self.read_line()?;
        Ok(true)
    }

    /// Sends the binary request built (`opaque`) and, unless `quiet` (no
    /// answer comes then), reads its outcome.
    fn send_binary(&mut self, opaque: u32, quiet: bool) -> Result<Option<Outcome>, WireError> {
        self.send()?;
        if quiet {
            return Ok(None);
        }
        let mut body = Vec::new();
        let header = self.binary_reply(opaque, &mut body)?;
        binary_outcome(header.status, &body).map(Some)
    }

    /// The server's version. Answered after every command sent before it,
    /// so it also waits for unanswered (quiet) writes to be processed.
    pub(crate) fn version(&mut self) -> Result<String, WireError> {
        match self.protocol {
            WireProtocol::Text => {
                self.request.clear();
                self.request.extend_from_slice(b"version\r\n");
                self.send()?;
                self.read_line()?;
                match self.line.strip_prefix(b"VERSION ") {
                    Some(v) => Ok(String::from_utf8_lossy(v).into_owned()),
                    None => Err(self.text_error()),
                }
            }
            WireProtocol::Binary => {
                let opaque = self.binary_request(OP_VERSION, &[], &[], &[], 0);
                self.send()?;
                let mut body = Vec::new();
                let header = self.binary_reply(opaque, &mut body)?;
                if header.status != 0 {
                    return Err(binary_error(header.status, &body));
                }
                Ok(String::from_utf8_lossy(&body).into_owned())
            }
        }
    }

    /// Waits until the server has processed every command sent so far
    /// (binary `noop`, text `version`).
    pub(crate) fn barrier(&mut self) -> Result<(), WireError> {
        match self.protocol {
            WireProtocol::Text => self.version().map(drop),
            WireProtocol::Binary => {
                let opaque = self.binary_request(OP_NOOP, &[], &[], &[], 0);
                self.send()?;
                let mut body = Vec::new();
                let header = self.binary_reply(opaque, &mut body)?;
                if header.status != 0 {
                    return Err(binary_error(header.status, &body));
                }
                Ok(())
            }
        }
    }

    /// The server's general statistics (`stats`), name and value.
    pub(crate) fn stats(&mut self) -> Result<Vec<(String, String)>, WireError> {
        let mut stats = Vec::new();
        match self.protocol {
            WireProtocol::Text => {
                self.request.clear();
                self.request.extend_from_slice(b"stats\r\n");
                self.send()?;
                loop {
                    self.read_line()?;
                    if self.line == b"END" {
                        return Ok(stats);
                    }
                    let text = String::from_utf8_lossy(&self.line);
                    let mut words = text.splitn(3, ' ');
                    match (words.next(), words.next(), words.next()) {
                        (Some("STAT"), Some(name), Some(value)) => {
                            stats.push((name.to_string(), value.to_string()));
                        }
                        _ => return Err(self.text_error()),
                    }
                }
            }
            WireProtocol::Binary => {
                let opaque = self.binary_request(OP_STAT, &[], &[], &[], 0);
                self.send()?;
                let mut body = Vec::new();
                loop {
                    let header = self.binary_reply(opaque, &mut body)?;
                    if header.status != 0 {
                        return Err(binary_error(header.status, &body));
                    }
                    let key_len = usize::from(header.key_len);
                    if key_len == 0 {
                        return Ok(stats);
                    }
                    let (name, value) = body.split_at(key_len.min(body.len()));
                    stats.push((
                        String::from_utf8_lossy(name).into_owned(),
                        String::from_utf8_lossy(value).into_owned(),
                    ));
                }
            }
        }
    }

    /// One reply line, without its CRLF, into `self.line`.
    fn read_line(&mut self) -> Result<(), WireError> {
        self.line.clear();
        let n = self.reader.read_until(b'\n', &mut self.line)?;
        if n == 0 {
            return Err(WireError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )));
        }
        if !self.line.ends_with(b"\r\n") {
            return Err(WireError::Protocol(format!(
                "a line without CRLF: {}",
                self.line.escape_ascii()
            )));
        }
        self.line.truncate(self.line.len() - 2);
        Ok(())
    }

    /// A text reply that is none of the expected ones: the server's error
    /// (the connection is still good), or something unknown.
    fn text_error(&self) -> WireError {
        let line = String::from_utf8_lossy(&self.line).into_owned();
        if line.starts_with("SERVER_ERROR") || line.starts_with("CLIENT_ERROR") || line == "ERROR" {
            WireError::Server(line)
        } else {
            WireError::Protocol(line)
        }
    }

    /// Frames a binary request in `self.request`; returns its tag.
    fn binary_request(
        &mut self,
        opcode: u8,
        extras: &[u8],
        key: &[u8],
        value: &[u8],
        cas: u64,
    ) -> u32 {
        self.opaque = self.opaque.wrapping_add(1);
        let body = extras.len() + key.len() + value.len();
        self.request.clear();
        self.request.push(MAGIC_REQUEST);
        self.request.push(opcode);
        self.request
            .extend_from_slice(&(key.len() as u16).to_be_bytes());
        self.request.push(extras.len() as u8);
        self.request.push(0); // data type
        self.request.extend_from_slice(&[0, 0]); // vbucket
        self.request.extend_from_slice(&(body as u32).to_be_bytes());
        self.request.extend_from_slice(&self.opaque.to_be_bytes());
        self.request.extend_from_slice(&cas.to_be_bytes());
        self.request.extend_from_slice(extras);
        self.request.extend_from_slice(key);
        self.request.extend_from_slice(value);
        self.opaque
    }

    /// The reply tagged `opaque`, its body (extras, key, value) in `body`;
    /// replies to earlier quiet commands (their failures) are skipped.
    fn binary_reply(&mut self, opaque: u32, body: &mut Vec<u8>) -> Result<Header, WireError> {
        loop {
            let mut raw = [0u8; 24];
            self.reader.read_exact(&mut raw)?;
            if raw[0] != MAGIC_RESPONSE {
                return Err(WireError::Protocol(format!(
                    "a binary reply starting with {:#04x}",
                    raw[0]
                )));
            }
            let header = Header {
                key_len: u16::from_be_bytes([raw[2], raw[3]]),
                extras: raw[4],
                status: u16::from_be_bytes([raw[6], raw[7]]),
                opaque: u32::from_be_bytes([raw[12], raw[13], raw[14], raw[15]]),
                cas: u64::from_be_bytes([
                    raw[16], raw[17], raw[18], raw[19], raw[20], raw[21], raw[22], raw[23],
                ]),
            };
            let len = u32::from_be_bytes([raw[8], raw[9], raw[10], raw[11]]) as usize;
            body.clear();
            body.resize(len, 0);
            self.reader.read_exact(body)?;
            if header.opaque == opaque {
                return Ok(header);
            }
        }
    }
}

struct Header {
    key_len: u16,
    extras: u8,
    status: u16,
    opaque: u32,
    cas: u64,
}

fn binary_outcome(status: u16, body: &[u8]) -> Result<Outcome, WireError> {
    match status {
        0 => Ok(Outcome::Done),
        STATUS_NOT_FOUND => Ok(Outcome::NotFound),
        STATUS_EXISTS => Ok(Outcome::Exists),
        STATUS_NOT_STORED => Ok(Outcome::NotStored),
        other => Err(binary_error(other, body)),
    }
}

fn binary_error(status: u16, body: &[u8]) -> WireError {
    WireError::Server(format!(
        "status {status:#06x} ({})",
        String::from_utf8_lossy(body)
    ))
}
