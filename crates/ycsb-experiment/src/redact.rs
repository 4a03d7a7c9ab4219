//! Secrets (passwords, tokens) never reach a matrix's results: commands,
//! cell records and the report show [`REDACTED`] in their place.
//!
//! Whether a property is secret is ycsb's own rule, [`ycsb_db::is_secret`],
//! judged against every property the registry's stores declare (so a
//! store's declared secrets count too). The `ycsb` binary already redacts
//! its exports and standard error; this covers what the experiment writes
//! itself, including the argv of servers it starts, whose secret flags
//! are a program's, not properties.

use ycsb_db::{PropertyDecl, REDACTED};

/// Flags of server programs whose next argument is a secret: ycsb's
/// property rule cannot know them, since `requirepass` names no
/// credential word.
const SECRET_FLAGS: &[&str] = &["--requirepass"];

/// Every property the registry's stores declare.
fn declared() -> Vec<&'static PropertyDecl> {
    ycsb_stores::STORES
        .iter()
        .flat_map(|s| s.properties.iter().copied())
        .collect()
}

/// Whether the property `name` is secret, by ycsb's rule.
pub fn is_secret(name: &str) -> bool {
    ycsb_db::is_secret(name, &declared())
}

/// Property `key`'s `value` as it may be shown, by ycsb's rule
/// ([`ycsb_db::redact_value`]: secrets, URL credentials, credential
/// headers).
pub fn value(key: &str, value: &str) -> String {
    ycsb_db::redact_value(key, value, &declared()).into_owned()
}

/// Whether a command-line flag (`--requirepass`, `--auth-token`) takes a
/// secret as its next argument.
fn is_secret_flag(flag: &str) -> bool {
    SECRET_FLAGS.contains(&flag) || is_secret(flag.trim_start_matches('-'))
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
        if !arg.contains('=') {
            hide_next = arg.starts_with('-') && is_secret_flag(arg);
        }
        out.push(ycsb_db::redact_argument(arg, &declared()).into_owned());
    }
    out
}

/// A matrix file's text with the value of every secret `key = value` line
/// redacted (keys may be quoted, as dotted property names must be).
pub fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let Some((key_part, rhs)) = line.split_once('=') else {
            out.push_str(line);
            continue;
        };
        let key = key_part.trim().trim_matches(|c| c == '"' || c == '\'');
        if key.starts_with('#') {
            out.push_str(line);
        } else if is_secret(key) {
            out.push_str(key_part);
            out.push_str(&format!("= \"{REDACTED}\""));
            if line.ends_with('\n') {
                out.push('\n');
            }
        } else {
            // URL credentials and credential headers in the value; the
            // TOML quotes around it are kept.
            out.push_str(key_part);
            out.push('=');
            out.push_str(&value(key, rhs));
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
            "--auth-token",
            "pw3",
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
                "<redacted>",
                "--auth-token",
                "<redacted>",
            ])
        );
    }

    #[test]
    fn the_rule_is_ycsb_dbs() {
        // Every name ycsb-db calls secret is hidden here, and no other.
        for name in ["redis.password", "x.secret_key", "recordcount", "http.url"] {
            assert_eq!(is_secret(name), ycsb_db::is_secret(name, &[]), "{name}");
        }
        // Declared secrets of the registry's stores count even when their
        // names carry no credential word.
        for store in ycsb_stores::STORES {
            for decl in store.properties.iter().filter(|d| d.secret) {
                assert!(is_secret(decl.name), "{}: {}", store.name, decl.name);
            }
        }
    }

    #[test]
    fn matrix_text_hides_secret_lines() {
        let t = "[properties]\n\"redis.password\" = \"pw\"\nrecordcount = 5\n# password = x is a comment\n";
        let r = text(t);
        assert!(!r.contains("\"pw\""), "{r}");
        assert!(r.contains("\"redis.password\" = \"<redacted>\"\n"), "{r}");
        assert!(r.contains("recordcount = 5\n"), "{r}");
        assert!(r.contains("# password = x is a comment"), "{r}");
        let t = "\"http.headers\" = \"Authorization: Bearer t1 | Accept: */*\"\nurl = \"http://u:p1@h/\"\n\"redis.pasword\" = \"p2\"\n";
        let r = text(t);
        assert_eq!(
            r,
            "\"http.headers\" = \"Authorization: <redacted> | Accept: */*\"\nurl = \"http://<redacted>@h/\"\n\"redis.pasword\" = \"<redacted>\"\n"
        );
    }
}
