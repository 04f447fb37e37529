//! Compaction and retention of a replica, as Litestream 0.5 lays it out:
//! the files of level N−1 newer than level N's last one merge into one
//! level-N file (the newest image of each page wins), and history older
//! than the retention window goes, keeping everything a restore inside the
//! window needs.
//!
//! A merge streams: every input is read in page order at once and merged
//! k-way into the encoder, which writes the new file to disk, so memory is
//! one read buffer and one page per input, not the pages of a level (as
//! Litestream's compactor does it).
//!
//! It works on the replica through its `Store` only, on the caller's thread
//! (the replicator's); it never touches the database, its WAL or the
//! capture log.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
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
    let inputs = run
        .iter()
        .map(|file| Input::open(store, file))
        .collect::<Result<Vec<Input>>>()?;
    let h = inputs[inputs.len() - 1].header;
    for (file, input) in run.iter().zip(&inputs) {
        if input.header.page_size != h.page_size {
            return Err(corrupt(file)(offloop_ltx::Error::Format(format!(
                "page size {} where the newest file's is {}",
                input.header.page_size, h.page_size
            ))));
        }
    }
    let merged = Header {
        flags: HEADER_FLAG_NO_CHECKSUM,
        page_size: h.page_size,
        commit: h.commit,
        min_txid: first.min_txid,
        max_txid: last.max_txid,
        timestamp: h.timestamp,
        ..Header::default()
    };
    let path = scratch.join(format!("{level}-{}-{}.ltx", first.min_txid, last.max_txid));
    let size = merge(&run, inputs, &path, merged).inspect_err(|_| {
        let _ = std::fs::remove_file(&path);
    })?;
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

/// Bytes each input's reader buffers: the merge holds this and one page
/// per input, whatever the files' sizes.
const INPUT_BUFFER: usize = 128 << 10;

/// One file being merged: its decoder and the page it is at.
struct Input {
    decoder: Decoder<BufReader<Box<dyn Read + Send>>>,
    header: Header,
    /// The page the decoder is at, `None` once its pages are done.
    at: Option<u32>,
    page: Vec<u8>,
}

impl Input {
    fn open(store: &dyn Store, file: &LtxFile) -> Result<Input> {
        let stream = store.open(file, 0..file.size)?;
        let decoder =
            Decoder::new(BufReader::with_capacity(INPUT_BUFFER, stream)).map_err(corrupt(file))?;
        let header = *decoder.header();
        if (header.min_txid, header.max_txid) != (file.min_txid, file.max_txid) {
            return Err(corrupt(file)(offloop_ltx::Error::Format(format!(
                "its header covers TXIDs {}-{}",
                header.min_txid, header.max_txid
            ))));
        }
        let mut input = Input {
            decoder,
            header,
            at: None,
            page: vec![0u8; header.page_size as usize],
        };
        input.advance(file)?;
        Ok(input)
    }

    fn advance(&mut self, file: &LtxFile) -> Result<()> {
        self.at = self
            .decoder
            .next_page(&mut self.page)
            .map_err(corrupt(file))?;
        Ok(())
    }
}

/// Merges `inputs` (the files of `run`, oldest first) into a new file at
/// `path`: a k-way merge in page order, each page taken from the newest
/// input holding it, so only one page per input is ever held. A page is
/// dropped when a later file shrank the database below it (as applying the
/// files in order would). Every input's checksum is verified when its
/// pages are done, before the merged file is handed back to be written.
fn merge(run: &[LtxFile], mut inputs: Vec<Input>, path: &Path, header: Header) -> Result<u64> {
    let local = |e: std::io::Error| Error::io("cannot write a compacted file", e);
    let encoding = |e: offloop_ltx::Error| Error::io("cannot write a compacted file", to_io(e));
    // limits[k]: the smallest commit size from input k on.
    let mut limits: Vec<u32> = inputs.iter().map(|i| i.header.commit).collect();
    for k in (0..limits.len().saturating_sub(1)).rev() {
        limits[k] = limits[k].min(limits[k + 1]);
    }
    let out = BufWriter::with_capacity(1 << 20, File::create(path).map_err(local)?);
    let mut encoder = Encoder::new(out, header).map_err(encoding)?;
    while let Some(pgno) = inputs.iter().filter_map(|i| i.at).min() {
        let newest = (0..inputs.len())
            .rev()
            .find(|&k| inputs[k].at == Some(pgno))
            .unwrap_or_default();
        if pgno <= limits[newest] {
            encoder
                .encode_page(pgno, &inputs[newest].page)
                .map_err(encoding)?;
        }
        for (file, input) in run.iter().zip(inputs.iter_mut()) {
            if input.at == Some(pgno) {
                input.advance(file)?;
            }
        }
    }
    let encoded = encoder.finish(0).map_err(encoding)?;
    let mut out = encoded.writer;
    out.flush().map_err(local)?;
    for (file, input) in run.iter().zip(inputs) {
        input.decoder.finish().map_err(corrupt(file))?;
    }
    Ok(encoded.size)
}

