//! The restore plan's files opened for reading: every file's header and
//! tail (its page index) read, a few ranged reads per file all at once,
//! and checked against its name, the other files and the final header
//! before any page is fetched. The full restore and the paged open both
//! start here, so they refuse the same damage with the same words. It
//! reads no page and writes nothing.

use std::ops::Range;

use bytes::Bytes;
use offloop_ltx::{check_tail, decode_tail, tail_size, Header, Tail, HEADER_SIZE, TAIL_FETCH_SIZE};

use crate::error::{Error, Result};
use crate::store::{LtxFile, Store};

/// The first read of a file's end is at least this share of the file (one
/// byte in `INDEX_SHARE`), up to `MAX_TAIL_FETCH`. A page index costs about
/// ten bytes a page and the file a frame a page: 1/250 of the file for
/// 4 KiB pages that LZ4 takes to 2.5 KiB, 1/400 for pages it cannot
/// shrink. So one read usually brings the whole index of a large file in,
/// where a fixed size took a second round for every file of more than a
/// few thousand pages; an index it misses still takes that second round.
const INDEX_SHARE: u64 = 200;
const MAX_TAIL_FETCH: u64 = 16 << 20;

/// How much of a file's end the first read asks for.
fn tail_fetch(size: u64) -> u64 {
    (size / INDEX_SHARE).clamp(TAIL_FETCH_SIZE, MAX_TAIL_FETCH)
}

/// A plan file whose header and tail were read and checked.
pub(crate) struct OpenedFile {
    pub(crate) header_bytes: [u8; HEADER_SIZE],
    pub(crate) header: Header,
    pub(crate) tail: Tail,
    /// The whole file, when it fit in the first read of its tail.
    pub(crate) whole: Option<Bytes>,
    /// The file's first bytes as read: at least its header, the whole file
    /// when `whole` is, and more of the first file when asked for.
    pub(crate) head: Bytes,
    /// Bytes read to open it, in how many requests.
    pub(crate) read: u64,
    pub(crate) requests: u64,
}

