//! Compaction and retention of a replica, as Litestream 0.5 lays it out:
//! the files of level N−1 newer than level N's last one merge into one
//! level-N file (the newest image of each page wins), and history older
//! than the retention window goes, keeping everything a restore inside the
//! window needs.
//!
//! It works on the replica through its `Store` only, on the caller's thread
//! (the replicator's); it never touches the database, its WAL or the
//! capture log.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use offloop_ltx::{Decoder, Encoder, Header, Txid, HEADER_FLAG_NO_CHECKSUM};

use crate::error::{Error, Result};
use crate::store::{LtxFile, Store, Timestamps, WriteMode, SNAPSHOT_LEVEL};

/// Merges the files of level `level - 1` that follow level `level`'s last
/// file into one file at `level`, and uploads it. Stops at a gap in the
/// TXIDs (the files after it wait for the next round). Returns the new
/// file, or `None` when there was nothing to compact. `scratch` is a folder
/// for the merged file while it uploads.
pub fn compact_level(store: &dyn Store, level: u8, scratch: &Path) -> Result<Option<LtxFile>> {
    let done = store
        .list(level, Txid::FIRST, Timestamps::Listed)?
        .iter()
        .map(|f| f.max_txid)
        .max();
    let from = done.map_or(Txid::FIRST, Txid::next);
    let mut sources: Vec<LtxFile> = store.list(level - 1, from, Timestamps::Listed)?;
    sources.sort_by_key(|f| (f.min_txid, f.max_txid));
    // A contiguous run only; the first file may start anywhere (the level
    // below may begin with a full image).
    let mut run: Vec<LtxFile> = Vec::new();
    for file in sources {
        match run.last() {
            Some(last) if file.min_txid != last.max_txid.next() => break,
            _ => run.push(file),
        }
    }
    let (Some(first), Some(last)) = (run.first().copied(), run.last().copied()) else {
        return Ok(None);
    };
    let mut pages: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let mut header: Option<Header> = None;
    for file in &run {
        let stream = store.open(file, 0..file.size)?;
        let mut decoder =
            Decoder::new(BufReader::with_capacity(1 << 20, stream)).map_err(corrupt(file))?;
        let h = *decoder.header();
        let mut page = vec![0u8; h.page_size as usize];
        while let Some(pgno) = decoder.next_page(&mut page).map_err(corrupt(file))? {
            pages.insert(pgno, page.clone());
        }
        decoder.finish().map_err(corrupt(file))?;
        // A database that shrank drops the pages past its new end.
        pages.retain(|&pgno, _| pgno <= h.commit);
        header = Some(h);
    }
    let Some(h) = header else { return Ok(None) };
    let merged = Header {
        flags: HEADER_FLAG_NO_CHECKSUM,
        page_size: h.page_size,
        commit: h.commit,
        min_txid: first.min_txid.get(),
        max_txid: last.max_txid.get(),
        timestamp: h.timestamp,
        pre_apply_checksum: 0,
        wal_offset: 0,
        wal_size: 0,
        wal_salt1: 0,
        wal_salt2: 0,
        node_id: 0,
    };
    let path = scratch.join(format!("{level}-{}-{}.ltx", first.min_txid, last.max_txid));
    let size = write_pages(&path, merged, &pages)
        .map_err(|e| Error::io("cannot write a compacted file", e))?;
    let file = LtxFile {
        level,
        min_txid: first.min_txid,
        max_txid: last.max_txid,
        size,
        timestamp_ms: h.timestamp,
    };
    let put = store.write(&file, &path, WriteMode::Overwrite);
    let _ = std::fs::remove_file(&path);
    put?;
    Ok(Some(file))
}

fn write_pages(
    path: &Path,
    header: Header,
    pages: &BTreeMap<u32, Vec<u8>>,
) -> std::io::Result<u64> {
    let out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let to_io = |e: offloop_ltx::Error| std::io::Error::other(e.to_string());
    let mut encoder = Encoder::new(out, header).map_err(to_io)?;
    for (&pgno, page) in pages {
        encoder.encode_page(pgno, page).map_err(to_io)?;
    }
    let encoded = encoder.finish(0).map_err(to_io)?;
    let mut out = encoded.writer;
    out.flush()?;
    Ok(encoded.size)
}

fn corrupt(file: &LtxFile) -> impl Fn(offloop_ltx::Error) -> Error + '_ {
    move |source| Error::Ltx {
        file: file.label(),
        source,
    }
}

/// Deletes what no restore inside the window needs. The window's base is
/// the newest snapshot taken before the window began (or the oldest
/// snapshot, when none is that old): older snapshots go, and so do files
/// of levels 1–8 that end at or before it. L0 files go once an L1 file
/// covers them and they are older than `l0_retention`, or once the base
/// covers them.
pub fn enforce_retention(
    store: &dyn Store,
    now_ms: i64,
    retention: Duration,
    l0_retention: Duration,
) -> Result<()> {
    let files: Vec<LtxFile> = store
        .list_all(Timestamps::Listed)?
        .into_iter()
        .flatten()
        .collect();
    let window_start = now_ms - retention.as_millis() as i64;
    let mut snapshots: Vec<&LtxFile> = files.iter().filter(|f| f.level == SNAPSHOT_LEVEL).collect();
    snapshots.sort_by_key(|f| f.max_txid);
    let base = snapshots
        .iter()
        .rev()
        .find(|f| f.timestamp_ms <= window_start)
        .map(|f| f.max_txid);
    let l1_max = files
        .iter()
        .filter(|f| f.level == 1)
        .map(|f| f.max_txid)
        .max();
    let l0_cutoff = now_ms - l0_retention.as_millis() as i64;
    // `None` (no such file) is below every TXID.
    let doomed: Vec<LtxFile> = files
        .iter()
        .filter(|f| match f.level {
            SNAPSHOT_LEVEL => Some(f.max_txid) < base,
            0 => {
                Some(f.max_txid) <= base
                    || (Some(f.max_txid) <= l1_max && f.timestamp_ms < l0_cutoff)
            }
            _ => Some(f.max_txid) <= base,
        })
        .copied()
        .collect();
    if doomed.is_empty() {
        return Ok(());
    }
    store.delete(&doomed)
}
