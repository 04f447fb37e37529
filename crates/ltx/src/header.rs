//! The fixed-size parts of an LTX file: the 100-byte header, the 6-byte page
//! header, the 16-byte trailer, and the names Litestream gives LTX files.
//! Plain data with big-endian encodings; no I/O, no compression.

use crate::checksum::CHECKSUM_FLAG;
use crate::error::{Error, Result};
use crate::txid::Txid;

/// The first four bytes of every LTX file.
pub const MAGIC: &[u8; 4] = b"LTX1";
pub const HEADER_SIZE: usize = 100;
pub const PAGE_HEADER_SIZE: usize = 6;
pub const TRAILER_SIZE: usize = 16;

/// Header flag: the file carries no database checksums (pre- and post-apply
/// are zero). Litestream 0.5 sets it on every file it writes.
pub const HEADER_FLAG_NO_CHECKSUM: u32 = 1 << 1;
/// Every header flag the format knows; any other bit makes a file invalid.
const HEADER_FLAG_MASK: u32 = HEADER_FLAG_NO_CHECKSUM;

/// Page-header flag: a big-endian u32 size follows, then an LZ4 block
/// (ltx 0.5.2, Litestream ≥ 0.5.16). Without it an LZ4 frame follows.
pub const PAGE_FLAG_SIZE: u16 = 1 << 0;

/// SQLite's pending byte: the page holding it (the lock page) is never
/// stored in a database file's image, so never in an LTX file.
const PENDING_BYTE: u64 = 0x4000_0000;

/// The lock page of a database with this page size.
pub fn lock_pgno(page_size: u32) -> u32 {
    (PENDING_BYTE / u64::from(page_size)) as u32 + 1
}

/// The page a snapshot holds after `prev` (0 before its first): the next
/// one, skipping the lock page. Wide, so that no page number overflows it.
pub(crate) fn next_snapshot_pgno(prev: u32, lock_pgno: u32) -> u64 {
    let next = u64::from(prev) + 1;
    if next == u64::from(lock_pgno) {
        next + 1
    } else {
        next
    }
}

/// SQLite's page sizes: powers of two from 512 to 65536.
pub fn is_valid_page_size(page_size: u32) -> bool {
    (512..=65536).contains(&page_size) && page_size.is_power_of_two()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub flags: u32,
    pub page_size: u32,
    /// Database size in pages after applying this file.
    pub commit: u32,
    pub min_txid: Txid,
    pub max_txid: Txid,
    /// Milliseconds since the Unix epoch.
    pub timestamp: i64,
    /// Database checksum before applying; zero when not tracked.
    pub pre_apply_checksum: u64,
    pub wal_offset: u64,
    pub wal_size: u64,
    pub wal_salt1: u32,
    pub wal_salt2: u32,
    pub node_id: u64,
}

/// Every field zero but the TXIDs, which are 1 (a snapshot's range starts
/// there, and no file's range holds 0): a base for `..Header::default()`.
impl Default for Header {
    fn default() -> Header {
        Header {
            flags: 0,
            page_size: 0,
            commit: 0,
            min_txid: Txid::FIRST,
            max_txid: Txid::FIRST,
            timestamp: 0,
            pre_apply_checksum: 0,
            wal_offset: 0,
            wal_size: 0,
            wal_salt1: 0,
            wal_salt2: 0,
            node_id: 0,
        }
    }
}

impl Header {
    /// A file whose range starts at TXID 1 holds every page of the database.
    pub fn is_snapshot(&self) -> bool {
        self.min_txid == Txid::FIRST
    }

    pub fn has_checksums(&self) -> bool {
        self.flags & HEADER_FLAG_NO_CHECKSUM == 0
    }

    pub fn lock_pgno(&self) -> u32 {
        lock_pgno(self.page_size)
    }

    pub fn encode(&self) -> [u8; HEADER_SIZE] {
        let mut b = [0u8; HEADER_SIZE];
        b[0..4].copy_from_slice(MAGIC);
        b[4..8].copy_from_slice(&self.flags.to_be_bytes());
        b[8..12].copy_from_slice(&self.page_size.to_be_bytes());
        b[12..16].copy_from_slice(&self.commit.to_be_bytes());
        b[16..24].copy_from_slice(&self.min_txid.get().to_be_bytes());
        b[24..32].copy_from_slice(&self.max_txid.get().to_be_bytes());
        b[32..40].copy_from_slice(&self.timestamp.to_be_bytes());
        b[40..48].copy_from_slice(&self.pre_apply_checksum.to_be_bytes());
        b[48..56].copy_from_slice(&self.wal_offset.to_be_bytes());
        b[56..64].copy_from_slice(&self.wal_size.to_be_bytes());
        b[64..68].copy_from_slice(&self.wal_salt1.to_be_bytes());
        b[68..72].copy_from_slice(&self.wal_salt2.to_be_bytes());
        b[72..80].copy_from_slice(&self.node_id.to_be_bytes());
        b
    }

