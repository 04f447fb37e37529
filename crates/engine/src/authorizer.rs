//! Authorizers: what decides, as SQLite prepares a statement, whether each
//! of its actions may run. This file owns the authorizer every connection
//! that runs statements carries: offloop's own decision for the role (a
//! reader refuses anything but reading; the writer allows everything and
//! notes the statements that read state of its connection alone, which
//! decides their route), then the caller's (`db.setAuthorizer()`), asked
//! only about what offloop allowed, so it can refuse more and never allow
//! what offloop refuses. It never decides what the caller's authorizer
//! answers: that is a [`ScalarFunction`] implemented outside the engine.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::hooks::{AuthAction, AuthContext, Authorization, TransactionOperation};
use rusqlite::{ffi, Connection};

use crate::error::{Error, Result};
use crate::functions::{FunctionError, ScalarFunction};
use crate::role::Role;
use crate::value::Value;

/// The caller's authorizer. It is called with SQLite's action code, its two
/// arguments, the schema name and the innermost trigger or view (each
/// text or NULL), and answers `SQLITE_OK`, `SQLITE_DENY` or
/// `SQLITE_IGNORE` as an integer.
#[derive(Clone)]
pub struct UserAuthorizer(pub Arc<dyn ScalarFunction>);

impl fmt::Debug for UserAuthorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UserAuthorizer")
    }
}

impl PartialEq for UserAuthorizer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// What the caller's authorizer did while the current job prepared
/// statements: whether it denied an action, and what it reported instead of
/// an answer (a thrown value's token), kept until the statement it failed
/// reports its error.
#[derive(Default)]
pub struct Refusals {
    denied: AtomicBool,
    thrown: Mutex<Option<FunctionError>>,
}

pub type Failure = Arc<Refusals>;

impl Refusals {
    /// Forgets the previous job's refusals.
    pub fn reset(&self) {
        self.denied.store(false, Ordering::Relaxed);
        self.thrown.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// Whether the caller's authorizer, not offloop's, denied an action
    /// since `reset`: a reader's "not authorized" is then the caller's.
    pub fn caller_denied(&self) -> bool {
        self.denied.load(Ordering::Relaxed)
    }
}

/// Puts the authorizer for `role` on `conn`, with the caller's `user`
/// authorizer after offloop's own. `state_reads` (writer only) is set when
/// a statement being prepared reads this connection's own state.
pub fn install(
    conn: &mut Connection,
    role: Role,
    state_reads: Option<Arc<AtomicBool>>,
    set_pragma: Option<Arc<AtomicBool>>,
    user: Option<UserAuthorizer>,
    failure: Failure,
    follower: bool,
) -> Result<()> {
    conn.authorizer(Some(move |ctx: AuthContext<'_>| {
        let own = match role {
            Role::Reader(_) => reader_decision(&ctx),
            // A follower's writer is `query_only` and stays so.
            Role::Writer if follower && sets_query_only(&ctx) => Authorization::Deny,
            Role::Writer | Role::Checkpointer => {
                if let Some(flag) = &state_reads {
                    if reads_connection_state(&ctx) {
                        flag.store(true, Ordering::Relaxed);
                    }
                }
                if let Some(flag) = &set_pragma {
                    if sets_connection_pragma(&ctx) || adds_connection_state(&ctx) {
                        flag.store(true, Ordering::Relaxed);
                    }
                }
                Authorization::Allow
            }
        };
        match (&user, own) {
            (Some(user), Authorization::Allow) => ask(user, &ctx, &failure),
            _ => own,
        }
    }))?;
    Ok(())
}

/// The caller's answer; an error denies the action and is kept in
/// `failure` for the statement's error.
fn ask(user: &UserAuthorizer, ctx: &AuthContext<'_>, failure: &Failure) -> Authorization {
    let (code, arg1, arg2) = raw(&ctx.action);
    let text = |s: Option<&str>| s.map_or(Value::Null, |s| Value::Text(s.to_string()));
    let args = vec![
        Value::Integer(code.into()),
        text(arg1),
        text(arg2),
        text(ctx.database_name),
        text(ctx.accessor),
    ];
    let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| user.0.call(args)))
        .unwrap_or_else(|_| Err("offloop internal error: the authorizer panicked".into()));
    let decision = match answer {
        Ok(Value::Integer(v)) if v == i64::from(ffi::SQLITE_DENY) => Authorization::Deny,
        Ok(Value::Integer(v)) if v == i64::from(ffi::SQLITE_IGNORE) => Authorization::Ignore,
        Ok(Value::Real(v)) if v == f64::from(ffi::SQLITE_DENY) => Authorization::Deny,
        Ok(Value::Real(v)) if v == f64::from(ffi::SQLITE_IGNORE) => Authorization::Ignore,
        // The addon hands over only 0, 1 or 2 (it checks the answer).
        Ok(_) => Authorization::Allow,
        Err(error) => {
            let mut slot = failure.thrown.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert(error);
            Authorization::Deny
        }
    };
    if decision == Authorization::Deny {
        failure.denied.store(true, Ordering::Relaxed);
    }
    decision
}

