//! What a follower that may promote itself does with the lease: it reads
//! it again the moment a live lease it read runs out (not up to a poll
//! later), and a promotion writes over the lease object the watch read
//! free without reading it again, unless it changed since, when it is read
//! again and judged as it is now. On a folder replica, through a store
//! that counts the lease's reads and writes.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use offloop_replica::lease::{Lease, Refusal};
use offloop_replica::promotion::{lease_state, take_lease, watch_wait, LeaseState};
use offloop_replica::store::{
    Comparison, Expect, LtxFile, ReplicaStore, S3Options, Store, Timestamps, Versioned, WriteMode,
};
use offloop_replica::{Result, Txid};

const TTL: Duration = Duration::from_millis(3000);

/// A folder store that counts `read_object` and `replace_object` calls.
#[derive(Debug)]
struct Counting {
    inner: ReplicaStore,
    reads: AtomicU64,
    writes: AtomicU64,
}

impl Store for Counting {
    fn url(&self) -> &str {
        self.inner.url()
    }
    fn list(&self, level: u8, from: Txid, timestamps: Timestamps) -> Result<Vec<LtxFile>> {
        self.inner.list(level, from, timestamps)
    }
    fn list_all(&self, timestamps: Timestamps) -> Result<Vec<Vec<LtxFile>>> {
        self.inner.list_all(timestamps)
    }
    fn read_range(&self, file: &LtxFile, range: std::ops::Range<u64>) -> Result<Bytes> {
        self.inner.read_range(file, range)
    }
    fn open(
        &self,
        file: &LtxFile,
        range: std::ops::Range<u64>,
    ) -> Result<Box<dyn std::io::Read + Send>> {
        self.inner.open(file, range)
    }
    fn read_ranges(
        &self,
        ranges: &[(LtxFile, std::ops::Range<u64>)],
        concurrency: usize,
        on_range: &mut dyn FnMut(usize, Bytes) -> Result<()>,
    ) -> Result<()> {
        self.inner.read_ranges(ranges, concurrency, on_range)
    }
    fn write(&self, file: &LtxFile, source: &Path, mode: WriteMode) -> Result<()> {
        self.inner.write(file, source, mode)
    }
    fn compare(&self, file: &LtxFile, source: &Path) -> Result<Comparison> {
        self.inner.compare(file, source)
    }
    fn delete(&self, files: &[LtxFile]) -> Result<()> {
        self.inner.delete(files)
    }
    fn read_object(&self, name: &str) -> Result<Option<Versioned>> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.read_object(name)
    }
    fn replace_object(&self, name: &str, bytes: Bytes, expect: &Expect) -> Result<String> {
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.inner.replace_object(name, bytes, expect)
    }
    fn lease_root(&self) -> offloop_replica::Result<offloop_replica::LeaseRoot> {
        self.inner.lease_root()
    }
}

fn store(dir: &Path) -> Counting {
    let url = format!("file://{}", dir.display());
    Counting {
        inner: ReplicaStore::open(&url, &S3Options::default()).unwrap(),
        reads: AtomicU64::new(0),
        writes: AtomicU64::new(0),
    }
}

fn counts(store: &Counting) -> (u64, u64) {
    (
        store.reads.swap(0, Ordering::Relaxed),
        store.writes.swap(0, Ordering::Relaxed),
    )
}

/// A lease `owner` took and released: free for anyone.
fn released_by(store: &Counting, owner: &str) {
    let lease = Lease::new(TTL);
    lease.set_owner(owner.into());
    lease.acquire(store).unwrap();
    lease.release(store).unwrap();
}

#[test]
fn a_promotion_writes_over_the_lease_the_watch_read_free_without_reading_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    released_by(&store, "old");
    let LeaseState::Free(seen) = lease_state(&store, "standby").unwrap() else {
        panic!("a released lease is free");
    };
    counts(&store);
    let lease = take_lease(&store, TTL, "standby".into(), Some(&seen)).unwrap();
    assert_eq!(counts(&store), (0, 1), "(reads, writes) of lock.json");
    assert!(!lease.refuses_commits());
    let LeaseState::Held { why, .. } = lease_state(&store, "other").unwrap() else {
        panic!("the standby holds it");
    };
    assert!(why.contains("standby"), "{why}");
}

#[test]
fn a_lease_taken_since_the_watch_read_it_free_is_read_again_and_refuses_the_promotion() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    released_by(&store, "old");
    let LeaseState::Free(seen) = lease_state(&store, "late").unwrap() else {
        panic!("a released lease is free");
    };
    // Another standby promotes in between.
    take_lease(&store, TTL, "first".into(), None).unwrap();
    counts(&store);
    match take_lease(&store, TTL, "late".into(), Some(&seen)) {
        Err(Refusal::Held(why)) => assert!(why.contains("first"), "{why}"),
        other => panic!("expected Held, got {other:?}"),
    }
    let (reads, writes) = counts(&store);
    assert!(reads >= 1, "read again after the conditional write failed");
    assert_eq!(writes, 1, "one conditional write, refused");
}

#[test]
fn a_lease_watch_reads_again_the_moment_the_lease_it_read_runs_out() {
    let every = Duration::from_millis(1000);
    let held = |expires_at_ms| LeaseState::Held {
        why: String::new(),
        expires_at_ms,
    };
    let now = 1_000_000;
    // Expires sooner than the next poll: read again a millisecond after.
    assert_eq!(
        watch_wait(&held(now + 300), every, now),
        Duration::from_millis(301)
    );
    // Renewed well ahead: the poll as usual.
    assert_eq!(watch_wait(&held(now + 2500), every, now), every);
    // Already past (clocks): at once, but never a busy loop.
    assert_eq!(
        watch_wait(&held(now - 50), every, now),
        Duration::from_millis(1)
    );
    assert_eq!(watch_wait(&LeaseState::Absent, every, now), every);
}
