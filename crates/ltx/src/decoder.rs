//! Reads LTX files back, verifying them. Two ways in:
//!
//! - [`Decoder`] streams one file from any `Read`, page by page, and checks
//!   the file checksum, the page index and (for a snapshot that tracks them)
//!   the post-apply database checksum at the end.
//! - [`decode_frames`] decodes any run of frames from bytes in memory (a
//!   whole file or a ranged read), guided by the page index from the file's
//!   tail, and returns the CRC of its share of the file, so several threads
//!   can decode one file and [`file_checksum`] joins their CRCs.
//!
//! It never writes pages anywhere: callers get each page and place it.

use std::io::Read;

use crate::checksum::{Crc64, DatabaseChecksum, CHECKSUM_FLAG};
use crate::error::{Error, Result};
use crate::frame::{decode_frame, read_frame};
use crate::header::{Header, Trailer, HEADER_SIZE, PAGE_HEADER_SIZE};
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
        if pgno <= prev || pgno > self.header.commit {
            return Err(Error::format(format!(
                "page {pgno} after page {prev} in a file of {} pages",
                self.header.commit
            )));
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
        let mut rest = vec![0u8; PAGE_HEADER_SIZE];
        self.r.read_to_end(&mut rest)?;
        let file_size = self.offset + rest.len() as u64;
        let tail = decode_tail(&rest, file_size)?;
        if tail.index.entries != self.seen {
            return Err(Error::format("page index does not match the pages"));
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
            .filter(|&s| s as u64 + e.size <= buf.len() as u64)
            .ok_or_else(|| Error::usage(format!("page {} frame is not in the buffer", e.pgno)))?;
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
    let mut crc = Crc64::new();
    crc.update(&header[..HEADER_SIZE]);
    for part in frames {
        crc.append(part);
    }
    crc.append(&tail.crc);
    let h = Header::decode(header)?;
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
