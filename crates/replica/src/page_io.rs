//! The plain-file reads and writes the stager builds LTX files with:
//! reading a page or the page size of a database file, checksumming a
//! file, and writing one LTX file (synced) from a source of pages.
//!
//! Each call stands alone: it keeps no state, never decides which pages
//! make a file or what its header says (the stager does), and never
//! touches the WAL, the capture log or the replica.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use offloop_file::{PositionedIo, WritableFile};
use offloop_ltx::{Crc64, Encoder, Header};

/// A file's size and CRC-64, read in 1 MiB pieces; `None` when it is absent.
pub(crate) fn file_crc(path: &Path) -> io::Result<Option<(u64, u64)>> {
    let Some(file) = open_optional(path)? else {
        return Ok(None);
    };
    let mut crc = Crc64::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0u64;
    loop {
        let n = file.read_at(&mut buf, at)?;
        if n == 0 {
            return Ok(Some((at, crc.value())));
        }
        crc.update(&buf[..n]);
        at += n as u64;
    }
}

/// Writes an LTX file of `pages` (ascending) to `path` and syncs it;
/// returns its size.
pub(crate) fn write_ltx(
    path: &Path,
    header: Header,
    pages: impl Iterator<Item = u32>,
    mut read: impl FnMut(u32, &mut [u8]) -> io::Result<()>,
) -> io::Result<u64> {
    let file = WritableFile::create(path)?;
    let mut encoder =
        Encoder::new(BufWriter::with_capacity(1 << 20, file), header).map_err(ltx_error)?;
    let mut page = vec![0u8; header.page_size as usize];
    for pgno in pages {
        read(pgno, &mut page)?;
        encoder.encode_page(pgno, &page).map_err(ltx_error)?;
    }
    let encoded = encoder.finish(0).map_err(ltx_error)?;
    let mut writer = encoded.writer;
    writer.flush()?;
    let file = writer.into_inner().map_err(|e| e.into_error())?;
    file.sync()?;
    Ok(encoded.size)
}

pub(crate) fn ltx_error(e: offloop_ltx::Error) -> io::Error {
    io::Error::other(e.to_string())
}

pub(crate) fn open_optional(path: &Path) -> io::Result<Option<File>> {
    match File::open(path) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A page of the database file; zeros past its end (a page the database
/// grew by that no frame wrote).
pub(crate) fn read_db_page(db: Option<&File>, pgno: u32, page: &mut [u8]) -> io::Result<()> {
    page.fill(0);
    let Some(db) = db else { return Ok(()) };
    let at = u64::from(pgno - 1) * page.len() as u64;
    let mut got = 0;
    while got < page.len() {
        match db.read_at(&mut page[got..], at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The page size in a database file's header (bytes 16–17; 1 means 65536).
pub(crate) fn database_page_size(db: &File) -> io::Result<Option<u32>> {
    let mut b = [0u8; 2];
    match db.read_exact_at(&mut b, 16) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    Ok(match u16::from_be_bytes(b) {
        1 => Some(65536),
        n if n >= 512 && n.is_power_of_two() => Some(u32::from(n)),
        _ => None,
    })
}
