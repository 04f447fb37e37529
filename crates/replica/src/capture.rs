//! The capture log: committed WAL transactions copied, as they happen, into
//! a file of the replicator's own next to the database, until the next sync
//! turns them into one L0 file. Because every committed frame is here before
//! any checkpoint may let the WAL restart, the WAL can be checkpointed and
//! reused freely without a frame going missing; because it is a file, a
//! process killed before its next upload resumes from it on the next open.
//!
//! It owns the file's format and its in-memory index (the newest image of
//! every page captured). It never reads the WAL or talks to a replica; the
//! replicator feeds it transactions and asks it for pages.
//!
//! Format: a 56-byte header (magic, page size, the database size at the last
//! staged TXID, the TXID the next stage takes, the WAL position capture
//! started from, and a hash of those), then one record per capture pass:
//! `len u32 | payload | crc64(payload)`, the payload being `commit u32,
//! salt1 u32, salt2 u32, offset u64, checksum u32 u32, frames u32` and then
//! `pgno u32 | page` per frame. A torn last record (a kill mid-write) fails
//! its hash and is cut off at the next open.
//!
//! A record holds the transactions one pass read, merged: the newest image
//! of each page they wrote, and the position and database size after the
//! last. An L0 file keeps only the newest image of a page anyway, and a
//! record cut off by a kill leaves the log at the end of the pass before,
//! a point in history all the same. Merging is what makes a busy writer
//! cheap to follow: one-row commits rewrite the same few pages, so a pass
//! of hundreds of them writes and hashes a few dozen pages, not hundreds.
//! (The first format version wrote a record per transaction; the records
//! read back the same way, so the format did not change.)
//!
//! The hash is CRC-64/NVME: every page captured passes through it, so it
//! must run many bytes per cycle (the format's first version hashed a byte
//! at a time with FNV-1a and was the hottest function of a replicating
//! process), and a CRC of 64 bits catches what a torn write leaves (a tail
//! of zeros, of older bytes, or cut short) but for a chance of 2^-64.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use offloop_file::{PositionedIo, WritableFile};
use offloop_ltx::Txid;

use crate::wal::{Transaction, WalPosition};

/// The format's version is its last byte: a log of another version (the
/// first hashed with FNV-1a) is not read but started over, which loses no
/// commit: the database holds them all, and the chain starts again from a
/// full image of it.
const MAGIC: &[u8; 8] = b"OLCAPT02";
const HEADER_SIZE: u64 = 56;
const RECORD_FIXED: usize = 4 + 4 + 4 + 8 + 4 + 4 + 4;
/// A pass's merged pages become a record, and appended records are written,
/// once this many bytes wait, so a capture of a huge transaction never
/// holds it all in memory.
const FLUSH_BYTES: usize = 8 << 20;

/// Where the log stands: what the next stage produces and from where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureStart {
    pub page_size: u32,
    /// Database size in pages at the last staged TXID (0: none yet).
    pub base_commit: u32,
    /// The TXID the next staged L0 file takes.
    pub next_txid: Txid,
    /// The WAL position capture started from.
    pub from: WalPosition,
}

pub struct CaptureLog {
    path: PathBuf,
    file: WritableFile,
    start: CaptureStart,
    /// Newest image of each captured page: its offset in the file.
    pages: BTreeMap<u32, u64>,
    /// Database size after the last captured transaction.
    commit: u32,
    /// WAL position after the last captured transaction.
    end: WalPosition,
    len: u64,
    transactions: u64,
    unsynced: bool,
    /// Records appended but not yet written: one capture pass writes its
    /// transactions with one system call. They start at file offset
    /// `len - buffer.len()`.
    buffer: Vec<u8>,
    /// The transactions appended since the last record, merged.
    pass: Pass,
}

/// The transactions of a capture pass not yet made a record: the newest
/// image of each page they wrote. Empty when none waits (a transaction
/// writes one frame at least); the database size and WAL position after
/// the last are the log's own `commit` and `end`.
#[derive(Default)]
struct Pass {
    /// Page number to its slot in `images`.
    slots: BTreeMap<u32, usize>,
    /// Page images, one page size each, by slot (kept allocated between
    /// passes).
    images: Vec<u8>,
}

impl Pass {
    fn clear(&mut self) {
        self.slots.clear();
        self.images.clear();
    }

    fn image(&self, slot: usize, page: usize) -> &[u8] {
        &self.images[slot * page..(slot + 1) * page]
    }

    /// Makes `data` the image of `pgno`, in place of an older one.
    fn put(&mut self, pgno: u32, data: &[u8]) {
        let next = self.slots.len();
        let slot = *self.slots.entry(pgno).or_insert(next);
        if slot == next {
            self.images.extend_from_slice(data);
        } else {
            let page = data.len();
            self.images[slot * page..(slot + 1) * page].copy_from_slice(data);
        }
    }
}

