//! The `http` store: benchmarks REST key-value servers over HTTP/1.1.
//!
//! Each operation is one request whose method and URL come from a
//! template. Two presets cover the common servers:
//!
//! | operation | `simpleleveldb` (default) | `webdav` |
//! |---|---|---|
//! | read | `GET /get?key={key}&format=txt` | `GET /{table}/{key}` |
//! | insert | `GET /put?key={key}&value={value}&format=txt` | `PUT /{table}/{key}` (record as body) |
//! | update | as insert, after reading the record | as insert, after reading the record |
//! | delete | `GET /del?key={key}&format=txt` | `DELETE /{table}/{key}` |
//! | scan | `GET /range_match?start={key}&end=%FF&limit={count}&format=txt` | not implemented |
//!
//! `custom` starts from no template; `http.<op>.method` and `http.<op>.url`
//! set or override any of them. Templates are appended to the path of
//! `http.url`; placeholders are `{table}` and `{key}` (percent-encoded),
//! `{value}` (the record as base64url text, see [`encoding`]) and
//! `{count}` (a scan's record count). simpleleveldb has a single key space,
//! so its preset ignores the table.
//!
//! **Record encoding.** A record is the `ycsb_db::codec` encoding of its
//! fields. An insert or update whose URL has no `{value}` sends it as the
//! request body, in binary or base64url text (`http.body`). A read takes
//! the record from the response body (`http.response=body`, encoded as
//! `http.body` says) or from the first `key,value` line with a base64url
//! value (`http.response=lines`, simpleleveldb's `format=txt`). Scan
//! responses are always read as such lines, one per record.
//!
//! **Update** reads the record (the read template), merges the changed
//! fields into it and writes the whole record back (the update template),
//! because plain key-value servers replace values. With
//! `http.update.partial=true` only the changed fields are sent and the
//! server must merge them (as `ycsb serve`'s `/update` and `PATCH` do).
//!
//! **Statuses.** 2xx → `OK`; 404 → `NOT_FOUND`; 401, 403 → `FORBIDDEN`;
//! 501 → `NOT_IMPLEMENTED`; 503 → `SERVICE_UNAVAILABLE`; other 4xx →
//! `BAD_REQUEST`; other codes → `ERROR`. A server that cannot be reached or
//! does not answer within `http.timeout` gives `SERVICE_UNAVAILABLE`; a
//! malformed response `ERROR`; a record that does not decode
//! `UNEXPECTED_STATE`.
//!
//! **Connections.** Each client thread keeps one keep-alive connection
//! (HTTP/1.1, `TCP_NODELAY`), opened when the thread starts and reopened
//! after the server closes it. A request that fails on a reused
//! connection before any byte of the answer arrived is sent once more on a
//! new connection: the server may have closed an idle connection.
//!
//! The client is written over `TcpStream` rather than a general HTTP
//! client: it renders each request into one reused buffer and reads the
//! answer into another, so an operation allocates nothing and costs one
//! `write` and usually one `read` system call, which keeps the client's
//! share of a measured round trip small. Only plain `http://` is
//! supported.

#![deny(missing_docs)]
#![forbid(unsafe_code)]
// Only the programs print or exit; a library reports through its return
// values, and a bug is a typed error, not a panic (tests may do both).
#![cfg_attr(
    not(test),
    deny(
        clippy::print_stdout,
        clippy::print_stderr,
        clippy::exit,
        clippy::unwrap_used
    )
)]

pub mod encoding;
pub mod wire;

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use ycsb_db::{
    Fields, Properties, Property, PropertyDecl, PropertyError, Protocol, ReadOp, Record, ScanOp,
    ScanResult, ServerAddress, ServerClient, Status, Store, StoreDescriptor, StoreError,
    StoreThread, ThreadContext,
};

use crate::wire::{Conn, WireError};
use ycsb_db::StoreContext;

ycsb_db::choice_property! {
    /// Which set of default templates to start from.
    pub enum Preset {
        /// simpleleveldb's `/get`, `/put`, `/del` and `/range_match`.
        Simpleleveldb = "simpleleveldb",
        /// `GET`/`PUT`/`DELETE` on `/{table}/{key}`.
        Webdav = "webdav" | "rest",
        /// No defaults: every template is set by properties.
        Custom = "custom",
    }
}

ycsb_db::choice_property! {
    /// How a record is written in a request or response body.
    pub enum BodyEncoding {
        /// The binary record encoding as it is.
        Binary = "binary",
        /// The binary record encoding as unpadded base64url text.
        Base64 = "base64",
    }
}

ycsb_db::choice_property! {
    /// Where a read finds the record in a response.
    pub enum ResponseFormat {
        /// The whole body is the record.
        Body = "body",
        /// The first `key,value` line holds the record as base64url text.
        Lines = "lines",
    }
}

