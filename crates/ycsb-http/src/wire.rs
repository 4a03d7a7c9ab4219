//! HTTP/1.1 message framing, shared by the http store (reading responses)
//! and `ycsb serve` (reading requests).
//!
//! Heads are parsed with `httparse` (zero-copy, no allocation); bodies are
//! framed by `Content-Length`, chunked transfer coding or, for responses,
//! the end of the connection. A [`Conn`] keeps one read buffer for the
//! life of a connection so that a keep-alive exchange allocates nothing
//! once the buffers have grown.

use std::io::{self, Read};

/// The most header lines a message may have.
const MAX_HEADERS: usize = 64;
/// The longest chunk-size line accepted.
const MAX_LINE: usize = 4096;
/// The most a body buffer grows by at once while its bytes arrive.
const BODY_STEP: usize = 1 << 20;

/// A message that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The peer closed the connection in the middle of a message.
    #[error("connection closed in the middle of a message")]
    Closed,
    /// Reading or writing the connection failed (including timeouts).
    #[error("connection error: {0}")]
    Io(#[from] io::Error),
    /// The head (start line and headers) is longer than allowed.
    #[error("message head longer than {0} bytes")]
    HeadTooLarge(usize),
    /// The body is longer than allowed.
    #[error("message body longer than {0} bytes")]
    BodyTooLarge(usize),
    /// The message does not follow HTTP/1.1.
    #[error("malformed HTTP message: {0}")]
    Malformed(&'static str),
}

/// How a message's body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body.
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
    /// Everything until the peer closes (responses only).
    UntilClose,
}

/// What the headers of a message say about framing and the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeadInfo {
    /// The `Content-Length`, if given.
    pub content_length: Option<u64>,
    /// Whether the last transfer coding is `chunked`.
    pub chunked: bool,
    /// Whether `Connection: close` was sent.
    pub close: bool,
    /// Whether `Connection: keep-alive` was sent (HTTP/1.0 persistence).
    pub keep_alive: bool,
    /// Whether `Expect: 100-continue` was sent.
    pub expect_continue: bool,
    /// The HTTP minor version (`1` for HTTP/1.1).
    pub minor_version: u8,
}

impl HeadInfo {
    /// Whether the connection stays open after this message.
    pub fn persistent(&self) -> bool {
        if self.minor_version >= 1 {
            !self.close
        } else {
            self.keep_alive && !self.close
        }
    }

    fn from_headers(
        headers: &[httparse::Header<'_>],
        minor_version: u8,
    ) -> Result<Self, WireError> {
        let mut info = HeadInfo {
            minor_version,
            ..HeadInfo::default()
        };
        for h in headers {
            let name = h.name;
            if name.eq_ignore_ascii_case("content-length") {
                let text = std::str::from_utf8(h.value)
                    .map_err(|_| WireError::Malformed("Content-Length is not a number"))?;
                let len: u64 = text
                    .trim()
                    .parse()
                    .map_err(|_| WireError::Malformed("Content-Length is not a number"))?;
                if info.content_length.is_some_and(|l| l != len) {
                    return Err(WireError::Malformed("conflicting Content-Length headers"));
                }
                info.content_length = Some(len);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                let last = h
                    .value
                    .rsplit(|&c| c == b',')
                    .next()
                    .map(trim)
                    .unwrap_or_default();
                if last.eq_ignore_ascii_case(b"chunked") {
                    info.chunked = true;
                } else if !last.eq_ignore_ascii_case(b"identity") {
                    return Err(WireError::Malformed("unsupported Transfer-Encoding"));
                }
            } else if name.eq_ignore_ascii_case("connection") {
                for token in h.value.split(|&c| c == b',').map(trim) {
                    if token.eq_ignore_ascii_case(b"close") {
                        info.close = true;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") {
                        info.keep_alive = true;
                    }
                }
            } else if name.eq_ignore_ascii_case("expect") {
                info.expect_continue = trim(h.value).eq_ignore_ascii_case(b"100-continue");
            }
        }
        Ok(info)
    }
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &bytes[start..end]
}

/// The `Authorization` header of a request. Its `Debug` form never shows
/// the credential.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub enum Authorization<'a> {
    /// No `Authorization` header.
    #[default]
    Absent,
    /// One header, with this value (leading and trailing whitespace
    /// removed).
    Given(&'a [u8]),
    /// More than one: no credential to trust.
    Repeated,
}

impl std::fmt::Debug for Authorization<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Authorization::Absent => "Absent",
            Authorization::Given(_) => "Given(<redacted>)",
            Authorization::Repeated => "Repeated",
        })
    }
}

