//! The lease past its deadline: it lapses (commits refused, no fence), a
//! renewal that finds the process lease as this process wrote it ends the
//! lapse, and one that finds it replaced by another holder (who took one of
//! its databases) fences every database under it for good. On a folder
//! replica, each holder playing a process of its own (`Lease::apart`) whose
//! renewals are held back as if it were paused; the deadline is passed by
//! waiting for it on the monotonic clock, which can only make the lapse
//! more certain.

use std::thread::sleep;
use std::time::{Duration, Instant};

use offloop_replica::lease::{Lease, CLOCK_SKEW_BOUND};
use offloop_replica::store::{ReplicaStore, S3Options};

/// The shortest TTL with a deadline after the clock-skew bound.
const TTL: Duration = Duration::from_millis(1500);

fn store(dir: &std::path::Path) -> ReplicaStore {
    ReplicaStore::open(&format!("file://{}", dir.display()), &S3Options::default()).unwrap()
}

/// A lease of `owner`, in a process of its own.
fn lease(owner: &str) -> Lease {
    let lease = Lease::apart(TTL, owner);
    lease.set_owner(owner.into());
    lease
}

/// Takes `lease` and holds back its process lease's renewals, as if the
/// process were paused.
fn take_paused(lease: &Lease, store: &ReplicaStore) {
    lease.acquire(store).unwrap();
    lease.process().unwrap().hold_renewals(true);
}

/// Waits until `lease`'s deadline has passed.
fn past_deadline(lease: &Lease) {
    let deadline = lease.deadline().expect("the lease was taken");
    let now = Instant::now();
    if deadline > now {
        sleep(deadline - now + Duration::from_millis(10));
    }
}

#[test]
fn a_lapsed_lease_refuses_commits_and_a_renewal_that_finds_it_unchanged_ends_the_lapse() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir.path().join("replica"));
    let holder = lease("a");
    take_paused(&holder, &store);
    assert!(!holder.refuses_commits());
    past_deadline(&holder);
    assert!(holder.refuses_commits(), "past its deadline");
    assert!(holder.is_lapsed());
    assert!(!holder.is_fenced(), "a lapse is not a fence");
    let why = holder.why_refused().unwrap();
    assert!(why.contains("not renewed before its deadline"), "{why}");

    holder.renew().unwrap();
    assert!(
        !holder.refuses_commits(),
        "the renewal found the lease still this holder's"
    );
    assert!(!holder.is_lapsed());
    assert_eq!(holder.why_refused(), None);
}

#[test]
fn a_lapsed_lease_another_holder_took_fences_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let (replica, other) = (
        store(&dir.path().join("replica")),
        store(&dir.path().join("other")),
    );
    let store = replica;
    let first = lease("a");
    take_paused(&first, &store);
    let beside = lease("a");
    beside.acquire(&other).unwrap();
    // The record expires by the wall clock TTL after it was written; the
    // other holder judges it by that.
    sleep(TTL + CLOCK_SKEW_BOUND);
    let second = lease("b");
    second.acquire(&store).unwrap();
    assert!(first.is_lapsed());

    assert!(first.renew().is_err(), "the lease is b's now");
    assert!(first.is_fenced());
    assert!(first.refuses_commits());
    let why = first.why_refused().unwrap();
    assert!(why.contains("taken by b"), "{why}");
    assert!(first.renew().is_err(), "a fence never lifts");
    assert!(first.is_fenced());
    assert!(!second.refuses_commits());
    // The process's other database under the same root is fenced with it.
    assert!(beside.is_fenced() && beside.refuses_commits());
}

#[test]
fn a_failed_renewal_names_its_cause_while_the_lease_is_lapsed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("replica");
    let store = store(&root);
    let holder = lease("a");
    take_paused(&holder, &store);
    past_deadline(&holder);
    // The process leases' folder becomes a file: every request fails, none
    // is a conflict.
    let leases = dir.path().join(".offloop");
    std::fs::remove_dir_all(&leases).unwrap();
    std::fs::write(&leases, b"not a folder").unwrap();
    assert!(holder.renew().is_err());
    assert!(
        holder.is_lapsed(),
        "an unreachable replica lapses, never fences"
    );
    let why = holder.why_refused().unwrap();
    assert!(why.contains("not renewed before its deadline ("), "{why}");
}
