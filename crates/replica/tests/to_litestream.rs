//! A replica offloop writes (a snapshot at L9, L0 files made from page
//! images, an L1 compaction) is one the real `litestream restore` reads, in
//! a folder and in S3 (moto, started here), by TXID and by time, giving the
//! same bytes as offloop's own restore. Also: what restore refuses, and
//! what it catches.

mod common;

use std::path::Path;

use bytes::Bytes;
use common::{integrity_ok, litestream_restore, put, tool, Moto};
use offloop_ltx::{DatabaseChecksum, Encoder, Header, HEADER_FLAG_NO_CHECKSUM};
use offloop_replica::{
    restore, Error, LtxFile, ReplicaStore, RestoreOptions, S3Options, Store, Txid, WriteMode,
};
use rusqlite::Connection;

const PAGE: usize = 4096;

/// The database file's bytes after each step (rollback journal, so the file
/// is the whole state): rows, an overflow blob, a new table, then a VACUUM
/// that shrinks the file.
fn states(dir: &Path) -> Vec<Vec<u8>> {
    let path = dir.join("images.db");
    let db = Connection::open(&path).unwrap();
    db.pragma_update(None, "journal_mode", "delete").unwrap();
    let steps = [
        "CREATE TABLE a(id INTEGER PRIMARY KEY, name TEXT);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
         INSERT INTO a(name) SELECT 'name ' || i FROM n;",
        "CREATE TABLE blobs(b BLOB); INSERT INTO blobs VALUES (randomblob(200000));",
        "CREATE TABLE c(x); INSERT INTO c VALUES (1), (2.5), ('three'), (NULL);
         UPDATE a SET name = name || '!' WHERE id % 4 = 0;",
        "DELETE FROM blobs; DELETE FROM a WHERE id > 100;",
    ];
    let mut out = Vec::new();
    for sql in steps {
        db.execute_batch(sql).unwrap();
        out.push(std::fs::read(&path).unwrap());
    }
    db.execute_batch("VACUUM").unwrap();
    *out.last_mut().unwrap() = std::fs::read(&path).unwrap();
    assert!(out[3].len() < out[2].len(), "the last state is smaller");
    out
}

fn pages(image: &[u8]) -> Vec<&[u8]> {
    image.chunks(PAGE).collect()
}

fn sum(image: &[u8]) -> DatabaseChecksum {
    let mut s = DatabaseChecksum::new();
    for (i, p) in pages(image).iter().enumerate() {
        s.toggle_page(i as u32 + 1, p);
    }
    s
}

/// One LTX file taking `from` (empty for a snapshot) to `to`.
fn ltx(from: &[u8], to: &[u8], min: u64, max: u64, ts: i64, tracked: bool) -> Bytes {
    let commit = (to.len() / PAGE) as u32;
    let header = Header {
        flags: if tracked { 0 } else { HEADER_FLAG_NO_CHECKSUM },
        page_size: PAGE as u32,
        commit,
        min_txid: offloop_ltx::Txid::new(min).expect("a TXID is at least 1"),
        max_txid: offloop_ltx::Txid::new(max).expect("a TXID is at least 1"),
        timestamp: ts,
        pre_apply_checksum: if tracked && min > 1 {
            sum(from).value()
        } else {
            0
        },
        ..Header::default()
    };
    let mut enc = Encoder::new(Vec::new(), header).unwrap();
    let old = pages(from);
    for (i, page) in pages(to).iter().enumerate() {
        if old.get(i) != Some(page) {
            enc.encode_page(i as u32 + 1, page).unwrap();
        }
    }
    let post = if tracked { sum(to).value() } else { 0 };
    Bytes::from(enc.finish(post).unwrap().writer)
}

