//! RESP2, the Redis wire protocol: encoding into reusable buffers and
//! zero-copy parsing of values already in a buffer.
//!
//! Both sides of `ycsb-rs` speak it: the redis store (client) and
//! `ycsb serve` (server). Nothing here allocates: encoders append to a
//! caller's `Vec<u8>`, and the parser hands out slices of the caller's
//! buffer, so a connection that reuses its buffers allocates nothing per
//! command once they have grown.

/// A malformed RESP stream. The connection it came from cannot be trusted
/// afterwards and should be closed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error("malformed RESP at byte {offset}: {reason}")]
pub struct ProtocolError {
    /// Where in the buffer parsing failed.
    pub offset: usize,
    /// What was wrong.
    pub reason: &'static str,
}

/// The largest bulk string or array accepted (512 MiB, Redis's own
/// `proto-max-bulk-len`), so a corrupt length cannot make a reader wait for
/// or reserve absurd amounts of memory.
pub const MAX_LEN: usize = 512 * 1024 * 1024;

/// One RESP value header or scalar, borrowed from the buffer it was parsed
/// from. An array is announced by [`Token::Array`] and its elements follow
/// as further tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    /// `+OK`: a simple string.
    Simple(&'a [u8]),
    /// `-ERR ...`: an error reply.
    Error(&'a [u8]),
    /// `:42`: an integer.
    Integer(i64),
    /// `$3\r\nfoo`: a bulk string, or `None` for the null bulk string `$-1`.
    Bulk(Option<&'a [u8]>),
    /// `*2`: an array of that many elements, or `None` for the null array.
    Array(Option<usize>),
}

/// Appends an array header announcing `len` elements.
pub fn write_array_header(out: &mut Vec<u8>, len: usize) {
    out.push(b'*');
    write_decimal(out, len as i64);
    out.extend_from_slice(b"\r\n");
}

/// Appends a bulk string.
pub fn write_bulk(out: &mut Vec<u8>, value: &[u8]) {
    out.push(b'$');
    write_decimal(out, value.len() as i64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Appends one bulk string made of `parts` joined, without building the
/// joined value first (for arguments such as `[key`).
pub fn write_bulk_parts(out: &mut Vec<u8>, parts: &[&[u8]]) {
    out.push(b'$');
    write_decimal(out, parts.iter().map(|p| p.len()).sum::<usize>() as i64);
    out.extend_from_slice(b"\r\n");
    for part in parts {
        out.extend_from_slice(part);
    }
    out.extend_from_slice(b"\r\n");
}

/// Appends an integer formatted as a bulk string (how clients send numeric
/// arguments such as scores and counts).
pub fn write_bulk_integer(out: &mut Vec<u8>, value: i64) {
    let mut digits = [0u8; 20];
    let len = format_decimal(&mut digits, value);
    write_bulk(out, &digits[digits.len() - len..]);
}

/// Appends the null bulk string `$-1`.
pub fn write_null(out: &mut Vec<u8>) {
    out.extend_from_slice(b"$-1\r\n");
}

/// Appends a simple string (`+OK`). `value` must not contain CR or LF.
pub fn write_simple(out: &mut Vec<u8>, value: &str) {
    out.push(b'+');
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Appends an error reply (`-ERR ...`); CR and LF in `message` are
/// replaced by spaces so that the reply stays one line.
pub fn write_error(out: &mut Vec<u8>, message: &str) {
    out.push(b'-');
    out.extend(
        message
            .bytes()
            .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.extend_from_slice(b"\r\n");
}

/// Appends an integer reply (`:42`).
pub fn write_integer(out: &mut Vec<u8>, value: i64) {
    out.push(b':');
    write_decimal(out, value);
    out.extend_from_slice(b"\r\n");
}

/// Appends a command: an array of bulk strings.
pub fn write_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    write_array_header(out, args.len());
    for arg in args {
        write_bulk(out, arg);
    }
}

fn write_decimal(out: &mut Vec<u8>, value: i64) {
    let mut digits = [0u8; 20];
    let len = format_decimal(&mut digits, value);
    out.extend_from_slice(&digits[digits.len() - len..]);
}

/// Formats `value` right-aligned into `buf`, returning the length used.
fn format_decimal(buf: &mut [u8; 20], value: i64) -> usize {
    let negative = value < 0;
    let mut v = value.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if negative {
        i -= 1;
        buf[i] = b'-';
    }
    buf.len() - i
}

/// Parses a decimal integer as RESP writes it (optional `-`, digits).
pub fn parse_integer(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
    }
    Some(if negative { -v } else { v })
}

/// Finds the CRLF-terminated line starting at `pos`; returns the line
/// (without CRLF) and the position after it, or `None` if incomplete.
fn line(buf: &[u8], pos: usize) -> Result<Option<(&[u8], usize)>, ProtocolError> {
    let rest = &buf[pos..];
    match rest.iter().position(|&b| b == b'\n') {
        None => {
            if rest.len() > 64 * 1024 {
                return Err(ProtocolError {
                    offset: pos,
                    reason: "line longer than 64 KiB",
                });
            }
            Ok(None)
        }
        Some(nl) if nl > 0 && rest[nl - 1] == b'\r' => Ok(Some((&rest[..nl - 1], pos + nl + 1))),
        Some(_) => Err(ProtocolError {
            offset: pos,
            reason: "line not terminated by CRLF",
        }),
    }
}

fn length(text: &[u8], offset: usize) -> Result<Option<usize>, ProtocolError> {
    match parse_integer(text) {
        Some(-1) => Ok(None),
        Some(n) if n >= 0 && (n as u64) <= MAX_LEN as u64 => Ok(Some(n as usize)),
        _ => Err(ProtocolError {
            offset,
            reason: "invalid length",
        }),
    }
}

/// Parses the token starting at `pos` in `buf`. Returns the token and the
/// position after it, or `Ok(None)` when the buffer ends before the token
/// does (read more and try again).
///
/// # Errors
///
/// [`ProtocolError`] when the bytes are not RESP.
pub fn parse_token(buf: &[u8], pos: usize) -> Result<Option<(Token<'_>, usize)>, ProtocolError> {
    let Some(&kind) = buf.get(pos) else {
        return Ok(None);
    };
    let Some((text, next)) = line(buf, pos + 1)? else {
        return Ok(None);
    };
    let token = match kind {
        b'+' => Token::Simple(text),
        b'-' => Token::Error(text),
        b':' => Token::Integer(parse_integer(text).ok_or(ProtocolError {
            offset: pos,
            reason: "invalid integer",
        })?),
        b'*' => Token::Array(length(text, pos)?),
        b'$' => match length(text, pos)? {
            None => Token::Bulk(None),
            Some(len) => {
                let end = next + len;
                if buf.len() < end + 2 {
                    return Ok(None);
                }
                if &buf[end..end + 2] != b"\r\n" {
                    return Err(ProtocolError {
                        offset: end,
                        reason: "bulk string not terminated by CRLF",
                    });
                }
                return Ok(Some((Token::Bulk(Some(&buf[next..end])), end + 2)));
            }
        },
        _ => {
            return Err(ProtocolError {
                offset: pos,
                reason: "unknown type byte",
            })
        }
    };
    Ok(Some((token, next)))
}

/// The length in bytes of the complete value (with all nested elements)
/// starting at `pos`, or `Ok(None)` when the buffer does not hold all of it
/// yet.
///
/// # Errors
///
/// [`ProtocolError`] when the bytes are not RESP.
pub fn value_len(buf: &[u8], pos: usize) -> Result<Option<usize>, ProtocolError> {
    // Elements still to read, over all open arrays: nesting needs no stack
    // because only the total matters for finding the end.
    let mut remaining: usize = 1;
    let mut at = pos;
    while remaining > 0 {
        let Some((token, next)) = parse_token(buf, at)? else {
            return Ok(None);
        };
        remaining -= 1;
        if let Token::Array(Some(n)) = token {
            remaining = remaining.checked_add(n).ok_or(ProtocolError {
                offset: at,
                reason: "array too large",
            })?;
        }
        at = next;
    }
    Ok(Some(at - pos))
}

/// Walks the tokens of a complete value, as [`value_len`] delimited it.
#[derive(Clone, Debug)]
pub struct Tokens<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Tokens<'a> {
    /// Tokens of the complete value(s) in `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// The next token, or `None` at the end of the buffer (or at a token
    /// the buffer does not hold entirely, which [`value_len`] rules out).
    ///
    /// # Errors
    ///
    /// [`ProtocolError`] when the bytes are not RESP.
    pub fn next_token(&mut self) -> Result<Option<Token<'a>>, ProtocolError> {
        match parse_token(self.buf, self.pos)? {
            Some((token, next)) => {
                self.pos = next;
                Ok(Some(token))
            }
            None => Ok(None),
        }
    }

    /// The next token, which must be a bulk string (`None` for null).
    ///
    /// # Errors
    ///
    /// [`ProtocolError`] when the next token is missing or of another type.
    pub fn bulk(&mut self) -> Result<Option<&'a [u8]>, ProtocolError> {
        let offset = self.pos;
        match self.next_token()? {
            Some(Token::Bulk(value)) => Ok(value),
            // Some servers answer with simple strings where Redis sends
            // bulk strings; accept both.
            Some(Token::Simple(value)) => Ok(Some(value)),
            _ => Err(ProtocolError {
                offset,
                reason: "expected a bulk string",
            }),
        }
    }

    /// Skips one complete value (with its nested elements).
    ///
    /// # Errors
    ///
    /// [`ProtocolError`] when the bytes are not RESP.
    pub fn skip_value(&mut self) -> Result<(), ProtocolError> {
        match value_len(self.buf, self.pos)? {
            Some(len) => {
                self.pos += len;
                Ok(())
            }
            None => Err(ProtocolError {
                offset: self.pos,
                reason: "truncated value",
            }),
        }
    }

    /// The position reached in the buffer.
    pub fn position(&self) -> usize {
        self.pos
    }
}

/// `value` as decimal text in `buf`, without allocating.
pub(crate) fn decimal_bytes(value: i64, buf: &mut [u8; 20]) -> &[u8] {
    let len = format_decimal(buf, value);
    &buf[buf.len() - len..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_commands_and_replies() {
        let mut out = Vec::new();
        write_command(&mut out, &[b"SET", b"k", b""]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
        out.clear();
        write_integer(&mut out, -42);
        write_simple(&mut out, "OK");
        write_error(&mut out, "ERR bad\r\nthing");
        write_null(&mut out);
        write_bulk_integer(&mut out, i64::MIN);
        write_bulk_parts(&mut out, &[b"[", b"key"]);
        assert_eq!(
            out,
            &b":-42\r\n+OK\r\n-ERR bad  thing\r\n$-1\r\n$20\r\n-9223372036854775808\r\n$4\r\n[key\r\n"[..]
        );
    }

    #[test]
    fn parses_nested_values_and_reports_incomplete_ones() {
        let buf = b"*3\r\n$3\r\nfoo\r\n*2\r\n:1\r\n$-1\r\n+OK\r\n-ERR x\r\n";
        let first = value_len(buf, 0).unwrap().unwrap();
        assert_eq!(&buf[first..], b"-ERR x\r\n");
        for cut in 0..first {
            assert_eq!(value_len(&buf[..cut], 0), Ok(None), "cut at {cut}");
        }
        let mut t = Tokens::new(&buf[..first]);
        assert_eq!(t.next_token().unwrap(), Some(Token::Array(Some(3))));
        assert_eq!(t.bulk().unwrap(), Some(&b"foo"[..]));
        assert_eq!(t.next_token().unwrap(), Some(Token::Array(Some(2))));
        assert_eq!(t.next_token().unwrap(), Some(Token::Integer(1)));
        assert_eq!(t.bulk().unwrap(), None);
        assert_eq!(t.next_token().unwrap(), Some(Token::Simple(b"OK")));
        assert_eq!(t.next_token().unwrap(), None);
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        for bad in [
            &b"?x\r\n"[..],
            b"$abc\r\n",
            b"$-2\r\n",
            b":1x\r\n",
            b"$1\r\nab\r\n",
            b"+OK\n",
            b"*99999999999999999999\r\n",
        ] {
            assert!(
                value_len(bad, 0).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(parse_integer(b"-"), None);
        assert_eq!(parse_integer(b"9223372036854775808"), None);
        assert_eq!(parse_integer(b"-17"), Some(-17));
    }

    #[test]
    fn decimal_formatting_matches_std() {
        let mut buf = [0u8; 20];
        for v in [0, 7, -7, 1234567890, i64::MAX, i64::MIN] {
            assert_eq!(decimal_bytes(v, &mut buf), v.to_string().as_bytes());
        }
    }
}
