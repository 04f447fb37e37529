//! A folder's conditional replace: S3's `If-None-Match: *` and `If-Match`
//! for one small object at the replica's root, built from what a local
//! filesystem guarantees.
//!
//! Every replace takes an exclusive `flock` on `<name>.lock` beside the
//! object, compares the object's version with the one expected, writes the
//! new content to a temporary file, syncs it, and renames it over the
//! object (rename is atomic: a reader sees the old file or the new one),
//! then syncs the folder. Two processes that both go through here are
//! serialised by the lock, so exactly one of two replaces of one version
//! wins. The version is the length and CRC-64 of the object's bytes, as an
//! S3 ETag is their MD5: the lease's bytes name their holder and expiry to
//! the millisecond, so two of its versions never have the same bytes.
//!
//! It also creates an LTX file only if its name is free ([`create_new`]):
//! the file is streamed into a temporary file beside it, synced, and hard
//! linked to its name, which fails when the name is taken. It owns those
//! writes only; it never reads, lists or deletes LTX files.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use offloop_file::WritableFile;

use super::{Expect, Fault, StoreError, Versioned};
use crate::error::Result;

/// The object `name` in the folder `root`, with its version.
pub(crate) fn read(root: &Path, name: &str) -> Result<Option<Versioned>> {
    let path = root.join(name);
    Ok(read_at(&path).map_err(|e| failed("read", &path, e))?)
}

/// Replaces the object `name` in `root` if it is as `expect` says.
pub(crate) fn replace(root: &Path, name: &str, bytes: Bytes, expect: &Expect) -> Result<String> {
    let path = root.join(name);
    let object = path.display().to_string();
    fs::create_dir_all(root).map_err(|e| failed("write", &path, e))?;
    let lock_path = root.join(format!("{name}.lock"));
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| failed("lock", &lock_path, e))?;
    lock.lock().map_err(|e| failed("lock", &lock_path, e))?;
    let current = read_at(&path).map_err(|e| failed("read", &path, e))?;
    let matches = match (expect, &current) {
        (Expect::Absent, None) => true,
        (Expect::Version(v), Some(c)) => *v == c.version,
        _ => false,
    };
    if !matches {
        let found = match &current {
            Some(c) => format!("it is at version {}", c.version),
            None => "it does not exist".into(),
        };
        return Err(StoreError::new(
            Fault::Conflict,
            "replace",
            object,
            format!("expected {expect:?}, but {found}"),
        )
        .into());
    }
    let temp = temp_path(root, name);
    let written = write_synced(&temp, &bytes)
        .and_then(|()| fs::rename(&temp, &path))
        .and_then(|()| offloop_file::sync_dir(root));
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(failed("write", &path, e).into());
    }
    let version = read_at(&path)
        .map_err(|e| failed("read", &path, e))?
        .map(|v| v.version)
        .unwrap_or_default();
    drop(lock);
    Ok(version)
}

/// Creates `dest` with the bytes of the local file `source`, only if no
/// file has that name: S3's `If-None-Match: *` on a folder, so that two
/// writers can never both write one TXID. The bytes are streamed (memory
/// stays bounded whatever the file's size) into a temporary file in
/// `dest`'s folder and synced; a hard link then gives it its name, which
/// the filesystem refuses atomically when the name is taken
/// ([`Fault::Conflict`]); the folder is synced before it returns, so a file
/// this reports written survives a power loss.
pub(crate) fn create_new(dest: &Path, source: &Path) -> Result<()> {
    let dir = dest.parent().unwrap_or(Path::new("."));
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    fs::create_dir_all(dir).map_err(|e| failed("write", dest, e))?;
    let mut input = File::open(source).map_err(|e| StoreError::local("read", source, e))?;
    let temp = temp_path(dir, &name);
    let copied = WritableFile::create(&temp).and_then(|mut out| {
        io::copy(&mut input, &mut out)?;
        out.sync()
    });
    let linked = copied.and_then(|()| fs::hard_link(&temp, dest));
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => offloop_file::sync_dir(dir).map_err(|e| failed("write", dest, e).into()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(StoreError::new(
            Fault::Conflict,
            "create",
            dest.display().to_string(),
            "a file of that name exists: another writer wrote this TXID",
        )
        .into()),
        Err(e) => Err(failed("write", dest, e).into()),
    }
}

