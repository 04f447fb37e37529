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
//! docs/replication.md). A record at TXID 0 means the state is not known
//! (a restore into the file was under way): only a full image fixes it.
//!
//! It reads and writes this one small file and nothing else: no database,
//! no replica.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The record's first line, with its format's version.
const MAGIC: &str = "offloop-follow 1";

/// Where a follower stands: the file is at TXID `at`, or at `to` when the
/// apply the record announced committed (`to == at` when none was under
/// way). TXID 0: not known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FollowRecord {
    pub url: String,
    pub at: u64,
    pub to: u64,
}

/// `<database>-follow`.
pub fn record_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push("-follow");
    PathBuf::from(p)
}

impl FollowRecord {
    fn encode(&self) -> String {
        format!(
            "{MAGIC}\nurl {}\nat {}\nto {}\n",
            self.url, self.at, self.to
        )
    }

    fn decode(text: &str) -> Option<FollowRecord> {
        let mut lines = text.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let url = lines.next()?.strip_prefix("url ")?.to_string();
        let at = lines.next()?.strip_prefix("at ")?.parse().ok()?;
        let to = lines.next()?.strip_prefix("to ")?.parse().ok()?;
        (to >= at).then_some(FollowRecord { url, at, to })
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
        let mut temp = path.as_os_str().to_owned();
        temp.push(".tmp");
        let temp = PathBuf::from(temp);
        let mut f = fs::File::create(&temp)?;
        f.write_all(self.encode().as_bytes())?;
        f.sync_all()?;
        drop(f);
        fs::rename(&temp, &path)?;
        sync_dir(&path)
    }
}

/// Syncs the folder holding `path`, so a rename into it survives a crash.
fn sync_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        fs::File::open(dir.unwrap_or(Path::new(".")))?.sync_all()
    }
    #[cfg(not(unix))]
    {
        // Windows cannot open a folder as a file; its renames are
        // journaled by NTFS.
        let _ = path;
        Ok(())
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
        let r = FollowRecord {
            url: "s3://b/p".into(),
            at: 7,
            to: 9,
        };
        r.write(&db).unwrap();
        assert_eq!(FollowRecord::read(&db).unwrap(), Some(r));
        fs::write(record_path(&db), "something else").unwrap();
        assert!(FollowRecord::read(&db).is_err());
        fs::write(record_path(&db), format!("{MAGIC}\nurl x\nat 9\nto 7\n")).unwrap();
        assert!(FollowRecord::read(&db).is_err(), "`to` never behind `at`");
    }
}
