//! The wire between `lib/` and this addon, named once: every number that
//! crosses the boundary is a constant here, and `lib/protocol.js` holds the
//! same names, in the same order, with the same values. `protocol()` hands
//! this table to JS so that a test (`__test__/source/protocol.test.mjs`) can check
//! that the two sides agree. Nothing else in `src/node/` writes one of
//! these numbers as a literal.

use napi::{Env, Result};
use napi_derive::napi;

use super::js::{Cx, Js};

/// Declares each group of the wire as a module of constants, and
/// `TABLE`, the same names and values in the same order for `protocol()`.
macro_rules! wire {
    ($($(#[$doc:meta])* $group:ident: $ty:ty { $($(#[$item_doc:meta])* $name:ident = $value:expr),+ $(,)? })+) => {
        $(
            $(#[$doc])*
            pub mod $group {
                $($(#[$item_doc])* pub const $name: $ty = $value;)+
            }
        )+

        /// Every group with its names and values, in declaration order.
        const TABLE: &[(&str, &[(&str, f64)])] = &[
            $((stringify!($group), &[$((stringify!($name), $group::$name as f64)),+])),+
        ];
    };
}

wire! {
    /// What a statement call does (`NativeDatabase::call`).
    call: u32 {
        RUN = 0,
        GET = 1,
        ALL = 2,
        ITERATE = 3,
        COLUMNS = 4,
        EXPAND = 5,
        QUERY = 6,
    }
    /// The kind of each record in a drain's flat array
    /// (`completions_to_js`); every record starts `id, kind`.
    record: u32 {
        /// `error`: an error tuple (see `error`).
        FAILED = 0,
        /// `payload`: any outcome without a record of its own.
        VALUE = 1,
        /// `changes, lastInsertRowid`; also a batch statement's result.
        RUN = 2,
        /// `columns, n, v1 … vn`; also a batch statement's result.
        ROWS = 3,
        /// `totalPages, remainingPages`: a backup's step, before its
        /// own completion (which is a VALUE or FAILED record).
        PROGRESS = 4,
    }
    /// Bits of a call's `flags`.
    flag: u32 {
        READ_BIG_INTS = 1,
        ALLOW_BARE_NAMED = 4,
        ALLOW_UNKNOWN_NAMED = 8,
    }
    /// What a scope begins with (`NativeDatabase::begin`).
    scope: u32 {
        READ = 0,
        DEFERRED = 1,
        IMMEDIATE = 2,
        EXCLUSIVE = 3,
    }
    /// `db.checkpoint(mode)`'s modes.
    checkpoint: u32 {
        PASSIVE = 0,
        FULL = 1,
        RESTART = 2,
        TRUNCATE = 3,
    }
    /// A session's calls (`session_call`).
    session: u32 {
        CHANGESET = 0,
        PATCHSET = 1,
        CLOSE = 2,
    }
    /// What `NativeDatabase::cancel` reports.
    cancel: u32 {
        /// The call finished before the cancel, or is unknown: its result
        /// stands.
        TOO_LATE = 0,
        /// The call never started; it will never run.
        BEFORE_START = 1,
        /// The call was running and is being interrupted.
        WHILE_RUNNING = 2,
    }
    /// The thread that holds a cursor: a reader's index, or this for the
    /// writer.
    role: i32 {
        WRITER = -1,
    }
    /// SQLite's limits (`SQLITE_LIMIT_*`, SQLite's own numbers), in the
    /// order `db.limits` lists them; `COUNT` is how many there are.
    limit: u32 {
        LENGTH = 0,
        SQL_LENGTH = 1,
        COLUMN = 2,
        EXPR_DEPTH = 3,
        COMPOUND_SELECT = 4,
        VDBE_OP = 5,
        FUNCTION_ARG = 6,
        ATTACHED = 7,
        LIKE_PATTERN_LENGTH = 8,
        VARIABLE_NUMBER = 9,
        TRIGGER_DEPTH = 10,
        COUNT = 11,
    }
    /// Positions in an error tuple (`error_to_js`).
    error: u32 {
        CODE = 0,
        MESSAGE = 1,
        ERRCODE = 2,
        ERRSTR = 3,
        SQLITE_CODE = 4,
        BATCH_INDEX = 5,
    }
}

/// The writer's role number, as cursors carry it.
pub const WRITER_ROLE: i32 = role::WRITER;

/// The table above as `[[group, [[NAME, number], …]], …]`, in declaration
/// order (order matters: lib/protocol.js must list them the same way).
#[napi(catch_unwind)]
pub fn protocol(env: Env) -> Result<Js> {
    let cx = Cx(env.raw());
    let table = cx.array(TABLE.len())?;
    for (g, (group, entries)) in TABLE.iter().enumerate() {
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
