//! Restore: rebuild a database file from its replica, at the latest state
//! or at a point in time, and prove the result.
//!
//! The plan's files are fetched several at once (the store's threads); as
//! each arrives its tail (page index) is read and its frames are cut into
//! chunks that a pool of decoder threads decompresses and writes straight
//! to their place in a temporary file. Files may arrive and decode in any
//! order: a page is written only by the newest plan file holding it (a
//! per-page owner, under striped locks), so the result is that of applying
//! the files in order. Every file's checksum is verified from its chunks'
//! CRCs, and when the replica tracks database checksums the finished file
//! must sum to the last file's post-apply checksum. Only then is the
//! temporary file renamed over the output.
//!
//! The output is the database image and nothing else, as `litestream
//! restore` leaves it: no `-wal`, and the journal mode recorded in the
//! image's header (WAL for a replicated database).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use offloop_ltx::{
    check_layout, decode_frames, decode_tail, verify_file_checksum, Crc64, DatabaseChecksum,
    Header, IndexEntry, Tail, Txid, HEADER_SIZE,
};

use crate::error::{Error, Result};
use crate::plan::{plan_restore, Target};
use crate::store::{LtxFile, ReplicaStore, Store};

/// Frames per decoding job: small enough to spread one snapshot over every
/// decoder thread, large enough that queueing costs nothing next to it.
const CHUNK_FRAMES: usize = 512;
/// Locks guarding page owners; a page's lock is `pgno % STRIPES`.
const STRIPES: usize = 1024;

#[derive(Clone, Debug)]
pub struct RestoreOptions {
    /// Restore up to this TXID (it must end an LTX file). Not with `timestamp`.
    pub txid: Option<Txid>,
    /// Restore the last state written strictly before this time (ms since
    /// the epoch). Not with `txid`.
    pub timestamp: Option<i64>,
    /// Replace an existing output file (and drop its `-wal` and `-shm`).
    pub overwrite: bool,
    /// LTX files fetched at once.
    pub fetches: usize,
    /// Threads decoding pages.
    pub threads: usize,
}

