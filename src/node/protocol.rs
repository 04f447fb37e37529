//! The wire between `lib/` and this addon, named once: every number that
//! crosses the boundary is a constant here, and `lib/protocol.js` holds the
//! same names, in the same order, with the same values. `protocol()` hands
//! this table to JS so that a test (`__test__/source/protocol.test.mjs`)
//! can check that the two sides agree. Nothing else in `src/node/` writes
//! one of these numbers as a literal; `Packer::put` makes a payload name
//! each position it writes.

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
        /// `thread, waitMs, runMs`: where and when a TIMED call ran, just
        /// before its own record.
        TIMING = 5,
    }
    /// Bits of a call's `flags`.
    flag: u32 {
        READ_BIG_INTS = 1,
        ALLOW_BARE_NAMED = 4,
        ALLOW_UNKNOWN_NAMED = 8,
        /// Report the thread and the times of the call (a TIMING record).
        TIMED = 16,
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
    /// Positions of `callSpread`'s arguments (`spread.rs`); the SQL
    /// parameters are the arguments from `PARAMS` on.
    spread_call: usize {
        DISPATCHER = 0,
        KIND = 1,
        ID = 2,
        SQL = 3,
        FLAGS = 4,
        SCOPE = 5,
        CANCELLABLE = 6,
        PARAMS = 7,
    }
    /// Positions of `batchSpread`'s arguments; the statements are the
    /// arguments from `ENTRIES` on, each a `batch_entry`.
    spread_batch: usize {
        DISPATCHER = 0,
        ID = 1,
        READ_BIG_INTS = 2,
        SCOPE = 3,
        ENTRIES = 4,
    }
    /// Positions in one statement of a spread batch, from its start; its
    /// `COUNT` parameters follow from `PARAMS` on.
    batch_entry: usize {
        SQL = 0,
        FLAGS = 1,
        COUNT = 2,
        PARAMS = 3,
    }
    /// Positions in the argument error a statement call returns instead
    /// of queuing (`callSpread`, `NativeDatabase::call`).
    refusal: u32 {
        CODE = 0,
        MESSAGE = 1,
    }
    /// Positions in the argument error a batch returns instead of queuing:
    /// which statement, and its error.
    batch_refusal: u32 {
        INDEX = 0,
        CODE = 1,
        MESSAGE = 2,
    }
    /// Positions in the payload of an `iterate()` chunk. `CURSOR_ROLE` and
    /// `CURSOR_ID` are null once the cursor is done; `UNREADABLE`, present
    /// only when some row holds a value JS cannot take, lists
    /// `unreadable` pairs.
    chunk: u32 {
        COLUMNS = 0,
        VALUES = 1,
        CURSOR_ROLE = 2,
        CURSOR_ID = 3,
        UNREADABLE = 4,
    }
    /// Positions in each pair of a chunk's `UNREADABLE` list, `WIDTH` apart:
    /// the row's index in the chunk and the error its next() throws.
    unreadable: u32 {
        ROW = 0,
        ERROR = 1,
        WIDTH = 2,
    }
    /// Positions in each column's metadata (`stmt.columns()`, `query()`),
    /// `WIDTH` apart in one flat array.
    column: u32 {
        NAME = 0,
        COLUMN = 1,
        DATABASE = 2,
        TABLE = 3,
        TYPE = 4,
        WIDTH = 5,
    }
    /// Positions in the payload of `stmt.query()`: the columns' metadata,
    /// the change count, the last rowid, the rows' column names, their
    /// values.
    query: u32 {
        COLUMNS = 0,
        CHANGES = 1,
        LAST_INSERT_ROWID = 2,
        NAMES = 3,
        VALUES = 4,
    }
    /// Positions in the payload of `db.checkpoint()`.
    checkpoint_result: u32 {
        LOG_FRAMES = 0,
        CHECKPOINTED_FRAMES = 1,
    }
    /// Positions in a `RUN` record, from its kind (a drain's record has the
    /// call id before it, a batch's none); the next record starts `WIDTH`
    /// on.
    run_record: usize {
        KIND = 0,
        CHANGES = 1,
        LAST_INSERT_ROWID = 2,
        WIDTH = 3,
    }
    /// Positions in a `ROWS` record, from its kind; its `COUNT` values
    /// follow from `VALUES` on, and the next record after them.
    rows_record: usize {
        KIND = 0,
        COLUMNS = 1,
        COUNT = 2,
        VALUES = 3,
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
