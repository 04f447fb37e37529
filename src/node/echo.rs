//! `NativeEcho`: a Rust thread that answers every request at once, through
//! the same completion path as a SQLite job (a `Reply` pushed onto this
//! environment's queue, the signal, the drain into lib/calls.js). It is the
//! floor under an awaited call's round trip, which `npm run bench --
//! roundtrip` measures next to offloop's own calls. It runs no SQL and is
//! not part of the public API (lib/ never uses it).

use std::sync::Arc;
use std::thread;

use crossbeam_channel::{unbounded, Sender};
use napi::{Error, Result, Status};
use napi_derive::napi;
use offloop_engine::Outcome;

use super::completion::{CompletionQueue, Reply};
use super::dispatch::queue;
use super::drain::expect_reply;

#[napi]
pub struct NativeEcho {
    queue: Arc<CompletionQueue>,
    requests: Option<Sender<Reply>>,
}

#[napi]
impl NativeEcho {
    /// Starts the answering thread, which sleeps in the channel's receive
    /// while it has nothing to do, as the pool's threads do.
    #[napi(constructor, catch_unwind)]
    pub fn new() -> Result<Self> {
        let queue = queue()?;
        let (requests, pending) = unbounded::<Reply>();
        thread::Builder::new()
            .name("offloop-echo".into())
            .spawn(move || {
                while let Ok(reply) = pending.recv() {
                    reply.send(Ok(Outcome::Done));
                }
            })
            .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
        Ok(NativeEcho {
            queue,
            requests: Some(requests),
        })
    }

    /// Asks for an answer to call `id` (it resolves with undefined).
    #[napi(catch_unwind)]
    pub fn echo(&self, id: f64) {
        if let Some(requests) = &self.requests {
            // The thread outlives its sender, so the send cannot fail.
            let _ = requests.send(expect_reply(&self.queue, id, 0));
        }
    }

    /// Ends the thread once it has answered every request.
    #[napi(catch_unwind)]
    pub fn close(&mut self) {
        self.requests = None;
    }
}

impl Drop for NativeEcho {
    fn drop(&mut self) {
        self.close();
    }
}
