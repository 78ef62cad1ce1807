//! What one request may spend, enforced at the edge: how fast its body must arrive, how long
//! it may take in all, where its CPU work runs, and how long its answer may wait to be read.
//!
//! - [`Pace`]: a body must keep arriving at [`Settings::min_body_rate`] bytes a second, judged
//!   over each [`RATE_WINDOW`], and arrive whole by an absolute deadline. A client that
//!   trickles is answered 408 within one window, whatever the endpoint.
//! - [`run_cpu`]: a decision over a large body runs on a blocking thread, one per core at a
//!   time, so the async workers stay free for `/healthz` and for small requests; a client that
//!   goes away while its job waits for a core never starts it.
//! - [`WriteDeadline`]: a connection whose answer is not read for [`Settings::write_timeout`]
//!   is closed, so an unread answer does not pin memory.
//!
//! [`Settings::min_body_rate`]: super::Settings::min_body_rate
//! [`Settings::write_timeout`]: super::Settings::write_timeout

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use futures_util::{FutureExt, StreamExt};
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, Sleep};

use super::AppState;
use crate::core::problem::Problem;

/// The window over which a body's rate is judged.
pub const RATE_WINDOW: Duration = Duration::from_secs(5);

/// Bodies up to this size are decided on the async worker that read them: their work is a
/// few microseconds, and a hand-off to another thread would cost more than it saves.
pub const INLINE_BYTES: usize = 64 * 1024;

/// Why a body stopped being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyFault {
    /// Slower than the minimum rate over a window, or past the absolute deadline: a 408.
    TooSlow(String),
    /// Larger than the endpoint accepts: a 413.
    TooLarge(u64),
    /// The connection failed mid-body: a 400.
    Broken(String),
}

impl From<BodyFault> for Problem {
    fn from(f: BodyFault) -> Self {
        match f {
            BodyFault::TooSlow(detail) => Problem::new(408, "request-timeout", detail),
            BodyFault::TooLarge(limit) => Problem::new(
                413,
                "body-too-large",
                format!("the body is larger than this endpoint accepts ({limit} bytes)"),
            ),
            BodyFault::Broken(e) => Problem::malformed(format!("the body could not be read: {e}")),
        }
    }
}

/// The pace a body is held to while it arrives.
pub struct Pace {
    deadline: Instant,
    total_timeout: Duration,
    window_start: Instant,
    window_bytes: u64,
    min_rate: u64,
}

impl Pace {
    /// A body that must arrive whole within `total`, at `min_rate` bytes a second or faster.
    pub fn new(total: Duration, min_rate: u64) -> Self {
        let now = Instant::now();
        Self {
            deadline: now + total,
            total_timeout: total,
            window_start: now,
            window_bytes: 0,
            min_rate,
        }
    }

    /// Judges the windows that have ended by now.
    fn check(&mut self, now: Instant) -> Result<(), BodyFault> {
        if now >= self.deadline {
            return Err(BodyFault::TooSlow(format!(
                "the body did not arrive within {}s",
                self.total_timeout.as_secs()
            )));
        }
        while now >= self.window_start + RATE_WINDOW {
            let needed = self.min_rate.saturating_mul(RATE_WINDOW.as_secs());
            if self.window_bytes < needed {
                return Err(BodyFault::TooSlow(format!(
                    "the body arrived at less than {} bytes a second over {}s",
                    self.min_rate,
                    RATE_WINDOW.as_secs()
                )));
            }
            self.window_start += RATE_WINDOW;
            self.window_bytes = 0;
        }
        Ok(())
    }

