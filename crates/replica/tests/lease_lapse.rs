//! The lease past its deadline: it lapses (commits refused, no fence), a
//! renewal that finds the lease object as this holder wrote it ends the
//! lapse, and one that finds it taken by another holder fences for good.
//! On a folder replica; the deadline is passed by waiting for it on the
//! monotonic clock, which can only make the lapse more certain.

use std::thread::sleep;
use std::time::{Duration, Instant};

use offloop_replica::lease::{Lease, CLOCK_SKEW_BOUND};
use offloop_replica::store::{ReplicaStore, S3Options};

/// The shortest TTL with a deadline after the clock-skew bound.
const TTL: Duration = Duration::from_millis(1500);

fn store(dir: &std::path::Path) -> ReplicaStore {
    ReplicaStore::open(&format!("file://{}", dir.display()), &S3Options::default()).unwrap()
}

fn lease(owner: &str) -> Lease {
    let lease = Lease::new(TTL);
    lease.set_owner(owner.into());
    lease
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
    let store = store(dir.path());
    let holder = lease("a");
    holder.acquire(&store).unwrap();
    assert!(!holder.refuses_commits());
    past_deadline(&holder);
    assert!(holder.refuses_commits(), "past its deadline");
    assert!(holder.is_lapsed());
    assert!(!holder.is_fenced(), "a lapse is not a fence");
    let why = holder.why_refused().unwrap();
    assert!(why.contains("not renewed before its deadline"), "{why}");

    holder.renew(&store).unwrap();
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
    let store = store(dir.path());
    let first = lease("a");
    first.acquire(&store).unwrap();
    // The record expires by the wall clock TTL after it was written; the
    // other holder judges it by that.
    sleep(TTL + CLOCK_SKEW_BOUND);
    let second = lease("b");
    second.acquire(&store).unwrap();
    assert!(first.is_lapsed());

    assert!(first.renew(&store).is_err(), "the lease is b's now");
    assert!(first.is_fenced());
    assert!(first.refuses_commits());
    let why = first.why_refused().unwrap();
    assert!(why.contains("taken by b"), "{why}");
    assert!(first.renew(&store).is_err(), "a fence never lifts");
    assert!(first.is_fenced());
    assert!(!second.refuses_commits());
}

#[test]
fn a_failed_renewal_names_its_cause_while_the_lease_is_lapsed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("replica");
    let store = store(&root);
    let holder = lease("a");
    holder.acquire(&store).unwrap();
    past_deadline(&holder);
    // The replica's folder becomes a file: every request fails, none is a
    // conflict.
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::write(&root, b"not a folder").unwrap();
    assert!(holder.renew(&store).is_err());
    assert!(
        holder.is_lapsed(),
        "an unreachable replica lapses, never fences"
    );
    let why = holder.why_refused().unwrap();
    assert!(why.contains("not renewed before its deadline ("), "{why}");
}
