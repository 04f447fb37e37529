//! The paged VFS against a real database: a source that reads pages from
//! a finished database file (counting what it is asked), a `Paged` copy
//! that starts empty, and SQLite reading and writing the copy.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use offloop_file::PositionedIo;
use offloop_vfs::{install, map_path, read_map, register, uninstall, PageSource, Paged, VFS_NAME};
use rusqlite::{Connection, OpenFlags};

/// Pages from a database file; `down` makes every read fail.
struct FileSource {
    file: fs::File,
    page_size: u32,
    asked: AtomicU32,
    served: Mutex<Vec<u32>>,
    down: AtomicBool,
    read_ahead: u32,
}

impl FileSource {
    fn new(path: &Path, page_size: u32, read_ahead: u32) -> Arc<FileSource> {
        Arc::new(FileSource {
            file: fs::File::open(path).unwrap(),
            page_size,
            asked: AtomicU32::new(0),
            served: Mutex::new(Vec::new()),
            down: AtomicBool::new(false),
            read_ahead,
        })
    }

    fn page(&self, pgno: u32) -> Vec<u8> {
        let mut b = vec![0; self.page_size as usize];
        self.file
            .read_exact_at(&mut b, u64::from(pgno - 1) * u64::from(self.page_size))
            .unwrap();
        b
    }
}

impl PageSource for FileSource {
    fn read_page(
        &self,
        pgno: u32,
        missing: &dyn Fn(u32) -> bool,
    ) -> Result<Vec<(u32, Vec<u8>)>, String> {
        if self.down.load(Ordering::SeqCst) {
            return Err("the source is down".into());
        }
        self.asked.fetch_add(1, Ordering::SeqCst);
        let pages = self.file.metadata().unwrap().len() as u32 / self.page_size;
        let mut out = vec![(pgno, self.page(pgno))];
        for p in pgno + 1..=(pgno + self.read_ahead).min(pages) {
            if missing(p) {
                out.push((p, self.page(p)));
            }
        }
        self.served
            .lock()
            .unwrap()
            .extend(out.iter().map(|(p, _)| *p));
        Ok(out)
    }
}

/// A database of `rows` rows of 400 bytes, checkpointed into its file.
fn source_db(dir: &Path, rows: i64) -> (PathBuf, u32, u32) {
    let path = dir.join("source.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode=WAL;
         CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);
         CREATE INDEX t_v ON t(v);",
    )
    .unwrap();
    conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?1)
         INSERT INTO t SELECT i, randomblob(400) FROM n",
        [rows],
    )
    .unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let page_size: u32 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    let pages: u32 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    (path, page_size, pages)
}

fn open_paged(path: &Path) -> Connection {
    Connection::open_with_flags_and_vfs(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        VFS_NAME,
    )
    .unwrap()
}

/// Brings every missing page in, the way a background fill would.
fn fill(paged: &Paged, source: &FileSource) {
    while let Some(pgno) = paged.next_missing(1) {
        paged.write_missing(&[(pgno, source.page(pgno))]).unwrap();
    }
    assert!(paged.complete().unwrap());
}

#[test]
fn a_point_query_reads_a_few_pages_and_the_filled_file_equals_the_source() {
    register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (src, page_size, pages) = source_db(dir.path(), 5000);
    let copy = dir.path().join("copy.db");
    let source = FileSource::new(&src, page_size, 0);
    let paged = Paged::create(&copy, page_size, pages, b"tag".to_vec(), source.clone()).unwrap();
    install(&paged).unwrap();

    let conn = open_paged(&copy);
    let v: Vec<u8> = conn
        .query_row("SELECT v FROM t WHERE id = 4321", [], |r| r.get(0))
        .unwrap();
    let want: Vec<u8> = Connection::open(&src)
        .unwrap()
        .query_row("SELECT v FROM t WHERE id = 4321", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, want);
    let asked = source.asked.load(Ordering::SeqCst);
    assert!(asked < 10, "a point query read {asked} of {pages} pages");
    assert!(paged.stats().pages_local < 10);

    // The same query again reads nothing more.
    conn.query_row("SELECT v FROM t WHERE id = 4321", [], |r| {
        r.get::<_, Vec<u8>>(0)
    })
    .unwrap();
    assert_eq!(source.asked.load(Ordering::SeqCst), asked);

    fill(&paged, &source);
    assert!(!map_path(&copy).exists(), "the map is gone once filled");
    let before = source.asked.load(Ordering::SeqCst);
    let n: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 5000);
    assert_eq!(
        source.asked.load(Ordering::SeqCst),
        before,
        "nothing is read once filled"
    );
    drop(conn);
    uninstall(&paged);
    assert_eq!(fs::read(&copy).unwrap(), fs::read(&src).unwrap());
}

