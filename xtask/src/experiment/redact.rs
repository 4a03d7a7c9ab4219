//! Secrets (passwords, tokens) never reach a matrix's results: commands,
//! cell records and the report show `<redacted>` in their place.
//!
//! The rule is ycsb's (`ycsb_db::is_secret`'s name test): a property or
//! flag whose name contains password, passwd, secret, token, credential or
//! auth (and redis-server's `--requirepass`) is secret. The `ycsb` binary
//! already redacts its own exports and standard error; this covers what
//! xtask writes itself.

/// The text shown instead of a secret, as in ycsb's exports.
pub const REDACTED: &str = "<redacted>";

/// Whether a property or flag name names a secret.
pub fn is_secret(name: &str) -> bool {
    let lower = name.trim_start_matches('-').to_ascii_lowercase();
    lower == "requirepass"
        || [
            "password",
            "passwd",
            "secret",
            "token",
            "credential",
            "auth",
        ]
        .iter()
        .any(|w| lower.contains(w))
}

/// `argv` with the value of every secret `key=value` argument, and the
/// argument after every secret flag (`--requirepass x`), redacted.
pub fn argv(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut hide_next = false;
    for arg in argv {
        if std::mem::take(&mut hide_next) {
            out.push(REDACTED.to_string());
            continue;
        }
        match arg.split_once('=') {
            Some((key, _)) if is_secret(key) => out.push(format!("{key}={REDACTED}")),
            Some(_) => out.push(arg.clone()),
            None => {
                hide_next = arg.starts_with('-') && is_secret(arg);
                out.push(arg.clone());
            }
        }
    }
    out
}

/// A matrix file's text with the value of every secret `key = value` line
/// redacted (keys may be quoted, as dotted property names must be).
pub fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let secret = line
            .split_once('=')
            .map(|(key, _)| key.trim().trim_matches(|c| c == '"' || c == '\''))
            .is_some_and(|key| !key.starts_with('#') && is_secret(key));
        if secret {
            let (key, _) = line.split_once('=').unwrap_or((line, ""));
            out.push_str(key);
            out.push_str(&format!("= \"{REDACTED}\""));
            if line.ends_with('\n') {
                out.push('\n');
            }
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn argv_hides_secret_values_only() {
        let got = argv(&strings(&[
            "ycsb",
            "-p",
            "redis.password=pw1",
            "-p",
            "recordcount=5",
            "-p",
            "http.auth_token=t",
        ]));
        assert_eq!(
            got,
            strings(&[
                "ycsb",
                "-p",
                "redis.password=<redacted>",
                "-p",
                "recordcount=5",
                "-p",
                "http.auth_token=<redacted>",
            ])
        );
        let server = argv(&strings(&[
            "redis-server",
            "--port",
            "7000",
            "--bind",
            "127.0.0.1",
            "--requirepass",
            "pw2",
        ]));
        assert_eq!(
            server,
            strings(&[
                "redis-server",
                "--port",
                "7000",
                "--bind",
                "127.0.0.1",
                "--requirepass",
                "<redacted>"
            ])
        );
    }

    #[test]
    fn matrix_text_hides_secret_lines() {
        let t = "[properties]\n\"redis.password\" = \"pw\"\nrecordcount = 5\n# password = x is a comment\n";
        let r = text(t);
        assert!(!r.contains("\"pw\""), "{r}");
        assert!(r.contains("\"redis.password\" = \"<redacted>\"\n"), "{r}");
        assert!(r.contains("recordcount = 5\n"), "{r}");
        assert!(r.contains("# password = x is a comment"), "{r}");
    }
}
