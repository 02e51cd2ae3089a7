//! Closed sets of names, declared once by the domain enum that owns them and read by everything
//! that parses or documents them (the app's body and query types, the Postgres row decoding).

/// An enum whose values travel as fixed names (`"admin"`, `"checkins"`…).
pub trait WireEnum: Copy + Sized + 'static {
    /// What the document calls the set (a schema name).
    const NAME: &'static str;
    /// Every value, in the order the document lists them.
    const ALL: &'static [Self];

    fn as_str(self) -> &'static str;

    /// The value with this exact name.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.as_str() == name)
    }

    /// The names, for messages: `"admin, member, guest"`.
    fn names() -> String {
        Self::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
