//! Connection settings: which connection gets which pragma, applying them
//! when a connection opens, and reading back what is in force.
//!
//! A pragma write is only a request. SQLite clamps some values without a
//! word (`mmap_size` to `SQLITE_MAX_MMAP_SIZE`), ignores others
//! (`journal_mode = wal` on an in-memory database stays `memory`, an unknown
//! pragma does nothing), and some have no value at all on some databases
//! (`mmap_size` on an in-memory database returns no row). And a setting
//! belongs to one connection, while a database here has up to 66 of them.
//! So every connection applies the settings of its role before its first
//! statement, then reads every one of them back; what differs from the
//! request is reported as a [`Mismatch`], and refused with `strict_settings`.

use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;

use crate::error::Result;
use crate::role::Role;

use super::keywords::{JournalMode, PragmaValue, Synchronous, TempStore};
use super::policy::{plain, pragmas_apply_to, Key, SettingValue};
use super::report::{strict_error, ConnectionSettings, Mismatch};
use super::Settings;

/// What offloop asks of `key` on a connection of `role`: the value to write
/// and the value it should read back. `None`: nothing is asked (the setting
/// does not belong there, or SQLite's own default stands).
/// `journal_mode` is the mode in force on the connection, on which the
/// default of `synchronous` depends.
fn request(
    settings: &Settings,
    key: Key,
    role: Role,
    journal_mode: &SettingValue,
) -> Option<(PragmaValue, SettingValue)> {
    if !key.applies_to(role) {
        return None;
    }
    let integer = |i: i64| Some((PragmaValue::Integer(i), SettingValue::Integer(i)));
    let keyword =
        |k: &'static str| Some((PragmaValue::Text(k.into()), SettingValue::Text(k.into())));
    match key {
        Key::BusyTimeout => {
            let ms = i64::try_from(settings.busy_timeout.as_millis()).unwrap_or(i64::MAX);
            integer(ms.min(i64::from(i32::MAX)))
        }
        Key::JournalMode => settings
            .requested_journal_mode()
            .map(JournalMode::as_str)
            .and_then(keyword),
        Key::Synchronous => {
            // NORMAL is safe (durable up to the last checkpoint) only in
            // WAL; in a rollback journal SQLite's FULL stays.
            let in_wal = *journal_mode == SettingValue::Text("wal".into());
            let sync = settings
                .synchronous
                .or(in_wal.then_some(Synchronous::Normal))?;
            keyword(sync.as_str())
        }
        Key::JournalSizeLimit => integer(settings.journal_size_limit.max(-1)),
        Key::ForeignKeys => {
            let on = settings.foreign_keys;
            Some((PragmaValue::Integer(on.into()), SettingValue::Bool(on)))
        }
        Key::MmapSize => settings
            .mmap_size
            .map(|size| i64::try_from(size).unwrap_or(i64::MAX))
            .and_then(integer),
        Key::CacheSize => settings.cache_size.and_then(integer),
        Key::TempStore => settings.temp_store.map(TempStore::as_str).and_then(keyword),
    }
}

/// A free-form pragma's request in the form SQLite reads it back: flags as
/// 0 and 1, numbers as numbers, the keywords SQLite stores as numbers as
/// those numbers, other text in lower case.
fn expected_pragma(name: &str, value: &PragmaValue) -> SettingValue {
    let text = match value {
        PragmaValue::Integer(i) => return SettingValue::Integer(*i),
        PragmaValue::Text(t) => t.trim().to_ascii_lowercase(),
    };
    match text.as_str() {
        "on" | "yes" | "true" => return SettingValue::Integer(1),
        "off" | "no" | "false" => return SettingValue::Integer(0),
        _ => {}
    }
    if let Ok(i) = text.parse::<i64>() {
        return SettingValue::Integer(i);
    }
    let levels: &[&str] = match name.to_ascii_lowercase().as_str() {
        "auto_vacuum" => &["none", "full", "incremental"],
        "secure_delete" => &["off", "on", "fast"],
        _ => &[],
    };
    match levels.iter().position(|l| *l == text) {
        Some(level) => SettingValue::Integer(level as i64),
        None => SettingValue::Text(text),
    }
}