/// `http.url`: where the server is.
pub const URL: Property<String> = Property::new(
    "http.url",
    "http://127.0.0.1:8080",
    "Base URL of the server (http:// only); operation templates are appended to its path.",
);
/// `http.preset`: the default templates.
pub const PRESET: Property<Preset> = Property::new(
    "http.preset",
    "simpleleveldb",
    "Default request templates: simpleleveldb (/get, /put, /del, /range_match), webdav (GET/PUT/DELETE on /{table}/{key}) or custom (none).",
);
/// `http.read.method`.
pub const READ_METHOD: Property<String> = Property::optional(
    "http.read.method",
    "HTTP method of a read (default: the preset's, GET).",
);
/// `http.read.url`.
pub const READ_URL: Property<String> = Property::optional(
    "http.read.url",
    "URL template of a read, appended to http.url's path; placeholders {table}, {key}.",
);
/// `http.insert.method`.
pub const INSERT_METHOD: Property<String> = Property::optional(
    "http.insert.method",
    "HTTP method of an insert (default: the preset's; PUT for custom).",
);
/// `http.insert.url`.
pub const INSERT_URL: Property<String> = Property::optional(
    "http.insert.url",
    "URL template of an insert; placeholders {table}, {key}, {value}. Without {value} the record is the body.",
);
/// `http.update.method`.
pub const UPDATE_METHOD: Property<String> = Property::optional(
    "http.update.method",
    "HTTP method of an update's write (default: the insert method).",
);
/// `http.update.url`.
pub const UPDATE_URL: Property<String> = Property::optional(
    "http.update.url",
    "URL template of an update's write (default: the insert template); placeholders {table}, {key}, {value}.",
);
/// `http.update.partial`.
pub const UPDATE_PARTIAL: Property<bool> = Property::new(
    "http.update.partial",
    "false",
    "Send only the changed fields and let the server merge them; when false an update reads the record, merges in the client and writes it whole.",
);
/// `http.delete.method`.
pub const DELETE_METHOD: Property<String> = Property::optional(
    "http.delete.method",
    "HTTP method of a delete (default: the preset's; DELETE for custom).",
);
/// `http.delete.url`.
pub const DELETE_URL: Property<String> = Property::optional(
    "http.delete.url",
    "URL template of a delete; placeholders {table}, {key}.",
);
/// `http.scan.method`.
pub const SCAN_METHOD: Property<String> =
    Property::optional("http.scan.method", "HTTP method of a scan (default GET).");
/// `http.scan.url`.
pub const SCAN_URL: Property<String> = Property::optional(
    "http.scan.url",
    "URL template of a scan answered with key,value lines; placeholders {table}, {key} (the start key), {count}. Unset: scans are NOT_IMPLEMENTED (except with the simpleleveldb preset).",
);
/// `http.body`.
pub const BODY: Property<BodyEncoding> = Property::optional(
    "http.body",
    "Record encoding in request and response bodies: binary or base64 (default: base64 for simpleleveldb, binary otherwise).",
);
/// `http.response`.
pub const RESPONSE: Property<ResponseFormat> = Property::optional(
    "http.response",
    "Where a read finds the record: body (the whole body) or lines (the first key,value line, base64url value; default for simpleleveldb).",
);
/// `http.timeout`.
pub const TIMEOUT: Property<u64> = Property::new(
    "http.timeout",
    "10000",
    "Milliseconds to wait for connecting, sending and each read of an answer; 0 waits forever.",
);
/// `http.headers`.
pub const HEADERS: Property<String> = Property::optional(
    "http.headers",
    "Extra request headers, 'Name: value' entries separated by '|'.",
);

/// Every property of the http store.
pub const PROPERTIES: &[&PropertyDecl] = &[
    URL.decl(),
    PRESET.decl(),
    READ_METHOD.decl(),
    READ_URL.decl(),
    INSERT_METHOD.decl(),
    INSERT_URL.decl(),
    UPDATE_METHOD.decl(),
    UPDATE_URL.decl(),
    UPDATE_PARTIAL.decl(),
    DELETE_METHOD.decl(),
    DELETE_URL.decl(),
    SCAN_METHOD.decl(),
    SCAN_URL.decl(),
    BODY.decl(),
    RESPONSE.decl(),
    TIMEOUT.decl(),
    HEADERS.decl(),
];

/// How the `ycsb` command line finds the http store.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "http",
    "REST key-value servers over HTTP/1.1 (simpleleveldb, WebDAV, custom templates)",
    PROPERTIES,
    open_store,
)
.with_aliases(&["rest"])
.with_server(ServerClient::new(
    Protocol::Http,
    ServerAddress::Url("http.url"),
))
.with_debian(ycsb_db::DebianPackages::new(&[], &[], &["nginx-light"]));

fn open_store(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    let store = HttpStore::open(context.properties)?;
    // As the redis and etcd stores: a server that is not there makes the
    // store unusable before anything runs, not a failure of every thread.
    store.check_reachable()?;
    Ok(Box::new(store))
}

/// The largest response body accepted (a scan of many large records).
const MAX_BODY: usize = 256 << 20;
/// The largest response head accepted.
const MAX_HEAD: usize = 64 << 10;

