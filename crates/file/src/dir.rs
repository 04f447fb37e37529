//! Making a directory's entries durable: after a rename into it or a new
//! file in it, so that a crash keeps the name. Owns only that call; never
//! creates, lists or removes anything.

use std::io;
use std::path::Path;

/// Makes the entries of directory `dir` durable.
///
/// On Unix this is an fsync of the directory. On Windows it does nothing:
/// a directory cannot be opened as a file there (`File::open` fails), NTFS
/// journals its names itself, and SQLite's own Windows VFS does not sync
/// directories either.
#[cfg(unix)]
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Makes the entries of directory `dir` durable: nothing to do on Windows
/// (see the Unix version).
#[cfg(windows)]
pub fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_syncs_and_a_missing_one_is_an_error_only_where_syncs_happen() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), b"x").unwrap();
        sync_dir(dir.path()).unwrap();
        let missing = sync_dir(&dir.path().join("missing"));
        assert_eq!(missing.is_err(), cfg!(unix));
    }
}
