//! The follower's record beside its database, `<database>-follow`: which
//! replica the file follows and where it stands in it, kept durable and
//! replaced atomically (written aside, synced, renamed, the folder synced).
//!
//! The record cannot live in the database: a follower overwrites its pages
//! with the replica's. So it brackets each apply instead. Before a
//! transaction that takes the file from TXID `at` to TXID `to` commits,
//! the record says "at `at`, or at `to` if the commit landed"; the commit
//! itself is synced (the follower's writer runs `synchronous = FULL`).
//! After a crash the file is at one of the two, and a file reaching `to`
//! or beyond, applied from `at`, brings either to one known state (see
//! docs/replication.md). The record spells a state that is not known (a
//! restore into the file was under way, which only a full image fixes) as
//! TXID 0; in memory it is a [`Position`] whose `at` is `None`.
//!
//! It reads and writes this one small file and nothing else: no database,
//! no replica.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use offloop_ltx::Txid;

/// The record's first line, with its format's version.
const MAGIC: &str = "offloop-follow 1";

/// Where a follower's database stands in its replica's chain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    /// The TXID the file is at. `None`: not known (a restore into it was
    /// under way), and only a full image puts it right.
    pub at: Option<Txid>,
    /// An apply to this TXID, past `at`, was announced and may have
    /// committed: the file is at `at` or here, and whatever is applied
    /// next must reach this far. `None`: no apply was under way.
    pub reach: Option<Txid>,
}

impl Position {
    /// At `at` (`None`: not known), with no apply under way.
    pub fn settled(at: Option<Txid>) -> Position {
        Position { at, reach: None }
    }

    /// Before an apply from here to `to`: at `at`, or at `to` once the
    /// apply commits.
    pub fn announcing(self, to: Txid) -> Position {
        Position {
            at: self.at,
            reach: Some(to).filter(|&to| self.at.is_none_or(|at| to > at)),
        }
    }

    /// The TXID the file is surely at: known, and no apply cut short.
    pub fn known(self) -> Option<Txid> {
        self.at.filter(|_| self.reach.is_none())
    }

    /// Whether the file is surely at `txid` or later.
    pub fn reached(self, txid: Txid) -> bool {
        self.known().is_some_and(|at| at >= txid)
    }
}

/// Where a follower stands, beside the replica it follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FollowRecord {
    pub url: String,
    pub position: Position,
}

/// `<database>-follow`.
pub fn record_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push("-follow");
    PathBuf::from(p)
}

impl FollowRecord {
    /// `at` and `to` as numbers, 0 for a TXID not known, and `to` equal to
    /// `at` when no apply is under way.
    fn encode(&self) -> String {
        let Position { at, reach } = self.position;
        let at = at.map_or(0, Txid::get);
        let to = reach.map_or(at, Txid::get);
        format!("{MAGIC}\nurl {}\nat {at}\nto {to}\n", self.url)
    }

    fn decode(text: &str) -> Option<FollowRecord> {
        let mut lines = text.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let url = lines.next()?.strip_prefix("url ")?.to_string();
        let at: u64 = lines.next()?.strip_prefix("at ")?.parse().ok()?;
        let to: u64 = lines.next()?.strip_prefix("to ")?.parse().ok()?;
        let settled = Position::settled(Txid::new(at));
        let position = Txid::new(to).map_or(settled, |to| settled.announcing(to));
        (to >= at).then_some(FollowRecord { url, position })
    }

    /// The record beside `db`: `Ok(None)` when there is none, an error
    /// when one is there but is not a follower's record.
    pub fn read(db: &Path) -> io::Result<Option<FollowRecord>> {
        let path = record_path(db);
        match fs::read_to_string(&path) {
            Ok(text) => FollowRecord::decode(&text).map(Some).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is not a follower's record", path.display()),
                )
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replaces the record beside `db`, durably: once this returns, a
    /// crash leaves this record or a later one.
    pub fn write(&self, db: &Path) -> io::Result<()> {
        let path = record_path(db);
        offloop_file::replace_file(&path, self.encode().as_bytes())?;
        offloop_file::sync_parent(&path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written_and_nothing_else_reads_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("app.db");
        assert_eq!(FollowRecord::read(&db).unwrap(), None);
        let txid = |n| Txid::new(n);
        for position in [
            Position::settled(txid(7)).announcing(Txid::new(9).unwrap()),
            Position::settled(txid(7)),
            Position::settled(None),
            Position::settled(None).announcing(Txid::new(3).unwrap()),
        ] {
            let r = FollowRecord {
                url: "s3://b/p".into(),
                position,
            };
            r.write(&db).unwrap();
            assert_eq!(FollowRecord::read(&db).unwrap(), Some(r));
        }
        fs::write(record_path(&db), "something else").unwrap();
        assert!(FollowRecord::read(&db).is_err());
        fs::write(record_path(&db), format!("{MAGIC}\nurl x\nat 9\nto 7\n")).unwrap();
        assert!(FollowRecord::read(&db).is_err(), "`to` never behind `at`");
    }

    #[test]
    fn a_position_is_known_only_when_no_apply_was_cut_short() {
        let t = |n| Txid::new(n).unwrap();
        let at7 = Position::settled(Some(t(7)));
        assert_eq!(at7.known(), Some(t(7)));
        assert!(at7.reached(t(7)) && !at7.reached(t(8)));
        let cut = at7.announcing(t(9));
        assert_eq!((cut.known(), cut.reach), (None, Some(t(9))));
        assert!(!cut.reached(t(1)));
        assert_eq!(
            at7.announcing(t(7)),
            at7,
            "an apply to where it is reaches nothing new"
        );
        let unknown = Position::settled(None);
        assert_eq!(unknown.known(), None);
        assert_eq!(unknown.announcing(t(1)).reach, Some(t(1)));
    }
}
