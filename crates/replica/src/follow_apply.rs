//! How a follower moves its database from one TXID to a later one: which
//! replica file to apply next ([`next_file`], pure arithmetic over
//! listings), and the transaction that applies it ([`apply_file`], run on
//! the writer's connection as the engine's privileged work).
//!
//! A file covering TXIDs `a..=b` holds the newest image of every page any
//! of them changed, and the database's size in pages after `b`. Written
//! over the database at any TXID `s` with `a - 1 <= s <= b`, it leaves the
//! database exactly at `b`: every page changed after `s` is in the file at
//! its `b` image, and every page not in it has not changed since `a - 1`.
//! A full image (`a = 1`) does this from any state at all. That one rule
//! decides which files may be applied, and makes applying one again after
//! a crash harmless.
//!
//! It never fetches anything and never runs on its own thread.

use offloop_ltx::{Decoder, Txid};
use rusqlite::Connection;

use crate::follow_record::Position;
use crate::store::{LtxFile, SNAPSHOT_LEVEL};

/// What one applied file did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Applied {
    /// Pages written.
    pub pages: u64,
    /// The database's size in pages afterwards.
    pub commit: u32,
}

/// The next file to apply to a database at `position`: among the files
/// that start at or before the TXID after its `at` (a full image when
/// `at` is not known) and end after it (and at its `reach` or later), the
/// one that reaches furthest; of those, the one that starts latest (the
/// fewest pages to write), then the lowest level. `None` when the replica
/// holds nothing newer that can be applied.
pub fn next_file(levels: &[Vec<LtxFile>], position: Position) -> Option<LtxFile> {
    let Position { at, reach } = position;
    levels
        .iter()
        .flatten()
        .filter(|f| f.level <= SNAPSHOT_LEVEL)
        .filter(|f| {
            let starts = match at {
                None => f.min_txid == Txid::FIRST,
                Some(at) => f.min_txid <= at.next(),
            };
            starts && after(f.max_txid, at) && reach.is_none_or(|r| f.max_txid >= r)
        })
        .max_by_key(|f| (f.max_txid, f.min_txid, std::cmp::Reverse(f.level)))
        .copied()
}

/// Whether the replica holds anything past `at` (`None`: a state not
/// known) at all, applicable or not (a gap the follower cannot cross is
/// then an error, not freshness): its newest TXID if so.
pub fn anything_after(levels: &[Vec<LtxFile>], at: Option<Txid>) -> Option<Txid> {
    levels
        .iter()
        .flatten()
        .map(|f| f.max_txid)
        .filter(|&t| after(t, at))
        .max()
}

/// Whether `txid` is past `at`; every TXID is past a state not known.
fn after(txid: Txid, at: Option<Txid>) -> bool {
    at.is_none_or(|at| txid > at)
}

