//! The JSON of a lease object: a database's `lock.json` at its replica's
//! root, and a process lease under `.offloop/leases/` beside the replicas
//! (`process_lease.rs`). Both are Litestream's leaser record
//! (`s3/leaser.go`): `{"generation":N,"expires_at":"<RFC 3339>","owner":"…"}`;
//! a `lock.json` offloop writes adds `"process_lease"`, the name of the
//! process lease whose life is the database's.
//!
//! It only encodes, decodes and judges a record; it never reads or writes
//! the store.

use bytes::Bytes;

use crate::store::go_rfc3339_nano;

/// The folder, relative to the folder or prefix that holds the replicas,
/// where process leases live; every `process_lease` name starts with it.
pub const PROCESS_LEASE_FOLDER: &str = ".offloop/leases/";

/// A lease as its object holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseRecord {
    /// Counts the holders: one more each time the lease changes hands.
    pub generation: i64,
    /// Milliseconds since the Unix epoch. 0 (the epoch): released, or a
    /// process lease replaced by whoever took one of its databases over;
    /// dead for good.
    pub expires_at_ms: i64,
    pub owner: String,
    /// In a database's `lock.json`: the process lease (its name under the
    /// replicas' folder, `.offloop/leases/<id>.json`) that keeps this lease
    /// live; `None` in a lease that carries its own deadline (Litestream's,
    /// an older offloop's) and in a process lease itself.
    pub process_lease: Option<String>,
}

impl LeaseRecord {
    /// The JSON Litestream's leaser writes (Go's `json.Marshal` of its
    /// `Lease`: these three fields, in this order), and `process_lease`
    /// last when there is one (Go's decoder ignores a field it does not
    /// know).
    pub fn encode(&self) -> Bytes {
        let text = |s: &str| serde_json::Value::from(s).to_string();
        let process = self
            .process_lease
            .as_deref()
            .map_or_else(String::new, |p| format!(r#","process_lease":{}"#, text(p)));
        Bytes::from(format!(
            r#"{{"generation":{},"expires_at":{},"owner":{}{process}}}"#,
            self.generation,
            text(&go_rfc3339_nano(self.expires_at_ms)),
            text(&self.owner),
        ))
    }

    pub fn decode(bytes: &[u8]) -> std::result::Result<LeaseRecord, String> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
        let generation = value["generation"].as_i64().unwrap_or(0);
        let expires = value["expires_at"]
            .as_str()
            .ok_or("no expires_at")?
            .to_string();
        let expires_at_ms = chrono::DateTime::parse_from_rfc3339(&expires)
            .map_err(|e| format!("expires_at {expires:?}: {e}"))?
            .timestamp_millis();
        let owner = value["owner"].as_str().unwrap_or_default().to_string();
        let process_lease = match &value["process_lease"] {
            serde_json::Value::Null => None,
            serde_json::Value::String(name) if process_lease_file(name).is_some() => {
                Some(name.clone())
            }
            other => {
                return Err(format!(
                    "process_lease {other} is not a process lease's name"
                ))
            }
        };
        Ok(LeaseRecord {
            generation,
            expires_at_ms,
            owner,
            process_lease,
        })
    }

    /// Whether it is still live at `now_ms` by the reader's wall clock (a
    /// `lock.json` that names a process lease lives as that does instead).
    pub fn is_live(&self, now_ms: i64) -> bool {
        now_ms <= self.expires_at_ms
    }

    /// Released, or (a process lease) replaced by a takeover: nobody
    /// renews it again.
    pub fn is_dead(&self) -> bool {
        self.expires_at_ms <= 0
    }
}

/// The file name of a process lease in its folder, from its name in a
/// `lock.json` (`.offloop/leases/<file>`); `None` for any other name, so
/// that a record can never make anyone write elsewhere.
pub fn process_lease_file(name: &str) -> Option<&str> {
    let file = name.strip_prefix(PROCESS_LEASE_FOLDER)?;
    let plain = !file.is_empty()
        && !file.starts_with('.')
        && file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    plain.then_some(file)
}

/// Why a lease `record` keeps others out, until `expires_at_ms`.
pub(crate) fn held_by(record: &LeaseRecord, expires_at_ms: i64) -> String {
    format!(
        "the replica's lease is held by {} until {}",
        if record.owner.is_empty() {
            "another writer"
        } else {
            &record.owner
        },
        go_rfc3339_nano(expires_at_ms)
    )
}

/// How far apart the wall clocks of two machines sharing a replica may be.
/// Another holder judges the lease expired by its own wall clock against
/// `expires_at`; the holder stops this much sooner by its monotonic clock.
pub const CLOCK_SKEW_BOUND: std::time::Duration = std::time::Duration::from_secs(1);

/// 16 hex digits no other holder is likely to draw.
pub(crate) fn random_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded from the system's randomness, per process.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

/// This machine's name, as a holder's id starts with it.
pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_is_litestreams_json() {
        let r = LeaseRecord {
            generation: 3,
            expires_at_ms: 1_764_506_390_401,
            owner: "host:offloop-1".into(),
            process_lease: None,
        };
        let json = String::from_utf8(r.encode().to_vec()).unwrap();
        assert_eq!(
            json,
            r#"{"generation":3,"expires_at":"2025-11-30T12:39:50.401Z","owner":"host:offloop-1"}"#
        );
        assert_eq!(LeaseRecord::decode(json.as_bytes()).unwrap(), r);
        // As Go writes it, with nanoseconds and an offset.
        let go = br#"{"generation":7,"expires_at":"2025-11-30T13:39:50.401234567+01:00","owner":"h:12"}"#;
        let d = LeaseRecord::decode(go).unwrap();
        assert_eq!(
            (d.generation, d.expires_at_ms, d.owner.as_str()),
            (7, 1_764_506_390_401, "h:12")
        );
        assert!(d.is_live(1_764_506_390_401) && !d.is_live(1_764_506_390_402));
    }

    #[test]
    fn a_lock_names_its_process_lease_last_and_only_under_the_lease_folder() {
        let r = LeaseRecord {
            generation: 2,
            expires_at_ms: 1_764_506_390_000,
            owner: "host:offloop-1".into(),
            process_lease: Some(".offloop/leases/host-0123.json".into()),
        };
        let json = String::from_utf8(r.encode().to_vec()).unwrap();
        assert!(
            json.ends_with(r#","process_lease":".offloop/leases/host-0123.json"}"#),
            "{json}"
        );
        assert_eq!(LeaseRecord::decode(json.as_bytes()).unwrap(), r);
        for bad in [
            "../x.json",
            ".offloop/leases/../x",
            ".offloop/leases/",
            "x.json",
        ] {
            let json = format!(
                r#"{{"generation":1,"expires_at":"2025-11-30T12:39:50Z","owner":"o","process_lease":"{bad}"}}"#
            );
            assert!(LeaseRecord::decode(json.as_bytes()).is_err(), "{bad}");
        }
        assert_eq!(
            process_lease_file(".offloop/leases/a-b.json"),
            Some("a-b.json")
        );
    }
}