    /// The next chunk of `body`, or `None` at its end. A chunk that is already there is taken
    /// without arming a timer (a small body arrives with its headers).
    pub async fn next(&mut self, body: &mut Body) -> Result<Option<Bytes>, BodyFault> {
        let mut stream = DataStream(body);
        loop {
            let item = match stream.next().now_or_never() {
                Some(item) => item,
                None => {
                    let wake = (self.window_start + RATE_WINDOW).min(self.deadline);
                    tokio::select! {
                        item = stream.next() => item,
                        () = tokio::time::sleep_until(wake) => {
                            self.check(Instant::now())?;
                            continue;
                        }
                    }
                }
            };
            return match item {
                None => Ok(None),
                Some(Err(e)) => Err(BodyFault::Broken(e.to_string())),
                Some(Ok(chunk)) => {
                    self.window_bytes += chunk.len() as u64;
                    self.check(Instant::now())?;
                    Ok(Some(chunk))
                }
            };
        }
    }
}

/// A borrowed view of a body as a stream of data chunks (trailers skipped).
struct DataStream<'a>(&'a mut Body);

impl futures_util::Stream for DataStream<'_> {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match Pin::new(&mut *self.0).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        return Poll::Ready(Some(Ok(data)));
                    }
                }
            }
        }
    }
}

/// A body's share of the server's budget for request bodies held in memory
/// ([`Settings::max_body_bytes`]), returned when the request is done.
///
/// [`Settings::max_body_bytes`]: super::Settings::max_body_bytes
#[derive(Debug, Default)]
pub struct BodyShare(Option<OwnedSemaphorePermit>);

impl BodyShare {
    /// Takes `n` more bytes of the budget, or answers 503 at once when the server already
    /// holds as many bodies as it may.
    fn grow(&mut self, state: &AppState, n: usize) -> Result<(), Problem> {
        if n == 0 {
            return Ok(());
        }
        let n = u32::try_from(n).map_err(|_| overloaded_bodies())?;
        let more = Arc::clone(state.body_bytes())
            .try_acquire_many_owned(n)
            .map_err(|_| overloaded_bodies())?;
        match &mut self.0 {
            Some(held) => held.merge(more),
            None => self.0 = Some(more),
        }
        Ok(())
    }
}

fn overloaded_bodies() -> Problem {
    Problem::new(
        503,
        "overloaded",
        "the server holds as many request bodies as it may; retry shortly",
    )
}

/// Reads a whole body of at most `limit` bytes at the server's pace (408 when too slow, 413
/// past the limit), within the server's budget for bodies in memory (503 past it).
pub async fn read_paced(
    state: &AppState,
    mut body: Body,
    limit: usize,
) -> Result<(Bytes, BodyShare), Problem> {
    let settings = state.settings();
    let mut pace = Pace::new(settings.request_timeout, settings.min_body_rate);
    let mut share = BodyShare::default();
    let first = match pace.next(&mut body).await? {
        None => return Ok((Bytes::new(), share)),
        Some(chunk) => chunk,
    };
    if first.len() > limit {
        return Err(BodyFault::TooLarge(limit as u64).into());
    }
    share.grow(state, first.len())?;
    // Most bodies come in one chunk: no copy then.
    let Some(second) = pace.next(&mut body).await? else {
        return Ok((first, share));
    };
    let mut all = Vec::with_capacity((first.len() + second.len()).min(limit));
    all.extend_from_slice(&first);
    let mut next = Some(second);
    while let Some(chunk) = next {
        if all.len() + chunk.len() > limit {
            return Err(BodyFault::TooLarge(limit as u64).into());
        }
        share.grow(state, chunk.len())?;
        all.extend_from_slice(&chunk);
        next = pace.next(&mut body).await?;
    }
    Ok((Bytes::from(all), share))
}

/// Runs a decision's CPU work: inline for a body of at most [`INLINE_BYTES`], else on a
/// blocking thread once one of the server's CPU slots (one per core) is free. The caller's
/// future is dropped when its client goes away; a job still waiting for a slot is then never
/// started, and one already running finishes its bounded work and is discarded.
pub async fn run_cpu<T: Send + 'static>(
    state: &AppState,
    body_len: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Problem> {
    if body_len <= INLINE_BYTES {
        return Ok(work());
    }
    let slot = std::sync::Arc::clone(state.cpu_slots())
        .acquire_owned()
        .await
        .map_err(|_| Problem::new(503, "unavailable", "the server is shutting down"))?;
    let request_id = super::layers::current_request_id();
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        super::layers::with_request_id_set(request_id, work)
    })
    .await
    .map_err(|e| {
        tracing::error!(error = %e, "a decision's blocking task failed");
        Problem::new(500, "internal", "an internal error occurred")
    })
}

