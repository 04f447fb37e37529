//! How `NativeDatabase` queues work: statement calls read into engine
//! requests, calls made outside a scope held until the microtask
//! checkpoint's `flush` and sent as one burst, cancel tokens registered
//! for cancellable calls, and completions addressed to this environment's
//! queue under the caller's call id. Nothing here touches SQLite.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::External;
use napi::{Error, Result, Status};
use offloop_engine::{
    self as engine, BindOptions, Call, CancelToken, CursorRef, Job, Request, Role, Scope, Sql,
};

use super::completion::CompletionQueue;
use super::drain;
use super::js::Cx;
use super::params::{read_params, ArgError, Args};
use super::protocol;

/// Statement calls held at most before they are sent without waiting for
/// `flush` (a loop issuing calls without yielding still gets them started).
const HELD_MAX: usize = 256;

/// Rows per chunk of `iterate()`: large enough that a chunk's round trip is
/// noise next to converting its rows, small enough that a consumer that
/// stops early wasted little.
pub(super) const ITERATE_CHUNK_ROWS: usize = 256;

/// A scope (transaction or read snapshot), owned by its JS handle.
pub type ScopeCell = RefCell<Scope>;

/// Whether a call can be stopped with `cancel(id)`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Cancel {
    Allowed,
    Never,
}

/// Whether a call outside a scope waits for `flush` (statement calls, so
/// a burst of them wakes a thread once) or goes out at once.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Hold {
    UntilFlush,
    SendNow,
}

/// The queuing half of `NativeDatabase`: the engine handle, this
/// environment's completion queue, the held calls and the cancel tokens.
pub struct Dispatcher {
    pub db: engine::Database,
    pub queue: Arc<CompletionQueue>,
    /// Statement calls made outside a scope, held until lib/core.js calls
    /// `flush` at the end of the microtask checkpoint they were made in
    /// (before any other request, so arrival order holds). Calls that
    /// resolve together are re-issued together: sent as one burst, they
    /// wake a parked SQLite thread once per burst instead of once per call,
    /// and each wake-up is a system call on the JS thread.
    held: RefCell<Vec<Job>>,
    /// Cancel tokens of the cancellable calls in flight, by call id.
    tokens: Arc<Mutex<HashMap<u64, Arc<CancelToken>>>>,
}

impl Dispatcher {
    pub fn new(db: engine::Database, queue: Arc<CompletionQueue>) -> Self {
        Dispatcher {
            db,
            queue,
            held: RefCell::new(Vec::new()),
            tokens: Arc::default(),
        }
    }

