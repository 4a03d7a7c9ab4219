//! Typed configuration properties with their origins.
//!
//! Every property a component reads is declared once as a [`Property`]
//! constant: its name, aliases, type, default and meaning. The declarations
//! are the single source of truth for typed access, for the generated
//! properties reference, and for the warning about properties that no
//! component reads.
//!
//! [`Properties`] holds raw string values together with where each came
//! from ([`Origin`]), so that an error can say `recordcount: invalid value
//! 'ten' (workloads/workloada:3): expected an unsigned integer`.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;

pub use crate::decl::{PropertyDecl, PropertyKind, ValueRange};
use crate::secrets::redact_value;
#[cfg(test)]
use crate::secrets::{is_secret, REDACTED};

/// Where a property value came from.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The declared default: the property was not set.
    Default,
    /// A line of a property file (`-P`).
    File {
        /// The file's path as given.
        path: Arc<Path>,
        /// The 1-based line the entry starts on.
        line: usize,
    },
    /// A command-line flag, such as `-p` or `-threads`.
    Flag(&'static str),
    /// Set by a program through the library API.
    Api,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Flag(flag) => write!(f, "{flag} flag"),
            Origin::Api => f.write_str("set by the program"),
        }
    }
}

/// An error reading or validating a property.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PropertyError {
    /// A value that does not parse as the property's type or is out of its
    /// allowed range. The reason is shown through
    /// [`redact_text`](crate::redact_text): it may quote the value.
    #[error("{name}: invalid value '{value}' ({origin}): {}", crate::secrets::redact_text(.reason))]
    Invalid {
        /// The property's name as the user wrote it.
        name: String,
        /// The offending value.
        value: String,
        /// Where the value came from.
        origin: Origin,
        /// What was expected.
        reason: String,
    },
    /// A required property with no default that was not set.
    #[error("{name}: required property is not set ({meaning})")]
    Missing {
        /// The property's name.
        name: String,
        /// The property's documented meaning, to tell the user what to set.
        meaning: String,
    },
    /// Two properties that cannot be used together, or a combination that
    /// makes no sense (for example proportions that sum to zero).
    #[error("{message}")]
    Conflict {
        /// What is wrong, naming the properties and their origins.
        message: String,
    },
}

/// A value type that properties can hold.
pub trait PropertyValue: Sized {
    /// The kind shown in documentation.
    const KIND: PropertyKind;

    /// Parses a raw value.
    ///
    /// # Errors
    ///
    /// Returns what was expected, as a phrase (`expected an unsigned
    /// integer`), when `raw` is not a valid value.
    fn parse_value(raw: &str) -> Result<Self, String>;

    /// The value as a number, for the check against a declared
    /// [`ValueRange`]; `None` (the default) for values that are not
    /// numbers, which a range does not apply to.
    fn range_point(&self) -> Option<i128> {
        None
    }
}

macro_rules! number_value {
    ($($t:ty => $kind:expr, $what:literal;)*) => {$(
        impl PropertyValue for $t {
            const KIND: PropertyKind = $kind;
            fn parse_value(raw: &str) -> Result<Self, String> {
                raw.trim().parse::<$t>().map_err(|_| concat!("expected ", $what).to_string())
            }
            fn range_point(&self) -> Option<i128> {
                Some(*self as i128)
            }
        }
    )*};
}

number_value! {
    u64 => PropertyKind::Unsigned, "an unsigned integer";
    u32 => PropertyKind::Unsigned, "an unsigned integer below 2^32";
    usize => PropertyKind::Unsigned, "an unsigned integer";
    i64 => PropertyKind::Integer, "an integer";
}

impl PropertyValue for f64 {
    const KIND: PropertyKind = PropertyKind::Float;
    fn parse_value(raw: &str) -> Result<Self, String> {
        match raw.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err("expected a finite number".to_string()),
        }
    }
}

impl PropertyValue for bool {
    const KIND: PropertyKind = PropertyKind::Boolean;
    fn parse_value(raw: &str) -> Result<Self, String> {
        // Java's Boolean.parseBoolean turns any typo into `false`; a
        // benchmark silently run with the wrong setting is worse than an
        // error, so only the two words are accepted.
        match raw.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err("expected true or false".to_string()),
        }
    }
}

