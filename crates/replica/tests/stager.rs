//! Staging from a real SQLite database's WAL: whole committed transactions
//! only, the newest image of each page per L0 file, full images that stand
//! alone, a capture log that survives a kill, and a chain that breaks when
//! the WAL was restarted behind the stager's back.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use offloop_ltx::{Decoder, Txid};
use offloop_replica::capture::CaptureLog;
use offloop_replica::pending::Staged;
use offloop_replica::stager::{Chain, ImageLevels, Stager};
use rusqlite::Connection;

/// A database in WAL mode whose connection never checkpoints by itself.
fn database(dir: &Path) -> (PathBuf, Connection) {
    let path = dir.join("app.db");
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "journal_mode", "wal").unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    (path, conn)
}

/// Starts the chain again with a full image as an L0 file at `txid`
/// (timestamped `txid`); the files it staged, `None` for an empty database.
fn l0_image(stager: &mut Stager, txid: u64) -> Option<Vec<Staged>> {
    let levels = ImageLevels {
        l0: true,
        l9: false,
    };
    let at = Txid::new(txid).expect("a TXID is at least 1");
    stager.full_image(at, levels, txid as i64).unwrap()
}

/// Applies LTX files in order to an empty file, as a restore does.
fn apply(files: &[Staged], out: &Path) {
    let db = fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(out)
        .unwrap();
    let mut commit = 0u64;
    let mut page_size = 0u64;
    for staged in files {
        let bytes = fs::read(&staged.path).unwrap();
        let mut decoder = Decoder::new(bytes.as_slice()).unwrap();
        let h = *decoder.header();
        page_size = u64::from(h.page_size);
        commit = u64::from(h.commit);
        let mut page = vec![0u8; h.page_size as usize];
        while let Some(pgno) = decoder.next_page(&mut page).unwrap() {
            use offloop_file::PositionedIo;
            db.write_all_at(&page, u64::from(pgno - 1) * page_size)
                .unwrap();
        }
        decoder.finish().unwrap();
    }
    db.set_len(commit * page_size).unwrap();
}

fn rows(path: &Path) -> Vec<(i64, Vec<u8>)> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn.prepare("SELECT id, v FROM t ORDER BY id").unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows
}

fn integrity(path: &Path) -> String {
    let conn = Connection::open(path).unwrap();
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

/// Applies `files` to a new file beside the database at `path`, as a
/// restore does, and checks that it holds the database's rows and passes
/// the integrity check; returns how many rows it holds.
fn assert_restores(files: &[Staged], path: &Path) -> usize {
    let restored = path.with_file_name("restored.db");
    apply(files, &restored);
    let got = rows(&restored);
    assert_eq!(got, rows(path));
    assert_eq!(integrity(&restored), "ok");
    got.len()
}

#[test]
fn a_full_image_then_l0_files_rebuild_the_database_at_each_txid() {
    let dir = tempfile::tempdir().unwrap();
    let (path, conn) = database(dir.path());
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    conn.execute("INSERT INTO t(v) VALUES (randomblob(100))", [])
        .unwrap();
    let mut stager = Stager::open(&path, &dir.path().join("state")).unwrap();
    assert!(matches!(stager.chain(), Chain::Broken { .. }));
    let mut files = l0_image(&mut stager, 1).unwrap();
    assert_eq!(files.len(), 1);
    assert!(matches!(stager.chain(), Chain::Intact(_)));

    // Overflow pages, an update, a delete, and a table created midway.
    conn.execute("INSERT INTO t(v) VALUES (randomblob(20000))", [])
        .unwrap();
    conn.execute("UPDATE t SET v = randomblob(50) WHERE id = 1", [])
        .unwrap();
    stager.capture(None).unwrap();
    files.push(stager.stage(2).unwrap().expect("an L0 file"));
    let at_two = rows(&path);
    conn.execute_batch(
        "BEGIN; CREATE TABLE u(x); INSERT INTO u VALUES (1); DELETE FROM t WHERE id = 1; COMMIT;",
    )
    .unwrap();
    stager.capture(None).unwrap();
    files.push(stager.stage(3).unwrap().expect("an L0 file"));
    assert_eq!(stager.stage(4).unwrap(), None, "nothing new, no file");

    let restored = dir.path().join("restored.db");
    apply(&files[..2], &restored);
    assert_eq!(rows(&restored), at_two);
    assert_restores(&files, &path);
    let names: Vec<_> = files
        .iter()
        .map(|s| (s.file.min_txid.get(), s.file.max_txid.get()))
        .collect();
    assert_eq!(names, vec![(1, 1), (2, 2), (3, 3)]);
}

#[test]
fn a_transaction_still_open_is_not_captured_even_when_its_pages_spill_into_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let (path, conn) = database(dir.path());
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    let mut stager = Stager::open(&path, &dir.path().join("state")).unwrap();
    l0_image(&mut stager, 1);
    conn.pragma_update(None, "cache_size", 2).unwrap();
    conn.execute_batch(
        "BEGIN; WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200) \
         INSERT INTO t(v) SELECT randomblob(3000) FROM c;",
    )
    .unwrap();
    assert!(!conn.is_autocommit(), "the transaction is open");
    let wal = fs::metadata(dir.path().join("app.db-wal")).unwrap().len();
    assert!(wal > 100_000, "pages spilled into the WAL ({wal} bytes)");
    assert!(!stager.capture(None).unwrap(), "nothing committed");
    conn.execute_batch("COMMIT").unwrap();
    assert!(stager.capture(None).unwrap());
    stager.stage(2).unwrap().unwrap();
    assert_eq!(assert_restores(stager.outbox().staged(), &path), 200);
}

