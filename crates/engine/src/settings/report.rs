//! What a database's connections have in force: one `ConnectionSettings`
//! per connection, the `SettingsReport` of them all, and the `Mismatch`es
//! between request and effect (an error under `strict_settings`).

use std::fmt;

use crate::error::Error;
use crate::role::Role;

use super::policy::{Key, SettingValue};

/// The error code of an open that `strict_settings` refused.
pub const SETTING_ERROR_CODE: &str = "ERR_OFFLOOP_SETTING";

/// A setting whose value in force on a connection differs from the request.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub role: Role,
    /// The pragma's name (`"mmap_size"`).
    pub name: String,
    pub requested: SettingValue,
    pub effective: SettingValue,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} = {} was requested, but {} is in force on {}",
            self.name, self.requested, self.effective, self.role
        )
    }
}

/// What one connection has in force.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionSettings {
    pub role: Role,
    /// Every setting of [`Key::ALL`], as read back on this connection.
    pub values: Vec<(Key, SettingValue)>,
    /// The free-form `pragmas`, as read back (only where they apply).
    pub pragmas: Vec<(String, SettingValue)>,
    /// The settings applied here whose value in force is not the request.
    pub mismatches: Vec<Mismatch>,
}

impl ConnectionSettings {
    pub fn get(&self, key: Key) -> &SettingValue {
        self.values
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(&SettingValue::Null, |(_, v)| v)
    }
}

/// Every connection's settings: the writer first, then the readers by
/// index, then the checkpointer (when it runs).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SettingsReport {
    pub connections: Vec<ConnectionSettings>,
}

impl SettingsReport {
    /// Adds one connection's settings, keeping the order by role.
    pub fn insert(&mut self, connection: ConnectionSettings) {
        let at = self
            .connections
            .partition_point(|c| c.role < connection.role);
        self.connections.insert(at, connection);
    }

    pub fn merge(&mut self, other: SettingsReport) {
        for connection in other.connections {
            self.insert(connection);
        }
    }

    pub fn role(&self, role: Role) -> Option<&ConnectionSettings> {
        self.connections.iter().find(|c| c.role == role)
    }

    pub fn mismatches(&self) -> impl Iterator<Item = &Mismatch> {
        self.connections.iter().flat_map(|c| c.mismatches.iter())
    }
}

/// The error that fails an open under `strict_settings`.
pub fn strict_error(mismatch: &Mismatch) -> Error {
    Error::Misuse {
        code: SETTING_ERROR_CODE,
        message: format!("{mismatch} (strictSettings refuses to open)"),
    }
}

/// Whether `error` is a `strict_settings` refusal.
pub fn is_strict_error(error: &Error) -> bool {
    matches!(error, Error::Misuse { code, .. } if *code == SETTING_ERROR_CODE)
}
