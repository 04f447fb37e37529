//! The wire between `lib/` and this addon, named once: every number that
//! crosses the boundary is a constant here, and `lib/protocol.js` holds the
//! same names, in the same order, with the same values. `protocol()` hands
//! this table to JS so that a test (`__test__/protocol.test.mjs`) can check
//! that the two sides agree. Nothing else in `src/node/` writes one of
//! these numbers as a literal.

use napi::{Env, Result};
use napi_derive::napi;

use super::js::{Cx, Js};

/// What a statement call does (`NativeDatabase::call`).
pub mod call {
    pub const RUN: u32 = 0;
    pub const GET: u32 = 1;
    pub const ALL: u32 = 2;
    pub const ITERATE: u32 = 3;
    pub const COLUMNS: u32 = 4;
    pub const EXPAND: u32 = 5;
    pub const QUERY: u32 = 6;
}

/// The kind of each record in a drain's flat array (`completions_to_js`);
/// every record starts `id, kind`.
pub mod record {
    /// `error`: an error tuple (see `error`).
    pub const FAILED: u32 = 0;
    /// `payload`: any outcome without a record of its own.
    pub const VALUE: u32 = 1;
    /// `changes, lastInsertRowid`; also a batch statement's result.
    pub const RUN: u32 = 2;
    /// `columns, n, v1 … vn`; also a batch statement's result.
    pub const ROWS: u32 = 3;
}

/// Bits of a call's `flags`.
pub mod flag {
    pub const READ_BIG_INTS: u32 = 1;
    pub const ALLOW_BARE_NAMED: u32 = 4;
    pub const ALLOW_UNKNOWN_NAMED: u32 = 8;
}

/// What a scope begins with (`NativeDatabase::begin`).
pub mod scope {
    pub const READ: u32 = 0;
    pub const DEFERRED: u32 = 1;
    pub const IMMEDIATE: u32 = 2;
    pub const EXCLUSIVE: u32 = 3;
}

/// `db.checkpoint(mode)`'s modes.
pub mod checkpoint {
    pub const PASSIVE: u32 = 0;
    pub const FULL: u32 = 1;
    pub const RESTART: u32 = 2;
    pub const TRUNCATE: u32 = 3;
}

/// What `NativeDatabase::cancel` reports.
pub mod cancel {
    /// The call finished before the cancel, or is unknown: its result stands.
    pub const TOO_LATE: u32 = 0;
    /// The call never started; it will never run.
    pub const BEFORE_START: u32 = 1;
    /// The call was running and is being interrupted.
    pub const WHILE_RUNNING: u32 = 2;
}

/// The thread that holds a cursor: a reader's index, or this for the writer.
pub const WRITER_ROLE: i32 = -1;

/// SQLite's limits (`SQLITE_LIMIT_*`, SQLite's own numbers), in the order
/// `db.limits` lists them; `COUNT` is how many there are.
pub mod limit {
    pub const LENGTH: u32 = 0;
    pub const SQL_LENGTH: u32 = 1;
    pub const COLUMN: u32 = 2;
    pub const EXPR_DEPTH: u32 = 3;
    pub const COMPOUND_SELECT: u32 = 4;
    pub const VDBE_OP: u32 = 5;
    pub const FUNCTION_ARG: u32 = 6;
    pub const ATTACHED: u32 = 7;
    pub const LIKE_PATTERN_LENGTH: u32 = 8;
    pub const VARIABLE_NUMBER: u32 = 9;
    pub const TRIGGER_DEPTH: u32 = 10;
    pub const COUNT: u32 = 11;
}

/// Positions in an error tuple (`error_to_js`).
pub mod error {
    pub const CODE: u32 = 0;
    pub const MESSAGE: u32 = 1;
    pub const ERRCODE: u32 = 2;
    pub const ERRSTR: u32 = 3;
    pub const SQLITE_CODE: u32 = 4;
    pub const BATCH_INDEX: u32 = 5;
}