    pub fn tokens(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<CancelToken>>> {
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads one statement call's arguments and queues it (see `call`);
    /// `Some` is the argument error to throw, when nothing was queued.
    #[allow(clippy::too_many_arguments)]
    pub fn queue_call(
        &self,
        cx: Cx,
        kind: u32,
        id: f64,
        sql: &External<Arc<Sql>>,
        args: Args<'_>,
        flags: u32,
        scope: Option<&External<ScopeCell>>,
        cancellable: bool,
    ) -> Result<Option<ArgError>> {
        if kind > protocol::call::QUERY {
            return Err(Error::new(Status::InvalidArg, "unknown call kind"));
        }
        let call = match read_call(cx, sql, args, flags)? {
            Ok(call) => call,
            Err(e) => return Ok(Some(e)),
        };
        let request = match kind {
            protocol::call::RUN => Request::Run(call),
            protocol::call::GET => Request::Get(call),
            protocol::call::ALL => Request::All(call),
            protocol::call::ITERATE => Request::Iterate {
                call,
                chunk_rows: ITERATE_CHUNK_ROWS,
            },
            protocol::call::COLUMNS => Request::Columns(call.sql),
            protocol::call::QUERY => Request::Query(call),
            _ => Request::Expand(call),
        };
        let cancel = if cancellable {
            Cancel::Allowed
        } else {
            Cancel::Never
        };
        self.dispatch(request, id, flags, scope, cancel, Hold::UntilFlush);
        Ok(None)
    }

    /// Reads a batch's statements (SQL handle, arguments, binding flags
    /// each) and queues it as one request; `Some` is the index of the
    /// statement whose argument cannot be bound and the error to throw.
    pub fn queue_batch(
        &self,
        cx: Cx,
        id: f64,
        entries: Vec<(&External<Arc<Sql>>, Args<'_>, u32)>,
        read_big_ints: bool,
        scope: Option<&External<ScopeCell>>,
    ) -> Result<Option<(usize, ArgError)>> {
        let mut calls = Vec::with_capacity(entries.len());
        for (i, (sql, args, flags)) in entries.into_iter().enumerate() {
            match read_call(cx, sql, args, flags)? {
                Ok(call) => calls.push(call),
                Err(e) => return Ok(Some((i, e))),
            }
        }
        let big = if read_big_ints {
            protocol::flag::READ_BIG_INTS
        } else {
            0
        };
        let request = Request::Batch(calls);
        self.dispatch(request, id, big, scope, Cancel::Never, Hold::SendNow);
        Ok(None)
    }

    /// Sends the held statement calls, in the order they were made, as one
    /// burst.
    pub fn release_held(&self) {
        let mut held = self.held.borrow_mut();
        if !held.is_empty() {
            self.db.submit_jobs(held.drain(..));
        }
    }

    /// Queues `request` on the database or on `scope`, completing under
    /// `id`; a cancellable call registers a token until it completes. A
    /// held request outside a scope waits for `flush`.
    pub(super) fn dispatch(
        &self,
        request: Request,
        id: f64,
        flags: u32,
        scope: Option<&External<ScopeCell>>,
        cancel: Cancel,
        hold: Hold,
    ) {
        let mut done = done_for(&self.queue, id, flags);
        let mut token = None;
        if cancel == Cancel::Allowed {
            let t = CancelToken::new();
            self.tokens().insert(id.to_bits(), t.clone());
            let tokens = self.tokens.clone();
            let inner = done;
            done = Box::new(move |result| {
                tokens
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id.to_bits());
                inner(result)
            });
            token = Some(t);
        }
        let job = Job::new(request, done).with_cancel(token);
        match scope {
            None if hold == Hold::UntilFlush => {
                let mut held = self.held.borrow_mut();
                held.push(job);
                if held.len() >= HELD_MAX {
                    drop(held);
                    self.release_held();
                }
            }
            None => {
                self.release_held();
                self.db.submit_job(job);
            }
            Some(scope) => {
                self.release_held();
                self.db.submit_to(&mut scope.borrow_mut(), job);
            }
        }
    }
}

/// Reads one call's arguments; `Err` is an argument error to throw.
fn read_call(
    cx: Cx,
    sql: &External<Arc<Sql>>,
    args: Args<'_>,
    flags: u32,
) -> Result<std::result::Result<Call, ArgError>> {
    let sql: Arc<Sql> = Arc::clone(sql);
    Ok(read_params(cx, &sql, args)?.map(|params| Call {
        sql,
        params,
        bind: BindOptions {
            allow_bare_named: flags & protocol::flag::ALLOW_BARE_NAMED != 0,
            allow_unknown_named: flags & protocol::flag::ALLOW_UNKNOWN_NAMED != 0,
        },
    }))
}

pub fn queue() -> Result<Arc<CompletionQueue>> {
    drain::queue()
        .ok_or_else(|| Error::new(Status::GenericFailure, "offloop: init() was not called"))
}

/// The completion of call `id`: its result goes to `queue` and reaches
/// lib/calls.js's `drain`. JS thread.
pub fn done_for(queue: &Arc<CompletionQueue>, id: f64, flags: u32) -> engine::Done {
    let reply = drain::expect_reply(queue, id, flags);
    Box::new(move |result| reply.send(result))
}

pub fn cursor_ref(role: i32, id: f64) -> CursorRef {
    CursorRef {
        role: if role == protocol::WRITER_ROLE {
            Role::Writer
        } else {
            Role::Reader(role.max(0) as usize)
        },
        id: id as u64,
    }
}