/// The status a response code stands for (see the crate documentation).
pub fn status_for_code(code: u16) -> Status {
    match code {
        200..=299 => Status::Ok,
        404 => Status::NotFound,
        401 | 403 => Status::Forbidden,
        501 => Status::NotImplemented,
        503 => Status::ServiceUnavailable,
        400..=499 => Status::BadRequest,
        _ => Status::Error,
    }
}

/// One piece of a URL template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(Vec<u8>),
    Table,
    Key,
    Value,
    Count,
}

/// A request template: method and URL pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Template {
    method: String,
    parts: Vec<Part>,
}

impl Template {
    fn parse(
        props: &Properties,
        method: (&Property<String>, &str),
        url: (&Property<String>, &str),
        base_path: &str,
    ) -> Result<Self, PropertyError> {
        let m = props
            .get_opt(method.0)?
            .unwrap_or_else(|| method.1.to_string());
        let m = m.trim().to_string();
        if m.is_empty() || !m.bytes().all(is_token_char) {
            return Err(props.invalid(
                method.0.decl(),
                "expected an HTTP method such as GET or PUT",
            ));
        }
        let u = props.get_opt(url.0)?.unwrap_or_else(|| url.1.to_string());
        let parts = parse_url_template(u.trim(), base_path)
            .map_err(|reason| props.invalid(url.0.decl(), reason))?;
        Ok(Template { method: m, parts })
    }

    fn has_value(&self) -> bool {
        self.parts.contains(&Part::Value)
    }

    /// Whether the method conventionally carries a body, so that an empty
    /// one must still be announced with `Content-Length: 0`.
    fn method_has_body(&self) -> bool {
        matches!(self.method.as_str(), "PUT" | "POST" | "PATCH")
    }
}

fn is_token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

fn parse_url_template(template: &str, base_path: &str) -> Result<Vec<Part>, String> {
    if !template.starts_with('/') {
        return Err("expected a URL path starting with '/'".into());
    }
    if let Some(c) = template
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || *c == '#')
    {
        return Err(format!("URL templates cannot contain {c:?}"));
    }
    let mut parts = Vec::new();
    let mut literal = base_path.as_bytes().to_vec();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        literal.extend_from_slice(&rest.as_bytes()[..open]);
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| "unclosed '{' in URL template".to_string())?;
        let part = match &after[..close] {
            "table" => Part::Table,
            "key" => Part::Key,
            "value" => Part::Value,
            "count" => Part::Count,
            other => {
                return Err(format!(
                    "unknown placeholder {{{other}}}: expected {{table}}, {{key}}, {{value}} or {{count}}"
                ))
            }
        };
        if !literal.is_empty() {
            parts.push(Part::Literal(std::mem::take(&mut literal)));
        }
        parts.push(part);
        rest = &after[close + 1..];
    }
    literal.extend_from_slice(rest.as_bytes());
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    Ok(parts)
}

/// The parts of `http.url` a request needs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct BaseUrl {
    host: String,
    port: u16,
    path: String,
}

