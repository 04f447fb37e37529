//! `Stager`: reads one database's WAL into the capture log and turns
//! what it captured into LTX files in the outbox — an L0 file per sync, a
//! full image when the replica's chain must start again, an L9 snapshot on
//! schedule. It decides whether the chain continues: a WAL that restarted
//! without this process's say (other salts than one restart further, or a
//! capture that no longer matches) means pages may have been copied and
//! overwritten unseen, so the next file is a full image, never a guess.
//!
//! It reads the database and WAL files with plain reads and writes only in
//! its own folder. It never uploads, never talks to SQLite, and never holds
//! a lock of its own: the replicator serialises calls to it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use offloop_file::PositionedIo;
use offloop_ltx::{Header, Txid, HEADER_FLAG_NO_CHECKSUM};

use crate::capture::{CaptureLog, CaptureStart};
use crate::page_io::{database_page_size, file_crc, open_optional, read_db_page, write_ltx};
use crate::pending::{Outbox, Staged};
use crate::store::{LtxFile, SNAPSHOT_LEVEL};
use crate::wal::{continues_at, read_committed, WalHeader, WalPosition, WAL_HEADER_SIZE};

/// The replicator's folder for the database at `db`: `<db>-replica`.
pub fn state_dir(db: &Path) -> PathBuf {
    let mut dir = db.as_os_str().to_owned();
    dir.push("-replica");
    PathBuf::from(dir)
}

/// A position before any WAL generation: the next header seen starts the
/// chain (the WAL was empty or absent when following began).
pub(crate) const BEFORE_WAL: WalPosition = WalPosition {
    salt1: 0,
    salt2: 0,
    offset: 0,
    checksum: (0, 0),
};

/// Why `full_image` asks to be tried again.
pub const WAL_MOVED: &str = "the WAL restarted while the image was read";

/// The record a clean close leaves in the replicator's folder.
const CLEAN: &str = "clean";

pub enum Chain {
    /// Every commit since TXID `start.next_txid - 1` is in the capture log
    /// or still ahead in the WAL.
    Intact(CaptureLog),
    /// The chain is broken: the next file must be a full image. Its TXID is
    /// `next_txid` when known locally, else one past the replica's last.
    Broken {
        next_txid: Option<Txid>,
        reason: String,
    },
}

pub struct Stager {
    db_path: PathBuf,
    wal_path: PathBuf,
    log_path: PathBuf,
    scratch: PathBuf,
    outbox: Outbox,
    chain: Chain,
    /// When the oldest commit in the capture log happened (ms since the
    /// epoch), for the lag.
    oldest_captured_ms: Option<i64>,
}

/// Which full images `Stager::full_image` stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageLevels {
    /// An L0 file at the image's TXID (the chain starts again there).
    pub l0: bool,
    /// An L9 snapshot covering `1..=txid`.
    pub l9: bool,
}

impl Stager {
    /// Opens the replicator's folder `dir` for the database at `db_path`
    /// and finds where the chain stands: continuing from the capture log
    /// when the WAL still holds its position, else broken.
    pub fn open(db_path: &Path, dir: &Path) -> io::Result<Stager> {
        Stager::open_with(db_path, dir, false)
    }

    /// `open` when the database wakes from rest (`rest.rs`): the rest
    /// recorded a clean close with the WAL removed, and no checkpoint can
    /// run until this stager is in place, so frames in the WAL now are
    /// commits made since the writer opened again, to capture from the
    /// WAL's start; the database file must still be as recorded.
    pub fn open_after_rest(db_path: &Path, dir: &Path) -> io::Result<Stager> {
        Stager::open_with(db_path, dir, true)
    }

