//! A damaged LTX file can never pass for a good one. Real files (snapshots
//! and incremental files, block-encoded by the encoder and LZ4-frame
//! encoded as Litestream 0.5.0-0.5.15 wrote them, with and without database
//! checksums) are cut short at every region boundary and at random points,
//! have bits flipped in every region, fields overwritten with extreme
//! values and random spans garbled; others are rebuilt with a structural
//! fault and a correct file checksum, so that only the format's rules can
//! catch them. Each mutant is decoded the three ways the replica reads
//! files: streaming, through the tail and ranged reads of frame runs, and
//! one frame at a time.
//!
//! Every decode must end in an error or (where the damage cannot matter, as
//! in an LZ4 frame's own checksum byte) in exactly the original header and
//! pages; none may panic, and none may allocate more than the file's size
//! and one page justify. The generator is seeded, so a failure repeats.
//! This test owns only its own files; it never touches the disk.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use offloop_ltx::*;

mod mutation_kit;

use mutation_kit::{regions, samples, Pages, Parts, Rng, Sample, Seal};

/// Records the largest single allocation each thread makes, so a decode
/// that sizes a buffer from a field it has not checked is caught.
struct Tracking;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

// SAFETY: every call is passed unchanged to the system allocator; `note`
// only writes a thread-local integer and never allocates.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: `ptr` and `layout` come from this allocator, which is the
        // system's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// One damaged file; `must_fail` when no reading of it can be right.
struct Mutant {
    what: String,
    bytes: Vec<u8>,
    must_fail: bool,
}

