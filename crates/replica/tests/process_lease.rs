//! One lease per process under a lease root: every database of a process
//! whose replica sits in the same folder shares one process lease object
//! there, each `lock.json` naming it; a takeover of one database of a
//! paused process replaces that object, which fences the process's other
//! databases under the root too and frees them at once; the last database
//! given back releases it. On folder replicas, each holder playing a
//! process of its own (`Lease::apart`).

use std::path::Path;
use std::sync::Arc;
use std::thread::sleep;
use std::time::{Duration, Instant};

use offloop_replica::lease::{Lease, LeaseRecord, Refusal, CLOCK_SKEW_BOUND, LEASE_OBJECT};
use offloop_replica::store::{ReplicaStore, S3Options, Store};

const TTL: Duration = Duration::from_millis(1500);

fn store(dir: &Path) -> ReplicaStore {
    ReplicaStore::open(&format!("file://{}", dir.display()), &S3Options::default()).unwrap()
}

fn lease(process: &str, owner: &str) -> Lease {
    let lease = Lease::apart(TTL, process);
    lease.set_owner(owner.into());
    lease
}

fn record(store: &ReplicaStore) -> LeaseRecord {
    let object = store.read_object(LEASE_OBJECT).unwrap().unwrap();
    LeaseRecord::decode(&object.bytes).unwrap()
}