impl Default for RestoreOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        RestoreOptions {
            txid: None,
            timestamp: None,
            overwrite: false,
            fetches: 8,
            threads: cores.clamp(2, 8),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoreReport {
    /// The TXID the database was restored to (the last file's max TXID).
    pub txid: Txid,
    /// The last file's LTX timestamp, ms since the epoch.
    pub timestamp: i64,
    pub page_size: u32,
    /// The database's size in pages.
    pub pages: u32,
    /// LTX files applied.
    pub files: usize,
    /// Bytes read from the replica.
    pub bytes_fetched: u64,
    /// Whether the database was checked against a post-apply checksum
    /// (only replicas that track database checksums carry one; Litestream's
    /// do not, and their files' own checksums are verified either way).
    pub checksum_verified: bool,
}

/// Restores the replica in `store` to `output`.
pub fn restore(
    store: &ReplicaStore,
    output: &Path,
    opts: &RestoreOptions,
) -> Result<RestoreReport> {
    let target = match (opts.txid, opts.timestamp) {
        (Some(_), Some(_)) => {
            return Err(Error::Config(
                "restore to a txid or a timestamp, not both".into(),
            ))
        }
        (Some(txid), None) => Target::Txid(txid),
        (None, Some(ms)) => Target::Timestamp(ms),
        (None, None) => Target::Latest,
    };
    let wal = sidecar(output, "-wal");
    let shm = sidecar(output, "-shm");
    if output.is_dir() {
        return Err(Error::Config(format!("{} is a folder", output.display())));
    }
    if !opts.overwrite && (output.exists() || wal.exists()) {
        return Err(Error::Exists(output.to_path_buf()));
    }

    let plan = plan_restore(store, target)?;
    let last = plan
        .last()
        .ok_or_else(|| Error::Plan("the replica holds no LTX files".into()))?;
    let head = store.read_range(last, 0..HEADER_SIZE as u64)?;
    let final_header = Header::decode(&head).map_err(|source| Error::Ltx {
        file: last.name(),
        source,
    })?;

    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("create {}", dir.display()), e))?;
    }
    let tmp = sidecar(output, ".tmp");
    let guard = TempFile(Some(tmp.clone()));
    // Read back too: the post-apply checksum is summed from the file.
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(|e| Error::io(format!("create {}", tmp.display()), e))?;
    let page_size = final_header.page_size;
    let commit = final_header.commit;
    file.set_len(u64::from(commit) * u64::from(page_size))
        .map_err(|e| Error::io(format!("size {}", tmp.display()), e))?;

    let applied = apply(store, &plan, &file, page_size, commit, opts)?;
    let last_trailer = applied.last_trailer;
    let checksum_verified = last_trailer.post_apply_checksum != 0;
    if checksum_verified {
        let sum = database_checksum(&file, page_size, commit, opts.threads)?;
        if sum != last_trailer.post_apply_checksum {
            return Err(Error::Verify(format!(
                "the restored database sums to {sum:016x}, the replica says {:016x}",
                last_trailer.post_apply_checksum
            )));
        }
    }

    file.sync_all()
        .map_err(|e| Error::io(format!("sync {}", tmp.display()), e))?;
    drop(file);
    for stale in [&wal, &shm] {
        match std::fs::remove_file(stale) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(format!("remove {}", stale.display()), e)),
        }
    }
    std::fs::rename(&tmp, output).map_err(|e| {
        Error::io(
            format!("rename {} to {}", tmp.display(), output.display()),
            e,
        )
    })?;
    guard.keep();
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(format!("sync {}", dir.display()), e))?;
    }

    Ok(RestoreReport {
        txid: last.max_txid,
        timestamp: final_header.timestamp,
        page_size,
        pages: commit,
        files: plan.len(),
        bytes_fetched: applied.bytes_fetched + HEADER_SIZE as u64,
        checksum_verified,
    })
}

/// One fetched file on its way through the decoders.
struct Arrived {
    /// A copy, so the file's bytes are freed once its chunks are decoded.
    header_bytes: Vec<u8>,
    header: Header,
    tail: Tail,
    /// Each chunk's CRC once decoded, in file order.
    chunks: Vec<Option<Crc64>>,
}

struct Job {
    file: usize,
    chunk: usize,
    bytes: Bytes,
    entries: Arc<[IndexEntry]>,
    range: std::ops::Range<usize>,
}

struct Applied {
    bytes_fetched: u64,
    last_trailer: offloop_ltx::Trailer,
}

