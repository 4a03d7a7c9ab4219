//! The gateway's JSON: requests rendered into reused buffers, answers
//! parsed borrowing from the body.
//!
//! etcd's gateway writes protobuf's JSON mapping: bytes as standard
//! base64, 64-bit integers as strings, fields at their default value
//! (false, 0, empty) left out.

use std::borrow::Cow;
use std::io::Write;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::{Deserialize, Deserializer};

/// Appends the base64 of `data` to `out`.
fn push_b64(out: &mut Vec<u8>, data: &[u8]) {
    let start = out.len();
    let len = base64::encoded_len(data.len(), true).unwrap_or(0);
    out.resize(start + len, 0);
    let written = STANDARD.encode_slice(data, &mut out[start..]).unwrap_or(0);
    out.truncate(start + written);
}

/// Appends `"name":"<base64 of data>"`.
fn push_bytes_field(out: &mut Vec<u8>, name: &str, data: &[u8]) {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":\"");
    push_b64(out, data);
    out.push(b'"');
}

/// A `RangeRequest` for `key` (up to `range_end`, at most `limit` keys
/// when given) into `out`.
pub(crate) fn range(
    out: &mut Vec<u8>,
    key: &[u8],
    range_end: Option<&[u8]>,
    limit: usize,
    serializable: bool,
) {
    out.clear();
    out.push(b'{');
    push_bytes_field(out, "key", key);
    if let Some(end) = range_end {
        out.push(b',');
        push_bytes_field(out, "range_end", end);
        out.extend_from_slice(b",\"limit\":");
        // Writing to a Vec cannot fail.
        let _ = write!(out, "{limit}");
    }
    if serializable {
        out.extend_from_slice(b",\"serializable\":true");
    }
    out.push(b'}');
}

/// A `PutRequest` into `out`.
pub(crate) fn put(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    out.clear();
    out.push(b'{');
    push_bytes_field(out, "key", key);
    out.push(b',');
    push_bytes_field(out, "value", value);
    out.push(b'}');
}

/// A `TxnRequest`: put `value` at `key` if its `mod_revision` is still
/// `revision`.
pub(crate) fn put_if_unchanged(out: &mut Vec<u8>, key: &[u8], revision: &str, value: &[u8]) {
    out.clear();
    out.extend_from_slice(b"{\"compare\":[{");
    push_bytes_field(out, "key", key);
    out.extend_from_slice(b",\"target\":\"MOD\",\"result\":\"EQUAL\",\"mod_revision\":\"");
    out.extend_from_slice(revision.as_bytes());
    out.extend_from_slice(b"\"}],\"success\":[{\"request_put\":{");
    push_bytes_field(out, "key", key);
    out.push(b',');
    push_bytes_field(out, "value", value);
    out.extend_from_slice(b"}}]}");
}

/// Starts a `TxnRequest` of puts without comparisons in `out`.
pub(crate) fn txn_puts_start(out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(b"{\"success\":[");
}

/// Adds a put of `value` at `key` to the `TxnRequest` in `out`; `first`
/// for its first.
pub(crate) fn txn_put(out: &mut Vec<u8>, first: bool, key: &[u8], value: &[u8]) {
    if !first {
        out.push(b',');
    }
    out.extend_from_slice(b"{\"request_put\":{");
    push_bytes_field(out, "key", key);
    out.push(b',');
    push_bytes_field(out, "value", value);
    out.extend_from_slice(b"}}");
}

/// Adds a range request for the one key `key` to the `TxnRequest` in
/// `out` (started with [`txn_puts_start`]); `first` for its first.
pub(crate) fn txn_range(out: &mut Vec<u8>, first: bool, key: &[u8], serializable: bool) {
    if !first {
        out.push(b',');
    }
    out.extend_from_slice(b"{\"request_range\":{");
    push_bytes_field(out, "key", key);
    if serializable {
        out.extend_from_slice(b",\"serializable\":true");
    }
    out.extend_from_slice(b"}}");
}

/// Adds a delete of the one key `key` to the `TxnRequest` in `out`;
/// `first` for its first.
pub(crate) fn txn_delete(out: &mut Vec<u8>, first: bool, key: &[u8]) {
    if !first {
        out.push(b',');
    }
    out.extend_from_slice(b"{\"request_delete_range\":{");
    push_bytes_field(out, "key", key);
    out.extend_from_slice(b"}}");
}

/// Ends the `TxnRequest` in `out`.
pub(crate) fn txn_end(out: &mut Vec<u8>) {
    out.extend_from_slice(b"]}");
}

