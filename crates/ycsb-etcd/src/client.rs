//! One connection to one etcd member: HTTP/1.1 keep-alive requests to the
//! gRPC gateway, plain or TLS, with the thread's auth token.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};

use ycsb_db::StoreError;
use ycsb_http::wire::{parse_response, Conn, Framing, WireError};

use crate::json;
use crate::EtcdConfig;

/// Longest response head accepted.
const HEAD_LIMIT: usize = 64 * 1024;
/// Longest response body accepted: a scan of many large records.
const BODY_LIMIT: usize = 256 * 1024 * 1024;

/// One member's client URL.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    host: String,
    port: u16,
    pub(crate) tls: bool,
    /// The `Host:` header line, rendered once.
    host_header: String,
}

impl Endpoint {
    /// `host:port`, `http://host:port` or `https://host:port`; a bare one
    /// uses TLS when `tls_default` (a CA file is set).
    pub(crate) fn parse(entry: &str, tls_default: bool) -> Result<Self, String> {
        let (tls, rest) = if let Some(rest) = entry.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = entry.strip_prefix("http://") {
            (false, rest)
        } else if entry.contains("://") {
            return Err(format!(
                "'{entry}': only http:// and https:// are supported"
            ));
        } else {
            (tls_default, entry)
        };
        let rest = rest.trim_end_matches('/');
        if rest
            .split('/')
            .next()
            .is_some_and(|authority| authority.contains('@'))
        {
            // Not a host name to look up (and echo in errors): etcd's
            // credentials are properties, the password a secret one.
            return Err(
                "user information (user:password@) is not supported in an endpoint; \
                 set etcd.user and etcd.password"
                    .to_string(),
            );
        }
        let bad = || format!("'{entry}' is not host:port");
        let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
            let (addr, tail) = inner.split_once(']').ok_or_else(bad)?;
            (addr, tail.strip_prefix(':').ok_or_else(bad)?)
        } else {
            rest.rsplit_once(':').ok_or_else(bad)?
        };
        let port: u16 = port.parse().map_err(|_| bad())?;
        if host.is_empty() || port == 0 {
            return Err(bad());
        }
        let authority = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        Ok(Self {
            host: host.to_string(),
            port,
            tls,
            host_header: format!("Host: {authority}\r\n"),
        })
    }

    fn addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok((self.host.as_str(), self.port).to_socket_addrs()?.collect())
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "https://" } else { "" };
        if self.host.contains(':') {
            write!(f, "{scheme}[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{scheme}{}:{}", self.host, self.port)
        }
    }
}

/// How connections are made.
pub(crate) enum Transport {
    /// Plain TCP.
    Plain,
    /// TLS with this connector (its CA and client identity).
    Tls(native_tls::TlsConnector),
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Plain => "Plain",
            Transport::Tls(_) => "Tls",
        })
    }
}

impl Transport {
    /// A TLS transport trusting `cacert` (besides the system's roots) and
    /// presenting `identity` (certificate and key files) when given.
    pub(crate) fn tls(
        cacert: Option<&str>,
        identity: Option<(&str, &str)>,
    ) -> Result<Self, StoreError> {
        // Regular files only, and small ones: a FIFO named here blocked
        // the open forever, a device would be read until memory ran out.
        let read = |property: &str, path: &str| {
            ycsb_db::read_input(std::path::Path::new(path), ycsb_db::CONFIG_FILE_LIMIT).map_err(
                |e| StoreError::Io {
                    context: format!("{property}={path}: cannot read it"),
                    source: e.into(),
                },
            )
        };
        let invalid = |path: &str, e: native_tls::Error| StoreError::Open {
            store: "etcd".into(),
            message: format!("{path}: {e}"),
        };
        for load in [crate::lazy_crypto::load, crate::lazy_ssl::load] {
            load().map_err(|e| StoreError::open("etcd", e))?;
        }
        let mut builder = native_tls::TlsConnector::builder();
        if let Some(path) = cacert {
            let cert = native_tls::Certificate::from_pem(&read(crate::CACERT_FILE.name(), path)?)
                .map_err(|e| invalid(path, e))?;
            builder.add_root_certificate(cert);
        }
        if let Some((cert, key)) = identity {
            let id = native_tls::Identity::from_pkcs8(
                &read(crate::CERT_FILE.name(), cert)?,
                &read(crate::KEY_FILE.name(), key)?,
            )
            .map_err(|e| invalid(cert, e))?;
            builder.identity(id);
        }
        let connector = builder.build().map_err(|e| StoreError::Open {
            store: "etcd".into(),
            message: format!("TLS setup: {e}"),
        })?;
        Ok(Transport::Tls(connector))
    }
}

/// A connection, plain or TLS.
enum Stream {
    Plain(TcpStream),
    Tls(Box<native_tls::TlsStream<TcpStream>>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// Why a request got no answer from etcd.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The member cannot be reached, timed out or broke the connection:
    /// the thread moves to the next member.
    Unreachable(String),
    /// The member answered with something that is not the gateway's
    /// protocol.
    Protocol(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Unreachable(m) | Failure::Protocol(m) => f.write_str(m),
        }
    }
}