/// The table above as `[[group, [[NAME, number], …]], …]`, in declaration
/// order (order matters: lib/protocol.js must list them the same way).
#[napi(catch_unwind)]
pub fn protocol(env: Env) -> Result<Js> {
    let cx = Cx(env.raw());
    let groups: [(&str, &[(&str, f64)]); 9] = [
        (
            "call",
            &[
                ("RUN", call::RUN as f64),
                ("GET", call::GET as f64),
                ("ALL", call::ALL as f64),
                ("ITERATE", call::ITERATE as f64),
                ("COLUMNS", call::COLUMNS as f64),
                ("EXPAND", call::EXPAND as f64),
                ("QUERY", call::QUERY as f64),
            ],
        ),
        (
            "record",
            &[
                ("FAILED", record::FAILED as f64),
                ("VALUE", record::VALUE as f64),
                ("RUN", record::RUN as f64),
                ("ROWS", record::ROWS as f64),
            ],
        ),
        (
            "flag",
            &[
                ("READ_BIG_INTS", flag::READ_BIG_INTS as f64),
                ("ALLOW_BARE_NAMED", flag::ALLOW_BARE_NAMED as f64),
                ("ALLOW_UNKNOWN_NAMED", flag::ALLOW_UNKNOWN_NAMED as f64),
            ],
        ),
        (
            "scope",
            &[
                ("READ", scope::READ as f64),
                ("DEFERRED", scope::DEFERRED as f64),
                ("IMMEDIATE", scope::IMMEDIATE as f64),
                ("EXCLUSIVE", scope::EXCLUSIVE as f64),
            ],
        ),
        (
            "checkpoint",
            &[
                ("PASSIVE", checkpoint::PASSIVE as f64),
                ("FULL", checkpoint::FULL as f64),
                ("RESTART", checkpoint::RESTART as f64),
                ("TRUNCATE", checkpoint::TRUNCATE as f64),
            ],
        ),
        (
            "cancel",
            &[
                ("TOO_LATE", cancel::TOO_LATE as f64),
                ("BEFORE_START", cancel::BEFORE_START as f64),
                ("WHILE_RUNNING", cancel::WHILE_RUNNING as f64),
            ],
        ),
        ("role", &[("WRITER", WRITER_ROLE as f64)]),
        (
            "limit",
            &[
                ("LENGTH", limit::LENGTH as f64),
                ("SQL_LENGTH", limit::SQL_LENGTH as f64),
                ("COLUMN", limit::COLUMN as f64),
                ("EXPR_DEPTH", limit::EXPR_DEPTH as f64),
                ("COMPOUND_SELECT", limit::COMPOUND_SELECT as f64),
                ("VDBE_OP", limit::VDBE_OP as f64),
                ("FUNCTION_ARG", limit::FUNCTION_ARG as f64),
                ("ATTACHED", limit::ATTACHED as f64),
                ("LIKE_PATTERN_LENGTH", limit::LIKE_PATTERN_LENGTH as f64),
                ("VARIABLE_NUMBER", limit::VARIABLE_NUMBER as f64),
                ("TRIGGER_DEPTH", limit::TRIGGER_DEPTH as f64),
                ("COUNT", limit::COUNT as f64),
            ],
        ),
        (
            "error",
            &[
                ("CODE", error::CODE as f64),
                ("MESSAGE", error::MESSAGE as f64),
                ("ERRCODE", error::ERRCODE as f64),
                ("ERRSTR", error::ERRSTR as f64),
                ("SQLITE_CODE", error::SQLITE_CODE as f64),
                ("BATCH_INDEX", error::BATCH_INDEX as f64),
            ],
        ),
    ];
    let table = cx.array(groups.len())?;
    for (g, (group, entries)) in groups.iter().enumerate() {
        let names = cx.array(entries.len())?;
        for (i, (name, value)) in entries.iter().enumerate() {
            let pair = cx.array(2)?;
            cx.set_element(pair, 0, cx.string(name)?)?;
            cx.set_element(pair, 1, cx.number(*value)?)?;
            cx.set_element(names, i as u32, pair)?;
        }
        let entry = cx.array(2)?;
        cx.set_element(entry, 0, cx.string(group)?)?;
        cx.set_element(entry, 1, names)?;
        cx.set_element(table, g as u32, entry)?;
    }
    Ok(table)
}
