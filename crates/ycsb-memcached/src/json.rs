//! A record as Java YCSB's memcached binding stores it: one JSON object
//! mapping each field name to its value as a JSON string, written as
//! Jackson writes it (no spaces; `"` and `\` escaped, control characters
//! as `\b \t \n \f \r` or `\u00XX` with upper-case hex, everything else
//! as it is, in UTF-8).
//!
//! Java's values are Java strings and ours are bytes, so a value byte `b`
//! is written as the character U+00`b` (Latin-1). That is lossless both
//! ways for us, and it is what Java reads back: Java's
//! `StringByteIterator` turns each UTF-16 unit of a string into one byte
//! (its low eight bits), so a record we write reads in Java as exactly
//! our bytes. A record Java writes is read here the way Java reads it:
//! each UTF-16 unit of each string, escapes included, becomes its low
//! byte. For the ASCII values YCSB generates the two agree byte for byte.

use std::fmt;

use ycsb_db::{Fields, Record};

/// Why a stored value is not a record of this layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Where in the value, in bytes.
    pub at: usize,
    /// What was expected there.
    pub expected: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the stored value is not a JSON record: expected {} at byte {}",
            self.expected, self.at
        )
    }
}

impl std::error::Error for DecodeError {}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `record` as Java's binding's JSON object to `out`.
pub fn encode(record: &Record, out: &mut Vec<u8>) {
    out.reserve(record.value_bytes() + 16 * record.len() + 2);
    out.push(b'{');
    for (i, field) in record.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'"');
        // A name is text: its UTF-8 is the JSON's.
        for &b in field.name.as_bytes() {
            escape_ascii_or_copy(b, out);
        }
        out.extend_from_slice(b"\":\"");
        for &b in field.value {
            if b < 0x80 {
                escape_ascii_or_copy(b, out);
            } else {
                // U+0080..U+00FF in UTF-8.
                out.push(0xC0 | (b >> 6));
                out.push(0x80 | (b & 0x3F));
            }
        }
        out.push(b'"');
    }
    out.push(b'}');
}

/// One byte of a JSON string's content: ASCII escaped as Jackson escapes
/// it, any other byte (part of a UTF-8 name) copied.
fn escape_ascii_or_copy(b: u8, out: &mut Vec<u8>) {
    let short = match b {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        b'\t' => b't',
        b'\n' => b'n',
        0x0C => b'f',
        b'\r' => b'r',
        0x00..=0x1F => {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xF)]);
            return;
        }
        _ => {
            out.push(b);
            return;
        }
    };
    out.push(b'\\');
    out.push(short);
}

/// How a JSON string's characters become bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Text {
    /// A field name: the characters in UTF-8.
    Utf8,
    /// A value: each UTF-16 unit's low byte, as Java's `StringByteIterator`.
    JavaBytes,
}

/// Buffers [`decode`] reuses from call to call.
#[derive(Debug, Default)]
pub struct Scratch {
    name: Vec<u8>,
    value: Vec<u8>,
}

/// Reads the record in `doc` into `out` (which arrives empty), keeping the
/// fields `fields` selects, as Java's binding reads it: a JSON `null` is
/// no field, a number or `true`/`false` is its text, a nested object or
/// array is an empty value, and of a name given twice the last value
/// counts (at the first one's place).
///
/// # Errors
///
/// [`DecodeError`] when `doc` is not one JSON object (a value someone else
/// stored, or one cut short); `out` may then hold some fields.
pub fn decode(
    doc: &[u8],
    fields: Fields<'_>,
    out: &mut Record,
    scratch: &mut Scratch,
) -> Result<(), DecodeError> {
    let mut p = Parser { doc, at: 0 };
    p.skip_space();
    p.expect(b'{', "'{'")?;
    p.skip_space();
    if p.peek() == Some(b'}') {
        p.at += 1;
        return p.end();
    }
    loop {
        p.skip_space();
        p.expect(b'"', "a field name")?;
        scratch.name.clear();
        p.string(Text::Utf8, &mut scratch.name)?;
        p.skip_space();
        p.expect(b':', "':'")?;
        p.skip_space();
        scratch.value.clear();
        let present = p.value(&mut scratch.value)?;
        let name = std::str::from_utf8(&scratch.name).map_err(|_| DecodeError {
            at: p.at,
            expected: "a UTF-8 field name",
        })?;
        if present && fields.contains(name) {
            if out.get(name).is_some() {
                let mut last = Record::new();
                last.push(name, &scratch.value);
                out.merge_from(&last);
            } else {
                out.push(name, &scratch.value);
            }
        }
        p.skip_space();
        match p.next() {
            Some(b',') => {}
            Some(b'}') => return p.end(),
            _ => return Err(p.error("',' or '}'")),
        }
    }
}