impl PropertyValue for String {
    const KIND: PropertyKind = PropertyKind::Text;
    fn parse_value(raw: &str) -> Result<Self, String> {
        Ok(raw.to_string())
    }
}

impl PropertyValue for std::path::PathBuf {
    const KIND: PropertyKind = PropertyKind::Path;
    fn parse_value(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        if raw.is_empty() {
            Err("expected a path".to_string())
        } else {
            Ok(raw.into())
        }
    }
}

/// The longest duration a property may give, in seconds (about 136
/// years): any longer would overflow the clock a deadline is computed on,
/// and no benchmark waits that long.
pub const MAX_SECONDS: u64 = u32::MAX as u64;

impl PropertyValue for std::time::Duration {
    const KIND: PropertyKind = PropertyKind::Seconds;
    fn parse_value(raw: &str) -> Result<Self, String> {
        match raw.trim().parse::<f64>() {
            Ok(s) if s.is_finite() && s >= 0.0 && s <= MAX_SECONDS as f64 => {
                Ok(std::time::Duration::from_secs_f64(s))
            }
            Ok(s) if s > MAX_SECONDS as f64 => Err(format!(
                "expected at most {MAX_SECONDS} seconds (about 136 years)"
            )),
            _ => Err("expected a non-negative number of seconds".to_string()),
        }
    }
}

impl PropertyValue for Vec<String> {
    const KIND: PropertyKind = PropertyKind::List;
    fn parse_value(raw: &str) -> Result<Self, String> {
        Ok(raw
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect())
    }
}

/// A value type that is one of a fixed set of names, for enum properties.
///
/// Implement this (usually with [`choice_property!`](crate::choice_property))
/// and the type becomes a [`PropertyValue`].
pub trait Choice: Sized + Copy + 'static {
    /// Every accepted name with its value; the first name of a value is the
    /// one shown in documentation.
    const CHOICES: &'static [(&'static str, Self)];
    /// The names, for documentation.
    const NAMES: &'static [&'static str];
}

impl<T: Choice> PropertyValue for T {
    const KIND: PropertyKind = PropertyKind::Choice(T::NAMES);
    fn parse_value(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        T::CHOICES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(raw))
            .map(|(_, v)| *v)
            .ok_or_else(|| format!("expected one of {}", T::NAMES.join(", ")))
    }
}

/// Declares an enum whose values are property choices.
///
/// ```
/// ycsb_db::choice_property! {
///     /// How keys are ordered.
///     pub enum Order {
///         /// Hash the key number.
///         Hashed = "hashed",
///         /// Use the key number itself.
///         Ordered = "ordered",
///     }
/// }
/// use ycsb_db::PropertyValue;
/// assert_eq!(Order::parse_value("ordered"), Ok(Order::Ordered));
/// ```
#[macro_export]
macro_rules! choice_property {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal $(| $alias:literal)* ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $crate::Choice for $name {
            const CHOICES: &'static [(&'static str, Self)] = &[
                $( ($text, $name::$variant), $( ($alias, $name::$variant), )* )+
            ];
            const NAMES: &'static [&'static str] = &[ $( $text ),+ ];
        }

        impl $name {
            /// The canonical name of this choice.
            pub const fn name(self) -> &'static str {
                match self { $( $name::$variant => $text ),+ }
            }
        }
    };
}

/// A typed property declaration, meant to be a `const` or `static`.
#[derive(Debug)]
pub struct Property<T> {
    decl: PropertyDecl,
    value: PhantomData<fn() -> T>,
}

impl<T: PropertyValue> Property<T> {
    /// Declares a property with a default value.
    pub const fn new(name: &'static str, default: &'static str, doc: &'static str) -> Self {
        Self::declare(name, Some(default), doc)
    }

    /// Declares a property without a default: reading it gives `None` (or
    /// an error through [`Properties::require`]) when it is not set.
    pub const fn optional(name: &'static str, doc: &'static str) -> Self {
        Self::declare(name, None, doc)
    }

