//! JDBC URLs as Java YCSB's `db.url` holds them: `jdbc:postgresql://host[:port][/database][?user=..&password=..]`
//! (and `jdbc:mysql://...`), several of them separated by `;` as Java's
//! `JdbcDBClient` separates its shards (or by `,` before `jdbc:`).

use std::fmt;

/// Which server a URL speaks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// PostgreSQL (`jdbc:postgresql:`).
    Postgres,
    /// MySQL or MariaDB (`jdbc:mysql:`, `jdbc:mariadb:`).
    MySql,
}

impl Dialect {
    /// The server's default port.
    pub fn default_port(self) -> u16 {
        match self {
            Dialect::Postgres => 5432,
            Dialect::MySql => 3306,
        }
    }

    /// The URL scheme after `jdbc:`.
    pub fn scheme(self) -> &'static str {
        match self {
            Dialect::Postgres => "postgresql",
            Dialect::MySql => "mysql",
        }
    }
}

/// One shard: where it is and who to log in as (a password given in the URL
/// is kept apart and never shown).
#[derive(Clone, PartialEq, Eq)]
pub struct ShardUrl {
    /// The server kind.
    pub dialect: Dialect,
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Database name (empty: the server's default for the user).
    pub database: String,
    /// `user=` of the URL, if given.
    pub user: Option<String>,
    /// `password=` of the URL, if given.
    pub password: Option<String>,
}

impl fmt::Debug for ShardUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for ShardUrl {
    /// The URL without its credentials: `jdbc:postgresql://127.0.0.1:5432/db`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(
            f,
            "jdbc:{}://{host}:{}/{}",
            self.dialect.scheme(),
            self.port,
            self.database
        )
    }
}

/// URL parameters understood; others are refused rather than ignored.
const PARAMETERS: &[&str] = &["user", "password", "reWriteBatchedInserts"];