fn to_io(e: offloop_ltx::Error) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

fn corrupt(file: &LtxFile) -> impl Fn(offloop_ltx::Error) -> Error + '_ {
    move |source| Error::Ltx {
        file: file.label(),
        source,
    }
}

/// Deletes what no restore inside the window needs (see [`doomed`]), and
/// says when (ms since the epoch) the files left will next hold something
/// to delete as time passes, `None` when they never will: a replica that
/// nothing new reaches need not be listed again before then.
pub fn enforce_retention(
    store: &dyn Store,
    now_ms: i64,
    retention: Duration,
    l0_retention: Duration,
) -> Result<Option<i64>> {
    let mut files: Vec<LtxFile> = store
        .list_all(Timestamps::Listed)?
        .into_iter()
        .flatten()
        .collect();
    let doomed = doomed(&files, now_ms, retention, l0_retention);
    if !doomed.is_empty() {
        store.delete(&doomed)?;
        files.retain(|f| !doomed.contains(f));
    }
    Ok(next_retention(&files, now_ms, retention, l0_retention))
}

/// What no restore inside the window needs at `now_ms`. The window's base
/// is the newest snapshot taken before the window began (or the oldest
/// snapshot, when none is that old): older snapshots go, and so do files
/// of levels 1–8 that end at or before it. L0 files go once an L1 file
/// covers them and they are older than `l0_retention`, or once the base
/// covers them.
pub fn doomed(
    files: &[LtxFile],
    now_ms: i64,
    retention: Duration,
    l0_retention: Duration,
) -> Vec<LtxFile> {
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
    files
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
        .collect()
}

/// The first moment after `now_ms` at which [`doomed`] finds something in
/// `files` (what retention left), as the clock alone moves the window:
/// only an L0 file ageing past `l0_retention` or a snapshot ageing into
/// the window's base can change the answer, so only those moments are
/// tried. `None`: nothing here ever goes unless the replica changes.
pub fn next_retention(
    files: &[LtxFile],
    now_ms: i64,
    retention: Duration,
    l0_retention: Duration,
) -> Option<i64> {
    let l0_ms = l0_retention.as_millis() as i64;
    let window_ms = retention.as_millis() as i64;
    let mut moments: Vec<i64> = files
        .iter()
        .filter_map(|f| match f.level {
            // Doomed once strictly older than the cutoff.
            0 => Some(f.timestamp_ms + l0_ms + 1),
            SNAPSHOT_LEVEL => Some(f.timestamp_ms + window_ms),
            _ => None,
        })
        .filter(|&t| t > now_ms)
        .collect();
    moments.sort_unstable();
    moments.dedup();
    moments
        .into_iter()
        .find(|&t| !doomed(files, t, retention, l0_retention).is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(level: u8, min: u64, max: u64, timestamp_ms: i64) -> LtxFile {
        LtxFile {
            level,
            min_txid: Txid::new(min).unwrap(),
            max_txid: Txid::new(max).unwrap(),
            size: 1,
            timestamp_ms,
        }
    }

    #[test]
    fn retention_is_next_due_when_a_file_ages_out_and_never_when_none_will() {
        let (window, l0) = (Duration::from_millis(10_000), Duration::from_millis(300));
        // A snapshot, L0 files 2-3 covered by L1, and L0 file 4 not.
        let files = [
            file(9, 1, 1, 1_000),
            file(0, 2, 2, 1_100),
            file(0, 3, 3, 1_200),
            file(1, 2, 3, 1_250),
            file(0, 4, 4, 1_300),
        ];
        assert!(doomed(&files, 1_300, window, l0).is_empty());
        // L0 file 2 is the first to go: once older than l0_retention.
        assert_eq!(next_retention(&files, 1_300, window, l0), Some(1_401));
        assert_eq!(doomed(&files, 1_401, window, l0), vec![files[1]]);
        // With only what is never doomed by age alone (the one snapshot
        // is the base, and nothing ends before it), nothing is ever due.
        let kept = [file(9, 1, 4, 1_000), file(0, 5, 5, 1_300)];
        assert_eq!(next_retention(&kept, 1_300, window, l0), None);
        // A second snapshot ageing into the window's base dooms the first.
        let two = [file(9, 1, 4, 1_000), file(9, 1, 6, 5_000)];
        assert_eq!(next_retention(&two, 5_000, window, l0), Some(15_000));
        assert_eq!(doomed(&two, 15_000, window, l0), vec![two[0]]);
    }
}
