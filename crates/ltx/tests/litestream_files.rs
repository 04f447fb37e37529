//! Files written by the real Litestream (0.5.17, started here on a database
//! this test writes) decode and verify, through the streaming decoder and
//! through the page index, and its snapshot holds the database.
//!
//! Needs the `litestream` binary: `<repo>/.venv/bin` first, then PATH.
//! Without it the test fails when `CI` is set and is skipped otherwise.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use offloop_ltx::*;

fn tool(name: &str) -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let venv = repo.join(".venv/bin").join(name);
    if venv.is_file() {
        return Some(venv);
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{name} is missing (run .ci/tools)"
        );
        eprintln!("skipped: {name} not found in .venv/bin or PATH");
    }
    found
}

/// Kills the replicator when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "gave up waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The replica's LTX files. A Litestream stopped mid-write leaves a
/// temporary file beside them, under a name that is not an LTX name.
fn ltx_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for level in std::fs::read_dir(root.join("ltx")).unwrap() {
        for f in std::fs::read_dir(level.unwrap().path()).unwrap() {
            let path = f.unwrap().path();
            let name = path.file_name().and_then(|n| n.to_str());
            if name.and_then(parse_file_name).is_some() {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn files_litestream_writes_decode_and_verify() {
    let Some(litestream) = tool("litestream") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("app.db");
    let replica = dir.path().join("replica");
    let socket = dir.path().join("ls.sock");

    let db = rusqlite::Connection::open(&db_path).unwrap();
    db.pragma_update(None, "journal_mode", "wal").unwrap();
    db.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
         INSERT INTO t(v) SELECT randomblob(300) FROM n;
         INSERT INTO t(v) VALUES (randomblob(20000));",
    )
    .unwrap();

    let config = dir.path().join("litestream.yml");
    std::fs::write(
        &config,
        format!(
            "socket:\n  enabled: true\n  path: {}\ndbs:\n  - path: {}\n    replica:\n      type: file\n      path: {}\n",
            socket.display(),
            db_path.display(),
            replica.display()
        ),
    )
    .unwrap();
    let running = Running(
        Command::new(&litestream)
            .args(["replicate", "-config"])
            .arg(&config)
            .env_remove("AWS_CA_BUNDLE")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for("the control socket", || socket.exists());
    // More changes after the first sync, so incremental files exist too.
    for i in 0..3 {
        db.execute("UPDATE t SET v = randomblob(300) WHERE id % 7 = ?1", [i])
            .unwrap();
        let status = Command::new(&litestream)
            .args(["sync", "-wait", "-socket"])
            .arg(&socket)
            .arg(&db_path)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    }
    // A snapshot is there once it has its LTX name: Litestream writes it
    // under a temporary name first.
    wait_for("the first snapshot", || {
        std::fs::read_dir(replica.join("ltx/9")).is_ok_and(|mut d| {
            d.any(|e| {
                let name = e.unwrap().file_name();
                name.to_str().and_then(parse_file_name).is_some()
            })
        })
    });
    // Stopped before the files are read: its compaction and retention would
    // otherwise remove files between the listing and the reads.
    drop(running);

    let files = ltx_files(&replica);
    assert!(files.len() >= 4, "{files:?}");
    let mut saw_incremental = false;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        let (min, max) = parse_file_name(name).unwrap();
        let file = decode_file(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!((file.header.min_txid, file.header.max_txid), (min, max));
        assert!(
            !file.header.has_checksums(),
            "Litestream writes no database checksums"
        );
        saw_incremental |= !file.header.is_snapshot();

        let tail = decode_tail(&bytes, bytes.len() as u64).unwrap();
        check_layout(&tail).unwrap();
        let crc = decode_frames(
            &bytes,
            0,
            file.header.page_size,
            &tail.index.entries,
            |_, _| Ok(()),
        )
        .unwrap();
        verify_file_checksum(&bytes, &[crc], &tail).unwrap();
    }
    assert!(saw_incremental);

    // The newest snapshot, written out page by page, is the database.
    let snapshot = files
        .iter()
        .rfind(|p| p.parent().unwrap().ends_with("9"))
        .unwrap();
    let file = decode_file(&std::fs::read(snapshot).unwrap()).unwrap();
    let out = dir.path().join("from-snapshot.db");
    let mut image = Vec::new();
    for (pgno, data) in &file.pages {
        assert_eq!(*pgno as usize, image.len() / data.len() + 1);
        image.extend_from_slice(data);
    }
    std::fs::write(&out, image).unwrap();
    let copy = rusqlite::Connection::open(&out).unwrap();
    let ok: String = copy
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let n: i64 = copy
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 401);
}
