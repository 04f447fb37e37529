//! What the replica tests share: finding the real tools, starting a moto S3
//! server on a free loopback port (and stopping it), running `litestream`,
//! and writing databases with rusqlite. Every process started here is ended
//! when its guard drops.

#![allow(dead_code)] // each test file uses its own share of these helpers

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use offloop_replica::S3Options;

/// A tool from `<repo>/.venv/bin`, else from PATH. Missing: a failure when
/// `CI` is set, else `None` and the test skips itself.
pub fn tool(name: &str) -> Option<PathBuf> {
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

/// Waits for `done`, polling; a bounded wait for an event, not a timing check.
pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "gave up waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A child process killed and reaped when dropped.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A moto S3 server on 127.0.0.1, stopped when dropped.
pub struct Moto {
    pub port: u16,
    _process: Running,
}

pub const ACCESS_KEY: &str = "offloop-test";
pub const SECRET_KEY: &str = "offloop-secret";

impl Moto {
    /// Starts moto; `None` when it is not installed (and `CI` is unset).
    /// With `check_auth`, moto refuses keys it does not know (all of them)
    /// after one free request, which [`Moto::create_bucket`] may spend.
    pub fn start(check_auth: bool) -> Option<Moto> {
        let moto = tool("s3_test_server")?;
        let port = free_port();
        let mut cmd = Command::new(moto);
        cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if check_auth {
            cmd.env("INITIAL_NO_AUTH_ACTION_COUNT", "1");
        }
        let process = Running(cmd.spawn().unwrap());
        wait_for("moto to listen", || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Some(Moto {
            port,
            _process: process,
        })
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn options(&self) -> S3Options {
        S3Options {
            endpoint: Some(self.endpoint()),
            region: Some("us-east-1".into()),
            access_key_id: Some(ACCESS_KEY.into()),
            secret_access_key: Some(SECRET_KEY.into()),
            session_token: None,
            force_path_style: Some(true),
        }
    }

    /// One plain HTTP request; returns the status line, headers and body.
    pub fn http(&self, method: &str, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            s,
            "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    pub fn create_bucket(&self, bucket: &str) {
        let reply = self.http("PUT", &format!("/{bucket}"));
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    }
}

/// Every table's rows, values spelled out, tables by name and rows by
/// rowid: two databases with equal dumps hold the same data.
pub fn dump(path: &Path) -> Vec<(String, Vec<String>)> {
    let db =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let tables: Vec<String> = db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    tables
        .into_iter()
        .map(|t| {
            let mut stmt = db
                .prepare(&format!("SELECT * FROM \"{t}\" ORDER BY rowid"))
                .unwrap();
            let n = stmt.column_count();
            let rows = stmt
                .query_map([], |r| {
                    Ok((0..n)
                        .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                        .collect::<Vec<_>>()
                        .join("|"))
                })
                .unwrap()
                .map(|r| r.unwrap())
                .collect();
            (t, rows)
        })
        .collect()
}

pub fn integrity_ok(path: &Path) {
    let db = rusqlite::Connection::open(path).unwrap();
    let ok: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok", "{}", path.display());
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// `litestream replicate` on one database, with its control socket, until
/// dropped. The environment's `AWS_CA_BUNDLE` is kept from it: one that
/// names no usable bundle breaks its S3 client.
pub struct Replicate {
    pub litestream: PathBuf,
    pub socket: PathBuf,
    pub db: PathBuf,
    _process: Running,
}

impl Replicate {
    /// `replica_yaml` is the body of the `replica:` entry, indented by 6.
    pub fn start(litestream: &Path, dir: &Path, db: &Path, replica_yaml: &str) -> Replicate {
        let socket = dir.join("litestream.sock");
        let config = dir.join("litestream.yml");
        std::fs::write(
            &config,
            format!(
                "socket:\n  enabled: true\n  path: {}\ndbs:\n  - path: {}\n    replica:\n{replica_yaml}",
                socket.display(),
                db.display()
            ),
        )
        .unwrap();
        let process = Running(
            Command::new(litestream)
                .args(["replicate", "-config"])
                .arg(&config)
                .env_remove("AWS_CA_BUNDLE")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        wait_for("litestream's control socket", || socket.exists());
        Replicate {
            litestream: litestream.to_path_buf(),
            socket,
            db: db.to_path_buf(),
            _process: process,
        }
    }

    /// Forces a sync and waits for the replica to hold it; returns the TXID.
    pub fn sync(&self) -> u64 {
        let out = Command::new(&self.litestream)
            .args(["sync", "-wait", "-json", "-socket"])
            .arg(&self.socket)
            .arg(&self.db)
            .env_remove("AWS_CA_BUNDLE")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let field = text
            .split("\"replica_txid\":")
            .nth(1)
            .expect("a replica_txid");
        field
            .trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }
}

/// `litestream restore` into `out`; `args` go before `-o`.
pub fn litestream_restore(
    litestream: &Path,
    args: &[&str],
    out: &Path,
    replica_url: &str,
    env: &[(&str, &str)],
) {
    let result = Command::new(litestream)
        .arg("restore")
        .args(args)
        .arg("-o")
        .arg(out)
        .arg(replica_url)
        .env_remove("AWS_CA_BUNDLE")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "litestream restore {args:?}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
}

/// Writes `bytes` to the replica as the file at `level` covering
/// `min..=max`, through a local file as the replicator does.
pub fn put(
    store: &dyn offloop_replica::Store,
    (level, min, max): (u8, u64, u64),
    bytes: &[u8],
    timestamp_ms: i64,
    mode: offloop_replica::WriteMode,
) -> Result<offloop_replica::LtxFile, offloop_replica::Error> {
    let txid = |n| offloop_replica::Txid::new(n).expect("a TXID from 1");
    let file = offloop_replica::LtxFile {
        level,
        min_txid: txid(min),
        max_txid: txid(max),
        size: bytes.len() as u64,
        timestamp_ms,
    };
    let source = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(source.path(), bytes).unwrap();
    store.write(&file, source.path(), mode)?;
    Ok(file)
}