fn read_at(path: &Path) -> io::Result<Option<Versioned>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    (&file).read_to_end(&mut bytes)?;
    let bytes = Bytes::from(bytes);
    let version = format!("{:x}-{:016x}", bytes.len(), offloop_ltx::crc64(&bytes));
    Ok(Some(Versioned { bytes, version }))
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = WritableFile::create(path)?;
    f.write_all(bytes)?;
    f.sync()
}

/// A name beside `name` that no other write in this process or another
/// uses at the same time (two databases of one process may race for one
/// TXID's name).
fn temp_path(root: &Path, name: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    root.join(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

fn failed(op: &'static str, path: &Path, e: io::Error) -> StoreError {
    let fault = if e.kind() == io::ErrorKind::PermissionDenied {
        Fault::Denied
    } else {
        Fault::Unavailable
    };
    StoreError::new(fault, op, path.display().to_string(), e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ltx_file_is_created_only_if_its_name_is_free_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&first, vec![7u8; 3 << 20]).unwrap();
        fs::write(&second, b"another writer").unwrap();
        let dest = dir
            .path()
            .join("ltx/0/0000000000000001-0000000000000001.ltx");
        create_new(&dest, &first).unwrap();
        let refused = create_new(&dest, &second).unwrap_err();
        assert_eq!(refused.fault(), Some(Fault::Conflict), "{refused}");
        assert_eq!(fs::read(&dest).unwrap(), vec![7u8; 3 << 20]);
        let names: Vec<_> = fs::read_dir(dest.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![dest.file_name().unwrap().to_owned()]);
        let missing = create_new(&dir.path().join("c.ltx"), &dir.path().join("gone")).unwrap_err();
        assert_eq!(missing.fault(), Some(Fault::Local), "{missing}");
    }

    #[test]
    fn a_replace_wins_only_against_the_version_it_read() {
        // Each write's bytes differ, as the lease's always do.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(read(root, "lock.json").unwrap(), None);
        let v1 = replace(root, "lock.json", Bytes::from("a"), &Expect::Absent).unwrap();
        let again = replace(root, "lock.json", Bytes::from("b"), &Expect::Absent).unwrap_err();
        assert_eq!(again.fault(), Some(Fault::Conflict), "{again}");
        let read1 = read(root, "lock.json").unwrap().unwrap();
        assert_eq!(
            (read1.bytes.as_ref(), read1.version.as_str()),
            (&b"a"[..], v1.as_str())
        );
        let v2 = replace(
            root,
            "lock.json",
            Bytes::from("c"),
            &Expect::Version(v1.clone()),
        )
        .unwrap();
        assert_ne!(v1, v2);
        let stale = replace(root, "lock.json", Bytes::from("d"), &Expect::Version(v1)).unwrap_err();
        assert_eq!(stale.fault(), Some(Fault::Conflict), "{stale}");
        assert_eq!(
            read(root, "lock.json").unwrap().unwrap().bytes.as_ref(),
            b"c"
        );
    }

    #[test]
    fn of_many_threads_replacing_one_version_exactly_one_wins() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let v = replace(&root, "lock.json", Bytes::from("initial"), &Expect::Absent).unwrap();
        let wins: usize = std::thread::scope(|s| {
            let threads: Vec<_> = (0..16)
                .map(|i| {
                    let (root, v) = (&root, v.clone());
                    s.spawn(move || {
                        let bytes = Bytes::from(format!("{i}"));
                        replace(root, "lock.json", bytes, &Expect::Version(v)).is_ok()
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().unwrap() as usize)
                .sum()
        });
        assert_eq!(wins, 1);
    }
}
