//! The replica's lease: one writer at a time, decided by the store's
//! conditional writes.
//!
//! The lease is the object `lock.json` at the replica's root, in the name
//! and format of Litestream's S3 leaser (`s3/leaser.go`), so a Litestream
//! writer that takes leases and offloop respect each other's:
//! `{"generation":N,"expires_at":"<RFC 3339>","owner":"<holder>"}`. It is
//! taken with `If-None-Match: *` (none yet) or `If-Match` on the version of
//! an expired one, renewed with `If-Match` on the version this holder
//! wrote, and released by replacing it, again with `If-Match`, by one that
//! expired at the Unix epoch (never an unconditional delete, which could
//! remove a successor's).
//!
//! Safety rests on the holder's own monotonic clock: its deadline is the
//! moment before which nobody else can take the lease, counted from before
//! the request that wrote it was sent, less [`CLOCK_SKEW_BOUND`] for the
//! others' wall clocks. At the deadline the lease *lapses*: the holder
//! acknowledges no commit and uploads nothing. A renewal that lands later
//! ends the lapse only if it still finds the object as this holder last
//! wrote it (`If-Match` on that version): then nobody took the lease in
//! between, nobody else can have written a TXID, and commits go on. Anyone
//! who replaced the object meanwhile makes that renewal a conflict, and
//! the holder is *fenced*: a fence never lifts, and this open of the
//! database acknowledges no commit again.
//!
//! This file owns the record, the deadline and the fence. It never decides
//! when to renew (the lease thread does) and never uploads LTX files.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::stager::now_ms;
use crate::store::{go_rfc3339_nano, Expect, Fault, Store, Versioned};

/// The lease object's name at the replica's root (Litestream's
/// `DefaultLeasePath`).
pub const LEASE_OBJECT: &str = "lock.json";

/// How far apart the wall clocks of two machines sharing a replica may be.
/// Another holder judges the lease expired by its own wall clock against
/// `expires_at`; the holder stops this much sooner by its monotonic clock.
pub const CLOCK_SKEW_BOUND: Duration = Duration::from_secs(1);

/// The lease as the object holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseRecord {
    /// Counts the holders: one more each time the lease changes hands.
    pub generation: i64,
    /// Milliseconds since the Unix epoch.
    pub expires_at_ms: i64,
    pub owner: String,
}