impl<'a> Authorization<'a> {
    /// The token of a `Bearer` credential (the scheme's name in any case,
    /// RFC 9110), if that is what was given.
    pub fn bearer(&self) -> Option<&'a [u8]> {
        let Authorization::Given(value) = *self else {
            return None;
        };
        let at = value.iter().position(|&c| c == b' ')?;
        let (scheme, rest) = value.split_at(at);
        scheme
            .eq_ignore_ascii_case(b"Bearer")
            .then(|| trim(rest))
            .filter(|token| !token.is_empty())
    }
}

/// The parsed head of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestHead<'a> {
    /// The method, such as `GET`.
    pub method: &'a str,
    /// The request target, such as `/get?key=user1`.
    pub target: &'a str,
    /// Framing and connection facts from the headers.
    pub info: HeadInfo,
    /// The credential sent, if any.
    pub authorization: Authorization<'a>,
}

impl RequestHead<'_> {
    /// How the request's body is delimited.
    pub fn framing(&self) -> Framing {
        if self.info.chunked {
            Framing::Chunked
        } else {
            match self.info.content_length {
                Some(n) => Framing::Length(n),
                None => Framing::Empty,
            }
        }
    }
}

/// Parses a complete request head (as returned by [`Conn::read_head`]).
///
/// # Errors
///
/// [`WireError::Malformed`] when it is not an HTTP/1.x request head.
pub fn parse_request(head: &[u8]) -> Result<RequestHead<'_>, WireError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(WireError::Malformed("incomplete head")),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(WireError::Malformed("too many headers"))
        }
        Err(_) => return Err(WireError::Malformed("invalid request line or header")),
    }
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return Err(WireError::Malformed("incomplete request line"));
    };
    let info = HeadInfo::from_headers(req.headers, version)?;
    let mut authorization = Authorization::Absent;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("authorization") {
            authorization = match authorization {
                Authorization::Absent => Authorization::Given(trim(h.value)),
                _ => Authorization::Repeated,
            };
        }
    }
    Ok(RequestHead {
        method,
        target,
        info,
        authorization,
    })
}

/// The parsed head of a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status code, such as `404`.
    pub status: u16,
    /// Framing and connection facts from the headers.
    pub info: HeadInfo,
}

impl ResponseHead {
    /// How the response's body is delimited; `head_request` tells whether
    /// it answers a `HEAD` request (which never has a body).
    pub fn framing(&self, head_request: bool) -> Framing {
        if head_request || (100..200).contains(&self.status) || matches!(self.status, 204 | 304) {
            Framing::Empty
        } else if self.info.chunked {
            Framing::Chunked
        } else {
            match self.info.content_length {
                Some(n) => Framing::Length(n),
                None => Framing::UntilClose,
            }
        }
    }
}

/// Parses a complete response head.
///
/// # Errors
///
/// [`WireError::Malformed`] when it is not an HTTP/1.x response head.
pub fn parse_response(head: &[u8]) -> Result<ResponseHead, WireError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut res = httparse::Response::new(&mut headers);
    match res.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(WireError::Malformed("incomplete head")),
        Err(_) => return Err(WireError::Malformed("invalid status line or header")),
    }
    let (Some(status), Some(version)) = (res.code, res.version) else {
        return Err(WireError::Malformed("incomplete status line"));
    };
    let info = HeadInfo::from_headers(res.headers, version)?;
    Ok(ResponseHead { status, info })
}

