//! The process lease: one lease object per process under each lease root
//! (the folder or S3 prefix that holds replicas, on one client; see
//! [`LeaseRoot`]) and TTL, renewed every third of the TTL by one thread
//! (`offloop-lease`) for every database of the process that writes a
//! replica there. Each database's `lock.json` names it, so an idle tenant
//! costs no request of its own: the process pays 18 conditional PUTs a
//! minute (at the default TTL) per root, however many databases it holds.
//!
//! The object is `<root>/.offloop/leases/<host>-<random>.json`, with the
//! JSON of Litestream's leaser (`generation`, `expires_at`, `owner`); its
//! name is new each time the process starts holding a lease there, and it
//! is renewed with `If-Match` on the version this process last wrote.
//! Safety rests on the same rules as a database's own lease had: the
//! deadline is counted on the monotonic clock from before the request that
//! set `expires_at` was sent, less [`CLOCK_SKEW_BOUND`]; past it, every
//! database under it refuses commits (the lapse), and a renewal that finds
//! the object as this process wrote it ends the lapse. Whoever takes over
//! any of its databases after it expired first replaces this object
//! (`lease.rs`), so that renewal is refused: the process is then
//! *fenced*, and with it every database it holds under that root, for good.
//!
//! It owns the object, the deadline, the fence and the renewal thread, and
//! which databases are members. It never reads or writes a `lock.json`,
//! and never refuses a commit itself (each database's `Lease` asks it).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};

use crate::error::{Error, Result};
use crate::lease_record::CLOCK_SKEW_BOUND;
use crate::lease_record::{host_name, random_id};
use crate::lease_record::{LeaseRecord, PROCESS_LEASE_FOLDER};
use crate::stager::now_ms;
use crate::store::{Expect, Fault, LeaseRoot, Store};

/// After a failed renewal, the next try comes this soon (or at a third of
/// the TTL, if sooner).
const RETRY: Duration = Duration::from_millis(250);

/// Told why, once, when the process lease is lost for good.
pub type FenceHook = Arc<dyn Fn(String) + Send + Sync>;

/// What this process last wrote to the object.
#[derive(Clone, Debug)]
struct Held {
    generation: i64,
    version: String,
}

#[derive(Default)]
struct Members {
    next: u64,
    hooks: HashMap<u64, Option<FenceHook>>,
    /// A member left without giving its `lock.json` back: at the end the
    /// object is left to expire rather than released.
    dirty: bool,
    ended: bool,
}

/// The process's slot for one lease root and TTL.
type Slot = Arc<Mutex<Option<Arc<ProcessLease>>>>;
/// By lease root key, TTL and scope (`""` but in tests, which play two
/// processes in one).
type Registry = HashMap<(String, Duration, String), Slot>;
static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One process's lease under one lease root, for one TTL.
pub struct ProcessLease {
    ttl: Duration,
    /// Its name as a `lock.json` names it: `.offloop/leases/<file>`.
    name: String,
    file: String,
    owner: String,
    /// The lease root's store, until the lease ends: then it goes, and with
    /// the process's last store, the store's threads (a closed database's
    /// `Lease` may be held long after, and with it this).
    store: Mutex<Option<Arc<dyn Store>>>,
    slot: Slot,
    /// The origin of `deadline_ns`.
    base: Instant,
    /// Nanoseconds after `base` at which the lease may be someone else's.
    deadline_ns: AtomicU64,
    /// `expires_at` as last written (ms since the epoch).
    expires_at_ms: AtomicI64,
    fenced: AtomicBool,
    why_fenced: Mutex<Option<String>>,
    /// Locked across each write of the object, so that one renewal at a
    /// time names the version the last one wrote.
    held: Mutex<Option<Held>>,
    renewal_error: Mutex<Option<String>>,
    members: Mutex<Members>,
    /// Its thread skips its renewals, as if the process were paused.
    held_back: AtomicBool,
    stop: Mutex<Option<Sender<()>>>,
    thread: Mutex<Option<(ThreadId, JoinHandle<()>)>>,
}

