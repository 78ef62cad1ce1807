//! The header read deadline, kept per connection instead of per request.
//!
//! A client must send each request head within `header_read_timeout` (the slowloris guard: a
//! client that trickles its headers, or holds an idle keep-alive connection, is cut off while
//! the others are served). hyper can enforce that itself, but it arms a timer for every request
//! (a boxed sleep, an entry in the timer wheel, its removal): about 1,500 instructions a
//! request, a sixth of everything patchgate adds to a bare handler. Here a connection only
//! counts what it does (heads parsed, answers produced, writes made, a write waiting on the
//! client) in a few plain counters, and one task per server looks at every connection each
//! quarter of the timeout: a connection that made no progress for the whole timeout and is not
//! in a request or a stalled write is closed. The deadline is kept to within a quarter of the
//! timeout (a client gets between 1× and 1.25× it), and a request costs four counter updates.
//!
//! Progress is only what a client cannot fake without sending whole requests: a byte of a head
//! is not progress, a parsed head is. Writes count so that a slow reader of a long answer is
//! held to the write timeout instead; a request being handled (its body arriving, its decision
//! being made) has the body deadlines.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::task::AbortHandle;
use tokio::time::Instant;

/// What one connection has done, updated only by the connection's own task (so a plain load
/// and store, no locked instruction) and read by the watchdog.
#[derive(Default)]
pub struct Activity {
    heads: AtomicU32,
    answered: AtomicU32,
    writes: AtomicU32,
    write_stalled: AtomicBool,
}

fn bump(counter: &AtomicU32) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

/// Held while a request is handled: counts its head when made, its answer when dropped
/// (answered, or abandoned with the connection).
pub struct Handling(Arc<Activity>);

impl Drop for Handling {
    fn drop(&mut self) {
        bump(&self.0.answered);
    }
}

impl Activity {
    /// A request head was parsed (the request reached the service); the request is handled
    /// until the returned guard is dropped.
    pub fn handling(self: &Arc<Self>) -> Handling {
        bump(&self.heads);
        Handling(Arc::clone(self))
    }

    /// A write to the client went through.
    pub fn wrote(&self) {
        bump(&self.writes);
    }

    /// Whether a write is waiting for the client to read (the write timeout's business).
    pub fn set_write_stalled(&self, stalled: bool) {
        if self.write_stalled.load(Ordering::Relaxed) != stalled {
            self.write_stalled.store(stalled, Ordering::Relaxed);
        }
    }

    /// The counters, and whether the connection is busy (a request being handled or a write
    /// waiting): a busy connection is never cut off by the head deadline.
    fn snapshot(&self) -> ([u32; 3], bool) {
        let heads = self.heads.load(Ordering::Relaxed);
        let answered = self.answered.load(Ordering::Relaxed);
        let writes = self.writes.load(Ordering::Relaxed);
        let busy = heads != answered || self.write_stalled.load(Ordering::Relaxed);
        ([heads, answered, writes], busy)
    }
}

struct Watched {
    activity: Arc<Activity>,
    abort: AbortHandle,
    seen: [u32; 3],
    /// When the connection last made progress (or was last busy), as the watchdog saw it.
    since: Instant,
}

/// The connections of one server and the deadline they are held to.
pub struct Watchdog {
    timeout: Duration,
    next: AtomicU64,
    connections: Mutex<HashMap<u64, Watched>>,
}

/// Removes its connection from the watchdog when the connection's task ends (or is aborted).
pub struct Registration {
    watchdog: Arc<Watchdog>,
    id: u64,
}

impl Registration {
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.watchdog.lock().remove(&self.id);
    }
}

