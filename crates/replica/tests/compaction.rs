//! Compaction and retention on a real folder replica: L0 files merge into
//! one L1 file that restores to the same database, a gap stops the merge,
//! and retention deletes only what no restore inside the window needs.

mod common;

use std::path::Path;
use std::time::Duration;

use common::dump;
use offloop_replica::compact::{compact_level, enforce_retention};
use offloop_replica::stager::{ImageLevels, Stager};
use offloop_replica::{
    restore, LtxFile, ReplicaStore, RestoreOptions, S3Options, Store, Timestamps, Txid, WriteMode,
};
use rusqlite::Connection;

fn store(dir: &Path) -> ReplicaStore {
    let url = format!("file://{}", dir.join("replica").display());
    ReplicaStore::open(&url, &S3Options::default()).unwrap()
}

/// A database with a full image at TXID 1 and an L0 file per write after
/// it, all uploaded with the given timestamps.
fn replicate(dir: &Path, store: &ReplicaStore, timestamps: &[i64]) -> Connection {
    let path = dir.join("app.db");
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "journal_mode", "wal").unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    let mut stager = Stager::open(&path, &dir.join("state")).unwrap();
    stager
        .full_image(
            offloop_ltx::Txid::FIRST,
            ImageLevels { l0: true, l9: true },
            timestamps[0],
        )
        .unwrap();
    for (i, &ms) in timestamps.iter().enumerate().skip(1) {
        conn.execute("INSERT INTO t(v) VALUES (randomblob(?))", [500 * i as i64])
            .unwrap();
        conn.execute("UPDATE t SET v = randomblob(10) WHERE id = 1", [])
            .unwrap();
        stager.capture(None).unwrap();
        stager.stage(ms).unwrap().unwrap();
    }
    for staged in stager.outbox().staged() {
        store
            .write(&staged.file, &staged.path, WriteMode::Overwrite)
            .unwrap();
    }
    conn
}

fn files(store: &ReplicaStore, level: u8) -> Vec<(u64, u64)> {
    store
        .list(level, Txid::FIRST, Timestamps::Listed)
        .unwrap()
        .iter()
        .map(|f| (f.min_txid.get(), f.max_txid.get()))
        .collect()
}

#[test]
fn l0_files_merge_into_one_l1_file_that_restores_to_the_same_database() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let _conn = replicate(dir.path(), &store, &[1000, 2000, 3000, 4000, 5000]);
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();

    let l1 = compact_level(&store, 1, &scratch)
        .unwrap()
        .expect("a new L1 file");
    assert_eq!((l1.min_txid.get(), l1.max_txid.get()), (1, 5));
    assert_eq!(
        l1.timestamp_ms, 5000,
        "a compaction keeps the last file's time"
    );
    assert_eq!(
        compact_level(&store, 1, &scratch).unwrap(),
        None,
        "nothing new"
    );

    // L1 alone restores the same database as the L0 chain.
    let from_l0 = dir.path().join("from-l0.db");
    restore(&store, &from_l0, &RestoreOptions::default()).unwrap();
    for level in [0, 9] {
        let files = store.list(level, Txid::FIRST, Timestamps::Listed).unwrap();
        store.delete(&files).unwrap();
    }
    let from_l1 = dir.path().join("from-l1.db");
    restore(&store, &from_l1, &RestoreOptions::default()).unwrap();
    assert_eq!(dump(&from_l1), dump(&from_l0));
    assert_eq!(dump(&from_l1), dump(&dir.path().join("app.db")));
}

#[test]
fn a_gap_in_the_level_below_stops_a_compaction_at_the_gap() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let _conn = replicate(dir.path(), &store, &[1000, 2000, 3000, 4000, 5000]);
    let gone = LtxFile {
        level: 0,
        min_txid: Txid::new(4).unwrap(),
        max_txid: Txid::new(4).unwrap(),
        size: 0,
        timestamp_ms: 0,
    };
    store.delete(&[gone]).unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let l1 = compact_level(&store, 1, &scratch).unwrap().unwrap();
    assert_eq!((l1.min_txid.get(), l1.max_txid.get()), (1, 3));
}

#[test]
fn retention_keeps_the_newest_snapshot_before_the_window_and_everything_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let minute = 60_000;
    // Snapshot 1 at minute 0; L0 files at minutes 1 to 4.
    let _conn = replicate(
        dir.path(),
        &store,
        &[0, minute, 2 * minute, 3 * minute, 4 * minute],
    );
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    compact_level(&store, 1, &scratch).unwrap().unwrap();
    let l0_retention = Duration::from_secs(300);

    // At minute 5 with a 2-minute window: the only snapshot is older than
    // the window but still the base of every restore inside it.
    enforce_retention(&store, 5 * minute, Duration::from_secs(120), l0_retention).unwrap();
    assert_eq!(files(&store, 9), vec![(1, 1)]);
    // The L0 full image at TXID 1 is covered by the snapshot; the rest are
    // younger than the L0 retention.
    assert_eq!(files(&store, 0), vec![(2, 2), (3, 3), (4, 4), (5, 5)]);

    // Much later, L0 files covered by L1 and older than l0 retention go;
    // the L1 file and the snapshot stay (nothing newer replaces them).
    enforce_retention(&store, 60 * minute, Duration::from_secs(120), l0_retention).unwrap();
    assert_eq!(files(&store, 0), vec![]);
    assert_eq!(files(&store, 1), vec![(1, 5)]);
    assert_eq!(files(&store, 9), vec![(1, 1)]);

    // A newer snapshot before the window makes the older one and the
    // files it covers unnecessary.
    let newer = dir.path().join("newer.ltx");
    std::fs::copy(
        dir.path()
            .join("replica/ltx/1/0000000000000001-0000000000000005.ltx"),
        &newer,
    )
    .unwrap();
    let snapshot = LtxFile {
        level: 9,
        min_txid: Txid::FIRST,
        max_txid: Txid::new(5).unwrap(),
        size: std::fs::metadata(&newer).unwrap().len(),
        timestamp_ms: 50 * minute,
    };
    store
        .write(&snapshot, &newer, WriteMode::Overwrite)
        .unwrap();
    enforce_retention(&store, 60 * minute, Duration::from_secs(120), l0_retention).unwrap();
    assert_eq!(files(&store, 9), vec![(1, 5)]);
    assert_eq!(files(&store, 1), vec![], "covered by the snapshot");
    let restored = dir.path().join("restored.db");
    restore(&store, &restored, &RestoreOptions::default()).unwrap();
    assert_eq!(dump(&restored), dump(&dir.path().join("app.db")));
}
