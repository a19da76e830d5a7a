//! Observer queues bounded in count and in bytes, with what they drop counted and reported.
//!
//! A driver hands every observer of its events a [`Watch`] of its own, fed by one [`Hub`].
//! An observer that does not read holds at most [`OBSERVER_QUEUE`] events and
//! [`OBSERVER_BYTES`] bytes (as [`Observed::weight`] counts them): an event that does not fit
//! is dropped for that observer only, counted ([`Watch::lost`]), and reported in its place in
//! the queue by one loss event ([`Observed::lost`]) that says how many went. Loss events are
//! merged while nothing is queued behind them, so they take at most one slot per event kept.
//!
//! Nothing here waits on the driver: sending never blocks, and a watch is read without a
//! runtime ([`Watch::try_recv`], [`Watch::recv_timeout`]) or from any async runtime
//! ([`Watch::recv`]).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// The most events one observer holds unread.
pub const OBSERVER_QUEUE: usize = 1024;

/// The most bytes one observer holds unread (an unsolicited frame counts its own length).
pub const OBSERVER_BYTES: usize = 8 << 20;

/// What observers are handed.
pub trait Observed: Clone {
    /// What holding the event costs, in bytes.
    fn weight(&self) -> usize;
    /// The event that reports `dropped` events dropped for this observer.
    fn lost(dropped: u64) -> Self;
}

enum Item<T> {
    Event(T, usize),
    Lost(u64),
}

struct Queue<T> {
    items: VecDeque<Item<T>>,
    events: usize,
    bytes: usize,
    lost: u64,
    waker: Option<Waker>,
    /// No more events come: the hub went.
    closed: bool,
    /// The watch went: the hub forgets this queue.
    gone: bool,
}

struct Shared<T> {
    queue: Mutex<Queue<T>>,
    ready: Condvar,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Queue<T>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake(&self, mut q: MutexGuard<'_, Queue<T>>) {
        let waker = q.waker.take();
        drop(q);
        self.ready.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

struct Watchers<T> {
    list: Vec<Arc<Shared<T>>>,
    /// Closed: a watch made now is born closed.
    closed: bool,
}

/// The sending side: one queue per [`Watch`]. Clones share the observers.
pub struct Hub<T> {
    watches: Arc<Mutex<Watchers<T>>>,
    limits: (usize, usize),
}

impl<T> Clone for Hub<T> {
    fn clone(&self) -> Self {
        Self {
            watches: self.watches.clone(),
            limits: self.limits,
        }
    }
}

impl<T> std::fmt::Debug for Hub<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").field("limits", &self.limits).finish()
    }
}

impl<T: Observed> Default for Hub<T> {
    fn default() -> Self {
        Self::new(OBSERVER_QUEUE, OBSERVER_BYTES)
    }
}

impl<T: Observed> Hub<T> {
    /// A hub whose observers each hold at most `events` events and `bytes` bytes.
    pub fn new(events: usize, bytes: usize) -> Self {
        Self {
            watches: Arc::new(Mutex::new(Watchers {
                list: Vec::new(),
                closed: false,
            })),
            limits: (events, bytes),
        }
    }

    fn watches(&self) -> MutexGuard<'_, Watchers<T>> {
        self.watches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new observer, which sees what is sent from now on.
    pub fn watch(&self) -> Watch<T> {
        let mut watchers = self.watches();
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                items: VecDeque::new(),
                events: 0,
                bytes: 0,
                lost: 0,
                waker: None,
                closed: watchers.closed,
                gone: false,
            }),
            ready: Condvar::new(),
        });
        if !watchers.closed {
            watchers.list.push(shared.clone());
        }
        Watch { shared }
    }

    /// Whether anyone watches.
    pub fn is_watched(&self) -> bool {
        let mut w = self.watches();
        w.list.retain(|s| !s.lock().gone);
        !w.list.is_empty()
    }

    /// Hands `e` to every observer that has room for it; the others count it lost.
    pub fn send(&self, e: T) {
        let (max_events, max_bytes) = self.limits;
        let weight = e.weight();
        self.watches().list.retain(|s| {
            let mut q = s.lock();
            if q.gone {
                return false;
            }
            if q.events >= max_events || q.bytes.saturating_add(weight) > max_bytes {
                q.lost += 1;
                match q.items.back_mut() {
                    Some(Item::Lost(n)) => *n += 1,
                    _ => {
                        // Once per run of losses: the observer reads the count in place.
                        tracing::warn!(
                            held = q.events,
                            held_bytes = q.bytes,
                            max_events,
                            max_bytes,
                            "observer queue full: events dropped for this observer"
                        );
                        q.items.push_back(Item::Lost(1));
                    }
                }
            } else {
                q.events += 1;
                q.bytes += weight;
                q.items.push_back(Item::Event(e.clone(), weight));
            }
            s.wake(q);
            true
        });
    }

    /// Tells every observer that nothing more comes, once it has read what is queued.
    pub fn close(&self) {
        let mut w = self.watches();
        w.closed = true;
        for s in w.list.drain(..) {
            let mut q = s.lock();
            q.closed = true;
            s.wake(q);
        }
    }
}

