//! A damaged replica cannot hurt a restore. A real folder replica (an L9
//! snapshot, an L1 compaction, L0 files after it, written by the stager
//! and the compactor) is copied once per case and damaged in one place:
//! cut short at every region of each file the restore plan reads, a bit
//! flipped in every region, a file rebuilt with a correct checksum but a
//! wrong page size, a page beyond its commit size or TXIDs its name does
//! not carry, a file from a database of another page size, files renamed,
//! swapped, moved and deleted.
//!
//! Every restore must either fail with an error naming the damaged file
//! (every restore error reaches JS as `ERR_OFFLOOP_REPLICA`) and leave no
//! output behind, or produce exactly the database a restore of the
//! undamaged replica does. A paged open of the same copy must refuse the
//! damage the same way or serve pages; it is held to the source's pages
//! except where only a file checksum could tell (an altered LZ4 block: see
//! `paged.rs` on what a ranged read cannot verify), which is counted.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::dump;
use offloop_ltx::{
    decode_frames, decode_tail, Crc64, Encoder, Header, CHECKSUM_FLAG, HEADER_FLAG_NO_CHECKSUM,
    HEADER_SIZE,
};
use offloop_replica::compact::compact_level;
use offloop_replica::plan::plan_restore;
use offloop_replica::stager::{ImageLevels, Stager};
use offloop_replica::{
    restore, PagedReplica, ReplicaStore, RestoreOptions, S3Options, Store, Target, WriteMode,
};
use offloop_vfs::PageSource;
use rusqlite::Connection;

fn open_store(root: &Path) -> ReplicaStore {
    let url = format!("file://{}", root.display());
    ReplicaStore::open(&url, &S3Options::default()).unwrap()
}

/// Writes a database and its replica under `dir`: a full image at TXID 1
/// (L0 and L9), L0 files 2 to 5 compacted into L1 1-5, then L0 files 6
/// to 8. Returns the replica's root.
fn replicate(dir: &Path) -> PathBuf {
    let root = dir.join("replica");
    let store = open_store(&root);
    let path = dir.join("app.db");
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "journal_mode", "wal").unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB, w TEXT)")
        .unwrap();
    let mut stager = Stager::open(&path, &dir.join("state")).unwrap();
    stager
        .full_image(
            offloop_ltx::Txid::FIRST,
            ImageLevels { l0: true, l9: true },
            1_000,
        )
        .unwrap();
    let upload = |stager: &mut Stager| {
        for staged in stager.outbox().staged() {
            store
                .write(&staged.file, &staged.path, WriteMode::Overwrite)
                .unwrap();
        }
    };
    for txid in 2..=8i64 {
        conn.execute(
            "INSERT INTO t(v, w) VALUES (randomblob(?1), printf('%.*c', ?1, 'x'))",
            [700 * txid],
        )
        .unwrap();
        conn.execute("UPDATE t SET v = randomblob(40) WHERE id = 1", [])
            .unwrap();
        stager.capture(None).unwrap();
        stager.stage(txid * 1_000).unwrap().unwrap();
        if txid == 5 {
            upload(&mut stager);
            let scratch = dir.join("scratch");
            std::fs::create_dir_all(&scratch).unwrap();
            compact_level(&store, 1, &scratch).unwrap().unwrap();
        }
    }
    upload(&mut stager);
    root
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A plan file: its path under the replica root and its name.
#[derive(Clone)]
struct PlanFile {
    rel: PathBuf,
    name: String,
    bytes: Vec<u8>,
}

/// One way to damage a copy of the replica.
struct Case {
    what: String,
    /// Names an error may give for the damage (any one will do).
    names: Vec<String>,
    damage: Box<dyn Fn(&Path)>,
    /// Whether only a file checksum can see it (a paged read may not).
    in_a_page: bool,
}

/// The file with its header patched and its checksum made right again, so
/// that only the format's rules and the plan's checks can catch it.
fn resealed(bytes: &[u8], patch: impl Fn(&mut [u8])) -> Vec<u8> {
    let size = bytes.len() as u64;
    let tail = decode_tail(bytes, size).unwrap();
    let page_size = Header::decode(bytes).unwrap().page_size;
    let frames = decode_frames(bytes, 0, page_size, &tail.index.entries, |_, _| Ok(())).unwrap();
    let mut out = bytes[..bytes.len() - 8].to_vec();
    patch(&mut out[..HEADER_SIZE]);
    let mut crc = Crc64::new();
    crc.update(&out[..HEADER_SIZE]);
    crc.append(&frames);
    crc.append(&tail.crc);
    out.extend_from_slice(&(CHECKSUM_FLAG | crc.value()).to_be_bytes());
    out
}

