//! A database's hold on its replica's lease: one writer at a time,
//! decided by the store's conditional writes.
//!
//! The lease is the object `lock.json` at the replica's root, in the name
//! and format of Litestream's S3 leaser (`s3/leaser.go`), plus the name of
//! the process lease that keeps it live (`process_lease.rs`):
//! `{"generation":N,"expires_at":"<RFC 3339>","owner":"<holder>","process_lease":".offloop/leases/<id>.json"}`.
//! It is written once when the database takes it: with `If-None-Match: *`
//! (none yet) or `If-Match` on the version of a free one, and given back at
//! a clean close by replacing it, again with `If-Match`, by one that expired
//! at the Unix epoch. In between nothing rewrites it: it is live while the
//! process lease it names is, which one thread renews for every database
//! of the process under the same lease root.
//!
//! A `lock.json` that names another process's lease is free once that
//! lease expired (or at once when it is this database's own, reopened after
//! a crash), but whoever takes it first replaces that process lease
//! (`If-Match` on the version it read expired): the old process, if it was
//! only paused, then finds its renewal refused and fences every database it
//! holds under that root, instead of renewing unchanged and writing on. A
//! `lock.json` with its own deadline and no process lease (Litestream's,
//! an older offloop's) is judged by its `expires_at`, as before.
//!
//! Safety rests on the holder's own monotonic clock: the deadline is the
//! process lease's (counted from before the request that wrote it was
//! sent, less [`CLOCK_SKEW_BOUND`]). Past it the lease *lapses*: the holder
//! acknowledges no commit and uploads nothing, until a renewal of the
//! process lease lands. A database is *fenced* when its process lease
//! was taken, or when it finds a TXID it did not write: a fence never
//! lifts, and this open of the database acknowledges no commit again.
//!
//! This file owns the `lock.json` and this database's own fence. It never
//! renews (the process lease does) and never uploads LTX files.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::lease_record::{held_by, process_lease_file};
use crate::process_lease::{FenceHook, Membership, ProcessLease};
use crate::stager::now_ms;
use crate::store::{Expect, Fault, LeaseRoot, Store, Versioned};

pub use crate::lease_record::{LeaseRecord, PROCESS_LEASE_FOLDER};

/// The lease object's name at the replica's root (Litestream's
/// `DefaultLeasePath`).
pub const LEASE_OBJECT: &str = "lock.json";

pub use crate::lease_record::CLOCK_SKEW_BOUND;

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

