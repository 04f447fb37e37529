//! Many replicated databases share the replicator pool: the process's
//! replication threads stay within the pool's bound however many
//! databases replicate, every database's commits reach its replica, a
//! database whose store hangs holds one thread and never the others'
//! replication, a step that panics ends only its own database's
//! replication, and once every replication has stopped no replication
//! thread is left. Threads are read by name from /proc/self/task (Linux).

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use offloop_engine::WalObserver;
use offloop_replica::{
    pool, Answer, Comparison, Expect, Fault, LtxFile, ReplicaSettings, ReplicaStore, Replicator,
    Reply, S3Options, Store, StoreError, Timestamps, Txid, Versioned, WriteMode,
};
use rusqlite::Connection;

/// The runtime every store shares: 2 workers and at most 8 blocking
/// threads (crates/replica/src/store/io_runtime.rs).
const RUNTIME_THREADS: usize = 10;

/// The tests here count the process's threads: one at a time.
static ALONE: Mutex<()> = Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Threads of this process named `offloop-replicator…` or
/// `offloop-replica-io`: both read `offloop-replica` there, as names are
/// cut to 15 bytes.
fn replication_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("offloop-replica"))
        .count()
}

fn wait_until(what: &str, deadline: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends a request and waits for its answer.
fn ask(request: impl FnOnce(Reply)) -> Answer {
    let (tx, rx) = mpsc::channel();
    request(Box::new(move |answer| {
        let _ = tx.send(answer);
    }));
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the replicator answers")
}

/// A store that hangs in `write` while its gate is shut, and counts the
/// writes hanging there; or that refuses every write, as a replica that is
/// down.
#[derive(Debug, Default)]
struct Gate {
    shut: Mutex<bool>,
    opened: Condvar,
    held: AtomicUsize,
    refusing: AtomicBool,
}

impl Gate {
    fn shut() -> Arc<Gate> {
        let gate = Gate::default();
        *gate.shut.lock().unwrap() = true;
        Arc::new(gate)
    }

    fn open(&self) {
        *self.shut.lock().unwrap() = false;
        self.opened.notify_all();
    }

    fn pass(&self) {
        let mut shut = self.shut.lock().unwrap();
        if *shut {
            self.held.fetch_add(1, Ordering::SeqCst);
            while *shut {
                shut = self.opened.wait(shut).unwrap();
            }
            self.held.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

#[derive(Debug)]
struct Gated {
    inner: ReplicaStore,
    gate: Arc<Gate>,
}

impl Store for Gated {
    fn url(&self) -> &str {
        self.inner.url()
    }
    fn lease_root(&self) -> offloop_replica::Result<offloop_replica::LeaseRoot> {
        self.inner.lease_root()
    }
    fn list(&self, level: u8, from: Txid, t: Timestamps) -> offloop_replica::Result<Vec<LtxFile>> {
        self.inner.list(level, from, t)
    }
    fn list_all(&self, t: Timestamps) -> offloop_replica::Result<Vec<Vec<LtxFile>>> {
        self.inner.list_all(t)
    }
    fn read_range(&self, file: &LtxFile, range: Range<u64>) -> offloop_replica::Result<Bytes> {
        self.inner.read_range(file, range)
    }
    fn open(
        &self,
        file: &LtxFile,
        range: Range<u64>,
    ) -> offloop_replica::Result<Box<dyn std::io::Read + Send>> {
        self.inner.open(file, range)
    }
    fn read_ranges(
        &self,
        ranges: &[(LtxFile, Range<u64>)],
        concurrency: usize,
        on_range: &mut dyn FnMut(usize, Bytes) -> offloop_replica::Result<()>,
    ) -> offloop_replica::Result<()> {
        self.inner.read_ranges(ranges, concurrency, on_range)
    }
    fn write(&self, file: &LtxFile, source: &Path, mode: WriteMode) -> offloop_replica::Result<()> {
        if self.gate.refusing.load(Ordering::SeqCst) {
            let down = StoreError::new(Fault::Unavailable, "write", file.name(), "down");
            return Err(offloop_replica::Error::Store(down));
        }
        self.gate.pass();
        self.inner.write(file, source, mode)
    }
    fn delete(&self, files: &[LtxFile]) -> offloop_replica::Result<()> {
        self.inner.delete(files)
    }
    fn read_object(&self, name: &str) -> offloop_replica::Result<Option<Versioned>> {
        self.inner.read_object(name)
    }
    fn replace_object(
        &self,
        name: &str,
        bytes: Bytes,
        expect: &Expect,
    ) -> offloop_replica::Result<String> {
        self.inner.replace_object(name, bytes, expect)
    }
    fn compare(&self, file: &LtxFile, source: &Path) -> offloop_replica::Result<Comparison> {
        self.inner.compare(file, source)
    }
}

/// A database replicating to a folder of its own under `dir`.
struct Tenant {
    replicator: Arc<Replicator>,
    conn: Connection,
    url: String,
}

impl Tenant {
    /// Opens tenant `i`, its store behind `gate` (open when `None`).
    fn open(dir: &Path, i: usize, gate: Option<Arc<Gate>>) -> Tenant {
        let url = format!("file://{}", dir.join(format!("r{i}")).display());
        let mut settings = ReplicaSettings::new(url.clone());
        settings.sync_interval = Duration::from_millis(50);
        let connect_url = url.clone();
        let replicator = Replicator::start(
            settings,
            Box::new(move || {
                let inner = ReplicaStore::open(&connect_url, &S3Options::default())?;
                Ok(match gate {
                    Some(gate) => Arc::new(Gated { inner, gate }) as Arc<dyn Store>,
                    None => Arc::new(inner) as Arc<dyn Store>,
                })
            }),
        )
        .unwrap();
        let db = dir.join(format!("t{i}.db"));
        let conn = Connection::open(&db).unwrap();
        conn.pragma_update(None, "journal_mode", "wal").unwrap();
        conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        replicator.opened(db.to_str().unwrap());
        Tenant {
            replicator,
            conn,
            url,
        }
    }

    fn ready(&self) {
        let replicator = &self.replicator;
        ask(|r| replicator.ready(r)).expect("the replica is ready");
    }

    /// Commits a row naming the tenant, and wakes the replicator.
    fn write(&self, i: usize) {
        self.conn
            .execute_batch("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)")
            .unwrap();
        self.replicator.committed();
        self.conn
            .execute("INSERT INTO t(v) VALUES (?1)", [format!("tenant {i}")])
            .unwrap();
        self.replicator.committed();
    }

    /// Whether everything committed is in the replica, as `stats()` and the
    /// replica's folder both say.
    fn shipped(&self) -> bool {
        let stats = self.replicator.stats();
        stats.lag.is_zero()
            && stats.pending_files == 0
            && stats.txid.is_some()
            && self.replica_txid() == stats.txid
    }

    /// The newest TXID in the replica's L0, as the folder holds it.
    fn replica_txid(&self) -> Option<Txid> {
        let store = ReplicaStore::open(&self.url, &S3Options::default()).unwrap();
        store
            .list(0, Txid::FIRST, Timestamps::Listed)
            .unwrap()
            .iter()
            .map(|f| f.max_txid)
            .max()
    }

    fn stop(self) {
        let replicator = &self.replicator;
        let _ = ask(|r| replicator.close(r));
        replicator.join();
    }
}

#[test]
fn a_hundred_databases_replicate_on_a_bounded_pool_and_no_thread_outlives_them() {
    if !Path::new("/proc/self/task").exists() {
        return;
    }
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let before = replication_threads();
    let tenants: Vec<Tenant> = (0..100)
        .map(|i| Tenant::open(dir.path(), i, None))
        .collect();
    let mut most = 0;
    for tenant in &tenants {
        tenant.ready();
        most = most.max(replication_threads() - before);
    }
    for (i, tenant) in tenants.iter().enumerate() {
        tenant.write(i);
    }
    // No `sync()`: each database's own sync round (its timer) ships it.
    wait_until(
        "every commit in its replica",
        Duration::from_secs(60),
        || {
            most = most.max(replication_threads() - before);
            tenants.iter().all(Tenant::shipped)
        },
    );
    for tenant in &tenants {
        let replicator = &tenant.replicator;
        let shipped = tenant.replica_txid();
        assert_eq!(ask(|r| replicator.sync(r)), Ok(shipped), "nothing was left");
    }
    let bound = pool::max_threads() + RUNTIME_THREADS;
    assert!(
        most <= bound,
        "{most} replication threads for 100 databases: at most {bound} expected"
    );
    for tenant in tenants {
        tenant.stop();
    }
    wait_until(
        "every replication thread to end",
        Duration::from_secs(1),
        || replication_threads() == before,
    );
}

#[test]
fn databases_whose_store_hangs_hold_a_thread_each_and_the_others_replicate() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    // One more than the pool's base threads: every one of them is held,
    // and the rest of the work needs a thread the pool starts past them.
    let hanging = pool::base_threads() + 1;
    let gate = Gate::shut();
    let stuck: Vec<Tenant> = (0..hanging)
        .map(|i| Tenant::open(dir.path(), i, Some(gate.clone())))
        .collect();
    for (i, tenant) in stuck.iter().enumerate() {
        tenant.ready();
        tenant.write(i);
    }
    wait_until(
        "every hanging upload to start",
        Duration::from_secs(30),
        || gate.held.load(Ordering::SeqCst) == hanging,
    );

    let others: Vec<Tenant> = (hanging..hanging + 20)
        .map(|i| Tenant::open(dir.path(), i, None))
        .collect();
    for (i, tenant) in others.iter().enumerate() {
        tenant.ready();
        tenant.write(hanging + i);
        let replicator = &tenant.replicator;
        let txid = ask(|r| replicator.sync(r)).expect("the others' uploads succeed");
        assert!(txid.is_some() && txid == tenant.replica_txid());
    }
    assert_eq!(gate.held.load(Ordering::SeqCst), hanging, "still hanging");
    let threads = replication_threads();
    let bound = pool::max_threads() + RUNTIME_THREADS;
    assert!(
        threads <= bound,
        "{threads} replication threads: at most {bound} expected"
    );

    gate.open();
    for tenant in stuck.iter() {
        let replicator = &tenant.replicator;
        let txid = ask(|r| replicator.sync(r)).expect("the upload succeeds once it may");
        assert!(txid.is_some() && txid == tenant.replica_txid());
    }
    for tenant in stuck.into_iter().chain(others) {
        tenant.stop();
    }
}

#[test]
fn a_step_that_panics_ends_its_own_replication_and_no_other() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let failing = Tenant::open(dir.path(), 0, None);
    let other = Tenant::open(dir.path(), 1, None);
    failing.ready();
    other.ready();
    // A reply that panics runs inside the step.
    failing
        .replicator
        .ready(Box::new(|_| panic!("a reply that panics")));
    let replicator = &failing.replicator;
    wait_until(
        "the failed replication to end",
        Duration::from_secs(10),
        || ask(|r| replicator.sync(r)).is_err(),
    );
    failing.replicator.join();

    other.write(1);
    let replicator = &other.replicator;
    let txid = ask(|r| replicator.sync(r)).expect("the other database replicates");
    assert!(txid.is_some() && txid == other.replica_txid());
    other.stop();
    failing.stop();
}

#[test]
fn a_stop_that_cannot_upload_frees_its_thread_between_tries() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let base = pool::base_threads();
    // As many closing databases as the pool's base threads, each retrying
    // (for its stop's 10 s) an upload its replica refuses; a database
    // beside them still ships at once.
    let gate = Arc::new(Gate::default());
    gate.refusing.store(true, Ordering::SeqCst);
    let refusing: Vec<Tenant> = (0..base)
        .map(|i| Tenant::open(dir.path(), i, Some(gate.clone())))
        .collect();
    for (i, tenant) in refusing.iter().enumerate() {
        tenant.ready();
        tenant.write(i);
        tenant.replicator.stop(Box::new(|_| {}));
    }
    let other = Tenant::open(dir.path(), base, None);
    other.ready();
    other.write(base);
    let started = Instant::now();
    let replicator = &other.replicator;
    assert!(ask(|r| replicator.sync(r)).is_ok());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a sync waited {:?} behind stops that retry",
        started.elapsed()
    );
    other.stop();
    for tenant in refusing {
        tenant.replicator.join();
    }
}