    const fn declare(name: &'static str, default: Option<&'static str>, doc: &'static str) -> Self {
        Self {
            decl: PropertyDecl {
                name,
                aliases: &[],
                kind: T::KIND,
                default,
                doc,
                secret: false,
                range: None,
            },
            value: PhantomData,
        }
    }

    /// Adds other accepted names.
    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.decl.aliases = aliases;
        self
    }

    /// Declares the values the property accepts (both bounds included):
    /// a value outside is refused by every typed read, naming the range.
    /// Only for value types with a [`PropertyValue::range_point`].
    ///
    /// # Panics
    ///
    /// When `min > max` (at compile time for a `const` declaration).
    pub const fn range(mut self, min: i128, max: i128) -> Self {
        assert!(min <= max, "a property's range must not be empty");
        self.decl.range = Some(ValueRange { min, max });
        self
    }

    /// Marks the value as secret: redacted from exports and logs.
    pub const fn secret(mut self) -> Self {
        self.decl.secret = true;
        self
    }

    /// The untyped declaration.
    pub const fn decl(&self) -> &PropertyDecl {
        &self.decl
    }

    /// The property's canonical name.
    pub const fn name(&self) -> &'static str {
        self.decl.name
    }
}

/// A set value: the text, where it came from, and when it was set (later
/// settings win over earlier ones, whichever alias they used).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    value: String,
    origin: Origin,
    sequence: u64,
}

/// A raw value looked up for a declared property, with its origin and the
/// name the user wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawValue<'a> {
    /// The key as set (the canonical name or an alias), or the canonical
    /// name for a default.
    pub key: &'a str,
    /// The text of the value.
    pub value: &'a str,
    /// Where it came from.
    pub origin: Origin,
}

/// A set of properties: string values with their origins, read through
/// typed [`Property`] declarations.
///
/// Its `Debug` output redacts values whose names look like credentials
/// ([`is_secret`](crate::is_secret)), so that a logged configuration never shows a password.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Properties {
    entries: BTreeMap<String, Entry>,
    next_sequence: u64,
    /// Every property file read into the set, whether or not a value of
    /// it is still in force: what no output may replace.
    files_read: Vec<Arc<Path>>,
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (key, entry) in &self.entries {
            let value = redact_value(key, &entry.value, &[]);
            map.entry(&key, &format_args!("{value:?} ({})", entry.origin));
        }
        map.finish()
    }
}

impl Properties {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that the property file `path` was read into the set, even
    /// when it set nothing or every value it set was set again later.
    pub fn note_file_read(&mut self, path: Arc<Path>) {
        if !self.files_read.contains(&path) {
            self.files_read.push(path);
        }
    }

    /// The property files read into the set, in the order first read.
    pub fn files_read(&self) -> &[Arc<Path>] {
        &self.files_read
    }