fn set_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

fn set_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

/// A well-formed file with `like`'s TXIDs from a database of 1024-byte pages.
fn foreign(like: &Header) -> Vec<u8> {
    let header = Header {
        flags: HEADER_FLAG_NO_CHECKSUM,
        page_size: 1024,
        commit: 3,
        min_txid: like.min_txid,
        max_txid: like.max_txid,
        timestamp: like.timestamp,
        ..Header::default()
    };
    let mut enc = Encoder::new(Vec::new(), header).unwrap();
    let pages: &[u32] = if header.is_snapshot() {
        &[1, 2, 3]
    } else {
        &[2]
    };
    for &p in pages {
        enc.encode_page(p, &vec![p as u8; 1024]).unwrap();
    }
    enc.finish(0).unwrap().writer
}

fn cases(plan: &[PlanFile]) -> Vec<Case> {
    let mut out: Vec<Case> = Vec::new();
    for f in plan {
        let b = &f.bytes;
        let n = b.len();
        let tail = decode_tail(b, n as u64).unwrap();
        let header = Header::decode(b).unwrap();
        let entries = &tail.index.entries;
        let (first, last) = (entries[0], entries[entries.len() - 1]);
        let mid = entries[entries.len() / 2];
        let pe = tail.pages_end as usize;
        let write = |rel: PathBuf, bytes: Vec<u8>| -> Box<dyn Fn(&Path)> {
            Box::new(move |root: &Path| std::fs::write(root.join(&rel), &bytes).unwrap())
        };
        let mut add = |what: String, bytes: Vec<u8>, in_a_page: bool| {
            out.push(Case {
                what: format!("{}: {what}", f.name),
                names: vec![f.name.clone()],
                damage: write(f.rel.clone(), bytes),
                in_a_page,
            })
        };
        let cuts = [
            ("to nothing", 0),
            ("inside the header", 50),
            ("after the header", HEADER_SIZE),
            ("inside the first frame", first.offset as usize + 8),
            (
                "inside the middle frame",
                mid.offset as usize + mid.size as usize / 2,
            ),
            ("before the end marker", pe),
            ("after the end marker", pe + 6),
            ("inside the page index", (pe + 6 + n - 24) / 2),
            ("before the index length", n - 24),
            ("before the trailer", n - 16),
            ("before the file checksum", n - 8),
            ("by one byte", n - 1),
        ];
        for (what, at) in cuts {
            add(
                format!("cut short {what} ({at} bytes)"),
                b[..at].to_vec(),
                false,
            );
        }
        let mut longer = b.clone();
        longer.extend_from_slice(&[0u8; 3]);
        add("three bytes appended".into(), longer, false);

        let flips: Vec<(String, usize, u8, bool)> = vec![
            ("magic".into(), 1, 0x01, false),
            ("header flags".into(), 7, 0x01, false),
            ("header page size".into(), 10, 0x01, false),
            ("header commit".into(), 15, 0x04, false),
            ("header min TXID".into(), 23, 0x02, false),
            ("header max TXID".into(), 31, 0x10, false),
            ("header timestamp".into(), 39, 0x01, false),
            ("header reserved byte".into(), 90, 0x80, false),
            (
                "first page number".into(),
                first.offset as usize + 3,
                0x01,
                false,
            ),
            (
                "first page flags".into(),
                first.offset as usize + 5,
                0x02,
                false,
            ),
            (
                "first size prefix".into(),
                first.offset as usize + 9,
                0x01,
                false,
            ),
            (
                "first LZ4 block".into(),
                first.offset as usize + 12,
                0x20,
                true,
            ),
            (
                "middle LZ4 block".into(),
                (mid.offset + mid.size / 2) as usize,
                0x04,
                true,
            ),
            (
                "last LZ4 block".into(),
                (last.offset + last.size) as usize - 1,
                0x01,
                true,
            ),
            (
                "last page number".into(),
                last.offset as usize + 2,
                0x40,
                false,
            ),
            ("end marker".into(), pe + 2, 0x01, false),
            ("page index, first entry".into(), pe + 6, 0x01, false),
            (
                "page index, its middle".into(),
                (pe + 6 + n - 24) / 2,
                0x08,
                false,
            ),
            ("page index, last entry".into(), n - 26, 0x02, false),
            ("index length".into(), n - 17, 0x01, false),
            ("post-apply checksum".into(), n - 9, 0x01, false),
            ("file checksum flag".into(), n - 8, 0x80, false),
            ("file checksum".into(), n - 1, 0x01, false),
        ];
        for (what, at, mask, in_a_page) in flips {
            let mut bad = b.clone();
            bad[at] ^= mask;
            add(
                format!("a bit flipped in the {what} (byte {at})"),
                bad,
                in_a_page,
            );
        }

        let other = if header.page_size == 4096 { 1024 } else { 4096 };
        add(
            format!("page size {other} under a correct checksum"),
            resealed(b, |h| set_u32(h, 8, other)),
            false,
        );
        add(
            "a commit size below its last page under a correct checksum".into(),
            resealed(b, |h| set_u32(h, 12, last.pgno - 1)),
            false,
        );
        add(
            "a commit size of 2^32 - 1 pages under a correct checksum".into(),
            resealed(b, |h| set_u32(h, 12, u32::MAX)),
            false,
        );
        add(
            "header TXIDs that are not its name's, under a correct checksum".into(),
            resealed(b, |h| {
                set_u64(h, 16, header.min_txid.get() + 1);
                set_u64(h, 24, header.max_txid.get() + 1);
            }),
            false,
        );
        add(
            "a file of a database with another page size".into(),
            foreign(&header),
            false,
        );
    }

    // Files renamed, swapped, moved and deleted.
    let by_name = |suffix: &str| plan.iter().find(|f| f.name.ends_with(suffix)).unwrap();
    let (l9, l1) = (&plan[0], &plan[1]);
    let (six, seven, eight) = (by_name("6.ltx"), by_name("7.ltx"), by_name("8.ltx"));
    let rel = |f: &PlanFile| f.rel.clone();
    let name_67 = "0000000000000006-0000000000000007.ltx".to_string();
    {
        let (a, b) = (rel(six), rel(seven));
        out.push(Case {
            what: "L0 6 renamed to cover 6-7, L0 7 deleted".into(),
            names: vec![name_67.clone()],
            damage: Box::new(move |root: &Path| {
                std::fs::rename(
                    root.join(&a),
                    root.join(a.with_file_name("0000000000000006-0000000000000007.ltx")),
                )
                .unwrap();
                std::fs::remove_file(root.join(&b)).unwrap();
            }),
            in_a_page: false,
        });
    }
    {
        let (a, b) = (rel(six), rel(seven));
        out.push(Case {
            what: "L0 6 and L0 7 swapped".into(),
            names: vec![six.name.clone(), seven.name.clone()],
            damage: Box::new(move |root: &Path| {
                let tmp = root.join("swap");
                std::fs::rename(root.join(&a), &tmp).unwrap();
                std::fs::rename(root.join(&b), root.join(&a)).unwrap();
                std::fs::rename(&tmp, root.join(&b)).unwrap();
            }),
            in_a_page: false,
        });
    }
    for (what, victim, copy_of) in [
        ("L0 8 holds L0 7's bytes", eight, seven),
        ("L1 holds L9's bytes", l1, l9),
        ("L9 holds L1's bytes", l9, l1),
    ] {
        let (to, bytes) = (rel(victim), copy_of.bytes.clone());
        out.push(Case {
            what: what.into(),
            names: vec![victim.name.clone()],
            damage: Box::new(move |root: &Path| std::fs::write(root.join(&to), &bytes).unwrap()),
            in_a_page: false,
        });
    }
    for (what, victim, new_rel) in [
        ("L0 8 moved to level 3", eight, "ltx/3"),
        (
            "L0 7 renamed to a name that is not an LTX name",
            seven,
            "ltx/0/notes",
        ),
        ("the L9 snapshot moved out of the replica", l9, "elsewhere"),
        ("the L1 file moved out of the replica", l1, "elsewhere"),
    ] {
        let (from, to) = (rel(victim), PathBuf::from(new_rel));
        out.push(Case {
            what: what.into(),
            names: vec![eight.name.clone(), victim.name.clone()],
            damage: Box::new(move |root: &Path| {
                let to = if to.starts_with("ltx/3") {
                    std::fs::create_dir_all(root.join(&to)).unwrap();
                    to.join(from.file_name().unwrap())
                } else {
                    to.clone()
                };
                std::fs::rename(root.join(&from), root.join(to)).unwrap();
            }),
            in_a_page: false,
        });
    }
    out.push(Case {
        what: "a stray file beside the L0 files".into(),
        names: vec![],
        damage: Box::new(|root: &Path| {
            std::fs::write(root.join("ltx/0/stray.tmp"), b"junk").unwrap()
        }),
        in_a_page: false,
    });
    out
}