    fn open_with(db_path: &Path, dir: &Path, after_rest: bool) -> io::Result<Stager> {
        fs::create_dir_all(dir)?;
        let outbox = Outbox::open(&dir.join("outbox"))?;
        let log_path = dir.join("capture");
        let scratch = dir.join("scratch");
        fs::create_dir_all(&scratch)?;
        let mut wal_path = db_path.as_os_str().to_owned();
        wal_path.push("-wal");
        let mut stager = Stager {
            db_path: db_path.to_path_buf(),
            wal_path: PathBuf::from(wal_path),
            log_path: log_path.clone(),
            scratch,
            outbox,
            chain: Chain::Broken {
                next_txid: None,
                reason: "no replication state on this machine".into(),
            },
            oldest_captured_ms: None,
        };
        if let Some(log) = CaptureLog::open(&log_path)? {
            let end = log.end();
            let wal = stager.wal_header()?;
            let continues = match &wal {
                Some((file, header)) => continues_at(file, header, &end)? || end == BEFORE_WAL,
                None => end == BEFORE_WAL,
            };
            let next_txid = log.txid_after_stage();
            let start = log.start();
            let clean =
                !continues && log.is_empty() && stager.closed_cleanly(dir, &start, after_rest)?;
            let _ = fs::remove_file(dir.join(CLEAN));
            stager.chain = Chain::Intact(log);
            if clean {
                // Nothing changed since the clean close: the chain goes on
                // from the next WAL generation, without a full image.
                let from = CaptureStart {
                    from: BEFORE_WAL,
                    ..start
                };
                stager.chain = Chain::Intact(CaptureLog::create(&log_path, from)?);
            } else if !continues {
                // What was captured is still true history: stage it, then
                // start again from a full image.
                stager.stage(now_ms())?;
                stager.chain = Chain::Broken {
                    next_txid: Some(next_txid),
                    reason: "the WAL no longer holds the last captured position".into(),
                };
            }
        }
        Ok(stager)
    }

    /// Records, after a clean close that shipped everything, the database
    /// file as the replica's last TXID left it, so the next open can carry
    /// on without a full image. Call with the database closed. False (and
    /// nothing recorded) when something is left to ship or the WAL still
    /// holds frames.
    pub fn mark_clean(&mut self, dir: &Path) -> io::Result<bool> {
        let Chain::Intact(log) = &self.chain else {
            return Ok(false);
        };
        if !log.is_empty() || !self.outbox.staged().is_empty() || self.wal_has_frames()? {
            return Ok(false);
        }
        let start = log.start();
        let Some((size, crc)) = file_crc(&self.db_path)? else {
            return Ok(false);
        };
        let mut b = Vec::with_capacity(40);
        b.extend_from_slice(&start.next_txid.get().to_be_bytes());
        b.extend_from_slice(&start.base_commit.to_be_bytes());
        b.extend_from_slice(&start.page_size.to_be_bytes());
        b.extend_from_slice(&size.to_be_bytes());
        b.extend_from_slice(&crc.to_be_bytes());
        offloop_file::replace_file(&dir.join(CLEAN), &b)?;
        Ok(true)
    }

