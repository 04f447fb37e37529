//! The page index at the end of an LTX file and the file's tail around it.
//! The index says where each page's frame sits, so a reader holding only the
//! last bytes of a file (one ranged read) knows every page it has and can
//! fetch or decode any single frame.
//!
//! Layout from the end: trailer (16 bytes), a big-endian u64 giving the
//! length of the index entries plus their terminator, the entries (LEB128
//! varints pgno, offset, size per page, sorted by pgno, a zero pgno last),
//! and before them the 6-byte zero page header that ends the pages.
//! Pure parsing: it never reads a file.

use crate::checksum::Crc64;
use crate::error::{Error, Result};
use crate::header::{be_u64, Trailer, HEADER_SIZE, PAGE_HEADER_SIZE, TRAILER_SIZE};

/// How many bytes from the end of a file to fetch first: enough for the
/// whole tail of a file of a few thousand pages in one read.
pub const TAIL_FETCH_SIZE: u64 = 32 * 1024;

/// Bytes after the index entries: the index length and the trailer.
const AFTER_ENTRIES: u64 = 8 + TRAILER_SIZE as u64;
/// The shortest possible tail: end marker, empty index, length, trailer.
pub const MIN_TAIL_SIZE: u64 = PAGE_HEADER_SIZE as u64 + 1 + AFTER_ENTRIES;

/// Where one page's frame is in its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    pub pgno: u32,
    /// Offset of the frame's page header from the start of the file.
    pub offset: u64,
    /// Bytes of the whole frame: page header, size prefix and payload.
    pub size: u64,
}

/// The page index: one entry per page, sorted by page number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageIndex {
    pub entries: Vec<IndexEntry>,
}

impl PageIndex {
    pub fn get(&self, pgno: u32) -> Option<&IndexEntry> {
        self.entries
            .binary_search_by_key(&pgno, |e| e.pgno)
            .ok()
            .map(|i| &self.entries[i])
    }

    /// The entries, terminator and length field, as written to a file.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.entries.len() * 8 + 9);
        for e in &self.entries {
            put_uvarint(&mut out, u64::from(e.pgno));
            put_uvarint(&mut out, e.offset);
            put_uvarint(&mut out, e.size);
        }
        put_uvarint(&mut out, 0);
        let len = out.len() as u64;
        out.extend_from_slice(&len.to_be_bytes());
        out
    }

    /// The bytes [`encode`](Self::encode) writes for `entries`.
    pub(crate) fn encoded_len(entries: &[IndexEntry]) -> usize {
        let entry = |e: &IndexEntry| {
            uvarint_len(u64::from(e.pgno)) + uvarint_len(e.offset) + uvarint_len(e.size)
        };
        entries.iter().map(entry).sum::<usize>() + 1 + 8
    }

    /// Parses index entries up to and including the zero terminator, which
    /// must end `b` exactly.
    fn decode_entries(b: &[u8]) -> Result<PageIndex> {
        let mut pos = 0usize;
        let mut entries = Vec::new();
        loop {
            let pgno = get_uvarint(b, &mut pos)?;
            if pgno == 0 {
                break;
            }
            let pgno = u32::try_from(pgno).map_err(|_| {
                Error::format(format!(
                    "page index names page {pgno}, past any page number"
                ))
            })?;
            let offset = get_uvarint(b, &mut pos)?;
            let size = get_uvarint(b, &mut pos)?;
            if let Some(prev) = entries.last().map(|p: &IndexEntry| p.pgno) {
                if prev >= pgno {
                    return Err(Error::format(format!(
                        "page index out of order: page {pgno} after page {prev}"
                    )));
                }
            }
            entries.push(IndexEntry { pgno, offset, size });
        }
        if pos != b.len() {
            return Err(Error::format(format!(
                "page index length says {} bytes, its entries end after {pos}",
                b.len()
            )));
        }
        Ok(PageIndex { entries })
    }
}

/// The end of a file read on its own: the page index, the trailer, and
/// where the pages end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tail {
    pub index: PageIndex,
    pub trailer: Trailer,
    /// Offset of the zero page header that ends the pages.
    pub pages_end: u64,
    /// The file checksum's running CRC over the tail's share of the file
    /// (end marker, index, length, post-apply checksum), for joining with
    /// the CRC of the header and pages.
    pub crc: Crc64,
}

/// How many bytes at the end of a file of `file_size` bytes make its tail,
/// given at least its last 24 bytes in `last`. A caller that fetched fewer
/// fetches the rest before calling [`decode_tail`].
pub fn tail_size(last: &[u8], file_size: u64) -> Result<u64> {
    if file_size < HEADER_SIZE as u64 + MIN_TAIL_SIZE {
        return Err(Error::format(format!(
            "a file of {file_size} bytes is too short to hold a header, page index and trailer"
        )));
    }
    if (last.len() as u64) < AFTER_ENTRIES {
        return Err(Error::format(format!(
            "need the last {AFTER_ENTRIES} bytes to find the page index, have {}",
            last.len()
        )));
    }
    let len = be_u64(&last[last.len() - AFTER_ENTRIES as usize..]);
    let size = len.checked_add(PAGE_HEADER_SIZE as u64 + AFTER_ENTRIES);
    let Some(size) = size.filter(|&s| len > 0 && s <= file_size - HEADER_SIZE as u64) else {
        return Err(Error::format(format!(
            "page index length {len} does not fit a file of {file_size} bytes"
        )));
    };
    Ok(size)
}

