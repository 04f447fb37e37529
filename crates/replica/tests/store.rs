//! The replica store keeps Litestream's layout and timestamps, in a folder
//! and in S3 (a moto server started here), and says clearly what is wrong.

mod common;

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::UNIX_EPOCH;

use bytes::Bytes;
use common::{put, Moto};
use offloop_replica::{
    Comparison, Fault, LtxFile, ReplicaStore, S3Options, Store, Timestamps, Txid, WriteMode,
};

const T1: i64 = 1_764_506_390_401;
const T2: i64 = 1_764_506_391_000;

fn txid(n: u64) -> Txid {
    Txid::new(n).unwrap()
}

fn fill(store: &ReplicaStore) -> Vec<LtxFile> {
    [
        ((0, 2, 2), &b"second"[..], T2),
        ((0, 1, 1), b"first", T1),
        ((9, 1, 2), b"snapshot", T2),
    ]
    .into_iter()
    .map(|(at, bytes, ts)| put(store, at, bytes, ts, WriteMode::Overwrite).unwrap())
    .collect()
}

fn level(store: &dyn Store, level: u8) -> Vec<LtxFile> {
    store.list(level, Txid::FIRST, Timestamps::Ltx).unwrap()
}

fn streamed(store: &dyn Store, file: &LtxFile, range: std::ops::Range<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    store
        .open(file, range)
        .unwrap()
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn check_round_trip(store: &ReplicaStore) {
    let put = fill(store);
    let l0 = level(store, 0);
    assert_eq!(
        l0,
        vec![put[1], put[0]],
        "sorted by TXID, with LTX timestamps"
    );
    assert_eq!(level(store, 1), vec![]);
    assert_eq!(
        store.list(0, txid(2), Timestamps::Ltx).unwrap(),
        vec![put[0]],
        "a listing from a TXID on leaves out the files before it"
    );
    assert_eq!(store.list(0, txid(3), Timestamps::Listed).unwrap(), vec![]);

    let all = store.list_all(Timestamps::Ltx).unwrap();
    assert_eq!(all.len(), 10);
    assert_eq!(all[9], vec![put[2]]);
    assert_eq!(all[0], l0);

    assert_eq!(store.get(&put[1]).unwrap(), Bytes::from_static(b"first"));
    assert_eq!(
        store.read_range(&put[2], 1..4).unwrap(),
        Bytes::from_static(b"nap")
    );
    assert_eq!(streamed(store, &put[2], 0..8), b"snapshot");
    assert_eq!(streamed(store, &put[2], 4..8), b"shot");

    let mut got = vec![Bytes::new(); 3];
    store
        .fetch_all(&put, 2, |i, b| {
            got[i] = b;
            Ok(())
        })
        .unwrap();
    assert_eq!(got, vec![&b"second"[..], b"first", b"snapshot"]);
    let ranges: Vec<_> = put.iter().map(|f| (*f, 0..2)).collect();
    let mut got = vec![Bytes::new(); 3];
    store
        .read_ranges(&ranges, 3, &mut |i, b| {
            got[i] = b;
            Ok(())
        })
        .unwrap();
    assert_eq!(got, vec![&b"se"[..], b"fi", b"sn"]);

    store.delete(&put[..1]).unwrap();
    store.delete(&put[..1]).unwrap();
    assert_eq!(level(store, 0).len(), 1);
    let gone = store.get(&put[0]).unwrap_err();
    assert_eq!(gone.fault(), Some(Fault::NotFound), "{gone}");
    assert!(!gone.is_permanent());
}

/// A conditional create succeeds once, refuses a second writer with a
/// conflict and leaves the first file as it was; of writers racing for one
/// name, exactly one wins.
fn check_create_new(store: Arc<dyn Store>) {
    let first = put(&*store, (0, 7, 7), b"mine", T1, WriteMode::CreateNew).unwrap();
    let refused = put(&*store, (0, 7, 7), b"theirs", T2, WriteMode::CreateNew).unwrap_err();
    assert_eq!(refused.fault(), Some(Fault::Conflict), "{refused}");
    assert!(refused.to_string().contains("already exists"), "{refused}");
    assert!(!refused.is_permanent());
    assert_eq!(streamed(&*store, &first, 0..4), b"mine");

    const RACERS: usize = 8;
    let start = Arc::new(Barrier::new(RACERS));
    let racers: Vec<_> = (0..RACERS)
        .map(|i| {
            let (store, start) = (store.clone(), start.clone());
            std::thread::spawn(move || {
                let body = format!("racer {i}");
                start.wait();
                put(
                    &*store,
                    (0, 8, 8),
                    body.as_bytes(),
                    T1,
                    WriteMode::CreateNew,
                )
                .map(|_| body)
                .map_err(|e| e.fault())
            })
        })
        .collect();
    let results: Vec<_> = racers.into_iter().map(|t| t.join().unwrap()).collect();
    let winners: Vec<&String> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for lost in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(*lost, Some(Fault::Conflict), "{results:?}");
    }
    let file = level(&*store, 0)
        .into_iter()
        .find(|f| f.min_txid == txid(8))
        .unwrap();
    assert_eq!(
        streamed(&*store, &file, 0..file.size),
        winners[0].as_bytes()
    );

    // An overwrite is unconditional.
    put(&*store, (0, 7, 7), b"again", T2, WriteMode::Overwrite).unwrap();
    check_compare(&*store);
}

