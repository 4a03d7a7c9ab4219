//! One field of a record and a selection of fields: what a workload, a
//! store and the codec pass each other.
//!
//! [`Record`]: crate::Record

/// One field of a [`Record`](crate::Record): a name and its value bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    /// The field's name, for example `field0`.
    pub name: &'a str,
    /// The field's value.
    pub value: &'a [u8],
}

/// Which fields an operation reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fields<'a> {
    /// Every field of the record.
    All,
    /// Only the named fields.
    Only(&'a [String]),
}

impl Fields<'_> {
    /// Whether the field called `name` is selected.
    pub fn contains(&self, name: &str) -> bool {
        match self {
            Fields::All => true,
            Fields::Only(names) => names.iter().any(|n| n == name),
        }
    }
}