#[test]
fn transactions_that_span_several_reads_of_the_wal_are_captured_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (path, conn) = database(dir.path());
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    let mut stager = Stager::open(&path, &dir.path().join("state")).unwrap();
    l0_image(&mut stager, 1);
    // Small commits, then one of about 3 MB, then small ones again: the
    // WAL is read 1 MiB at a time, so commits straddle the reads and the
    // big one spans several.
    for _ in 0..100 {
        conn.execute("INSERT INTO t(v) VALUES (randomblob(3000))", [])
            .unwrap();
    }
    conn.execute_batch(
        "BEGIN; WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) \
         INSERT INTO t(v) SELECT randomblob(3000) FROM c; COMMIT;",
    )
    .unwrap();
    for _ in 0..100 {
        conn.execute("INSERT INTO t(v) VALUES (randomblob(3000))", [])
            .unwrap();
    }
    let wal = fs::metadata(dir.path().join("app.db-wal")).unwrap().len();
    assert!(wal > 4 << 20, "the WAL spans several reads ({wal} bytes)");
    assert!(stager.capture(None).unwrap());
    stager.stage(2).unwrap().unwrap();
    assert_eq!(assert_restores(stager.outbox().staged(), &path), 1200);
}

/// The WAL's page size, and the distinct page numbers it holds frames for
/// (the WAL beside `db`, never restarted).
fn wal_pages(db: &Path) -> (usize, BTreeSet<u32>) {
    let wal = fs::read(db.with_file_name("app.db-wal")).unwrap();
    let page = u32::from_be_bytes(wal[8..12].try_into().unwrap()) as usize;
    let pgnos = wal[32..]
        .chunks_exact(24 + page)
        .map(|f| u32::from_be_bytes(f[..4].try_into().unwrap()))
        .collect();
    (page, pgnos)
}

#[test]
fn one_pass_over_many_commits_writes_each_page_once() {
    let dir = tempfile::tempdir().unwrap();
    let (path, conn) = database(dir.path());
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    let mut stager = Stager::open(&path, &dir.path().join("state")).unwrap();
    let mut files = l0_image(&mut stager, 1).unwrap();
    // A busy writer between two passes: 300 one-row commits, each of which
    // rewrites the table's last leaf page (and the root while it splits),
    // and a row updated again and again.
    for i in 0..300 {
        conn.execute("INSERT INTO t(v) VALUES (randomblob(100))", [])
            .unwrap();
        if i % 10 == 0 {
            conn.execute("UPDATE t SET v = randomblob(100) WHERE id = 1", [])
                .unwrap();
        }
    }
    let (page, pages) = wal_pages(&path);
    assert!(stager.capture(None).unwrap());
    // One record: its length, its fixed fields, each page once with its
    // number, and its hash.
    assert_eq!(
        stager.captured_bytes(),
        (4 + 32 + pages.len() * (4 + page) + 8) as u64,
        "{} distinct pages in 330 commits",
        pages.len()
    );
    files.push(stager.stage(2).unwrap().expect("an L0 file"));
    assert_eq!(assert_restores(&files, &path), 300);
}

#[test]
fn the_capture_log_survives_a_kill_and_drops_a_torn_last_record() {
    let dir = tempfile::tempdir().unwrap();
    let (path, conn) = database(dir.path());
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    let state = dir.path().join("state");
    let mut stager = Stager::open(&path, &state).unwrap();
    l0_image(&mut stager, 1);
    conn.execute("INSERT INTO t(v) VALUES (x'01')", []).unwrap();
    stager.capture(None).unwrap();
    conn.execute("INSERT INTO t(v) VALUES (x'02')", []).unwrap();
    stager.capture(None).unwrap();
    drop(stager);
    // A kill in the middle of the second record's write.
    let log = state.join("capture");
    let len = fs::metadata(&log).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    let reopened = CaptureLog::open(&log).unwrap().unwrap();
    assert!(!reopened.is_empty());
    drop(reopened);

    // The WAL still holds the rest: the stager picks it up again.
    let mut stager = Stager::open(&path, &state).unwrap();
    assert!(matches!(stager.chain(), Chain::Intact(_)));
    assert!(
        stager.capture(None).unwrap(),
        "the torn commit is read again"
    );
    stager.stage(2).unwrap().unwrap();
    let files = stager.outbox().staged().to_vec();
    assert_restores(&files, &path);
}