/// A statement refused because the caller's authorizer failed reports that
/// failure instead of SQLite's "not authorized".
pub fn explain(error: Error, failure: &Failure) -> Error {
    let kept = failure
        .thrown
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    match (error, kept) {
        (Error::Sqlite { code, .. }, Some(message)) if code & 0xff == ffi::SQLITE_AUTH => {
            Error::sqlite(ffi::SQLITE_ERROR, message)
        }
        (error, _) => error,
    }
}

/// A reader refuses anything but reading, so a misrouted statement fails
/// loudly instead of writing behind the writer's back.
pub fn reader_decision(ctx: &AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Select
        | AuthAction::Read { .. }
        | AuthAction::Function { .. }
        | AuthAction::Recursive
        | AuthAction::Transaction { .. }
        | AuthAction::Savepoint { .. } => Authorization::Allow,
        AuthAction::Pragma { .. } if sets_query_only(ctx) => Authorization::Deny,
        AuthAction::Pragma { .. } => Authorization::Allow,
        _ => Authorization::Deny,
    }
}

/// Pragmas whose value belongs to the connection, not the file: a
/// statement that sets one changes what a fresh connection would not have.
const CONNECTION_PRAGMAS: &[&str] = &[
    "analysis_limit",
    "automatic_index",
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "case_sensitive_like",
    "cell_size_check",
    "checkpoint_fullfsync",
    "count_changes",
    "defer_foreign_keys",
    "empty_result_callbacks",
    "foreign_keys",
    "full_column_names",
    "fullfsync",
    "ignore_check_constraints",
    "journal_size_limit",
    "legacy_alter_table",
    "locking_mode",
    "mmap_size",
    "query_only",
    "read_uncommitted",
    "recursive_triggers",
    "reverse_unordered_selects",
    "secure_delete",
    "short_column_names",
    "synchronous",
    "temp_store",
    "temp_store_directory",
    "threads",
    "trusted_schema",
    "wal_autocheckpoint",
    "writable_schema",
];

/// Whether the statement sets a pragma of the connection's own (see
/// `CONNECTION_PRAGMAS`): the writer then keeps its connection open.
fn sets_connection_pragma(ctx: &AuthContext<'_>) -> bool {
    matches!(ctx.action, AuthAction::Pragma { pragma_name, pragma_value: Some(_) }
        if CONNECTION_PRAGMAS.iter().any(|p| pragma_name.eq_ignore_ascii_case(p)))
}

/// Whether the statement creates something only this connection has: a
/// TEMP table, index, view or trigger, or an attached database.
fn adds_connection_state(ctx: &AuthContext<'_>) -> bool {
    matches!(
        ctx.action,
        AuthAction::CreateTempTable { .. }
            | AuthAction::CreateTempIndex { .. }
            | AuthAction::CreateTempView { .. }
            | AuthAction::CreateTempTrigger { .. }
            | AuthAction::Attach { .. }
    )
}

/// Whether the statement sets `PRAGMA query_only`.
fn sets_query_only(ctx: &AuthContext<'_>) -> bool {
    matches!(ctx.action, AuthAction::Pragma { pragma_name, pragma_value: Some(_) }
        if pragma_name.eq_ignore_ascii_case("query_only"))
}

/// Whether a statement being prepared reads something only this connection
/// has: its TEMP or attached schemas, or the results of its own last write
/// (`last_insert_rowid()`, `changes()`, `total_changes()`). Such a query is
/// read-only yet must run on the writer.
fn reads_connection_state(ctx: &AuthContext<'_>) -> bool {
    match ctx.action {
        AuthAction::Function { function_name } => ["last_insert_rowid", "changes", "total_changes"]
            .iter()
            .any(|f| function_name.eq_ignore_ascii_case(f)),
        // TEMP and ATTACHed schemas exist on this connection only.
        AuthAction::Read { .. } => ctx.database_name.is_some_and(|db| db != "main"),
        _ => false,
    }
}