/// Fetches, verifies and writes every file of the plan into `file`.
fn apply(
    store: &ReplicaStore,
    plan: &[LtxFile],
    file: &File,
    page_size: u32,
    commit: u32,
    opts: &RestoreOptions,
) -> Result<Applied> {
    let pages = PageOwners::new(commit);
    let abort = AtomicBool::new(false);
    let threads = opts.threads.max(1);
    let (job_tx, job_rx) = crossbeam_channel::bounded::<Job>(threads * 2);
    let (done_tx, done_rx) = crossbeam_channel::unbounded::<(usize, usize, Result<Crc64>)>();
    let mut arrived: Vec<Option<Arrived>> = plan.iter().map(|_| None).collect();
    let mut bytes_fetched = 0u64;

    let fetched = std::thread::scope(|s| {
        for n in 0..threads {
            let (jobs, done) = (job_rx.clone(), done_tx.clone());
            let (pages, abort) = (&pages, &abort);
            std::thread::Builder::new()
                .name(format!("offloop-restore-{n}"))
                .spawn_scoped(s, move || {
                    for job in jobs {
                        // After an error the queue is drained unread.
                        if abort.load(Ordering::Relaxed) {
                            continue;
                        }
                        let result = catch_unwind(AssertUnwindSafe(|| {
                            decode_chunk(&job, file, pages, page_size)
                        }))
                        .unwrap_or_else(|p| Err(Error::Panic(panic_message(p))));
                        if done.send((job.file, job.chunk, result)).is_err() {
                            return;
                        }
                    }
                })
                .map_err(|e| Error::io("start a restore thread", e))?;
        }
        drop(done_tx);
        drop(job_rx);

        let fetched = store.fetch_all(plan, opts.fetches, |i, bytes| {
            if abort.load(Ordering::Relaxed) {
                return Err(Error::Plan("restore stopped after an error".into()));
            }
            bytes_fetched += bytes.len() as u64;
            let info = &plan[i];
            let (header, tail) =
                open_file(info, &bytes, page_size).map_err(|source| Error::Ltx {
                    file: format!("{} (level {})", info.name(), info.level),
                    source,
                })?;
            let entries: Arc<[IndexEntry]> = tail.index.entries.clone().into();
            let chunks = entries.len().div_ceil(CHUNK_FRAMES);
            arrived[i] = Some(Arrived {
                header_bytes: bytes[..HEADER_SIZE].to_vec(),
                header,
                tail,
                chunks: vec![None; chunks],
            });
            for chunk in 0..chunks {
                let start = chunk * CHUNK_FRAMES;
                let job = Job {
                    file: i,
                    chunk,
                    bytes: bytes.clone(),
                    entries: entries.clone(),
                    range: start..(start + CHUNK_FRAMES).min(entries.len()),
                };
                job_tx
                    .send(job)
                    .map_err(|_| Error::Panic("every restore thread is gone".into()))?;
            }
            Ok(())
        });
        if fetched.is_err() {
            abort.store(true, Ordering::Relaxed);
        }
        drop(job_tx);
        let mut decode_error = None;
        for (i, chunk, result) in done_rx {
            match result {
                Ok(crc) => {
                    if let Some(a) = arrived[i].as_mut() {
                        a.chunks[chunk] = Some(crc);
                    }
                }
                Err(e) => {
                    abort.store(true, Ordering::Relaxed);
                    decode_error.get_or_insert(e);
                }
            }
        }
        // A decoding error stops the fetching too: report the cause.
        decode_error.or(fetched.err()).map_or(Ok(()), Err)
    });
    fetched?;

    let mut prev: Option<&Arrived> = None;
    for (info, a) in plan.iter().zip(&arrived) {
        let a = a
            .as_ref()
            .ok_or_else(|| Error::Verify(format!("{} was never fetched", info.label())))?;
        let crcs = a
            .chunks
            .iter()
            .map(|c| {
                c.ok_or_else(|| Error::Verify(format!("{} was not fully decoded", info.name())))
            })
            .collect::<Result<Vec<Crc64>>>()?;
        verify_file_checksum(&a.header_bytes, &crcs, &a.tail).map_err(|source| Error::Ltx {
            file: format!("{} (level {})", info.name(), info.level),
            source,
        })?;
        if let Some(p) = prev {
            let chained = p.header.has_checksums()
                && a.header.has_checksums()
                && a.header.min_txid == p.header.max_txid.saturating_add(1);
            if chained && a.header.pre_apply_checksum != p.tail.trailer.post_apply_checksum {
                return Err(Error::Verify(format!(
                    "{} does not follow the file before it (pre-apply checksum)",
                    info.name()
                )));
            }
        }
        prev = Some(a);
    }
    if let Some(missing) = pages.first_missing(page_size) {
        return Err(Error::Verify(format!(
            "page {missing} is in none of the plan's files"
        )));
    }
    let last_trailer = prev
        .ok_or_else(|| Error::Plan("the replica holds no LTX files".into()))?
        .tail
        .trailer;
    Ok(Applied {
        bytes_fetched,
        last_trailer,
    })
}