#[test]
fn pages_sqlite_wrote_are_never_overwritten_by_the_fill() {
    register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (src, page_size, pages) = source_db(dir.path(), 3000);
    let copy = dir.path().join("copy.db");
    let source = FileSource::new(&src, page_size, 4);
    let paged = Paged::create(&copy, page_size, pages, Vec::new(), source.clone()).unwrap();
    install(&paged).unwrap();

    let conn = open_paged(&copy);
    conn.execute_batch(
        "PRAGMA journal_mode=WAL;
         UPDATE t SET v = zeroblob(400) WHERE id % 7 = 0;
         DELETE FROM t WHERE id > 2900;
         PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .unwrap();
    fill(&paged, &source);
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let (n, zeroed): (i64, i64) = conn
        .query_row("SELECT count(*), sum(v = zeroblob(400)) FROM t", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((n, zeroed), (2900, 2900 / 7));
    drop(conn);
    uninstall(&paged);
}

#[test]
fn a_source_that_is_down_fails_the_query_cleanly_and_local_pages_still_answer() {
    register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (src, page_size, pages) = source_db(dir.path(), 3000);
    let copy = dir.path().join("copy.db");
    let source = FileSource::new(&src, page_size, 0);
    let paged = Paged::create(&copy, page_size, pages, Vec::new(), source.clone()).unwrap();
    install(&paged).unwrap();
    let conn = open_paged(&copy);
    let first: i64 = conn
        .query_row("SELECT length(v) FROM t WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(first, 400);

    source.down.store(true, Ordering::SeqCst);
    let err = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
        .unwrap_err();
    assert_eq!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::SystemIoFailure)
    );
    assert!(paged
        .stats()
        .last_error
        .unwrap()
        .contains("the source is down"));
    let again: i64 = conn
        .query_row("SELECT length(v) FROM t WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(again, 400, "local pages still answer");

    source.down.store(false, Ordering::SeqCst);
    let n: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 3000);
    assert_eq!(paged.stats().last_error, None);
    drop(conn);
    uninstall(&paged);
}

#[test]
fn a_fill_resumed_from_the_map_trusts_only_pages_saved_before_the_crash() {
    register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (src, page_size, pages) = source_db(dir.path(), 2000);
    let copy = dir.path().join("copy.db");
    let source = FileSource::new(&src, page_size, 0);
    let paged = Paged::create(&copy, page_size, pages, b"at 7".to_vec(), source.clone()).unwrap();
    for pgno in 1..=pages / 2 {
        paged.write_missing(&[(pgno, source.page(pgno))]).unwrap();
    }
    paged.save().unwrap();
    // Written after the save: a crash now loses the record of these, and
    // a torn one must not be trusted.
    for pgno in pages / 2 + 1..=pages / 2 + 5 {
        paged
            .write_missing(&[(pgno, vec![0xEE; page_size as usize])])
            .unwrap();
    }
    drop(paged);

    let record = read_map(&map_path(&copy)).unwrap().unwrap();
    assert_eq!(record.tag, b"at 7");
    assert_eq!(record.local.count(), pages / 2);
    let resumed = Paged::resume(&copy, record, source.clone()).unwrap();
    fill(&resumed, &source);
    assert_eq!(fs::read(&copy).unwrap(), fs::read(&src).unwrap());
}

#[test]
fn one_file_is_installed_once() {
    register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (src, page_size, pages) = source_db(dir.path(), 10);
    let copy = dir.path().join("copy.db");
    let source = FileSource::new(&src, page_size, 0);
    let paged = Paged::create(&copy, page_size, pages, Vec::new(), source.clone()).unwrap();
    install(&paged).unwrap();
    assert!(install(&paged)
        .unwrap_err()
        .contains("being restored already"));
    uninstall(&paged);
    install(&paged).unwrap();
    uninstall(&paged);
    assert!(
        Paged::create(&copy, page_size, pages, Vec::new(), source).is_err(),
        "never over a file"
    );
}

#[test]
fn many_readers_at_once_each_get_the_right_rows() {
    register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (src, page_size, pages) = source_db(dir.path(), 4000);
    let copy = dir.path().join("copy.db");
    let source = FileSource::new(&src, page_size, 2);
    let paged = Paged::create(&copy, page_size, pages, Vec::new(), source.clone()).unwrap();
    install(&paged).unwrap();
    let want: Vec<Vec<u8>> = {
        let c = Connection::open(&src).unwrap();
        let mut s = c.prepare("SELECT v FROM t ORDER BY id").unwrap();
        let rows = s.query_map([], |r| r.get(0)).unwrap();
        rows.map(Result::unwrap).collect()
    };
    let want = Arc::new(want);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let copy = copy.clone();
            let want = want.clone();
            std::thread::spawn(move || {
                let conn = Connection::open_with_flags_and_vfs(
                    &copy,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                    VFS_NAME,
                )
                .unwrap();
                for i in 0..200 {
                    let id = ((i * 8 + t) * 2 % 4000 + 1) as i64;
                    let v: Vec<u8> = conn
                        .query_row("SELECT v FROM t WHERE id = ?1", [id], |r| r.get(0))
                        .unwrap();
                    assert_eq!(v, want[(id - 1) as usize]);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    fill(&paged, &source);
    uninstall(&paged);
    assert_eq!(fs::read(&copy).unwrap(), fs::read(&src).unwrap());
}

#[test]
fn saves_from_two_threads_at_once_all_succeed_and_leave_a_whole_map() {
    register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (src, page_size, pages) = source_db(dir.path(), 2000);
    let copy = dir.path().join("copy.db");
    let source = FileSource::new(&src, page_size, 0);
    let paged = Paged::create(&copy, page_size, pages, b"both".to_vec(), source.clone()).unwrap();
    // The writer's syncs and the fill's progress each save; pages arrive
    // between the saves, as they do during a fill.
    std::thread::scope(|s| {
        for half in [0, 1] {
            let (paged, source) = (&paged, &source);
            s.spawn(move || {
                for pgno in (1..=pages).filter(|p| p % 2 == half) {
                    paged.write_missing(&[(pgno, source.page(pgno))]).unwrap();
                    paged.save().unwrap();
                }
            });
        }
    });
    paged.save().unwrap();
    let record = read_map(&map_path(&copy)).unwrap().unwrap();
    assert_eq!(record.tag, b"both");
    assert_eq!(record.local.count(), pages);
}