fn mutants(s: &Sample, rng: &mut Rng) -> Vec<Mutant> {
    let good = &s.bytes;
    let n = good.len();
    let mut out = Vec::new();
    let mut push = |what: String, bytes: Vec<u8>, must_fail: bool| {
        out.push(Mutant {
            what,
            bytes,
            must_fail,
        })
    };
    let regions = regions(s);

    // Cut short at every region boundary, either side of it, and anywhere.
    let mut cuts: Vec<usize> = vec![0, 1, n - 1];
    for r in &regions {
        for at in [r.range.start, r.range.end] {
            cuts.extend([at.saturating_sub(1), at, at + 1]);
        }
    }
    cuts.extend((0..40).map(|_| rng.below(n)));
    cuts.sort_unstable();
    cuts.dedup();
    for cut in cuts.into_iter().filter(|&c| c < n) {
        push(format!("cut to {cut} bytes"), good[..cut].to_vec(), true);
    }
    // Longer than it should be.
    let mut longer = good.clone();
    longer.push(0);
    push("one byte appended".into(), longer, true);

    // Bits flipped: every bit of small regions and of the header, a
    // sample of the rest (always the first and last byte).
    for r in &regions {
        let bits: Vec<usize> = if r.range.len() <= 16 || r.name == "header" {
            (r.range.start * 8..r.range.end * 8).collect()
        } else {
            let mut b = vec![r.range.start * 8, r.range.end * 8 - 1];
            b.extend((0..24).map(|_| r.range.start * 8 + rng.below(r.range.len() * 8)));
            b
        };
        for bit in bits {
            let mut bad = good.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            push(format!("{}: bit {bit} flipped", r.name), bad, false);
        }
    }

    // Fields overwritten with extreme values, in place.
    let mut overwrite = |what: String, at: usize, value: &[u8]| {
        if at + value.len() <= n {
            let mut bad = good.clone();
            bad[at..at + value.len()].copy_from_slice(value);
            if bad != *good {
                push(what, bad, false);
            }
        }
    };
    let h = s.header;
    let u32s = |extra: &[u32]| {
        let mut v = vec![0, 1, 2, 0x7fff_ffff, 0x8000_0000, u32::MAX];
        v.extend_from_slice(extra);
        v
    };
    let u64s = |extra: &[u64]| {
        let mut v = vec![
            0,
            1,
            CHECKSUM_FLAG,
            CHECKSUM_FLAG | 1,
            u64::MAX >> 1,
            u64::MAX,
        ];
        v.extend_from_slice(extra);
        v
    };
    for (field, at, values) in [
        ("flags", 4, u32s(&[3, 4])),
        (
            "page size",
            8,
            u32s(&[256, 511, 513, 1024, 4096, 65536, 131072, h.page_size * 2]),
        ),
        (
            "commit",
            12,
            u32s(&[h.commit - 1, h.commit + 1, lock_pgno(h.page_size)]),
        ),
        ("wal salt 1", 64, u32s(&[])),
    ] {
        for v in values {
            overwrite(format!("header {field} = {v}"), at, &v.to_be_bytes());
        }
    }
    for (field, at, values) in [
        ("min txid", 16, u64s(&[h.max_txid.get() + 1])),
        ("max txid", 24, u64s(&[h.min_txid.get() - 1])),
        ("pre-apply checksum", 40, u64s(&[])),
        ("wal offset", 48, u64s(&[])),
        ("wal size", 56, u64s(&[])),
    ] {
        for v in values {
            overwrite(format!("header {field} = {v}"), at, &v.to_be_bytes());
        }
    }
    let tail = decode_tail(good, n as u64).unwrap();
    let lock = lock_pgno(h.page_size);
    let mut prev = 0;
    for e in &tail.index.entries {
        let o = e.offset as usize;
        for v in u32s(&[h.commit, h.commit + 1, lock, prev, e.pgno + 1]) {
            overwrite(format!("page {} number = {v}", e.pgno), o, &v.to_be_bytes());
        }
        for v in [0u16, 1, 2, 3, 0x8000, u16::MAX] {
            overwrite(
                format!("page {} flags = {v}", e.pgno),
                o + 4,
                &v.to_be_bytes(),
            );
        }
        if s.lz4_frames {
            for v in [0u8, 0x40, 0x44, 0x60, 0x64, 0x6c, 0x70, 0x7c, 0xff] {
                overwrite(format!("page {} lz4 FLG = {v:#x}", e.pgno), o + 10, &[v]);
            }
            for v in [0u8, 0x40, 0x70, 0xff] {
                overwrite(format!("page {} lz4 BD = {v:#x}", e.pgno), o + 11, &[v]);
            }
            // The first block's size word sits after the descriptor (7
            // bytes, 15 with a content size).
            let word = o + 6 + if (good[o + 10] & 0x08) != 0 { 15 } else { 7 };
            let len = h.page_size;
            for v in u32s(&[
                len,
                len + 1,
                0x8000_0000 | len,
                0x8000_0000 | (len + 1),
                4 << 20,
            ]) {
                overwrite(
                    format!("page {} lz4 block size word = {v:#x}", e.pgno),
                    word,
                    &v.to_le_bytes(),
                );
            }
        } else {
            let size = u32::from_be_bytes(good[o + 6..o + 10].try_into().unwrap());
            for v in u32s(&[size - 1, size + 1, 4 << 20, 1 << 30, h.page_size + 32]) {
                overwrite(
                    format!("page {} size prefix = {v}", e.pgno),
                    o + 6,
                    &v.to_be_bytes(),
                );
            }
        }
        prev = e.pgno;
    }
    let len_at = n - 24;
    let index_len = u64::from_be_bytes(good[len_at..len_at + 8].try_into().unwrap());
    for v in u64s(&[
        index_len - 1,
        index_len + 1,
        n as u64,
        n as u64 - 124,
        n as u64 - 123,
    ]) {
        overwrite(format!("page index length = {v}"), len_at, &v.to_be_bytes());
    }
    for at in tail.pages_end as usize + 6..n - 24 {
        for v in [0u8, 0x7f, 0x80, 0xff] {
            overwrite(format!("page index byte {at} = {v:#x}"), at, &[v]);
        }
    }
    for v in u64s(&[]) {
        overwrite(
            format!("post-apply checksum = {v:#x}"),
            n - 16,
            &v.to_be_bytes(),
        );
        overwrite(format!("file checksum = {v:#x}"), n - 8, &v.to_be_bytes());
    }

    // Random spans of garbage.
    for _ in 0..40 {
        let at = rng.below(n);
        let len = 1 + rng.below(32.min(n - at));
        let mut bad = good.clone();
        for b in &mut bad[at..at + len] {
            *b = rng.next() as u8;
        }
        if bad != *good {
            push(format!("{len} random bytes at {at}"), bad, false);
        }
    }

    // Structural faults under a correct file checksum: only the format's
    // own rules can refuse these.
    let parts = Parts::of(s);
    let sealed = |what: &str, p: &Parts, how: Seal| (format!("resealed: {what}"), p.seal(&how));
    let mut structural: Vec<(String, Vec<u8>)> = Vec::new();
    let last = s.pages.last().unwrap().0;
    for (what, commit) in [
        ("commit below the last page", last - 1),
        ("commit zero", 0),
        ("commit of 2^32 - 1 pages", u32::MAX),
    ] {
        if s.header.is_snapshot() || commit < last {
            let mut p = parts.clone();
            p.header_field(12, &commit.to_be_bytes());
            structural.push(sealed(what, &p, Seal::default()));
        }
    }
    for size in [h.page_size / 2, h.page_size * 2, 65536] {
        if size != h.page_size && is_valid_page_size(size) {
            let mut p = parts.clone();
            p.header_field(8, &size.to_be_bytes());
            structural.push(sealed(&format!("page size {size}"), &p, Seal::default()));
        }
    }
    for (i, _) in s.pages.iter().enumerate() {
        let prior = if i == 0 { 0 } else { s.pages[i - 1].0 };
        for (what, pgno) in [
            ("zero", 0),
            ("beyond the commit size", h.commit + 1),
            ("the lock page", lock),
            ("u32::MAX", u32::MAX),
            ("the page before it again", prior),
        ] {
            let mut p = parts.clone();
            p.frames[i].head[..4].copy_from_slice(&pgno.to_be_bytes());
            structural.push(sealed(
                &format!("frame {i} renumbered to {what}"),
                &p,
                Seal::default(),
            ));
        }
        let mut p = parts.clone();
        p.frames[i].head[4..6].copy_from_slice(&2u16.to_be_bytes());
        structural.push(sealed(
            &format!("frame {i} unknown flag"),
            &p,
            Seal::default(),
        ));
    }
    if s.pages.len() > 1 {
        let mut p = parts.clone();
        p.frames.swap(0, 1);
        structural.push(sealed("first two frames swapped", &p, Seal::default()));
        let mut p = parts.clone();
        p.frames.remove(s.pages.len() / 2);
        if s.header.is_snapshot() {
            structural.push(sealed("a snapshot missing a page", &p, Seal::default()));
        }
        let mut p = parts.clone();
        let dup = p.frames[0].clone();
        p.frames.insert(0, dup);
        structural.push(sealed("a frame twice", &p, Seal::default()));
    }
    let index = tail.index.entries.clone();
    let reindexed = |what: &str, f: &dyn Fn(&mut Vec<IndexEntry>)| {
        let mut entries = index.clone();
        f(&mut entries);
        sealed(
            what,
            &parts,
            Seal {
                index: Some(entries),
                ..Seal::default()
            },
        )
    };
    let k = index.len() - 1;
    structural.extend([
        reindexed("index offset one late", &|e| e[k].offset += 1),
        reindexed("index offset one early", &|e| e[k].offset -= 1),
        reindexed("index size one more", &|e| e[k].size += 1),
        reindexed("index size one less", &|e| e[k].size -= 1),
        reindexed("index offset outside the file", &|e| e[k].offset = 1 << 40),
        reindexed("index offset u64::MAX", &|e| e[k].offset = u64::MAX),
        reindexed("index size u64::MAX", &|e| e[k].size = u64::MAX),
        reindexed("index offset into the header", &|e| e[0].offset = 0),
        reindexed("index names another page", &|e| e[k].pgno += 1),
        reindexed("index entry dropped", &|e| {
            e.remove(k);
        }),
        reindexed("index empty", &|e| e.clear()),
    ]);
    if k > 0 {
        structural.extend([
            reindexed("index frames overlap", &|e| e[k].offset = e[k - 1].offset),
            reindexed("index names the same page twice", &|e| {
                e[k].pgno = e[k - 1].pgno
            }),
            reindexed("index out of order", &|e| e.swap(0, k)),
        ]);
    }
    let mut extra = index.clone();
    extra.push(IndexEntry {
        pgno: last + 1,
        offset: tail.pages_end,
        size: 7,
    });
    structural.push(sealed(
        "index entry for a frame that is not there",
        &parts,
        Seal {
            index: Some(extra),
            ..Seal::default()
        },
    ));
    structural.push(sealed(
        "bytes between the end marker and the index",
        &parts,
        Seal {
            junk: vec![0u8; 5],
            ..Seal::default()
        },
    ));
    if !h.has_checksums() {
        let mut p = parts.clone();
        p.post = CHECKSUM_FLAG | 7;
        structural.push(sealed(
            "a post-apply checksum without checksums",
            &p,
            Seal::default(),
        ));
    }
    for (what, bytes) in structural {
        push(what, bytes, true);
    }
    out
}

