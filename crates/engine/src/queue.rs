//! The queues every open database keeps: its lanes' job queues and its
//! replicator's command and durable-reply queues. An unbounded FIFO with
//! crossbeam-channel's semantics for what they use (`send`, `try_recv`,
//! `try_iter`, `len`, `is_empty`, cloned ends), made small. A crossbeam
//! list channel costs 512 bytes when made (its head and tail each padded
//! to 128) and keeps a 31-slot block of about 500 more once it has carried
//! a message; a replicated database has seven of these queues, a large
//! part of an idle tenant's memory at 100,000 tenants (docs/tenants.md).
//! This one is a `VecDeque` under a mutex: about 80 bytes, and 32 more
//! after a first item.
//!
//! Nothing blocks on these queues (the pools run a lane when something
//! arrives), and every send to a database's job queues already happens
//! under that database's queues lock, so this mutex is rarely contended.
//!
//! Disconnection is crossbeam's: `send` fails once every receiver is gone,
//! and whatever was queued then is dropped with the last receiver (a
//! job's drop answers its caller); `try_recv` says `Disconnected` once the
//! queue is empty and every sender is gone.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

pub use crossbeam_channel::{SendError, TryRecvError};

/// The most room an empty queue keeps for the next items.
const KEPT_ROOM: usize = 16;

struct State<T> {
    items: VecDeque<T>,
    senders: usize,
    receivers: usize,
}

struct Shared<T> {
    state: Mutex<State<T>>,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // The lock guards plain bookkeeping that no panic leaves half done.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sending end; clones share the queue.
pub struct Sender<T>(Arc<Shared<T>>);

/// The receiving end; clones share the queue (each job goes to one).
pub struct Receiver<T>(Arc<Shared<T>>);

/// A new empty queue and its two ends.
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            senders: 1,
            receivers: 1,
        }),
    });
    (Sender(shared.clone()), Receiver(shared))
}

impl<T> Sender<T> {
    /// Queues `item`; gives it back if every receiver is gone.
    pub fn send(&self, item: T) -> Result<(), SendError<T>> {
        let mut state = self.0.lock();
        if state.receivers == 0 {
            return Err(SendError(item));
        }
        state.items.push_back(item);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.0.lock().items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.lock().items.is_empty()
    }
}

impl<T> Receiver<T> {
    /// The oldest queued item, if any.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        let mut state = self.0.lock();
        match state.items.pop_front() {
            Some(item) => {
                // A burst's room goes back once it is drained: a tenant
                // that was once busy costs no more at rest than another.
                if state.items.is_empty() && state.items.capacity() > KEPT_ROOM {
                    state.items = VecDeque::new();
                }
                Ok(item)
            }
            None if state.senders == 0 => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }

    /// Takes the queued items one by one until the queue is empty.
    pub fn try_iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || self.try_recv().ok())
    }

    pub fn len(&self) -> usize {
        self.0.lock().items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.lock().items.is_empty()
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.0.lock().senders += 1;
        Sender(self.0.clone())
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.0.lock().receivers += 1;
        Receiver(self.0.clone())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.0.lock().senders -= 1;
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let orphans = {
            let mut state = self.0.lock();
            state.receivers -= 1;
            if state.receivers > 0 {
                return;
            }
            std::mem::take(&mut state.items)
        };
        // Dropped outside the lock: a job's drop answers its caller.
        drop(orphans);
    }
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sender { .. }")
    }
}

impl<T> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Receiver { .. }")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_in_first_out_across_clones() {
        let (tx, rx) = unbounded();
        let tx2 = tx.clone();
        let rx2 = rx.clone();
        for i in 0..100 {
            if i % 2 == 0 {
                tx.send(i).unwrap()
            } else {
                tx2.send(i).unwrap()
            }
        }
        assert_eq!(tx.len(), 100);
        let got: Vec<_> = (0..100)
            .map(|i| {
                if i % 3 == 0 {
                    rx.try_recv()
                } else {
                    rx2.try_recv()
                }
                .unwrap()
            })
            .collect();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
        assert!(rx.is_empty() && tx.is_empty());
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    }

    #[test]
    fn a_drained_burst_gives_its_room_back() {
        let (tx, rx) = unbounded();
        for i in 0..10_000 {
            tx.send(i).unwrap();
        }
        assert!(rx.0.lock().items.capacity() >= 10_000);
        assert_eq!(rx.try_iter().count(), 10_000);
        assert!(rx.0.lock().items.capacity() <= KEPT_ROOM);
        // A few items at a time keep their room.
        tx.send(1).unwrap();
        let kept = rx.0.lock().items.capacity();
        rx.try_recv().unwrap();
        assert_eq!(rx.0.lock().items.capacity(), kept);
    }

    #[test]
    fn disconnected_once_empty_and_every_sender_is_gone() {
        let (tx, rx) = unbounded();
        let tx2 = tx.clone();
        tx.send(1).unwrap();
        drop(tx);
        assert_eq!(rx.try_recv(), Ok(1));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        drop(tx2);
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    }

    #[test]
    fn a_send_after_the_last_receiver_fails_and_what_was_queued_is_dropped() {
        struct Answer(Arc<Mutex<Vec<u32>>>, u32);
        impl Drop for Answer {
            fn drop(&mut self) {
                self.0.lock().unwrap().push(self.1);
            }
        }
        let dropped = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = unbounded();
        let rx2 = rx.clone();
        tx.send(Answer(dropped.clone(), 1)).unwrap();
        tx.send(Answer(dropped.clone(), 2)).unwrap();
        drop(rx);
        assert!(dropped.lock().unwrap().is_empty(), "one receiver is left");
        drop(rx2);
        assert_eq!(*dropped.lock().unwrap(), vec![1, 2]);
        let Err(SendError(back)) = tx.send(Answer(dropped.clone(), 3)) else {
            panic!("a send with no receiver must fail");
        };
        assert_eq!(back.1, 3);
    }

    #[test]
    fn many_threads_send_and_receive_every_item_once() {
        let (tx, rx) = unbounded();
        let senders: Vec<_> = (0..4)
            .map(|t| {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    (0..10_000).for_each(|i| tx.send(t * 10_000 + i).unwrap())
                })
            })
            .collect();
        drop(tx);
        let receivers: Vec<_> = (0..4)
            .map(|_| {
                let rx = rx.clone();
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        match rx.try_recv() {
                            Ok(i) => got.push(i),
                            Err(TryRecvError::Empty) => std::thread::yield_now(),
                            Err(TryRecvError::Disconnected) => return got,
                        }
                    }
                })
            })
            .collect();
        senders.into_iter().for_each(|s| s.join().unwrap());
        let mut all: Vec<u32> = receivers
            .into_iter()
            .flat_map(|r| r.join().unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..40_000).collect::<Vec<_>>());
    }
}