struct Parser<'a> {
    doc: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.doc.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn error(&self, expected: &'static str) -> DecodeError {
        DecodeError {
            at: self.at,
            expected,
        }
    }

    fn expect(&mut self, b: u8, expected: &'static str) -> Result<(), DecodeError> {
        if self.peek() == Some(b) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn end(&mut self) -> Result<(), DecodeError> {
        self.skip_space();
        if self.at == self.doc.len() {
            Ok(())
        } else {
            Err(self.error("the end of the value"))
        }
    }

    /// A value after its name; false for `null` (no field).
    fn value(&mut self, out: &mut Vec<u8>) -> Result<bool, DecodeError> {
        match self.peek() {
            Some(b'"') => {
                self.at += 1;
                self.string(Text::JavaBytes, out)?;
                Ok(true)
            }
            Some(b'{' | b'[') => {
                // Jackson's asText() of a container is empty.
                self.skip_container()?;
                Ok(true)
            }
            Some(b'n') => self.literal(b"null").map(|()| false),
            Some(b't') => {
                self.literal(b"true")?;
                out.extend_from_slice(b"true");
                Ok(true)
            }
            Some(b'f') => {
                self.literal(b"false")?;
                out.extend_from_slice(b"false");
                Ok(true)
            }
            Some(b'-' | b'0'..=b'9') => {
                let start = self.at;
                while matches!(
                    self.peek(),
                    Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                ) {
                    self.at += 1;
                }
                out.extend_from_slice(&self.doc[start..self.at]);
                Ok(true)
            }
            _ => Err(self.error("a value")),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), DecodeError> {
        if self.doc[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.error("a value"))
        }
    }

    /// Skips a nested object or array, strings and all.
    fn skip_container(&mut self) -> Result<(), DecodeError> {
        let mut depth = 0usize;
        let mut ignored = Vec::new();
        loop {
            match self.next() {
                Some(b'{' | b'[') => depth += 1,
                Some(b'}' | b']') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Some(b'"') => {
                    ignored.clear();
                    self.string(Text::Utf8, &mut ignored)?;
                }
                Some(_) => {}
                None => return Err(self.error("the end of a nested value")),
            }
        }
    }

    /// A string's content after its opening quote, through its closing one.
    fn string(&mut self, text: Text, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        loop {
            // The common run: plain ASCII, copied at once.
            let run = self.doc[self.at..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b))
                .ok_or(DecodeError {
                    at: self.doc.len(),
                    expected: "the end of a string",
                })?;
            out.extend_from_slice(&self.doc[self.at..self.at + run]);
            self.at += run;
            let b = self.doc[self.at];
            match b {
                b'"' => {
                    self.at += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.at += 1;
                    self.escape(text, out)?;
                }
                0x00..=0x1F => return Err(self.error("an escaped control character")),
                _ => {
                    let c = self.utf8_char()?;
                    push_char(c, text, out);
                }
            }
        }
    }

    fn escape(&mut self, text: Text, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let simple = match self.next() {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0C,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                let unit = self.hex4()?;
                match text {
                    Text::JavaBytes => out.push(unit as u8),
                    Text::Utf8 => {
                        let c = if (0xD800..0xDC00).contains(&unit)
                            && self.doc[self.at..].starts_with(b"\\u")
                        {
                            let save = self.at;
                            self.at += 2;
                            let low = self.hex4()?;
                            if (0xDC00..0xE000).contains(&low) {
                                let c = 0x10000
                                    + ((u32::from(unit) - 0xD800) << 10)
                                    + (u32::from(low) - 0xDC00);
                                char::from_u32(c).unwrap_or('\u{FFFD}')
                            } else {
                                self.at = save;
                                '\u{FFFD}'
                            }
                        } else {
                            char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}')
                        };
                        push_char(c, text, out);
                    }
                }
                return Ok(());
            }
            _ => return Err(self.error("an escape")),
        };
        out.push(simple);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u16, DecodeError> {
        let digits = self
            .doc
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("four hex digits"))?;
        let mut unit = 0u16;
        for &d in digits {
            let v = (d as char)
                .to_digit(16)
                .ok_or_else(|| self.error("four hex digits"))?;
            unit = unit << 4 | v as u16;
        }
        self.at += 4;
        Ok(unit)
    }

    /// One UTF-8 encoded character starting at a byte of 0x80 or more.
    fn utf8_char(&mut self) -> Result<char, DecodeError> {
        let rest = &self.doc[self.at..];
        let len = match rest[0] {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return Err(self.error("UTF-8")),
        };
        let c = rest
            .get(..len)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .and_then(|s| s.chars().next())
            .ok_or_else(|| self.error("UTF-8"))?;
        self.at += len;
        Ok(c)
    }
}