/// Writes the LTX file `bytes` (its `label` for messages) over the
/// database on `conn` in one transaction: each page through
/// `sqlite_dbpage`, then the pages past the file's commit size removed.
/// A file that fails to decode or verify is rolled back whole.
pub fn apply_file(conn: &Connection, label: &str, bytes: &[u8]) -> Result<Applied, String> {
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(|e| format!("cannot begin applying {label}: {e}"))?;
    match write_pages(conn, label, bytes) {
        Ok(applied) => match conn.execute_batch("COMMIT") {
            // Other connections drop their page cache when the WAL moves
            // on; this one keeps the pages it wrote, and with them what its
            // b-tree layer had parsed from their old contents. Dropping its
            // cache (and schema) makes it read them afresh.
            Ok(()) => {
                match conn.execute_batch("PRAGMA shrink_memory; PRAGMA writable_schema = RESET") {
                    Ok(()) => Ok(applied),
                    Err(e) => Err(format!(
                        "applied {label} but cannot drop the writer's cache: {e}"
                    )),
                }
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(format!("cannot commit {label}: {e}"))
            }
        },
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn write_pages(conn: &Connection, label: &str, bytes: &[u8]) -> Result<Applied, String> {
    let ltx = |e: offloop_ltx::Error| format!("{label}: {e}");
    let sql = |e: rusqlite::Error| format!("cannot apply {label}: {e}");
    let mut decoder = Decoder::new(bytes).map_err(ltx)?;
    let header = *decoder.header();
    let page_size: u32 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .map_err(sql)?;
    if header.page_size != page_size {
        return Err(format!(
            "{label} has {}-byte pages and the database {page_size}-byte ones: a follower \
             cannot change its page size",
            header.page_size
        ));
    }
    let mut insert = conn
        .prepare_cached("INSERT INTO sqlite_dbpage(pgno, data) VALUES (?1, ?2)")
        .map_err(sql)?;
    let mut page = vec![0u8; page_size as usize];
    let mut pages = 0u64;
    while let Some(pgno) = decoder.next_page(&mut page).map_err(ltx)? {
        insert.execute((pgno, &page[..])).map_err(sql)?;
        pages += 1;
    }
    // Checked before the commit: a damaged file never lands.
    decoder.finish().map_err(ltx)?;
    let size: u32 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .map_err(sql)?;
    if size > header.commit {
        // sqlite_dbpage drops page N and every page after it when a NULL
        // is inserted as page N, at the commit; a page written after that
        // would cancel it, so it comes last.
        insert
            .execute((header.commit + 1, None::<&[u8]>))
            .map_err(sql)?;
    }
    Ok(Applied {
        pages,
        commit: header.commit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(level: u8, min: u64, max: u64) -> LtxFile {
        LtxFile {
            level,
            min_txid: Txid::new(min).unwrap(),
            max_txid: Txid::new(max).unwrap(),
            size: 0,
            timestamp_ms: 0,
        }
    }

    fn t(n: u64) -> Txid {
        Txid::new(n).unwrap()
    }

    /// At TXID `n`, no apply under way.
    fn at(n: u64) -> Position {
        Position::settled(Some(t(n)))
    }

    fn levels(files: &[LtxFile]) -> Vec<Vec<LtxFile>> {
        let mut l = vec![Vec::new(); 10];
        for f in files {
            l[usize::from(f.level)].push(*f);
        }
        l
    }

    #[test]
    fn the_next_file_continues_the_database_and_reaches_furthest() {
        let l = levels(&[
            file(9, 1, 20),
            file(1, 11, 30),
            file(0, 21, 21),
            file(0, 31, 31),
        ]);
        // From 20: the L1 file reaches 30; the snapshot does not go past 20.
        assert_eq!(next_file(&l, at(20)), Some(file(1, 11, 30)));
        assert_eq!(next_file(&l, at(30)), Some(file(0, 31, 31)));
        assert_eq!(next_file(&l, at(31)), None);
        // A state not known: only a full image.
        assert_eq!(next_file(&l, Position::settled(None)), Some(file(9, 1, 20)));
        // A crash during an apply to 30: whatever is next must reach 30.
        assert_eq!(
            next_file(&l, at(20).announcing(t(30))),
            Some(file(1, 11, 30))
        );
        assert_eq!(next_file(&l, at(25).announcing(t(31))), None);
    }

    /// A WAL database at `path` with `rows` rows of 3,000 bytes.
    fn database(path: &std::path::Path, rows: i64) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t(v BLOB)")
            .unwrap();
        conn.execute(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?1) \
             INSERT INTO t SELECT randomblob(3000) FROM c",
            [rows],
        )
        .unwrap();
        conn
    }

    /// Every page of `conn`'s database as an LTX file covering TXIDs
    /// `min..=max`.
    fn image(conn: &Connection, min: u64, max: u64) -> Vec<u8> {
        let count: u32 = conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        let header = offloop_ltx::Header {
            flags: offloop_ltx::HEADER_FLAG_NO_CHECKSUM,
            page_size: 4096,
            commit: count,
            min_txid: Txid::new(min).unwrap(),
            max_txid: Txid::new(max).unwrap(),
            ..offloop_ltx::Header::default()
        };
        let mut enc = offloop_ltx::Encoder::new(Vec::new(), header).unwrap();
        let mut stmt = conn
            .prepare("SELECT pgno, data FROM sqlite_dbpage ORDER BY pgno")
            .unwrap();
        let pages = stmt
            .query_map([], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, Vec<u8>>(1)?)))
            .unwrap();
        for page in pages {
            let (pgno, data) = page.unwrap();
            enc.encode_page(pgno, &data).unwrap();
        }
        enc.finish(0).unwrap().writer
    }

    fn rows(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_file_applied_over_a_bigger_database_leaves_exactly_its_pages_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let primary = database(&dir.path().join("p.db"), 10);
        let follower = database(&dir.path().join("f.db"), 300);
        let bytes = image(&primary, 1, 5);
        let applied = apply_file(&follower, "L0/test", &bytes).unwrap();
        let size =
            |c: &Connection| -> u32 { c.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap() };
        assert_eq!(applied.commit, size(&primary));
        assert_eq!(
            size(&follower),
            size(&primary),
            "the pages past the commit size went"
        );
        // The writing connection itself reads the new pages, not its cache.
        assert_eq!(rows(&follower), 10);
        let integrity: String = follower
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(integrity, "ok");
    }

    #[test]
    fn a_damaged_file_is_rolled_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let primary = database(&dir.path().join("p.db"), 10);
        let follower = database(&dir.path().join("f.db"), 3);
        let mut bytes = image(&primary, 1, 5);
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        assert!(apply_file(&follower, "L0/test", &bytes).is_err());
        assert_eq!(rows(&follower), 3);
    }

    #[test]
    fn a_gap_leaves_only_a_full_image_and_the_smaller_file_wins_a_tie() {
        let l = levels(&[file(0, 1, 40), file(9, 1, 40), file(0, 35, 40)]);
        assert_eq!(next_file(&l, at(20)), Some(file(0, 1, 40)));
        assert_eq!(next_file(&l, at(34)), Some(file(0, 35, 40)));
        assert_eq!(anything_after(&l, Txid::new(20)).map(Txid::get), Some(40));
        assert_eq!(anything_after(&l, Txid::new(40)), None);
    }
}
