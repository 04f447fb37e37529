//! `Replication`: one database's replication as the replicator pool runs
//! it: the `Worker`, the messages waiting for it (commands, the commit
//! wake-up, writes waiting for the replica) and its schedule (the next
//! capture, sync round, retry and gathering window). Its `step` answers
//! what has arrived, runs what is due and says when it is due next; it
//! never waits for a deadline, so a thread of the pool runs it and goes
//! on to another database.
//!
//! Each step runs on one pool thread at a time (the pool's lane), so the
//! order of everything below is the order one thread of its own gave it.
//! A step may block on the store (an upload), and so holds its thread for
//! as long. It never decides which thread runs it (the pool does), and
//! the work itself lives in `worker`, `upload` and `housekeeping`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use offloop_engine::queue::{Receiver, TryRecvError};

use crate::pool::{Next, Task};
use crate::shared::{Command, Connect, Reply};
use crate::worker::{guarded, Ended, Worker, FIRST_BACKOFF, STOP_UPLOAD_DEADLINE};

/// How long after a commit wakes the database it captures: the commits of
/// those milliseconds are read in one pass, so a busy writer costs one
/// capture per interval rather than one per commit. A checkpoint never
/// waits for it (it captures the tail itself).
const CAPTURE_DELAY: Duration = Duration::from_millis(20);
/// Actions (a command, an upload, a capture) one step takes before it
/// lets the other databases waiting for a thread go first.
const ACTIONS_PER_STEP: usize = 8;

/// A database whose sync rounds find nothing to ship rounds less and less
/// often: its sync interval doubles after each quiet round, up to this.
/// Its own commits bring the interval back at once (their wake-up); what
/// the quiet rounds still find is housekeeping coming due (a merge, a
/// snapshot, retention: at most this late) and commits another process
/// made to the database file (shipped at most this late while this one
/// writes nothing). 10,000 idle databases then step about 170 times a
/// second in all, not 10,000.
const QUIET_SYNC_MAX: Duration = Duration::from_secs(60);

/// `interval` doubled for each of `quiet` rounds, up to `QUIET_SYNC_MAX`
/// (or `interval`, if longer).
fn quiet_interval(interval: Duration, quiet: u32) -> Duration {
    interval
        .saturating_mul(1 << quiet.min(16))
        .min(QUIET_SYNC_MAX.max(interval))
}

/// A stop under way: its rounds are retried until they ship everything or
/// its deadline passes, each on a step of its own.
struct Stopping {
    reply: Reply,
    closed: bool,
    deadline: Instant,
    /// When the next round may run, after one that failed.
    retry_at: Option<Instant>,
    /// Writes waiting for the replica when the stop came: they hear its
    /// answer.
    waiters: Vec<Reply>,
}

/// What one action of a step came to.
enum Act {
    /// Something was done: look again.
    Again,
    /// Nothing is due now.
    Idle,
    /// At rest: nothing is due until a command comes.
    Resting,
    Ended,
}

pub(crate) struct Replication {
    /// Dropped first (with it the store and the lease), and `ended` last.
    worker: Worker,
    /// Taken by the first step, which connects.
    connect: Option<Connect>,
    inbox: Receiver<Box<Command>>,
    waiting: Receiver<Reply>,
    waiting_ready: Vec<Reply>,
    opened: bool,
    next_sync: Instant,
    /// When the next capture runs, once a commit woke the database:
    /// commits arriving meanwhile are captured together.
    capture_at: Option<Instant>,
    /// Writes waiting for the replica, and when a failed upload for them
    /// is tried again.
    durable: Vec<Reply>,
    durable_retry: Option<Instant>,
    /// Until when, and for how many waiters, the next round gathers.
    gather: Option<(Instant, usize)>,
    stopping: Option<Stopping>,
    /// Sync rounds in a row that found nothing to ship.
    quiet_rounds: u32,
    _ended: Ended,
}

impl Replication {
    pub(crate) fn new(
        worker: Worker,
        connect: Connect,
        inbox: Receiver<Box<Command>>,
        waiting: Receiver<Reply>,
    ) -> Self {
        let next_sync = Instant::now() + worker.shared.settings.sync_interval;
        let ended = Ended(worker.shared.clone());
        Replication {
            worker,
            connect: Some(connect),
            inbox,
            waiting,
            waiting_ready: Vec::new(),
            opened: false,
            next_sync,
            capture_at: None,
            durable: Vec::new(),
            durable_retry: None,
            gather: None,
            stopping: None,
            quiet_rounds: 0,
            _ended: ended,
        }
    }

