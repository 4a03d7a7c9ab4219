//! Who may use a server: the password both servers share, and the rule
//! that a server reachable from other hosts has one.
//!
//! A server listening on a loopback address serves whoever runs on the
//! machine, as a benchmark on one host needs; any other address (the
//! unspecified address, a network interface's) is refused without a
//! password ([`require_password`], which [`crate::serve`] applies to both
//! protocols). With a password set, on any
//! address, a RESP client must `AUTH` first and an HTTP client must send
//! `Authorization: Bearer <password>` with every request.
//!
//! The password comes from `serve.password` or, better (a command line is
//! visible to every user of the machine), from the file that
//! `serve.password_file` names. Both names are secrets by the one rule of
//! [`ycsb_db::is_secret`]: neither value is ever shown.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

use ycsb_db::{Properties, Property, PropertyDecl, PropertyError};

/// `serve.password`: what clients must present.
pub const PASSWORD: Property<String> = Property::optional(
    "serve.password",
    "Password clients of ycsb serve must present: over RESP with AUTH (the password alone, or the user default and the password) before any other command, over HTTP as a bearer token (Authorization: Bearer, then the password) on every request. Required to serve on an address other than loopback. Never printed; prefer serve.password_file, since a command line is visible to every user of the machine.",
)
.secret();

/// `serve.password_file`: a file holding the password.
pub const PASSWORD_FILE: Property<PathBuf> = Property::optional(
    "serve.password_file",
    "File whose text is the serve.password (one final newline is not part of it); the file is read once at start. Never printed.",
)
.secret();

/// Every property of the servers' authentication.
pub const PROPERTIES: &[&PropertyDecl] = &[PASSWORD.decl(), PASSWORD_FILE.decl()];

/// The longest password file read: a password, not a document.
const MAX_PASSWORD_FILE: u64 = 64 << 10;

/// The password clients must present. Its `Debug` form never shows it,
/// and comparing it takes the same time whatever the candidate shares
/// with it.
#[derive(Clone)]
pub struct Password(Box<[u8]>);

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

impl PartialEq for Password {
    fn eq(&self, other: &Self) -> bool {
        self.matches(&other.0)
    }
}

impl Eq for Password {}

impl Password {
    /// A password of these bytes, `None` when empty (an empty password
    /// would let anyone in).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Option<Self> {
        let bytes = bytes.into();
        (!bytes.is_empty()).then(|| Self(bytes.into_boxed_slice()))
    }

    /// Reads `serve.password` or the file `serve.password_file` names
    /// (read with [`ycsb_db::read_input_to_string`]; one final newline,
    /// `\n` or `\r\n`, is not part of the password); `None` when neither
    /// is set.
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] (its value redacted) when both are set, when
    /// the password is empty, or when the file cannot be read.
    pub fn from_properties(props: &Properties) -> Result<Option<Self>, PropertyError> {
        let given = props.get_opt(&PASSWORD)?;
        let file = props.get_opt(&PASSWORD_FILE)?;
        let (text, decl) = match (given, file) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => {
                return Err(PropertyError::Conflict {
                    message: format!(
                        "serve.password ({}) and serve.password_file ({}) are both set: set one",
                        origin(props, PASSWORD.decl()),
                        origin(props, PASSWORD_FILE.decl()),
                    ),
                })
            }
            (Some(text), None) => (text, PASSWORD.decl()),
            (None, Some(path)) => {
                // The path is not echoed: a password given here by mistake
                // would be.
                let text =
                    ycsb_db::read_input_to_string(&path, MAX_PASSWORD_FILE).map_err(|e| {
                        props.invalid(PASSWORD_FILE.decl(), format!("cannot read the file: {e}"))
                    })?;
                let text = text
                    .strip_suffix('\n')
                    .map(|t| t.strip_suffix('\r').unwrap_or(t))
                    .unwrap_or(&text)
                    .to_string();
                (text, PASSWORD_FILE.decl())
            }
        };
        Self::new(text)
            .map(Some)
            .ok_or_else(|| props.invalid(decl, "the password is empty"))
    }

    /// Whether `candidate` is the password, in a time that depends only
    /// on the candidate's length: no prefix of the password can be found
    /// by timing answers.
    pub fn matches(&self, candidate: &[u8]) -> bool {
        let expected = &self.0;
        let mut difference = u8::from(candidate.len() != expected.len());
        for (i, &byte) in candidate.iter().enumerate() {
            difference |= byte ^ expected[i % expected.len()];
        }
        std::hint::black_box(difference) == 0
    }
}

