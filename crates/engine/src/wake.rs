//! How a SQLite thread sleeps while its queues are empty, and how whoever
//! queues a job wakes it: the thread parks (`std::thread::park`), and the
//! sender unparks it after the send. Unparking a thread that is awake is one
//! atomic swap; waking a parked one is one futex wake, with no lock held by
//! either side. Crossbeam's own blocking receive costs more on both sides: its
//! sender takes the channel's waker lock and wakes the receiver while holding
//! it, and a receiver that `select!`s over two queues takes that same lock
//! again to unregister, so a woken reader would often sleep once more on the
//! lock of the sender that woke it. Here the channels are only ever polled.
//!
//! Readers with nothing to do mark themselves in `IdleReaders`, so a job on
//! the shared queue wakes one sleeping reader and no busy one.
//!
//! Before it parks, a thread whose last wait for work was short keeps
//! looking at its queues for up to `SPIN`, as its `Pace` decides: a caller
//! awaiting one call after another sends the next within microseconds of
//! the last reply, and a thread still awake takes it without the wake-up,
//! which on a VM whose idle vCPUs halt costs tens of microseconds. A thread
//! whose last wait was longer parks at once, so an idle database spins
//! never.
//!
//! This file owns no thread and no queue, and blocks only in `park`.

use std::cell::Cell;
use std::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};

use crate::pace::Pace;

/// How long a thread whose queues ran dry looks at them before it parks,
/// when its pace says so (see `pace.rs`). A lone awaited call's next call
/// comes one reply and one turn of the caller's event loop after the last:
/// a few microseconds when the caller's CPU is awake, about 35 µs more when
/// the caller's vCPU halted and the reply had to wake it.
const SPIN: Duration = Duration::from_micros(50);

/// A wait up to this long is short: worth spinning through next time. It
/// is longer than `SPIN` by the wake-up a parked thread's wait includes, so
/// that a thread woken from a halted vCPU (a 35 µs wake-up on top of the
/// gap a spin would have caught) learns to spin.
const SHORT: Duration = Duration::from_micros(100);

thread_local! {
    /// This thread's pace: SQLite threads never move between databases, and
    /// each has one loop waiting for work.
    static PACE: Cell<Pace> = const { Cell::new(Pace::new()) };
}

/// When a thread found its queues empty, and whether the wait that began
/// then is to be measured.
struct Wait {
    since: Instant,
    measured: bool,
}

impl Wait {
    /// The queues are empty: spins if worth it; `true` when work came.
    fn begin(ready: impl Fn() -> bool) -> (Wait, bool) {
        let since = Instant::now();
        let mut pace = PACE.get();
        let (found, measured) = pace.spin(SPIN, ready);
        PACE.set(pace);
        (Wait { since, measured }, found)
    }

    /// The wait ended with a job.
    fn end(wait: Option<Wait>) {
        if let Some(Wait {
            since,
            measured: true,
        }) = wait
        {
            let mut pace = PACE.get();
            pace.waited(since.elapsed(), SHORT);
            PACE.set(pace);
        }
    }
}

/// Readers parked with empty queues, one bit each, and how many readers
/// are spinning (awake, about to look again).
pub struct IdleReaders {
    words: Box<[AtomicU64]>,
    spinning: AtomicUsize,
}

