//! Start-up ordering: readers open after the writer has opened (and set WAL),
//! and the caller hears once when the connections it waits for are open
//! (the writer's; every one under `strict_settings`), with the settings
//! each one has in force, or the first failure.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::job::{complete, Done, Outcome};
use crate::settings::{ConnectionSettings, SettingsReport};

/// Opened once by the writer; readers and the checkpointer run only after
/// (see `Lanes::writer_opened`) and read it before opening.
#[derive(Default)]
pub struct WriterGate {
    state: Mutex<Option<Result<()>>>,
}

impl WriterGate {
    /// The writer's open result: `Err` tells the other threads not to open,
    /// and what to fail their queued jobs with.
    pub fn open(&self, writer_opened: Result<()>) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(writer_opened);
    }

    /// The writer's open result, once it is known.
    pub fn get(&self) -> Option<Result<()>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Counts connections as they open and reports the result exactly once:
/// `Outcome::Settings` with every connection's settings, or the first error.
pub struct OpenLatch {
    remaining: AtomicUsize,
    done: Mutex<Option<Done>>,
    settings: Mutex<SettingsReport>,
}

impl OpenLatch {
    pub fn new(connections: usize, done: Done) -> Self {
        OpenLatch {
            remaining: AtomicUsize::new(connections),
            done: Mutex::new(Some(done)),
            settings: Mutex::new(SettingsReport::default()),
        }
    }

    /// A connection's settings as read back when it opened; call before
    /// that connection's `arrive`.
    pub fn record(&self, settings: ConnectionSettings) {
        self.settings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(settings);
    }

    pub fn arrive(&self, result: Result<()>) {
        let finished = match result {
            Err(e) => Some(Err(e)),
            Ok(()) if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 => {
                let settings =
                    std::mem::take(&mut *self.settings.lock().unwrap_or_else(|e| e.into_inner()));
                Some(Ok(Outcome::Settings(Box::new(settings))))
            }
            Ok(()) => None,
        };
        if let Some(result) = finished {
            let done = self.done.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(done) = done {
                complete(done, result);
            }
        }
    }
}

impl Drop for OpenLatch {
    fn drop(&mut self) {
        // Every thread left without arriving (it could not even start).
        if let Some(done) = self
            .done
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            complete(
                done,
                Err(Error::invalid_state("database closed before it opened")),
            );
        }
    }
}