impl LeaseRecord {
    /// The JSON Litestream's leaser writes (Go's `json.Marshal` of its
    /// `Lease`: these three fields, in this order).
    pub fn encode(&self) -> Bytes {
        let text = |s: &str| serde_json::Value::from(s).to_string();
        Bytes::from(format!(
            r#"{{"generation":{},"expires_at":{},"owner":{}}}"#,
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
        Ok(LeaseRecord {
            generation,
            expires_at_ms,
            owner,
        })
    }

    /// Whether it is still live at `now_ms` by the reader's wall clock.
    pub fn is_live(&self, now_ms: i64) -> bool {
        now_ms <= self.expires_at_ms
    }
}

/// Why the lease could not be taken.
#[derive(Debug)]
pub enum Refusal {
    /// Another holder's lease is live.
    Held(String),
    /// The replica failed.
    Store(Error),
}

/// What a conditional write of the lease did.
enum Taken {
    Yes,
    /// The object was not as read: someone wrote it in between.
    Raced,
}

/// What this holder last wrote.
#[derive(Clone, Debug)]
struct Held {
    generation: i64,
    version: String,
}

/// One database's hold on its replica's lease.
#[derive(Debug)]
pub struct Lease {
    pub ttl: Duration,
    owner: OnceLock<String>,
    /// The origin of `deadline_ns`.
    base: Instant,
    /// Nanoseconds after `base` at which the lease may be someone else's;
    /// 0 while it was never taken.
    deadline_ns: AtomicU64,
    fenced: AtomicBool,
    why_fenced: Mutex<Option<String>>,
    held: Mutex<Option<Held>>,
    /// Why the last renewal failed, while no renewal has landed since.
    renewal_error: Mutex<Option<String>>,
}

impl Lease {
    pub fn new(ttl: Duration) -> Lease {
        Lease {
            ttl,
            owner: OnceLock::new(),
            base: Instant::now(),
            deadline_ns: AtomicU64::new(0),
            fenced: AtomicBool::new(false),
            why_fenced: Mutex::new(None),
            held: Mutex::new(None),
            renewal_error: Mutex::new(None),
        }
    }

    /// The holder's name in the lease (set once, from the local state).
    pub fn set_owner(&self, owner: String) {
        let _ = self.owner.set(owner);
    }

    pub fn owner(&self) -> &str {
        self.owner.get().map_or("", String::as_str)
    }

    /// Takes the lease: free, expired, or this holder's own (a reopen after
    /// a crash takes it back at once).
    pub fn acquire(&self, store: &dyn Store) -> std::result::Result<(), Refusal> {
        let current = store.read_object(LEASE_OBJECT).map_err(Refusal::Store)?;
        match self.write_over(store, current.as_ref())? {
            Taken::Yes => Ok(()),
            Taken::Raced => {
                // Another holder won the race for it.
                let now = store.read_object(LEASE_OBJECT).ok().flatten();
                let record = now.and_then(|v| LeaseRecord::decode(&v.bytes).ok());
                Err(Refusal::Held(match record {
                    Some(r) => held_by(&r),
                    None => "another writer took the replica's lease first".into(),
                }))
            }
        }
    }

    /// Takes the lease as [`Lease::acquire`] does, over `seen`: the object
    /// as a read moments ago found it, which saves reading it again (a
    /// follower's lease watch has just read it). If it changed since, it
    /// is read again and judged as it is now.
    pub fn acquire_seen(
        &self,
        store: &dyn Store,
        seen: &Versioned,
    ) -> std::result::Result<(), Refusal> {
        match self.write_over(store, Some(seen))? {
            Taken::Yes => Ok(()),
            Taken::Raced => self.acquire(store),
        }
    }

    /// Writes this holder's lease over `current` (`None`: no object) if it
    /// may be taken: `Raced` when the object was no longer `current`.
    fn write_over(
        &self,
        store: &dyn Store,
        current: Option<&Versioned>,
    ) -> std::result::Result<Taken, Refusal> {
        let (expect, generation) = match current {
            None => (Expect::Absent, 1),
            Some(v) => {
                let record = LeaseRecord::decode(&v.bytes).map_err(|why| {
                    Refusal::Store(Error::State(format!(
                        "the replica's {LEASE_OBJECT} cannot be read: {why}"
                    )))
                })?;
                if record.is_live(now_ms()) && record.owner != self.owner() {
                    return Err(Refusal::Held(held_by(&record)));
                }
                (Expect::Version(v.version.clone()), record.generation + 1)
            }
        };
        match self.write(store, generation, &expect) {
            Ok(()) => Ok(Taken::Yes),
            Err(e) if e.fault() == Some(Fault::Conflict) => Ok(Taken::Raced),
            Err(e) => Err(Refusal::Store(e)),
        }
    }

    /// Renews the lease, also once it lapsed. A conflict (someone replaced
    /// it) fences at once; another failure leaves the deadline as it was.
    pub fn renew(&self, store: &dyn Store) -> Result<()> {
        let Some(held) = self.held() else {
            return Err(Error::State("the lease is not held".into()));
        };
        if self.is_fenced() {
            return Err(Error::State(self.why_fenced().unwrap_or_default()));
        }
        let result = self.write(store, held.generation, &Expect::Version(held.version));
        match &result {
            Ok(()) => *self.renewal_error.lock().unwrap_or_else(|e| e.into_inner()) = None,
            Err(e) => self.renewal_failed(&e.to_string()),
        }
        if let Err(e) = &result {
            if e.fault() == Some(Fault::Conflict) {
                let now = store.read_object(LEASE_OBJECT).ok().flatten();
                let by = now
                    .and_then(|v| LeaseRecord::decode(&v.bytes).ok())
                    .map_or_else(|| "someone else".into(), |r| r.owner);
                self.fence(format!(
                    "the replica's lease was taken by {by}: this database no longer writes to it"
                ));
            }
        }
        result
    }

    /// Gives the lease up (a clean close): it expires at once for everyone.
    /// Nothing happens when it is no longer surely ours.
    pub fn release(&self, store: &dyn Store) -> Result<()> {
        let Some(held) = self.held() else {
            return Ok(());
        };
        if self.refuses_commits() {
            return Ok(());
        }
        let record = LeaseRecord {
            generation: held.generation,
            expires_at_ms: 0,
            owner: self.owner().to_string(),
        };
        store.replace_object(
            LEASE_OBJECT,
            record.encode(),
            &Expect::Version(held.version),
        )?;
        self.held.lock().unwrap_or_else(|e| e.into_inner()).take();
        Ok(())
    }

    fn write(&self, store: &dyn Store, generation: i64, expect: &Expect) -> Result<()> {
        // Both clocks read before the request leaves: the lease cannot
        // expire for anyone before `sent_wall + ttl`, and that is no sooner
        // than `sent + ttl` here, less the others' skew.
        let sent = Instant::now();
        let record = LeaseRecord {
            generation,
            expires_at_ms: now_ms() + self.ttl.as_millis() as i64,
            owner: self.owner().to_string(),
        };
        let version = store.replace_object(LEASE_OBJECT, record.encode(), expect)?;
        let deadline =
            (sent + self.ttl.saturating_sub(CLOCK_SKEW_BOUND)).saturating_duration_since(self.base);
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) = Some(Held {
            generation,
            version,
        });
        self.deadline_ns
            .fetch_max(deadline.as_nanos().max(1) as u64, Ordering::Release);
        Ok(())
    }

    fn held(&self) -> Option<Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// When the lease may be someone else's, by this process's monotonic
    /// clock; `None` while it was never taken.
    pub fn deadline(&self) -> Option<Instant> {
        match self.deadline_ns.load(Ordering::Acquire) {
            0 => None,
            ns => Some(self.base + Duration::from_nanos(ns)),
        }
    }

    /// Whether a commit now must be refused: fenced, never taken, or past
    /// the deadline (lapsed, until a renewal lands). Cheap: the writer asks
    /// before every commit.
    pub fn refuses_commits(&self) -> bool {
        self.fenced.load(Ordering::Acquire) || self.not_yet_or_lapsed()
    }

    /// Records why a renewal failed, for [`Lease::why_refused`].
    pub fn renewal_failed(&self, why: &str) {
        *self.renewal_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.to_string());
    }

