//! The viewer's HTTP server: a fixed table of routes ([`super::routes`]), nothing from the file
//! system.
//!
//! A small HTTP/1.1 server on `std::net` ([`super::http`]), bounded in every dimension a client
//! controls: at most [`MAX_CONNECTIONS`] connections at once, each served by one of as many
//! worker threads made at start (one more is answered 503 by the accepting thread and closed); a
//! request head of at most [`MAX_HEAD_BYTES`] (431 beyond it, without reading further), which
//! must arrive within [`HEAD_TIMEOUT`] (an idle or slow connection is closed and frees its slot);
//! no request body is read (a request that has one is answered and the connection closed).
//! Connections are kept alive between GET requests. Listens on 127.0.0.1 only.

use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{anyhow, Context, Result};

use super::browser;
use super::http::{
    parse_head, read_head, send, send_and_close, Head, Reply, HEAD_TIMEOUT, LINGER, MAX_HEAD_BYTES,
    READ_CHUNK, WRITE_TIMEOUT,
};
use super::routes::{answer, Site};
use super::viewer::Viewer;

/// How often the accepting loop looks at the Ctrl-C flag when no connection is waiting (and so
/// the longest a new connection waits to be accepted).
const ACCEPT_POLL: Duration = Duration::from_millis(5);
/// Connections served at once, each by its own worker thread: a browser opens up to six per
/// server, so this leaves room for a few tabs and scripts, and bounds threads and buffers
/// (32 × [`MAX_HEAD_BYTES`]) whatever clients do.
pub const MAX_CONNECTIONS: usize = 32;

/// Binds 127.0.0.1 at `port` (0: a free one the system picks), prints the URL (on stdout, alone
/// on its line), opens a browser when `open` and one may be opened ([`browser`]), and answers
/// requests until Ctrl-C.
pub fn serve(viewer: Viewer, port: u16, open: bool) -> Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|error| anyhow!("127.0.0.1:{port}: cannot listen: {error}"))?;
    let port = listener
        .local_addr()
        .context("the server has no address")?
        .port();
    listener
        .set_nonblocking(true)
        .context("the viewer's server")?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .context("cannot install the Ctrl-C handler")?;
    let url = format!("http://127.0.0.1:{port}/");
    let mut out = std::io::stdout().lock();
    writeln!(out, "{url}")?;
    out.flush()?;
    drop(out);
    eprintln!(
        "skinblend: viewing {} ({}) at {url}; Ctrl-C to stop",
        viewer.shown,
        viewer
            .shaders
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(" | ")
    );
    if browser::may_open(open) {
        browser::open(&url);
    }
    let site = Arc::new(Site::new(viewer, port));
    let active = Arc::new(AtomicUsize::new(0));
    let (sender, receiver) = mpsc::channel::<TcpStream>();
    let receiver = Arc::new(Mutex::new(receiver));
    for worker in 0..MAX_CONNECTIONS {
        let (site, active, receiver) = (
            Arc::clone(&site),
            Arc::clone(&active),
            Arc::clone(&receiver),
        );
        std::thread::Builder::new()
            .name(format!("view-{worker}"))
            .spawn(move || loop {
                let next = receiver
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .recv();
                let Ok(stream) = next else { return };
                serve_connection(&site, stream);
                active.fetch_sub(1, Ordering::SeqCst);
            })
            .context("cannot start the viewer's worker threads")?;
    }
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                // Only this thread adds, so a free slot seen here stays free until it is taken.
                if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                    refuse_busy(stream);
                    continue;
                }
                active.fetch_add(1, Ordering::SeqCst);
                if sender.send(stream).is_err() {
                    return Err(anyhow!("the viewer's worker threads stopped"));
                }
            }
            // Nothing waiting, or a connection that went away, or no file descriptor left
            // (too many open files): look again shortly; none of these stops the server.
            Err(_) => std::thread::sleep(ACCEPT_POLL),
        }
    }
    eprintln!("skinblend: stopped the viewer");
    Ok(())
}

/// The answer to a connection beyond [`MAX_CONNECTIONS`], sent by the accepting thread.
fn refuse_busy(stream: TcpStream) {
    if stream.set_nonblocking(false).is_err() || stream.set_write_timeout(Some(LINGER)).is_err() {
        return;
    }
    let reply = Reply::error(
        503,
        &format!("the viewer serves {MAX_CONNECTIONS} connections at once; try again"),
    )
    .with("Retry-After", "1".to_owned());
    let mut stream = stream;
    if send(&mut stream, &reply, false).is_ok() {
        let _ = stream.shutdown(Shutdown::Write);
    }
}

/// Serves requests on one connection until the client closes it, asks to, sends something
/// this server does not read on, or lets [`HEAD_TIMEOUT`] pass.
fn serve_connection(site: &Site, stream: TcpStream) {
    let mut stream = stream;
    if stream.set_nonblocking(false).is_err()
        || stream.set_write_timeout(Some(WRITE_TIMEOUT)).is_err()
    {
        return;
    }
    let _ = stream.set_nodelay(true);
    let mut buffer = Vec::with_capacity(READ_CHUNK);
    loop {
        let end = match read_head(&mut stream, &mut buffer) {
            Head::Complete(end) => end,
            Head::TooLarge => {
                let reply = Reply::error(
                    431,
                    &format!("the request head is over {MAX_HEAD_BYTES} bytes"),
                );
                return send_and_close(stream, &reply);
            }
            Head::TimedOut { partial: true } => {
                let reply = Reply::error(
                    408,
                    &format!("no whole request head within {} s", HEAD_TIMEOUT.as_secs()),
                );
                return send_and_close(stream, &reply);
            }
            Head::TimedOut { partial: false } | Head::Closed => return,
        };
        let (reply, keep_alive) = match parse_head(&buffer[..end]) {
            Ok(request) => {
                let reply = answer(site, &request);
                (reply, request.keep_alive && !request.has_body)
            }
            Err(reply) => (reply, false),
        };
        if !keep_alive {
            return send_and_close(stream, &reply);
        }
        if send(&mut stream, &reply, true).is_err() {
            return;
        }
        buffer.drain(..end);
    }
}
