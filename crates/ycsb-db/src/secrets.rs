//! The one rule for what is secret: which properties, and which parts of a
//! value, never appear in a command line shown, an error, an export or an
//! experiment's results.

use std::borrow::Cow;

use crate::decl::PropertyDecl;

/// The text shown instead of a secret value.
pub const REDACTED: &str = "<redacted>";

/// Words that make a property name a credential's.
const CREDENTIAL_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "credential",
    "auth",
];

/// Whether a property is secret: declared so, named like a credential, or
/// a near miss of either (a misspelling such as `redis.pasword` is still
/// the password the user meant to give). Secret values never appear in
/// exports, logs or status lines.
pub fn is_secret(key: &str, known: &[&PropertyDecl]) -> bool {
    if known.iter().any(|d| d.secret && d.matches(key)) {
        return true;
    }
    let lower = key.to_ascii_lowercase();
    if CREDENTIAL_WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    // A misspelled credential word: one edit from a word of 6 letters or
    // more (`pasword`, `passwrod` is two: transpositions count as one).
    let near_word = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|segment| segment.len() >= 5)
        .any(|segment| {
            CREDENTIAL_WORDS
                .iter()
                .filter(|w| w.len() >= 6 && w.len().abs_diff(segment.len()) <= 1)
                .any(|w| edit_distance(segment, w) <= 1)
        });
    // A misspelled declared secret: up to two edits from its name.
    near_word
        || known
            .iter()
            .filter(|d| d.secret)
            .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
            // Lengths that differ by more than two are more than two edits
            // apart: skip the distance (every property passes here).
            .any(|name| {
                name.len() >= 8
                    && name.len().abs_diff(lower.len()) <= 2
                    && edit_distance(&lower, &name.to_ascii_lowercase()) <= 2
            })
}

/// The form of property `key`'s `value` that may be shown: [`REDACTED`]
/// for a secret property ([`is_secret`]); otherwise the value with the
/// credentials it carries redacted: user information, in a URL
/// (`http://user:password@host/` shows `http://<redacted>@host/`) or bare
/// (`user:password@host`, as a `host:port` list may carry it), and the
/// value of every credential header in a `Name: value | Name: value` list
/// (`Authorization`, `Cookie`, API keys, tokens).
pub fn redact_value<'a>(key: &str, value: &'a str, known: &[&PropertyDecl]) -> Cow<'a, str> {
    if is_secret(key, known) {
        return Cow::Borrowed(REDACTED);
    }
    let userinfo = redact_text(value);
    match redact_headers(&userinfo) {
        Cow::Borrowed(_) => userinfo,
        Cow::Owned(headers) => Cow::Owned(headers),
    }
}

/// Free text that may quote a user's value (an error message, an
/// engine's or a server's answer) as it may be shown: the user
/// information of every address redacted, in a URL
/// (`http://root:pw@host:2379` shows `http://<redacted>@host:2379`) or
/// bare (`[root:pw@host]:2379` shows `[<redacted>@host]:2379`). Store and
/// property errors show their messages through it, so that a store
/// echoing the address it was given cannot print a password.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let text = match redact_urls(text) {
        Cow::Borrowed(_) => redact_bare_userinfo(text),
        Cow::Owned(urls) => Cow::Owned(redact_bare_userinfo(&urls).into_owned()),
    };
    match redact_query_passwords(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(redacted) => Cow::Owned(redacted),
    }
}

/// Every `password=` parameter of a URL's query (`?password=pw` or
/// `&password=pw`, as a JDBC URL carries it) with its value replaced by
/// [`REDACTED`].
fn redact_query_passwords(text: &str) -> Cow<'_, str> {
    const PARAMETER: &str = "password=";
    let lower = text.to_ascii_lowercase();
    let mut out = String::new();
    let mut done = 0;
    for (at, _) in lower.match_indices(PARAMETER) {
        let starts_parameter = at > 0 && matches!(lower.as_bytes()[at - 1], b'?' | b'&');
        if !starts_parameter || at < done {
            continue;
        }
        let value_start = at + PARAMETER.len();
        let value_end = text[value_start..]
            .find(|c: char| {
                matches!(c, '&' | ';' | ',' | '#' | '"' | '\'' | ')') || c.is_whitespace()
            })
            .map_or(text.len(), |i| value_start + i);
        out.push_str(&text[done..value_start]);
        out.push_str(REDACTED);
        done = value_end;
    }
    if done == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[done..]);
    Cow::Owned(out)
}

