//! `Txid`: Litestream's transaction ID, the unit a replica is counted in.
//! One TXID is one sync of the primary (several SQLite commits may share
//! it); TXID 1 is the first, so a file whose range starts at 1 is a
//! snapshot. Written as 16 lower-case hex digits wherever it is a name (file
//! names, `litestream restore -txid`), and as a decimal number in JSON.
//!
//! It owns only the number's rules (order, the next one, its spellings); it
//! knows nothing of files or replicas.

use std::fmt;
use std::str::FromStr;

/// A transaction ID: at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Txid(u64);

impl Txid {
    /// The first TXID of every replica.
    pub const FIRST: Txid = Txid(1);
    /// The largest TXID a replica can hold.
    pub const MAX: Txid = Txid(u64::MAX);

    /// `n` as a TXID; `None` for 0, which no transaction has.
    pub const fn new(n: u64) -> Option<Txid> {
        if n == 0 {
            None
        } else {
            Some(Txid(n))
        }
    }

    pub const fn get(self) -> u64 {
        self.0
    }

    /// The TXID after this one (saturating at `MAX`, which no real replica
    /// reaches: a sync a microsecond for half a million years).
    pub const fn next(self) -> Txid {
        Txid(self.0.saturating_add(1))
    }

    /// The TXID after this one; `None` after `MAX` (a replica whose file
    /// names claim `MAX` can be followed no further).
    pub const fn checked_next(self) -> Option<Txid> {
        match self.0.checked_add(1) {
            Some(n) => Some(Txid(n)),
            None => None,
        }
    }

    /// The TXID before this one, `None` before the first.
    pub const fn prev(self) -> Option<Txid> {
        Txid::new(self.0 - 1)
    }

    /// Reads exactly 16 hex digits, as file names and `-txid` spell it.
    pub fn from_hex(s: &str) -> Option<Txid> {
        let b = s.as_bytes();
        if b.len() != 16 || !b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
            return None;
        }
        u64::from_str_radix(s, 16).ok().and_then(Txid::new)
    }
}

/// 16 lower-case hex digits: `000000000000002a`.
impl fmt::Display for Txid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// The 16-hex-digit spelling, as `Display` writes it.
impl FromStr for Txid {
    type Err = String;

    fn from_str(s: &str) -> Result<Txid, String> {
        Txid::from_hex(s).ok_or_else(|| format!("{s:?} is not a TXID (16 lower-case hex digits)"))
    }
}

/// A TXID equals the number it is.
impl PartialEq<u64> for Txid {
    fn eq(&self, n: &u64) -> bool {
        self.0 == *n
    }
}

impl From<Txid> for u64 {
    fn from(t: Txid) -> u64 {
        t.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_txid_is_written_and_read_as_sixteen_hex_digits() {
        let t = Txid::new(42).unwrap();
        assert_eq!(t.to_string(), "000000000000002a");
        assert_eq!("000000000000002a".parse::<Txid>(), Ok(t));
        assert!("2a".parse::<Txid>().is_err());
        assert!("000000000000002A".parse::<Txid>().is_err());
        assert!("0000000000000000".parse::<Txid>().is_err());
    }

    #[test]
    fn zero_is_no_txid_and_order_is_numeric() {
        assert_eq!(Txid::new(0), None);
        assert_eq!(Txid::FIRST.prev(), None);
        assert!(Txid::new(9).unwrap() < Txid::new(10).unwrap());
        assert_eq!(Txid::FIRST.next().get(), 2);
        assert_eq!(Txid::MAX.next(), Txid::MAX);
        assert_eq!(Txid::FIRST.checked_next(), Txid::new(2));
        assert_eq!(Txid::MAX.checked_next(), None);
    }
}