impl std::fmt::Debug for ProcessLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ProcessLease({})", self.name)
    }
}

/// A database's share of a process lease: renewed while it lasts. Dropped
/// without [`Membership::leave`]`(true)`, it counts as a database that did
/// not give its `lock.json` back.
pub struct Membership {
    process: Arc<ProcessLease>,
    id: u64,
    released: bool,
}

impl std::fmt::Debug for Membership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Membership({:?}, {})", self.process, self.id)
    }
}

impl Membership {
    pub fn process(&self) -> &Arc<ProcessLease> {
        &self.process
    }

    /// `hook` hears why, once, if the process lease is lost for good.
    pub fn on_fence(&self, hook: FenceHook) {
        let mut members = lock(&self.process.members);
        if let Some(slot) = members.hooks.get_mut(&self.id) {
            *slot = Some(hook);
        }
    }

    /// Leaves: `released` when the database gave its `lock.json` back.
    pub fn leave(mut self, released: bool) {
        self.released = released;
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        self.process.leave(self.id, self.released);
    }
}

impl ProcessLease {
    /// Joins this process's lease under `root` with `ttl`, taking one
    /// first when there is none (one conditional create) or when the one
    /// there was lost. A lapsed one is renewed first; one that cannot be
    /// is refused with the store's error.
    /// `scope` is `""` but in tests, where each scope plays a process of
    /// its own.
    pub fn join(root: &LeaseRoot, ttl: Duration, scope: &str) -> Result<Membership> {
        let slot = {
            let mut registry = lock(&REGISTRY);
            let map = registry.get_or_insert_with(HashMap::new);
            let key = (root.key.clone(), ttl, scope.to_string());
            map.entry(key).or_default().clone()
        };
        let mut current = lock(&slot);
        if let Some(process) = current.as_ref().filter(|p| !p.is_fenced()) {
            if process.not_yet_or_lapsed() {
                let renewed = process.renew();
                if !process.is_fenced() {
                    renewed?;
                }
            }
            if !process.is_fenced() {
                return Ok(process.add_member());
            }
        }
        let process = ProcessLease::take(root, ttl, slot.clone())?;
        *current = Some(process.clone());
        Ok(process.add_member())
    }

    /// Joins this process's lease under `root` with `ttl` if it holds a
    /// live one there: no request. `None` when joining needs one.
    pub fn join_live(root: &LeaseRoot, ttl: Duration, scope: &str) -> Option<Membership> {
        let slot = {
            let registry = lock(&REGISTRY);
            let key = (root.key.clone(), ttl, scope.to_string());
            registry.as_ref()?.get(&key)?.clone()
        };
        let current = lock(&slot);
        let process = current.as_ref().filter(|p| !p.refuses_commits())?;
        Some(process.add_member())
    }