#[test]
fn a_torn_page_inside_the_last_record_fails_its_hash_and_the_record_is_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let (path, conn) = database(dir.path());
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    let state = dir.path().join("state");
    let mut stager = Stager::open(&path, &state).unwrap();
    l0_image(&mut stager, 1);
    conn.execute("INSERT INTO t(v) VALUES (x'01')", []).unwrap();
    stager.capture(None).unwrap();
    conn.execute("INSERT INTO t(v) VALUES (randomblob(3000))", [])
        .unwrap();
    stager.capture(None).unwrap();
    drop(stager);
    // The second record's length and hash reached the disk, but a sector
    // of its page did not: zeros where the page's bytes should be.
    let log = state.join("capture");
    let bytes = fs::read(&log).unwrap();
    let first_len = u32::from_be_bytes(bytes[56..60].try_into().unwrap()) as usize;
    let second = 56 + 4 + first_len + 8;
    assert!(bytes.len() > second + 2048, "a second record follows");
    let mut torn = bytes.clone();
    torn[second + 1024..second + 1536].fill(0);
    assert_ne!(torn, bytes, "the sector held page bytes");
    fs::write(&log, &torn).unwrap();

    let reopened = CaptureLog::open(&log).unwrap().unwrap();
    assert!(!reopened.is_empty());
    drop(reopened);
    assert_eq!(
        fs::metadata(&log).unwrap().len(),
        second as u64,
        "the torn record is cut off, the whole one before it kept"
    );
    // The WAL still holds the torn commit: it is captured again.
    let mut stager = Stager::open(&path, &state).unwrap();
    assert!(
        stager.capture(None).unwrap(),
        "the torn commit is read again"
    );
    stager.stage(2).unwrap().unwrap();
    assert_restores(stager.outbox().staged(), &path);
}

#[test]
fn a_capture_log_of_the_previous_format_starts_over_from_a_full_image_holding_every_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (path, conn) = database(dir.path());
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    let state = dir.path().join("state");
    let mut stager = Stager::open(&path, &state).unwrap();
    let mut files = l0_image(&mut stager, 1).unwrap();
    conn.execute("INSERT INTO t(v) VALUES (x'01')", []).unwrap();
    conn.execute("INSERT INTO t(v) VALUES (randomblob(5000))", [])
        .unwrap();
    stager.capture(None).unwrap();
    drop(stager);
    // The captured commits were checkpointed and the WAL restarted: the
    // database file is now the only other place that holds them.
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    // A log the format's first version wrote (its magic ends in 01).
    let log = state.join("capture");
    let mut bytes = fs::read(&log).unwrap();
    bytes[..8].copy_from_slice(b"OLCAPT01");
    fs::write(&log, &bytes).unwrap();

    assert!(CaptureLog::open(&log).unwrap().is_none(), "not read");
    let mut stager = Stager::open(&path, &state).unwrap();
    assert!(matches!(stager.chain(), Chain::Broken { .. }));
    files.extend(l0_image(&mut stager, 2).unwrap());
    assert_eq!(assert_restores(&files, &path), 2);
}

#[test]
fn a_wal_restarted_behind_the_followers_back_breaks_the_chain_at_the_next_txid() {
    let dir = tempfile::tempdir().unwrap();
    let (path, conn) = database(dir.path());
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    let mut stager = Stager::open(&path, &dir.path().join("state")).unwrap();
    l0_image(&mut stager, 1);
    conn.execute("INSERT INTO t(v) VALUES (x'01')", []).unwrap();
    stager.capture(None).unwrap();
    // Two restarts the stager never saw: frames were copied and reused.
    for v in [2u8, 3] {
        conn.execute("INSERT INTO t(v) VALUES (?)", [vec![v]])
            .unwrap();
        conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()))
            .unwrap();
    }
    conn.execute("INSERT INTO t(v) VALUES (x'04')", []).unwrap();
    assert!(!stager.capture(None).unwrap());
    match stager.chain() {
        Chain::Broken { next_txid, .. } => assert_eq!(*next_txid, Txid::new(3)),
        Chain::Intact(_) => panic!("the chain should be broken"),
    }
    // What was captured before the break was staged as TXID 2; the full
    // image at 3 makes the chain whole again.
    l0_image(&mut stager, 3);
    let files = stager.outbox().staged().to_vec();
    let txids: Vec<_> = files.iter().map(|s| s.file.max_txid).collect();
    assert_eq!(txids, vec![1, 2, 3]);
    assert_restores(&files, &path);
}
