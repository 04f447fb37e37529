//! Measures what capturing a busy writer's WAL costs the replicator: one
//! writer makes one-row commits (about 200 random bytes each, as the
//! `replicate` benchmark's insert loop does), the stager captures after
//! every `per_pass` commits (as the replicator thread does every 20 ms),
//! and after all of them stages one L0 file. A measuring tool, not a test:
//! it asserts nothing and prints JSON.
//!
//! ```text
//! cargo run --release -p offloop-replica --example capture_cost -- DIR [COMMITS] [PER_PASS]
//! valgrind --tool=callgrind --toggle-collect='*Stager*capture*' \
//!     --toggle-collect='*Stager*stage*' target/release/examples/capture_cost DIR
//! ```
//!
//! Under callgrind, collect only the stager's calls (as above): the
//! inserts are SQLite's work, the same with or without a replica. The
//! stager runs on a thread named `capture`, so a profiler can tell its
//! samples (kernel time included) from the inserts':
//! `perf record -g` then `perf report --comm capture`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use offloop_ltx::Txid;
use offloop_replica::stager::{ImageLevels, Stager};
use rusqlite::Connection;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .expect("usage: capture_cost DIR [COMMITS] [PER_PASS]"),
    );
    let commits: usize = args.next().map_or(5_000, |a| a.parse().expect("COMMITS"));
    let per_pass: usize = args.next().map_or(440, |a| a.parse().expect("PER_PASS"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create DIR");
    let db = dir.join("capture.db");
    let conn = Connection::open(&db).expect("open");
    conn.pragma_update(None, "journal_mode", "wal")
        .expect("wal");
    conn.pragma_update(None, "wal_autocheckpoint", 0)
        .expect("no autocheckpoint");
    conn.pragma_update(None, "synchronous", "normal")
        .expect("synchronous");
    conn.execute_batch(
        "CREATE TABLE events(id INTEGER PRIMARY KEY, at INTEGER NOT NULL, body BLOB NOT NULL)",
    )
    .expect("table");
    let mut stager = Stager::open(&db, &dir.join("state")).expect("stager");
    let levels = ImageLevels {
        l0: true,
        l9: false,
    };
    stager
        .full_image(Txid::FIRST, levels, 0)
        .expect("full image");

    // Pseudo-random bodies (xorshift), so nothing compresses easily.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut body = vec![0u8; 184];
    let mut insert = conn
        .prepare("INSERT INTO events(at, body) VALUES (?, ?)")
        .expect("prepare");
    let mut capture = Duration::ZERO;
    let mut passes = 0;
    let mut captured_bytes = 0;
    let mut done = 0;
    while done < commits {
        let n = per_pass.min(commits - done);
        for i in 0..n {
            for b in body.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *b = seed as u8;
            }
            insert
                .execute(rusqlite::params![(done + i) as i64, body])
                .expect("insert");
        }
        done += n;
        let (took, bytes) = on_capture_thread(|| {
            let t = Instant::now();
            stager.capture(None).expect("capture");
            (t.elapsed(), stager.captured_bytes())
        });
        capture += took;
        captured_bytes = bytes;
        passes += 1;
    }
    let (staged, stage) = on_capture_thread(|| {
        let t = Instant::now();
        let staged = stager.stage(1).expect("stage").expect("something staged");
        (staged, t.elapsed())
    });
    let wal = std::fs::metadata(dir.join("capture.db-wal")).map_or(0, |m| m.len());
    println!(
        "{{\"commits\":{commits},\"perPass\":{per_pass},\"passes\":{passes},\"walBytes\":{wal},\"capturedBytes\":{captured_bytes},\"ltxBytes\":{},\"captureMs\":{:.3},\"stageMs\":{:.3}}}",
        staged.file.size,
        capture.as_secs_f64() * 1e3,
        stage.as_secs_f64() * 1e3
    );
}

/// Runs `f` on a thread named `capture` and waits for it.
fn on_capture_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("capture".into())
            .spawn_scoped(s, f)
            .expect("spawn")
            .join()
            .expect("capture thread")
    })
}