    /// Never taken, or past the deadline without a renewal since.
    fn not_yet_or_lapsed(&self) -> bool {
        match self.deadline_ns.load(Ordering::Acquire) {
            0 => true,
            ns => self.base.elapsed().as_nanos() as u64 >= ns,
        }
    }

    /// Past the deadline, not fenced: a renewal may still end it.
    pub fn is_lapsed(&self) -> bool {
        !self.is_fenced() && self.deadline().is_some() && self.not_yet_or_lapsed()
    }

    /// Why commits are refused now, `None` while they are not.
    pub fn why_refused(&self) -> Option<String> {
        if let Some(why) = self.why_fenced() {
            return Some(why);
        }
        if !self.not_yet_or_lapsed() {
            return None;
        }
        if self.deadline().is_none() {
            return Some("the replica's lease is not held".into());
        }
        let cause = self
            .renewal_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or_else(String::new, |e| format!(" ({e})"));
        Some(format!(
            "the replica's lease was not renewed before its deadline{cause}, so it may be \
             another writer's: writes are refused until a renewal finds it still this \
             database's, and for good if another writer took it"
        ))
    }

    /// Fences this holder for good; the first reason given is kept.
    pub fn fence(&self, why: String) {
        let mut slot = self.why_fenced.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(why);
        }
        self.fenced.store(true, Ordering::Release);
    }

    pub fn is_fenced(&self) -> bool {
        self.fenced.load(Ordering::Acquire)
    }

    pub fn why_fenced(&self) -> Option<String> {
        self.why_fenced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

fn held_by(record: &LeaseRecord) -> String {
    format!(
        "the replica's lease is held by {} until {}",
        if record.owner.is_empty() {
            "another writer"
        } else {
            &record.owner
        },
        go_rfc3339_nano(record.expires_at_ms)
    )
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
}
