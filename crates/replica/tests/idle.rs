//! An idle writer asks nothing of its replica: once what it committed is
//! uploaded, compacted, snapshotted and trimmed, the replicator's rounds
//! go on (every sync interval) without a listing or a read, and with a
//! lease only the lease's own renewals reach the store. A new commit
//! wakes the schedule again. Counted at the store's interface, on a
//! folder replica, with every interval shortened so that an idle window
//! of a second spans many of each.

mod common;

use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use bytes::Bytes;
use common::wait_for;
use offloop_engine::WalObserver;
use offloop_replica::{
    Comparison, Expect, LtxFile, PagedGate, ReplicaSettings, ReplicaStore, Replicator, S3Options,
    Store, Timestamps, Txid, Versioned, WriteMode, LEVELS,
};
use rusqlite::Connection;

/// Requests that reached the store, by kind.
#[derive(Debug, Default)]
struct Counts {
    lists: AtomicU64,
    reads: AtomicU64,
    writes: AtomicU64,
    lease_writes: AtomicU64,
    /// Listings of every level (retention's), refused or not.
    full_listings: AtomicU64,
    /// Refuse listings of every level, as a replica that fails would.
    refuse_full_listings: std::sync::atomic::AtomicBool,
}

impl Counts {
    /// (lists, reads, writes of LTX files or deletes, lease writes) since
    /// the last take.
    fn take(&self) -> (u64, u64, u64, u64) {
        (
            self.lists.swap(0, Ordering::SeqCst),
            self.reads.swap(0, Ordering::SeqCst),
            self.writes.swap(0, Ordering::SeqCst),
            self.lease_writes.swap(0, Ordering::SeqCst),
        )
    }
}

/// A real folder store that counts what it is asked.
#[derive(Debug)]
struct Counted {
    inner: ReplicaStore,
    counts: Arc<Counts>,
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::SeqCst);
}

impl Store for Counted {
    fn url(&self) -> &str {
        self.inner.url()
    }
    fn list(&self, level: u8, from: Txid, t: Timestamps) -> offloop_replica::Result<Vec<LtxFile>> {
        add(&self.counts.lists, 1);
        self.inner.list(level, from, t)
    }
    fn list_all(&self, t: Timestamps) -> offloop_replica::Result<Vec<Vec<LtxFile>>> {
        add(&self.counts.lists, LEVELS.count() as u64);
        add(&self.counts.full_listings, 1);
        if self.counts.refuse_full_listings.load(Ordering::SeqCst) {
            return Err(offloop_replica::Error::State("the replica refuses".into()));
        }
        self.inner.list_all(t)
    }
    fn read_range(&self, file: &LtxFile, range: Range<u64>) -> offloop_replica::Result<Bytes> {
        add(&self.counts.reads, 1);
        self.inner.read_range(file, range)
    }
    fn open(
        &self,
        file: &LtxFile,
        range: Range<u64>,
    ) -> offloop_replica::Result<Box<dyn Read + Send>> {
        add(&self.counts.reads, 1);
        self.inner.open(file, range)
    }
    fn read_ranges(
        &self,
        ranges: &[(LtxFile, Range<u64>)],
        concurrency: usize,
        on_range: &mut dyn FnMut(usize, Bytes) -> offloop_replica::Result<()>,
    ) -> offloop_replica::Result<()> {
        add(&self.counts.reads, ranges.len() as u64);
        self.inner.read_ranges(ranges, concurrency, on_range)
    }
    fn write(&self, file: &LtxFile, source: &Path, mode: WriteMode) -> offloop_replica::Result<()> {
        add(&self.counts.writes, 1);
        self.inner.write(file, source, mode)
    }
    fn delete(&self, files: &[LtxFile]) -> offloop_replica::Result<()> {
        add(&self.counts.writes, files.len() as u64);
        self.inner.delete(files)
    }
    fn read_object(&self, name: &str) -> offloop_replica::Result<Option<Versioned>> {
        add(&self.counts.reads, 1);
        self.inner.read_object(name)
    }
    fn replace_object(
        &self,
        name: &str,
        bytes: Bytes,
        expect: &Expect,
    ) -> offloop_replica::Result<String> {
        add(&self.counts.lease_writes, 1);
        self.inner.replace_object(name, bytes, expect)
    }
    fn lease_root(&self) -> offloop_replica::Result<offloop_replica::LeaseRoot> {
        self.inner.lease_root()
    }
    fn compare(&self, file: &LtxFile, source: &Path) -> offloop_replica::Result<Comparison> {
        add(&self.counts.reads, 1);
        self.inner.compare(file, source)
    }
}

fn wait(reply: impl FnOnce(offloop_replica::Reply)) -> Option<Txid> {
    let (tx, rx) = mpsc::channel();
    reply(Box::new(move |answer| {
        let _ = tx.send(answer);
    }));
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the replicator answers")
        .expect("the replicator succeeds")
}