/// Writes the replica as a live replicator would, each file stamped with
/// the time it was written, `spacing_ms` apart: L9 snapshot at TXID 1, L0
/// files 2..4, L1 over 2..3. Returns each TXID's time (index = TXID - 1).
/// (`litestream restore -timestamp` only accepts times between the first
/// and last upload as the store records them — moto, to the second — so
/// the stamps must be real and, on S3, over a second apart.)
fn write_replica(store: &ReplicaStore, s: &[Vec<u8>], tracked: bool, spacing_ms: u64) -> Vec<i64> {
    let mut stamps = Vec::new();
    let mut stamp = || {
        std::thread::sleep(std::time::Duration::from_millis(spacing_ms));
        let now = common::now_ms();
        stamps.push(now);
        now
    };
    let ts = stamp();
    put(
        store,
        (9, 1, 1),
        &ltx(&[], &s[0], 1, 1, ts, tracked),
        ts,
        WriteMode::Overwrite,
    )
    .unwrap();
    for t in 2..=4u64 {
        let ts = stamp();
        let (from, to) = (&s[t as usize - 2], &s[t as usize - 1]);
        put(
            store,
            (0, t, t),
            &ltx(from, to, t, t, ts, tracked),
            ts,
            WriteMode::Overwrite,
        )
        .unwrap();
        if t == 3 {
            put(
                store,
                (1, 2, 3),
                &ltx(&s[0], &s[2], 2, 3, ts, tracked),
                ts,
                WriteMode::Overwrite,
            )
            .unwrap();
        }
    }
    stamps
}

fn rfc3339(ms: i64) -> String {
    offloop_replica::store::go_rfc3339_nano(ms)
}

/// Restores the replica with both tools at every TXID and time. Litestream
/// 0.5.17 cannot restore files that carry database checksums (its restore
/// re-encodes without them and then refuses the copied post-apply
/// checksum), so with `tracked` only offloop restores.
fn check_both_ways(
    dir: &Path,
    store: &ReplicaStore,
    url: &str,
    env: &[(&str, &str)],
    tracked: bool,
    spacing_ms: u64,
) {
    let Some(litestream) = tool("litestream") else {
        return;
    };
    let litestream = (!tracked).then_some(litestream);
    let s = states(dir);
    let stamps = write_replica(store, &s, tracked, spacing_ms);

    let ours = dir.join("ours.db");
    let report = restore(store, &ours, &RestoreOptions::default()).unwrap();
    assert_eq!(
        (report.txid.get(), report.files),
        (4, 3),
        "L9, then L1 2-3, then L0 4"
    );
    assert_eq!(report.checksum_verified, tracked);
    assert_eq!(report.pages as usize, s[3].len() / PAGE);
    assert_eq!(
        std::fs::read(&ours).unwrap(),
        s[3],
        "the shrunk database, byte for byte"
    );
    integrity_ok(&ours);
    if let Some(litestream) = &litestream {
        let theirs = dir.join("theirs.db");
        litestream_restore(litestream, &[], &theirs, url, env);
        assert_eq!(std::fs::read(&theirs).unwrap(), s[3]);
    }

    for t in 1..=4u64 {
        let want = &s[t as usize - 1];
        if let Some(litestream) = &litestream {
            let theirs = dir.join(format!("theirs-{t}.db"));
            litestream_restore(
                litestream,
                &["-txid", &format!("{t:016x}")],
                &theirs,
                url,
                env,
            );
            assert_eq!(
                &std::fs::read(&theirs).unwrap(),
                want,
                "litestream at txid {t}"
            );
        }
        let ours = dir.join(format!("ours-{t}.db"));
        restore(
            store,
            &ours,
            &RestoreOptions {
                txid: Txid::new(t),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(&std::fs::read(&ours).unwrap(), want, "offloop at txid {t}");

        // Just after file t was written, well before file t+1. Litestream
        // refuses a time after its newest file; offloop restores the latest
        // state then.
        let when = stamps[t as usize - 1] + 25;
        if let Some(litestream) = litestream.as_ref().filter(|_| t < 4) {
            let theirs = dir.join(format!("theirs-time-{t}.db"));
            litestream_restore(
                litestream,
                &["-timestamp", &rfc3339(when)],
                &theirs,
                url,
                env,
            );
            assert_eq!(
                &std::fs::read(&theirs).unwrap(),
                want,
                "litestream at time {t}"
            );
        }
        let ours = dir.join(format!("ours-time-{t}.db"));
        restore(
            store,
            &ours,
            &RestoreOptions {
                timestamp: Some(when),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(&std::fs::read(&ours).unwrap(), want, "offloop at time {t}");
    }
}

fn folder(dir: &Path) -> (ReplicaStore, String) {
    let url = format!("file://{}", dir.join("replica").display());
    (
        ReplicaStore::open(&url, &S3Options::default()).unwrap(),
        url,
    )
}

#[test]
fn litestream_restores_a_folder_replica_offloop_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let (store, url) = folder(dir.path());
    check_both_ways(dir.path(), &store, &url, &[], false, 50);
}

#[test]
fn offloop_restores_and_verifies_a_replica_with_database_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let (store, url) = folder(dir.path());
    check_both_ways(dir.path(), &store, &url, &[], true, 50);
}

#[test]
fn litestream_restores_an_s3_replica_offloop_wrote() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.create_bucket("ours");
    let dir = tempfile::tempdir().unwrap();
    let store = ReplicaStore::open("s3://ours/db", &moto.options()).unwrap();
    let url = format!(
        "s3://ours/db?endpoint={}&forcePathStyle=true",
        moto.endpoint()
    );
    let env = [
        ("AWS_ACCESS_KEY_ID", common::ACCESS_KEY),
        ("AWS_SECRET_ACCESS_KEY", common::SECRET_KEY),
    ];
    check_both_ways(dir.path(), &store, &url, &env, false, 1100);
}

#[test]
fn restore_refuses_to_overwrite_unless_asked_and_then_drops_the_old_wal() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = folder(dir.path());
    let s = states(dir.path());
    write_replica(&store, &s, false, 1);
    let out = dir.path().join("out.db");
    std::fs::write(&out, b"precious").unwrap();
    let e = restore(&store, &out, &RestoreOptions::default()).unwrap_err();
    assert!(matches!(e, Error::Exists(_)), "{e}");
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");

    let wal = dir.path().join("out.db-wal");
    std::fs::write(&wal, b"stale").unwrap();
    restore(
        &store,
        &out,
        &RestoreOptions {
            overwrite: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), s[3]);
    assert!(
        !wal.exists(),
        "a stale WAL would be replayed over the restored database"
    );
    assert!(!dir.path().join("out.db.tmp").exists());
}