/// What a decode gave: the header and every page, in file order.
type Outcome = std::result::Result<(Header, Pages), Error>;

/// The streaming decoder over the whole file.
fn streaming(bytes: &[u8]) -> Outcome {
    let file = decode_file(bytes)?;
    Ok((file.header, file.pages))
}

/// What a restore does: the file's last bytes, the tail they name, the
/// header, then the frames in runs of three, each run from its own read,
/// and the file checksum joined from the runs' CRCs.
fn ranged(bytes: &[u8]) -> Outcome {
    let size = bytes.len() as u64;
    // A read outside the file means the checks let a bad offset through.
    let read = |range: std::ops::Range<u64>| {
        bytes
            .get(range.start as usize..range.end as usize)
            .unwrap_or_else(|| panic!("a read of {range:?} outside a file of {size} bytes"))
    };
    let last = read(size.saturating_sub(TAIL_FETCH_SIZE)..size);
    let need = tail_size(last, size)?;
    let tail = decode_tail(read(size - need..size), size)?;
    let head = bytes.get(..HEADER_SIZE.min(bytes.len())).unwrap();
    let header = Header::decode(head)?;
    check_tail(&header, &tail)?;
    let mut pages = Vec::new();
    let mut crcs = Vec::new();
    for run in tail.index.entries.chunks(3) {
        let (first, end) = (run[0], run[run.len() - 1]);
        let buf = read(first.offset..end.offset + end.size);
        crcs.push(decode_frames(
            buf,
            first.offset,
            header.page_size,
            run,
            |p, d| {
                pages.push((p, d.to_vec()));
                Ok(())
            },
        )?);
    }
    verify_file_checksum(head, &crcs, &tail)?;
    Ok((header, pages))
}