/// A gateway answer: the HTTP status and the body in [`Client::body`].
pub(crate) struct Answer {
    pub(crate) code: u16,
}

/// One member's connection with reused buffers.
pub(crate) struct Client {
    endpoint: usize,
    conn: Option<Conn<Stream>>,
    request: Vec<u8>,
    /// The last answer's body.
    pub(crate) body: Vec<u8>,
    /// `Authorization: <token>\r\n`, when authenticated.
    auth_header: Vec<u8>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.endpoint)
            .field("connected", &self.conn.is_some())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client of member `endpoint`, not yet connected.
    pub(crate) fn new(endpoint: usize) -> Self {
        Self {
            endpoint,
            conn: None,
            request: Vec::with_capacity(4096),
            body: Vec::with_capacity(4096),
            auth_header: Vec::new(),
        }
    }

    /// The member this client talks to.
    pub(crate) fn endpoint(&self) -> usize {
        self.endpoint
    }

    /// Drops the connection and moves on to the next member.
    pub(crate) fn next_member(&mut self, config: &EtcdConfig) {
        self.conn = None;
        self.auth_header.clear();
        self.endpoint = (self.endpoint + 1) % config.endpoints.len();
    }

    /// Connects to this client's member (authenticating when a user is
    /// set) unless connected.
    pub(crate) fn ensure_connected(&mut self, config: &EtcdConfig) -> Result<(), Failure> {
        if self.conn.is_some() {
            return Ok(());
        }
        let endpoint = &config.endpoints[self.endpoint];
        let stream = open_stream(endpoint, config)
            .map_err(|e| Failure::Unreachable(format!("{endpoint}: {e}")))?;
        self.conn = Some(Conn::new(stream));
        if config.credentials.is_some() {
            self.authenticate(config)?;
        }
        Ok(())
    }

    /// Connects to this client's member or, failing that, to each next
    /// one in turn; the error lists why each failed.
    pub(crate) fn connect_any(&mut self, config: &EtcdConfig) -> Result<(), String> {
        let mut failures = Vec::new();
        for _ in 0..config.endpoints.len() {
            match self.ensure_connected(config) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    failures.push(e.to_string());
                    self.next_member(config);
                }
            }
        }
        Err(format!(
            "no member could be reached ({})",
            failures.join("; ")
        ))
    }

    fn authenticate(&mut self, config: &EtcdConfig) -> Result<(), Failure> {
        let Some((user, password)) = &config.credentials else {
            return Ok(());
        };
        self.auth_header.clear();
        let body = json::authenticate_request(user, &password.0);
        let answer = self.post(config, "/v3/auth/authenticate", body.as_bytes())?;
        if answer.code != 200 {
            let error = json::error_of(&self.body);
            // An authentication failure is not the member's fault: it is
            // reported as such, not as an unreachable member.
            return Err(Failure::Protocol(format!(
                "authentication as '{user}' failed: {}",
                error.message
            )));
        }
        let token = json::token_of(&self.body)
            .ok_or_else(|| Failure::Protocol("authentication answer without a token".into()))?;
        self.auth_header.clear();
        self.auth_header.extend_from_slice(b"Authorization: ");
        self.auth_header.extend_from_slice(token.as_bytes());
        self.auth_header.extend_from_slice(b"\r\n");
        Ok(())
    }

    /// Re-authenticates after the member said the token expired.
    pub(crate) fn refresh_token(&mut self, config: &EtcdConfig) -> Result<(), Failure> {
        self.authenticate(config)
    }

    /// Posts `body` to `path` and reads the answer's body into
    /// [`Client::body`], connecting first if needed. A request that fails
    /// on a reused connection before any answer is sent once more on a new
    /// connection (the member may have closed an idle one).
    pub(crate) fn post(
        &mut self,
        config: &EtcdConfig,
        path: &str,
        body: &[u8],
    ) -> Result<Answer, Failure> {
        self.ensure_connected(config)?;
        let endpoint = &config.endpoints[self.endpoint];
        self.request.clear();
        self.request.extend_from_slice(b"POST ");
        self.request.extend_from_slice(path.as_bytes());
        self.request.extend_from_slice(b" HTTP/1.1\r\n");
        self.request
            .extend_from_slice(endpoint.host_header.as_bytes());
        self.request
            .extend_from_slice(b"Content-Type: application/json\r\n");
        self.request.extend_from_slice(&self.auth_header);
        self.request.extend_from_slice(b"Content-Length: ");
        self.request
            .extend_from_slice(itoa(body.len(), &mut [0u8; 20]).as_bytes());
        self.request.extend_from_slice(b"\r\n\r\n");
        self.request.extend_from_slice(body);
        match self.exchange() {
            Ok(answer) => Ok(answer),
            Err(Attempt::BeforeAnswer(_)) => {
                self.conn = None;
                self.ensure_connected(config)?;
                self.exchange().map_err(|e| self.broken(config, e))
            }
            Err(e) => Err(self.broken(config, e)),
        }
    }

    fn broken(&mut self, config: &EtcdConfig, attempt: Attempt) -> Failure {
        self.conn = None;
        let endpoint = &config.endpoints[self.endpoint];
        match attempt {
            Attempt::BeforeAnswer(e) | Attempt::During(e) => {
                Failure::Unreachable(format!("{endpoint}: {e}"))
            }
            Attempt::Malformed(e) => Failure::Protocol(format!("{endpoint}: {e}")),
        }
    }

    fn exchange(&mut self) -> Result<Answer, Attempt> {
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| Attempt::BeforeAnswer("not connected".into()))?;
        conn.stream()
            .write_all(&self.request)
            .map_err(|e| Attempt::BeforeAnswer(e.to_string()))?;
        let head_len = match conn.read_head(HEAD_LIMIT) {
            Ok(Some(n)) => n,
            Ok(None) => return Err(Attempt::BeforeAnswer("connection closed".into())),
            Err(WireError::Io(e))
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
                ) =>
            {
                return Err(Attempt::BeforeAnswer(e.to_string()))
            }
            Err(WireError::Io(e)) => return Err(Attempt::During(e.to_string())),
            Err(e) => return Err(Attempt::Malformed(e.to_string())),
        };
        let head = parse_response(&conn.buffered()[..head_len])
            .map_err(|e| Attempt::Malformed(e.to_string()))?;
        conn.consume(head_len);
        let framing: Framing = head.framing(false);
        self.body.clear();
        conn.read_body(framing, BODY_LIMIT, &mut self.body)
            .map_err(|e| match e {
                WireError::Io(e) => Attempt::During(e.to_string()),
                e => Attempt::Malformed(e.to_string()),
            })?;
        if !head.info.persistent() {
            self.conn = None;
        }
        Ok(Answer { code: head.status })
    }

    /// The member's `Status`: version, leader, raft term and index, and
    /// database size.
    pub(crate) fn member_status(
        &mut self,
        config: &EtcdConfig,
    ) -> Result<json::MemberStatus, String> {
        let answer = self
            .post(config, "/v3/maintenance/status", b"{}")
            .map_err(|e| e.to_string())?;
        if answer.code != 200 {
            return Err(json::error_of(&self.body).message);
        }
        json::member_status(&self.body).map_err(|e| format!("unexpected status answer: {e}"))
    }
}

