//! The transport: HTTP/1.1 on 127.0.0.1 (tokio + hyper), carrying out [`Reply`]s.
//!
//! Guarantee: the server listens on the loopback address only, and this is the one
//! module of the crate with an async runtime or a clock that affects what is sent
//! (the delays of a slow stream, the limit of a hang). It decides nothing: every
//! status, header and byte comes from [`Server::handle`]. Streamed bodies go out with
//! chunked transfer encoding, one chunk per event, so a cut is a real truncated body:
//! the connection closes without the final zero-length chunk, exactly what a client
//! sees when the provider's connection drops. A request body over [`MAX_BODY`] gets
//! the API's 413; a body that cannot be read closes the connection. Nothing here can
//! panic on request bytes.

use super::{Incoming, Part, Reply, ReplyBody, ServeConfig, Server, StreamEnd};
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// The largest request body read (a long agent session is a few MiB).
pub const MAX_BODY: usize = 64 << 20;

/// A response body that plays a [`Reply`]'s parts with their delays, then ends as
/// the reply says: the final chunk, an error (hyper then drops the connection
/// without the final chunk), or silence until the hang limit.
pub struct ServeBody {
    parts: VecDeque<Part>,
    end: StreamEnd,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    hanging: bool,
    /// The pause before a cut has been taken.
    flushed: bool,
    hang_limit: Duration,
    exact: Option<u64>,
}

/// The pause before a cut, long enough for hyper to flush what came before.
const FLUSH_BEAT: Duration = Duration::from_millis(10);

impl ServeBody {
    fn full(bytes: Vec<u8>) -> ServeBody {
        let exact = Some(bytes.len() as u64);
        ServeBody {
            parts: VecDeque::from([Part { delay_ms: 0, bytes }]),
            end: StreamEnd::Complete,
            sleep: None,
            hanging: false,
            flushed: false,
            hang_limit: Duration::ZERO,
            exact,
        }
    }

    fn stream(parts: Vec<Part>, end: StreamEnd, hang_limit: Duration) -> ServeBody {
        ServeBody {
            parts: parts.into(),
            end,
            sleep: None,
            hanging: false,
            flushed: false,
            hang_limit,
            exact: None,
        }
    }
}

impl Body for ServeBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        loop {
            if let Some(sleep) = this.sleep.as_mut() {
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.sleep = None;
                if this.hanging {
                    return Poll::Ready(Some(Err(io::Error::other("turnsim: hang limit reached"))));
                }
                if let Some(front) = this.parts.front_mut() {
                    front.delay_ms = 0;
                }
            }
            match this.parts.front() {
                Some(p) if p.delay_ms > 0 => {
                    let d = Duration::from_millis(p.delay_ms);
                    this.sleep = Some(Box::pin(tokio::time::sleep(d)));
                }
                Some(_) => {
                    let bytes = this.parts.pop_front().map(|p| p.bytes).unwrap_or_default();
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(bytes)))));
                }
                None => match this.end {
                    StreamEnd::Complete => return Poll::Ready(None),
                    // hyper drops what it has buffered when a body fails, so the
                    // cut waits one short beat first: the pending poll makes hyper
                    // flush every byte before it, and only then the connection drops.
                    StreamEnd::Cut if !this.flushed => {
                        this.flushed = true;
                        this.sleep = Some(Box::pin(tokio::time::sleep(FLUSH_BEAT)));
                    }
                    StreamEnd::Cut => {
                        return Poll::Ready(Some(Err(io::Error::other("turnsim: stream cut"))));
                    }
                    StreamEnd::Hang => {
                        this.hanging = true;
                        this.sleep = Some(Box::pin(tokio::time::sleep(this.hang_limit)));
                    }
                },
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.parts.is_empty() && self.end == StreamEnd::Complete
    }

    fn size_hint(&self) -> SizeHint {
        match self.exact {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }
}