/// SQLite's action code and arguments behind rusqlite's `AuthAction` (it
/// parses them; the caller's authorizer gets them as SQLite passes them).
fn raw<'c>(action: &AuthAction<'c>) -> (i32, Option<&'c str>, Option<&'c str>) {
    use AuthAction as A;
    match *action {
        A::Unknown { code, arg1, arg2 } => (code, arg1, arg2),
        A::CreateIndex {
            index_name,
            table_name,
        } => (ffi::SQLITE_CREATE_INDEX, Some(index_name), Some(table_name)),
        A::CreateTable { table_name } => (ffi::SQLITE_CREATE_TABLE, Some(table_name), None),
        A::CreateTempIndex {
            index_name,
            table_name,
        } => (
            ffi::SQLITE_CREATE_TEMP_INDEX,
            Some(index_name),
            Some(table_name),
        ),
        A::CreateTempTable { table_name } => {
            (ffi::SQLITE_CREATE_TEMP_TABLE, Some(table_name), None)
        }
        A::CreateTempTrigger {
            trigger_name,
            table_name,
        } => (
            ffi::SQLITE_CREATE_TEMP_TRIGGER,
            Some(trigger_name),
            Some(table_name),
        ),
        A::CreateTempView { view_name } => (ffi::SQLITE_CREATE_TEMP_VIEW, Some(view_name), None),
        A::CreateTrigger {
            trigger_name,
            table_name,
        } => (
            ffi::SQLITE_CREATE_TRIGGER,
            Some(trigger_name),
            Some(table_name),
        ),
        A::CreateView { view_name } => (ffi::SQLITE_CREATE_VIEW, Some(view_name), None),
        A::Delete { table_name } => (ffi::SQLITE_DELETE, Some(table_name), None),
        A::DropIndex {
            index_name,
            table_name,
        } => (ffi::SQLITE_DROP_INDEX, Some(index_name), Some(table_name)),
        A::DropTable { table_name } => (ffi::SQLITE_DROP_TABLE, Some(table_name), None),
        A::DropTempIndex {
            index_name,
            table_name,
        } => (
            ffi::SQLITE_DROP_TEMP_INDEX,
            Some(index_name),
            Some(table_name),
        ),
        A::DropTempTable { table_name } => (ffi::SQLITE_DROP_TEMP_TABLE, Some(table_name), None),
        A::DropTempTrigger {
            trigger_name,
            table_name,
        } => (
            ffi::SQLITE_DROP_TEMP_TRIGGER,
            Some(trigger_name),
            Some(table_name),
        ),
        A::DropTempView { view_name } => (ffi::SQLITE_DROP_TEMP_VIEW, Some(view_name), None),
        A::DropTrigger {
            trigger_name,
            table_name,
        } => (
            ffi::SQLITE_DROP_TRIGGER,
            Some(trigger_name),
            Some(table_name),
        ),
        A::DropView { view_name } => (ffi::SQLITE_DROP_VIEW, Some(view_name), None),
        A::Insert { table_name } => (ffi::SQLITE_INSERT, Some(table_name), None),
        A::Pragma {
            pragma_name,
            pragma_value,
        } => (ffi::SQLITE_PRAGMA, Some(pragma_name), pragma_value),
        A::Read {
            table_name,
            column_name,
        } => (ffi::SQLITE_READ, Some(table_name), Some(column_name)),
        A::Select => (ffi::SQLITE_SELECT, None, None),
        A::Transaction { operation } => (
            ffi::SQLITE_TRANSACTION,
            Some(transaction_word(operation)),
            None,
        ),
        A::Update {
            table_name,
            column_name,
        } => (ffi::SQLITE_UPDATE, Some(table_name), Some(column_name)),
        A::Attach { filename } => (ffi::SQLITE_ATTACH, Some(filename), None),
        A::Detach { database_name } => (ffi::SQLITE_DETACH, Some(database_name), None),
        A::AlterTable {
            database_name,
            table_name,
        } => (
            ffi::SQLITE_ALTER_TABLE,
            Some(database_name),
            Some(table_name),
        ),
        A::Reindex { index_name } => (ffi::SQLITE_REINDEX, Some(index_name), None),
        A::Analyze { table_name } => (ffi::SQLITE_ANALYZE, Some(table_name), None),
        A::CreateVtable {
            table_name,
            module_name,
        } => (
            ffi::SQLITE_CREATE_VTABLE,
            Some(table_name),
            Some(module_name),
        ),
        A::DropVtable {
            table_name,
            module_name,
        } => (ffi::SQLITE_DROP_VTABLE, Some(table_name), Some(module_name)),
        A::Function { function_name } => (ffi::SQLITE_FUNCTION, None, Some(function_name)),
        A::Savepoint {
            operation,
            savepoint_name,
        } => (
            ffi::SQLITE_SAVEPOINT,
            Some(savepoint_word(operation)),
            Some(savepoint_name),
        ),
        A::Recursive => (ffi::SQLITE_RECURSIVE, None, None),
        // `AuthAction` is non-exhaustive; a new kind gets its code back
        // once rusqlite names it, and is passed as "unknown" meanwhile.
        _ => (-1, None, None),
    }
}