    /// Whether the last close was clean and nothing touched the database
    /// since: the record matches `start`, the WAL holds no frames (unless
    /// `frames_allowed`, see `open_after_rest`) and the database file has
    /// the same size and checksum.
    fn closed_cleanly(
        &self,
        dir: &Path,
        start: &CaptureStart,
        frames_allowed: bool,
    ) -> io::Result<bool> {
        let b = match fs::read(dir.join(CLEAN)) {
            Ok(b) if b.len() == 32 => b,
            Ok(_) => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        let be64 = |at: usize| u64::from_be_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]));
        let be32 = |at: usize| u32::from_be_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]));
        if be64(0) != start.next_txid.get()
            || be32(8) != start.base_commit
            || be32(12) != start.page_size
        {
            return Ok(false);
        }
        if !frames_allowed && self.wal_has_frames()? {
            return Ok(false);
        }
        Ok(file_crc(&self.db_path)? == Some((be64(16), be64(24))))
    }

    fn wal_has_frames(&self) -> io::Result<bool> {
        let Some((file, header)) = self.wal_header()? else {
            return Ok(false);
        };
        let mut any = false;
        read_committed(
            &file,
            &header,
            WalPosition::start(&header),
            u64::MAX,
            |_| {
                any = true;
                Ok(())
            },
        )?;
        Ok(any)
    }

    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    pub fn outbox_mut(&mut self) -> &mut Outbox {
        &mut self.outbox
    }

    /// A folder for files that pass through on their way to the replica
    /// (compactions).
    pub fn scratch_dir(&self) -> PathBuf {
        self.scratch.clone()
    }

    /// The TXID the next staged file takes, when known.
    pub fn next_txid(&self) -> Option<Txid> {
        match &self.chain {
            Chain::Intact(log) => Some(log.start().next_txid),
            Chain::Broken { next_txid, .. } => *next_txid,
        }
    }

    /// Breaks the chain: the next file is a full image at `next_txid`.
    pub fn restart_at(&mut self, next_txid: Option<Txid>, reason: impl Into<String>) {
        self.chain = Chain::Broken {
            next_txid,
            reason: reason.into(),
        };
        self.oldest_captured_ms = None;
        let _ = fs::remove_file(&self.log_path);
    }

    /// Bytes captured and not yet staged.
    pub fn captured_bytes(&self) -> u64 {
        match &self.chain {
            Chain::Intact(log) => log.pending_bytes(),
            Chain::Broken { .. } => 0,
        }
    }

    pub fn oldest_captured_ms(&self) -> Option<i64> {
        self.oldest_captured_ms
    }

    fn wal_header(&self) -> io::Result<Option<(File, WalHeader)>> {
        let file = match File::open(&self.wal_path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(WalHeader::read(&file)?.map(|h| (file, h)))
    }

    /// Copies the WAL's new committed transactions into the capture log.
    /// `commit_ms` is when the oldest commit not yet captured happened, if
    /// the caller knows. Returns whether anything was captured.
    pub fn capture(&mut self, commit_ms: Option<i64>) -> io::Result<bool> {
        let Some((file, header)) = self.wal_header()? else {
            return Ok(false);
        };
        let Chain::Intact(log) = &mut self.chain else {
            return Ok(false);
        };
        let mut from = log.end();
        let broken = if header.salts() != (from.salt1, from.salt2) {
            // A new generation. This process lets the WAL restart only
            // after capturing every frame, and each restart adds one to
            // salt1; anything else happened behind its back.
            let ours = from == BEFORE_WAL || header.salt1 == from.salt1.wrapping_add(1);
            from = WalPosition::start(&header);
            (!ours || header.page_size != log.start().page_size)
                .then_some("the WAL was restarted by another connection")
        } else if from.offset > WAL_HEADER_SIZE && !continues_at(&file, &header, &from)? {
            Some("the WAL was rewritten behind the replicator")
        } else {
            None
        };
        if let Some(reason) = broken {
            let next = log.txid_after_stage();
            self.stage(now_ms())?;
            self.restart_at(Some(next), reason);
            return Ok(false);
        }
        let mut captured = false;
        read_committed(&file, &header, from, u64::MAX, |txn| {
            captured = true;
            log.append(txn)
        })?;
        log.flush()?;
        if captured {
            let at = commit_ms.unwrap_or_else(now_ms);
            self.oldest_captured_ms = Some(self.oldest_captured_ms.map_or(at, |o| o.min(at)));
        }
        Ok(captured)
    }

    /// Makes the capture log durable (when replication stops).
    pub fn make_durable(&mut self) -> io::Result<()> {
        match &mut self.chain {
            Chain::Intact(log) => log.make_durable(),
            Chain::Broken { .. } => Ok(()),
        }
    }

    /// Turns the capture log into the next L0 file in the outbox: the
    /// newest image of every page it holds, plus pages the database grew
    /// by without writing them (read from the database file, as Litestream
    /// does). `None` when nothing was captured.
    pub fn stage(&mut self, timestamp_ms: i64) -> io::Result<Option<Staged>> {
        let Chain::Intact(log) = &mut self.chain else {
            return Ok(None);
        };
        if log.is_empty() {
            return Ok(None);
        }
        let start = log.start();
        let end = log.end();
        let txid = start.next_txid;
        let commit = log.commit();
        let page_size = start.page_size;
        let lock = offloop_ltx::lock_pgno(page_size);
        let mut pgnos: BTreeSet<u32> = log.pgnos().filter(|&p| p <= commit).collect();
        pgnos.extend((start.base_commit + 1..=commit).filter(|&p| p != lock));
        let (wal_offset, wal_size) = if (start.from.salt1, start.from.salt2)
            == (end.salt1, end.salt2)
            && start.from.offset >= WAL_HEADER_SIZE
        {
            (start.from.offset, end.offset - start.from.offset)
        } else {
            (WAL_HEADER_SIZE, end.offset - WAL_HEADER_SIZE)
        };
        let header = Header {
            flags: HEADER_FLAG_NO_CHECKSUM,
            page_size,
            commit,
            min_txid: txid,
            max_txid: txid,
            timestamp: timestamp_ms,
            pre_apply_checksum: 0,
            wal_offset,
            wal_size,
            wal_salt1: end.salt1,
            wal_salt2: end.salt2,
            node_id: 0,
        };
        let db = open_optional(&self.db_path)?;
        let file = LtxFile {
            level: 0,
            min_txid: txid,
            max_txid: txid,
            size: 0,
            timestamp_ms,
        };
        let temp = self.outbox.temp_path(0, file.min_txid, file.max_txid);
        let size = write_ltx(&temp, header, pgnos.into_iter(), |pgno, page| {
            if !log.read_page(pgno, page)? {
                read_db_page(db.as_ref(), pgno, page)?;
            }
            Ok(())
        })?;
        let oldest = self.oldest_captured_ms.unwrap_or(timestamp_ms);
        let staged = self.outbox.commit(LtxFile { size, ..file }, oldest)?;
        log.reset(CaptureStart {
            page_size,
            base_commit: commit,
            next_txid: txid.next(),
            from: end,
        })?;
        self.oldest_captured_ms = None;
        Ok(Some(staged))
    }

    /// Stages a full image of the database: as an L0 file at `txid` when
    /// `l0` (the chain starts again there), and as an L9 snapshot
    /// `1..=txid` when `l9`. While following, the image is the database at
    /// the end of the capture log (stage first, so that is TXID `txid`) and
    /// the chain goes on; when broken, it is the database now, and the chain
    /// follows from there at `txid + 1`. `None` when the database has no
    /// pages yet. The caller holds a read transaction on the database
    /// for the call (so no checkpoint copies past what is read and the WAL
    /// restarts at most once), and calls again on `ErrorKind::Interrupted`.
    pub fn full_image(
        &mut self,
        txid: Txid,
        levels: ImageLevels,
        timestamp_ms: i64,
    ) -> io::Result<Option<Vec<Staged>>> {
        let ImageLevels { l0, l9 } = levels;
        let wal = self.wal_header()?;
        let following = match &self.chain {
            Chain::Intact(log) => Some((log.end(), log.commit(), log.start().page_size)),
            Chain::Broken { .. } => None,
        };
        // The newest frame of each page in the current WAL generation, up
        // to the image's position, and that position.
        let mut frames: BTreeMap<u32, u64> = BTreeMap::new();
        let mut commit = following.map(|(_, commit, _)| commit);
        let mut page_size = following.map(|(_, _, size)| size);
        let mut end = following.map_or(BEFORE_WAL, |(end, _, _)| end);
        if let Some((file, header)) = &wal {
            // While following, frames of a generation the capture has not
            // reached yet are not part of the image: nothing was copied from
            // them, as no checkpoint ran since.
            let until = match following {
                Some((at, _, _)) if (at.salt1, at.salt2) == header.salts() => Some(at.offset),
                Some(_) => None,
                None => Some(u64::MAX),
            };
            if let Some(until) = until {
                page_size = page_size.or(Some(header.page_size));
                let at = read_committed(file, header, WalPosition::start(header), until, |txn| {
                    for frame in &txn.frames {
                        frames.insert(frame.pgno, frame.offset);
                    }
                    commit = Some(txn.commit);
                    Ok(())
                })?;
                if following.is_none() {
                    end = at;
                }
            }
        }
        let db = open_optional(&self.db_path)?;
        let db_page_size = match &db {
            Some(f) => database_page_size(f)?,
            None => None,
        };
        let Some(page_size) = page_size.or(db_page_size) else {
            return Ok(None);
        };
        let commit = match commit {
            Some(c) => c,
            None => match &db {
                Some(f) => (f.metadata()?.len() / u64::from(page_size)) as u32,
                None => 0,
            },
        };
        if commit == 0 {
            return Ok(None);
        }
        let lock = offloop_ltx::lock_pgno(page_size);
        let wal_file = wal.as_ref().map(|(f, _)| f);
        let read = |pgno: u32, page: &mut [u8]| -> io::Result<()> {
            match (frames.get(&pgno), wal_file) {
                (Some(&at), Some(wal)) => wal.read_exact_at(page, at),
                _ => read_db_page(db.as_ref(), pgno, page),
            }
        };
        let in_wal = end.offset >= WAL_HEADER_SIZE;
        let mut written = Vec::new();
        for (level, min) in [(0u8, txid), (SNAPSHOT_LEVEL, Txid::FIRST)] {
            if (level == 0 && !l0) || (level == SNAPSHOT_LEVEL && !l9) {
                continue;
            }
            let header = Header {
                flags: HEADER_FLAG_NO_CHECKSUM,
                page_size,
                commit,
                min_txid: min,
                max_txid: txid,
                timestamp: timestamp_ms,
                pre_apply_checksum: 0,
                wal_offset: if in_wal { WAL_HEADER_SIZE } else { 0 },
                wal_size: if in_wal {
                    end.offset - WAL_HEADER_SIZE
                } else {
                    0
                },
                wal_salt1: if in_wal { end.salt1 } else { 0 },
                wal_salt2: if in_wal { end.salt2 } else { 0 },
                node_id: 0,
            };
            let file = LtxFile {
                level,
                min_txid: min,
                max_txid: txid,
                size: 0,
                timestamp_ms,
            };
            let temp = self.outbox.temp_path(level, file.min_txid, file.max_txid);
            let pages = (1..=commit).filter(|&p| p != lock);
            let size = write_ltx(&temp, header, pages, read)?;
            written.push((temp, LtxFile { size, ..file }));
        }
        // The WAL frames read above stay put only while the WAL keeps its
        // generation: a restart meanwhile may have overwritten some with
        // newer pages. The caller holds a read transaction, so at most one
        // restart can happen during it, and trying again succeeds.
        let salts_now = self.wal_header()?.map(|(_, h)| h.salts());
        let salts_then = wal.as_ref().map(|(_, h)| h.salts());
        if salts_then.is_some() && salts_now != salts_then {
            for (temp, _) in &written {
                let _ = fs::remove_file(temp);
            }
            return Err(io::Error::new(io::ErrorKind::Interrupted, WAL_MOVED));
        }
        let mut staged = Vec::new();
        for (_, file) in written {
            staged.push(self.outbox.commit(file, timestamp_ms)?);
        }
        if following.is_none() {
            let log = CaptureLog::create(
                &self.log_path,
                CaptureStart {
                    page_size,
                    base_commit: commit,
                    next_txid: txid.next(),
                    from: end,
                },
            )?;
            self.chain = Chain::Intact(log);
            self.oldest_captured_ms = None;
        }
        Ok(Some(staged))
    }
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