/// Splits Java's `db.url` into its shards' URLs: `;`-separated as Java
/// splits them, or `,` immediately before `jdbc:`.
pub fn split_urls(urls: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in urls.split(';') {
        let mut current: Option<String> = None;
        for piece in part.split(',') {
            match current.as_mut() {
                Some(url) if !piece.trim_start().starts_with("jdbc:") => {
                    url.push(',');
                    url.push_str(piece);
                }
                _ => {
                    out.extend(current.take());
                    current = Some(piece.trim_start().to_string());
                }
            }
        }
        out.extend(current);
    }
    for url in &mut out {
        *url = url.trim().to_string();
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Parses one JDBC URL.
///
/// # Errors
///
/// A sentence saying what is wrong (no password in it).
pub fn parse(url: &str) -> Result<ShardUrl, String> {
    let rest = url
        .strip_prefix("jdbc:")
        .ok_or("a JDBC URL starts with jdbc:")?;
    let (scheme, rest) = rest.split_once("://").ok_or(
        "expected jdbc:postgresql://host:port/database or jdbc:mysql://host:port/database",
    )?;
    let dialect = match scheme.to_ascii_lowercase().as_str() {
        "postgresql" => Dialect::Postgres,
        "mysql" | "mariadb" => Dialect::MySql,
        other => {
            return Err(format!(
                "'jdbc:{other}:' is not a server this store speaks to (postgresql, mysql, mariadb)"
            ))
        }
    };
    let (location, query) = match rest.split_once('?') {
        Some((l, q)) => (l, Some(q)),
        None => (rest, None),
    };
    let (authority, database) = match location.split_once('/') {
        Some((a, d)) => (a, d),
        None => (location, ""),
    };
    if authority.contains('@') {
        return Err(
            "credentials go in db.user and db.passwd (or ?user=&password=), not before the host"
                .into(),
        );
    }
    if authority.contains(',') {
        return Err("several hosts in one URL (failover) are not supported: give one URL per shard, separated by ;".into());
    }
    let (host, port) = host_port(authority, dialect.default_port())?;
    let mut shard = ShardUrl {
        dialect,
        host,
        port,
        database: database.to_string(),
        user: None,
        password: None,
    };
    for pair in query.into_iter().flat_map(|q| q.split('&')) {
        if pair.is_empty() {
            continue;
        }
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "user" => shard.user = Some(value.to_string()),
            "password" => shard.password = Some(value.to_string()),
            // Batched inserts are always sent as one transaction here.
            "reWriteBatchedInserts" => {}
            other => {
                return Err(format!(
                    "URL parameter '{other}' is not understood (understood: {})",
                    PARAMETERS.join(", ")
                ))
            }
        }
    }
    Ok(shard)
}

fn host_port(authority: &str, default_port: u16) -> Result<(String, u16), String> {
    let bad_port = |p: &str| format!("'{p}' is not a port (1-65535)");
    let port = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| bad_port(p))
    };
    if let Some(rest) = authority.strip_prefix('[') {
        let (addr, tail) = rest.split_once(']').ok_or("an IPv6 host lacks its ]")?;
        let port = match tail.strip_prefix(':') {
            Some(p) => port(p)?,
            None if tail.is_empty() => default_port,
            None => return Err(format!("'{tail}' after the host")),
        };
        return Ok((addr.to_string(), port));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, port(p)?),
        None => (authority, default_port),
    };
    if host.is_empty() {
        return Err("no host".into());
    }
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javas_urls_are_read() {
        let u = parse("jdbc:postgresql://db1:6543/ycsb?user=u&password=p").unwrap();
        assert_eq!(u.dialect, Dialect::Postgres);
        assert_eq!((u.host.as_str(), u.port), ("db1", 6543));
        assert_eq!(u.database, "ycsb");
        assert_eq!(u.user.as_deref(), Some("u"));
        assert_eq!(u.password.as_deref(), Some("p"));
        assert_eq!(u.to_string(), "jdbc:postgresql://db1:6543/ycsb");
        let m = parse("jdbc:mysql://127.0.0.1/test").unwrap();
        assert_eq!((m.dialect, m.port), (Dialect::MySql, 3306));
        let v6 = parse("jdbc:postgresql://[::1]/d").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 5432));
        assert_eq!(v6.to_string(), "jdbc:postgresql://[::1]:5432/d");
        assert!(parse("jdbc:postgresql://h/d?reWriteBatchedInserts=true").is_ok());
    }

    #[test]
    fn bad_urls_say_why() {
        for (url, why) in [
            ("postgresql://h/d", "starts with jdbc:"),
            ("jdbc:oracle://h/d", "'jdbc:oracle:' is not a server"),
            ("jdbc:postgresql://h:99999/d", "'99999' is not a port"),
            ("jdbc:postgresql://u:pw@h/d", "credentials go in db.user"),
            ("jdbc:postgresql://h/d?ssl=true", "'ssl' is not understood"),
            ("jdbc:postgresql:///d", "no host"),
            ("jdbc:mysql://a,b/d", "failover"),
        ] {
            let e = parse(url).unwrap_err();
            assert!(e.contains(why), "{url}: {e}");
            assert!(!e.contains("pw"), "{e}");
        }
    }

    #[test]
    fn shards_split_as_java_splits_them() {
        assert_eq!(
            split_urls("jdbc:postgresql://a/d;jdbc:postgresql://b/d"),
            ["jdbc:postgresql://a/d", "jdbc:postgresql://b/d"]
        );
        assert_eq!(
            split_urls("jdbc:postgresql://a/d, jdbc:postgresql://b/d,jdbc:mysql://c/d"),
            [
                "jdbc:postgresql://a/d",
                "jdbc:postgresql://b/d",
                "jdbc:mysql://c/d"
            ]
        );
        assert_eq!(split_urls(" ; "), Vec::<String>::new());
    }
}
