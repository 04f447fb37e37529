//! Reads and writes at an offset of a file, the same on every platform.
//! Owns only the platform call; never buffers, never retries beyond what a
//! short read or write needs.
//!
//! One difference stays: on Windows a positioned call also moves the
//! file's cursor (`seek_read`/`seek_write`), on Unix it does not. offloop
//! never mixes cursor I/O with positioned I/O on one handle.

use std::fs::File;
use std::io;

/// Positioned I/O on a file, `std::os::unix::fs::FileExt`'s three methods
/// that offloop uses.
pub trait PositionedIo {
    /// Reads up to `buf.len()` bytes at `offset`; 0 at the end of the file.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

    /// Reads exactly `buf.len()` bytes at `offset`; `UnexpectedEof` if the
    /// file ends first.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;

    /// Writes all of `buf` at `offset`, growing the file if needed.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
}

#[cfg(unix)]
impl PositionedIo for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(self, buf, offset)
    }
}

#[cfg(windows)]
impl PositionedIo for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(self, buf, offset)
    }

    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "failed to fill whole buffer",
                    ))
                }
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn write_all_at(&self, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_write(self, buf, offset) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "failed to write whole buffer",
                    ))
                }
                Ok(n) => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_land_where_asked_and_reads_find_them_or_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.write_all_at(b"world", 6).unwrap();
        file.write_all_at(b"hello ", 0).unwrap();
        let mut all = [0u8; 11];
        file.read_exact_at(&mut all, 0).unwrap();
        assert_eq!(&all, b"hello world");
        assert_eq!(std::fs::read(&path).unwrap(), b"hello world");

        let mut tail = [0u8; 8];
        assert_eq!(file.read_at(&mut tail, 6).unwrap(), 5);
        assert_eq!(&tail[..5], b"world");
        assert_eq!(file.read_at(&mut tail, 11).unwrap(), 0);
        let err = file.read_exact_at(&mut tail, 6).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
