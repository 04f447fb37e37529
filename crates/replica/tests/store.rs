//! The replica store keeps Litestream's layout and timestamps, in a folder
//! and in S3 (a moto server started here), and says clearly what is wrong.

mod common;

use std::time::UNIX_EPOCH;

use bytes::Bytes;
use common::Moto;
use offloop_replica::{Error, LtxFileInfo, ReplicaStore, S3Options};

const T1: i64 = 1_764_506_390_401;
const T2: i64 = 1_764_506_391_000;

fn fill(store: &ReplicaStore) -> Vec<LtxFileInfo> {
    vec![
        store
            .put(0, 2, 2, Bytes::from_static(b"second"), T2)
            .unwrap(),
        store
            .put(0, 1, 1, Bytes::from_static(b"first"), T1)
            .unwrap(),
        store
            .put(9, 1, 2, Bytes::from_static(b"snapshot"), T2)
            .unwrap(),
    ]
}

fn check_round_trip(store: &ReplicaStore) {
    let put = fill(store);
    let l0 = store.list_level(0, true).unwrap();
    assert_eq!(
        l0,
        vec![put[1], put[0]],
        "sorted by TXID, with LTX timestamps"
    );
    assert_eq!(store.list_level(1, true).unwrap(), vec![]);

    let all = store.list_all(true).unwrap();
    assert_eq!(all.len(), 10);
    assert_eq!(all[9], vec![put[2]]);
    assert_eq!(all[0], l0);

    assert_eq!(store.get(&put[1]).unwrap(), Bytes::from_static(b"first"));
    assert_eq!(
        store.get_range(&put[2], 1..4).unwrap(),
        Bytes::from_static(b"nap")
    );

    let mut got = vec![Bytes::new(); 3];
    store
        .fetch_all(&put, 2, |i, b| {
            got[i] = b;
            Ok(())
        })
        .unwrap();
    assert_eq!(got, vec![&b"second"[..], b"first", b"snapshot"]);

    store.delete(&put[..1]).unwrap();
    store.delete(&put[..1]).unwrap();
    assert_eq!(store.list_level(0, false).unwrap().len(), 1);
    assert!(matches!(store.get(&put[0]), Err(Error::NotFound(_))));
}

#[test]
fn a_folder_replica_uses_litestreams_layout_and_file_times() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("replica");
    let store =
        ReplicaStore::open(&format!("file://{}", root.display()), &S3Options::default()).unwrap();
    assert_eq!(
        store.list_all(false).unwrap().concat(),
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
    assert_eq!(store.list_level(0, false).unwrap().len(), 2);
    std::fs::remove_dir_all(&root).unwrap();
    check_round_trip(&store);
}

#[test]
fn large_files_come_back_whole_from_parallel_parts() {
    let dir = tempfile::tempdir().unwrap();
    let store = ReplicaStore::open(
        &format!("file://{}", dir.path().display()),
        &S3Options::default(),
    )
    .unwrap();
    let big: Vec<u8> = (0..(17u32 << 20) + 123).map(|i| (i % 251) as u8).collect();
    let info = store.put(9, 1, 5, Bytes::from(big.clone()), T1).unwrap();
    assert_eq!(store.get(&info).unwrap(), big);
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
fn s3_faults_are_named() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    let store = ReplicaStore::open("s3://nowhere/db", &moto.options()).unwrap();
    let e = store.list_level(0, false).unwrap_err().to_string();
    assert!(e.contains("bucket does not exist"), "{e}");
    drop(moto);

    let Some(strict) = Moto::start(true) else {
        return;
    };
    strict.create_bucket("locked");
    let store = ReplicaStore::open("s3://locked/db", &strict.options()).unwrap();
    let e = store.list_level(0, false).unwrap_err().to_string();
    assert!(e.contains("access denied"), "{e}");
}