    /// Reads and validates a header from the first 100 bytes of a file.
    pub fn decode(b: &[u8]) -> Result<Header> {
        if b.len() < HEADER_SIZE {
            return Err(Error::format("shorter than a header"));
        }
        if &b[0..4] != MAGIC {
            return Err(Error::format("bad magic"));
        }
        let txid = |at: usize| {
            Txid::new(be_u64(&b[at..]))
                .ok_or_else(|| Error::format("transaction ids must be non-zero"))
        };
        let h = Header {
            flags: be_u32(&b[4..]),
            page_size: be_u32(&b[8..]),
            commit: be_u32(&b[12..]),
            min_txid: txid(16)?,
            max_txid: txid(24)?,
            timestamp: be_u64(&b[32..]) as i64,
            pre_apply_checksum: be_u64(&b[40..]),
            wal_offset: be_u64(&b[48..]),
            wal_size: be_u64(&b[56..]),
            wal_salt1: be_u32(&b[64..]),
            wal_salt2: be_u32(&b[68..]),
            node_id: be_u64(&b[72..]),
        };
        h.validate().map_err(Error::Format)?;
        Ok(h)
    }

    /// The format's rules for a header, as ltx 0.5 checks them.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.flags & !HEADER_FLAG_MASK != 0 {
            return Err(format!("invalid header flags 0x{:08x}", self.flags));
        }
        if !is_valid_page_size(self.page_size) {
            return Err(format!("invalid page size {}", self.page_size));
        }
        if self.min_txid > self.max_txid {
            return Err(format!(
                "transaction ids out of order: {} > {}",
                self.min_txid.get(),
                self.max_txid.get()
            ));
        }
        if (self.wal_salt1 != 0 || self.wal_salt2 != 0) && self.wal_offset == 0 {
            return Err("a WAL salt needs a WAL offset".into());
        }
        if self.wal_offset == 0 && self.wal_size != 0 {
            return Err("a WAL size needs a WAL offset".into());
        }
        if self.is_snapshot() || !self.has_checksums() {
            if self.pre_apply_checksum != 0 {
                return Err("pre-apply checksum must be zero here".into());
            }
        } else if self.pre_apply_checksum & CHECKSUM_FLAG == 0 {
            return Err("pre-apply checksum missing or unflagged".into());
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trailer {
    /// Database checksum after applying; zero when not tracked.
    pub post_apply_checksum: u64,
    /// CRC-64/ISO of the file up to this field, flagged.
    pub file_checksum: u64,
}

impl Trailer {
    pub fn encode(&self) -> [u8; TRAILER_SIZE] {
        let mut b = [0u8; TRAILER_SIZE];
        b[0..8].copy_from_slice(&self.post_apply_checksum.to_be_bytes());
        b[8..16].copy_from_slice(&self.file_checksum.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Result<Trailer> {
        if b.len() < TRAILER_SIZE {
            return Err(Error::format("shorter than a trailer"));
        }
        Ok(Trailer {
            post_apply_checksum: be_u64(b),
            file_checksum: be_u64(&b[8..]),
        })
    }

    pub(crate) fn validate(&self, header: &Header) -> std::result::Result<(), String> {
        if header.has_checksums() {
            if self.post_apply_checksum & CHECKSUM_FLAG == 0 {
                return Err("post-apply checksum missing or unflagged".into());
            }
        } else if self.post_apply_checksum != 0 {
            return Err("post-apply checksum must be zero without checksums".into());
        }
        if self.file_checksum & CHECKSUM_FLAG == 0 {
            return Err("file checksum missing or unflagged".into());
        }
        Ok(())
    }
}

/// The 6 bytes in front of each page: its number and flags. All zero ends
/// the pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageHeader {
    pub pgno: u32,
    pub flags: u16,
}

impl PageHeader {
    pub fn encode(&self) -> [u8; PAGE_HEADER_SIZE] {
        let mut b = [0u8; PAGE_HEADER_SIZE];
        b[0..4].copy_from_slice(&self.pgno.to_be_bytes());
        b[4..6].copy_from_slice(&self.flags.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8; PAGE_HEADER_SIZE]) -> PageHeader {
        PageHeader {
            pgno: be_u32(b),
            flags: u16::from_be_bytes([b[4], b[5]]),
        }
    }

    pub fn is_end(&self) -> bool {
        self.pgno == 0 && self.flags == 0
    }
}

/// Litestream's file name for a TXID range: `<min:016x>-<max:016x>.ltx`.
pub fn file_name(min_txid: Txid, max_txid: Txid) -> String {
    format!("{min_txid}-{max_txid}.ltx")
}

/// The TXID range in a Litestream LTX file name, or `None` for any other name.
/// A TXID of 0 is no TXID, so a name holding one is no LTX file's name.
pub fn parse_file_name(name: &str) -> Option<(Txid, Txid)> {
    let b = name.as_bytes();
    if b.len() != 37 || b[16] != b'-' || &b[33..] != b".ltx" {
        return None;
    }
    Some((Txid::from_hex(&name[..16])?, Txid::from_hex(&name[17..33])?))
}

pub(crate) fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

pub(crate) fn be_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(n: u64) -> Txid {
        Txid::new(n).unwrap()
    }

    fn header() -> Header {
        Header {
            flags: HEADER_FLAG_NO_CHECKSUM,
            page_size: 4096,
            commit: 3,
            min_txid: t(2),
            max_txid: t(5),
            timestamp: 1_700_000_000_123,
            wal_offset: 32,
            wal_size: 4120,
            wal_salt1: 7,
            wal_salt2: 9,
            node_id: 11,
            ..Header::default()
        }
    }

    #[test]
    fn header_round_trips_at_the_documented_offsets() {
        let h = header();
        let b = h.encode();
        assert_eq!(&b[0..4], b"LTX1");
        assert_eq!(be_u32(&b[8..]), 4096);
        assert_eq!(be_u64(&b[24..]), 5);
        assert_eq!(be_u64(&b[32..]), 1_700_000_000_123);
        assert_eq!(be_u64(&b[72..]), 11);
        assert!(b[80..].iter().all(|&x| x == 0));
        assert_eq!(Header::decode(&b).unwrap(), h);
    }

    #[test]
    fn header_decode_refuses_bad_magic_flags_page_size_and_txids() {
        let mut b = header().encode();
        b[0] = b'X';
        assert!(Header::decode(&b).is_err());
        let mut zero_min = header().encode();
        zero_min[16..24].fill(0);
        assert!(Header::decode(&zero_min).is_err(), "a zero TXID");
        for bad in [
            Header {
                flags: 1,
                ..header()
            },
            Header {
                page_size: 1000,
                ..header()
            },
            Header {
                min_txid: t(6),
                ..header()
            },
            Header {
                pre_apply_checksum: CHECKSUM_FLAG | 1,
                ..header()
            },
        ] {
            assert!(Header::decode(&bad.encode()).is_err(), "{bad:?}");
        }
        let tracked = Header {
            flags: 0,
            ..header()
        };
        assert!(
            tracked.validate().is_err(),
            "checksums tracked but none given"
        );
    }

    #[test]
    fn lock_page_is_the_page_holding_the_pending_byte() {
        assert_eq!(lock_pgno(4096), 262_145);
        assert_eq!(lock_pgno(512), 2_097_153);
        assert_eq!(lock_pgno(65536), 16_385);
    }

    #[test]
    fn file_names_are_fixed_width_lowercase_hex() {
        assert_eq!(
            file_name(t(1), t(0xb)),
            "0000000000000001-000000000000000b.ltx"
        );
        assert_eq!(
            parse_file_name("0000000000000001-000000000000000b.ltx"),
            Some((t(1), t(0xb)))
        );
        assert_eq!(
            parse_file_name("0000000000000000-000000000000000b.ltx"),
            None
        );
        assert_eq!(
            parse_file_name("0000000000000001-000000000000000B.ltx"),
            None
        );
        assert_eq!(
            parse_file_name("0000000000000001-000000000000000b.ltx.tmp"),
            None
        );
        assert_eq!(parse_file_name("1-b.ltx"), None);
    }
}
