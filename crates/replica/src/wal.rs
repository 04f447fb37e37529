//! The SQLite WAL file as the replicator reads it: the 32-byte header, the
//! 24-byte frame headers, the salts and the cumulative checksums. It hands
//! out whole committed transactions only: a frame counts once a later (or
//! its own) commit frame with a valid checksum chain ends its transaction.
//!
//! It only reads the file, with plain positioned reads on the caller's
//! thread. It never writes, locks or syncs the WAL and knows nothing of
//! SQLite's shared-memory index: the salts and checksums alone tell a frame
//! of this generation from a stale one, exactly as SQLite's own recovery
//! does.

use std::fs::File;
use std::io;

use offloop_file::PositionedIo;

pub const WAL_HEADER_SIZE: u64 = 32;
pub const FRAME_HEADER_SIZE: u64 = 24;

/// The WAL magic; its low bit says the checksums read words big-endian.
const MAGIC: u32 = 0x377f_0682;
/// The only WAL format version SQLite writes.
const VERSION: u32 = 3_007_000;
/// Bytes read per system call while scanning frames: a few hundred frames,
/// so a scan of a 1,000-frame tail is a handful of reads.
const SCAN_CHUNK: usize = 1 << 20;

/// A WAL header: which generation of the file this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalHeader {
    pub big_endian: bool,
    pub page_size: u32,
    pub checkpoint_seq: u32,
    pub salt1: u32,
    pub salt2: u32,
    /// The checksum of the header's first 24 bytes: the seed of frame 1's.
    pub checksum: (u32, u32),
}

impl WalHeader {
    /// Parses and checks a header; `None` when it is not a valid one (an
    /// empty or truncated WAL, or one being rewritten).
    pub fn parse(b: &[u8]) -> Option<WalHeader> {
        if b.len() < WAL_HEADER_SIZE as usize {
            return None;
        }
        let magic = be32(b, 0);
        if magic & !1 != MAGIC || be32(b, 4) != VERSION {
            return None;
        }
        let big_endian = magic & 1 == 1;
        let page_size = be32(b, 8);
        if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
            return None;
        }
        let checksum = (be32(b, 24), be32(b, 28));
        if wal_checksum(big_endian, &b[..24], (0, 0)) != checksum {
            return None;
        }
        Some(WalHeader {
            big_endian,
            page_size,
            checkpoint_seq: be32(b, 12),
            salt1: be32(b, 16),
            salt2: be32(b, 20),
            checksum,
        })
    }

    /// Reads the header of the WAL at `file`; `None` when there is none.
    pub fn read(file: &File) -> io::Result<Option<WalHeader>> {
        let mut b = [0u8; WAL_HEADER_SIZE as usize];
        match file.read_exact_at(&mut b, 0) {
            Ok(()) => Ok(WalHeader::parse(&b)),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn salts(&self) -> (u32, u32) {
        (self.salt1, self.salt2)
    }

    pub fn frame_size(&self) -> u64 {
        FRAME_HEADER_SIZE + u64::from(self.page_size)
    }
}

/// Where reading stopped: the end of the last whole committed transaction
/// read, and the checksum chain's value there (the seed of the next frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalPosition {
    pub salt1: u32,
    pub salt2: u32,
    pub offset: u64,
    pub checksum: (u32, u32),
}

impl WalPosition {
    /// The start of the WAL generation `header` begins.
    pub fn start(header: &WalHeader) -> WalPosition {
        WalPosition {
            salt1: header.salt1,
            salt2: header.salt2,
            offset: WAL_HEADER_SIZE,
            checksum: header.checksum,
        }
    }
}

/// One frame of a committed transaction.
pub struct Frame<'a> {
    pub pgno: u32,
    /// Where the page's bytes start in the WAL file.
    pub offset: u64,
    pub data: &'a [u8],
}

/// One committed transaction: its frames in WAL order (a page may appear
/// more than once; the last image wins), the database size in pages after
/// it, and the position after its commit frame.
pub struct Transaction<'a> {
    pub frames: Vec<Frame<'a>>,
    pub commit: u32,
    pub end: WalPosition,
}

