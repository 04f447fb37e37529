//! Measures how much a restore and a compaction grow a process's peak
//! resident memory, on a folder replica of a database of a given size.
//! A measuring tool, not a test: it asserts nothing and prints JSON.
//!
//! ```text
//! cargo run --release -p offloop-replica --example peak_memory -- prepare DIR [MIB]
//! cargo run --release -p offloop-replica --example peak_memory -- restore DIR
//! cargo run --release -p offloop-replica --example peak_memory -- compact DIR
//! cargo run --release -p offloop-replica --example peak_memory -- upload DIR
//! ```
//!
//! `prepare` writes DIR/source.db (random rows, so pages do not compress),
//! a replica DIR/restore holding its L9 snapshot, and a replica
//! DIR/compact holding four L0 files that together hold every page once
//! (what an L1 compaction then merges). `upload` writes the snapshot into a
//! new replica, to tell the store's share of a compaction (which uploads
//! what it merged) from the merge's. Each verb runs in
//! a fresh process: the growth printed is the peak resident size during
//! the operation (Linux `VmHWM`, reset through `/proc/self/clear_refs`
//! first) less the resident size just before it.

use std::fs::File;
use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use offloop_ltx::{Encoder, Header, HEADER_FLAG_NO_CHECKSUM};
use offloop_replica::compact::compact_level;
use offloop_replica::{
    restore, LtxFile, ReplicaStore, RestoreOptions, S3Options, Store, WriteMode,
};

const PAGE_SIZE: u32 = 4096;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (verb, dir) = match (args.first(), args.get(1)) {
        (Some(v), Some(d)) => (v.as_str(), PathBuf::from(d)),
        _ => usage(),
    };
    match verb {
        "prepare" => prepare(&dir, args.get(2).map_or(256, |m| m.parse().unwrap())),
        "restore" => {
            let store = open(&dir.join("restore"));
            let out = dir.join("restored.db");
            let _ = std::fs::remove_file(&out);
            measure("restore", || {
                restore(&store, &out, &RestoreOptions::default()).unwrap();
            });
            assert!(
                same_file(&out, &dir.join("source.db")),
                "the restored database differs from the source"
            );
        }
        "compact" => {
            // A compaction before this one left its L1 file: drop it.
            let _ = std::fs::remove_dir_all(dir.join("compact/ltx/1"));
            let store = open(&dir.join("compact"));
            let scratch = dir.join("scratch");
            std::fs::create_dir_all(&scratch).unwrap();
            measure("compact", || {
                compact_level(&store, 1, &scratch).unwrap().unwrap();
            });
        }
        "upload" => {
            // The store's side alone: the snapshot written as a new file.
            let source = dir.join("restore/ltx/9");
            let path = std::fs::read_dir(&source)
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let size = std::fs::metadata(&path).unwrap().len();
            let file = LtxFile::from_name(9, &name, size, 1_764_500_000_001).unwrap();
            let _ = std::fs::remove_dir_all(dir.join("upload"));
            let store = open(&dir.join("upload"));
            measure("upload", || {
                store.write(&file, &path, WriteMode::Overwrite).unwrap();
            });
        }
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!("usage: peak_memory prepare DIR [MIB] | restore DIR | compact DIR | upload DIR");
    std::process::exit(2)
}

fn open(replica: &Path) -> ReplicaStore {
    let url = format!("file://{}", replica.display());
    ReplicaStore::open(&url, &S3Options::default()).unwrap()
}

/// Kibibytes of a `/proc/self/status` field.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

fn measure(what: &str, op: impl FnOnce()) {
    let before = status_kib("VmRSS");
    // Writing 5 resets the peak resident size to the current one.
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let start = Instant::now();
    op();
    let peak = status_kib("VmHWM");
    println!(
        "{{\"op\":\"{what}\",\"rss_before_mib\":{:.1},\"peak_mib\":{:.1},\"growth_mib\":{:.1},\"seconds\":{:.2}}}",
        before as f64 / 1024.0,
        peak as f64 / 1024.0,
        peak.saturating_sub(before) as f64 / 1024.0,
        start.elapsed().as_secs_f64()
    );
}

fn prepare(dir: &Path, mib: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let db_path = dir.join("source.db");
    let _ = std::fs::remove_file(&db_path);
    let db = rusqlite::Connection::open(&db_path).unwrap();
    db.execute_batch(&format!(
        "PRAGMA page_size = {PAGE_SIZE}; PRAGMA journal_mode = DELETE;
         CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
         INSERT INTO t (v) SELECT randomblob(3000) FROM n;",
        // A 3000-byte row fills most of a 4 KiB page: one row a page.
        rows = mib * 1024 * 1024 / u64::from(PAGE_SIZE)
    ))
    .unwrap();
    drop(db);
    let mut image = Vec::new();
    File::open(&db_path)
        .unwrap()
        .read_to_end(&mut image)
        .unwrap();
    let commit = (image.len() / PAGE_SIZE as usize) as u32;
    let page = |pgno: u32| {
        let at = (pgno as usize - 1) * PAGE_SIZE as usize;
        &image[at..at + PAGE_SIZE as usize]
    };

    let restore_dir = dir.join("restore/ltx/9");
    std::fs::create_dir_all(&restore_dir).unwrap();
    write_ltx(
        &restore_dir,
        1,
        1,
        commit,
        (1..=commit).map(|p| (p, page(p))),
    );

    let compact_dir = dir.join("compact/ltx/0");
    let _ = std::fs::remove_dir_all(dir.join("compact"));
    std::fs::create_dir_all(&compact_dir).unwrap();
    for k in 0..4u32 {
        let txid = u64::from(k) + 2;
        let pages = (1..=commit).filter(|p| p % 4 == k).map(|p| (p, page(p)));
        write_ltx(&compact_dir, txid, txid, commit, pages);
    }
    println!(
        "{{\"prepared_mib\":{:.1},\"pages\":{commit}}}",
        image.len() as f64 / 1048576.0
    );
}

fn write_ltx<'a>(
    dir: &Path,
    min: u64,
    max: u64,
    commit: u32,
    pages: impl Iterator<Item = (u32, &'a [u8])>,
) {
    let txid = |n| offloop_ltx::Txid::new(n).expect("a TXID is at least 1");
    let (min_txid, max_txid) = (txid(min), txid(max));
    let path = dir.join(offloop_ltx::file_name(min_txid, max_txid));
    let header = Header {
        flags: HEADER_FLAG_NO_CHECKSUM,
        page_size: PAGE_SIZE,
        commit,
        min_txid,
        max_txid,
        timestamp: 1_764_500_000_000 + max as i64,
        ..Header::default()
    };
    let out = BufWriter::new(File::create(path).unwrap());
    let mut enc = Encoder::new(out, header).unwrap();
    for (pgno, data) in pages {
        enc.encode_page(pgno, data).unwrap();
    }
    enc.finish(0).unwrap();
}

fn same_file(a: &Path, b: &Path) -> bool {
    std::fs::read(a).unwrap() == std::fs::read(b).unwrap()
}