/// Why [`Watch::try_recv`] or [`Watch::recv`] gave no event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WatchError {
    /// Nothing is queued now.
    Empty,
    /// Nothing more comes: the driver stopped.
    Closed,
}

impl std::fmt::Display for WatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Empty => "no event is queued",
            Self::Closed => "the driver stopped",
        })
    }
}

impl std::error::Error for WatchError {}

/// One observer's queue. Dropping it stops its events.
pub struct Watch<T> {
    shared: Arc<Shared<T>>,
}

impl<T> std::fmt::Debug for Watch<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let q = self.shared.lock();
        f.debug_struct("Watch")
            .field("events", &q.events)
            .field("bytes", &q.bytes)
            .field("lost", &q.lost)
            .finish()
    }
}

impl<T> Drop for Watch<T> {
    fn drop(&mut self) {
        let mut q = self.shared.lock();
        q.gone = true;
        q.items.clear();
    }
}

impl<T: Observed> Watch<T> {
    fn pop(q: &mut Queue<T>) -> Result<T, WatchError> {
        match q.items.pop_front() {
            Some(Item::Event(e, w)) => {
                q.events -= 1;
                q.bytes -= w;
                Ok(e)
            }
            Some(Item::Lost(n)) => Ok(T::lost(n)),
            None if q.closed => Err(WatchError::Closed),
            None => Err(WatchError::Empty),
        }
    }

    /// The next event, if one is queued.
    pub fn try_recv(&self) -> Result<T, WatchError> {
        Self::pop(&mut self.shared.lock())
    }

    /// The next event, waiting at most `timeout`: [`WatchError::Empty`] when none came in
    /// time, [`WatchError::Closed`] when none will.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, WatchError> {
        let end = Instant::now() + timeout;
        let mut q = self.shared.lock();
        loop {
            match Self::pop(&mut q) {
                Err(WatchError::Empty) => {}
                r => return r,
            }
            let now = Instant::now();
            if now >= end {
                return Err(WatchError::Empty);
            }
            q = self
                .shared
                .ready
                .wait_timeout(q, end - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The next event, waiting for it; [`WatchError::Closed`] once the driver stopped and
    /// everything queued was read.
    pub fn recv(&mut self) -> impl Future<Output = Result<T, WatchError>> + '_ {
        Next { watch: self }
    }

    /// How many events were dropped for this observer because it did not read them in time.
    pub fn lost(&self) -> u64 {
        self.shared.lock().lost
    }

    /// How many events are queued for this observer now (loss reports not counted).
    pub fn held(&self) -> usize {
        self.shared.lock().events
    }

    /// How many bytes the events queued for this observer hold now.
    pub fn held_bytes(&self) -> usize {
        self.shared.lock().bytes
    }
}

struct Next<'a, T> {
    watch: &'a mut Watch<T>,
}