/// How one attempt at an exchange failed.
enum Attempt {
    /// Nothing of an answer arrived: the request may be sent again.
    BeforeAnswer(String),
    /// The connection broke or timed out mid-answer.
    During(String),
    /// The answer is not HTTP.
    Malformed(String),
}

fn open_stream(endpoint: &Endpoint, config: &EtcdConfig) -> io::Result<Stream> {
    let mut last = None;
    for addr in endpoint.addrs()? {
        match TcpStream::connect_timeout(&addr, config.dial_timeout) {
            Ok(tcp) => {
                tcp.set_nodelay(true)?;
                tcp.set_read_timeout(Some(config.timeout))?;
                tcp.set_write_timeout(Some(config.timeout))?;
                return match (&config.transport, endpoint.tls) {
                    (Transport::Tls(connector), true) => connector
                        .connect(&endpoint.host, tcp)
                        .map(|s| Stream::Tls(Box::new(s)))
                        .map_err(|e| io::Error::other(format!("TLS: {e}"))),
                    _ => Ok(Stream::Plain(tcp)),
                };
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")))
}

/// `n` in decimal, without allocating.
fn itoa(mut n: usize, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).unwrap_or("0")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 33 item 5: a FIFO named as the CA file blocked the open
    /// forever; it is refused, naming the property.
    #[test]
    fn a_fifo_as_certificate_file_is_refused_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("ca.pem");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        assert!(made, "mkfifo failed");
        let path = fifo.display().to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(Transport::tls(Some(&path), None).map(|_| ()));
        });
        let err = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the open waited on the FIFO")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("etcd.cacert_file=") && err.contains("a FIFO, not a regular file"),
            "{err}"
        );
    }

    #[test]
    fn endpoints_parse() {
        for (entry, tls_default, shown, tls) in [
            ("127.0.0.1:2379", false, "127.0.0.1:2379", false),
            ("127.0.0.1:2379", true, "https://127.0.0.1:2379", true),
            ("http://h:1/", true, "h:1", false),
            ("https://[::1]:5", false, "https://[::1]:5", true),
        ] {
            let e = Endpoint::parse(entry, tls_default).unwrap();
            assert_eq!((e.to_string().as_str(), e.tls), (shown, tls), "{entry}");
        }
        assert_eq!(
            Endpoint::parse("[::1]:5", false).unwrap().host_header,
            "Host: [::1]:5\r\n"
        );
        for bad in ["h", "h:x", ":1", "h:0", "unix:///x", "[::1]"] {
            assert!(Endpoint::parse(bad, false).is_err(), "{bad}");
        }
    }

    #[test]
    fn itoa_writes_decimal() {
        for n in [0usize, 7, 10, 4096, usize::MAX] {
            assert_eq!(itoa(n, &mut [0; 20]), n.to_string());
        }
    }
}