    /// One action: the writes waiting for the replica first (their round,
    /// when it is due), then one command, then the timers.
    fn act(&mut self) -> Act {
        self.durable.extend(self.waiting.try_iter());
        // At rest (see `rest.rs`) nothing is due until the writer opens
        // again: only commands are heard.
        let rested = self.worker.shared.rest.is_rested();
        if self.opened && !rested && !self.durable.is_empty() && self.serve_durable() {
            return Act::Again;
        }
        match self.inbox.try_recv() {
            Ok(command) => return self.command(*command),
            Err(TryRecvError::Disconnected) => return Act::Ended,
            Err(TryRecvError::Empty) if rested => return Act::Resting,
            Err(TryRecvError::Empty) => {}
        }
        if self.capture_at.is_none() && self.worker.shared.wake.take() {
            let now = Instant::now();
            self.capture_at = Some(now + CAPTURE_DELAY);
            // A commit: the sync interval is the settings' again.
            self.quiet_rounds = 0;
            let interval = self.worker.shared.settings.sync_interval;
            self.next_sync = self.next_sync.min(now + interval);
        }
        let now = Instant::now();
        let mut acted = false;
        if self.capture_at.is_some_and(|c| c <= now) {
            self.capture_at = None;
            // Before the open there is no stager to capture into; the
            // first round after it captures those commits.
            if self.opened {
                let _ = guarded(|| {
                    self.worker.capture();
                    Ok(None)
                });
            }
            acted = true;
        }
        if self.next_sync <= now {
            let counters = &self.worker.shared.counters;
            let shipped = counters.bytes_shipped.load(Ordering::Relaxed);
            let outcome = if self.opened {
                guarded(|| self.worker.sync(false))
            } else {
                Err(String::new())
            };
            let counters = &self.worker.shared.counters;
            let quiet = outcome.is_ok()
                && counters.bytes_shipped.load(Ordering::Relaxed) == shipped
                && counters.pending_files.load(Ordering::Relaxed) == 0
                && counters.oldest_uncaptured_ms.load(Ordering::Relaxed) == 0;
            self.quiet_rounds = if quiet { self.quiet_rounds + 1 } else { 0 };
            self.next_sync = Instant::now() + self.sync_interval();
            acted = true;
        }
        if acted {
            Act::Again
        } else {
            Act::Idle
        }
    }

    /// Writes wait for the replica: rejects them once the database is
    /// fenced; else runs their round when the gathering is over and no
    /// retry is pending. True when it ran one.
    fn serve_durable(&mut self) -> bool {
        let worker = &mut self.worker;
        if let Some(why) = worker.shared.fenced() {
            for reply in self.durable.drain(..) {
                reply(Err(why.clone()));
            }
            return false;
        }
        let now = Instant::now();
        let gathered = self
            .gather
            .is_none_or(|(until, expected)| self.durable.len() >= expected || now >= until);
        if !gathered || self.durable_retry.is_some_and(|at| now < at) {
            return false;
        }
        self.gather = None;
        // Everyone who asked before this upload starts shares it. They
        // hear back once it is done; compaction and the rest run after
        // the replies.
        let result = guarded(|| worker.ship(true));
        let result = match (result, worker.shared.fenced()) {
            (_, Some(why)) => Err(why),
            (result, None) => result,
        };
        let keep_waiting =
            result.is_err() && worker.permanent_error.is_none() && worker.shared.fenced().is_none();
        if keep_waiting {
            self.durable_retry = Some(Instant::now() + FIRST_BACKOFF);
        } else {
            self.durable_retry = None;
            let answered = self.durable.len();
            if result.is_ok() {
                worker.shared.counters.count_durable_round(answered);
            }
            for reply in self.durable.drain(..) {
                reply(result.clone());
            }
            // Those who asked meanwhile, and those just answered coming
            // back, share the next round.
            self.durable.extend(self.waiting.try_iter());
            self.gather = Some((
                Instant::now() + worker.shared.settings.gather_window,
                self.durable.len() + answered,
            ));
        }
        worker.tidy_after(result.is_ok());
        self.next_sync = Instant::now() + worker.shared.settings.sync_interval;
        true
    }

    fn command(&mut self, command: Command) -> Act {
        match command {
            // The writer opened again, after an idle close.
            Command::Opened(_) if self.opened => {
                let _ = guarded(|| {
                    self.worker.wake_from_rest();
                    Ok(None)
                });
                self.next_sync = self.next_sync.min(Instant::now() + self.sync_interval());
            }
            Command::Opened(path) => {
                self.opened = true;
                let result = guarded(|| self.worker.open(&path));
                for reply in self.waiting_ready.drain(..) {
                    reply(result.clone());
                }
            }
            Command::Ready(reply) => {
                if self.opened {
                    reply(self.worker.readiness());
                } else {
                    self.waiting_ready.push(reply);
                }
            }
            // Before the open there is nothing to ship, and no stager to
            // stage it with.
            Command::Sync(reply) if !self.opened => reply(Err(
                "replication has not started: the database is not open".into(),
            )),
            // At rest, the replica holds every commit already.
            Command::Sync(reply) if self.worker.shared.rest.is_rested() => {
                reply(self.worker.readiness());
            }
            Command::Sync(reply) => {
                let result = guarded(|| self.worker.ship(true));
                let shipped = result.is_ok();
                reply(result);
                self.worker.tidy_after(shipped);
            }
            Command::Stop { reply, .. } if !self.opened => {
                // The database never opened (its open failed): nothing was
                // committed, and no stager will ever be ready to ship it.
                // A lease taken for its restore goes back.
                self.worker.release_lease();
                reply(Err("replication stopped before the database opened".into()));
                return Act::Ended;
            }
            Command::Stop { reply, closed } => {
                self.durable.extend(self.waiting.try_iter());
                self.stopping = Some(Stopping {
                    reply,
                    closed,
                    deadline: Instant::now() + STOP_UPLOAD_DEADLINE,
                    retry_at: None,
                    waiters: std::mem::take(&mut self.durable),
                });
            }
        }
        Act::Again
    }