/// What this holder last wrote to `lock.json`.
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
    /// The process lease that keeps it live, once taken.
    process: OnceLock<Arc<ProcessLease>>,
    /// This database's share of it, until it leaves.
    member: Mutex<Option<Membership>>,
    /// This database's own fence (a TXID it did not write).
    fenced: AtomicBool,
    why_fenced: Mutex<Option<String>>,
    held: Mutex<Option<Held>>,
    /// `""`, but in tests that play several processes in one.
    scope: String,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Lease {
    pub fn new(ttl: Duration) -> Lease {
        Lease {
            ttl,
            owner: OnceLock::new(),
            process: OnceLock::new(),
            member: Mutex::new(None),
            fenced: AtomicBool::new(false),
            why_fenced: Mutex::new(None),
            held: Mutex::new(None),
            scope: String::new(),
        }
    }

    /// A lease whose process lease is of `scope` alone, as if it were
    /// taken by another process: for tests that play several processes
    /// in one.
    #[doc(hidden)]
    pub fn apart(ttl: Duration, scope: &str) -> Lease {
        Lease {
            scope: scope.to_string(),
            ..Lease::new(ttl)
        }
    }

    /// The holder's name in the lease (set once, from the local state).
    pub fn set_owner(&self, owner: String) {
        let _ = self.owner.set(owner);
    }

    pub fn owner(&self) -> &str {
        self.owner.get().map_or("", String::as_str)
    }

    /// The process lease this database's lease lives by, once taken.
    pub fn process(&self) -> Option<&Arc<ProcessLease>> {
        self.process.get()
    }

    /// Takes the lease: free, expired, or this holder's own (a reopen after
    /// a crash takes it back at once).
    pub fn acquire(&self, store: &dyn Store) -> std::result::Result<(), Refusal> {
        let root = store.lease_root().map_err(Refusal::Store)?;
        // The first database of the process under this root takes the
        // process lease while `lock.json` is read: one round, not two.
        let (member, current) = match ProcessLease::join_live(&root, self.ttl, &self.scope) {
            Some(member) => (Ok(member), store.read_object(LEASE_OBJECT)),
            None => std::thread::scope(|s| {
                let joining = s.spawn(|| ProcessLease::join(&root, self.ttl, &self.scope));
                let current = store.read_object(LEASE_OBJECT);
                let joined = joining.join().unwrap_or_else(|_| {
                    Err(Error::Panic("taking the process lease panicked".into()))
                });
                (joined, current)
            }),
        };
        let member = member.map_err(Refusal::Store)?;
        let current = current.map_err(Refusal::Store)?;
        match self.write_over(store, &root, member, current.as_ref())? {
            Taken::Yes => Ok(()),
            Taken::Raced => {
                // Another holder won the race for it.
                let now = store.read_object(LEASE_OBJECT).ok().flatten();
                let record = now.and_then(|v| LeaseRecord::decode(&v.bytes).ok());
                Err(Refusal::Held(match record {
                    Some(r) => held_by(&r, r.expires_at_ms),
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
        let root = store.lease_root().map_err(Refusal::Store)?;
        let member = ProcessLease::join(&root, self.ttl, &self.scope).map_err(Refusal::Store)?;
        match self.write_over(store, &root, member, Some(seen))? {
            Taken::Yes => Ok(()),
            Taken::Raced => self.acquire(store),
        }
    }

    /// Writes `lock.json` naming the process lease `member` joined over
    /// `current` (`None`: no object) if the lease may be taken: `Raced`
    /// when the object was no longer `current`.
    fn write_over(
        &self,
        store: &dyn Store,
        root: &LeaseRoot,
        member: Membership,
        current: Option<&Versioned>,
    ) -> std::result::Result<Taken, Refusal> {
        let ours = member.process().clone();
        let judged = match current {
            None => Ok((Expect::Absent, 1)),
            Some(v) => LeaseRecord::decode(&v.bytes)
                .map_err(|why| {
                    Refusal::Store(Error::State(format!(
                        "the replica's {LEASE_OBJECT} cannot be read: {why}"
                    )))
                })
                .and_then(|record| {
                    self.may_take(root, &ours, &record)?;
                    Ok((Expect::Version(v.version.clone()), record.generation + 1))
                }),
        };
        let (expect, generation) = match judged {
            Ok(judged) => judged,
            Err(refusal) => {
                // Nothing was written under it: no lock.json to give back.
                member.leave(true);
                return Err(refusal);
            }
        };
        let record = LeaseRecord {
            generation,
            expires_at_ms: ours.expires_at_ms(),
            owner: self.owner().to_string(),
            process_lease: Some(ours.name().to_string()),
        };
        let version = match store.replace_object(LEASE_OBJECT, record.encode(), &expect) {
            Ok(version) => version,
            Err(e) if e.fault() == Some(Fault::Conflict) => {
                member.leave(true);
                return Ok(Taken::Raced);
            }
            Err(e) => {
                member.leave(true);
                return Err(Refusal::Store(e));
            }
        };
        *lock(&self.held) = Some(Held {
            generation,
            version,
        });
        if self.process.set(ours).is_err() {
            // Taken again by the same open: it lives by the first.
            member.leave(true);
        } else {
            *lock(&self.member) = Some(member);
        }
        Ok(Taken::Yes)
    }

    /// Whether the lease `record` (read from `lock.json`) may be taken by
    /// this holder, whose process lease is `ours`. When it names another
    /// process's lease that may still be renewed, that lease is replaced
    /// first (`If-Match` on the version read), so its process can never
    /// renew it again: taking one of its databases fences them all.
    fn may_take(
        &self,
        root: &LeaseRoot,
        ours: &ProcessLease,
        record: &LeaseRecord,
    ) -> std::result::Result<(), Refusal> {
        let now = now_ms();
        let mine = record.owner == self.owner();
        let name = match &record.process_lease {
            // A lease with its own deadline (Litestream's, an older offloop's).
            None if record.is_live(now) && !mine => {
                return Err(Refusal::Held(held_by(record, record.expires_at_ms)))
            }
            None => return Ok(()),
            Some(_) if record.is_dead() => return Ok(()),
            // Live while this process renews it: another database of
            // this process holds it, or this very one (opened again).
            Some(name) if name == ours.name() => {
                return match mine {
                    true => Ok(()),
                    false => Err(Refusal::Held(held_by(record, ours.expires_at_ms()))),
                }
            }
            Some(name) => name,
        };
        let file = process_lease_file(name).unwrap_or_default();
        let unreadable = |why: String| {
            Refusal::Store(Error::State(format!(
                "the replica's process lease {name} cannot be read: {why}"
            )))
        };
        let read = |store: &dyn Store| -> std::result::Result<_, Refusal> {
            let found = store.read_object(file).map_err(Refusal::Store)?;
            let judged = match &found {
                Some(v) => Some(LeaseRecord::decode(&v.bytes).map_err(unreadable)?),
                None => None,
            };
            Ok(found.zip(judged))
        };
        let Some((found, process)) = read(&*root.store)? else {
            return Ok(());
        };
        if process.is_dead() {
            return Ok(());
        }
        if process.is_live(now) && !mine {
            return Err(Refusal::Held(held_by(record, process.expires_at_ms)));
        }
        let taken = LeaseRecord {
            generation: process.generation + 1,
            expires_at_ms: 0,
            owner: self.owner().to_string(),
            process_lease: None,
        };
        match root
            .store
            .replace_object(file, taken.encode(), &Expect::Version(found.version))
        {
            Ok(_) => Ok(()),
            Err(e) if e.fault() == Some(Fault::Conflict) => match read(&*root.store)? {
                // Another taker replaced it first, or it was released.
                None => Ok(()),
                Some((_, now)) if now.is_dead() => Ok(()),
                // Its process renewed it meanwhile: it is alive.
                Some((_, now)) => Err(Refusal::Held(held_by(record, now.expires_at_ms))),
            },
            Err(e) => Err(Refusal::Store(e)),
        }
    }

    /// Renews the process lease now, as its thread does every third of the
    /// TTL (a test's way to end a lapse).
    pub fn renew(&self) -> Result<()> {
        match self.process.get() {
            Some(process) => process.renew(),
            None => Err(Error::State("the lease is not held".into())),
        }
    }

    /// `hook` hears why, once, if the process lease is lost for good.
    pub fn on_fence(&self, hook: FenceHook) {
        if let Some(member) = lock(&self.member).as_ref() {
            member.on_fence(hook);
        }
    }

    /// Stops counting on the process lease without giving `lock.json`
    /// back: it stays live while the process lease does (other databases
    /// renew it), and expires with it.
    pub fn abandon(&self) {
        lock(&self.member).take();
    }

    /// Gives the lease up (a clean close): it expires at once for everyone.
    /// Nothing happens when it is no longer surely ours.
    pub fn release(&self, store: &dyn Store) -> Result<()> {
        let Some(held) = lock(&self.held).clone() else {
            return Ok(());
        };
        if self.refuses_commits() {
            return Ok(());
        }
        let record = LeaseRecord {
            generation: held.generation,
            expires_at_ms: 0,
            owner: self.owner().to_string(),
            process_lease: self.process.get().map(|p| p.name().to_string()),
        };
        store.replace_object(
            LEASE_OBJECT,
            record.encode(),
            &Expect::Version(held.version),
        )?;
        lock(&self.held).take();
        if let Some(member) = lock(&self.member).take() {
            member.leave(true);
        }
        Ok(())
    }

    /// When the lease may be someone else's, by this process's monotonic
    /// clock; `None` while it was never taken.
    pub fn deadline(&self) -> Option<Instant> {
        self.process.get()?.deadline()
    }

    /// Whether a commit now must be refused: fenced, never taken, or past
    /// the deadline (lapsed, until a renewal lands). Cheap: the writer asks
    /// before every commit.
    pub fn refuses_commits(&self) -> bool {
        self.fenced.load(Ordering::Acquire)
            || self.process.get().is_none_or(|p| p.refuses_commits())
    }

    /// Never taken, or past the deadline without a renewal since.
    fn not_yet_or_lapsed(&self) -> bool {
        self.process.get().is_none_or(|p| p.not_yet_or_lapsed())
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
            .process
            .get()
            .and_then(|p| p.renewal_error())
            .map_or_else(String::new, |e| format!(" ({e})"));
        Some(format!(
            "the replica's lease was not renewed before its deadline{cause}, so it may be \
             another writer's: writes are refused until a renewal finds it still this \
             database's, and for good if another writer took it"
        ))
    }

    /// Fences this database for good; the first reason given is kept.
    pub fn fence(&self, why: String) {
        let mut slot = lock(&self.why_fenced);
        if slot.is_none() {
            *slot = Some(why);
        }
        self.fenced.store(true, Ordering::Release);
    }

    pub fn is_fenced(&self) -> bool {
        self.fenced.load(Ordering::Acquire) || self.process.get().is_some_and(|p| p.is_fenced())
    }

    pub fn why_fenced(&self) -> Option<String> {
        lock(&self.why_fenced)
            .clone()
            .or_else(|| self.process.get()?.why_fenced())
    }
}