/// A replicator on a folder replica under `dir` with every interval
/// shortened, its store counted; and the replica's own (uncounted) store.
fn replicating(
    dir: &Path,
    lease: Option<Duration>,
) -> (Arc<Replicator>, Arc<Counts>, ReplicaStore, Connection) {
    let url = format!("file://{}", dir.join("replica").display());
    let mut settings = ReplicaSettings::new(url.clone());
    settings.paged = Some(PagedGate::default());
    settings.sync_interval = Duration::from_millis(20);
    settings.levels = vec![Duration::from_millis(50), Duration::from_millis(100)];
    settings.snapshot_interval = Duration::from_millis(150);
    settings.l0_retention = Duration::from_millis(200);
    settings.lease_ttl = lease;
    let counts = Arc::new(Counts::default());
    let counted = counts.clone();
    let connect_url = url.clone();
    let replicator = Replicator::start(
        settings,
        Box::new(move || {
            let inner = ReplicaStore::open(&connect_url, &S3Options::default())?;
            Ok(Arc::new(Counted {
                inner,
                counts: counted,
            }) as Arc<dyn Store>)
        }),
    )
    .unwrap();
    let db = dir.join("app.db");
    let conn = Connection::open(&db).unwrap();
    conn.pragma_update(None, "journal_mode", "wal").unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        .unwrap();
    replicator.opened(db.to_str().unwrap());
    wait(|r| replicator.ready(r));
    let store = ReplicaStore::open(&url, &S3Options::default()).unwrap();
    (replicator, counts, store, conn)
}

fn top(store: &ReplicaStore, level: u8) -> Option<Txid> {
    store
        .list(level, Txid::FIRST, Timestamps::Listed)
        .unwrap()
        .iter()
        .map(|f| f.max_txid)
        .max()
}

/// Commits a row, and waits until the replica has it compacted up to L2,
/// snapshotted, and its L0 files below L1 trimmed: every schedule has
/// had its look at it.
fn commit_and_settle(replicator: &Replicator, conn: &Connection, store: &ReplicaStore) -> Txid {
    conn.execute("INSERT INTO t(v) VALUES ('x')", []).unwrap();
    replicator.committed();
    let txid = wait(|r| replicator.sync(r)).expect("the replica has TXIDs");
    wait_for("compaction into L2 and a snapshot", || {
        top(store, 2) == Some(txid) && top(store, 9) == Some(txid)
    });
    wait_for("retention of the compacted L0 files", || {
        store
            .list(0, Txid::FIRST, Timestamps::Listed)
            .unwrap()
            .is_empty()
    });
    txid
}

/// An idle second, many rounds and intervals long: the requests it made.
fn idle(counts: &Counts) -> (u64, u64, u64, u64) {
    // Rounds already under way when the replica settled end first.
    std::thread::sleep(Duration::from_millis(300));
    counts.take();
    std::thread::sleep(Duration::from_secs(1));
    counts.take()
}

#[test]
fn an_idle_writer_lists_and_reads_nothing_until_it_commits_again() {
    let dir = tempfile::tempdir().unwrap();
    let (replicator, counts, store, conn) = replicating(dir.path(), None);
    let first = commit_and_settle(&replicator, &conn, &store);

    let (lists, reads, writes, _) = idle(&counts);
    assert_eq!(
        (lists, reads, writes),
        (0, 0, 0),
        "an idle replicator made (lists, reads, writes)"
    );

    // A new commit is compacted, snapshotted and trimmed as before.
    let second = commit_and_settle(&replicator, &conn, &store);
    assert!(second > first);
    let (lists, reads, writes, _) = idle(&counts);
    assert_eq!((lists, reads, writes), (0, 0, 0), "idle again");
    wait(|r| replicator.stop(r));
    replicator.join();
}

#[test]
fn an_idle_writer_with_a_lease_only_renews_it() {
    let dir = tempfile::tempdir().unwrap();
    let (replicator, counts, store, conn) = replicating(dir.path(), Some(Duration::from_secs(3)));
    commit_and_settle(&replicator, &conn, &store);

    let (lists, reads, writes, _) = idle(&counts);
    assert_eq!(
        (lists, reads, writes),
        (0, 0, 0),
        "an idle replicator with a lease made (lists, reads, writes)"
    );
    wait(|r| replicator.stop(r));
    replicator.join();
}

#[test]
fn a_retention_pass_that_failed_is_not_retried_every_round() {
    let dir = tempfile::tempdir().unwrap();
    let (replicator, counts, store, conn) = replicating(dir.path(), None);
    counts.refuse_full_listings.store(true, Ordering::SeqCst);
    counts.full_listings.store(0, Ordering::SeqCst);
    conn.execute("INSERT INTO t(v) VALUES ('x')", []).unwrap();
    replicator.committed();
    let txid = wait(|r| replicator.sync(r)).expect("the replica has TXIDs");
    // The merge into L1 makes retention look, and its listing fails.
    wait_for("a merge into L1 and a retention pass", || {
        top(&store, 1) == Some(txid) && counts.full_listings.load(Ordering::SeqCst) > 0
    });
    let after_the_first = counts.full_listings.load(Ordering::SeqCst);
    // Fifty rounds of 20 ms: each would have tried again.
    std::thread::sleep(Duration::from_secs(1));
    let retried = counts.full_listings.load(Ordering::SeqCst) - after_the_first;
    assert!(
        retried <= 1,
        "{retried} more listings for retention while the replica refused them"
    );
    counts.refuse_full_listings.store(false, Ordering::SeqCst);
    wait(|r| replicator.stop(r));
    replicator.join();
}
