//! Unit tests of `object.rs`: timestamps as Go writes them, and URLs and
//! credentials refused before any request.

use super::*;

#[test]
fn timestamps_are_written_as_go_writes_rfc3339_nano() {
    assert_eq!(
        go_rfc3339_nano(1_764_506_390_401),
        "2025-11-30T12:39:50.401Z"
    );
    assert_eq!(go_rfc3339_nano(1_764_506_390_400), "2025-11-30T12:39:50.4Z");
    assert_eq!(go_rfc3339_nano(1_764_506_390_000), "2025-11-30T12:39:50Z");
}

#[test]
fn bad_urls_are_refused_with_a_reason() {
    let none = S3Options::default();
    let err = |u: &str| ReplicaStore::open(u, &none).unwrap_err().to_string();
    assert!(err("ftp://x/y").contains("unknown scheme"));
    assert!(err("not a url").contains("bad replica URL"));
    assert!(err("s3://bucket").contains("needs a path"));
    assert!(err("s3:///prefix").contains("bucket"));
    let file = tempfile::NamedTempFile::new().unwrap();
    let url = format!("file://{}", file.path().display());
    assert!(err(&url).contains("is a file, not a folder"));
}

#[test]
fn s3_without_credentials_is_refused_before_any_request() {
    let opts = S3Options {
        access_key_id: Some(String::new()),
        ..S3Options::default()
    };
    // An empty key counts as none; the environment may still have one,
    // so only check the message when it does not.
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
        let e = ReplicaStore::open("s3://b/p", &opts)
            .unwrap_err()
            .to_string();
        assert!(e.contains("credentials"), "{e}");
    }
}