/// A connection whose writes must make progress: a write that stays blocked for the timeout
/// (the client stopped reading) fails, and hyper closes the connection and drops the answer it
/// was holding. The timer is made only when a write blocks, so a connection whose answers go
/// out at once pays nothing for it.
///
/// It also closes politely: when hyper is done with a connection whose client is still
/// sending (a body refused by its declared length, before it was read), the write side is
/// shut first and what still arrives is read and dropped for a moment ([`LINGER`],
/// [`LINGER_BYTES`]), so the client reads its 413 instead of a connection reset.
pub struct WriteDeadline<S> {
    inner: S,
    timeout: Duration,
    /// What the connection's writes tell the header-read watchdog.
    activity: Arc<super::watchdog::Activity>,
    stalled: Option<Pin<Box<Sleep>>>,
    /// Set once the write side is shut: the end of the linger, and what it has drained.
    linger: Option<(Pin<Box<Sleep>>, u64)>,
}

/// Longest a closing connection keeps reading what its client still sends.
pub const LINGER: Duration = Duration::from_secs(2);

/// Most bytes a closing connection reads and drops before it closes anyway.
pub const LINGER_BYTES: u64 = 16 * 1024 * 1024;

impl<S> WriteDeadline<S> {
    pub fn new(inner: S, timeout: Duration, activity: Arc<super::watchdog::Activity>) -> Self {
        Self {
            inner,
            timeout,
            activity,
            stalled: None,
            linger: None,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> WriteDeadline<S> {
    /// Tells the watchdog about bytes that reached the client's socket (only those: a flush
    /// happens whenever the connection is polled, a trickling client's bytes included).
    fn count(&self, written: &Poll<io::Result<usize>>) {
        if let Poll::Ready(Ok(n)) = written
            && *n > 0
        {
            self.activity.wrote();
        }
    }

    /// Polls a write-side operation under the deadline.
    fn deadline<T>(
        &mut self,
        cx: &mut Context<'_>,
        op: impl FnOnce(Pin<&mut S>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        match op(Pin::new(&mut self.inner), cx) {
            Poll::Ready(r) => {
                if self.stalled.take().is_some() {
                    self.activity.set_write_stalled(false);
                }
                Poll::Ready(r)
            }
            Poll::Pending => {
                self.activity.set_write_stalled(true);
                let timeout = self.timeout;
                let sleep = self
                    .stalled
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                if sleep.as_mut().poll(cx).is_ready() {
                    Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client did not read its answer in time",
                    )))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = this.deadline(cx, |s, cx| s.poll_write(cx, buf));
        this.count(&written);
        written
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = this.deadline(cx, |s, cx| s.poll_write_vectored(cx, bufs));
        this.count(&written);
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().deadline(cx, AsyncWrite::poll_flush)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.linger.is_none() {
            std::task::ready!(this.deadline(cx, AsyncWrite::poll_shutdown))?;
            this.linger = Some((Box::pin(tokio::time::sleep(LINGER)), 0));
            // Closing, for at most the linger: not an idle connection to cut off.
            this.activity.set_write_stalled(true);
        }
        let mut scratch = [0u8; 8192];
        loop {
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut buf) {
                // The client is done (or gone): close now.
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => {
                    let Some((_, drained)) = this.linger.as_mut() else {
                        return Poll::Ready(Ok(()));
                    };
                    *drained += buf.filled().len() as u64;
                    if *drained > LINGER_BYTES {
                        return Poll::Ready(Ok(()));
                    }
                }
                Poll::Pending => break,
            }
        }
        let ended = match this.linger.as_mut() {
            Some((until, _)) => until.as_mut().poll(cx).is_ready(),
            None => true,
        };
        if ended {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    }
}
