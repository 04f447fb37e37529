//! offloop restores what the real `litestream replicate` (0.5.17, started
//! here) writes, to a folder and to S3 (moto, started here): the latest
//! state and every synced state by TXID and by time, the same data as the
//! source and the same bytes as `litestream restore` produces.

mod common;

use std::path::Path;

use common::{dump, integrity_ok, litestream_restore, now_ms, tool, wait_for, Moto, Replicate};
use offloop_replica::{
    restore, ReplicaStore, RestoreOptions, S3Options, Store, Timestamps, Txid, SNAPSHOT_LEVEL,
};
use rusqlite::Connection;

type Dump = Vec<(String, Vec<String>)>;

/// A state the source database was in once synced: its TXID, its data, and
/// a time after the sync and before the next change.
struct Synced {
    txid: u64,
    data: Dump,
    after: i64,
}

/// Writes the source database through several synced transactions: rows,
/// a blob on overflow pages, a table created midway, updates and deletes.
fn write_and_sync(db_path: &Path, replicate: &Replicate, store: &ReplicaStore) -> Vec<Synced> {
    let db = Connection::open(db_path).unwrap();
    let steps = [
        "CREATE TABLE a(id INTEGER PRIMARY KEY, name TEXT, data BLOB);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
         INSERT INTO a(name, data) SELECT 'row ' || i, randomblob(i % 50) FROM n;",
        "INSERT INTO a(name, data) VALUES ('big', randomblob(150000));",
        "CREATE TABLE b(k TEXT PRIMARY KEY, v REAL);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
         INSERT INTO b SELECT 'key ' || i, i / 7.0 FROM n;",
        "UPDATE a SET name = upper(name) WHERE id % 3 = 0; DELETE FROM a WHERE id % 5 = 0;",
        "DELETE FROM a WHERE name = 'big';
         INSERT INTO b SELECT k || '!', v * 2 FROM b WHERE v < 10;",
    ];
    let mut synced = Vec::new();
    for (i, sql) in steps.iter().enumerate() {
        db.execute_batch(&format!("BEGIN; {sql} COMMIT;")).unwrap();
        let txid = replicate.sync();
        if i == 0 {
            // Later files then build on Litestream's first snapshot.
            wait_for("the first snapshot", || {
                !store
                    .list(SNAPSHOT_LEVEL, Txid::FIRST, Timestamps::Listed)
                    .unwrap()
                    .is_empty()
            });
        }
        synced.push(Synced {
            txid,
            data: dump(db_path),
            after: now_ms(),
        });
        // The next change must be stamped after `after`.
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    synced
}

fn opts() -> RestoreOptions {
    RestoreOptions::default()
}

/// Restores with offloop and with `litestream restore` at each synced state
/// and checks both against the source.
fn check_restores(
    dir: &Path,
    litestream: &Path,
    store: &ReplicaStore,
    url: &str,
    env: &[(&str, &str)],
    synced: &[Synced],
    source: &Path,
) {
    let latest = dir.join("latest.db");
    let report = restore(store, &latest, &opts()).unwrap();
    assert_eq!(report.txid, synced.last().unwrap().txid);
    assert!(
        !report.checksum_verified,
        "Litestream's files carry no database checksums"
    );
    integrity_ok(&latest);
    assert_eq!(dump(&latest), dump(source));
    let theirs = dir.join("latest-litestream.db");
    litestream_restore(litestream, &[], &theirs, url, env);
    assert_eq!(
        std::fs::read(&latest).unwrap(),
        std::fs::read(&theirs).unwrap()
    );
    let journal: String = Connection::open(&latest)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "wal", "as litestream restore leaves it");

    for (n, s) in synced.iter().enumerate() {
        let at_txid = dir.join(format!("txid-{n}.db"));
        let r = restore(
            store,
            &at_txid,
            &RestoreOptions {
                txid: Txid::new(s.txid),
                ..opts()
            },
        )
        .unwrap();
        assert_eq!(r.txid, s.txid);
        integrity_ok(&at_txid);
        assert_eq!(dump(&at_txid), s.data, "state {n} by txid");
        let theirs = dir.join(format!("txid-{n}-litestream.db"));
        let txid = format!("{:016x}", s.txid);
        litestream_restore(litestream, &["-txid", &txid], &theirs, url, env);
        assert_eq!(
            std::fs::read(&at_txid).unwrap(),
            std::fs::read(&theirs).unwrap()
        );

        let at_time = dir.join(format!("time-{n}.db"));
        let r = restore(
            store,
            &at_time,
            &RestoreOptions {
                timestamp: Some(s.after),
                ..opts()
            },
        )
        .unwrap();
        assert_eq!(r.txid, s.txid, "state {n} by time");
        assert_eq!(dump(&at_time), s.data, "state {n} by time");
    }
}

fn source_db(dir: &Path) -> std::path::PathBuf {
    let db_path = dir.join("source.db");
    let db = Connection::open(&db_path).unwrap();
    db.pragma_update(None, "journal_mode", "wal").unwrap();
    db_path
}

#[test]
fn offloop_restores_a_folder_replica_litestream_wrote() {
    let Some(litestream) = tool("litestream") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let source = source_db(dir.path());
    let replica = dir.path().join("replica");
    let url = format!("file://{}", replica.display());
    let store = ReplicaStore::open(&url, &S3Options::default()).unwrap();
    let replicate = Replicate::start(
        &litestream,
        dir.path(),
        &source,
        &format!("      type: file\n      path: {}\n", replica.display()),
    );
    let synced = write_and_sync(&source, &replicate, &store);
    drop(replicate);
    check_restores(dir.path(), &litestream, &store, &url, &[], &synced, &source);
}

#[test]
fn offloop_restores_an_s3_replica_litestream_wrote() {
    let Some(litestream) = tool("litestream") else {
        return;
    };
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.create_bucket("litestream");
    let dir = tempfile::tempdir().unwrap();
    let source = source_db(dir.path());
    let store = ReplicaStore::open("s3://litestream/app", &moto.options()).unwrap();
    let replicate = Replicate::start(
        &litestream,
        dir.path(),
        &source,
        &format!(
            "      type: s3\n      bucket: litestream\n      path: app\n      endpoint: {}\n      region: us-east-1\n      force-path-style: true\n      access-key-id: {}\n      secret-access-key: {}\n",
            moto.endpoint(),
            common::ACCESS_KEY,
            common::SECRET_KEY
        ),
    );
    let synced = write_and_sync(&source, &replicate, &store);
    drop(replicate);
    let url = format!(
        "s3://litestream/app?endpoint={}&forcePathStyle=true",
        moto.endpoint()
    );
    let env = [
        ("AWS_ACCESS_KEY_ID", common::ACCESS_KEY),
        ("AWS_SECRET_ACCESS_KEY", common::SECRET_KEY),
    ];
    check_restores(
        dir.path(),
        &litestream,
        &store,
        &url,
        &env,
        &synced,
        &source,
    );
}