/// Only a byte-for-byte copy of the local file counts as the same file,
/// whatever the object holds; nothing in it is decoded.
fn check_compare(store: &dyn Store) {
    let compare = |file: &LtxFile, bytes: &[u8]| {
        let local = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(local.path(), bytes).unwrap();
        store.compare(file, local.path()).unwrap()
    };
    let sent = vec![0x5au8; 300_000];
    let file = put(store, (0, 20, 20), &sent, T1, WriteMode::CreateNew).unwrap();
    assert_eq!(compare(&file, &sent), Comparison::Same);
    let mut last_byte = sent.clone();
    *last_byte.last_mut().unwrap() = 0;
    assert_eq!(compare(&file, &last_byte), Comparison::Different);
    assert_eq!(compare(&file, &sent[1..]), Comparison::Different);
    assert_eq!(compare(&file, b""), Comparison::Different);
    let empty = put(store, (0, 21, 21), b"", T1, WriteMode::CreateNew).unwrap();
    assert_eq!(compare(&empty, &sent), Comparison::Different);
    assert_eq!(compare(&empty, b""), Comparison::Same);
    let missing = LtxFile {
        min_txid: txid(22),
        max_txid: txid(22),
        ..file
    };
    assert_eq!(compare(&missing, &sent), Comparison::Absent);
}

fn folder_store(root: &Path) -> ReplicaStore {
    ReplicaStore::open(&format!("file://{}", root.display()), &S3Options::default()).unwrap()
}

#[test]
fn a_folder_replica_uses_litestreams_layout_and_file_times() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("replica");
    let store = folder_store(&root);
    assert_eq!(
        store.list_all(Timestamps::Listed).unwrap().concat(),
        vec![],
        "a folder not yet made is empty"
    );
    fill(&store);

    let file = root.join("ltx/0/0000000000000001-0000000000000001.ltx");
    assert_eq!(std::fs::read(&file).unwrap(), b"first");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    assert_eq!(
        mtime.duration_since(UNIX_EPOCH).unwrap().as_millis() as i64,
        T1
    );
    assert!(root
        .join("ltx/9/0000000000000001-0000000000000002.ltx")
        .is_file());

    // Files that are not LTX files (Litestream's temporaries) are not listed.
    std::fs::write(
        root.join("ltx/0/0000000000000003-0000000000000003.ltx.tmp"),
        b"x",
    )
    .unwrap();
    assert_eq!(level(&store, 0).len(), 2);
    std::fs::remove_dir_all(&root).unwrap();
    check_round_trip(&store);
}

fn check_large_files(store: &ReplicaStore) {
    // Larger than one part: written as a multipart upload streamed from
    // disk, read back whole from parallel parts and as one stream.
    let big: Vec<u8> = (0..(17u32 << 20) + 123).map(|i| (i % 251) as u8).collect();
    let file = put(store, (9, 1, 5), &big, T1, WriteMode::Overwrite).unwrap();
    assert_eq!(level(store, 9), vec![file]);
    assert_eq!(store.get(&file).unwrap(), big);
    assert_eq!(streamed(store, &file, 0..file.size), big);
    let tail = (9u64 << 20)..file.size;
    assert_eq!(
        streamed(store, &file, tail.clone()),
        &big[tail.start as usize..]
    );
}