/// A `DeleteRangeRequest` for `key` into `out`.
pub(crate) fn delete(out: &mut Vec<u8>, key: &[u8]) {
    out.clear();
    out.push(b'{');
    push_bytes_field(out, "key", key);
    out.push(b'}');
}

/// An `AuthenticateRequest`.
pub(crate) fn authenticate_request(user: &str, password: &str) -> String {
    serde_json::json!({ "name": user, "password": password }).to_string()
}

/// One key-value pair of a range answer, borrowed from the body.
#[derive(Deserialize)]
pub(crate) struct KeyValue<'a> {
    #[serde(borrow)]
    pub(crate) key: Cow<'a, str>,
    #[serde(borrow, default)]
    pub(crate) value: Cow<'a, str>,
    #[serde(borrow, default)]
    pub(crate) mod_revision: Cow<'a, str>,
}

/// A `RangeResponse`.
#[derive(Deserialize)]
pub(crate) struct RangeAnswer<'a> {
    #[serde(borrow, default)]
    pub(crate) kvs: Vec<KeyValue<'a>>,
}

/// A `TxnResponse`: whether the comparison held.
#[derive(Deserialize)]
pub(crate) struct TxnAnswer {
    #[serde(default)]
    pub(crate) succeeded: bool,
}

/// A `TxnResponse` with the answers of its requests, in their order.
#[derive(Deserialize)]
pub(crate) struct TxnResponses<'a> {
    #[serde(borrow, default)]
    pub(crate) responses: Vec<TxnResponse<'a>>,
}

/// One request's answer in a `TxnResponse`: a range's or a delete's.
#[derive(Deserialize)]
pub(crate) struct TxnResponse<'a> {
    #[serde(borrow, default)]
    pub(crate) response_range: Option<RangeAnswer<'a>>,
    #[serde(default)]
    pub(crate) response_delete_range: Option<DeleteAnswer>,
}

/// A `DeleteRangeResponse`.
#[derive(Deserialize)]
pub(crate) struct DeleteAnswer {
    #[serde(default, deserialize_with = "int64")]
    pub(crate) deleted: u64,
}

/// Decodes base64 `text` and appends the bytes to `out`.
pub(crate) fn decode_b64(text: &str, out: &mut Vec<u8>) -> Result<(), base64::DecodeError> {
    STANDARD.decode_vec(text, out)
}

/// A gateway error answer: gRPC's code and message.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct GatewayError {
    /// gRPC status code (14 unavailable, 16 unauthenticated, ...).
    #[serde(default)]
    pub(crate) code: i64,
    /// etcd's words.
    #[serde(default)]
    pub(crate) message: String,
}

/// The error in an answer that was not 200; a body that is not the
/// gateway's error object becomes its text.
pub(crate) fn error_of(body: &[u8]) -> GatewayError {
    serde_json::from_slice(body).unwrap_or_else(|_| GatewayError {
        code: 0,
        message: String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned(),
    })
}

/// The token of an `AuthenticateResponse`.
pub(crate) fn token_of(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Token {
        token: String,
    }
    serde_json::from_slice::<Token>(body).ok().map(|t| t.token)
}

/// What `Maintenance.Status` says of a member.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MemberStatus {
    /// The member's etcd version.
    #[serde(default)]
    pub(crate) version: String,
    /// Bytes of the backend database file.
    #[serde(default, deserialize_with = "int64")]
    pub(crate) db_size: u64,
    /// Bytes of it in use (the rest awaits defragmentation).
    #[serde(default, deserialize_with = "int64")]
    pub(crate) db_size_in_use: u64,
    /// The leader's member id.
    #[serde(default, deserialize_with = "int64")]
    pub(crate) leader: u64,
    /// Raft term: it grows with each election.
    #[serde(default, deserialize_with = "int64")]
    pub(crate) raft_term: u64,
    /// Raft log index.
    #[serde(default, deserialize_with = "int64")]
    pub(crate) raft_index: u64,
    /// This member's id (in the header).
    #[serde(skip)]
    pub(crate) member_id: u64,
}

/// Parses a status answer (the member id comes from its header).
pub(crate) fn member_status(body: &[u8]) -> Result<MemberStatus, serde_json::Error> {
    #[derive(Deserialize)]
    struct Header {
        #[serde(default, deserialize_with = "int64")]
        member_id: u64,
    }
    #[derive(Deserialize)]
    struct WithHeader {
        header: Option<Header>,
    }
    let mut status: MemberStatus = serde_json::from_slice(body)?;
    let header: WithHeader = serde_json::from_slice(body)?;
    status.member_id = header.header.map_or(0, |h| h.member_id);
    Ok(status)
}