    /// Sets `key` to `value`, replacing any earlier value (also one set
    /// under an alias of the same property).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>, origin: Origin) {
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        self.entries.insert(
            key.into(),
            Entry {
                value: value.into(),
                origin,
                sequence,
            },
        );
    }

    /// Sets a value from a program ([`Origin::Api`]); returns `self` for
    /// chaining.
    pub fn with(mut self, key: impl Into<String>, value: impl ToString) -> Self {
        self.set(key, value.to_string(), Origin::Api);
        self
    }

    /// Sets each `(key, value)` pair as if given on the command line with
    /// `-p` ([`Origin::Flag`]), in order; returns `self` for chaining.
    /// Tests and programs that build a set from literal pairs use it so
    /// that errors name the flag as a user's would.
    pub fn with_flags(mut self, pairs: &[(&str, &str)]) -> Self {
        for (key, value) in pairs {
            self.set(*key, *value, Origin::Flag("-p"));
        }
        self
    }

    /// Copies every entry of `other` over this set, in `other`'s order, as
    /// if each had been set now.
    pub fn extend(&mut self, other: &Properties) {
        let mut entries: Vec<_> = other.entries.iter().collect();
        entries.sort_by_key(|(_, e)| e.sequence);
        for (k, e) in entries {
            self.set(k.clone(), e.value.clone(), e.origin.clone());
        }
    }

    /// Removes `key` (exactly that key, not its aliases).
    pub fn remove(&mut self, key: &str) {
        self.entries.remove(key);
    }

    /// Whether `key` itself is set.
    pub fn contains_key(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// The raw value of exactly `key`, if set.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|e| e.value.as_str())
    }

    /// The origin of exactly `key`, if set.
    pub fn origin(&self, key: &str) -> Option<&Origin> {
        self.entries.get(key).map(|e| &e.origin)
    }

    /// Every set key with its value and origin, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &Origin)> + '_ {
        self.entries
            .iter()
            .map(|(k, e)| (k.as_str(), e.value.as_str(), &e.origin))
    }

    /// The number of set keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The raw value for a declaration: the most recently set of its name
    /// and aliases, else its default.
    pub fn raw(&self, decl: &PropertyDecl) -> Option<RawValue<'_>> {
        let set = std::iter::once(decl.name)
            .chain(decl.aliases.iter().copied())
            .filter_map(|k| self.entries.get_key_value(k))
            .max_by_key(|(_, e)| e.sequence);
        match set {
            Some((key, e)) => Some(RawValue {
                key,
                value: &e.value,
                origin: e.origin.clone(),
            }),
            None => decl.default.map(|d| RawValue {
                key: decl.name,
                value: d,
                origin: Origin::Default,
            }),
        }
    }

    /// `name=value (origin)` for a declaration, as errors name an input:
    /// the key as set (or the name, for a default), the value redacted
    /// when secret (credentials in a URL too), and where it came from;
    /// `name (not set)` when it has no value.
    pub fn describe(&self, decl: &PropertyDecl) -> String {
        match self.raw(decl) {
            Some(raw) => format!(
                "{}={} ({})",
                raw.key,
                crate::secrets::redact_value(raw.key, raw.value, &[decl]),
                raw.origin
            ),
            None => format!("{} (not set)", decl.name),
        }
    }

    /// Whether the property (under its name or an alias) was set, as
    /// opposed to taking its default.
    pub fn is_set(&self, decl: &PropertyDecl) -> bool {
        std::iter::once(decl.name)
            .chain(decl.aliases.iter().copied())
            .any(|k| self.entries.contains_key(k))
    }

    /// Reads a property with a default.
    ///
    /// # Errors
    ///
    /// [`PropertyError::Invalid`] when the value does not parse, naming the
    /// value and its origin; [`PropertyError::Missing`] when the property
    /// has no default and is not set.
    pub fn get<T: PropertyValue>(&self, property: &Property<T>) -> Result<T, PropertyError> {
        self.get_opt(property)?
            .ok_or_else(|| self.missing(property.decl()))
    }

    /// Reads a property that may be unset.
    ///
    /// # Errors
    ///
    /// [`PropertyError::Invalid`] when a value is present and does not
    /// parse.
    pub fn get_opt<T: PropertyValue>(
        &self,
        property: &Property<T>,
    ) -> Result<Option<T>, PropertyError> {
        let decl = property.decl();
        let Some(raw) = self.raw(decl) else {
            return Ok(None);
        };
        let checked = T::parse_value(raw.value)
            .map_err(|reason| match decl.range {
                // A whole number too large for the type is out of the
                // declared range: say the range, not "an integer".
                Some(range) if raw.value.trim().parse::<i128>().is_ok() => {
                    format!("expected {range}")
                }
                _ => reason,
            })
            .and_then(|value| match (decl.range, value.range_point()) {
                (Some(range), Some(point)) if !range.contains(point) => {
                    Err(format!("expected {range}"))
                }
                _ => Ok(value),
            });
        checked.map(Some).map_err(|reason| PropertyError::Invalid {
            name: raw.key.to_string(),
            value: redact_value(raw.key, raw.value, &[decl]).into_owned(),
            origin: raw.origin,
            reason,
        })
    }

    /// Reads a property that must be set.
    ///
    /// # Errors
    ///
    /// As [`Properties::get`].
    pub fn require<T: PropertyValue>(&self, property: &Property<T>) -> Result<T, PropertyError> {
        self.get(property)
    }

    /// Reads a property and checks it with `check`, which returns what was
    /// expected when the value is out of range.
    ///
    /// # Errors
    ///
    /// As [`Properties::get`], and [`PropertyError::Invalid`] naming the
    /// value and its origin when `check` fails.
    pub fn get_checked<T: PropertyValue>(
        &self,
        property: &Property<T>,
        check: impl FnOnce(&T) -> Result<(), String>,
    ) -> Result<T, PropertyError> {
        let value = self.get(property)?;
        check(&value).map_err(|reason| self.invalid(property.decl(), reason))?;
        Ok(value)
    }

    /// An [`PropertyError::Invalid`] for the current value of `decl`, for
    /// validation done after typed reading.
    pub fn invalid(&self, decl: &PropertyDecl, reason: impl Into<String>) -> PropertyError {
        match self.raw(decl) {
            Some(raw) => PropertyError::Invalid {
                name: raw.key.to_string(),
                value: redact_value(raw.key, raw.value, &[decl]).into_owned(),
                origin: raw.origin,
                reason: reason.into(),
            },
            None => self.missing(decl),
        }
    }

    fn missing(&self, decl: &PropertyDecl) -> PropertyError {
        PropertyError::Missing {
            name: decl.name.to_string(),
            meaning: decl.doc.to_string(),
        }
    }

    /// The set keys that none of `known` declares, with their origins, for
    /// the warning about typos such as `recordcout`.
    pub fn unknown<'a>(
        &'a self,
        known: impl IntoIterator<Item = &'a PropertyDecl> + Clone,
    ) -> Vec<(&'a str, &'a Origin)> {
        self.entries
            .iter()
            .filter(|(k, _)| !known.clone().into_iter().any(|d| d.matches(k)))
            .map(|(k, e)| (k.as_str(), &e.origin))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COUNT: Property<u64> = Property::new("recordcount", "1000", "Records to load.");
    const DIST: Property<String> =
        Property::new("fieldlengthdistribution", "constant", "Field lengths.")
            .aliases(&["field_len_dist"]);
    const NAME: Property<String> = Property::optional("db.name", "A name.");

    crate::choice_property! {
        /// Test choice.
        enum Order { Hashed = "hashed", Ordered = "ordered" | "sequential" }
    }
    const ORDER: Property<Order> = Property::new("insertorder", "hashed", "Key order.");

    fn file(line: usize) -> Origin {
        Origin::File {
            path: Arc::from(Path::new("w.properties")),
            line,
        }
    }

    #[test]
    fn default_applies_when_unset() {
        let p = Properties::new();
        assert_eq!(p.get(&COUNT), Ok(1000));
        assert_eq!(p.get_opt(&NAME), Ok(None));
        assert!(matches!(p.get(&NAME), Err(PropertyError::Missing { .. })));
    }

    #[test]
    fn invalid_value_names_property_value_and_origin() {
        let mut p = Properties::new();
        p.set("recordcount", "ten", file(3));
        let err = p.get(&COUNT).unwrap_err();
        assert_eq!(
            err.to_string(),
            "recordcount: invalid value 'ten' (w.properties:3): expected an unsigned integer"
        );
        p.set("recordcount", "-1", Origin::Flag("-p"));
        assert_eq!(
            p.get(&COUNT).unwrap_err().to_string(),
            "recordcount: invalid value '-1' (-p flag): expected an unsigned integer"
        );
    }

    #[test]
    fn last_setting_wins_across_aliases() {
        let mut p = Properties::new();
        p.set("fieldlengthdistribution", "uniform", file(1));
        p.set("field_len_dist", "zipfian", Origin::Flag("-p"));
        assert_eq!(p.get(&DIST).unwrap(), "zipfian");
        p.set("fieldlengthdistribution", "constant", Origin::Flag("-p"));
        assert_eq!(p.get(&DIST).unwrap(), "constant");
    }

    #[test]
    fn choices_parse_case_insensitively_with_aliases() {
        let mut p = Properties::new();
        assert_eq!(p.get(&ORDER), Ok(Order::Hashed));
        p.set("insertorder", "SEQUENTIAL", Origin::Api);
        assert_eq!(p.get(&ORDER), Ok(Order::Ordered));
        p.set("insertorder", "random", file(9));
        assert_eq!(
            p.get(&ORDER).unwrap_err().to_string(),
            "insertorder: invalid value 'random' (w.properties:9): expected one of hashed, ordered"
        );
        assert_eq!(Order::Ordered.name(), "ordered");
    }

    #[test]
    fn booleans_are_strict() {
        const B: Property<bool> = Property::new("readallfields", "true", "x");
        let mut p = Properties::new();
        p.set("readallfields", "False", Origin::Api);
        assert_eq!(p.get(&B), Ok(false));
        p.set("readallfields", "yes", Origin::Api);
        assert!(p.get(&B).is_err());
    }

    #[test]
    fn checked_reads_report_range_errors() {
        let mut p = Properties::new();
        p.set("recordcount", "0", file(2));
        let err = p
            .get_checked(&COUNT, |v| {
                if *v > 0 {
                    Ok(())
                } else {
                    Err("expected at least 1".into())
                }
            })
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "recordcount: invalid value '0' (w.properties:2): expected at least 1"
        );
    }

    #[test]
    fn declared_ranges_are_checked_and_shown() {
        const TIMEOUT: Property<u64> =
            Property::new("x.timeout", "10", "Milliseconds.").range(0, i32::MAX as i128);
        const LEVEL: Property<i64> = Property::new("x.level", "0", "A level.").range(-1, 5);
        let mut p = Properties::new();
        p.set("x.timeout", "2147483647", Origin::Flag("-p"));
        assert_eq!(p.get(&TIMEOUT), Ok(2147483647));
        p.set("x.timeout", "2147483648", file(7));
        assert_eq!(
            p.get(&TIMEOUT).unwrap_err().to_string(),
            "x.timeout: invalid value '2147483648' (w.properties:7): expected 0 to 2147483647"
        );
        p.set("x.level", "-2", Origin::Flag("-p"));
        assert!(p
            .get(&LEVEL)
            .unwrap_err()
            .to_string()
            .contains("expected -1 to 5"));
        // A whole number beyond the type is out of the range too, and said
        // so (not "expected an integer").
        p.set("x.level", "18446744073709551615", Origin::Flag("-p"));
        assert!(p
            .get(&LEVEL)
            .unwrap_err()
            .to_string()
            .ends_with("expected -1 to 5"));
        p.set("x.timeout", "-1", Origin::Flag("-p"));
        assert!(p
            .get(&TIMEOUT)
            .unwrap_err()
            .to_string()
            .ends_with("expected 0 to 2147483647"));
        p.set("x.timeout", "ten", Origin::Flag("-p"));
        assert!(p
            .get(&TIMEOUT)
            .unwrap_err()
            .to_string()
            .ends_with("expected an unsigned integer"));
        assert_eq!(
            TIMEOUT.decl().type_text(),
            "unsigned integer, 0 to 2147483647"
        );
        assert_eq!(COUNT.decl().type_text(), "unsigned integer");
    }

    #[test]
    fn unknown_lists_undeclared_keys() {
        let mut p = Properties::new();
        p.set("recordcout", "5", file(4));
        p.set("field_len_dist", "uniform", file(5));
        let known = [COUNT.decl(), DIST.decl()];
        let unknown: Vec<_> = p
            .unknown(known.iter().copied())
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(unknown, vec!["recordcout"]);
    }

    #[test]
    fn secrets_are_recognised() {
        const PW: Property<String> = Property::optional("x.pw", "p").secret();
        assert!(is_secret("x.pw", &[PW.decl()]));
        assert!(is_secret("redis.password", &[]));
        assert!(!is_secret("redis.host", &[]));
    }

    #[test]
    fn debug_output_redacts_secrets() {
        let p = Properties::new()
            .with("redis.password", "hunter2")
            .with("redis.host", "127.0.0.1");
        let text = format!("{p:?}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(
            text.contains("127.0.0.1") && text.contains(REDACTED),
            "{text}"
        );
    }

    #[test]
    fn extend_keeps_order_and_origins() {
        let mut a = Properties::new();
        a.set("recordcount", "1", file(1));
        let mut b = Properties::new();
        b.set("recordcount", "2", Origin::Flag("-p"));
        a.extend(&b);
        assert_eq!(a.get(&COUNT), Ok(2));
        assert_eq!(a.origin("recordcount"), Some(&Origin::Flag("-p")));
    }
}