#[test]
fn a_damaged_file_fails_the_restore_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = folder(dir.path());
    let s = states(dir.path());
    write_replica(&store, &s, false, 1);
    let l0 = dir
        .path()
        .join("replica/ltx/0/0000000000000004-0000000000000004.ltx");
    let mut bytes = std::fs::read(&l0).unwrap();
    bytes[150] ^= 1;
    std::fs::write(&l0, bytes).unwrap();
    let out = dir.path().join("out.db");
    let e = restore(&store, &out, &RestoreOptions::default()).unwrap_err();
    assert!(matches!(e, Error::Ltx { .. }), "{e}");
    assert!(!out.exists());
    assert!(!dir.path().join("out.db.tmp").exists());
}

#[test]
fn a_wrong_post_apply_checksum_fails_the_restore() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = folder(dir.path());
    let s = states(dir.path());
    let snapshot = ltx(&[], &s[0], 1, 1, 1, true);
    put(&store, (9, 1, 1), &snapshot, 1, WriteMode::Overwrite).unwrap();
    // A file that claims a result its pages do not give.
    let header = Header {
        flags: 0,
        page_size: PAGE as u32,
        commit: (s[0].len() / PAGE) as u32,
        min_txid: Txid::new(2).unwrap(),
        max_txid: Txid::new(2).unwrap(),
        timestamp: 2,
        pre_apply_checksum: sum(&s[0]).value(),
        ..Header::default()
    };
    let mut enc = Encoder::new(Vec::new(), header).unwrap();
    enc.encode_page(2, &vec![0u8; PAGE]).unwrap();
    let lying = enc.finish(sum(&s[0]).value()).unwrap().writer;
    put(&store, (0, 2, 2), &lying, 2, WriteMode::Overwrite).unwrap();
    let e = restore(
        &store,
        &dir.path().join("out.db"),
        &RestoreOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Verify(_)), "{e}");
}

#[test]
fn a_gap_in_the_replica_fails_the_restore() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = folder(dir.path());
    let s = states(dir.path());
    write_replica(&store, &s, false, 1);
    let txid = |n| Txid::new(n).unwrap();
    let l1 = LtxFile {
        level: 1,
        min_txid: txid(2),
        max_txid: txid(3),
        size: 0,
        timestamp_ms: 0,
    };
    let l0 = LtxFile { level: 0, ..l1 };
    store
        .delete(&[
            l1,
            l0,
            LtxFile {
                min_txid: txid(3),
                max_txid: txid(3),
                ..l0
            },
        ])
        .unwrap();
    let e = restore(
        &store,
        &dir.path().join("out.db"),
        &RestoreOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::Plan(_)) && e.to_string().contains("gap"),
        "{e}"
    );
}