fn push_char(c: char, text: Text, out: &mut Vec<u8>) {
    match text {
        Text::Utf8 => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        Text::JavaBytes => {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push(*unit as u8);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(r: &Record) -> Vec<(String, Vec<u8>)> {
        r.iter()
            .map(|f| (f.name.to_string(), f.value.to_vec()))
            .collect()
    }

    fn read(doc: &[u8]) -> Result<Vec<(String, Vec<u8>)>, DecodeError> {
        let mut out = Record::new();
        decode(doc, Fields::All, &mut out, &mut Scratch::default())?;
        Ok(fields(&out))
    }

    #[test]
    fn writes_as_jackson_writes() {
        let mut r = Record::new();
        r.push("field0", b"a\"b\\c/d");
        r.push("field1", b"\x00\x08\t\n\x0c\r\x1f\x7f");
        let mut doc = Vec::new();
        encode(&r, &mut doc);
        assert_eq!(
            String::from_utf8(doc).unwrap(),
            r#"{"field0":"a\"b\\c/d","field1":"\u0000\b\t\n\f\r\u001F"#.to_string() + "\u{7f}\"}"
        );
    }

    #[test]
    fn every_byte_round_trips_as_a_latin1_character() {
        let all: Vec<u8> = (0..=255u8).collect();
        let mut r = Record::new();
        r.push("bytes", &all);
        r.push("empty", b"");
        r.push("n\u{e9}me", b"x");
        let mut doc = Vec::new();
        encode(&r, &mut doc);
        // Valid UTF-8 JSON: what Jackson parses.
        let text = std::str::from_utf8(&doc).unwrap();
        assert!(
            text.contains("\u{fe}\u{ff}\",\"empty\":\"\",\"n\u{e9}me\""),
            "{text}"
        );
        assert_eq!(read(&doc).unwrap(), fields(&r));
    }

    #[test]
    fn reads_what_java_writes_as_java_reads_it() {
        // Java's field order is its HashMap's; spaces and escapes of any
        // JSON writer are read.
        let doc = br#" { "field1" : "x\u0041\/" , "field0":"\u00e9\u20ac", "n":null, "num":-1.5e3, "t":true, "o":{"a":["}"]}, "field1":"last" } "#;
        assert_eq!(
            read(doc).unwrap(),
            vec![
                ("field1".to_string(), b"last".to_vec()),
                // U+20AC is one UTF-16 unit; Java keeps its low byte.
                ("field0".to_string(), vec![0xE9, 0xAC]),
                ("num".to_string(), b"-1.5e3".to_vec()),
                ("t".to_string(), b"true".to_vec()),
                ("o".to_string(), Vec::new()),
            ]
        );
        // A raw character beyond the BMP is two UTF-16 units in Java.
        assert_eq!(
            read("{\"f\":\"\u{1F600}\"}".as_bytes()).unwrap(),
            vec![("f".to_string(), vec![0x3D, 0x00])]
        );
        assert_eq!(
            read(br#"{"\ud83d\ude00":"v"}"#).unwrap(),
            vec![("\u{1F600}".to_string(), b"v".to_vec())]
        );
        assert_eq!(read(b"{}").unwrap(), Vec::new());
    }

    #[test]
    fn selects_fields() {
        let mut out = Record::new();
        let only = vec!["field1".to_string()];
        decode(
            br#"{"field0":"a","field1":"b"}"#,
            Fields::Only(&only),
            &mut out,
            &mut Scratch::default(),
        )
        .unwrap();
        assert_eq!(fields(&out), vec![("field1".to_string(), b"b".to_vec())]);
    }

    #[test]
    fn refuses_what_is_not_a_record() {
        for (doc, expected) in [
            (&b"hello"[..], "'{'"),
            (b"{\"a\":\"b\"", "',' or '}'"),
            (b"{\"a\":\"b", "the end of a string"),
            (b"{\"a\":\"\x01\"}", "an escaped control character"),
            (b"{\"a\":\"\xff\"}", "UTF-8"),
            (b"{\"a\":\"b\"} x", "the end of the value"),
            (b"{\"a\":\"\\u12\"}", "four hex digits"),
            (b"{\"a\" \"b\"}", "':'"),
        ] {
            let e = read(doc).unwrap_err();
            assert_eq!(e.expected, expected, "{}", doc.escape_ascii());
        }
    }
}