impl CaptureLog {
    /// Opens the log at `path`, or `None` when there is none or it is not a
    /// log this version wrote (the caller then starts over).
    pub fn open(path: &Path) -> io::Result<Option<CaptureLog>> {
        let file = match WritableFile::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut h = [0u8; HEADER_SIZE as usize];
        if file.read_exact_at(&mut h, 0).is_err() {
            return Ok(None);
        }
        if &h[..8] != MAGIC
            || record_hash(&h[..48]) != u64::from_be_bytes(h[48..56].try_into().unwrap())
        {
            return Ok(None);
        }
        let Some(next_txid) = Txid::new(be64(&h, 16)) else {
            return Ok(None);
        };
        let start = CaptureStart {
            page_size: be32(&h, 8),
            base_commit: be32(&h, 12),
            next_txid,
            from: WalPosition {
                salt1: be32(&h, 24),
                salt2: be32(&h, 28),
                offset: be64(&h, 32),
                checksum: (be32(&h, 40), be32(&h, 44)),
            },
        };
        let mut log = CaptureLog {
            path: path.to_path_buf(),
            file,
            start,
            pages: BTreeMap::new(),
            commit: start.base_commit,
            end: start.from,
            len: HEADER_SIZE,
            transactions: 0,
            unsynced: false,
            buffer: Vec::new(),
            pass: Pass::default(),
        };
        log.load_records()?;
        Ok(Some(log))
    }

    /// Creates (or replaces) the log at `path`, empty from `start`.
    pub fn create(path: &Path, start: CaptureStart) -> io::Result<CaptureLog> {
        let file = WritableFile::create(path)?;
        let mut log = CaptureLog {
            path: path.to_path_buf(),
            file,
            start,
            pages: BTreeMap::new(),
            commit: start.base_commit,
            end: start.from,
            len: HEADER_SIZE,
            transactions: 0,
            unsynced: true,
            buffer: Vec::new(),
            pass: Pass::default(),
        };
        log.write_header()?;
        log.make_durable()?;
        Ok(log)
    }

    /// Empties the log after its contents were staged as `start.next_txid - 1`.
    pub fn reset(&mut self, start: CaptureStart) -> io::Result<()> {
        self.start = start;
        self.pages.clear();
        self.commit = start.base_commit;
        self.end = start.from;
        self.transactions = 0;
        self.buffer.clear();
        self.pass.clear();
        self.file.set_len(HEADER_SIZE)?;
        self.len = HEADER_SIZE;
        self.write_header()?;
        self.unsynced = true;
        self.make_durable()
    }

    fn write_header(&mut self) -> io::Result<()> {
        let s = &self.start;
        let mut h = Vec::with_capacity(HEADER_SIZE as usize);
        h.extend_from_slice(MAGIC);
        h.extend_from_slice(&s.page_size.to_be_bytes());
        h.extend_from_slice(&s.base_commit.to_be_bytes());
        h.extend_from_slice(&s.next_txid.get().to_be_bytes());
        h.extend_from_slice(&s.from.salt1.to_be_bytes());
        h.extend_from_slice(&s.from.salt2.to_be_bytes());
        h.extend_from_slice(&s.from.offset.to_be_bytes());
        h.extend_from_slice(&s.from.checksum.0.to_be_bytes());
        h.extend_from_slice(&s.from.checksum.1.to_be_bytes());
        let hash = record_hash(&h);
        h.extend_from_slice(&hash.to_be_bytes());
        self.file.write_all_at(&h, 0)
    }

    fn load_records(&mut self) -> io::Result<()> {
        let size = self.file.metadata()?.len();
        let page = self.start.page_size as u64;
        let mut at = HEADER_SIZE;
        while at + 4 <= size {
            let mut lb = [0u8; 4];
            self.file.read_exact_at(&mut lb, at)?;
            let len = u32::from_be_bytes(lb) as u64;
            if len < RECORD_FIXED as u64 || at + 4 + len + 8 > size {
                break;
            }
            let mut payload = vec![0u8; len as usize + 8];
            self.file.read_exact_at(&mut payload, at + 4)?;
            let (body, hash) = payload.split_at(len as usize);
            if record_hash(body) != u64::from_be_bytes(hash.try_into().unwrap()) {
                break;
            }
            let frames = be32(body, 28) as u64;
            if RECORD_FIXED as u64 + frames * (4 + page) != len {
                break;
            }
            for i in 0..frames {
                let o = RECORD_FIXED as u64 + i * (4 + page);
                let pgno = be32(body, o as usize);
                self.pages.insert(pgno, at + 4 + o + 4);
            }
            self.commit = be32(body, 0);
            self.end = WalPosition {
                salt1: be32(body, 4),
                salt2: be32(body, 8),
                offset: be64(body, 12),
                checksum: (be32(body, 20), be32(body, 24)),
            };
            self.transactions += 1;
            at += 4 + len + 8;
        }
        // Whatever follows the last whole record was torn by a kill.
        if at != size {
            self.file.set_len(at)?;
        }
        self.len = at;
        Ok(())
    }

