//! Writes one LTX file, page by page, to any `Write`: header first, then a
//! block-encoded frame per page, then the end marker, page index and
//! trailer. It computes the file checksum and the page index as it goes and
//! enforces the format's rules on page order. It never computes database
//! checksums (the caller passes them, or sets the no-checksum flag as
//! Litestream does) and never seeks.
//!
//! A replica meant for `litestream restore` (0.5.17) must set the
//! no-checksum flag: Litestream's restore re-encodes the files it reads
//! without checksums and then refuses a copied post-apply checksum.

use std::io::Write;

use crate::checksum::{Crc64, CHECKSUM_FLAG};
use crate::error::{Error, Result};
use crate::frame::encode_frame;
use crate::header::{next_snapshot_pgno, Header, PageHeader, Trailer};
use crate::index::{IndexEntry, PageIndex};

pub struct Encoder<W: Write> {
    w: W,
    header: Header,
    crc: Crc64,
    index: Vec<IndexEntry>,
    /// Bytes written so far: the offset of the next frame.
    offset: u64,
    frame: Vec<u8>,
    scratch: Vec<u8>,
}

/// What a finished encoder hands back.
#[derive(Debug)]
pub struct Encoded<W> {
    pub writer: W,
    pub header: Header,
    pub trailer: Trailer,
    pub index: PageIndex,
    /// The file's length in bytes.
    pub size: u64,
}

impl<W: Write> Encoder<W> {
    /// Validates `header` and writes it.
    pub fn new(mut w: W, header: Header) -> Result<Self> {
        header.validate().map_err(Error::Usage)?;
        let bytes = header.encode();
        w.write_all(&bytes)?;
        let mut crc = Crc64::new();
        crc.update(&bytes);
        Ok(Encoder {
            w,
            header,
            crc,
            index: Vec::new(),
            offset: bytes.len() as u64,
            frame: Vec::new(),
            scratch: Vec::new(),
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Appends one page. Pages come in ascending order, within the commit
    /// size, never the lock page; a snapshot holds every page from 1.
    pub fn encode_page(&mut self, pgno: u32, data: &[u8]) -> Result<()> {
        let h = &self.header;
        if data.len() != h.page_size as usize {
            return Err(Error::usage(format!(
                "page {pgno} is {} bytes, the page size is {}",
                data.len(),
                h.page_size
            )));
        }
        if pgno == 0 || pgno > h.commit {
            return Err(Error::usage(format!(
                "page {pgno} is outside the commit size {}",
                h.commit
            )));
        }
        if pgno == h.lock_pgno() {
            return Err(Error::usage(format!("page {pgno} is the lock page")));
        }
        let prev = self.index.last().map_or(0, |e| e.pgno);
        if h.is_snapshot() && u64::from(pgno) != next_snapshot_pgno(prev, h.lock_pgno()) {
            return Err(Error::usage(format!(
                "a snapshot needs every page in order: page {pgno} after {prev}"
            )));
        }
        if pgno <= prev {
            return Err(Error::usage(format!("page {pgno} after page {prev}")));
        }

        self.frame.clear();
        let frame = encode_frame(pgno, data, &mut self.frame, &mut self.scratch)?;
        self.w.write_all(&self.frame)?;
        frame.hash(&mut self.crc, data);
        self.index.push(IndexEntry {
            pgno,
            offset: self.offset,
            size: frame.len as u64,
        });
        self.offset += frame.len as u64;
        Ok(())
    }

    /// Writes the end marker, page index and trailer. `post_apply_checksum`
    /// is the database checksum after this file is applied, or zero when the
    /// header says checksums are not tracked.
    pub fn finish(mut self, post_apply_checksum: u64) -> Result<Encoded<W>> {
        let h = self.header;
        if h.is_snapshot() && h.commit > 0 {
            let last = self.index.last().map_or(0, |e| e.pgno);
            if next_snapshot_pgno(last, h.lock_pgno()) <= u64::from(h.commit) {
                return Err(Error::usage(format!(
                    "a snapshot of {} pages ends at page {last}",
                    h.commit
                )));
            }
        }
        let mut tail = PageHeader::default().encode().to_vec();
        let index = PageIndex {
            entries: std::mem::take(&mut self.index),
        };
        tail.extend(index.encode());
        tail.extend_from_slice(&post_apply_checksum.to_be_bytes());
        self.crc.update(&tail);
        let trailer = Trailer {
            post_apply_checksum,
            file_checksum: CHECKSUM_FLAG | self.crc.value(),
        };
        trailer.validate(&h).map_err(Error::Usage)?;
        tail.extend_from_slice(&trailer.file_checksum.to_be_bytes());
        self.w.write_all(&tail)?;
        self.w.flush()?;
        Ok(Encoded {
            writer: self.w,
            header: h,
            trailer,
            index,
            size: self.offset + tail.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::HEADER_FLAG_NO_CHECKSUM;

    #[test]
    fn a_snapshot_steps_over_the_lock_page() {
        let page_size = 4096;
        let lock = crate::header::lock_pgno(page_size);
        let h = Header {
            flags: HEADER_FLAG_NO_CHECKSUM,
            page_size,
            commit: lock + 1,
            ..Header::default()
        };
        let mut enc = Encoder::new(std::io::sink(), h).unwrap();
        // Writing the gigabyte below the lock page takes too long for a
        // unit test; pretend it is written.
        enc.index.push(IndexEntry {
            pgno: lock - 1,
            offset: 100,
            size: 10,
        });
        let page = vec![0u8; page_size as usize];
        assert!(enc.encode_page(lock, &page).is_err());
        enc.encode_page(lock + 1, &page).unwrap();
        enc.finish(0).unwrap();
    }
}