/// A command-line argument as it may be shown: a `key=value` (or
/// `-pkey=value`) argument's value by [`redact_value`], any other
/// argument with its URLs' credentials redacted.
pub fn redact_argument<'a>(arg: &'a str, known: &[&PropertyDecl]) -> Cow<'a, str> {
    let Some((name, value)) = arg.split_once('=') else {
        return redact_text(arg);
    };
    let bare = name.strip_prefix("-p").unwrap_or(name);
    let bare = bare.trim_start_matches('-');
    let shown = if is_secret(name, known) {
        Cow::Borrowed(REDACTED)
    } else {
        redact_value(bare, value, known)
    };
    match shown {
        Cow::Borrowed(v) if v == value => Cow::Borrowed(arg),
        shown => Cow::Owned(format!("{name}={shown}")),
    }
}

/// Every `scheme://userinfo@host` in `text` with its user information
/// replaced by [`REDACTED`].
fn redact_urls(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '|' | ',' | ';' | '"' | '\'') || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        let authority = &tail[..authority_end];
        match authority.rfind('@') {
            Some(userinfo_end) => {
                out.push_str(REDACTED);
                out.push_str(&authority[userinfo_end..]);
                changed = true;
            }
            None => out.push_str(authority),
        }
        rest = &tail[authority_end..];
    }
    out.push_str(rest);
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// Every `user:password@` outside a URL (`root:pw@host:2379`, as a
/// `host:port` value or a message quoting one shows it) with the user
/// information replaced by [`REDACTED`]. A word before `@` without a `:`
/// (a user name alone, an e-mail address) is no credential and stays.
fn redact_bare_userinfo(text: &str) -> Cow<'_, str> {
    if !text.contains('@') {
        return Cow::Borrowed(text);
    }
    // What ends the word before an `@`: the user information starts after
    // it (`/` ends a URL's scheme, already redacted).
    let delimiter = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '/' | '[' | '(' | '{' | '<' | '"' | '\'' | ',' | ';' | '|' | '='
            )
    };
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for (at, _) in text.match_indices('@') {
        let word_start = text[done..at]
            .rfind(delimiter)
            .map_or(done, |i| done + i + 1);
        let word = &text[word_start..at];
        if word.contains(':') {
            out.push_str(&text[done..word_start]);
            out.push_str(REDACTED);
            done = at;
        }
    }
    if done == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[done..]);
    Cow::Owned(out)
}

/// Whether a header carries a credential.
fn is_secret_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "auth",
        "cookie",
        "token",
        "secret",
        "key",
        "password",
        "session",
        "credential",
        "signature",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// `Name: value` entries separated by `|` (http.headers' form) with the