/// A create of a file larger than one part (a full image: on S3 a
/// multipart upload whose completion carries the condition) succeeds only
/// where no file of its name exists, keeps its timestamp, and of racers
/// exactly one wins.
fn check_large_create_new(store: Arc<dyn Store>) {
    let image = |seed: u32| -> Vec<u8> {
        (0..(17u32 << 20) + 5)
            .map(|i| (i.wrapping_mul(seed) % 253) as u8)
            .collect()
    };
    let mine = image(7);
    let file = put(&*store, (9, 1, 6), &mine, T1, WriteMode::CreateNew).unwrap();
    let refused = put(&*store, (9, 1, 6), &image(11), T2, WriteMode::CreateNew).unwrap_err();
    assert_eq!(refused.fault(), Some(Fault::Conflict), "{refused}");
    assert!(level(&*store, 9).contains(&file));
    assert!(streamed(&*store, &file, 0..file.size) == mine);

    const RACERS: u32 = 3;
    let start = Arc::new(Barrier::new(RACERS as usize));
    let racers: Vec<_> = (0..RACERS)
        .map(|i| {
            let (store, start) = (store.clone(), start.clone());
            std::thread::spawn(move || {
                let body = image(13 + i);
                start.wait();
                put(&*store, (9, 1, 7), &body, T1, WriteMode::CreateNew)
                    .map(|_| i)
                    .map_err(|e| e.fault())
            })
        })
        .collect();
    let results: Vec<_> = racers.into_iter().map(|t| t.join().unwrap()).collect();
    let winners: Vec<u32> = results.iter().filter_map(|r| r.ok()).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    assert!(results
        .iter()
        .all(|r| r.is_ok() || *r == Err(Some(Fault::Conflict))));
    let won = level(&*store, 9)
        .into_iter()
        .find(|f| f.max_txid == txid(7))
        .unwrap();
    assert!(streamed(&*store, &won, 0..won.size) == image(13 + winners[0]));
}

#[test]
fn large_folder_files_stream_in_and_out_in_parts() {
    let dir = tempfile::tempdir().unwrap();
    check_large_files(&folder_store(dir.path()));
    check_large_create_new(Arc::new(folder_store(dir.path())));
}

#[test]
fn large_s3_files_stream_in_and_out_in_parts() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.create_bucket("big");
    let store = Arc::new(ReplicaStore::open("s3://big/db", &moto.options()).unwrap());
    check_large_files(&store);
    check_large_create_new(store.clone());
    // Another database's replica in the same bucket, whose prefix ends
    // with the first one's, shares its S3 client: its creates are its own.
    let beside = Arc::new(ReplicaStore::open("s3://big/x/db", &moto.options()).unwrap());
    check_large_create_new(beside);
    // The refused uploads were aborted: S3 keeps none of their parts.
    let uploads = moto.http("GET", "/big?uploads");
    assert!(uploads.contains("ListMultipartUploadsResult"), "{uploads}");
    assert!(!uploads.contains("<Upload>"), "{uploads}");
}

#[test]
fn a_folder_creates_a_file_only_if_none_of_its_name_exists() {
    let dir = tempfile::tempdir().unwrap();
    check_create_new(Arc::new(folder_store(dir.path())));
}

#[test]
fn s3_creates_an_object_only_if_none_of_its_key_exists() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.create_bucket("fenced");
    check_create_new(Arc::new(
        ReplicaStore::open("s3://fenced/db", &moto.options()).unwrap(),
    ));
}

#[test]
fn an_s3_replica_uses_litestreams_keys_and_timestamp_metadata() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.create_bucket("backups");
    let store = ReplicaStore::open("s3://backups/app/db", &moto.options()).unwrap();
    check_round_trip(&store);

    let listing = moto.http("GET", "/backups?list-type=2");
    assert!(
        listing.contains("<Key>app/db/0009/0000000000000001-0000000000000002.ltx</Key>"),
        "{listing}"
    );
    // The metadata as Litestream writes it (Go's RFC3339Nano, UTC).
    let raw = object_store::aws::AmazonS3Builder::new()
        .with_bucket_name("backups")
        .with_region("us-east-1")
        .with_endpoint(moto.endpoint())
        .with_allow_http(true)
        .with_access_key_id(common::ACCESS_KEY)
        .with_secret_access_key(common::SECRET_KEY)
        .build()
        .unwrap();
    let key = object_store::path::Path::from("app/db/0000/0000000000000001-0000000000000001.ltx");
    let head = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(object_store::ObjectStore::get_opts(
            &raw,
            &key,
            object_store::GetOptions::new().with_head(true),
        ))
        .unwrap();
    let stamp = head
        .attributes
        .get(&object_store::Attribute::Metadata(
            "litestream-timestamp".into(),
        ))
        .map(|v| v.to_string());
    assert_eq!(stamp.as_deref(), Some("2025-11-30T12:39:50.401Z"));
}