/// Parses the tail from the last bytes of a file of `file_size` bytes;
/// `tail` may hold more than the tail (even the whole file).
pub fn decode_tail(tail: &[u8], file_size: u64) -> Result<Tail> {
    if tail.len() as u64 > file_size {
        return Err(Error::format(format!(
            "{} bytes read from the end of a file of {file_size}",
            tail.len()
        )));
    }
    let size = tail_size(tail, file_size)?;
    if (tail.len() as u64) < size {
        return Err(Error::format(format!(
            "need the last {size} bytes for the page index, have {}",
            tail.len()
        )));
    }
    let t = &tail[tail.len() - size as usize..];
    if t[..PAGE_HEADER_SIZE].iter().any(|&b| b != 0) {
        return Err(Error::format(
            "no end-of-pages marker before the page index",
        ));
    }
    let entries_end = t.len() - AFTER_ENTRIES as usize;
    let index = PageIndex::decode_entries(&t[PAGE_HEADER_SIZE..entries_end])?;
    let trailer = Trailer::decode(&t[t.len() - TRAILER_SIZE..])?;
    let pages_end = file_size - size;
    // Frames lie in page order, each after the one before, between the
    // header and the end marker: anything else points outside the pages or
    // overlaps another frame.
    let mut next = HEADER_SIZE as u64;
    for e in &index.entries {
        let end = e.offset.checked_add(e.size).filter(|&end| end <= pages_end);
        let Some(end) = end.filter(|_| e.offset >= next && e.size > PAGE_HEADER_SIZE as u64) else {
            return Err(Error::format(format!(
                "page index puts page {} at {}..+{}, outside {next}..{pages_end}",
                e.pgno, e.offset, e.size
            )));
        };
        next = end;
    }
    let mut crc = Crc64::new();
    crc.update(&t[..t.len() - 8]);
    Ok(Tail {
        index,
        trailer,
        pages_end,
        crc,
    })
}

fn put_uvarint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn uvarint_len(v: u64) -> usize {
    (64 - v.leading_zeros() as usize).div_ceil(7).max(1)
}

fn get_uvarint(b: &[u8], pos: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b
            .get(*pos)
            .ok_or_else(|| Error::format("page index cut short"))?;
        *pos += 1;
        if shift == 63 && byte > 1 {
            return Err(Error::format("page index varint overflows"));
        }
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(v);
        }
    }
    Err(Error::format("page index varint overflows"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_leb128() {
        for (v, bytes) in [
            (0u64, vec![0u8]),
            (127, vec![0x7f]),
            (128, vec![0x80, 0x01]),
            (300, vec![0xac, 0x02]),
            (
                u64::MAX,
                vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ] {
            let mut out = Vec::new();
            put_uvarint(&mut out, v);
            assert_eq!(out, bytes);
            assert_eq!(uvarint_len(v), out.len());
            let mut pos = 0;
            assert_eq!(get_uvarint(&out, &mut pos).unwrap(), v);
            assert_eq!(pos, out.len());
        }
        let mut pos = 0;
        assert!(get_uvarint(&[0xff; 11], &mut pos).is_err());
    }

    #[test]
    fn a_tail_is_found_from_the_last_bytes_alone() {
        let index = PageIndex {
            entries: vec![
                IndexEntry {
                    pgno: 1,
                    offset: 100,
                    size: 50,
                },
                IndexEntry {
                    pgno: 3,
                    offset: 150,
                    size: 300,
                },
            ],
        };
        let trailer = Trailer {
            post_apply_checksum: 0,
            file_checksum: 1 << 63 | 5,
        };
        // A file of 100 header bytes, 350 page bytes, then the tail.
        let mut file = vec![7u8; 450];
        file.extend_from_slice(&[0u8; 6]);
        file.extend(index.encode());
        file.extend_from_slice(&trailer.encode());
        let size = file.len() as u64;

        assert_eq!(
            tail_size(&file[file.len() - 24..], size).unwrap(),
            size - 450
        );
        let t = decode_tail(&file[file.len() - 30..], size);
        assert!(t.is_err(), "too few bytes is an error, not a guess");
        let t = decode_tail(&file, size).unwrap();
        assert_eq!(t.index, index);
        assert_eq!(t.index.get(3).unwrap().size, 300);
        assert_eq!(t.index.get(2), None);
        assert_eq!(t.trailer, trailer);
        assert_eq!(t.pages_end, 450);
        assert_eq!(t.crc.len(), size - 450 - 8);
    }

    #[test]
    fn a_tail_pointing_outside_the_file_is_refused() {
        let index = PageIndex {
            entries: vec![IndexEntry {
                pgno: 1,
                offset: 100,
                size: 5000,
            }],
        };
        let mut file = vec![0u8; 200];
        file.extend_from_slice(&[0u8; 6]);
        file.extend(index.encode());
        file.extend_from_slice(&[0u8; 16]);
        assert!(decode_tail(&file, file.len() as u64).is_err());
        let mut huge = vec![0u8; 200];
        huge.extend_from_slice(&u64::MAX.to_be_bytes());
        huge.extend_from_slice(&[0u8; 16]);
        assert!(tail_size(&huge, huge.len() as u64).is_err());
    }
}