/// A protobuf int64/uint64: a JSON string of digits, or a number.
fn int64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either<'a> {
        Number(u64),
        Text(#[serde(borrow)] Cow<'a, str>),
    }
    match Either::deserialize(d)? {
        Either::Number(n) => Ok(n),
        Either::Text(t) => t.parse().map_err(serde::de::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(out: &[u8]) -> &str {
        std::str::from_utf8(out).unwrap()
    }

    #[test]
    fn a_batch_of_puts_is_one_txn_without_comparisons() {
        let mut out = Vec::new();
        txn_puts_start(&mut out);
        txn_put(&mut out, true, b"t/k", b"v");
        txn_put(&mut out, false, b"t/l", b"w");
        txn_end(&mut out);
        assert_eq!(
            text(&out),
            r#"{"success":[{"request_put":{"key":"dC9r","value":"dg=="}},{"request_put":{"key":"dC9s","value":"dw=="}}]}"#
        );
    }

    #[test]
    fn requests_are_the_gateway_json() {
        let mut out = Vec::new();
        range(&mut out, b"t/k", None, 0, false);
        assert_eq!(text(&out), r#"{"key":"dC9r"}"#);
        range(&mut out, b"t/k", Some(b"t0"), 10, true);
        assert_eq!(
            text(&out),
            r#"{"key":"dC9r","range_end":"dDA=","limit":10,"serializable":true}"#
        );
        put(&mut out, b"k", b"\x00\xff");
        assert_eq!(text(&out), r#"{"key":"aw==","value":"AP8="}"#);
        put_if_unchanged(&mut out, b"k", "42", b"v");
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["compare"][0]["mod_revision"], "42");
        assert_eq!(v["compare"][0]["target"], "MOD");
        assert_eq!(v["success"][0]["request_put"]["value"], "dg==");
        delete(&mut out, b"k");
        assert_eq!(text(&out), r#"{"key":"aw=="}"#);
        let auth: serde_json::Value =
            serde_json::from_str(&authenticate_request("u\"x", "p")).unwrap();
        assert_eq!(auth["name"], "u\"x");
    }

    #[test]
    fn answers_as_etcd_3_4_writes_them() {
        // Bodies as etcd 3.4.23's gateway answered them.
        let range: RangeAnswer<'_> = serde_json::from_slice(br#"{"header":{"cluster_id":"324952591200643719","member_id":"3319814642761637952","revision":"2","raft_term":"2"},"kvs":[{"key":"Zm9v","create_revision":"2","mod_revision":"2","version":"1","value":"YmFy"}],"count":"1"}"#).unwrap();
        assert_eq!(range.kvs.len(), 1);
        assert_eq!(range.kvs[0].mod_revision, "2");
        let mut v = Vec::new();
        decode_b64(&range.kvs[0].value, &mut v).unwrap();
        assert_eq!(v, b"bar");
        let empty: RangeAnswer<'_> = serde_json::from_slice(
            br#"{"header":{"cluster_id":"1","member_id":"2","revision":"2","raft_term":"2"}}"#,
        )
        .unwrap();
        assert!(empty.kvs.is_empty());
        let status = member_status(br#"{"header":{"cluster_id":"324952591200643719","member_id":"3319814642761637952","revision":"2","raft_term":"2"},"version":"3.4.23","dbSize":"20480","leader":"3319814642761637952","raftIndex":"5","raftTerm":"2","raftAppliedIndex":"5","dbSizeInUse":"16384"}"#).unwrap();
        assert_eq!(
            (
                status.version.as_str(),
                status.db_size,
                status.db_size_in_use
            ),
            ("3.4.23", 20480, 16384)
        );
        assert_eq!((status.raft_term, status.raft_index), (2, 5));
        assert_eq!(status.member_id, status.leader);
        let failed: TxnAnswer = serde_json::from_slice(br#"{"header":{}}"#).unwrap();
        assert!(!failed.succeeded);
        let deleted: DeleteAnswer = serde_json::from_slice(br#"{"deleted":"1"}"#).unwrap();
        assert_eq!(deleted.deleted, 1);
        let error = error_of(br#"{"error":"illegal base64 data at input byte 0","message":"illegal base64 data at input byte 0","code":3}"#);
        assert_eq!(error.code, 3);
        assert!(error.message.starts_with("illegal base64"));
        assert_eq!(error_of(b"Bad Gateway").message, "Bad Gateway");
    }
}
