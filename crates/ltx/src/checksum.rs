//! CRC-64/ISO (Go's `crc64.ISO` table) and the two checksums LTX builds on it:
//! the file checksum (a running CRC over a file's bytes, pages decompressed)
//! and the database checksum (an XOR of per-page CRCs, so it can be updated
//! page by page and summed on several threads in any order).
//!
//! Pure arithmetic: it never reads a file.

use crc_fast::CrcAlgorithm::Crc64GoIso;

/// Set on every stored checksum so that a real checksum is never zero (zero
/// means "not tracked").
pub const CHECKSUM_FLAG: u64 = 1 << 63;

/// CRC-64/ISO of `bytes`.
pub fn crc64(bytes: &[u8]) -> u64 {
    crc_fast::checksum(Crc64GoIso, bytes)
}

/// The CRC of `a ‖ b` from the CRC of `a`, the CRC of `b` and `b`'s length:
/// lets each thread checksum its own slice of a file.
pub fn crc64_combine(crc_a: u64, crc_b: u64, len_b: u64) -> u64 {
    crc_fast::checksum_combine(Crc64GoIso, crc_a, crc_b, len_b)
}

/// A running CRC-64/ISO that knows how many bytes it saw, so two of them
/// (for consecutive slices of a file) can be joined.
#[derive(Clone, Copy)]
pub struct Crc64(crc_fast::Digest);

impl std::fmt::Debug for Crc64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Crc64({:016x} over {} bytes)", self.value(), self.len())
    }
}

impl PartialEq for Crc64 {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value() && self.len() == other.len()
    }
}

impl Eq for Crc64 {}

impl Default for Crc64 {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc64 {
    pub fn new() -> Self {
        Crc64(crc_fast::Digest::new(Crc64GoIso))
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The CRC of everything seen so far.
    pub fn value(&self) -> u64 {
        self.0.finalize()
    }

    /// How many bytes went in.
    pub fn len(&self) -> u64 {
        self.0.get_amount()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Continues with what `next` saw, as if its bytes had come through here.
    pub fn append(&mut self, next: &Crc64) {
        self.0.combine(&next.0);
    }
}

/// The checksum of one database page: the CRC of its number (big-endian)
/// followed by its bytes, flagged.
pub fn page_checksum(pgno: u32, data: &[u8]) -> u64 {
    let mut crc = Crc64::new();
    crc.update(&pgno.to_be_bytes());
    crc.update(data);
    CHECKSUM_FLAG | crc.value()
}

/// The database checksum LTX stores as pre- and post-apply checksums: the
/// XOR of every page's checksum, lock page excluded, flagged. XOR makes it
/// order-free: pages may be added from any thread in any order, and a page
/// that changes is swapped by removing its old checksum and adding the new.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatabaseChecksum(u64);

impl DatabaseChecksum {
    pub fn new() -> Self {
        DatabaseChecksum(0)
    }

    /// Adds (or, given the same page again, removes) a page.
    pub fn toggle_page(&mut self, pgno: u32, data: &[u8]) {
        self.0 ^= page_checksum(pgno, data);
    }

    /// Joins the sum of another set of pages.
    pub fn merge(&mut self, other: DatabaseChecksum) {
        self.0 ^= other.0;
    }

    /// The value as stored in an LTX header or trailer.
    pub fn value(&self) -> u64 {
        CHECKSUM_FLAG | self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_is_go_iso() {
        // The standard check value of CRC-64/GO-ISO.
        assert_eq!(crc64(b"123456789"), 0xb909_56c7_75a4_1001);
        let mut crc = Crc64::new();
        crc.update(b"12345");
        crc.update(b"6789");
        assert_eq!(crc.value(), 0xb909_56c7_75a4_1001);
        assert_eq!(crc.len(), 9);
    }

    #[test]
    fn appended_crcs_equal_the_crc_of_the_joined_bytes() {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for cut in [0, 1, 100, 4096, 9_999, 10_000] {
            let mut a = Crc64::new();
            a.update(&bytes[..cut]);
            let mut b = Crc64::new();
            b.update(&bytes[cut..]);
            a.append(&b);
            assert_eq!(a.value(), crc64(&bytes), "cut at {cut}");
            assert_eq!(a.len(), bytes.len() as u64);
        }
    }

    #[test]
    fn database_checksum_is_order_free_and_undoable() {
        let p1 = vec![1u8; 512];
        let p2 = vec![2u8; 512];
        let mut a = DatabaseChecksum::new();
        a.toggle_page(1, &p1);
        a.toggle_page(2, &p2);
        let mut b = DatabaseChecksum::new();
        b.toggle_page(2, &p2);
        b.toggle_page(1, &p1);
        assert_eq!(a, b);
        assert_eq!(a.value() & CHECKSUM_FLAG, CHECKSUM_FLAG);
        b.toggle_page(2, &p2);
        let mut c = DatabaseChecksum::new();
        c.toggle_page(1, &p1);
        assert_eq!(b, c);
        assert_eq!(DatabaseChecksum::new().value(), CHECKSUM_FLAG);
    }
}
