//! A server as users write it in a host list (`memcached.hosts`,
//! `redis.host`): `host` or `host:port`, IPv6 as `[addr]:port` or a bare
//! address.

/// `entry` (`host`, `host:port`, `[addr]:port`, `[addr]` or a bare IPv6
/// address) as a `host:port` string that `ToSocketAddrs` accepts, with
/// `default_port` where it names none. `None` for an empty host or
/// address, or a port that is not a number from 1 to 65535.
pub fn host_port(entry: &str, default_port: u32) -> Option<String> {
    let port = |p: &str| p.parse::<u16>().ok().filter(|p| *p > 0);
    if let Some(rest) = entry.strip_prefix('[') {
        let (addr, tail) = rest.split_once(']')?;
        let port = match tail.strip_prefix(':') {
            Some(p) => port(p)?,
            None if tail.is_empty() => default_port as u16,
            None => return None,
        };
        return (!addr.is_empty()).then(|| format!("[{addr}]:{port}"));
    }
    match entry.matches(':').count() {
        0 => Some(format!("{entry}:{default_port}")),
        1 => {
            let (host, p) = entry.split_once(':')?;
            let p = port(p)?;
            (!host.is_empty()).then(|| format!("{host}:{p}"))
        }
        _ => Some(format!("[{entry}]:{default_port}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_ports() {
        assert_eq!(host_port("h", 11211).as_deref(), Some("h:11211"));
        assert_eq!(host_port("h:7000", 1).as_deref(), Some("h:7000"));
        assert_eq!(host_port("::1", 1).as_deref(), Some("[::1]:1"));
        assert_eq!(host_port("[::1]:5", 1).as_deref(), Some("[::1]:5"));
        assert_eq!(host_port("[::1]", 7).as_deref(), Some("[::1]:7"));
        assert_eq!(host_port("h:x", 1), None);
        assert_eq!(host_port("h:0", 1), None);
        assert_eq!(host_port("[::1]:0", 1), None);
        assert_eq!(host_port(":5", 1), None);
        assert_eq!(host_port("[]:5", 1), None);
        assert_eq!(host_port("[::1]x", 1), None);
    }
}