/// values of credential headers redacted.
fn redact_headers(text: &str) -> Cow<'_, str> {
    if !text.contains(':') {
        return Cow::Borrowed(text);
    }
    let mut changed = false;
    let entries: Vec<Cow<'_, str>> = text
        .split('|')
        .map(|entry| match entry.split_once(':') {
            // The name may open a quoted string or list (a TOML line).
            Some((name, value))
                if !value.trim().is_empty() && header_name(name).is_some_and(is_secret_header) =>
            {
                changed = true;
                let space = if value.starts_with(' ') { " " } else { "" };
                // Whitespace and the closing quote of a quoted value stay.
                let kept = value.trim_end_matches(|c: char| {
                    c.is_whitespace() || matches!(c, '"' | '\'' | ']' | ',')
                });
                let tail = &value[kept.len()..];
                Cow::Owned(format!("{name}:{space}{REDACTED}{tail}"))
            }
            _ => Cow::Borrowed(entry),
        })
        .collect();
    if changed {
        Cow::Owned(entries.join("|"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The header name in the text before an entry's ':', if it is one.
fn header_name(text: &str) -> Option<&str> {
    let name = text.trim().trim_start_matches(['"', '\'', '[']);
    (!name.is_empty() && name.bytes().all(is_token_char)).then_some(name)
}

/// RFC 9110's token characters (header names).
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Optimal string alignment distance: insertions, deletions,
/// substitutions and transpositions of adjacent characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > 2 {
        return 3;
    }
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {

    /// A JDBC URL carries its password as a query parameter.
    #[test]
    fn query_passwords_are_redacted() {
        assert_eq!(
            redact_text("jdbc:postgresql://h:1/d?user=u&password=S3cr3t;jdbc:postgresql://g/d?password=x&ssl=1"),
            "jdbc:postgresql://h:1/d?user=u&password=<redacted>;jdbc:postgresql://g/d?password=<redacted>&ssl=1"
        );
        assert_eq!(redact_text("no password=here"), "no password=here");
        assert_eq!(
            redact_value("db.url", "jdbc:mysql://h/d?PASSWORD=pw", &[]),
            "jdbc:mysql://h/d?PASSWORD=<redacted>"
        );
    }

    use super::*;
    use crate::properties::Property;

    const PW: Property<String> = Property::optional("redis.password", "p").secret();

    #[test]
    fn misspelled_secret_names_are_secret() {
        let known = [PW.decl()];
        for key in [
            "redis.pasword",
            "redis.passwrod",
            "redis.passwd",
            "redis.pasword2",
            "x.secrte",
        ] {
            assert!(is_secret(key, &known), "{key}");
        }
        for key in [
            "redis.host",
            "redis.port",
            "redis.pipeline",
            "recordcount",
            "http.url",
            "http.headers",
        ] {
            assert!(!is_secret(key, &known), "{key}");
        }
    }

    #[test]
    fn url_credentials_are_redacted() {
        assert_eq!(
            redact_value(
                "http.url",
                "http://alice:s3cret@db.example:8080/kv?x=1",
                &[]
            ),
            "http://<redacted>@db.example:8080/kv?x=1"
        );
        assert_eq!(
            redact_value("x.url", "https://TOKEN@h/", &[]),
            "https://<redacted>@h/"
        );
        assert_eq!(
            redact_value("http.url", "http://127.0.0.1:8080/", &[]),
            "http://127.0.0.1:8080/"
        );
        assert_eq!(
            redact_value("x.urls", "http://a:b@h1/ http://h2/ redis://:pw@h3", &[]),
            "http://<redacted>@h1/ http://h2/ redis://<redacted>@h3"
        );
    }

    #[test]
    fn bare_user_information_is_redacted() {
        assert_eq!(
            redact_value("etcd.endpoints", "root:S3cr3t@127.0.0.1:2379, h2:2379", &[]),
            "<redacted>@127.0.0.1:2379, h2:2379"
        );
        assert_eq!(
            redact_text("no member answered ([root:S3cr3t@127.0.0.1]:1: refused)"),
            "no member answered ([<redacted>@127.0.0.1]:1: refused)"
        );
        assert_eq!(
            redact_text("cannot resolve [redis://root:S3cr3t@h]:1 or a:b@c"),
            "cannot resolve [redis://<redacted>@h]:1 or <redacted>@c"
        );
        assert_eq!(
            redact_argument("etcd.endpoints=root:pw@h:1", &[]),
            "etcd.endpoints=<redacted>@h:1"
        );
        // A user name alone, an e-mail address: nothing secret.
        for text in ["mail alice@example.org", "git@host", "a@b:1", "no at sign"] {
            assert_eq!(redact_text(text), text);
        }
    }

    #[test]
    fn credential_headers_are_redacted() {
        assert_eq!(
            redact_value(
                "http.headers",
                "Authorization: Bearer abc | Accept: */* | Cookie: sid=1|X-Api-Key: k1|X-Token:t",
                &[]
            ),
            "Authorization: <redacted> | Accept: */* | Cookie: <redacted>|X-Api-Key: <redacted>|X-Token:<redacted>"
        );
        assert_eq!(
            redact_value("http.headers", "Accept: */*", &[]),
            "Accept: */*"
        );
        assert_eq!(
            redact_value("http.headers", " \"Authorization: Basic x\"\n", &[]),
            " \"Authorization: <redacted>\"\n"
        );
    }

    #[test]
    fn arguments_are_redacted_by_the_same_rule() {
        assert_eq!(
            redact_argument("redis.pasword=hunter2", &[PW.decl()]),
            "redis.pasword=<redacted>"
        );
        assert_eq!(
            redact_argument("-predis.password=hunter2", &[]),
            "-predis.password=<redacted>"
        );
        assert_eq!(
            redact_argument("http.url=http://u:p@h/", &[]),
            "http.url=http://<redacted>@h/"
        );
        assert_eq!(
            redact_argument("http://u:p@h/", &[]),
            "http://<redacted>@h/"
        );
        assert_eq!(redact_argument("recordcount=5", &[]), "recordcount=5");
    }
}
