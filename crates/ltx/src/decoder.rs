//! Reads LTX files back, verifying them. Two ways in:
//!
//! - [`Decoder`] streams one file from any `Read`, page by page, and checks
//!   the file checksum, the page index and (for a snapshot that tracks them)
//!   the post-apply database checksum at the end.
//! - [`decode_frames`] decodes any run of frames from bytes in memory (a
//!   whole file or a ranged read), guided by the page index from the file's
//!   tail, and returns the CRC of its share of the file, so several threads
//!   can decode one file and [`verify_file_checksum`] joins their CRCs.
//!   [`check_tail`] first holds the index to the header, so that no frame
//!   outside the file or the commit size is ever asked for.
//!
//! It never writes pages anywhere: callers get each page and place it.

use std::io::Read;

use crate::checksum::{Crc64, DatabaseChecksum, CHECKSUM_FLAG};
use crate::error::{Error, Result};
use crate::frame::{decode_frame, read_frame};
use crate::header::{
    next_snapshot_pgno, Header, Trailer, HEADER_SIZE, PAGE_HEADER_SIZE, TRAILER_SIZE,
};
use crate::index::{decode_tail, IndexEntry, PageIndex, Tail};

pub struct Decoder<R: Read> {
    r: R,
    header: Header,
    crc: Crc64,
    db_checksum: DatabaseChecksum,
    /// Where each frame read so far was, to hold the page index to it.
    seen: Vec<IndexEntry>,
    offset: u64,
    ended: bool,
    scratch: Vec<u8>,
}

/// What the end of a verified file holds.
#[derive(Debug)]
pub struct Decoded {
    pub header: Header,
    pub trailer: Trailer,
    pub index: PageIndex,
}

