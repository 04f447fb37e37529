//! The old primary's rejoin: a database file that was this replica's own
//! writer, opened again to follow the replica, is set aside whole (the
//! file, its `-wal` and `-shm`, its replicator folder), renamed and never
//! deleted, so the follower starts from the replica and the commits only
//! that file holds (a fenced writer's, or those not yet uploaded) are
//! kept for whoever must look at them.
//!
//! A file is this replica's writer's when its replicator folder names it
//! a lease holder for exactly this replica URL (`mark_writer`, written by
//! every writer that takes the lease) and no follower's record is beside
//! it. Any other file that is not a follower's is left alone.
//!
//! It only renames and writes the small records in the replicator's
//! folder; it never reads a database page and never talks to a replica.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use offloop_file::sync_parent;

use crate::follow_record::record_path;

/// The replica a lease holder writes to, beside its `holder` id.
pub(crate) const URL_FILE: &str = "url";
/// A rejoin under way: the name the file is being renamed to, so that
/// one cut short by a crash finishes under the same name.
const ASIDE_FILE: &str = "aside";

/// Records, in the replicator folder `dir`, that its database writes to
/// `url` as a lease holder.
pub(crate) fn mark_writer(dir: &Path, url: &str) -> io::Result<()> {
    let path = dir.join(URL_FILE);
    if fs::read_to_string(&path).is_ok_and(|u| u == url) {
        return Ok(());
    }
    write_synced(&path, url)
}

/// Sets the database at `db` aside when it is `url`'s own writer's file
/// (or finishes a rejoin a crash cut short): the path it is kept at, or
/// `None` when there was nothing to set aside.
pub fn set_aside(db: &Path, url: &str) -> io::Result<Option<PathBuf>> {
    let dir = with_suffix(db, "-replica");
    let kept = match fs::read_to_string(dir.join(ASIDE_FILE)) {
        Ok(name) if !name.is_empty() => PathBuf::from(name),
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if !db.exists() || record_path(db).exists() || !writes_to(&dir, url)? {
                return Ok(None);
            }
            let kept = kept_name(db);
            let text = kept.to_str().ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "the path is not UTF-8")
            })?;
            write_synced(&dir.join(ASIDE_FILE), text)?;
            kept
        }
        Err(e) => return Err(e),
    };
    // The -wal first: a -wal left behind with no database would be taken
    // for a stale one and replaced by the restore that follows.
    for suffix in ["-wal", "-shm", ""] {
        rename_if_present(&with_suffix(db, suffix), &with_suffix(&kept, suffix))?;
    }
    rename_if_present(&dir, &with_suffix(&kept, "-replica"))?;
    sync_parent(db)?;
    Ok(Some(kept))
}

/// Whether the replicator folder `dir` is a lease holder's for `url`.
fn writes_to(dir: &Path, url: &str) -> io::Result<bool> {
    if !dir.join("holder").exists() {
        return Ok(false);
    }
    match fs::read_to_string(dir.join(URL_FILE)) {
        Ok(u) => Ok(u == url),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// `<db>.diverged-<UTC time>`, unused so far.
fn kept_name(db: &Path) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let base = with_suffix(db, &format!(".diverged-{stamp}"));
    let mut kept = base.clone();
    let mut n = 1;
    while kept.exists() || with_suffix(&kept, "-wal").exists() {
        n += 1;
        kept = with_suffix(&base, &format!("-{n}"));
    }
    kept
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

fn rename_if_present(from: &Path, to: &Path) -> io::Result<()> {
    match fs::rename(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Replaces the file at `path` with `text`, and its name, durably.
fn write_synced(path: &Path, text: &str) -> io::Result<()> {
    offloop_file::replace_file(path, text.as_bytes())?;
    sync_parent(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_replicas_own_writer_is_set_aside_and_nothing_is_deleted() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("app.db");
        let dir = with_suffix(&db, "-replica");
        fs::write(&db, b"main").unwrap();
        fs::write(with_suffix(&db, "-wal"), b"wal").unwrap();
        // Not a holder: left alone.
        assert_eq!(set_aside(&db, "s3://b/p").unwrap(), None);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("holder"), "h:1").unwrap();
        mark_writer(&dir, "s3://b/other").unwrap();
        // Another replica's writer: left alone.
        assert_eq!(set_aside(&db, "s3://b/p").unwrap(), None);
        mark_writer(&dir, "s3://b/p").unwrap();
        // A follower's file (its record beside it): left alone.
        fs::write(record_path(&db), "record").unwrap();
        assert_eq!(set_aside(&db, "s3://b/p").unwrap(), None);
        fs::remove_file(record_path(&db)).unwrap();
        let kept = set_aside(&db, "s3://b/p").unwrap().unwrap();
        assert!(!db.exists() && !with_suffix(&db, "-wal").exists() && !dir.exists());
        assert_eq!(fs::read(&kept).unwrap(), b"main");
        assert_eq!(fs::read(with_suffix(&kept, "-wal")).unwrap(), b"wal");
        assert!(with_suffix(&kept, "-replica").join("holder").exists());
        assert!(kept.to_str().unwrap().contains("app.db.diverged-"));
    }

    #[test]
    fn a_rejoin_cut_short_finishes_under_the_same_name() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("app.db");
        let dir = with_suffix(&db, "-replica");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("holder"), "h:1").unwrap();
        mark_writer(&dir, "file:///r").unwrap();
        fs::write(&db, b"main").unwrap();
        fs::write(with_suffix(&db, "-wal"), b"wal").unwrap();
        // A crash after the -wal was renamed, before the file was.
        let kept = kept_name(&db);
        write_synced(&dir.join(ASIDE_FILE), kept.to_str().unwrap()).unwrap();
        fs::rename(with_suffix(&db, "-wal"), with_suffix(&kept, "-wal")).unwrap();
        assert_eq!(set_aside(&db, "file:///r").unwrap(), Some(kept.clone()));
        assert_eq!(fs::read(&kept).unwrap(), b"main");
        assert_eq!(fs::read(with_suffix(&kept, "-wal")).unwrap(), b"wal");
        assert!(!dir.exists());
    }
}