/// Every page the paged replica serves, or why it would not.
fn paged_pages(root: &Path) -> Result<Vec<Vec<u8>>, String> {
    let replica = PagedReplica::open(Arc::new(open_store(root)), Target::Latest)
        .map_err(|e| e.to_string())?;
    let lock = offloop_ltx::lock_pgno(replica.page_size());
    let mut pages = Vec::new();
    for pgno in 1..=replica.page_count() {
        if pgno == lock {
            continue;
        }
        let got = replica.read_page(pgno, &|_| false)?;
        pages.push(
            got.into_iter()
                .find(|(p, _)| *p == pgno)
                .ok_or("no page")?
                .1,
        );
    }
    Ok(pages)
}

#[test]
fn a_damaged_replica_is_refused_naming_the_file_or_restores_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let root = replicate(dir.path());
    let store = open_store(&root);
    let plan = plan_restore(&store, Target::Latest).unwrap();
    let levels: Vec<u8> = plan.iter().map(|f| f.level).collect();
    assert_eq!(levels, [9, 1, 0, 0, 0], "the plan reads every kind of file");
    let plan: Vec<PlanFile> = plan
        .iter()
        .map(|f| {
            let rel = PathBuf::from(format!("ltx/{}/{}", f.level, f.name()));
            PlanFile {
                bytes: std::fs::read(root.join(&rel)).unwrap(),
                rel,
                name: f.name(),
            }
        })
        .collect();
    let reference = dir.path().join("reference.db");
    restore(&store, &reference, &RestoreOptions::default()).unwrap();
    assert_eq!(dump(&reference), dump(&dir.path().join("app.db")));
    let want = std::fs::read(&reference).unwrap();
    let want_pages: Vec<Vec<u8>> = paged_pages(&root).unwrap();
    assert_eq!(
        want_pages.concat(),
        want,
        "a paged read of the undamaged replica"
    );

    let cases = cases(&plan);
    let mut refused = 0;
    let mut harmless = 0;
    let mut paged_refused = 0;
    let mut paged_unseen = Vec::new();
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let copy = dir.path().join(format!("case-{i}"));
        copy_tree(&root, &copy);
        (case.damage)(&copy);
        let out = dir.path().join(format!("out-{i}.db"));
        let names = |m: &str| case.names.iter().any(|n| m.contains(n.as_str()));
        let restored = catch_unwind(AssertUnwindSafe(|| {
            restore(&open_store(&copy), &out, &RestoreOptions::default())
        }));
        match restored {
            Err(_) => failures.push(format!("{}: the restore panicked", case.what)),
            Ok(Err(e)) => {
                let m = e.to_string();
                if !names(&m) {
                    failures.push(format!(
                        "{}: refused without naming the file: {m}",
                        case.what
                    ));
                }
                if out.exists() || out.with_extension("db.tmp").exists() {
                    failures.push(format!("{}: refused but left a file behind", case.what));
                }
                refused += 1;
            }
            Ok(Ok(_)) => {
                // The size first: a wrong one may be too large to read.
                let size = std::fs::metadata(&out).unwrap().len();
                if size == want.len() as u64 && std::fs::read(&out).unwrap() == want {
                    harmless += 1;
                } else {
                    failures.push(format!("{}: restored a wrong database", case.what));
                }
            }
        }
        match catch_unwind(AssertUnwindSafe(|| paged_pages(&copy))) {
            Err(_) => failures.push(format!("{}: the paged restore panicked", case.what)),
            Ok(Err(m)) => {
                if !names(&m) {
                    failures.push(format!(
                        "{}: the paged restore refused without naming the file: {m}",
                        case.what
                    ));
                }
                paged_refused += 1;
            }
            Ok(Ok(pages)) if pages != want_pages => {
                if case.in_a_page {
                    paged_unseen.push(case.what.clone());
                } else {
                    failures.push(format!(
                        "{}: the paged restore served wrong pages",
                        case.what
                    ));
                }
            }
            Ok(Ok(_)) => {}
        }
        std::fs::remove_dir_all(&copy).unwrap();
    }
    eprintln!(
        "{} damaged replicas: {refused} restores refused naming the file, {harmless} restored exactly; \
         paged: {paged_refused} refused, {} served a page only a file checksum could have caught",
        cases.len(),
        paged_unseen.len()
    );
    for what in &paged_unseen {
        eprintln!("  paged, unseen: {what}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(cases.len() >= 120, "only {} cases", cases.len());
}
