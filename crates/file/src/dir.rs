//! Making a directory's entries durable: after a rename into it or a new
//! file in it, so that a crash keeps the name. Owns only that call (the one
//! sync of a handle not open for writing: a directory cannot be opened for
//! writing, and Windows, which would refuse it, never gets here); never
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

/// Makes the entries of the folder holding `path` durable (the current
/// folder for a bare name): after `path` was created, renamed or removed.
pub fn sync_parent(path: &Path) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    sync_dir(dir.unwrap_or(Path::new(".")))
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

    #[test]
    fn the_parent_of_a_bare_name_is_the_current_folder() {
        let dir = tempfile::tempdir().unwrap();
        sync_parent(&dir.path().join("f")).unwrap();
        sync_parent(Path::new("f")).unwrap();
        let missing = sync_parent(&dir.path().join("missing").join("f"));
        assert_eq!(missing.is_err(), cfg!(unix));
    }
}