/// A connection with a reusable read buffer.
#[derive(Debug)]
pub struct Conn<S> {
    stream: S,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl<S: Read> Conn<S> {
    /// Wraps `stream`.
    pub fn new(stream: S) -> Self {
        Self {
            stream,
            buf: vec![0; 16 * 1024],
            start: 0,
            end: 0,
        }
    }

    /// The underlying stream, for writing.
    pub fn stream(&mut self) -> &mut S {
        &mut self.stream
    }

    /// Bytes received and not yet consumed.
    pub fn buffered(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Marks `n` buffered bytes as consumed.
    pub fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Reads more bytes into the buffer, making room first; returns how
    /// many arrived (0 at the end of the stream).
    fn fill(&mut self, limit: usize) -> Result<usize, WireError> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                if self.buf.len() >= limit {
                    return Err(WireError::HeadTooLarge(limit));
                }
                let grown = (self.buf.len() * 2).min(limit.max(self.buf.len() + 1));
                self.buf.resize(grown, 0);
            }
        }
        loop {
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(n) => {
                    self.end += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Waits until a whole message head (start line, headers and the empty
    /// line) is buffered and returns its length; it then starts
    /// [`Conn::buffered`]. Empty lines before the start line are skipped.
    /// Returns `Ok(None)` when the peer closed the connection before
    /// sending anything, the normal end of a keep-alive connection.
    ///
    /// # Errors
    ///
    /// [`WireError::HeadTooLarge`] past `limit` bytes,
    /// [`WireError::Closed`] when the peer closed mid-head, and I/O errors.
    pub fn read_head(&mut self, limit: usize) -> Result<Option<usize>, WireError> {
        let mut scanned = 0;
        loop {
            let lead = self
                .buffered()
                .iter()
                .take_while(|&&c| c == b'\r' || c == b'\n')
                .count();
            if lead > 0 {
                self.consume(lead);
                scanned = 0;
            }
            let data = self.buffered();
            let mut i = scanned;
            while i < data.len() {
                if data[i] == b'\n' {
                    match data.get(i + 1) {
                        Some(b'\n') => return Ok(Some(i + 2)),
                        Some(b'\r') if data.get(i + 2) == Some(&b'\n') => return Ok(Some(i + 3)),
                        _ => {}
                    }
                }
                i += 1;
            }
            // Rescan the last two bytes: the terminator may straddle reads.
            scanned = data.len().saturating_sub(2);
            if data.len() >= limit {
                return Err(WireError::HeadTooLarge(limit));
            }
            let was_empty = data.is_empty();
            if self.fill(limit)? == 0 {
                return if was_empty {
                    Ok(None)
                } else {
                    Err(WireError::Closed)
                };
            }
        }
    }

    /// Reads a line ending in `\n` from the buffer, returning its length
    /// including the terminator.
    fn read_line(&mut self) -> Result<usize, WireError> {
        let mut scanned = 0;
        loop {
            let data = self.buffered();
            if let Some(p) = data[scanned..].iter().position(|&c| c == b'\n') {
                return Ok(scanned + p + 1);
            }
            scanned = data.len();
            if scanned > MAX_LINE {
                return Err(WireError::Malformed("chunk line too long"));
            }
            if self.fill(usize::MAX)? == 0 {
                return Err(WireError::Closed);
            }
        }
    }

    /// Appends exactly `n` body bytes to `out`, growing it as they arrive
    /// (by at most [`BODY_STEP`] at a time), never by the declared `n` at
    /// once: a peer that declares a large body and sends nothing costs
    /// nothing.
    fn read_exact_into(&mut self, mut n: usize, out: &mut Vec<u8>) -> Result<(), WireError> {
        let take = n.min(self.end - self.start);
        out.extend_from_slice(&self.buf[self.start..self.start + take]);
        self.consume(take);
        n -= take;
        let end = out.len() + n;
        while out.len() < end {
            let at = out.len();
            out.resize(end.min(at + BODY_STEP), 0);
            let mut filled = at;
            while filled < out.len() {
                match self.stream.read(&mut out[filled..]) {
                    Ok(0) => {
                        out.truncate(filled);
                        return Err(WireError::Closed);
                    }
                    Ok(k) => filled += k,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        out.truncate(filled);
                        return Err(e.into());
                    }
                }
            }
        }
        Ok(())
    }

    /// Appends the body framed by `framing` to `out`, reading no further
    /// than its end so that the next message stays buffered.
    ///
    /// # Errors
    ///
    /// [`WireError::BodyTooLarge`] past `limit` bytes,
    /// [`WireError::Malformed`] for bad chunk framing,
    /// [`WireError::Closed`] when the peer closed early, and I/O errors.
    pub fn read_body(
        &mut self,
        framing: Framing,
        limit: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), WireError> {
        match framing {
            Framing::Empty => Ok(()),
            Framing::Length(n) => {
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= limit)
                    .ok_or(WireError::BodyTooLarge(limit))?;
                self.read_exact_into(n, out)
            }
            Framing::Chunked => self.read_chunked(limit, out),
            Framing::UntilClose => {
                out.extend_from_slice(self.buffered());
                self.consume(usize::MAX);
                let mut chunk = [0u8; 8192];
                loop {
                    match self.stream.read(&mut chunk) {
                        Ok(0) => return Ok(()),
                        Ok(k) => {
                            if out.len() + k > limit {
                                return Err(WireError::BodyTooLarge(limit));
                            }
                            out.extend_from_slice(&chunk[..k]);
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
        }
    }

    fn read_chunked(&mut self, limit: usize, out: &mut Vec<u8>) -> Result<(), WireError> {
        let mut total = 0usize;
        loop {
            let len = self.read_line()?;
            let line = &self.buffered()[..len];
            let digits = line.iter().take_while(|c| c.is_ascii_hexdigit()).count();
            if digits == 0 || digits > 15 {
                return Err(WireError::Malformed("invalid chunk size"));
            }
            let rest = &line[digits..];
            if !(rest.starts_with(b";") || trim(rest).is_empty()) {
                return Err(WireError::Malformed("invalid chunk size"));
            }
            let mut size = 0usize;
            for &c in &line[..digits] {
                let d = (c as char).to_digit(16).unwrap_or(0) as usize;
                size = size * 16 + d;
            }
            self.consume(len);
            if size == 0 {
                // Trailer fields, then the empty line that ends the body.
                loop {
                    let len = self.read_line()?;
                    let empty = trim(&self.buffered()[..len]).is_empty();
                    self.consume(len);
                    if empty {
                        return Ok(());
                    }
                }
            }
            total = total
                .checked_add(size)
                .filter(|&t| t <= limit)
                .ok_or(WireError::BodyTooLarge(limit))?;
            self.read_exact_into(size, out)?;
            let len = self.read_line()?;
            if !trim(&self.buffered()[..len]).is_empty() {
                return Err(WireError::Malformed("chunk data longer than its size"));
            }
            self.consume(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(bytes: &[u8]) -> Conn<&[u8]> {
        Conn::new(bytes)
    }

    #[test]
    fn reads_pipelined_requests_with_bodies() {
        let wire = b"\r\nPUT /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /b?x=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
        let mut c = conn(wire);
        let n = c.read_head(1024).unwrap().unwrap();
        let head = parse_request(&c.buffered()[..n]).unwrap();
        assert_eq!((head.method, head.target), ("PUT", "/a"));
        assert!(head.info.persistent());
        let framing = head.framing();
        c.consume(n);
        let mut body = Vec::new();
        c.read_body(framing, 10, &mut body).unwrap();
        assert_eq!(body, b"abc");
        let n = c.read_head(1024).unwrap().unwrap();
        let head = parse_request(&c.buffered()[..n]).unwrap();
        assert_eq!(head.target, "/b?x=1");
        assert_eq!(head.framing(), Framing::Empty);
        assert!(head.info.persistent());
        c.consume(n);
        assert!(c.read_head(1024).unwrap().is_none());
    }

    #[test]
    fn declared_lengths_reserve_nothing_before_the_bytes_arrive() {
        // A 64 MiB body and a 64 MiB chunk are declared, 3 bytes arrive.
        let mut body = Vec::new();
        let err = conn(b"abc").read_body(Framing::Length(64 << 20), 64 << 20, &mut body);
        assert!(matches!(err, Err(WireError::Closed)));
        assert!(body.capacity() <= 2 * BODY_STEP, "{}", body.capacity());
        let mut body = Vec::new();
        let err = conn(b"4000000\r\nabc").read_body(Framing::Chunked, 64 << 20, &mut body);
        assert!(matches!(err, Err(WireError::Closed)));
        assert!(body.capacity() <= 2 * BODY_STEP, "{}", body.capacity());
    }

    #[test]
    fn decodes_chunked_bodies() {
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nX-Trailer: y\r\n\r\nrest";
        let mut c = conn(wire);
        let n = c.read_head(1024).unwrap().unwrap();
        let head = parse_response(&c.buffered()[..n]).unwrap();
        assert_eq!(head.status, 200);
        c.consume(n);
        let mut body = Vec::new();
        c.read_body(head.framing(false), 100, &mut body).unwrap();
        assert_eq!(body, b"abc0123456789abcdef");
        assert_eq!(c.buffered(), b"rest");
    }

    #[test]
    fn rejects_bad_framing() {
        let mut c = conn(b"zz\r\n");
        let mut body = Vec::new();
        assert!(matches!(
            c.read_body(Framing::Chunked, 100, &mut body),
            Err(WireError::Malformed(_))
        ));
        let mut c = conn(b"5\r\nabcdefg\r\n0\r\n\r\n");
        assert!(c.read_body(Framing::Chunked, 100, &mut body).is_err());
        let mut c = conn(b"5\r\nabcde\r\n0\r\n\r\n");
        body.clear();
        assert!(matches!(
            c.read_body(Framing::Chunked, 4, &mut body),
            Err(WireError::BodyTooLarge(4))
        ));
        let mut c = conn(b"ab");
        assert!(matches!(
            c.read_body(Framing::Length(3), 100, &mut body),
            Err(WireError::Closed)
        ));
        assert!(matches!(
            conn(b"").read_body(Framing::Length(u64::MAX), 100, &mut body),
            Err(WireError::BodyTooLarge(100))
        ));
        let mut c = conn(b"GET / HTTP/1.1\r\nHost: x");
        assert!(matches!(c.read_head(1024), Err(WireError::Closed)));
        let long = vec![b'a'; 5000];
        assert!(matches!(
            conn(&long).read_head(4096),
            Err(WireError::HeadTooLarge(4096))
        ));
        assert!(
            parse_request(b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
                .is_err()
        );
        assert!(parse_request(b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n").is_err());
        assert!(parse_request(b"GET / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n").is_err());
        assert!(parse_request(b"NOT A REQUEST\r\n\r\n").is_err());
        assert!(parse_response(b"HTTP/1.1 abc\r\n\r\n").is_err());
    }

    #[test]
    fn bearer_credentials_are_read_and_never_shown() {
        let bearer = |head: &[u8]| {
            let head = parse_request(head).unwrap();
            assert!(!format!("{head:?}").contains("tok3n"), "{head:?}");
            head.authorization.bearer().map(<[u8]>::to_vec)
        };
        assert_eq!(
            bearer(b"GET / HTTP/1.1\r\nAuthorization: Bearer tok3n \r\n\r\n"),
            Some(b"tok3n".to_vec())
        );
        assert_eq!(
            bearer(b"GET / HTTP/1.1\r\nauthorization: bEARER  tok3n\r\n\r\n"),
            Some(b"tok3n".to_vec())
        );
        for head in [
            &b"GET / HTTP/1.1\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nAuthorization: Basic tok3n\r\n\r\n",
            b"GET / HTTP/1.1\r\nAuthorization: Bearer\r\n\r\n",
            b"GET / HTTP/1.1\r\nAuthorization: Bearertok3n\r\n\r\n",
            b"GET / HTTP/1.1\r\nAuthorization: Bearer tok3n\r\nAuthorization: Bearer tok3n\r\n\r\n",
        ] {
            assert_eq!(bearer(head), None, "{}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn response_framing_follows_status_and_headers() {
        let head = parse_response(b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n").unwrap();
        assert_eq!(head.framing(false), Framing::Empty);
        let head = parse_response(b"HTTP/1.0 200 OK\r\n\r\n").unwrap();
        assert_eq!(head.framing(false), Framing::UntilClose);
        assert!(!head.info.persistent());
        assert_eq!(head.framing(true), Framing::Empty);
        let head =
            parse_response(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                .unwrap();
        assert!(!head.info.persistent());
        assert_eq!(head.framing(false), Framing::Length(0));
    }

    #[test]
    fn until_close_reads_everything() {
        let mut c = conn(b"hello world");
        let mut body = Vec::new();
        c.read_body(Framing::UntilClose, 100, &mut body).unwrap();
        assert_eq!(body, b"hello world");
    }
}
