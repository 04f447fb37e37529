//! One page frame: page header, then the page compressed. Two encodings are
//! read — an LZ4 block behind a u32 size (flag `0x1`, what ltx 0.5.2 and we
//! write) and a whole LZ4 frame (flag `0`, Litestream 0.5.0 to 0.5.15) — and
//! only the first is written. Decoding works from a slice (restore holds whole
//! files or ranges in memory) or from a reader (the streaming decoder).
//!
//! It never hashes whole files or checks page order; the decoder and encoder
//! do that.

use std::io::Read;

use crate::checksum::Crc64;
use crate::error::{Error, Result};
use crate::header::{be_u32, PageHeader, PAGE_FLAG_SIZE, PAGE_HEADER_SIZE};

/// The magic number that opens an LZ4 frame (little-endian on disk).
const LZ4_FRAME_MAGIC: u32 = 0x184D_2204;

/// The most bytes one page of `page_len` bytes can take compressed: LZ4's
/// worst case for incompressible input. A size prefix or an LZ4 frame block
/// claiming more is corruption, and is refused before anything is read or
/// allocated for it (a prefix claiming 4 GiB must not cost 4 GiB).
pub(crate) fn max_compressed_size(page_len: usize) -> usize {
    lz4_flex::block::get_maximum_output_size(page_len)
}

/// A decoded page frame's framing (its page went into the caller's buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub header: PageHeader,
    /// The size prefix of a block-encoded frame; `None` for an LZ4 frame.
    pub block_size: Option<u32>,
    /// Bytes the frame takes in the file, page header included.
    pub len: usize,
}

impl Frame {
    /// Feeds the file checksum what it covers of this frame: the page
    /// header, the size prefix if any, and the page decompressed.
    pub fn hash(&self, crc: &mut Crc64, page: &[u8]) {
        crc.update(&self.header.encode());
        if let Some(n) = self.block_size {
            crc.update(&n.to_be_bytes());
        }
        crc.update(page);
    }
}

/// Appends one block-encoded frame for `page` to `out` and returns what it
/// hashes as. `scratch` is reused across calls to avoid an allocation per page.
pub fn encode_frame(
    pgno: u32,
    page: &[u8],
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> Result<Frame> {
    scratch.resize(lz4_flex::block::get_maximum_output_size(page.len()), 0);
    let n = lz4_flex::block::compress_into(page, scratch)
        .map_err(|e| Error::usage(format!("lz4 compression failed: {e}")))?;
    let header = PageHeader {
        pgno,
        flags: PAGE_FLAG_SIZE,
    };
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(&(n as u32).to_be_bytes());
    out.extend_from_slice(&scratch[..n]);
    Ok(Frame {
        header,
        block_size: Some(n as u32),
        len: PAGE_HEADER_SIZE + 4 + n,
    })
}

/// Decodes the frame at the start of `buf` into `page` (exactly one page
/// long). Returns `None` for the all-zero header that ends the pages; `buf`
/// may run past the frame.
pub fn decode_frame(buf: &[u8], page: &mut [u8]) -> Result<Option<Frame>> {
    let header = page_header(buf)?;
    if header.is_end() {
        return Ok(None);
    }
    check_page_header(&header)?;
    if header.flags & PAGE_FLAG_SIZE != 0 {
        let rest = &buf[PAGE_HEADER_SIZE..];
        if rest.len() < 4 {
            return Err(Error::format(format!(
                "page {} frame cut short before its size prefix",
                header.pgno
            )));
        }
        let n = be_u32(rest) as usize;
        check_block_size(header.pgno, n, page.len())?;
        let block = rest.get(4..4 + n).ok_or_else(|| {
            Error::format(format!(
                "page {} frame cut short: its block of {n} bytes runs past the {} bytes there",
                header.pgno,
                rest.len() - 4
            ))
        })?;
        decompress_block(header.pgno, block, page)?;
        Ok(Some(Frame {
            header,
            block_size: Some(n as u32),
            len: PAGE_HEADER_SIZE + 4 + n,
        }))
    } else {
        let mut rest = &buf[PAGE_HEADER_SIZE..];
        let before = rest.len();
        read_lz4_frame(&mut rest, header.pgno, page, &mut Vec::new())?;
        Ok(Some(Frame {
            header,
            block_size: None,
            len: PAGE_HEADER_SIZE + before - rest.len(),
        }))
    }
}

/// Reads the next frame from `r` into `page`, like [`decode_frame`].
pub fn read_frame<R: Read>(
    r: &mut R,
    page: &mut [u8],
    scratch: &mut Vec<u8>,
) -> Result<Option<Frame>> {
    let mut hb = [0u8; PAGE_HEADER_SIZE];
    r.read_exact(&mut hb)?;
    let header = PageHeader::decode(&hb);
    if header.is_end() {
        return Ok(None);
    }
    check_page_header(&header)?;
    if header.flags & PAGE_FLAG_SIZE != 0 {
        let mut nb = [0u8; 4];
        r.read_exact(&mut nb)?;
        let n = u32::from_be_bytes(nb) as usize;
        check_block_size(header.pgno, n, page.len())?;
        scratch.resize(n, 0);
        r.read_exact(scratch)?;
        decompress_block(header.pgno, scratch, page)?;
        Ok(Some(Frame {
            header,
            block_size: Some(n as u32),
            len: PAGE_HEADER_SIZE + 4 + n,
        }))
    } else {
        let n = read_lz4_frame(r, header.pgno, page, scratch)?;
        Ok(Some(Frame {
            header,
            block_size: None,
            len: PAGE_HEADER_SIZE + n,
        }))
    }
}

fn page_header(buf: &[u8]) -> Result<PageHeader> {
    let hb: &[u8; PAGE_HEADER_SIZE] = buf
        .get(..PAGE_HEADER_SIZE)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| Error::format("page header cut short"))?;
    Ok(PageHeader::decode(hb))
}