/// Where a property's value came from, for a message.
fn origin(props: &Properties, decl: &PropertyDecl) -> String {
    props
        .raw(decl)
        .map_or_else(|| "unset".to_string(), |raw| raw.origin.to_string())
}

/// A server would be reachable from other hosts without a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{addr} is reachable from other hosts and {protocol} has no password: set serve.password \
     (or serve.password_file), or serve on loopback (127.0.0.1)"
)]
pub struct Unprotected {
    /// `RESP` or `HTTP`.
    pub protocol: &'static str,
    /// The address asked for.
    pub addr: SocketAddr,
}

/// Whether `addr` reaches only this machine: a loopback address (an
/// IPv4-mapped IPv6 one included).
pub fn is_loopback(addr: SocketAddr) -> bool {
    addr.ip().to_canonical().is_loopback()
}

/// The rule for serving: any address but loopback needs a password.
///
/// # Errors
///
/// [`Unprotected`] when `addr` is not loopback and `password` is `None`.
pub fn require_password(
    protocol: &'static str,
    addr: SocketAddr,
    password: Option<&Password>,
) -> Result<(), Unprotected> {
    if password.is_none() && !is_loopback(addr) {
        return Err(Unprotected { protocol, addr });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    #[test]
    fn passwords_match_exactly() {
        let pw = Password::new("s3cret").unwrap();
        assert!(pw.matches(b"s3cret"));
        for wrong in [
            &b""[..],
            b"s3cre",
            b"s3cret ",
            b"S3cret",
            b"s3cret\n",
            b"s3crets3cret",
        ] {
            assert!(!pw.matches(wrong), "{:?}", String::from_utf8_lossy(wrong));
        }
        assert!(Password::new("").is_none());
        assert_eq!(format!("{pw:?}"), "Password(<redacted>)");
    }

    #[test]
    fn the_password_names_are_secrets() {
        for name in ["serve.password", "serve.password_file"] {
            assert!(ycsb_db::is_secret(name, PROPERTIES), "{name}");
            assert!(ycsb_db::is_secret(name, &[]), "{name}: by its name alone");
        }
    }

    #[test]
    fn the_password_comes_from_the_property_or_a_file() {
        assert_eq!(Password::from_properties(&Properties::new()).unwrap(), None);
        let given = Properties::new().with("serve.password", "pw1");
        assert_eq!(
            Password::from_properties(&given).unwrap(),
            Password::new("pw1")
        );
        let dir = tempfile::tempdir().unwrap();
        for (text, expected) in [
            ("pw2\n", "pw2"),
            ("pw2\r\n", "pw2"),
            ("pw2", "pw2"),
            ("pw2\n\n", "pw2\n"),
        ] {
            let path = dir.path().join("pw");
            std::fs::write(&path, text).unwrap();
            let props = Properties::new().with("serve.password_file", path.display());
            assert_eq!(
                Password::from_properties(&props).unwrap(),
                Password::new(expected),
                "{text:?}"
            );
        }
    }

    #[test]
    fn bad_passwords_are_refused_without_showing_them() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        let missing = dir.path().join("hunter2-missing");
        let cases = [
            (Properties::new().with("serve.password", ""), "empty"),
            (
                Properties::new().with("serve.password_file", empty.display()),
                "empty",
            ),
            (
                Properties::new().with("serve.password_file", missing.display()),
                "No such file",
            ),
            (
                Properties::new().with("serve.password_file", dir.path().display()),
                "directory",
            ),
            (
                Properties::new()
                    .with("serve.password", "hunter2")
                    .with("serve.password_file", empty.display()),
                "both set",
            ),
        ];
        for (props, expected) in cases {
            let message = Password::from_properties(&props).unwrap_err().to_string();
            assert!(message.contains(expected), "{message}");
            assert!(!message.contains("hunter2"), "{message}");
            assert!(!message.contains('\n'), "{message}");
        }
    }

    #[test]
    fn only_loopback_serves_without_a_password() {
        let at = |ip: IpAddr| SocketAddr::new(ip, 6379);
        let pw = Password::new("pw");
        for ip in [
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
            IpAddr::V6(Ipv6Addr::LOCALHOST),
            IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped()),
        ] {
            assert!(require_password("RESP", at(ip), None).is_ok(), "{ip}");
        }
        for ip in [
            IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            IpAddr::V4(Ipv4Addr::new(192, 168, 1, 5)),
            IpAddr::V6(Ipv4Addr::UNSPECIFIED.to_ipv6_mapped()),
        ] {
            let e = require_password("HTTP", at(ip), None).unwrap_err();
            assert!(e.to_string().contains("serve.password"), "{e}");
            assert!(require_password("HTTP", at(ip), pw.as_ref()).is_ok());
        }
    }
}
