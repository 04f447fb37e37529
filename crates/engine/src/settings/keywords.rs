//! The words settings are written in: SQLite's keywords for journal mode,
//! synchronous and temp store, and the value of a free-form pragma. Plain
//! data; nothing here touches a connection.

/// An enum of SQLite keywords, each with the text SQLite reads back (and
/// for the numeric ones, the number `PRAGMA x` returns).
macro_rules! keywords {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Case-insensitive, as SQLite reads it.
            pub fn parse(text: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|k| k.as_str().eq_ignore_ascii_case(text))
            }
        }
    };
}

keywords!(
    /// `PRAGMA journal_mode`.
    JournalMode {
        Delete = "delete",
        Truncate = "truncate",
        Persist = "persist",
        Memory = "memory",
        Wal = "wal",
        Off = "off",
    }
);

keywords!(
    /// `PRAGMA synchronous`: reads back as 0 to 3, in this order.
    Synchronous {
        Off = "off",
        Normal = "normal",
        Full = "full",
        Extra = "extra",
    }
);

keywords!(
    /// `PRAGMA temp_store`: reads back as 0 to 2, in this order.
    TempStore {
        Default = "default",
        File = "file",
        Memory = "memory",
    }
);

/// The name of the keyword SQLite reads back as `level` (its index).
pub(crate) fn keyword_at(all: &[&'static str], level: i64) -> Option<&'static str> {
    usize::try_from(level)
        .ok()
        .and_then(|i| all.get(i).copied())
}

/// A value for one of the free-form `pragmas`.
#[derive(Debug, Clone, PartialEq)]
pub enum PragmaValue {
    Integer(i64),
    Text(String),
}
