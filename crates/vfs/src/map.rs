//! `PageMap`: which pages of a database file are local, in memory and in a
//! small file beside the database that survives a crash.
//!
//! The file is replaced whole (written to a temporary name, synced,
//! renamed), so after a crash it holds either the previous map or the new
//! one, never a mix. It records a page only once the database file's
//! bytes for it were synced (see `Paged::save`), so a page the map calls
//! local is never half written. It never reads or writes the database.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"OFLPAGE1";
/// magic, page size u32, page count u32, tag length u32.
const FIXED: usize = 8 + 4 + 4 + 4;

/// A set of pages, 1-based, as bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageBits {
    words: Vec<u64>,
    pages: u32,
    set: u32,
}

impl PageBits {
    pub fn new(pages: u32) -> PageBits {
        PageBits {
            words: vec![0; (pages as usize).div_ceil(64)],
            pages,
            set: 0,
        }
    }

    pub fn pages(&self) -> u32 {
        self.pages
    }

    /// Pages in the set.
    pub fn count(&self) -> u32 {
        self.set
    }

    pub fn is_full(&self) -> bool {
        self.set == self.pages
    }

    /// Whether `pgno` is in the set; pages past the end always are (they
    /// hold nothing to fetch).
    pub fn contains(&self, pgno: u32) -> bool {
        if pgno == 0 || pgno > self.pages {
            return true;
        }
        let i = (pgno - 1) as usize;
        self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// Adds `pgno`; false when it was in the set already or is past the end.
    pub fn insert(&mut self, pgno: u32) -> bool {
        if self.contains(pgno) {
            return false;
        }
        let i = (pgno - 1) as usize;
        self.words[i / 64] |= 1 << (i % 64);
        self.set += 1;
        true
    }

    /// The first page at or after `from` not in the set.
    pub fn next_missing(&self, from: u32) -> Option<u32> {
        let mut pgno = from.max(1);
        while pgno <= self.pages {
            let i = (pgno - 1) as usize;
            let word = self.words[i / 64] | ((1u64 << (i % 64)) - 1);
            if word != u64::MAX {
                let found = (i / 64 * 64) as u32 + word.trailing_ones() + 1;
                return (found <= self.pages).then_some(found);
            }
            pgno = ((i / 64 + 1) * 64) as u32 + 1;
        }
        None
    }

    fn to_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn from_bytes(pages: u32, bytes: &[u8]) -> Option<PageBits> {
        let n = (pages as usize).div_ceil(64);
        if bytes.len() != n * 8 {
            return None;
        }
        let words: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        let mut bits = PageBits {
            words,
            pages,
            set: 0,
        };
        // Bits past the last page mean a damaged file.
        if !pages.is_multiple_of(64) && bits.words[n - 1] >> (pages % 64) != 0 {
            return None;
        }
        bits.set = bits.words.iter().map(|w| w.count_ones()).sum();
        Some(bits)
    }
}

/// What a map file holds: the database's shape, the caller's tag (which
/// source the missing pages come from) and the local pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapRecord {
    pub page_size: u32,
    pub tag: Vec<u8>,
    pub local: PageBits,
}

/// The map file beside `db`: `<db>-paged`.
pub fn map_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push("-paged");
    PathBuf::from(p)
}

/// Reads a map file; `None` when there is none. A damaged file is an
/// error: the database beside it cannot be trusted.
pub fn read_map(path: &Path) -> io::Result<Option<MapRecord>> {
    let b = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is damaged", path.display()),
        )
    };
    if b.len() < FIXED || &b[..8] != MAGIC {
        return Err(bad());
    }
    let be32 = |at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let (page_size, pages, tag_len) = (be32(8), be32(12), be32(16) as usize);
    let tag_end = FIXED
        .checked_add(tag_len)
        .filter(|&e| e <= b.len())
        .ok_or_else(bad)?;
    let local = PageBits::from_bytes(pages, &b[tag_end..]).ok_or_else(bad)?;
    Ok(Some(MapRecord {
        page_size,
        tag: b[FIXED..tag_end].to_vec(),
        local,
    }))
}

/// Replaces the map file with `record`, durably.
pub fn write_map(path: &Path, record: &MapRecord) -> io::Result<()> {
    let mut b = Vec::with_capacity(FIXED + record.tag.len() + record.local.words.len() * 8);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&record.page_size.to_be_bytes());
    b.extend_from_slice(&record.local.pages.to_be_bytes());
    b.extend_from_slice(&(record.tag.len() as u32).to_be_bytes());
    b.extend_from_slice(&record.tag);
    b.extend_from_slice(&record.local.to_bytes());
    offloop_file::replace_file(path, &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_count_insert_and_find_the_next_missing_page() {
        let mut bits = PageBits::new(130);
        assert_eq!(bits.next_missing(1), Some(1));
        for p in 1..=70 {
            assert!(bits.insert(p));
        }
        assert!(!bits.insert(70), "a page is added once");
        assert!(!bits.insert(131), "pages past the end are never missing");
        assert!(bits.contains(500));
        assert_eq!(bits.count(), 70);
        assert_eq!(bits.next_missing(1), Some(71));
        bits.insert(72);
        assert_eq!(bits.next_missing(72), Some(73));
        for p in 71..=130 {
            bits.insert(p);
        }
        assert!(bits.is_full());
        assert_eq!(bits.next_missing(1), None);
    }

    #[test]
    fn a_map_file_reads_back_what_was_written_and_a_damaged_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = map_path(&dir.path().join("app.db"));
        assert_eq!(read_map(&path).unwrap(), None);
        let mut local = PageBits::new(1000);
        for p in [1, 2, 3, 64, 65, 999, 1000] {
            local.insert(p);
        }
        let record = MapRecord {
            page_size: 4096,
            tag: b"txid 42".to_vec(),
            local,
        };
        write_map(&path, &record).unwrap();
        assert_eq!(read_map(&path).unwrap(), Some(record));
        let mut b = fs::read(&path).unwrap();
        b.truncate(b.len() - 1);
        fs::write(&path, &b).unwrap();
        assert!(read_map(&path).is_err());
    }
}