impl<R: Read> Decoder<R> {
    /// Reads and validates the header.
    pub fn new(mut r: R) -> Result<Self> {
        let mut b = [0u8; HEADER_SIZE];
        r.read_exact(&mut b)?;
        let header = Header::decode(&b)?;
        let mut crc = Crc64::new();
        crc.update(&b);
        Ok(Decoder {
            r,
            header,
            crc,
            db_checksum: DatabaseChecksum::new(),
            seen: Vec::new(),
            offset: HEADER_SIZE as u64,
            ended: false,
            scratch: Vec::new(),
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Decodes the next page into `page` (one page long) and returns its
    /// number, or `None` after the last page.
    pub fn next_page(&mut self, page: &mut [u8]) -> Result<Option<u32>> {
        if self.ended {
            return Ok(None);
        }
        if page.len() != self.header.page_size as usize {
            return Err(Error::usage("page buffer is not one page long"));
        }
        let Some(frame) = read_frame(&mut self.r, page, &mut self.scratch)? else {
            self.crc.update(&[0u8; PAGE_HEADER_SIZE]);
            self.ended = true;
            return Ok(None);
        };
        let pgno = frame.header.pgno;
        let prev = self.seen.last().map_or(0, |e| e.pgno);
        if let Some(fault) = page_order_fault(&self.header, prev, pgno) {
            return Err(Error::Format(fault));
        }
        frame.hash(&mut self.crc, page);
        if self.header.is_snapshot() && pgno != self.header.lock_pgno() {
            self.db_checksum.toggle_page(pgno, page);
        }
        self.seen.push(IndexEntry {
            pgno,
            offset: self.offset,
            size: frame.len as u64,
        });
        self.offset += frame.len as u64;
        Ok(Some(pgno))
    }

    /// Reads the rest of the file and verifies it: the page index must
    /// describe the frames read, the file checksum must match, and a
    /// snapshot that tracks checksums must sum to its post-apply checksum.
    /// Pages not yet read are read (and dropped) first.
    pub fn finish(mut self) -> Result<Decoded> {
        let mut page = vec![0u8; self.header.page_size as usize];
        while self.next_page(&mut page)?.is_some() {}
        let last = self.seen.last().map_or(0, |e| e.pgno);
        if let Some(fault) = last_page_fault(&self.header, last) {
            return Err(Error::Format(fault));
        }
        // The rest is the index of the pages read, its length and the
        // trailer: read no more than that (and one byte to see whether
        // anything follows), whatever the reader holds.
        let expected = PageIndex::encoded_len(&self.seen) + TRAILER_SIZE;
        let mut rest = vec![0u8; PAGE_HEADER_SIZE];
        (&mut self.r)
            .take(expected as u64 + 1)
            .read_to_end(&mut rest)?;
        if rest.len() > PAGE_HEADER_SIZE + expected {
            return Err(Error::format(format!(
                "bytes follow where the index of {} pages and the trailer should end the file",
                self.seen.len()
            )));
        }
        let file_size = self.offset + rest.len() as u64;
        let tail = decode_tail(&rest, file_size)?;
        if tail.pages_end != self.offset {
            return Err(Error::format(format!(
                "the page index says the pages end at {}, they end at {}",
                tail.pages_end, self.offset
            )));
        }
        if tail.index.entries != self.seen {
            return Err(Error::format(
                "the page index does not describe the frames before it",
            ));
        }
        self.crc.update(&rest[PAGE_HEADER_SIZE..rest.len() - 8]);
        verify_trailer(&self.header, &tail.trailer, self.crc.value())?;
        if self.header.is_snapshot()
            && self.header.has_checksums()
            && tail.trailer.post_apply_checksum != self.db_checksum.value()
        {
            return Err(Error::format(format!(
                "snapshot pages sum to {:016x}, the trailer says {:016x}",
                self.db_checksum.value(),
                tail.trailer.post_apply_checksum
            )));
        }
        Ok(Decoded {
            header: self.header,
            trailer: tail.trailer,
            index: tail.index,
        })
    }
}

/// A whole file decoded in memory (for small files and tests).
#[derive(Debug)]
pub struct DecodedFile {
    pub header: Header,
    pub trailer: Trailer,
    pub pages: Vec<(u32, Vec<u8>)>,
}

/// Decodes and verifies a whole file held in memory.
pub fn decode_file(bytes: &[u8]) -> Result<DecodedFile> {
    let mut dec = Decoder::new(bytes)?;
    let mut pages = Vec::new();
    let mut page = vec![0u8; dec.header().page_size as usize];
    while let Some(pgno) = dec.next_page(&mut page)? {
        pages.push((pgno, page.clone()));
    }
    let done = dec.finish()?;
    Ok(DecodedFile {
        header: done.header,
        trailer: done.trailer,
        pages,
    })
}

/// What is wrong with page `pgno` coming after `prev` (0 for the first
/// page), if anything: pages ascend, stay within the commit size, are never
/// the lock page, and in a snapshot each is the very next page.
fn page_order_fault(header: &Header, prev: u32, pgno: u32) -> Option<String> {
    let lock = header.lock_pgno();
    if pgno <= prev {
        Some(format!("page {pgno} after page {prev}"))
    } else if pgno > header.commit {
        Some(format!(
            "page {pgno} is beyond the commit size of {} pages",
            header.commit
        ))
    } else if pgno == lock {
        Some(format!("page {pgno} is the lock page"))
    } else if header.is_snapshot() && u64::from(pgno) != next_snapshot_pgno(prev, lock) {
        Some(format!("a snapshot skips from page {prev} to page {pgno}"))
    } else {
        None
    }
}

/// What is wrong with a file whose last page is `last`: a snapshot's pages
/// must reach its commit size.
fn last_page_fault(header: &Header, last: u32) -> Option<String> {
    let short = next_snapshot_pgno(last, header.lock_pgno()) <= u64::from(header.commit);
    (header.is_snapshot() && short)
        .then(|| format!("a snapshot of {} pages ends at page {last}", header.commit))
}

/// Checks a tail against its file's header before any page is fetched: the
/// index names only pages within the commit size, never the lock page,
/// every page for a snapshot, and frames laid end to end (see
/// [`check_layout`]). What passes may still hold damaged frames; decoding
/// them and the file checksum find those.
pub fn check_tail(header: &Header, tail: &Tail) -> Result<()> {
    let mut prev = 0;
    for e in &tail.index.entries {
        if let Some(fault) = page_order_fault(header, prev, e.pgno) {
            return Err(Error::format(format!("page index: {fault}")));
        }
        prev = e.pgno;
    }
    if let Some(fault) = last_page_fault(header, prev) {
        return Err(Error::format(format!("page index: {fault}")));
    }
    check_layout(tail)
}

/// Checks that the index describes frames laid end to end from the header
/// to the end marker, in page order, so that decoding every indexed frame
/// covers exactly the bytes the file checksum covers.
pub fn check_layout(tail: &Tail) -> Result<()> {
    let mut next = HEADER_SIZE as u64;
    for e in &tail.index.entries {
        if e.offset != next {
            return Err(Error::format(format!(
                "page {} frame at {}, expected at {next}",
                e.pgno, e.offset
            )));
        }
        next += e.size;
    }
    if next != tail.pages_end {
        return Err(Error::format(
            "page index does not reach the end of the pages",
        ));
    }
    Ok(())
}

/// Decodes the frames of `entries` (consecutive index entries) from `buf`,
/// whose first byte is file offset `base`, and hands each page to `sink`.
/// Returns the CRC of these frames' share of the file checksum.
pub fn decode_frames(
    buf: &[u8],
    base: u64,
    page_size: u32,
    entries: &[IndexEntry],
    mut sink: impl FnMut(u32, &[u8]) -> Result<()>,
) -> Result<Crc64> {
    let mut crc = Crc64::new();
    let mut page = vec![0u8; page_size as usize];
    for e in entries {
        let start = e
            .offset
            .checked_sub(base)
            .and_then(|s| usize::try_from(s).ok())
            .filter(|&s| {
                (s as u64)
                    .checked_add(e.size)
                    .is_some_and(|end| end <= buf.len() as u64)
            })
            .ok_or_else(|| {
                Error::format(format!(
                    "page {} frame at {}..+{} is not in the {} bytes read from {base}",
                    e.pgno,
                    e.offset,
                    e.size,
                    buf.len()
                ))
            })?;
        let frame_bytes = &buf[start..start + e.size as usize];
        let frame = decode_frame(frame_bytes, &mut page)?
            .ok_or_else(|| Error::format(format!("page {} indexed at the end marker", e.pgno)))?;
        if frame.header.pgno != e.pgno || frame.len as u64 != e.size {
            return Err(Error::format(format!(
                "index entry for page {} does not match the frame at {}",
                e.pgno, e.offset
            )));
        }
        frame.hash(&mut crc, &page);
        sink(e.pgno, &page)?;
    }
    Ok(crc)
}

/// Joins the CRCs of a file's parts (its header bytes, its frames in file
/// order, its tail) and checks the result against the trailer.
pub fn verify_file_checksum(header: &[u8], frames: &[Crc64], tail: &Tail) -> Result<()> {
    let h = Header::decode(header)?;
    let mut crc = Crc64::new();
    crc.update(&header[..HEADER_SIZE]);
    for part in frames {
        crc.append(part);
    }
    crc.append(&tail.crc);
    verify_trailer(&h, &tail.trailer, crc.value())
}

fn verify_trailer(header: &Header, trailer: &Trailer, crc: u64) -> Result<()> {
    trailer.validate(header).map_err(Error::Format)?;
    let computed = CHECKSUM_FLAG | crc;
    if computed != trailer.file_checksum {
        return Err(Error::ChecksumMismatch {
            stored: trailer.file_checksum,
            computed,
        });
    }
    Ok(())
}