    /// A round of the stop under way, when its retry is due: the final
    /// answer ends the replication; a failed round before the deadline is
    /// tried again after `FIRST_BACKOFF`, the thread free meanwhile.
    fn stop_round(&mut self) -> Next {
        let Some(stopping) = self.stopping.as_mut() else {
            return Next::Wait(None);
        };
        if let Some(at) = stopping.retry_at.filter(|&at| Instant::now() < at) {
            return Next::Wait(Some(at));
        }
        let (closed, deadline) = (stopping.closed, stopping.deadline);
        let worker = &mut self.worker;
        let outcome = catch_unwind(AssertUnwindSafe(|| worker.stop_round(closed, deadline)))
            .unwrap_or_else(|_| Some(Err(panicked())));
        let Some(result) = outcome else {
            let at = Instant::now() + FIRST_BACKOFF;
            stopping.retry_at = Some(at);
            return Next::Wait(Some(at));
        };
        if let Some(stopping) = self.stopping.take() {
            for waiter in stopping.waiters {
                waiter(result.clone());
            }
            (stopping.reply)(result);
        }
        self.finish("replication has stopped");
        Next::Ended
    }

    /// The interval to the next sync round: the settings', doubled for
    /// each quiet round before it, up to `QUIET_SYNC_MAX`.
    fn sync_interval(&self) -> Duration {
        quiet_interval(self.worker.shared.settings.sync_interval, self.quiet_rounds)
    }

    /// When the next step is due: the capture, the sync round, and the
    /// retry or gathering window of writes waiting for the replica.
    fn due(&self) -> Instant {
        let mut due = self
            .capture_at
            .map_or(self.next_sync, |c| c.min(self.next_sync));
        if !self.durable.is_empty() {
            if let Some(retry) = self.durable_retry {
                due = due.min(retry);
            }
            if let Some((until, _)) = self.gather {
                due = due.min(until);
            }
        }
        due
    }

    /// Answers everyone still waiting, as the replication ends: `why` for
    /// those waiting for the replica or a command.
    fn finish(&mut self, why: &str) {
        for reply in self.waiting_ready.drain(..) {
            reply(Err("replication stopped before the database opened".into()));
        }
        let stopped = self.stopping.take().into_iter().flat_map(|s| {
            let reply = s.reply;
            s.waiters.into_iter().chain(std::iter::once(reply))
        });
        let waiting: Vec<Reply> = stopped
            .chain(self.durable.drain(..))
            .chain(self.waiting.try_iter())
            .collect();
        for reply in waiting {
            reply(Err(why.into()));
        }
        for command in self.inbox.try_iter() {
            match *command {
                Command::Ready(reply) | Command::Sync(reply) | Command::Stop { reply, .. } => {
                    reply(Err(why.into()))
                }
                Command::Opened(_) => {}
            }
        }
    }
}

fn panicked() -> String {
    "offloop internal error: the replicator panicked".into()
}

impl Task for Replication {
    fn step(&mut self) -> Next {
        // A rest waits for the step to end (see `Rest::steps`).
        let shared = self.worker.shared.clone();
        let _step = shared.rest.steps.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(connect) = self.connect.take() {
            self.worker.begin(connect);
        }
        for _ in 0..ACTIONS_PER_STEP {
            if self.stopping.is_some() {
                return self.stop_round();
            }
            match self.act() {
                Act::Again => {}
                Act::Idle => return Next::Wait(Some(self.due())),
                Act::Resting => return Next::Wait(None),
                Act::Ended => {
                    self.finish("replication has stopped");
                    return Next::Ended;
                }
            }
        }
        // More may be due: the databases waiting for a thread go first.
        Next::Wait(Some(Instant::now()))
    }

    fn fail(&mut self) {
        let why = panicked();
        self.worker.shared.set_error(why.clone());
        self.finish(&why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_rounds_double_the_interval_up_to_a_minute() {
        let second = Duration::from_secs(1);
        let seen: Vec<u64> = (0..10)
            .map(|q| quiet_interval(second, q).as_secs())
            .collect();
        assert_eq!(seen, [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]);
        // An interval set longer than the cap stays as set.
        let hour = Duration::from_secs(3600);
        assert_eq!(quiet_interval(hour, 5), hour);
        // No overflow however long the quiet.
        assert_eq!(quiet_interval(second, u32::MAX), QUIET_SYNC_MAX);
    }
}