fn check_page_header(h: &PageHeader) -> Result<()> {
    if h.pgno == 0 {
        return Err(Error::format("page number zero"));
    }
    if h.flags & !PAGE_FLAG_SIZE != 0 {
        return Err(Error::format(format!(
            "page {} has unknown flags 0x{:04x}",
            h.pgno, h.flags
        )));
    }
    Ok(())
}

fn check_block_size(pgno: u32, n: usize, page_len: usize) -> Result<()> {
    let max = max_compressed_size(page_len);
    if n == 0 || n > max {
        return Err(Error::format(format!(
            "page {pgno}: size prefix says {n} bytes, a page of {page_len} compresses to 1..={max}"
        )));
    }
    Ok(())
}

fn decompress_block(pgno: u32, block: &[u8], page: &mut [u8]) -> Result<()> {
    let n = lz4_flex::block::decompress_into(block, page)
        .map_err(|e| Error::format(format!("page {pgno}: lz4 block: {e}")))?;
    if n != page.len() {
        return Err(Error::format(format!(
            "page {pgno} decompressed to {n} bytes, not {}",
            page.len()
        )));
    }
    Ok(())
}

/// Reads one LZ4 frame (as pierrec/lz4 writes it) holding exactly one page,
/// and returns how many bytes it took. Parsed by hand because a frame
/// reader would look past the frame's end for a next frame, into the next
/// page header.
fn read_lz4_frame<R: Read>(
    r: &mut R,
    pgno: u32,
    page: &mut [u8],
    scratch: &mut Vec<u8>,
) -> Result<usize> {
    let bad = |what: &str| Error::format(format!("page {pgno}: lz4 frame: {what}"));
    let mut d = [0u8; 6];
    r.read_exact(&mut d)?;
    if u32::from_le_bytes([d[0], d[1], d[2], d[3]]) != LZ4_FRAME_MAGIC {
        return Err(bad("bad magic"));
    }
    let flg = d[4];
    if flg >> 6 != 1 {
        return Err(bad("unknown version"));
    }
    let independent = flg & 0x20 != 0;
    let block_checksum = flg & 0x10 != 0;
    let content_size = flg & 0x08 != 0;
    let content_checksum = flg & 0x04 != 0;
    let dict_id = flg & 0x01 != 0;
    // Optional content size and dictionary id, then the header checksum byte.
    let extra = 8 * usize::from(content_size) + 4 * usize::from(dict_id) + 1;
    skip(r, extra)?;
    let mut used = 6 + extra;

    let mut filled = 0usize;
    loop {
        let mut sb = [0u8; 4];
        r.read_exact(&mut sb)?;
        used += 4;
        let word = u32::from_le_bytes(sb);
        if word == 0 {
            break;
        }
        let stored = word & 0x8000_0000 != 0;
        let n = (word & 0x7fff_ffff) as usize;
        // A stored block is raw page bytes; a compressed one at most LZ4's
        // worst case for what is left of the page.
        let room = page.len() - filled;
        let max = if stored {
            room
        } else {
            max_compressed_size(room)
        };
        if n > max {
            return Err(bad(&format!(
                "a block of {n} bytes where at most {max} can follow"
            )));
        }
        scratch.resize(n, 0);
        r.read_exact(scratch)?;
        used += n;
        let (done, out) = page.split_at_mut(filled);
        let written = if stored {
            let dst = out
                .get_mut(..n)
                .ok_or_else(|| bad("more data than a page"))?;
            dst.copy_from_slice(scratch);
            n
        } else if independent || filled == 0 {
            lz4_flex::block::decompress_into(scratch, out)
                .map_err(|e| bad(&format!("block: {e}")))?
        } else {
            // Linked blocks may refer back into what was already decoded.
            lz4_flex::block::decompress_into_with_dict(scratch, out, done)
                .map_err(|e| bad(&format!("block: {e}")))?
        };
        filled += written;
        if block_checksum {
            skip(r, 4)?;
            used += 4;
        }
    }
    if content_checksum {
        // The file checksum covers the page; the frame's own xxHash adds
        // nothing to what is verified.
        skip(r, 4)?;
        used += 4;
    }
    if filled != page.len() {
        return Err(bad(&format!(
            "{filled} bytes, not a page of {}",
            page.len()
        )));
    }
    Ok(used)
}

