//! The checkpoint permit, driven as the engine drives it: a checkpoint that
//! runs beside the writer never copies a commit the replicator has not
//! captured, so the WAL can never restart over frames lost to the replica.
//! The replicator is set up as the addon sets it up (with a paged-restore
//! gate that no restore filled), and every commit, including those made
//! while the checkpoint ran, must come back from the replica.

mod common;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use common::dump;
use offloop_engine::{CheckpointWrites, WalObserver};
use offloop_replica::{
    restore, PagedGate, ReplicaSettings, ReplicaStore, Replicator, RestoreOptions, S3Options, Store,
};
use rusqlite::Connection;

fn writer(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", "wal").unwrap();
    // The engine replaces SQLite's automatic checkpoint; so does this test.
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn
}

fn insert(conn: &Connection, rows: std::ops::Range<i64>) {
    for id in rows {
        conn.execute("INSERT INTO t(id, pad) VALUES (?1, randomblob(600))", [id])
            .unwrap();
    }
}

/// (frames in the WAL, frames copied) after a PASSIVE checkpoint on `conn`.
fn passive(conn: &Connection) -> (i64, i64) {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((r.get(1)?, r.get(2)?))
    })
    .unwrap()
}

fn wait(reply: impl FnOnce(offloop_replica::Reply)) -> Option<offloop_ltx::Txid> {
    let (tx, rx) = mpsc::channel();
    reply(Box::new(move |answer| {
        let _ = tx.send(answer);
    }));
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the replicator answers")
        .expect("the replicator succeeds")
}

#[test]
fn a_checkpoint_beside_the_writer_never_copies_what_was_not_captured() {
    let dir = tempfile::tempdir().unwrap();
    let (replicator, url, db, w) = replicating(dir.path());
    let checkpointer = Connection::open(&db).unwrap();

    let mut next = 1;
    for round in 0..20 {
        insert(&w, next..next + 5);
        next += 5;
        let permit = replicator.before_checkpoint(CheckpointWrites::Concurrent);
        // The writer commits while the checkpoint is about to run: these
        // frames are not captured yet.
        let (log_at_permit, _) = {
            let counts: (i64, i64) = checkpointer
                .query_row("PRAGMA wal_checkpoint(NOOP)", [], |r| {
                    Ok((r.get(1)?, r.get(2)?))
                })
                .unwrap_or((0, 0));
            counts
        };
        insert(&w, next..next + 3);
        next += 3;
        if permit.is_refused() {
            // A refused permit is safe: the checkpoint does not run.
            continue;
        }
        let (_, copied) = passive(&checkpointer);
        assert!(
            copied <= log_at_permit,
            "round {round}: the checkpoint copied {copied} frames, past the \
             {log_at_permit} that were in the WAL (and captured) when it was permitted"
        );
        drop(permit);
        // Copy the rest with the writer excluded, as the writer's catch-up
        // does, so the next commit restarts the WAL.
        let excluded = replicator.before_checkpoint(CheckpointWrites::Excluded);
        assert!(
            !excluded.is_refused(),
            "a checkpoint without writes is never refused"
        );
        passive(&w);
        drop(excluded);
    }
    let txid = wait(|r| replicator.sync(r)).expect("the replica has TXIDs");
    let expected = dump(&db);

    let restored = dir.path().join("restored.db");
    assert_restores(&url, &restored, txid, &expected);
    let rows: i64 = Connection::open(&restored)
        .unwrap()
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, next - 1);
    wait(|r| replicator.stop(r));
    replicator.join();
}

/// A replicator started as the addon starts one (with a paged-restore gate
/// that no restore filled), replicating `app.db` in `dir` to a folder
/// there, with rounds only when asked; the replica's URL, the database's
/// path, and its writer, with a table `t`, opened and ready.
fn replicating(dir: &Path) -> (std::sync::Arc<Replicator>, String, PathBuf, Connection) {
    let db = dir.join("app.db");
    let url = format!("file://{}", dir.join("replica").display());
    let mut settings = ReplicaSettings::new(url.clone());
    settings.paged = Some(PagedGate::default());
    settings.sync_interval = Duration::from_secs(3600);
    let connect_url = url.clone();
    let replicator = Replicator::start(
        settings,
        Box::new(move || {
            ReplicaStore::open(&connect_url, &S3Options::default())
                .map(|s| std::sync::Arc::new(s) as std::sync::Arc<dyn Store>)
        }),
    )
    .unwrap();
    let w = writer(&db);
    w.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, pad BLOB)")
        .unwrap();
    replicator.opened(db.to_str().unwrap());
    wait(|r| replicator.ready(r));
    (replicator, url, db, w)
}

/// The replica at `url`, restored at `txid` into `restored`, matches
/// `expected` (a dump of the database).
fn assert_restores(
    url: &str,
    restored: &Path,
    txid: offloop_ltx::Txid,
    expected: &[(String, Vec<String>)],
) {
    let store = ReplicaStore::open(url, &S3Options::default()).unwrap();
    let options = RestoreOptions {
        txid: Some(txid),
        ..RestoreOptions::default()
    };
    restore(&store, restored, &options).unwrap();
    assert_eq!(
        dump(restored),
        expected,
        "every commit came back from the replica"
    );
}

#[test]
fn at_rest_a_checkpoint_with_the_writer_excluded_is_permitted_at_once() {
    // The database's close checkpoints this way when its checkpointer
    // opened after the rest (a nudge it could not serve at the connection
    // cap until then). The permit used to wait for a wake that only the
    // writer's next open sends, while the writer's close waited for the
    // checkpointer's: the close never resolved.
    let dir = tempfile::tempdir().unwrap();
    let (replicator, url, db, w) = replicating(dir.path());
    insert(&w, 1..10);
    wait(|r| replicator.sync(r));
    assert!(replicator.may_rest(), "everything committed is shipped");
    drop(w);
    replicator.rested();

    let checkpointer = Connection::open(&db).unwrap();
    let (tx, rx) = mpsc::channel();
    let asked = std::thread::scope(|s| {
        s.spawn(|| {
            let permit = replicator.before_checkpoint(CheckpointWrites::Excluded);
            let _ = tx.send(!permit.is_refused());
        });
        // Bounded so that the old behaviour fails here rather than hang;
        // the thread would never end then, so the process exits at once.
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(permitted) => permitted,
            Err(_) => {
                eprintln!("the permit waited for a wake that never comes");
                std::process::exit(1);
            }
        }
    });
    assert!(asked, "permitted");
    // Beside the writer it is refused: the read connection that would pin
    // a snapshot is closed at rest.
    assert!(replicator
        .before_checkpoint(CheckpointWrites::Concurrent)
        .is_refused());
    passive(&checkpointer);
    drop(checkpointer);

    // The writer opens again and the chain carries on.
    let w = writer(&db);
    replicator.opened(db.to_str().unwrap());
    insert(&w, 10..20);
    let excluded = replicator.before_checkpoint(CheckpointWrites::Excluded);
    drop(excluded);
    let txid = wait(|r| replicator.sync(r)).expect("the replica has TXIDs");
    let expected = dump(&db);
    drop(w);
    wait(|r| replicator.stop(r));
    replicator.join();
    assert_restores(&url, &dir.path().join("restored.db"), txid, &expected);
}