fn same(requested: &SettingValue, effective: &SettingValue) -> bool {
    match (requested, effective) {
        (SettingValue::Integer(a), SettingValue::Real(b))
        | (SettingValue::Real(b), SettingValue::Integer(a)) => (*a as f64) == *b,
        (a, b) => a == b,
    }
}

fn write(conn: &Connection, name: &str, value: &PragmaValue) -> Result<()> {
    match value {
        PragmaValue::Integer(i) => conn.pragma_update(None, name, i)?,
        PragmaValue::Text(t) => conn.pragma_update(None, name, t)?,
    }
    Ok(())
}

/// `PRAGMA name`: the first column of the first row, `Null` when there is
/// no row (mmap_size on an in-memory database, an unknown pragma).
fn read(conn: &Connection, name: &str) -> Result<SqlValue> {
    match conn.pragma_query_value(None, name, |row| row.get::<_, SqlValue>(0)) {
        Ok(value) => Ok(value),
        Err(rusqlite::Error::QueryReturnedNoRows) => Ok(SqlValue::Null),
        Err(e) => Err(e.into()),
    }
}

/// Applies every setting that belongs on a connection of `role`, before it
/// runs anything else, then reads them all back. With `strict_settings`, a
/// value in force that differs from the request is an error.
///
/// The order matters: the busy timeout first, so what follows waits for
/// locks; then the free-form pragmas, so `page_size` or `auto_vacuum` land
/// before the journal mode writes the file's header; then the journal mode,
/// on which the default of `synchronous` depends.
pub fn apply(conn: &Connection, role: Role, settings: &Settings) -> Result<ConnectionSettings> {
    let none = SettingValue::Null;
    if let Some((value, _)) = request(settings, Key::BusyTimeout, role, &none) {
        write(conn, Key::BusyTimeout.pragma(), &value)?;
    }
    if pragmas_apply_to(role) {
        for (name, value) in &settings.pragmas {
            write(conn, name, value)?;
        }
    }
    if let Some((value, _)) = request(settings, Key::JournalMode, role, &none) {
        write(conn, Key::JournalMode.pragma(), &value)?;
    }
    let journal_mode = Key::JournalMode.normalize(read(conn, Key::JournalMode.pragma())?);
    for key in Key::ALL {
        if matches!(key, Key::BusyTimeout | Key::JournalMode) {
            continue;
        }
        if let Some((value, _)) = request(settings, key, role, &journal_mode) {
            write(conn, key.pragma(), &value)?;
        }
    }
    let report = read_back(conn, role, settings)?;
    if settings.strict_settings {
        if let Some(mismatch) = report.mismatches.first() {
            return Err(strict_error(mismatch));
        }
    }
    Ok(report)
}

