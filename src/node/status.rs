//! Synchronous reads of a database's state that the engine publishes from
//! its threads (atomics it keeps up to date). Nothing here waits, queues a
//! job or touches SQLite.

use napi_derive::napi;

use super::database::NativeDatabase;

/// Whether the writer's connection is inside a transaction, however it
/// began (`db.isTransaction` after `exec('BEGIN')`).
#[napi(catch_unwind)]
pub fn in_transaction(db: &NativeDatabase) -> bool {
    db.engine().in_transaction()
}