#[test]
fn an_s3_replica_lists_every_level_in_one_request_and_counts_it() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.create_bucket("counted");
    // A sibling whose prefix starts with this one's name.
    let sibling = ReplicaStore::open("s3://counted/app/db2", &moto.options()).unwrap();
    fill(&sibling);
    let store = ReplicaStore::open("s3://counted/app/db", &moto.options()).unwrap();
    let empty = store.list_all(Timestamps::Ltx).unwrap();
    assert_eq!(empty.len(), 10);
    assert!(empty.iter().all(Vec::is_empty), "nothing of the sibling's");
    assert_eq!(store.list_requests(), 1, "an empty replica: one LIST");
    let put = fill(&store);
    let all = store.list_all(Timestamps::Ltx).unwrap();
    assert_eq!(all[0], vec![put[1], put[0]]);
    assert_eq!(all[9], vec![put[2]]);
    assert_eq!(store.list_requests(), 2);
    let from = store.list_all_from(txid(2), Timestamps::Ltx).unwrap();
    assert_eq!(from[0], vec![put[0]], "L0 from TXID 2 on");
    assert_eq!(from[9], vec![put[2]], "the other levels whole");
    assert_eq!(store.list_requests(), 3);

    let dir = tempfile::tempdir().unwrap();
    let folder = folder_store(dir.path());
    folder.list_all(Timestamps::Listed).unwrap();
    assert_eq!(
        folder.list_requests(),
        10,
        "a folder reads each level's directory"
    );
}

#[test]
fn s3_faults_are_named() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    let store = ReplicaStore::open("s3://nowhere/db", &moto.options()).unwrap();
    let e = store.list(0, Txid::FIRST, Timestamps::Listed).unwrap_err();
    assert_eq!(e.fault(), Some(Fault::NoBucket), "{e}");
    assert!(e.is_permanent());
    assert!(e.to_string().contains("bucket does not exist"), "{e}");
    drop(moto);

    let Some(strict) = Moto::start(true) else {
        return;
    };
    strict.create_bucket("locked");
    let store = ReplicaStore::open("s3://locked/db", &strict.options()).unwrap();
    let e = store.list(0, Txid::FIRST, Timestamps::Listed).unwrap_err();
    assert_eq!(e.fault(), Some(Fault::Denied), "{e}");
    assert!(e.is_permanent());
    assert!(e.to_string().contains("access denied"), "{e}");
}

/// A conditional replace of the lease object: created only when absent,
/// replaced only at the version read, each refusal a `Conflict` that
/// leaves the object as it was; of 16 racing replaces of one version,
/// exactly one wins.
fn check_conditional_replace(store: Arc<dyn Store>) {
    use offloop_replica::Expect;
    assert_eq!(store.read_object("lock.json").unwrap(), None);
    let v1 = store
        .replace_object("lock.json", Bytes::from("one"), &Expect::Absent)
        .unwrap();
    let taken = store
        .replace_object("lock.json", Bytes::from("two"), &Expect::Absent)
        .unwrap_err();
    assert_eq!(taken.fault(), Some(Fault::Conflict), "{taken}");
    let read = store.read_object("lock.json").unwrap().unwrap();
    assert_eq!(read.bytes.as_ref(), b"one");
    assert_eq!(read.version, v1);
    let v2 = store
        .replace_object(
            "lock.json",
            Bytes::from("three"),
            &Expect::Version(v1.clone()),
        )
        .unwrap();
    assert_ne!(v1, v2);
    let stale = store
        .replace_object("lock.json", Bytes::from("four"), &Expect::Version(v1))
        .unwrap_err();
    assert_eq!(stale.fault(), Some(Fault::Conflict), "{stale}");
    assert_eq!(
        store
            .read_object("lock.json")
            .unwrap()
            .unwrap()
            .bytes
            .as_ref(),
        b"three"
    );
    // The lease sits beside the levels: listings never see it.
    assert!(store
        .list_all(Timestamps::Listed)
        .unwrap()
        .concat()
        .is_empty());
    let barrier = Arc::new(Barrier::new(16));
    let wins: usize = (0..16)
        .map(|i| {
            let (store, barrier, v2) = (store.clone(), barrier.clone(), v2.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let bytes = Bytes::from(format!("racer {i}"));
                store
                    .replace_object("lock.json", bytes, &Expect::Version(v2))
                    .is_ok() as usize
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .sum();
    assert_eq!(wins, 1);
}

#[test]
fn a_folder_replaces_the_lease_only_at_the_version_it_read() {
    let dir = tempfile::tempdir().unwrap();
    check_conditional_replace(Arc::new(folder_store(dir.path())));
}

#[test]
fn s3_replaces_the_lease_only_at_the_etag_it_read() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.create_bucket("lease");
    check_conditional_replace(Arc::new(
        ReplicaStore::open("s3://lease/db", &moto.options()).unwrap(),
    ));
}