    /// Takes a new lease object under `root` and starts renewing it.
    fn take(root: &LeaseRoot, ttl: Duration, slot: Slot) -> Result<Arc<ProcessLease>> {
        let host = host_name();
        let id = random_id();
        let file_host: String = host
            .chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c,
                _ => '_',
            })
            .collect();
        let file = format!("{file_host}-{id}.json");
        let process = Arc::new(ProcessLease {
            ttl,
            name: format!("{PROCESS_LEASE_FOLDER}{file}"),
            file,
            owner: format!("{host}:offloop-process-{id}"),
            store: Mutex::new(Some(root.store.clone())),
            slot,
            base: Instant::now(),
            deadline_ns: AtomicU64::new(0),
            expires_at_ms: AtomicI64::new(0),
            fenced: AtomicBool::new(false),
            why_fenced: Mutex::new(None),
            held: Mutex::new(None),
            renewal_error: Mutex::new(None),
            members: Mutex::new(Members::default()),
            held_back: AtomicBool::new(false),
            stop: Mutex::new(None),
            thread: Mutex::new(None),
        });
        process.write(&mut lock(&process.held), 1, &Expect::Absent, false)?;
        let (stop, stopped) = bounded::<()>(1);
        let renewing = process.clone();
        let thread = std::thread::Builder::new()
            .name("offloop-lease".into())
            .spawn(move || renewing.renew_until(&stopped))
            .map_err(|e| Error::io("start the lease thread", e))?;
        *lock(&process.stop) = Some(stop);
        *lock(&process.thread) = Some((thread.thread().id(), thread));
        Ok(process)
    }

    fn add_member(self: &Arc<Self>) -> Membership {
        let mut members = lock(&self.members);
        let id = members.next;
        members.next += 1;
        members.hooks.insert(id, None);
        Membership {
            process: self.clone(),
            id,
            released: false,
        }
    }

    /// A member leaves; the last one ends the lease: its thread stops, and
    /// the object is released when every member gave its `lock.json` back
    /// (else it expires a TTL after its last renewal).
    fn leave(&self, id: u64, released: bool) {
        let slot = self.slot.clone();
        let mut current = lock(&slot);
        let last = {
            let mut members = lock(&self.members);
            members.hooks.remove(&id);
            members.dirty |= !released;
            let last = members.hooks.is_empty() && !members.ended;
            members.ended |= last;
            last
        };
        if !last {
            return;
        }
        if current
            .as_ref()
            .is_some_and(|c| std::ptr::eq(Arc::as_ptr(c), self))
        {
            current.take();
        }
        drop(current);
        lock(&self.stop).take();
        let thread = lock(&self.thread).take();
        if let Some((id, thread)) = thread {
            if id != std::thread::current().id() {
                let _ = thread.join();
            }
        }
        if !lock(&self.members).dirty && !self.is_fenced() {
            let mut held = lock(&self.held);
            if let Some(h) = held.clone() {
                let _ = self.write(&mut held, h.generation, &Expect::Version(h.version), true);
            }
        }
        lock(&self.store).take();
    }

    fn store(&self) -> Result<Arc<dyn Store>> {
        lock(&self.store)
            .clone()
            .ok_or_else(|| Error::State("the process lease has ended".into()))
    }

    /// The thread's loop: a renewal every third of the TTL after the last
    /// write, retried every `RETRY` while it fails, until stopped or fenced.
    fn renew_until(&self, stopped: &Receiver<()>) {
        let every = self.ttl / 3;
        let mut next = Instant::now() + every;
        loop {
            match stopped.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            if self.is_fenced() {
                return;
            }
            if self.held_back.load(Ordering::Acquire) {
                next = Instant::now() + every;
                continue;
            }
            let started = Instant::now();
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.renew())) {
                Ok(Ok(())) => next = started + every,
                Ok(Err(_)) if self.is_fenced() => return,
                Ok(Err(_)) => next = Instant::now() + RETRY.min(every),
                Err(_) => {
                    self.renewal_failed("offloop internal error: a renewal panicked");
                    next = Instant::now() + RETRY.min(every);
                }
            }
        }
    }

    /// Renews the object, also once it lapsed. Finding it replaced fences
    /// the process lease, and every database under it, for good.
    pub fn renew(&self) -> Result<()> {
        let mut held = lock(&self.held);
        let Some(h) = held.clone() else {
            return Err(Error::State("the process lease is not held".into()));
        };
        if let Some(why) = self.why_fenced() {
            return Err(Error::State(why));
        }
        let result = self.write(
            &mut held,
            h.generation,
            &Expect::Version(h.version.clone()),
            false,
        );
        match &result {
            Ok(()) => *lock(&self.renewal_error) = None,
            Err(e) => self.renewal_failed(&e.to_string()),
        }
        if let Err(e) = &result {
            if e.fault() == Some(Fault::Conflict) {
                // A conflict with the object still at our version (an S3
                // 409 under load) is only a failed renewal.
                let now = self.store().and_then(|s| s.read_object(&self.file)).ok();
                let taken = match &now {
                    Some(Some(v)) => v.version != h.version,
                    Some(None) => true,
                    None => false,
                };
                if taken {
                    let by = now
                        .flatten()
                        .and_then(|v| LeaseRecord::decode(&v.bytes).ok())
                        .map_or_else(|| "someone else".into(), |r| r.owner);
                    drop(held);
                    self.fence(format!(
                        "the replica's lease was taken by {by} (it replaced this process's lease \
                         {}): this database no longer writes to its replica",
                        self.name
                    ));
                }
            }
        }
        result
    }

    /// Writes the object over what `expect` names; `released`: expired at
    /// the epoch, for good.
    fn write(
        &self,
        held: &mut Option<Held>,
        generation: i64,
        expect: &Expect,
        released: bool,
    ) -> Result<()> {
        // Both clocks read before the request leaves: the lease cannot
        // expire for anyone before `sent_wall + ttl`, and that is no sooner
        // than `sent + ttl` here, less the others' skew.
        let sent = Instant::now();
        let expires_at_ms = match released {
            true => 0,
            false => now_ms() + self.ttl.as_millis() as i64,
        };
        let record = LeaseRecord {
            generation,
            expires_at_ms,
            owner: self.owner.clone(),
            process_lease: None,
        };
        let version = self
            .store()?
            .replace_object(&self.file, record.encode(), expect)?;
        *held = Some(Held {
            generation,
            version,
        });
        if !released {
            let deadline = (sent + self.ttl.saturating_sub(CLOCK_SKEW_BOUND))
                .saturating_duration_since(self.base);
            self.expires_at_ms
                .fetch_max(expires_at_ms, Ordering::AcqRel);
            self.deadline_ns
                .fetch_max(deadline.as_nanos().max(1) as u64, Ordering::Release);
        }
        Ok(())
    }

    /// Its name as a `lock.json` names it (`.offloop/leases/<file>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// `expires_at` as last written (ms since the epoch).
    pub fn expires_at_ms(&self) -> i64 {
        self.expires_at_ms.load(Ordering::Acquire)
    }

    /// When the lease may be someone else's, by this process's monotonic
    /// clock.
    pub fn deadline(&self) -> Option<Instant> {
        match self.deadline_ns.load(Ordering::Acquire) {
            0 => None,
            ns => Some(self.base + Duration::from_nanos(ns)),
        }
    }

    /// Never taken, or past the deadline without a renewal since.
    pub fn not_yet_or_lapsed(&self) -> bool {
        match self.deadline_ns.load(Ordering::Acquire) {
            0 => true,
            ns => self.base.elapsed().as_nanos() as u64 >= ns,
        }
    }

    /// Whether its databases must refuse a commit now. Cheap.
    pub fn refuses_commits(&self) -> bool {
        self.fenced.load(Ordering::Acquire) || self.not_yet_or_lapsed()
    }

    fn renewal_failed(&self, why: &str) {
        *lock(&self.renewal_error) = Some(why.to_string());
    }

    /// Why the last renewal failed, while none has landed since.
    pub fn renewal_error(&self) -> Option<String> {
        lock(&self.renewal_error).clone()
    }

    /// Fences the process lease for good and tells every member once.
    pub fn fence(&self, why: String) {
        {
            let mut slot = lock(&self.why_fenced);
            if slot.is_some() {
                return;
            }
            *slot = Some(why.clone());
            self.fenced.store(true, Ordering::Release);
        }
        let hooks: Vec<FenceHook> = lock(&self.members)
            .hooks
            .values()
            .flatten()
            .cloned()
            .collect();
        for hook in hooks {
            hook(why.clone());
        }
    }

    pub fn is_fenced(&self) -> bool {
        self.fenced.load(Ordering::Acquire)
    }

    pub fn why_fenced(&self) -> Option<String> {
        lock(&self.why_fenced).clone()
    }

    /// Makes its thread skip its renewals (`true`) as a paused process
    /// would, or renew again: for tests of a lapse in one process.
    #[doc(hidden)]
    pub fn hold_renewals(&self, held: bool) {
        self.held_back.store(held, Ordering::Release);
    }

    /// How many databases it covers now.
    pub fn members(&self) -> usize {
        lock(&self.members).hooks.len()
    }
}