/// SQLite passes "BEGIN", "COMMIT" or "ROLLBACK"; rusqlite knows only
/// BEGIN, RELEASE and ROLLBACK, so COMMIT (and END) reads as unknown.
fn transaction_word(operation: TransactionOperation) -> &'static str {
    match operation {
        TransactionOperation::Begin => "BEGIN",
        TransactionOperation::Rollback => "ROLLBACK",
        _ => "COMMIT",
    }
}

/// SQLite passes "BEGIN", "RELEASE" or "ROLLBACK".
fn savepoint_word(operation: TransactionOperation) -> &'static str {
    match operation {
        TransactionOperation::Begin => "BEGIN",
        TransactionOperation::Release => "RELEASE",
        _ => "ROLLBACK",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Answer(i64);

    impl ScalarFunction for Answer {
        fn call(&self, _: Vec<Value>) -> std::result::Result<Value, FunctionError> {
            Ok(Value::Integer(self.0))
        }
    }

    struct Throws;

    impl ScalarFunction for Throws {
        fn call(&self, _: Vec<Value>) -> std::result::Result<Value, FunctionError> {
            Err("thrown token".into())
        }
    }

    fn connection() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t(a); INSERT INTO t VALUES (1)")
            .unwrap();
        conn
    }

    fn user(f: impl ScalarFunction + 'static) -> Option<UserAuthorizer> {
        Some(UserAuthorizer(Arc::new(f)))
    }

    #[test]
    fn a_caller_that_allows_everything_cannot_make_a_reader_write() {
        let mut conn = connection();
        let failure = Failure::default();
        install(
            &mut conn,
            Role::Reader(0),
            None,
            None,
            user(Answer(0)),
            failure.clone(),
            false,
        )
        .unwrap();
        let error = Error::from(conn.execute("INSERT INTO t VALUES (2)", []).unwrap_err());
        assert!(matches!(
            error,
            Error::Sqlite {
                code: ffi::SQLITE_AUTH,
                ..
            }
        ));
        assert!(!failure.caller_denied(), "offloop refused, not the caller");
    }

    #[test]
    fn the_caller_denies_on_the_writer_and_its_observer_still_sees_state_reads() {
        let mut conn = connection();
        let failure = Failure::default();
        let state_reads = Arc::new(AtomicBool::new(false));
        let deny = user(Answer(ffi::SQLITE_DENY.into()));
        install(
            &mut conn,
            Role::Writer,
            Some(state_reads.clone()),
            None,
            deny,
            failure.clone(),
            false,
        )
        .unwrap();
        assert!(conn.prepare("SELECT a FROM t").is_err());
        assert!(failure.caller_denied());
        let allow = user(Answer(0));
        install(
            &mut conn,
            Role::Writer,
            Some(state_reads.clone()),
            None,
            allow,
            failure,
            false,
        )
        .unwrap();
        conn.prepare("SELECT last_insert_rowid()").unwrap();
        assert!(state_reads.load(Ordering::Relaxed));
    }

    #[test]
    fn a_followers_writer_cannot_turn_query_only_off_and_still_reads_it() {
        let mut conn = connection();
        install(
            &mut conn,
            Role::Writer,
            None,
            None,
            None,
            Failure::default(),
            true,
        )
        .unwrap();
        assert!(conn.execute_batch("PRAGMA query_only = 0").is_err());
        conn.query_row("PRAGMA query_only", [], |r| r.get::<_, i64>(0))
            .unwrap();
        conn.execute("INSERT INTO t VALUES (3)", []).unwrap();
    }

    #[test]
    fn what_a_throwing_caller_reported_replaces_not_authorized() {
        let mut conn = connection();
        let failure = Failure::default();
        install(
            &mut conn,
            Role::Writer,
            None,
            None,
            user(Throws),
            failure.clone(),
            false,
        )
        .unwrap();
        let error = Error::from(conn.prepare("SELECT a FROM t").unwrap_err());
        assert_eq!(
            explain(error, &failure),
            Error::sqlite(ffi::SQLITE_ERROR, "thrown token")
        );
        let other = Error::sqlite(ffi::SQLITE_BUSY, "database is locked");
        assert_eq!(explain(other.clone(), &failure), other);
    }

    #[test]
    fn commit_reaches_the_caller_as_sqlite_names_it() {
        let commit = AuthAction::Transaction {
            operation: TransactionOperation::Unknown,
        };
        assert_eq!(
            raw(&commit),
            (ffi::SQLITE_TRANSACTION, Some("COMMIT"), None)
        );
    }
}
