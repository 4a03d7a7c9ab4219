//! The checks every store's option parsing shares: each property is
//! declared once under the store's prefix, and a bad value is an error
//! naming the property, the value, where it was set and why.

use std::fmt::Display;

use crate::{Properties, PropertyDecl};

/// Asserts that `properties` are declared once each and all start with
/// `prefix` (`"lmdb."`).
///
/// # Panics
///
/// When a name is declared twice or lacks the prefix.
#[track_caller]
pub fn assert_declared_once(properties: &[&PropertyDecl], prefix: &str) {
    let mut names: Vec<_> = properties.iter().map(|d| d.name).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "a property is declared twice");
    for name in names {
        assert!(name.starts_with(prefix), "{name} lacks the prefix {prefix}");
    }
}

/// Asserts that `read` refuses each `(key, value, reason)` of `cases`, set
/// with `-p` beside `base`, with an error that starts with
/// `<key>: invalid value '<value>' (-p flag)` and contains `reason`.
///
/// # Panics
///
/// When a value is accepted, or its error does not say so.
#[track_caller]
pub fn assert_invalid_values<T, E: Display>(
    read: impl Fn(&Properties) -> Result<T, E>,
    base: &[(&str, &str)],
    cases: &[(&str, &str, &str)],
) {
    for (key, value, reason) in cases {
        let props = Properties::new()
            .with_flags(base)
            .with_flags(&[(key, value)]);
        let err = match read(&props) {
            Ok(_) => panic!("{key}={value} was accepted"),
            Err(e) => e.to_string(),
        };
        assert!(
            err.starts_with(&format!("{key}: invalid value '{value}' (-p flag)")),
            "{err}"
        );
        assert!(err.contains(reason), "{key}={value}: {err}");
    }
}