/// What the paged restore does for one page: its frame alone, found
/// through the tail. Nothing checks the file checksum here, so a page may
/// come out wrong; this path is held to no panic and no large allocation.
fn one_frame_at_a_time(bytes: &[u8]) {
    let size = bytes.len() as u64;
    let Ok(tail) = decode_tail(bytes, size) else {
        return;
    };
    let Ok(header) = Header::decode(bytes) else {
        return;
    };
    if check_tail(&header, &tail).is_err() {
        return;
    }
    let mut page = vec![0u8; header.page_size as usize];
    for e in &tail.index.entries {
        let frame = &bytes[e.offset as usize..(e.offset + e.size) as usize];
        if decode_frame(frame, &mut page).is_err() {
            return;
        }
    }
}

/// Runs `f` and returns what it gave and the largest allocation it made.
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(0));
    let out = f();
    (out, LARGEST.with(|l| l.get()))
}

#[test]
fn damaged_ltx_files_are_refused_or_read_exactly_never_misread() {
    // Panics are caught and counted as failures; keep their noise out.
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng(0x05ee_d0f1_a7e5);
    let mut inputs = 0usize;
    let mut refused = 0usize;
    let mut harmless = 0usize;
    let mut failures = Vec::new();
    for sample in samples() {
        // The good file reads back exactly every way.
        let want = (sample.header, sample.pages.clone());
        assert_eq!(streaming(&sample.bytes).unwrap(), want, "{}", sample.name);
        assert_eq!(ranged(&sample.bytes).unwrap(), want, "{}", sample.name);

        for m in mutants(&sample, &mut rng) {
            inputs += 1;
            let label = format!("{}: {}", sample.name, m.what);
            // A file's own size and one page of the largest size justify
            // what a decode holds; nothing may be sized from a field alone.
            let bound = 4 * m.bytes.len() + 2 * 65536;
            for (how, decode) in [
                ("streaming", streaming as fn(&[u8]) -> Outcome),
                ("ranged", ranged),
            ] {
                let (outcome, largest) =
                    measured(|| catch_unwind(AssertUnwindSafe(|| decode(&m.bytes))));
                if largest > bound {
                    failures.push(format!(
                        "{label}: the {how} decode allocated {largest} bytes at once for a file of {}",
                        m.bytes.len()
                    ));
                }
                match outcome {
                    Err(_) => failures.push(format!("{label}: the {how} decode panicked")),
                    Ok(Err(e)) if e.to_string().is_empty() => {
                        failures.push(format!("{label}: the {how} decode's error says nothing"))
                    }
                    Ok(Err(_)) => refused += 1,
                    Ok(Ok(_)) if m.must_fail => {
                        failures.push(format!("{label}: the {how} decode accepted it"))
                    }
                    Ok(Ok(got)) if got != want => {
                        failures.push(format!("{label}: the {how} decode misread it"))
                    }
                    Ok(Ok(_)) => harmless += 1,
                }
            }
            let (outcome, largest) =
                measured(|| catch_unwind(AssertUnwindSafe(|| one_frame_at_a_time(&m.bytes))));
            if outcome.is_err() {
                failures.push(format!("{label}: a one-frame decode panicked"));
            }
            if largest > bound {
                failures.push(format!(
                    "{label}: a one-frame decode allocated {largest} bytes at once"
                ));
            }
        }
    }
    let _ = std::panic::take_hook();
    eprintln!(
        "{inputs} damaged files, each decoded three ways: {refused} decodes refused, \
         {harmless} read back exactly (damage the checksum cannot see and the pages do not show)"
    );
    assert!(
        failures.is_empty(),
        "{} of {inputs} damaged files were mishandled, first:\n{}",
        failures.len(),
        failures[..failures.len().min(40)].join("\n")
    );
    // The mutants must be many to mean anything.
    assert!(inputs > 10_000, "only {inputs} mutants");
}