/// Reads the committed transactions that follow `from` in the WAL, up to
/// the offset `until` at most, calling `visit` for each in order, and
/// returns the position after the last one (`from` itself when there is
/// none). A frame with other salts or a broken checksum chain ends the
/// scan: it is stale, or still being written.
pub fn read_committed(
    file: &File,
    header: &WalHeader,
    from: WalPosition,
    until: u64,
    mut visit: impl FnMut(&Transaction<'_>) -> io::Result<()>,
) -> io::Result<WalPosition> {
    debug_assert_eq!((from.salt1, from.salt2), header.salts());
    let frame_size = header.frame_size() as usize;
    let page = header.page_size as usize;
    let len = file.metadata()?.len().min(until);
    let mut done = from;
    // Frames of the transaction in progress: (offset in `buf`, pgno).
    let mut pending: Vec<(usize, u32)> = Vec::new();
    let mut chain = from.checksum;
    let mut chunk_start = from.offset;
    // Read into, chunk after chunk; only `buf[..filled]` holds frames. It
    // is zeroed only where it grows: zeroing each chunk before reading
    // over it cost as much as a copy of the WAL.
    let mut space = Vec::new();
    let mut filled = 0;
    let per_chunk = (SCAN_CHUNK / frame_size).max(1);
    loop {
        // A transaction can span chunks: keep its frames in the buffer.
        let keep_from = pending.first().map_or(filled, |(at, _)| *at);
        let kept = filled - keep_from;
        space.copy_within(keep_from..filled, 0);
        for (at, _) in pending.iter_mut() {
            *at -= keep_from;
        }
        let want = (len.saturating_sub(chunk_start) as usize).min(per_chunk * frame_size);
        let whole = want - want % frame_size;
        if whole == 0 {
            return Ok(done);
        }
        if space.len() < kept + whole {
            space.resize(kept + whole, 0);
        }
        let got = read_at_most(file, &mut space[kept..kept + whole], chunk_start)?;
        let got = got - got % frame_size;
        filled = kept + got;
        if got == 0 {
            return Ok(done);
        }
        let buf = &space[..filled];
        // The file offset of `buf[0]`: the kept bytes precede `chunk_start`.
        let base = chunk_start - kept as u64;
        let mut at = kept;
        while at + frame_size <= buf.len() {
            let h = &buf[at..at + FRAME_HEADER_SIZE as usize];
            let pgno = be32(h, 0);
            let commit = be32(h, 4);
            if pgno == 0 || (be32(h, 8), be32(h, 12)) != header.salts() {
                return Ok(done);
            }
            let data = &buf[at + FRAME_HEADER_SIZE as usize..at + frame_size];
            let sum = wal_checksum(header.big_endian, &h[..8], chain);
            let sum = wal_checksum(header.big_endian, data, sum);
            if sum != (be32(h, 16), be32(h, 20)) {
                return Ok(done);
            }
            chain = sum;
            pending.push((at, pgno));
            at += frame_size;
            if commit != 0 {
                let end = WalPosition {
                    offset: base + at as u64,
                    checksum: chain,
                    ..from
                };
                let frames = pending
                    .iter()
                    .map(|&(o, pgno)| {
                        let data_at = o + FRAME_HEADER_SIZE as usize;
                        Frame {
                            pgno,
                            offset: base + data_at as u64,
                            data: &buf[data_at..data_at + page],
                        }
                    })
                    .collect();
                visit(&Transaction {
                    frames,
                    commit,
                    end,
                })?;
                pending.clear();
                done = end;
            }
        }
        chunk_start += got as u64;
    }
}

/// Whether the frame that ends at `pos` is still in the WAL with the same
/// checksum: the WAL has not been restarted or rewritten since `pos` was
/// read, so reading can continue from there.
pub fn continues_at(file: &File, header: &WalHeader, pos: &WalPosition) -> io::Result<bool> {
    if header.salts() != (pos.salt1, pos.salt2) {
        return Ok(false);
    }
    if pos.offset == WAL_HEADER_SIZE {
        return Ok(pos.checksum == header.checksum);
    }
    if pos.offset < WAL_HEADER_SIZE + header.frame_size() {
        return Ok(false);
    }
    let mut h = [0u8; FRAME_HEADER_SIZE as usize];
    match file.read_exact_at(&mut h, pos.offset - header.frame_size()) {
        Ok(()) => Ok((be32(&h, 8), be32(&h, 12)) == header.salts()
            && (be32(&h, 16), be32(&h, 20)) == pos.checksum),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

fn read_at_most(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// SQLite's WAL checksum over `data` (a multiple of 8 bytes), continuing
/// from `seed`: two running sums over 32-bit words, each pair folded in.
pub fn wal_checksum(big_endian: bool, data: &[u8], seed: (u32, u32)) -> (u32, u32) {
    let (mut s0, mut s1) = seed;
    for pair in data.chunks_exact(8) {
        let (a, b) = if big_endian {
            (be32(pair, 0), be32(pair, 4))
        } else {
            (
                u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]),
                u32::from_le_bytes([pair[4], pair[5], pair[6], pair[7]]),
            )
        };
        s0 = s0.wrapping_add(a).wrapping_add(s1);
        s1 = s1.wrapping_add(b).wrapping_add(s0);
    }
    (s0, s1)
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