impl Watchdog {
    pub fn new(timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            timeout,
            next: AtomicU64::new(0),
            connections: Mutex::new(HashMap::new()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Watched>> {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A new connection's activity counters, and the guard its task holds.
    pub fn open(self: &Arc<Self>) -> (Arc<Activity>, Registration) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        (
            Arc::new(Activity::default()),
            Registration {
                watchdog: Arc::clone(self),
                id,
            },
        )
    }

    /// Starts watching the connection whose task is `abort`, accepted at `now`.
    pub fn watch(&self, id: u64, activity: Arc<Activity>, abort: AbortHandle, now: Instant) {
        if abort.is_finished() {
            return;
        }
        let seen = activity.snapshot().0;
        self.lock().insert(
            id,
            Watched {
                activity,
                abort,
                seen,
                since: now,
            },
        );
    }

    /// How often the connections are looked at: a quarter of the timeout.
    pub fn tick(&self) -> Duration {
        (self.timeout / 4).max(Duration::from_millis(5))
    }

    /// Looks at every connection once: closes those idle for the whole timeout, forgets those
    /// that ended. Returns how many were closed.
    pub fn sweep(&self, now: Instant) -> usize {
        let mut closed = 0;
        self.lock().retain(|_, w| {
            if w.abort.is_finished() {
                return false;
            }
            let (seen, busy) = w.activity.snapshot();
            if busy || seen != w.seen {
                w.seen = seen;
                w.since = now;
                return true;
            }
            if now.saturating_duration_since(w.since) >= self.timeout {
                w.abort.abort();
                closed += 1;
                return false;
            }
            true
        });
        closed
    }

    /// Runs the sweeps until the server stops (the task is dropped with the server).
    pub async fn run(self: Arc<Self>) {
        let mut ticks = tokio::time::interval(self.tick());
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            // The time of the sweep, not of the tick it was due at (a late sweep that saw
            // progress must not date it earlier than it happened).
            let closed = self.sweep(Instant::now());
            if closed > 0 {
                tracing::debug!(
                    closed,
                    "closed connections that sent no request head in time"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(10);

    /// A watched connection whose task never ends by itself.
    fn connection(
        w: &Arc<Watchdog>,
        start: Instant,
    ) -> (Arc<Activity>, Registration, tokio::task::JoinHandle<()>) {
        let (activity, registration) = w.open();
        let task = tokio::spawn(std::future::pending::<()>());
        w.watch(
            registration.id(),
            Arc::clone(&activity),
            task.abort_handle(),
            start,
        );
        (activity, registration, task)
    }

    async fn aborted(task: tokio::task::JoinHandle<()>) -> bool {
        matches!(task.await, Err(e) if e.is_cancelled())
    }

    #[tokio::test]
    async fn a_connection_without_a_head_for_the_timeout_is_closed_not_before() {
        let w = Watchdog::new(T);
        let start = Instant::now();
        let (_a, _r, task) = connection(&w, start);
        assert_eq!(w.sweep(start + T - Duration::from_millis(1)), 0);
        assert!(!task.is_finished());
        assert_eq!(w.sweep(start + T), 1);
        assert!(aborted(task).await);
        assert!(w.lock().is_empty(), "a closed connection is forgotten");
    }

    #[tokio::test]
    async fn each_answered_request_restarts_the_deadline_from_the_sweep_that_saw_it() {
        let w = Watchdog::new(T);
        let start = Instant::now();
        let (a, _r, task) = connection(&w, start);
        drop(a.handling());
        a.wrote();
        // Seen at 9 s: the next head is due by 19 s.
        assert_eq!(w.sweep(start + Duration::from_secs(9)), 0);
        assert_eq!(w.sweep(start + Duration::from_secs(18)), 0);
        assert!(!task.is_finished());
        assert_eq!(w.sweep(start + Duration::from_secs(19)), 1);
        assert!(aborted(task).await);
    }

    #[tokio::test]
    async fn a_request_being_handled_or_a_stalled_write_is_never_cut_off() {
        let w = Watchdog::new(T);
        let start = Instant::now();
        let (a, _r, task) = connection(&w, start);
        let handling = a.handling();
        for k in 1..=10 {
            assert_eq!(w.sweep(start + T * k), 0, "handling, sweep {k}");
        }
        drop(handling);
        a.set_write_stalled(true);
        for k in 11..=20 {
            assert_eq!(w.sweep(start + T * k), 0, "write stalled, sweep {k}");
        }
        a.set_write_stalled(false);
        // The last busy sweep (200 s) starts the deadline.
        assert_eq!(w.sweep(start + T * 21 - Duration::from_millis(1)), 0);
        assert_eq!(w.sweep(start + T * 21), 1);
        assert!(aborted(task).await);
    }

    #[tokio::test]
    async fn bytes_of_a_head_are_not_progress_and_ended_connections_are_forgotten() {
        let w = Watchdog::new(T);
        // Reads are not counted at all: a trickling client changes nothing the watchdog sees.
        let start = Instant::now();
        let (_slow, _r1, slow_task) = connection(&w, start);
        let (_done, r2, done_task) = connection(&w, start);
        done_task.abort();
        assert!(aborted(done_task).await);
        drop(r2);
        assert_eq!(w.lock().len(), 1);
        assert_eq!(w.sweep(start + T), 1);
        assert!(aborted(slow_task).await);
        assert!(w.lock().is_empty());
    }

    #[test]
    fn sweeps_come_four_times_per_timeout() {
        assert_eq!(Watchdog::new(T).tick(), Duration::from_millis(2500));
        assert_eq!(
            Watchdog::new(Duration::from_millis(4)).tick(),
            Duration::from_millis(5)
        );
    }
}