/// Reads a fetched file's header and tail and checks they fit the plan.
fn open_file(info: &LtxFile, bytes: &[u8], page_size: u32) -> offloop_ltx::Result<(Header, Tail)> {
    let bad = |m: String| offloop_ltx::Error::Format(m);
    let header = Header::decode(bytes)?;
    if (header.min_txid, header.max_txid) != (info.min_txid.get(), info.max_txid.get()) {
        return Err(bad(format!(
            "its header covers {:016x}-{:016x}",
            header.min_txid, header.max_txid
        )));
    }
    if header.page_size != page_size {
        return Err(bad(format!(
            "page size {} where the database's is {page_size}",
            header.page_size
        )));
    }
    let tail = decode_tail(bytes, bytes.len() as u64)?;
    check_layout(&tail)?;
    Ok((header, tail))
}

fn decode_chunk(job: &Job, file: &File, pages: &PageOwners, page_size: u32) -> Result<Crc64> {
    let entries = &job.entries[job.range.clone()];
    decode_frames(&job.bytes, 0, page_size, entries, |pgno, data| {
        pages
            .write(job.file, pgno, data, file, page_size)
            .map_err(offloop_ltx::Error::Io)
    })
    .map_err(|source| Error::Ltx {
        file: format!("#{} of the plan", job.file + 1),
        source,
    })
}

/// Which plan file last wrote each page (index + 1; 0 = none yet).
struct PageOwners {
    owners: Vec<AtomicU32>,
    stripes: Vec<Mutex<()>>,
}

impl PageOwners {
    fn new(commit: u32) -> Self {
        PageOwners {
            owners: (0..=commit).map(|_| AtomicU32::new(0)).collect(),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }

    /// Writes `data` as page `pgno` unless a newer file already did. Pages
    /// past the database's final size (it shrank) are dropped.
    fn write(
        &self,
        file_index: usize,
        pgno: u32,
        data: &[u8],
        out: &File,
        page_size: u32,
    ) -> std::io::Result<()> {
        let Some(owner) = self.owners.get(pgno as usize) else {
            return Ok(());
        };
        let me = file_index as u32 + 1;
        let _held = self.stripes[pgno as usize % STRIPES]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if owner.load(Ordering::Relaxed) < me {
            out.write_all_at(data, u64::from(pgno - 1) * u64::from(page_size))?;
            owner.store(me, Ordering::Relaxed);
        }
        Ok(())
    }

    /// The first page (lock page aside) no file wrote.
    fn first_missing(&self, page_size: u32) -> Option<u32> {
        let lock = offloop_ltx::lock_pgno(page_size);
        (1..self.owners.len() as u32)
            .find(|&p| p != lock && self.owners[p as usize].load(Ordering::Relaxed) == 0)
    }
}

/// The database checksum of the first `commit` pages of `file`, summed on
/// `threads` threads.
fn database_checksum(file: &File, page_size: u32, commit: u32, threads: usize) -> Result<u64> {
    let lock = offloop_ltx::lock_pgno(page_size);
    let per = commit.div_ceil(threads.max(1) as u32).max(1);
    let parts: Vec<Result<DatabaseChecksum>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=commit)
            .step_by(per as usize)
            .map(|first| {
                s.spawn(move || {
                    let mut sum = DatabaseChecksum::new();
                    let mut page = vec![0u8; page_size as usize];
                    for pgno in first..(first + per).min(commit + 1) {
                        if pgno == lock {
                            continue;
                        }
                        file.read_exact_at(&mut page, u64::from(pgno - 1) * u64::from(page_size))
                            .map_err(|e| Error::io("read back the restored database", e))?;
                        sum.toggle_page(pgno, &page);
                    }
                    Ok(sum)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|p| Err(Error::Panic(panic_message(p))))
            })
            .collect()
    });
    let mut total = DatabaseChecksum::new();
    for part in parts {
        total.merge(part?);
    }
    Ok(total.value())
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Removes the temporary output unless the restore finished.
struct TempFile(Option<PathBuf>);

impl TempFile {
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}