impl IdleReaders {
    pub fn new(readers: usize) -> Self {
        IdleReaders {
            words: (0..readers.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            spinning: AtomicUsize::new(0),
        }
    }

    /// Reader spins while `ready` says there is no work, counted in
    /// `spinning` so that senders leave the parked readers asleep. Once it
    /// stops counting itself it marks itself idle (if it goes on to park)
    /// and looks again: a sender that counted it saw the count before it
    /// dropped, so that look sees the sender's job.
    fn spin(&self, ready: impl Fn() -> bool) -> (Wait, bool) {
        self.spinning.fetch_add(1, Ordering::SeqCst);
        let began = Wait::begin(ready);
        self.spinning.fetch_sub(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        began
    }

    /// Reader `index` is about to park. The caller then checks its queues
    /// once more (see `recv_or_idle`): either that check sees a job sent
    /// before this mark, or the sender, whose `take` follows its send, sees
    /// the mark.
    fn mark(&self, index: usize) {
        self.words[index / 64].fetch_or(1 << (index % 64), Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    fn unmark(&self, index: usize) {
        self.words[index / 64].fetch_and(!(1 << (index % 64)), Ordering::SeqCst);
    }

    /// One idle reader, no longer marked: the caller unparks it.
    pub fn take(&self) -> Option<usize> {
        fence(Ordering::SeqCst);
        for (w, word) in self.words.iter().enumerate() {
            let mut bits = word.load(Ordering::SeqCst);
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                match word.compare_exchange_weak(
                    bits,
                    bits & !(1 << bit),
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                ) {
                    Ok(_) => return Some(w * 64 + bit),
                    Err(now) => bits = now,
                }
            }
        }
        None
    }
}

/// The next message of a queue only this thread receives from, parking
/// while it is empty; `None` once it is empty and every sender is gone.
/// Senders unpark this thread after each send.
pub fn recv_parked<T>(queue: &Receiver<T>) -> Option<T> {
    let mut wait = None;
    loop {
        match queue.try_recv() {
            Ok(message) => {
                Wait::end(wait);
                return Some(message);
            }
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if wait.is_none() => {
                let (began, found) = Wait::begin(|| !queue.is_empty());
                wait = Some(began);
                if !found {
                    thread::park();
                }
            }
            // A spurious return from `park` only costs another look.
            Err(TryRecvError::Empty) => thread::park(),
        }
    }
}

/// `recv_parked`, giving up after `wait`.
pub fn recv_parked_timeout<T>(queue: &Receiver<T>, wait: Duration) -> Result<T, RecvTimeoutError> {
    let deadline = Instant::now() + wait;
    loop {
        match queue.try_recv() {
            Ok(message) => return Ok(message),
            Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {}
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(RecvTimeoutError::Timeout);
        }
        thread::park_timeout(deadline - now);
    }
}

/// Where a reader's next job came from.
pub enum Taken<T> {
    Private(T),
    Shared(T),
}

/// A reader's next job: from its own queue first, then the shared one;
/// parks, marked idle, while both are empty. `None` once either queue is
/// empty and disconnected (the database closes both at once).
pub fn recv_or_idle<T>(
    private: &Receiver<T>,
    shared: &Receiver<T>,
    idle: &IdleReaders,
    index: usize,
) -> Option<Taken<T>> {
    let mut wait = None;
    loop {
        match private.try_recv() {
            Ok(job) => {
                Wait::end(wait);
                return Some(Taken::Private(job));
            }
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {}
        }
        match shared.try_recv() {
            Ok(job) => {
                Wait::end(wait);
                return Some(Taken::Shared(job));
            }
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {}
        }
        if wait.is_none() {
            let (began, found) = idle.spin(|| !private.is_empty() || !shared.is_empty());
            wait = Some(began);
            if found {
                continue;
            }
        }
        idle.mark(index);
        // The database closes the queues before it unparks every reader, so
        // a reader parking after the close returns at once and sees it.
        if private.is_empty() && shared.is_empty() {
            thread::park();
        }
        // Woken by a sender (which took the mark already), or the queues
        // filled meanwhile: either way, look again unmarked.
        idle.unmark(index);
    }
}

/// Unparks reader threads for `jobs` jobs just sent to the shared queue:
/// one idle reader per job while there are idle readers. The others are
/// busy and take the rest when they next look.
pub fn wake_idle(idle: &IdleReaders, threads: &[thread::Thread], jobs: usize) {
    // A spinning reader takes a job without a wake-up (see `spin`).
    fence(Ordering::SeqCst);
    let spinning = idle.spinning.load(Ordering::SeqCst);
    for _ in spinning.min(jobs)..jobs {
        match idle.take() {
            Some(index) => threads[index].unpark(),
            None => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn take_returns_each_marked_reader_once_then_none() {
        let idle = IdleReaders::new(70);
        for i in [0, 5, 63, 64, 69] {
            idle.mark(i);
        }
        let mut taken: Vec<usize> = std::iter::from_fn(|| idle.take()).collect();
        taken.sort_unstable();
        assert_eq!(taken, vec![0, 5, 63, 64, 69]);
        assert_eq!(idle.take(), None);
    }

    #[test]
    fn an_unmarked_reader_is_not_taken() {
        let idle = IdleReaders::new(3);
        idle.mark(1);
        idle.unmark(1);
        assert_eq!(idle.take(), None);
    }

    #[test]
    fn every_job_sent_to_parked_readers_is_received_exactly_once() {
        // Four readers park and wake around 20,000 jobs sent one by one and
        // in bursts; a lost wake-up would leave a job unreceived and hang
        // the test, a duplicate would show in the sum.
        const READERS: usize = 4;
        const JOBS: u64 = 20_000;
        let (shared_tx, shared_rx) = crossbeam_channel::unbounded::<u64>();
        let idle = Arc::new(IdleReaders::new(READERS));
        let (done_tx, done_rx) = crossbeam_channel::unbounded::<u64>();
        let mut privates = Vec::new();
        let mut handles = Vec::new();
        for index in 0..READERS {
            let (private_tx, private_rx) = crossbeam_channel::unbounded::<u64>();
            privates.push(private_tx);
            let shared = shared_rx.clone();
            let idle = idle.clone();
            let done = done_tx.clone();
            handles.push(thread::spawn(move || {
                while let Some(taken) = recv_or_idle(&private_rx, &shared, &idle, index) {
                    let (Taken::Private(n) | Taken::Shared(n)) = taken;
                    done.send(n).unwrap();
                }
            }));
        }
        let threads: Vec<_> = handles.iter().map(|h| h.thread().clone()).collect();
        let mut sent = 0;
        let mut expected = 0;
        while sent < JOBS {
            let burst = if sent % 7 == 0 { 1 } else { 1 + sent % 50 };
            for _ in 0..burst.min(JOBS - sent) {
                sent += 1;
                expected += sent;
                if sent % 10 == 0 {
                    let i = (sent as usize / 10) % READERS;
                    privates[i].send(sent).unwrap();
                    threads[i].unpark();
                } else {
                    shared_tx.send(sent).unwrap();
                    wake_idle(&idle, &threads, 1);
                }
            }
            if sent % 3 == 0 {
                thread::yield_now();
            }
        }
        let mut sum = 0;
        for _ in 0..JOBS {
            sum += done_rx
                .recv_timeout(Duration::from_secs(30))
                .expect("a job was never received");
        }
        assert_eq!(sum, expected);
        drop(shared_tx);
        drop(privates);
        for t in &threads {
            t.unpark();
        }
        for h in handles {
            h.join().unwrap();
        }
    }

    #[test]
    fn recv_parked_timeout_times_out_on_an_empty_queue_and_sees_disconnection() {
        let (tx, rx) = crossbeam_channel::unbounded::<u8>();
        assert_eq!(
            recv_parked_timeout(&rx, Duration::from_millis(5)),
            Err(RecvTimeoutError::Timeout)
        );
        tx.send(3).unwrap();
        assert_eq!(recv_parked_timeout(&rx, Duration::from_millis(5)), Ok(3));
        drop(tx);
        assert_eq!(
            recv_parked_timeout(&rx, Duration::from_millis(5)),
            Err(RecvTimeoutError::Disconnected)
        );
    }
}