impl<T: Observed> Future for Next<'_, T> {
    type Output = Result<T, WatchError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut q = self.watch.shared.lock();
        match Watch::pop(&mut q) {
            Err(WatchError::Empty) => {
                q.waker = Some(cx.waker().clone());
                Poll::Pending
            }
            r => Poll::Ready(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    enum Ev {
        Data(usize),
        Lost(u64),
    }

    impl Observed for Ev {
        fn weight(&self) -> usize {
            match self {
                Ev::Data(n) => *n,
                Ev::Lost(_) => 0,
            }
        }
        fn lost(n: u64) -> Self {
            Ev::Lost(n)
        }
    }

    /// Wakes a parked thread.
    struct Unpark(std::thread::Thread);

    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }

    /// Runs `f` to its end on this thread, parking while it is pending; fails the test when
    /// it has not ended within ten seconds.
    fn block_on<F: Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = Context::from_waker(&waker);
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
            assert!(Instant::now() < end, "the wait was never woken");
            std::thread::park_timeout(Duration::from_millis(100));
        }
    }

    fn all(w: &Watch<Ev>) -> Vec<Ev> {
        std::iter::from_fn(|| w.try_recv().ok()).collect()
    }

    #[test]
    fn c_7_an_observer_that_does_not_read_holds_at_most_the_byte_bound() {
        let hub = Hub::new(100, 1000);
        let w = hub.watch();
        for _ in 0..30 {
            hub.send(Ev::Data(100));
        }
        assert_eq!(w.held_bytes(), 1000);
        assert_eq!(w.held(), 10);
        assert_eq!(w.lost(), 20);
        let got = all(&w);
        assert_eq!(got.len(), 11);
        assert_eq!(
            got[10],
            Ev::Lost(20),
            "the loss is reported where it happened"
        );
        assert_eq!(w.held_bytes(), 0);
        // Room again: the next event is kept.
        hub.send(Ev::Data(1000));
        assert_eq!(all(&w), vec![Ev::Data(1000)]);
    }

    #[test]
    fn c_7_an_observer_that_does_not_read_holds_at_most_the_count_bound() {
        let hub = Hub::new(3, usize::MAX);
        let w = hub.watch();
        for i in 0..5 {
            hub.send(Ev::Data(i));
        }
        assert_eq!(w.held(), 3);
        assert_eq!(w.lost(), 2);
        assert_eq!(
            all(&w),
            vec![Ev::Data(0), Ev::Data(1), Ev::Data(2), Ev::Lost(2)]
        );
    }

    #[test]
    fn c_7_losses_are_reported_in_order_between_kept_events() {
        let hub = Hub::new(2, usize::MAX);
        let w = hub.watch();
        hub.send(Ev::Data(1));
        hub.send(Ev::Data(2));
        hub.send(Ev::Data(3));
        assert_eq!(w.try_recv(), Ok(Ev::Data(1)));
        hub.send(Ev::Data(4));
        hub.send(Ev::Data(5));
        assert_eq!(
            all(&w),
            vec![Ev::Data(2), Ev::Lost(1), Ev::Data(4), Ev::Lost(1)]
        );
        assert_eq!(w.lost(), 2);
    }

    #[test]
    fn c_7_a_slow_observer_does_not_hold_back_a_fast_one() {
        let hub = Hub::new(2, usize::MAX);
        let slow = hub.watch();
        let fast = hub.watch();
        for i in 0..10 {
            hub.send(Ev::Data(i));
            assert_eq!(fast.try_recv(), Ok(Ev::Data(i)));
        }
        assert_eq!(fast.lost(), 0);
        assert_eq!(slow.lost(), 8);
    }

    #[test]
    fn c_7_a_dropped_watch_is_forgotten_and_a_closed_hub_ends_the_watch() {
        let hub = Hub::new(2, usize::MAX);
        let w = hub.watch();
        assert!(hub.is_watched());
        drop(hub.watch());
        hub.send(Ev::Data(1));
        assert_eq!(hub.watches().list.len(), 1);
        hub.close();
        assert_eq!(
            hub.watch().try_recv(),
            Err(WatchError::Closed),
            "born closed"
        );
        assert_eq!(w.try_recv(), Ok(Ev::Data(1)));
        assert_eq!(w.try_recv(), Err(WatchError::Closed));
        assert_eq!(
            w.recv_timeout(Duration::from_millis(1)),
            Err(WatchError::Closed)
        );
        drop(w);
        assert!(!hub.is_watched());
    }

    #[test]
    fn c_7_a_blocking_wait_is_woken_by_a_send() {
        let hub: Hub<Ev> = Hub::new(2, usize::MAX);
        let w = hub.watch();
        let h = hub.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            h.send(Ev::Data(7));
        });
        let started = Instant::now();
        assert_eq!(w.recv_timeout(Duration::from_secs(20)), Ok(Ev::Data(7)));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "woken, not timed out"
        );
        t.join().unwrap();
        assert_eq!(
            w.recv_timeout(Duration::from_millis(5)),
            Err(WatchError::Empty)
        );
    }

    #[test]
    fn c_7_an_async_wait_is_woken_by_a_send_and_by_the_close() {
        let hub: Hub<Ev> = Hub::new(2, usize::MAX);
        let mut w = hub.watch();
        let h = hub.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            h.send(Ev::Data(7));
            std::thread::sleep(Duration::from_millis(20));
            h.close();
        });
        assert_eq!(block_on(w.recv()), Ok(Ev::Data(7)));
        assert_eq!(block_on(w.recv()), Err(WatchError::Closed));
        t.join().unwrap();
    }

    #[test]
    fn c_7_the_default_bounds_are_the_published_ones() {
        let hub: Hub<Ev> = Hub::default();
        let w = hub.watch();
        hub.send(Ev::Data(OBSERVER_BYTES));
        hub.send(Ev::Data(0));
        assert_eq!((w.held(), w.lost()), (2, 0), "exactly the byte bound fits");
        hub.send(Ev::Data(1));
        assert_eq!(w.lost(), 1);
        let w = hub.watch();
        for _ in 0..OBSERVER_QUEUE + 1 {
            hub.send(Ev::Data(0));
        }
        assert_eq!((w.held(), w.lost()), (OBSERVER_QUEUE, 1));
        const { assert!(OBSERVER_BYTES >= 1 << 20, "room for the largest frames") };
    }

    #[test]
    fn c_7_errors_and_queues_describe_themselves() {
        assert_eq!(WatchError::Empty.to_string(), "no event is queued");
        assert_eq!(WatchError::Closed.to_string(), "the driver stopped");
        let hub: Hub<Ev> = Hub::new(1, 10);
        let w = hub.watch();
        hub.send(Ev::Data(3));
        hub.send(Ev::Data(3));
        assert_eq!(format!("{w:?}"), "Watch { events: 1, bytes: 3, lost: 1 }");
        assert_eq!(format!("{hub:?}"), "Hub { limits: (1, 10) }");
    }
}