/// Reads every plan file's header and tail, `fetches` reads at once, and
/// checks them against their names, each other and the final header before
/// anything else is read: see the module doc. The last file's header is
/// the final one; every file must have the same page size, and the plan's
/// files must hold enough pages to fill its commit size. Errors name the
/// file. `first_head` bytes are read from the start of the plan's first
/// file (its full image) in the same round as its header, for the first
/// pages a paged open needs; 0 reads the header alone.
pub(crate) fn open_plan(
    store: &dyn Store,
    plan: &[LtxFile],
    fetches: usize,
    first_head: u64,
) -> Result<Vec<OpenedFile>> {
    let bad = |file: &LtxFile, m: String| Error::Ltx {
        file: file.label(),
        source: offloop_ltx::Error::Format(m),
    };
    // One round: each file's last bytes (the whole file when small) and,
    // when those miss it, its header.
    let mut reads: Vec<(LtxFile, Range<u64>)> = Vec::new();
    let mut whom: Vec<(usize, bool)> = Vec::new();
    for (i, f) in plan.iter().enumerate() {
        let start = f.size.saturating_sub(tail_fetch(f.size));
        reads.push((*f, start..f.size));
        whom.push((i, false));
        if start > 0 {
            let wanted = if i == 0 { first_head } else { 0 };
            let end = wanted.min(start).max(HEADER_SIZE as u64).min(f.size);
            reads.push((*f, 0..end));
            whom.push((i, true));
        }
    }
    let mut tails: Vec<Bytes> = vec![Bytes::new(); plan.len()];
    let mut read = vec![0u64; plan.len()];
    let mut requests = vec![0u64; plan.len()];
    let mut heads: Vec<Bytes> = vec![Bytes::new(); plan.len()];
    store.read_ranges(&reads, fetches, &mut |k, bytes| {
        let (file, range) = &reads[k];
        check_read(file, range, &bytes)?;
        let (i, is_head) = whom[k];
        read[i] += bytes.len() as u64;
        requests[i] += 1;
        if is_head {
            heads[i] = bytes;
        } else {
            tails[i] = bytes;
        }
        Ok(())
    })?;
    // A second round only for indexes longer than the first read.
    let mut more: Vec<(LtxFile, Range<u64>)> = Vec::new();
    let mut more_of: Vec<usize> = Vec::new();
    for (i, (f, tail)) in plan.iter().zip(&tails).enumerate() {
        let need = tail_size(tail, f.size).map_err(|source| Error::Ltx {
            file: f.label(),
            source,
        })?;
        if need > tail.len() as u64 {
            more.push((*f, f.size - need..f.size));
            more_of.push(i);
        }
    }
    store.read_ranges(&more, fetches, &mut |k, bytes| {
        check_read(&more[k].0, &more[k].1, &bytes)?;
        read[more_of[k]] += bytes.len() as u64;
        requests[more_of[k]] += 1;
        tails[more_of[k]] = bytes;
        Ok(())
    })?;

    let mut opened = Vec::with_capacity(plan.len());
    let counts = read.into_iter().zip(requests);
    for (((f, tail), head), (read, requests)) in plan.iter().zip(tails).zip(heads).zip(counts) {
        let ltx = |source| Error::Ltx {
            file: f.label(),
            source,
        };
        let whole = (tail.len() as u64 == f.size).then(|| tail.clone());
        let head = if whole.is_some() { tail.clone() } else { head };
        let header = Header::decode(&head).map_err(ltx)?;
        if (header.min_txid, header.max_txid) != (f.min_txid, f.max_txid) {
            return Err(bad(
                f,
                format!(
                    "its header covers TXIDs {}-{}, its name {}-{}",
                    header.min_txid, header.max_txid, f.min_txid, f.max_txid
                ),
            ));
        }
        let tail = decode_tail(&tail, f.size).map_err(ltx)?;
        check_tail(&header, &tail).map_err(ltx)?;
        let mut header_bytes = [0u8; HEADER_SIZE];
        header_bytes.copy_from_slice(&head[..HEADER_SIZE]);
        opened.push(OpenedFile {
            header_bytes,
            header,
            tail,
            whole,
            head,
            read,
            requests,
        });
    }
    // One page size: the one most files have (so the odd file is the one
    // named, whichever it is), ties going to the newest file's.
    let page_size = |k: usize| opened[k].header.page_size;
    let votes = |size: u32| opened.iter().filter(|o| o.header.page_size == size).count();
    let common = (0..opened.len())
        .max_by_key(|&k| (votes(page_size(k)), k))
        .map_or(0, page_size);
    if let Some(k) = (0..opened.len()).find(|&k| page_size(k) != common) {
        let other = (0..opened.len())
            .rev()
            .find(|&j| page_size(j) == common)
            .unwrap_or(k);
        return Err(bad(
            &plan[k],
            format!(
                "page size {} where {} of the same plan has {common}",
                page_size(k),
                plan[other].label()
            ),
        ));
    }
    let last = opened[opened.len() - 1].header;
    // Every page but the lock page must come from some file; a commit size
    // they cannot fill is refused before anything is sized from it.
    let held: u64 = opened
        .iter()
        .map(|o| o.tail.index.entries.len() as u64)
        .sum();
    if u64::from(last.commit) > held + 1 {
        return Err(bad(
            &plan[plan.len() - 1],
            format!(
                "its header says the database has {} pages; the plan's files hold {held}",
                last.commit
            ),
        ));
    }
    Ok(opened)
}

/// A ranged read must return the bytes asked for: fewer means the file is
/// shorter than its listing said.
pub(crate) fn check_read(file: &LtxFile, range: &Range<u64>, bytes: &Bytes) -> Result<()> {
    if bytes.len() as u64 != range.end - range.start {
        return Err(Error::Ltx {
            file: file.label(),
            source: offloop_ltx::Error::Format(format!(
                "a read of bytes {range:?} returned {} bytes: the file is shorter than listed",
                bytes.len()
            )),
        });
    }
    Ok(())
}