/// Reads every setting back on a connection of `role` and compares the
/// ones that belong there with the request.
pub fn read_back(conn: &Connection, role: Role, settings: &Settings) -> Result<ConnectionSettings> {
    let mut values = Vec::with_capacity(Key::ALL.len());
    for key in Key::ALL {
        values.push((key, key.normalize(read(conn, key.pragma())?)));
    }
    let journal_mode = values
        .iter()
        .find(|(k, _)| *k == Key::JournalMode)
        .map_or(SettingValue::Null, |(_, v)| v.clone());
    let mut mismatches = Vec::new();
    for (key, effective) in &values {
        if let Some((_, requested)) = request(settings, *key, role, &journal_mode) {
            if !same(&requested, effective) {
                mismatches.push(Mismatch {
                    role,
                    name: key.pragma().to_string(),
                    requested,
                    effective: effective.clone(),
                });
            }
        }
    }
    let mut pragmas = Vec::new();
    if pragmas_apply_to(role) {
        for (name, value) in &settings.pragmas {
            let effective = plain(read(conn, name)?);
            let requested = expected_pragma(name, value);
            if !same(&requested, &effective) {
                mismatches.push(Mismatch {
                    role,
                    name: name.clone(),
                    requested,
                    effective: effective.clone(),
                });
            }
            pragmas.push((name.clone(), effective));
        }
    }
    Ok(ConnectionSettings {
        role,
        values,
        pragmas,
        mismatches,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::connection::{compile_options, open_checkpointer, open_reader, open_writer};
    use crate::database::Database;
    use crate::job::Outcome;
    use crate::settings::{is_strict_error, SettingsReport};

    const GIB: u64 = 1 << 30;

    fn temp_settings(dir: &tempfile::TempDir) -> Settings {
        Settings::new(dir.path().join("db.sqlite").to_str().unwrap())
    }

    /// Opens an engine database and waits for its open report.
    fn open(settings: Settings) -> (Database, crate::error::Result<SettingsReport>) {
        let (tx, rx) = mpsc::channel();
        let db = Database::open(settings, Box::new(move |r| tx.send(r).unwrap())).unwrap();
        let report = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap()
            .map(settings_of);
        (db, report)
    }

    fn settings_of(outcome: Outcome) -> SettingsReport {
        match outcome {
            Outcome::Settings(report) => *report,
            other => panic!("not a settings report: {other:?}"),
        }
    }

    fn read_settings(db: &Database) -> SettingsReport {
        let (tx, rx) = mpsc::channel();
        db.read_settings(Box::new(move |r| tx.send(r).unwrap()));
        settings_of(rx.recv_timeout(Duration::from_secs(30)).unwrap().unwrap())
    }

    fn close(db: Database) {
        let (tx, rx) = mpsc::channel();
        db.close(Box::new(move |r| tx.send(r).unwrap()));
        rx.recv_timeout(Duration::from_secs(30)).unwrap().unwrap();
    }

    fn raw(conn: &Connection, pragma: &str) -> SqlValue {
        read(conn, pragma).unwrap()
    }

    /// Every option set to something other than its default.
    fn tuned(dir: &tempfile::TempDir) -> Settings {
        let mut settings = temp_settings(dir);
        settings.readers = 3;
        settings.busy_timeout = Duration::from_millis(1234);
        settings.synchronous = Some(Synchronous::Full);
        settings.journal_size_limit = 1 << 20;
        settings.foreign_keys = false;
        settings.mmap_size = Some(8 * GIB);
        settings.cache_size = Some(-4096);
        settings.temp_store = Some(TempStore::Memory);
        settings.pragmas = vec![
            ("recursive_triggers".into(), PragmaValue::Text("ON".into())),
            ("cell_size_check".into(), PragmaValue::Integer(1)),
        ];
        settings
    }

    #[test]
    fn the_bundled_sqlite_has_a_64_gib_mmap_ceiling() {
        let options = compile_options();
        assert!(
            options.iter().any(|o| o == "MAX_MMAP_SIZE=0x1000000000"),
            "{options:?}"
        );
    }

    #[test]
    fn each_role_connection_has_its_settings_by_raw_pragma() {
        let dir = tempfile::tempdir().unwrap();
        let settings = tuned(&dir);
        let (writer, report) = open_writer(&settings).unwrap();
        assert_eq!(report.mismatches, vec![]);
        let (reader, report) = open_reader(&settings, 0).unwrap();
        assert_eq!(report.mismatches, vec![]);
        let (checkpointer, report) = open_checkpointer(&settings).unwrap();
        assert_eq!(report.mismatches, vec![]);

        use SqlValue::{Integer, Text};
        for conn in [&writer, &reader, &checkpointer] {
            assert_eq!(raw(conn, "busy_timeout"), Integer(1234));
            assert_eq!(raw(conn, "journal_mode"), Text("wal".into()));
        }
        for conn in [&writer, &reader] {
            assert_eq!(
                raw(conn, "mmap_size"),
                Integer(8 << 30),
                "8 GiB, not clamped"
            );
            assert_eq!(raw(conn, "cache_size"), Integer(-4096));
            assert_eq!(raw(conn, "temp_store"), Integer(2));
            assert_eq!(raw(conn, "foreign_keys"), Integer(0));
            assert_eq!(raw(conn, "recursive_triggers"), Integer(1));
            assert_eq!(raw(conn, "cell_size_check"), Integer(1));
        }
        for conn in [&writer, &checkpointer] {
            assert_eq!(raw(conn, "synchronous"), Integer(2));
            assert_eq!(raw(conn, "journal_size_limit"), Integer(1 << 20));
        }
        // Not applied where they do not belong: SQLite's defaults stand.
        assert_eq!(raw(&checkpointer, "mmap_size"), Integer(0));
        assert_eq!(raw(&checkpointer, "recursive_triggers"), Integer(0));
        assert_eq!(raw(&reader, "journal_size_limit"), Integer(-1));
        // And the reader is still read-only.
        assert_eq!(raw(&reader, "query_only"), Integer(1));
    }

    #[test]
    fn defaults_are_wal_and_normal_where_they_belong() {
        let dir = tempfile::tempdir().unwrap();
        let settings = temp_settings(&dir);
        let (writer, report) = open_writer(&settings).unwrap();
        assert_eq!(report.mismatches, vec![]);
        assert_eq!(raw(&writer, "journal_mode"), SqlValue::Text("wal".into()));
        assert_eq!(raw(&writer, "synchronous"), SqlValue::Integer(1));
        assert_eq!(raw(&writer, "busy_timeout"), SqlValue::Integer(5000));
        assert_eq!(raw(&writer, "foreign_keys"), SqlValue::Integer(1));
        assert_eq!(raw(&writer, "mmap_size"), SqlValue::Integer(0));
        let (checkpointer, _) = open_checkpointer(&settings).unwrap();
        assert_eq!(raw(&checkpointer, "synchronous"), SqlValue::Integer(1));
        assert_eq!(
            report.get(Key::Synchronous),
            &SettingValue::Text("normal".into())
        );
        assert_eq!(report.get(Key::ForeignKeys), &SettingValue::Bool(true));
    }

    #[test]
    fn every_connection_of_a_database_reports_its_settings() {
        let dir = tempfile::tempdir().unwrap();
        let (db, opened) = open(tuned(&dir));
        let opened = opened.unwrap();
        let live = read_settings(&db);
        use Role::*;
        // The open opens the writer only; a settings read opens the rest.
        let roles = |report: &SettingsReport| -> Vec<Role> {
            report.connections.iter().map(|c| c.role).collect()
        };
        assert_eq!(roles(&opened), vec![Writer]);
        assert_eq!(
            roles(&live),
            vec![Writer, Reader(0), Reader(1), Reader(2), Checkpointer]
        );
        for report in [&opened, &live] {
            assert_eq!(report.mismatches().count(), 0);
            for c in &report.connections {
                let expect_query = c.role != Checkpointer;
                let mmap = if expect_query { 8 * GIB as i64 } else { 0 };
                assert_eq!(
                    c.get(Key::MmapSize),
                    &SettingValue::Integer(mmap),
                    "{}",
                    c.role
                );
                assert_eq!(c.get(Key::BusyTimeout), &SettingValue::Integer(1234));
                assert_eq!(c.get(Key::JournalMode), &SettingValue::Text("wal".into()));
                if expect_query {
                    assert_eq!(c.get(Key::CacheSize), &SettingValue::Integer(-4096));
                    assert_eq!(c.get(Key::TempStore), &SettingValue::Text("memory".into()));
                    assert_eq!(c.get(Key::ForeignKeys), &SettingValue::Bool(false));
                    assert_eq!(
                        c.pragmas,
                        vec![
                            ("recursive_triggers".into(), SettingValue::Integer(1)),
                            ("cell_size_check".into(), SettingValue::Integer(1)),
                        ]
                    );
                } else {
                    assert!(c.pragmas.is_empty());
                }
                if matches!(c.role, Writer | Checkpointer) {
                    assert_eq!(c.get(Key::Synchronous), &SettingValue::Text("full".into()));
                    assert_eq!(
                        c.get(Key::JournalSizeLimit),
                        &SettingValue::Integer(1 << 20)
                    );
                }
            }
        }
        close(db);
    }

    #[test]
    fn a_clamped_mmap_size_is_reported_and_refused_when_strict() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = temp_settings(&dir);
        settings.readers = 1;
        settings.mmap_size = Some(128 * GIB);
        let (db, report) = open(settings.clone());
        let mismatches: Vec<_> = report.unwrap().mismatches().cloned().collect();
        let clamped = |role| Mismatch {
            role,
            name: "mmap_size".into(),
            requested: SettingValue::Integer(128 << 30),
            effective: SettingValue::Integer(64 << 30),
        };
        // At open, the writer's; the reader's once it opens.
        assert_eq!(mismatches, vec![clamped(Role::Writer)]);
        let live: Vec<_> = read_settings(&db).mismatches().cloned().collect();
        assert_eq!(live, vec![clamped(Role::Writer), clamped(Role::Reader(0))]);
        close(db);

        settings.strict_settings = true;
        let (db, report) = open(settings);
        let error = report.unwrap_err();
        assert!(is_strict_error(&error), "{error:?}");
        assert_eq!(
            error.to_string(),
            "mmap_size = 137438953472 was requested, but 68719476736 is in force on the \
             writer (strictSettings refuses to open)"
        );
        close(db);
    }

    #[test]
    fn in_memory_databases_have_no_mmap_and_keep_their_journal_mode() {
        let mut settings = Settings::new(":memory:");
        let (conn, report) = open_writer(&settings).unwrap();
        assert_eq!(report.mismatches, vec![]);
        assert_eq!(report.get(Key::MmapSize), &SettingValue::Null);
        assert_eq!(
            report.get(Key::JournalMode),
            &SettingValue::Text("memory".into())
        );
        assert_eq!(raw(&conn, "mmap_size"), SqlValue::Null);

        settings.journal_mode = Some(JournalMode::Wal);
        settings.mmap_size = Some(GIB);
        let (_, report) = open_writer(&settings).unwrap();
        let names: Vec<_> = report.mismatches.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["journal_mode", "mmap_size"]);
        assert_eq!(
            report.mismatches[0].effective,
            SettingValue::Text("memory".into())
        );
        assert_eq!(report.mismatches[1].effective, SettingValue::Null);
    }

    #[test]
    fn a_pragma_that_does_nothing_is_a_mismatch() {
        let mut settings = Settings::new(":memory:");
        settings.pragmas = vec![
            ("no_such_pragma".into(), PragmaValue::Integer(1)),
            ("threads".into(), PragmaValue::Integer(1000)),
            (
                "auto_vacuum".into(),
                PragmaValue::Text("INCREMENTAL".into()),
            ),
        ];
        let (_, report) = open_writer(&settings).unwrap();
        let found: Vec<_> = report
            .mismatches
            .iter()
            .map(|m| (m.name.as_str(), m.effective.clone()))
            .collect();
        // threads is clamped to SQLITE_MAX_WORKER_THREADS (8); auto_vacuum
        // on a new database is set.
        assert_eq!(
            found,
            [
                ("no_such_pragma", SettingValue::Null),
                ("threads", SettingValue::Integer(8))
            ]
        );
    }

    #[test]
    fn a_rollback_journal_runs_without_a_checkpointer() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = temp_settings(&dir);
        settings.readers = 1;
        settings.journal_mode = Some(JournalMode::Truncate);
        assert!(!settings.runs_checkpointer());
        let (db, report) = open(settings);
        let report = report.unwrap();
        assert_eq!(report.mismatches().count(), 0);
        let writer = report.role(Role::Writer).unwrap();
        assert_eq!(
            writer.get(Key::JournalMode),
            &SettingValue::Text("truncate".into())
        );
        // No NORMAL outside WAL: SQLite's FULL stays.
        assert_eq!(
            writer.get(Key::Synchronous),
            &SettingValue::Text("full".into())
        );
        assert!(report.role(Role::Checkpointer).is_none());
        close(db);
    }

    #[test]
    fn free_form_requests_compare_as_sqlite_reads_them_back() {
        let text = |t: &str| PragmaValue::Text(t.into());
        assert_eq!(
            expected_pragma("x", &text(" On ")),
            SettingValue::Integer(1)
        );
        assert_eq!(
            expected_pragma("x", &text("false")),
            SettingValue::Integer(0)
        );
        assert_eq!(expected_pragma("x", &text("42")), SettingValue::Integer(42));
        assert_eq!(
            expected_pragma("auto_vacuum", &text("incremental")),
            SettingValue::Integer(2)
        );
        assert_eq!(
            expected_pragma("secure_delete", &text("FAST")),
            SettingValue::Integer(2)
        );
        assert_eq!(
            expected_pragma("locking_mode", &text("NORMAL")),
            SettingValue::Text("normal".into())
        );
        assert!(same(&SettingValue::Integer(2), &SettingValue::Real(2.0)));
    }
}