fn parse_base_url(url: &str) -> Result<BaseUrl, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| "expected an http:// URL (https is not supported)".to_string())?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if path.contains(['?', '#']) || path.contains(|c: char| c.is_whitespace() || c.is_control()) {
        return Err("the base URL takes a path only, no query, fragment or spaces".into());
    }
    if authority.contains('@') {
        // Said before the port is parsed, so that no error quotes a
        // password (`user:password@host` splits at its first ':').
        return Err("user information (user:password@) is not supported in the URL".into());
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let end = v6.find(']').ok_or("unclosed '[' in the host")?;
        let port = v6[end + 1..].strip_prefix(':');
        (&authority[..end + 2], port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host.contains('@') {
        return Err("expected a host name or address".into());
    }
    let port = match port {
        Some(p) => p.parse().map_err(|_| format!("invalid port '{p}'"))?,
        None => 80,
    };
    Ok(BaseUrl {
        host: host.to_string(),
        port,
        path: path.trim_end_matches('/').to_string(),
    })
}

/// The http store: the settings every thread shares.
#[derive(Debug)]
pub struct HttpStore {
    addrs: Vec<SocketAddr>,
    /// `Host:` header plus the configured extra headers, rendered once.
    fixed_headers: Vec<u8>,
    read: Template,
    insert: Template,
    update: Template,
    delete: Template,
    scan: Option<Template>,
    body: BodyEncoding,
    response: ResponseFormat,
    partial_update: bool,
    timeout: Option<Duration>,
    url: String,
}

/// The addresses the base URL's host resolves to.
fn resolve(base: &BaseUrl, url: &str) -> Result<Vec<SocketAddr>, StoreError> {
    let addrs: Vec<SocketAddr> = (
        base.host.trim_start_matches('[').trim_end_matches(']'),
        base.port,
    )
        .to_socket_addrs()
        .map_err(|e| StoreError::Open {
            store: "http".into(),
            message: format!("cannot resolve {url}: {e}"),
        })?
        .collect();
    if addrs.is_empty() {
        return Err(StoreError::Open {
            store: "http".into(),
            message: format!("{url} resolves to no address"),
        });
    }
    Ok(addrs)
}

/// The headers every request carries: `Host`, then `http.headers`' in
/// their order.
fn fixed_headers(props: &Properties, base: &BaseUrl) -> Result<Vec<u8>, StoreError> {
    let mut fixed_headers = Vec::new();
    let host = if base.port == 80 {
        base.host.clone()
    } else {
        format!("{}:{}", base.host, base.port)
    };
    write_header(&mut fixed_headers, "Host", &host);
    if let Some(extra) = props.get_opt(&HEADERS)? {
        let entries = extra.split('|').map(str::trim).filter(|e| !e.is_empty());
        for (number, entry) in entries.enumerate() {
            let (name, value) = entry
                .split_once(':')
                .map(|(n, v)| (n.trim(), v.trim()))
                .filter(|(n, v)| {
                    !n.is_empty() && n.bytes().all(is_token_char) && !v.contains(['\r', '\n'])
                })
                .ok_or_else(|| {
                    props.invalid(
                        HEADERS.decl(),
                        // The entry itself is not echoed: it may hold a
                        // credential (the value shown is redacted).
                        format!("entry {} is not a 'Name: value' header", number + 1),
                    )
                })?;
            write_header(&mut fixed_headers, name, value);
        }
    }
    Ok(fixed_headers)
}

impl HttpStore {
    /// Reads the `http.*` properties and resolves the server's address.
    /// No connection is made until a thread starts.
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for an invalid property (a URL that is not
    /// `http://`, an unknown placeholder, a custom preset without a
    /// template); [`StoreError::Open`] when the host name does not resolve.
    pub fn open(props: &Properties) -> Result<Self, StoreError> {
        let url = props.get(&URL)?;
        let base = parse_base_url(url.trim()).map_err(|r| props.invalid(URL.decl(), r))?;
        let addrs = resolve(&base, &url)?;
        let preset = props.get(&PRESET)?;
        let defaults = PresetDefaults::of(preset);
        let path = base.path.as_str();
        // A template whose URL the preset gives (`default`) or the
        // properties must set.
        let required = |method: (&Property<String>, &str),
                        url: &Property<String>,
                        default: Option<&'static str>|
         -> Result<Template, PropertyError> {
            let url_default = match default {
                Some(d) => d,
                None if props.is_set(url.decl()) => "",
                None => {
                    return Err(PropertyError::Missing {
                        name: url.name().to_string(),
                        meaning: format!("http.preset=custom needs it: {}", url.decl().doc),
                    })
                }
            };
            Template::parse(props, method, (url, url_default), path)
        };
        let read = required((&READ_METHOD, "GET"), &READ_URL, defaults.read)?;
        let insert = required(
            (&INSERT_METHOD, defaults.insert_method),
            &INSERT_URL,
            defaults.insert,
        )?;
        let delete = required(
            (&DELETE_METHOD, defaults.delete_method),
            &DELETE_URL,
            defaults.delete,
        )?;
        let update = if props.is_set(UPDATE_METHOD.decl()) || props.is_set(UPDATE_URL.decl()) {
            // Whatever is not set follows the insert's effective template.
            let mut t = Template::parse(
                props,
                (&UPDATE_METHOD, &insert.method),
                (&UPDATE_URL, "/"),
                path,
            )?;
            if !props.is_set(UPDATE_URL.decl()) {
                t.parts = insert.parts.clone();
            }
            t
        } else {
            insert.clone()
        };
        let scan = match (props.is_set(SCAN_URL.decl()), defaults.scan) {
            (false, None) => None,
            (_, d) => Some(Template::parse(
                props,
                (&SCAN_METHOD, "GET"),
                (&SCAN_URL, d.unwrap_or("")),
                path,
            )?),
        };
        let timeout = match props.get(&TIMEOUT)? {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        };
        let fixed_headers = fixed_headers(props, &base)?;
        Ok(HttpStore {
            addrs,
            fixed_headers,
            read,
            insert,
            update,
            delete,
            scan,
            body: props.get_opt(&BODY)?.unwrap_or(defaults.body),
            response: props.get_opt(&RESPONSE)?.unwrap_or(defaults.response),
            partial_update: props.get(&UPDATE_PARTIAL)?,
            timeout,
            url,
        })
    }

    /// Connects once, to check that a server listens at `http.url`
    /// (the descriptor's open does; [`HttpStore::open`] makes no
    /// connection).
    ///
    /// # Errors
    ///
    /// [`StoreError::Open`] when no connection could be made.
    pub fn check_reachable(&self) -> Result<(), StoreError> {
        self.connect().map(drop).map_err(|e| StoreError::Open {
            store: "http".into(),
            message: format!("cannot connect to {}: {e}", self.url),
        })
    }

    fn connect(&self) -> io::Result<TcpStream> {
        let mut last = None;
        for addr in &self.addrs {
            let attempt = match self.timeout {
                Some(t) => TcpStream::connect_timeout(addr, t),
                None => TcpStream::connect(addr),
            };
            match attempt {
                Ok(s) => {
                    s.set_nodelay(true)?;
                    s.set_read_timeout(self.timeout)?;
                    s.set_write_timeout(self.timeout)?;
                    return Ok(s);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")))
    }
}

fn write_header(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// A preset's default templates.
struct PresetDefaults {
    read: Option<&'static str>,
    insert: Option<&'static str>,
    insert_method: &'static str,
    delete: Option<&'static str>,
    delete_method: &'static str,
    scan: Option<&'static str>,
    body: BodyEncoding,
    response: ResponseFormat,
}

impl PresetDefaults {
    fn of(preset: Preset) -> Self {
        match preset {
            Preset::Simpleleveldb => PresetDefaults {
                read: Some("/get?key={key}&format=txt"),
                insert: Some("/put?key={key}&value={value}&format=txt"),
                insert_method: "GET",
                delete: Some("/del?key={key}&format=txt"),
                delete_method: "GET",
                // simpleleveldb needs an end key; %FF sorts after every
                // UTF-8 key.
                scan: Some("/range_match?start={key}&end=%FF&limit={count}&format=txt"),
                body: BodyEncoding::Base64,
                response: ResponseFormat::Lines,
            },
            Preset::Webdav => PresetDefaults {
                read: Some("/{table}/{key}"),
                insert: Some("/{table}/{key}"),
                insert_method: "PUT",
                delete: Some("/{table}/{key}"),
                delete_method: "DELETE",
                scan: None,
                body: BodyEncoding::Binary,
                response: ResponseFormat::Body,
            },
            Preset::Custom => PresetDefaults {
                read: None,
                insert: None,
                insert_method: "PUT",
                delete: None,
                delete_method: "DELETE",
                scan: None,
                body: BodyEncoding::Binary,
                response: ResponseFormat::Body,
            },
        }
    }
}

impl Store for HttpStore {
    fn engine_build(&self) -> ycsb_db::EngineBuild {
        // The engine runs in the server: its build is not visible here.
        ycsb_db::EngineBuild::remote()
    }

    fn thread(&self, _context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        let stream = self.connect().map_err(|source| StoreError::Io {
            context: format!("connecting to {}", self.url),
            source,
        })?;
        Ok(Box::new(HttpThread {
            store: self,
            conn: Some(Conn::new(stream)),
            request: Vec::with_capacity(4096),
            body: Vec::with_capacity(4096),
            scratch: Vec::with_capacity(4096),
            text: Vec::with_capacity(4096),
            stored: Record::new(),
            merged: Record::new(),
        }))
    }
}

/// Why an exchange produced no response.
enum Failure {
    /// No connection could be made, or the server did not answer in time.
    Unavailable,
    /// The connection broke or the answer was not HTTP.
    Broken,
}

impl Failure {
    fn status(&self) -> Status {
        match self {
            Failure::Unavailable => Status::ServiceUnavailable,
            Failure::Broken => Status::Error,
        }
    }

    fn of(e: &WireError) -> Self {
        match e {
            WireError::Io(e) if is_timeout(e) => Failure::Unavailable,
            _ => Failure::Broken,
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// What a request carries besides its template.
#[derive(Clone, Copy)]
struct Args<'a> {
    table: &'a str,
    key: &'a str,
    record: Option<&'a Record>,
    count: usize,
}

impl<'a> Args<'a> {
    /// A request about one key (not a scan), with the record it writes.
    fn one(table: &'a str, key: &'a str, record: Option<&'a Record>) -> Self {
        Args {
            table,
            key,
            record,
            count: 0,
        }
    }
}

/// One client thread: a keep-alive connection and reused buffers.
struct HttpThread<'a> {
    store: &'a HttpStore,
    conn: Option<Conn<TcpStream>>,
    /// The rendered request.
    request: Vec<u8>,
    /// The last response's body.
    body: Vec<u8>,
    /// Binary record encoding on its way to or from text.
    scratch: Vec<u8>,
    /// A record's body or text encoding.
    text: Vec<u8>,
    /// Update: the record as read.
    stored: Record,
    /// Update: the record to write back.
    merged: Record,
}

impl HttpThread<'_> {
    /// Renders the request for `template` into `self.request`.
    fn render(&mut self, template: &Template, args: Args<'_>) {
        let store = self.store;
        // The record is encoded once, as text for a {value} placeholder or
        // as the body otherwise.
        let with_body = args.record.is_some() && !template.has_value();
        self.text.clear();
        if let Some(record) = args.record {
            if template.has_value() || store.body == BodyEncoding::Base64 {
                encoding::encode_record_text(record, &mut self.scratch, &mut self.text);
            } else {
                encoding::encode_record(record, &mut self.text);
            }
        }
        let r = &mut self.request;
        r.clear();
        r.extend_from_slice(template.method.as_bytes());
        r.push(b' ');
        for part in &template.parts {
            match part {
                Part::Literal(bytes) => r.extend_from_slice(bytes),
                Part::Table => encoding::percent_encode(args.table.as_bytes(), r),
                Part::Key => encoding::percent_encode(args.key.as_bytes(), r),
                Part::Value => r.extend_from_slice(&self.text),
                Part::Count => {
                    let _ = write!(r, "{}", args.count);
                }
            }
        }
        r.extend_from_slice(b" HTTP/1.1\r\n");
        r.extend_from_slice(&store.fixed_headers);
        if with_body || template.method_has_body() {
            let len = if with_body { self.text.len() } else { 0 };
            let _ = write!(r, "Content-Length: {len}\r\n");
        }
        r.extend_from_slice(b"\r\n");
        if with_body {
            r.extend_from_slice(&self.text);
        }
    }

    /// Sends the rendered request and reads the answer's body into
    /// `self.body`, returning the status code.
    fn exchange(&mut self, head_request: bool) -> Result<u16, Failure> {
        let reused = self.conn.is_some();
        match self.try_exchange(head_request) {
            Ok(code) => Ok(code),
            // A keep-alive connection the server closed while idle fails
            // before any answer: send once more on a fresh connection.
            Err((false, _)) if reused => self.try_exchange(head_request).map_err(|(_, f)| f),
            Err((_, f)) => Err(f),
        }
    }

    /// One attempt; on failure, whether any byte of an answer had arrived.
    fn try_exchange(&mut self, head_request: bool) -> Result<u16, (bool, Failure)> {
        let mut conn = match self.conn.take() {
            Some(c) => c,
            None => Conn::new(
                self.store
                    .connect()
                    .map_err(|_| (true, Failure::Unavailable))?,
            ),
        };
        if let Err(e) = conn.stream().write_all(&self.request) {
            let timed_out = is_timeout(&e);
            return Err((
                timed_out,
                if timed_out {
                    Failure::Unavailable
                } else {
                    Failure::Broken
                },
            ));
        }
        let head_len = match conn.read_head(MAX_HEAD) {
            Ok(Some(n)) => n,
            Ok(None) => return Err((false, Failure::Broken)),
            Err(WireError::Io(e)) if !is_timeout(&e) && conn.buffered().is_empty() => {
                // Reset by a server that had closed the idle connection.
                return Err((false, Failure::Broken));
            }
            Err(e) => return Err((true, Failure::of(&e))),
        };
        let head = wire::parse_response(&conn.buffered()[..head_len])
            .map_err(|e| (true, Failure::of(&e)))?;
        conn.consume(head_len);
        if (100..200).contains(&head.status) {
            // An interim answer (100 Continue): the real one follows.
            return self.finish_interim(conn, head_request);
        }
        self.body.clear();
        conn.read_body(head.framing(head_request), MAX_BODY, &mut self.body)
            .map_err(|e| (true, Failure::of(&e)))?;
        if head.info.persistent() && head.framing(head_request) != wire::Framing::UntilClose {
            self.conn = Some(conn);
        }
        Ok(head.status)
    }

    fn finish_interim(
        &mut self,
        mut conn: Conn<TcpStream>,
        head_request: bool,
    ) -> Result<u16, (bool, Failure)> {
        loop {
            let n = match conn.read_head(MAX_HEAD) {
                Ok(Some(n)) => n,
                Ok(None) => return Err((true, Failure::Broken)),
                Err(e) => return Err((true, Failure::of(&e))),
            };
            let head =
                wire::parse_response(&conn.buffered()[..n]).map_err(|e| (true, Failure::of(&e)))?;
            conn.consume(n);
            if (100..200).contains(&head.status) {
                continue;
            }
            self.body.clear();
            conn.read_body(head.framing(head_request), MAX_BODY, &mut self.body)
                .map_err(|e| (true, Failure::of(&e)))?;
            if head.info.persistent() && head.framing(head_request) != wire::Framing::UntilClose {
                self.conn = Some(conn);
            }
            return Ok(head.status);
        }
    }

    /// Runs `template` and maps the answer to a status.
    fn call(&mut self, template: &Template, args: Args<'_>) -> Status {
        self.render(template, args);
        match self.exchange(template.method == "HEAD") {
            Ok(code) => status_for_code(code),
            Err(f) => f.status(),
        }
    }

    /// Decodes the record in `self.body` into `out`.
    fn decode_read(&mut self, fields: Fields<'_>, out: &mut Record) -> Status {
        let decoded = match self.store.response {
            ResponseFormat::Lines => {
                let line = self.body.split(|&c| c == b'\n').next().unwrap_or_default();
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                let value = match line.iter().rposition(|&c| c == b',') {
                    Some(comma) => &line[comma + 1..],
                    None => line,
                };
                encoding::decode_record_text(value, fields, &mut self.scratch, out)
            }
            ResponseFormat::Body => match self.store.body {
                BodyEncoding::Binary => encoding::decode_record(&self.body, fields, out),
                BodyEncoding::Base64 => {
                    let text = trim_ascii_end(&self.body);
                    encoding::decode_record_text(text, fields, &mut self.scratch, out)
                }
            },
        };
        match decoded {
            Ok(()) => Status::Ok,
            Err(_) => Status::UnexpectedState,
        }
    }
}

fn trim_ascii_end(bytes: &[u8]) -> &[u8] {
    let end = bytes
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(0, |e| e + 1);
    &bytes[..end]
}

impl StoreThread for HttpThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        let store = self.store;
        let args = Args::one(op.table, op.key, None);
        match self.call(&store.read, args) {
            Status::Ok => self.decode_read(op.fields, out),
            other => other,
        }
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        let store = self.store;
        let Some(template) = &store.scan else {
            return Status::NotImplemented;
        };
        let args = Args {
            table: op.table,
            key: op.start_key,
            record: None,
            count: op.count,
        };
        let status = self.call(template, args);
        if status != Status::Ok {
            return status;
        }
        for line in self.body.split(|&c| c == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            if out.len() == op.count {
                break;
            }
            let Some(comma) = line.iter().rposition(|&c| c == b',') else {
                return Status::UnexpectedState;
            };
            let Ok(key) = std::str::from_utf8(&line[..comma]) else {
                return Status::UnexpectedState;
            };
            let row = out.push_row(key);
            if encoding::decode_record_text(&line[comma + 1..], op.fields, &mut self.scratch, row)
                .is_err()
            {
                return Status::UnexpectedState;
            }
        }
        Status::Ok
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        let store = self.store;
        if store.partial_update {
            let args = Args::one(table, key, Some(values));
            return self.call(&store.update, args);
        }
        let mut stored = std::mem::take(&mut self.stored);
        stored.clear();
        let status = self.read(
            &ReadOp {
                table,
                key,
                fields: Fields::All,
            },
            &mut stored,
        );
        if status != Status::Ok {
            self.stored = stored;
            return status;
        }
        // Merge into a reused record instead of Record::merge_from, which
        // allocates a new one per call.
        let mut merged = std::mem::take(&mut self.merged);
        merged.clear();
        for field in stored.iter() {
            merged.push(field.name, values.get(field.name).unwrap_or(field.value));
        }
        for field in values.iter() {
            if stored.get(field.name).is_none() {
                merged.push(field.name, field.value);
            }
        }
        let args = Args::one(table, key, Some(&merged));
        let status = self.call(&store.update, args);
        self.stored = stored;
        self.merged = merged;
        status
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        let store = self.store;
        let args = Args::one(table, key, Some(values));
        self.call(&store.insert, args)
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        let store = self.store;
        let args = Args::one(table, key, None);
        self.call(&store.delete, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        pairs
            .iter()
            .fold(Properties::new(), |p, (k, v)| p.with(*k, v))
    }

    #[test]
    fn descriptor_opens_and_declares_every_property_once() {
        assert!(DESCRIPTOR.matches("HTTP") && DESCRIPTOR.matches("rest"));
        // The descriptor's open connects once: a real listener answers.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let p = props(&[("http.preset", "webdav"), ("http.url", &url)]);
        assert!((DESCRIPTOR.open)(&StoreContext::new(&p)).is_ok());
        // Nothing listens there any more: the store cannot be used.
        drop(listener);
        let Err(err) = (DESCRIPTOR.open)(&StoreContext::new(&p)) else {
            panic!("opened against a closed port");
        };
        assert!(matches!(err, StoreError::Open { .. }), "{err}");
        assert!(
            err.to_string()
                .contains(&format!("cannot connect to {url}")),
            "{err}"
        );
        let mut names: Vec<_> = PROPERTIES.iter().map(|d| d.name).collect();
        assert!(names.iter().all(|n| n.starts_with("http.")));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PROPERTIES.len());
    }

    #[test]
    fn base_urls_parse() {
        let b = parse_base_url("http://localhost:8080/dav/").unwrap();
        assert_eq!(
            (b.host.as_str(), b.port, b.path.as_str()),
            ("localhost", 8080, "/dav")
        );
        let b = parse_base_url("http://[::1]:81").unwrap();
        assert_eq!(
            (b.host.as_str(), b.port, b.path.as_str()),
            ("[::1]", 81, "")
        );
        assert_eq!(parse_base_url("http://example.org").unwrap().port, 80);
        assert!(parse_base_url("https://x").is_err());
        assert!(parse_base_url("http://x:port").is_err());
        assert!(parse_base_url("http://x/a?b").is_err());
        assert!(parse_base_url("http://").is_err());
        let e = parse_base_url("http://alice:hunter2@h/").unwrap_err();
        assert!(!e.contains("hunter2"), "{e}");
    }

    #[test]
    fn templates_parse_and_reject_unknown_placeholders() {
        let parts = parse_url_template("/t/{table}/{key}?v={value}&n={count}", "/base").unwrap();
        assert_eq!(
            parts,
            vec![
                Part::Literal(b"/base/t/".to_vec()),
                Part::Table,
                Part::Literal(b"/".to_vec()),
                Part::Key,
                Part::Literal(b"?v=".to_vec()),
                Part::Value,
                Part::Literal(b"&n=".to_vec()),
                Part::Count,
            ]
        );
        assert!(parse_url_template("/{tabel}", "")
            .unwrap_err()
            .contains("{tabel}"));
        assert!(parse_url_template("/{key", "").is_err());
        assert!(parse_url_template("get", "").is_err());
        assert!(parse_url_template("/a b", "").is_err());
    }

    #[test]
    fn status_mapping() {
        for (code, status) in [
            (200, Status::Ok),
            (201, Status::Ok),
            (204, Status::Ok),
            (404, Status::NotFound),
            (403, Status::Forbidden),
            (400, Status::BadRequest),
            (409, Status::BadRequest),
            (500, Status::Error),
            (502, Status::Error),
            (501, Status::NotImplemented),
            (503, Status::ServiceUnavailable),
            (302, Status::Error),
        ] {
            assert_eq!(status_for_code(code), status, "{code}");
        }
    }

    #[test]
    fn presets_and_overrides() {
        let s = HttpStore::open(&props(&[("http.url", "http://127.0.0.1:1/kv")])).unwrap();
        assert_eq!(s.read.method, "GET");
        assert_eq!(s.read.parts[0], Part::Literal(b"/kv/get?key=".to_vec()));
        assert_eq!(s.update, s.insert);
        assert!(s.scan.is_some());
        assert_eq!(
            (s.body, s.response),
            (BodyEncoding::Base64, ResponseFormat::Lines)
        );

        let s = HttpStore::open(&props(&[
            ("http.preset", "webdav"),
            ("http.update.method", "PATCH"),
        ]))
        .unwrap();
        assert_eq!(
            (s.insert.method.as_str(), s.update.method.as_str()),
            ("PUT", "PATCH")
        );
        assert_eq!(s.update.parts, s.insert.parts);
        assert!(s.scan.is_none());
        assert_eq!(
            (s.body, s.response),
            (BodyEncoding::Binary, ResponseFormat::Body)
        );
    }

    #[test]
    fn bad_properties_are_errors_naming_the_property() {
        let err = HttpStore::open(&props(&[("http.preset", "custom")])).unwrap_err();
        assert!(err.to_string().contains("http.read.url"), "{err}");
        let err = HttpStore::open(&props(&[("http.read.url", "/get?k={ky}")])).unwrap_err();
        assert!(
            err.to_string().contains("http.read.url") && err.to_string().contains("{ky}"),
            "{err}"
        );
        let err = HttpStore::open(&props(&[("http.url", "https://x")])).unwrap_err();
        assert!(err.to_string().contains("http.url"), "{err}");
        let err = HttpStore::open(&props(&[("http.insert.method", "P UT")])).unwrap_err();
        assert!(err.to_string().contains("http.insert.method"), "{err}");
        let err = HttpStore::open(&props(&[("http.headers", "X-A: 1|broken")])).unwrap_err();
        assert!(err.to_string().contains("broken"), "{err}");
        let err = HttpStore::open(&props(&[("http.url", "http://host.invalid:80")])).unwrap_err();
        assert!(err.to_string().contains("host.invalid"), "{err}");
    }

    #[test]
    fn requests_render_with_encoded_key_and_value() {
        let s = HttpStore::open(&props(&[("http.headers", "X-Token: t1 | Accept: */*")])).unwrap();
        let mut t = HttpThread {
            store: &s,
            conn: None,
            request: Vec::new(),
            body: Vec::new(),
            scratch: Vec::new(),
            text: Vec::new(),
            stored: Record::new(),
            merged: Record::new(),
        };
        let mut r = Record::new();
        r.push("f", b"v");
        let args = Args {
            table: "t",
            key: "a b&c",
            record: Some(&r),
            count: 0,
        };
        t.render(&s.insert, args);
        let mut value = Vec::new();
        encoding::encode_record_text(&r, &mut Vec::new(), &mut value);
        let expected = format!(
            "GET /put?key=a%20b%26c&value={}&format=txt HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Token: t1\r\nAccept: */*\r\n\r\n",
            String::from_utf8(value).unwrap()
        );
        assert_eq!(String::from_utf8_lossy(&t.request), expected);

        let w = HttpStore::open(&props(&[
            ("http.preset", "webdav"),
            ("http.url", "http://127.0.0.1:9/dav"),
        ]))
        .unwrap();
        t.store = &w;
        t.render(&w.insert, args);
        let mut body = Vec::new();
        encoding::encode_record(&r, &mut body);
        let mut expected = format!(
            "PUT /dav/t/a%20b%26c HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        expected.extend_from_slice(&body);
        assert_eq!(t.request, expected);
    }
}
