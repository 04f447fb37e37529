//! Files written to reach stable storage: the only way offloop opens a
//! file it will sync, and the only place that syncs one. Owns opening for
//! writing, the sync itself, and replacing a small file through a synced
//! temporary; never decides what a file holds or where it lives.
//!
//! Windows flushes a file (`FlushFileBuffers`, behind `sync_all` and
//! `sync_data`) only through a handle with write access: through one from
//! `File::open` it fails with "Access denied. (os error 5)", where Unix
//! syncs any descriptor, so the mistake passes every test on Linux. A
//! [`WritableFile`] can only be opened for writing, and it is the only
//! type offloop syncs (a test of the repository checks that no other file
//! calls `sync_all` or `sync_data`).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A file open for reading and writing, which can therefore be synced on
/// every platform. Everything else a [`File`] offers is reached through
/// `Deref` (positioned I/O, `set_len`, `metadata`).
#[derive(Debug)]
pub struct WritableFile(File);

impl WritableFile {
    /// Creates the file at `path`, or empties the one there.
    pub fn create(path: &Path) -> io::Result<Self> {
        Self::open_with(path, OpenOptions::new().create(true).truncate(true))
    }

    /// Creates the file at `path`; `AlreadyExists` if there is one.
    pub fn create_new(path: &Path) -> io::Result<Self> {
        Self::open_with(path, OpenOptions::new().create_new(true))
    }

    /// Opens the existing file at `path`; `NotFound` if there is none.
    pub fn open(path: &Path) -> io::Result<Self> {
        Self::open_with(path, &mut OpenOptions::new())
    }

    fn open_with(path: &Path, options: &mut OpenOptions) -> io::Result<Self> {
        options.read(true).write(true).open(path).map(WritableFile)
    }

    /// Flushes the file's data and metadata to stable storage.
    pub fn sync(&self) -> io::Result<()> {
        self.0.sync_all()
    }

    /// Flushes the file's data to stable storage, and of its metadata only
    /// what reading the data back needs (its size): `fdatasync` on Linux.
    pub fn sync_contents(&self) -> io::Result<()> {
        self.0.sync_data()
    }
}

impl Deref for WritableFile {
    type Target = File;

    fn deref(&self) -> &File {
        &self.0
    }
}

impl Write for WritableFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Replaces the file at `path` with `bytes`, so that a crash leaves the old
/// file or the new one whole: written to `<path>.tmp`, synced through the
/// handle that wrote it, then renamed over `path`. The folder is not
/// synced: call [`sync_parent`](crate::sync_parent) after it where the new
/// name itself must survive a crash.
pub fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut temp = path.as_os_str().to_owned();
    temp.push(".tmp");
    let temp = PathBuf::from(temp);
    let mut file = WritableFile::create(&temp)?;
    file.write_all(bytes)?;
    file.sync()?;
    drop(file);
    fs::rename(&temp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PositionedIo;

    #[test]
    fn every_way_to_open_one_can_write_and_sync() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let created = WritableFile::create_new(&path).unwrap();
        created.write_all_at(b"new", 0).unwrap();
        created.sync().unwrap();
        assert_eq!(
            WritableFile::create_new(&path).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );

        let opened = WritableFile::open(&path).unwrap();
        opened.write_all_at(b"!", 3).unwrap();
        opened.sync_contents().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new!");

        let emptied = WritableFile::create(&path).unwrap();
        assert_eq!(emptied.metadata().unwrap().len(), 0);
        emptied.write_all_at(b"again", 0).unwrap();
        emptied.sync().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"again");

        let missing = WritableFile::open(&dir.path().join("missing")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_replaced_file_holds_the_new_bytes_and_no_temporary_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("record");
        replace_file(&path, b"first").unwrap();
        replace_file(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["record"]);
    }
}