fn response(reply: Reply, hang_limit: Duration) -> Response<ServeBody> {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = match reply.body {
        ReplyBody::Full(bytes) => ServeBody::full(bytes),
        ReplyBody::Stream { parts, end } => ServeBody::stream(parts, end, hang_limit),
        // Handled before a response is built.
        ReplyBody::Hang | ReplyBody::Reset => ServeBody::full(Vec::new()),
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    for (name, value) in reply.headers {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            hyper::header::HeaderValue::from_str(&value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

async fn answer(
    server: Arc<Server>,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<ServeBody>, io::Error> {
    let hang_limit = Duration::from_millis(server.config().hang_limit_ms);
    let (head, body) = req.into_parts();
    let target = head
        .uri
        .path_and_query()
        .map_or_else(|| head.uri.path().to_owned(), |pq| pq.as_str().to_owned());
    let headers = head
        .headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match http_body_util::Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes().to_vec(),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                let reply = Reply::json(
                    413,
                    super::sse::error_body(
                        "request_too_large",
                        "Request exceeds the maximum allowed size",
                        "req_turnsim_too_large",
                    ),
                    "req_turnsim_too_large",
                );
                return Ok(response(reply, hang_limit));
            }
            return Err(io::Error::other(format!(
                "cannot read the request body: {e}"
            )));
        }
    };
    let incoming = Incoming {
        method: head.method.as_str().to_owned(),
        target,
        headers,
        body,
    };
    let reply = server.handle(&incoming);
    match reply.body {
        ReplyBody::Reset => Err(io::Error::other("turnsim: connection reset")),
        ReplyBody::Hang => {
            tokio::time::sleep(hang_limit).await;
            Err(io::Error::other("turnsim: hang limit reached"))
        }
        _ => Ok(response(reply, hang_limit)),
    }
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    server: Arc<Server>,
    mut shutdown: tokio::sync::oneshot::Receiver<()>,
) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut shutdown => return,
        };
        let Ok((stream, _)) = accepted else {
            // Out of file descriptors and the like: wait a little, keep serving.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let server = server.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| answer(server.clone(), req));
            // A connection error is the client's business (or a scripted cut).
            let _ = http1::Builder::new()
                .timer(TokioTimer::new())
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A running server. Dropping it stops the server.
pub struct ServeHandle {
    pub addr: SocketAddr,
    pub server: Arc<Server>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ServeHandle {
    /// `http://127.0.0.1:PORT`: what `ANTHROPIC_BASE_URL` is set to.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, ends every connection, and waits for the server thread.
    pub fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ServeHandle {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

fn bind(port: u16) -> io::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Starts a server on 127.0.0.1:`port` (0: any free port) on a thread of its own.
pub fn spawn(config: ServeConfig, port: u16) -> io::Result<ServeHandle> {
    let listener = bind(port)?;
    let addr = listener.local_addr()?;
    let server = Arc::new(Server::new(config));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let for_thread = server.clone();
    let thread = std::thread::Builder::new()
        .name("turnsim-serve".into())
        .spawn(move || {
            runtime.block_on(async move {
                match tokio::net::TcpListener::from_std(listener) {
                    Ok(l) => accept_loop(l, for_thread, rx).await,
                    Err(e) => eprintln!("turnsim serve: {e}"),
                }
            });
        })?;
    Ok(ServeHandle {
        addr,
        server,
        shutdown: Some(tx),
        thread: Some(thread),
    })
}

/// `turnsim serve`: binds, prints the base URL, and serves until the process ends.
pub fn run(config: ServeConfig, port: u16) -> io::Result<()> {
    let listener = bind(port)?;
    let addr = listener.local_addr()?;
    let mut banner = format!(
        "turnsim serve: listening on http://{addr}\n  export ANTHROPIC_BASE_URL=http://{addr}      # Messages API\n  export OPENAI_BASE_URL=http://{addr}/v1      # Responses and Chat Completions\n  ledger:  {}\n  scratch: {}\n",
        config.workspace.ledger.display(),
        config.workspace.scratch.display()
    );
    if let Some(dir) = &config.record {
        banner.push_str(&format!("  recording to {}\n", dir.display()));
    }
    crate::stdout::Stdout::new("serve").print(&banner);
    let server = Arc::new(Server::new(config));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        // Never sent: the server runs until the process is stopped.
        let (_keep, rx) = tokio::sync::oneshot::channel();
        accept_loop(listener, server, rx).await;
        Ok(())
    })
}