fn skip<R: Read>(r: &mut R, n: usize) -> Result<()> {
    let mut b = [0u8; 16];
    r.read_exact(&mut b[..n])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn page(seed: u8) -> Vec<u8> {
        (0..4096u32)
            .map(|i| (i as u8).wrapping_mul(seed) ^ (i / 300) as u8)
            .collect()
    }

    /// A flag-0 frame as Litestream 0.5.0-0.5.15 wrote it: page header, then
    /// an LZ4 frame with a content checksum.
    fn lz4_frame_encoded(pgno: u32, data: &[u8]) -> Vec<u8> {
        let mut out = PageHeader { pgno, flags: 0 }.encode().to_vec();
        let info = lz4_flex::frame::FrameInfo::new().content_checksum(true);
        let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, &mut out);
        enc.write_all(data).unwrap();
        enc.finish().unwrap();
        out
    }

    #[test]
    fn block_frames_round_trip_from_a_slice_and_a_reader() {
        let data = page(3);
        let mut out = Vec::new();
        let written = encode_frame(7, &data, &mut out, &mut Vec::new()).unwrap();
        assert_eq!(written.len, out.len());
        out.extend_from_slice(&[0u8; 6]);

        let mut back = vec![0u8; 4096];
        let f = decode_frame(&out, &mut back).unwrap().unwrap();
        assert_eq!(f, written);
        assert_eq!(back, data);
        assert_eq!(decode_frame(&out[f.len..], &mut back).unwrap(), None);

        let mut r = &out[..];
        let mut back2 = vec![0u8; 4096];
        let f2 = read_frame(&mut r, &mut back2, &mut Vec::new())
            .unwrap()
            .unwrap();
        assert_eq!(f2, written);
        assert_eq!(back2, data);
        assert_eq!(r.len(), 6, "the reader stops at the end of the frame");
    }

    #[test]
    fn lz4_frame_pages_decode_and_stop_at_the_frame_end() {
        let a = page(5);
        let b = vec![0u8; 4096];
        let mut file = lz4_frame_encoded(1, &a);
        let first_len = file.len();
        file.extend(lz4_frame_encoded(2, &b));
        file.extend_from_slice(&[0u8; 6]);

        let mut back = vec![0u8; 4096];
        let f = decode_frame(&file, &mut back).unwrap().unwrap();
        assert_eq!((f.header.pgno, f.block_size, f.len), (1, None, first_len));
        assert_eq!(back, a);

        let mut r = &file[..];
        let mut scratch = Vec::new();
        assert_eq!(
            read_frame(&mut r, &mut back, &mut scratch)
                .unwrap()
                .unwrap()
                .header
                .pgno,
            1
        );
        assert_eq!(back, a);
        assert_eq!(
            read_frame(&mut r, &mut back, &mut scratch)
                .unwrap()
                .unwrap()
                .header
                .pgno,
            2
        );
        assert_eq!(back, b);
        assert_eq!(read_frame(&mut r, &mut back, &mut scratch).unwrap(), None);
    }

    #[test]
    fn corrupt_or_short_frames_are_errors_not_panics() {
        let data = page(9);
        let mut out = Vec::new();
        encode_frame(1, &data, &mut out, &mut Vec::new()).unwrap();
        let mut back = vec![0u8; 4096];
        for cut in [3, 8, 12, out.len() - 1] {
            assert!(decode_frame(&out[..cut], &mut back).is_err(), "cut {cut}");
        }
        let mut garbled = out.clone();
        for b in garbled[10..].iter_mut() {
            *b = 0xff;
        }
        assert!(decode_frame(&garbled, &mut back).is_err());
        let mut small = vec![0u8; 2048];
        assert!(
            decode_frame(&out, &mut small).is_err(),
            "a page of the wrong size"
        );
        let mut flagged = out.clone();
        flagged[5] = 0x4;
        assert!(decode_frame(&flagged, &mut back).is_err());
    }
}
