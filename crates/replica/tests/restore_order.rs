//! Restore applies many files in the right order whatever order they
//! arrive and decode in: a long chain of files rewriting overlapping pages,
//! growing and shrinking the database, restored many times on several
//! threads with many fetches at once, is always the sequential result.

mod common;

use bytes::Bytes;
use offloop_ltx::{Encoder, Header, HEADER_FLAG_NO_CHECKSUM};
use offloop_replica::{restore, ReplicaStore, RestoreOptions, S3Options, Txid, WriteMode};

const PAGE: usize = 512;

/// A small deterministic generator, so a failure can be replayed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u32) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % u64::from(below)) as u32
    }
}

fn page(pgno: u32, version: u64) -> Vec<u8> {
    let mut p = vec![0u8; PAGE];
    p[..4].copy_from_slice(&pgno.to_be_bytes());
    p[4..12].copy_from_slice(&version.to_be_bytes());
    for (i, b) in p[12..].iter_mut().enumerate() {
        *b = (i as u64 ^ version) as u8;
    }
    p
}

fn encode(min: u64, max: u64, commit: u32, pages: &[(u32, Vec<u8>)]) -> Bytes {
    let header = Header {
        flags: HEADER_FLAG_NO_CHECKSUM,
        page_size: PAGE as u32,
        commit,
        min_txid: offloop_ltx::Txid::new(min).expect("a TXID is at least 1"),
        max_txid: offloop_ltx::Txid::new(max).expect("a TXID is at least 1"),
        timestamp: max as i64,
        ..Header::default()
    };
    let mut enc = Encoder::new(Vec::new(), header).unwrap();
    for (pgno, data) in pages {
        enc.encode_page(*pgno, data).unwrap();
    }
    Bytes::from(enc.finish(0).unwrap().writer)
}

#[test]
fn many_overlapping_files_restore_to_the_sequential_result_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().join("replica").display());
    let store = ReplicaStore::open(&url, &S3Options::default()).unwrap();
    let mut rng = Lcg(7);

    let mut image: Vec<Vec<u8>> = (1..=300).map(|p| page(p, 1)).collect();
    let snapshot: Vec<_> = image
        .iter()
        .enumerate()
        .map(|(i, d)| (i as u32 + 1, d.clone()))
        .collect();
    common::put(
        &store,
        (9, 1, 1),
        &encode(1, 1, 300, &snapshot),
        1,
        WriteMode::Overwrite,
    )
    .unwrap();
    let mut states = vec![image.concat()];

    for txid in 2..=60u64 {
        // Sometimes shrink or grow; grown pages are always written.
        let old = image.len() as u32;
        let commit = match rng.next(6) {
            0 => old.saturating_sub(rng.next(40)).max(10),
            1 => old + rng.next(40),
            _ => old,
        };
        let mut changed: Vec<u32> = (0..20).map(|_| 1 + rng.next(commit)).collect();
        changed.extend(old + 1..=commit);
        changed.sort_unstable();
        changed.dedup();
        image.resize(commit as usize, Vec::new());
        let pages: Vec<_> = changed
            .iter()
            .map(|&p| {
                let data = page(p, txid);
                image[p as usize - 1] = data.clone();
                (p, data)
            })
            .collect();
        common::put(
            &store,
            (0, txid, txid),
            &encode(txid, txid, commit, &pages),
            txid as i64,
            WriteMode::Overwrite,
        )
        .unwrap();
        states.push(image.concat());
    }

    let out = dir.path().join("out.db");
    for round in 0..8 {
        let opts = RestoreOptions {
            overwrite: true,
            threads: 4,
            fetches: 16,
            ..RestoreOptions::default()
        };
        let report = restore(&store, &out, &opts).unwrap();
        assert_eq!((report.txid.get(), report.files), (60, 60));
        assert!(std::fs::read(&out).unwrap() == states[59], "round {round}");
    }
    for txid in [1u64, 2, 17, 33, 59] {
        let opts = RestoreOptions {
            overwrite: true,
            txid: Txid::new(txid),
            threads: 4,
            fetches: 16,
            ..RestoreOptions::default()
        };
        restore(&store, &out, &opts).unwrap();
        assert!(
            std::fs::read(&out).unwrap() == states[txid as usize - 1],
            "txid {txid}"
        );
    }
}
