//! What a property is, untyped: its name, aliases, type, default, meaning
//! and whether it is secret. The typed [`Property`](crate::Property) wraps
//! one; documentation, the unknown-property check and the secrets rule
//! (`secrets.rs`) read it.

use std::fmt;

/// The type of a property, as shown in documentation.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyKind {
    /// An unsigned integer.
    Unsigned,
    /// A signed integer.
    Integer,
    /// A floating-point number.
    Float,
    /// `true` or `false`.
    Boolean,
    /// Free text.
    Text,
    /// A file or directory path.
    Path,
    /// One of a fixed set of names.
    Choice(&'static [&'static str]),
    /// A comma-separated list.
    List,
    /// A duration in seconds.
    Seconds,
}

impl fmt::Display for PropertyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PropertyKind::Unsigned => f.write_str("unsigned integer"),
            PropertyKind::Integer => f.write_str("integer"),
            PropertyKind::Float => f.write_str("number"),
            PropertyKind::Boolean => f.write_str("true or false"),
            PropertyKind::Text => f.write_str("text"),
            PropertyKind::Path => f.write_str("path"),
            PropertyKind::Choice(names) => write!(f, "one of {}", names.join(", ")),
            PropertyKind::List => f.write_str("comma-separated list"),
            PropertyKind::Seconds => f.write_str("seconds"),
        }
    }
}

/// The untyped declaration of a property: what documentation and the
/// unknown-property check need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropertyDecl {
    /// The canonical name (Java YCSB's where there is one).
    pub name: &'static str,
    /// Other accepted names, such as YCSB-cpp's `field_len_dist`.
    pub aliases: &'static [&'static str],
    /// The value's type.
    pub kind: PropertyKind,
    /// The default value as text, or `None` when the property is optional
    /// or required with no default.
    pub default: Option<&'static str>,
    /// What the property means, one or two sentences.
    pub doc: &'static str,
    /// Whether the value is a secret (a password): it is then redacted
    /// from every export and log.
    pub secret: bool,
    /// The values a numeric property accepts, when it is narrower than
    /// its type's: what the engine it is passed to accepts (a C `int`, a
    /// thread count the machine can start). Checked by every typed read
    /// and shown in the properties reference.
    pub range: Option<ValueRange>,
}

/// The inclusive range of values a numeric property accepts, declared on
/// the property with [`Property::range`](crate::Property::range).
///
/// Bounds are `i128` so that one type holds every unsigned and signed
/// 64-bit bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueRange {
    /// The smallest accepted value.
    pub min: i128,
    /// The largest accepted value.
    pub max: i128,
}

impl ValueRange {
    /// Whether `value` is inside the range.
    pub const fn contains(&self, value: i128) -> bool {
        self.min <= value && value <= self.max
    }
}

impl fmt::Display for ValueRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} to {}", self.min, self.max)
    }
}

impl PropertyDecl {
    /// Whether `key` names this property (its name or an alias).
    pub fn matches(&self, key: &str) -> bool {
        self.name == key || self.aliases.contains(&key)
    }

    /// The value's type as the reference shows it: the kind, and the
    /// accepted range when one is declared (`unsigned integer, 0 to 20`).
    pub fn type_text(&self) -> String {
        match self.range {
            Some(range) => format!("{}, {range}", self.kind),
            None => self.kind.to_string(),
        }
    }
}