/// The process lease objects in the folder `root` holds replicas in.
fn process_leases(root: &Path) -> Vec<(String, LeaseRecord)> {
    let dir = root.join(".offloop/leases");
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .map(|name| {
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            (name, LeaseRecord::decode(&bytes).unwrap())
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

#[test]
fn databases_under_one_root_share_one_process_lease_which_the_last_one_given_back_releases() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<ReplicaStore> = (0..20)
        .map(|i| store(&dir.path().join(format!("t{i}"))))
        .collect();
    let leases: Vec<Lease> = (0..20).map(|i| lease("p", &format!("db-{i}"))).collect();
    for (lease, store) in leases.iter().zip(&stores) {
        lease.acquire(store).unwrap();
        assert!(!lease.refuses_commits());
    }
    let objects = process_leases(dir.path());
    assert_eq!(objects.len(), 1, "one process lease for every database");
    let (file, process) = &objects[0];
    assert!(process.is_live(offloop_replica::stager::now_ms()));
    let shared = leases[0].process().unwrap().clone();
    assert_eq!(shared.members(), 20);
    for (i, (lease, store)) in leases.iter().zip(&stores).enumerate() {
        assert!(Arc::ptr_eq(lease.process().unwrap(), &shared));
        let lock = record(store);
        assert_eq!(lock.owner, format!("db-{i}"));
        assert_eq!(
            lock.process_lease.as_deref(),
            Some(format!(".offloop/leases/{file}").as_str())
        );
    }
    // Renewed for all by its one thread: still live two TTLs later.
    sleep(TTL * 2);
    assert!(leases.iter().all(|l| !l.refuses_commits()));
    assert_eq!(process_leases(dir.path()).len(), 1);

    for (lease, store) in leases.iter().zip(&stores).skip(1) {
        lease.release(store).unwrap();
        assert!(record(store).is_dead(), "given back at once");
    }
    assert!(
        process_leases(dir.path())[0]
            .1
            .is_live(offloop_replica::stager::now_ms()),
        "still the first database's"
    );
    leases[0].release(&stores[0]).unwrap();
    assert!(
        process_leases(dir.path())[0].1.is_dead(),
        "the last database given back releases the process lease"
    );
}

#[test]
fn a_takeover_of_one_database_of_a_paused_process_fences_all_of_them_and_frees_the_rest_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<ReplicaStore> = (0..3)
        .map(|i| store(&dir.path().join(format!("t{i}"))))
        .collect();
    let old: Vec<Lease> = (0..3).map(|i| lease("old", &format!("old-{i}"))).collect();
    for (lease, store) in old.iter().zip(&stores) {
        lease.acquire(store).unwrap();
    }
    old[0].process().unwrap().hold_renewals(true);

    // While its process lease is live, none may be taken.
    let early = lease("new", "new-1");
    match early.acquire(&stores[1]) {
        Err(Refusal::Held(why)) => assert!(why.contains("held by old-1"), "{why}"),
        other => panic!("expected Held, got {other:?}"),
    }
    let expired_at = Instant::now() + TTL + CLOCK_SKEW_BOUND;
    sleep(expired_at - Instant::now());
    assert!(
        old.iter().all(|l| l.is_lapsed()),
        "paused past the deadline"
    );

    let new0 = lease("new", "new-0");
    new0.acquire(&stores[0]).unwrap();
    let objects = process_leases(dir.path());
    let replaced = objects
        .iter()
        .find(|(_, r)| r.owner == "new-0")
        .expect("the old process lease, replaced by the taker");
    assert!(replaced.1.is_dead());

    // Resumed: its renewal is refused, and every database it held there
    // is fenced for good, not only the one taken.
    old[0].process().unwrap().hold_renewals(false);
    assert!(old[0].renew().is_err());
    for lease in &old {
        assert!(lease.is_fenced(), "{:?}", lease.owner());
        assert!(lease.why_fenced().unwrap().contains("taken by new-0"));
    }
    // Its other databases are free at once: their lock.json names a
    // process lease nobody renews.
    let new1 = lease("new", "new-1");
    new1.acquire(&stores[1]).unwrap();
    assert!(!new1.refuses_commits() && !new0.refuses_commits());
    assert!(Arc::ptr_eq(
        new0.process().unwrap(),
        new1.process().unwrap()
    ));
}

#[test]
fn the_same_database_reopened_after_a_crash_takes_its_lease_back_at_once_and_frees_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<ReplicaStore> = (0..2)
        .map(|i| store(&dir.path().join(format!("t{i}"))))
        .collect();
    let crashed: Vec<Lease> = (0..2)
        .map(|i| lease("crashed", &format!("db-{i}")))
        .collect();
    for (lease, store) in crashed.iter().zip(&stores) {
        lease.acquire(store).unwrap();
    }
    crashed[0].process().unwrap().hold_renewals(true);
    // Its process lease is live: another database waits for it...
    assert!(matches!(
        lease("other", "other-1").acquire(&stores[1]),
        Err(Refusal::Held(_))
    ));
    // ...but the same database, in a new process, is the same holder.
    let again = lease("restarted", "db-0");
    again.acquire(&stores[0]).unwrap();
    assert!(!again.refuses_commits());
    // Taking it back replaced the crashed process's lease: its other
    // database is free now, not a TTL later.
    lease("other", "other-1").acquire(&stores[1]).unwrap();
}

#[test]
fn a_lock_with_its_own_deadline_and_no_process_lease_is_judged_by_its_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let replica = store(&dir.path().join("app"));
    let litestream = LeaseRecord {
        generation: 4,
        expires_at_ms: offloop_replica::stager::now_ms() + 60_000,
        owner: "litestream".into(),
        process_lease: None,
    };
    replica
        .replace_object(
            LEASE_OBJECT,
            litestream.encode(),
            &offloop_replica::Expect::Absent,
        )
        .unwrap();
    match lease("p", "db").acquire(&replica) {
        Err(Refusal::Held(why)) => assert!(why.contains("held by litestream"), "{why}"),
        other => panic!("expected Held, got {other:?}"),
    }
    let expired = LeaseRecord {
        expires_at_ms: offloop_replica::stager::now_ms() - 1,
        ..litestream
    };
    let version = replica.read_object(LEASE_OBJECT).unwrap().unwrap().version;
    replica
        .replace_object(
            LEASE_OBJECT,
            expired.encode(),
            &offloop_replica::Expect::Version(version),
        )
        .unwrap();
    let taker = lease("p", "db");
    taker.acquire(&replica).unwrap();
    assert_eq!(record(&replica).generation, 5);
}