    /// Appends one committed transaction to the pass under way: its pages
    /// replace older images of the same pages in it (see the module doc).
    pub fn append(&mut self, txn: &Transaction<'_>) -> io::Result<()> {
        for frame in &txn.frames {
            self.pass.put(frame.pgno, frame.data);
        }
        self.commit = txn.commit;
        self.end = txn.end;
        self.transactions += 1;
        self.unsynced = true;
        if self.pass.images.len() >= FLUSH_BYTES {
            self.close_pass();
            self.flush()?;
        }
        Ok(())
    }

    /// Makes the pass under way one record in the buffer.
    fn close_pass(&mut self) {
        if self.pass.slots.is_empty() {
            return;
        }
        let end = self.end;
        let page = self.start.page_size as usize;
        let pass = &self.pass;
        let len = RECORD_FIXED + pass.slots.len() * (4 + page);
        let rec = &mut self.buffer;
        let at = rec.len();
        rec.reserve(4 + len + 8);
        rec.extend_from_slice(&(len as u32).to_be_bytes());
        rec.extend_from_slice(&self.commit.to_be_bytes());
        rec.extend_from_slice(&end.salt1.to_be_bytes());
        rec.extend_from_slice(&end.salt2.to_be_bytes());
        rec.extend_from_slice(&end.offset.to_be_bytes());
        rec.extend_from_slice(&end.checksum.0.to_be_bytes());
        rec.extend_from_slice(&end.checksum.1.to_be_bytes());
        rec.extend_from_slice(&(pass.slots.len() as u32).to_be_bytes());
        for (&pgno, &slot) in &pass.slots {
            rec.extend_from_slice(&pgno.to_be_bytes());
            self.pages.insert(pgno, self.len + (rec.len() - at) as u64);
            rec.extend_from_slice(pass.image(slot, page));
        }
        let hash = record_hash(&rec[at + 4..]);
        rec.extend_from_slice(&hash.to_be_bytes());
        self.len += (rec.len() - at) as u64;
        self.pass.clear();
    }

    /// Ends the pass under way and writes the appended records to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        self.close_pass();
        if !self.buffer.is_empty() {
            let at = self.len - self.buffer.len() as u64;
            self.file.write_all_at(&self.buffer, at)?;
            self.buffer.clear();
        }
        Ok(())
    }

    /// Writes what was appended and flushes it to stable storage (when
    /// replication stops, and with each reset).
    pub fn make_durable(&mut self) -> io::Result<()> {
        self.flush()?;
        if self.unsynced {
            self.file.sync_contents()?;
            self.unsynced = false;
        }
        Ok(())
    }

    /// Reads the newest captured image of `pgno` into `buf`; false when the
    /// page was not captured.
    pub fn read_page(&self, pgno: u32, buf: &mut [u8]) -> io::Result<bool> {
        if let Some(&slot) = self.pass.slots.get(&pgno) {
            buf.copy_from_slice(self.pass.image(slot, buf.len()));
            return Ok(true);
        }
        let Some(&at) = self.pages.get(&pgno) else {
            return Ok(false);
        };
        let flushed = self.len - self.buffer.len() as u64;
        if at >= flushed {
            let from = (at - flushed) as usize;
            buf.copy_from_slice(&self.buffer[from..from + buf.len()]);
        } else {
            self.file.read_exact_at(buf, at)?;
        }
        Ok(true)
    }

    /// Captured page numbers, in no set order, and one may come twice (in
    /// the records and in the pass under way).
    pub fn pgnos(&self) -> impl Iterator<Item = u32> + '_ {
        self.pages.keys().chain(self.pass.slots.keys()).copied()
    }

    pub fn start(&self) -> CaptureStart {
        self.start
    }

    pub fn end(&self) -> WalPosition {
        self.end
    }

    pub fn commit(&self) -> u32 {
        self.commit
    }

    pub fn is_empty(&self) -> bool {
        self.transactions == 0
    }

    /// The TXID of the file staged after this log's own: the log's TXID
    /// when it holds nothing to stage, else the one after it.
    pub fn txid_after_stage(&self) -> Txid {
        if self.is_empty() {
            self.start.next_txid
        } else {
            self.start.next_txid.next()
        }
    }

    /// Bytes of page images waiting (the file past its header).
    pub fn pending_bytes(&self) -> u64 {
        self.len - HEADER_SIZE
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// CRC-64/NVME of a header or record, computed with the CPU's carry-less
/// multiply where there is one (see the module's doc for why).
fn record_hash(bytes: &[u8]) -> u64 {
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc64Nvme, bytes)
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}
