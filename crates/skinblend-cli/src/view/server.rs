//! The viewer's HTTP server: a fixed table of routes, nothing from the file system.
//!
//! A small HTTP/1.1 server on `std::net`, bounded in every dimension a client controls: at most
//! [`MAX_CONNECTIONS`] connections at once, each served by one of as many worker threads made
//! at start (one more is answered 503 by the accepting thread and closed); a request head of at
//! most [`MAX_HEAD_BYTES`] (431 beyond it, without reading further), which must arrive within
//! [`HEAD_TIMEOUT`] (an idle or slow connection is closed and frees its slot); no request body
//! is read (a request that has one is answered and the connection closed). Connections are
//! kept alive between GET requests. Listens on 127.0.0.1 only.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use serde_json::json;
use skinblend_gltf::GltfError;

use super::data::{ColorMapKind, Viewer};
use super::ViewRequest;

/// The page's own files, embedded at build time (three.js vendored under web/viewer/vendor/,
/// pinned by web/viewer/package-lock.json; CI checks the bytes against the npm package).
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "/",
        HTML,
        include_bytes!("../../../../web/viewer/index.html"),
    ),
    (
        "/index.html",
        HTML,
        include_bytes!("../../../../web/viewer/index.html"),
    ),
    (
        "/viewer.js",
        JS,
        include_bytes!("../../../../web/viewer/viewer.js"),
    ),
    (
        "/viewer.css",
        "text/css; charset=utf-8",
        include_bytes!("../../../../web/viewer/viewer.css"),
    ),
    (
        "/vendor/three.module.min.js",
        JS,
        include_bytes!("../../../../web/viewer/vendor/three.module.min.js"),
    ),
    (
        "/vendor/three.core.min.js",
        JS,
        include_bytes!("../../../../web/viewer/vendor/three.core.min.js"),
    ),
    (
        "/vendor/OrbitControls.js",
        JS,
        include_bytes!("../../../../web/viewer/vendor/OrbitControls.js"),
    ),
    (
        "/vendor/LICENSE-three",
        TEXT,
        include_bytes!("../../../../web/viewer/vendor/LICENSE-three"),
    ),
];
const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json";
const BINARY: &str = "application/octet-stream";

/// How often the accepting loop looks at the Ctrl-C flag when no connection is waiting (and so
/// the longest a new connection waits to be accepted).
const ACCEPT_POLL: Duration = Duration::from_millis(5);
/// Connections served at once, each by its own worker thread: a browser opens up to six per
/// server, so this leaves room for a few tabs and scripts, and bounds threads and buffers
/// (32 × [`MAX_HEAD_BYTES`]) whatever clients do.
pub const MAX_CONNECTIONS: usize = 32;
/// The largest request head (request line and headers) read: browsers send under 2 KiB to this
/// server (no cookies are set for 127.0.0.1 by it), and common servers allow 8 to 16 KiB.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// The time a request head has to arrive, counted from when the server starts waiting for it
/// (a new connection, or the end of the previous answer on a kept-alive one): a slow or idle
/// client gives its slot back after this. Local requests take milliseconds.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The time an answer has to be taken by the client before the connection is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// After refusing a request (431, 503, a body) the server stops sending, then reads and drops
/// what the client still sends for at most this long and [`LINGER_BYTES`], so that closing does
/// not reset the connection before the client has read the answer.
const LINGER: Duration = Duration::from_millis(500);
/// See [`LINGER`]: bytes read and dropped at most (in [`READ_CHUNK`] pieces, never kept).
const LINGER_BYTES: usize = 256 * 1024;
/// Bytes read from a socket at once.
const READ_CHUNK: usize = 4096;

/// Binds 127.0.0.1 at the requested port, prints the URL (on stdout, alone on its line) and
/// answers requests until Ctrl-C.
pub fn serve(viewer: Viewer, request: &ViewRequest<'_>) -> Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", request.port))
        .map_err(|error| anyhow!("127.0.0.1:{}: cannot listen: {error}", request.port))?;
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
    if super::may_open_browser(request.open) {
        super::open_browser(&url);
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

/// What every worker reads: the viewer's data and the names the Host header may carry.
struct Site {
    viewer: Viewer,
    /// `127.0.0.1:PORT` and `localhost:PORT`, compared without regard to case.
    hosts: [String; 2],
    /// The file as the command line named it, and its file name: error bodies carry the name
    /// only (an absolute path says more about this machine than the page needs).
    shown: String,
    file_name: String,
}

impl Site {
    fn new(viewer: Viewer, port: u16) -> Self {
        let shown = viewer.shown.clone();
        let file_name = Path::new(&shown)
            .file_name()
            .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
        Self {
            viewer,
            hosts: [format!("127.0.0.1:{port}"), format!("localhost:{port}")],
            shown,
            file_name,
        }
    }

    /// `text` for the page: the file as named on the command line replaced by its file name.
    fn for_page(&self, text: &str) -> String {
        if self.shown.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.shown, &self.file_name)
        }
    }
}

/// An answer: status, content type, body and at most one more header.
struct Reply {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
    extra: Option<(&'static str, String)>,
}

impl Reply {
    fn new(status: u16, content_type: &'static str, body: Vec<u8>) -> Self {
        Self {
            status,
            content_type,
            body,
            extra: None,
        }
    }

    /// `{"error": message}` with `status`.
    fn error(status: u16, message: &str) -> Self {
        Self::new(
            status,
            JSON,
            json!({ "error": message }).to_string().into_bytes(),
        )
    }

    fn with(mut self, name: &'static str, value: String) -> Self {
        self.extra = Some((name, value));
        self
    }
}

/// The reason phrase of the statuses this server sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

/// Writes `reply` with the headers every answer carries. Errors (a client that went away, or
/// one that does not read within [`WRITE_TIMEOUT`]) end the connection, not the server.
fn send(stream: &mut TcpStream, reply: &Reply, keep_alive: bool) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: \
         no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: {}\r\n",
        reply.status,
        reason(reply.status),
        reply.content_type,
        reply.body.len(),
        if keep_alive { "keep-alive" } else { "close" }
    );
    if let Some((name, value)) = &reply.extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(&reply.body)?;
    stream.flush()
}

/// Sends `reply` and closes the connection without a reset: stop sending, then read and drop
/// what the client still sends (bounded by [`LINGER`] and [`LINGER_BYTES`]).
fn send_and_close(mut stream: TcpStream, reply: &Reply) {
    if send(&mut stream, reply, false).is_err() {
        return;
    }
    let _ = stream.shutdown(Shutdown::Write);
    let deadline = Instant::now() + LINGER;
    let mut chunk = [0u8; READ_CHUNK];
    let mut dropped = 0usize;
    while dropped < LINGER_BYTES {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => dropped += n,
        }
    }
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

/// How reading a request head ended.
enum Head {
    /// The head is `buffer[..end]` (its blank line included).
    Complete(usize),
    /// More than [`MAX_HEAD_BYTES`] without the blank line.
    TooLarge,
    /// No head within [`HEAD_TIMEOUT`]; whether part of one had come.
    TimedOut { partial: bool },
    /// The client closed the connection (or it failed).
    Closed,
}

/// Reads into `buffer` (which may hold the start of the next request already) until it holds a
/// whole request head, never more than [`MAX_HEAD_BYTES`] + [`READ_CHUNK`] bytes, waiting at
/// most [`HEAD_TIMEOUT`] in all.
fn read_head(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Head {
    let deadline = Instant::now() + HEAD_TIMEOUT;
    let mut searched = 0usize;
    let mut chunk = [0u8; READ_CHUNK];
    loop {
        let from = searched.saturating_sub(3);
        if let Some(at) = buffer[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            let end = from + at + 4;
            return if end > MAX_HEAD_BYTES {
                Head::TooLarge
            } else {
                Head::Complete(end)
            };
        }
        searched = buffer.len();
        if buffer.len() > MAX_HEAD_BYTES {
            return Head::TooLarge;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Head::TimedOut {
                partial: !buffer.is_empty(),
            };
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Head::Closed,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Head::TimedOut {
                    partial: !buffer.is_empty(),
                }
            }
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Head::Closed,
        }
    }
}

/// A parsed request head: what routing needs.
struct RequestHead {
    method: String,
    target: String,
    /// Whether the connection may serve another request after this one.
    keep_alive: bool,
    /// Whether the request carries a body (`Content-Length` above 0 or `Transfer-Encoding`),
    /// which this server never reads: the connection is closed after the answer.
    has_body: bool,
    /// The values of every `Host` header.
    hosts: Vec<String>,
}

/// Parses `head` (the request line and headers, with the blank line); `Err` is the 400 answer.
fn parse_head(head: &[u8]) -> std::result::Result<RequestHead, Reply> {
    let bad = |what: &str| Reply::error(400, what);
    let text = std::str::from_utf8(head).map_err(|_| bad("the request head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("the request line is not METHOD TARGET HTTP/1.1"));
    };
    if method.is_empty() || target.is_empty() {
        return Err(bad("the request line is not METHOD TARGET HTTP/1.1"));
    }
    let http_11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        _ => return Err(Reply::error(505, "HTTP/1.1 only")),
    };
    let mut request = RequestHead {
        method: method.to_owned(),
        target: target.to_owned(),
        keep_alive: http_11,
        has_body: false,
        hosts: Vec::new(),
    };
    for line in lines.take_while(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad("a header line without a colon"));
        };
        if name.is_empty() || name.contains([' ', '\t']) {
            return Err(bad(
                "a header name with white space (or a folded header line)",
            ));
        }
        let value = value.trim_matches([' ', '\t']);
        if name.eq_ignore_ascii_case("host") {
            request.hosts.push(value.to_owned());
        } else if name.eq_ignore_ascii_case("connection") {
            for option in value.split(',').map(str::trim) {
                if option.eq_ignore_ascii_case("close") {
                    request.keep_alive = false;
                } else if option.eq_ignore_ascii_case("keep-alive") {
                    request.keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            request.has_body |= value != "0";
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            request.has_body = true;
        }
    }
    Ok(request)
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

/// Answers one request from the route table: the page's files and `/api/...`; 404 for every
/// other path (no path is looked up on disk, so `..`, encoded or not, reaches nothing).
fn answer(site: &Site, request: &RequestHead) -> Reply {
    // A page on another site cannot reach this server through a name that resolves to
    // 127.0.0.1 (DNS rebinding): the Host must be this address, given once (a second Host
    // header could mean another thing to a proxy in between).
    match request.hosts.as_slice() {
        [host] if site.hosts.iter().any(|ok| host.eq_ignore_ascii_case(ok)) => {}
        [_] => {
            return Reply::error(
                403,
                "the Host header must be 127.0.0.1:PORT or localhost:PORT",
            )
        }
        [] => return Reply::error(400, "no Host header"),
        _ => return Reply::error(400, "more than one Host header"),
    }
    let viewer = &site.viewer;
    let (path, query) = request
        .target
        .split_once('?')
        .unwrap_or((request.target.as_str(), ""));
    let known = FILES.iter().any(|(p, _, _)| *p == path) || route_is_api(viewer, path);
    if !known {
        return Reply::error(404, "not found");
    }
    if request.method != "GET" {
        return Reply::error(405, "only GET").with("Allow", "GET".to_owned());
    }
    if let Some((_, content_type, body)) = FILES.iter().find(|(p, _, _)| *p == path) {
        return Reply::new(200, content_type, body.to_vec());
    }
    let state = || {
        viewer
            .background
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    };
    match path {
        "/api/model" => Reply::new(200, JSON, viewer.model_json.clone().into_bytes()),
        "/api/mesh" => Reply::new(200, BINARY, viewer.mesh_bytes.clone()),
        "/api/status" => {
            let body = {
                let s = state();
                json!({
                    "stage": s.stage,
                    "done": s.done,
                    "total": s.total,
                    "centers": s.centers.is_some(),
                    "metrics": s.metrics.iter().map(Option::is_some).collect::<Vec<_>>(),
                    "error": s.error.as_deref().map(|e| site.for_page(e)),
                })
            };
            Reply::new(200, JSON, body.to_string().into_bytes())
        }
        "/api/centers" => {
            let centers = state().centers.clone();
            match centers {
                Some(bytes) => Reply::new(200, BINARY, bytes.as_ref().clone()),
                None => Reply::error(503, "centers of rotation not ready"),
            }
        }
        "/api/metrics" => {
            let animation = query_value(query, "animation").and_then(|a| a.parse::<usize>().ok());
            let metrics = animation.and_then(|a| state().metrics.get(a).cloned());
            match metrics {
                Some(Some(text)) => Reply::new(200, JSON, text.as_bytes().to_vec()),
                Some(None) => Reply::error(503, "metrics not ready"),
                None => Reply::error(400, &animations_hint(viewer, "animation=INDEX")),
            }
        }
        "/api/colors" => {
            let kind = match query_value(query, "map") {
                Some("area") => Some(ColorMapKind::AreaChange),
                Some("distance") => Some(ColorMapKind::DistanceFromFirst),
                _ => None,
            };
            let usage = "animation=INDEX|rest&time=SECONDS&map=area|distance";
            match (pose_query(viewer, query), kind) {
                (Ok((animation, time_s)), Some(kind)) => {
                    match viewer.colors(animation, time_s, kind) {
                        Ok(Some(colors)) => Reply::new(200, BINARY, colors.rgba)
                            .with("X-Color-High", colors.high.to_string()),
                        // Not an error: the page asks again (202, so no console error).
                        Ok(None) => Reply::error(202, "centers of rotation not ready"),
                        Err(error) => failure(site, &error),
                    }
                }
                (Err(why), _) => Reply::error(400, &format!("{why} ({usage})")),
                (_, None) => Reply::error(400, usage),
            }
        }
        "/api/pose" => match pose_query(viewer, query) {
            Ok((animation, time_s)) => match viewer.pose_bytes(animation, time_s) {
                Ok(bytes) => Reply::new(200, BINARY, bytes),
                Err(error) => failure(site, &error),
            },
            Err(why) => Reply::error(400, &format!("{why} (animation=INDEX|rest&time=SECONDS)")),
        },
        _ => {
            let name = path.strip_prefix("/api/shader/").unwrap_or_default();
            match viewer.shaders.iter().find(|(n, _)| *n == name) {
                Some((_, source)) => Reply::new(200, TEXT, source.clone().into_bytes()),
                None => Reply::error(404, "not found"),
            }
        }
    }
}

/// A request the model cannot answer: the CLI's one-line error, printed in the terminal and
/// sent to the page (with the file name for the file's path). 400 when the request asked for
/// something the file cannot give (a time that is not finite); 500 otherwise.
fn failure(site: &Site, error: &anyhow::Error) -> Reply {
    let line = format!("{}: {}", site.shown, crate::one_line(error));
    eprintln!("skinblend: {line}");
    let bad_request = error.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<GltfError>(),
            Some(GltfError::Request { .. } | GltfError::NoSuchAnimation { .. })
        )
    });
    Reply::error(if bad_request { 400 } else { 500 }, &site.for_page(&line))
}

/// Whether `path` is one of the JSON and binary endpoints.
fn route_is_api(viewer: &Viewer, path: &str) -> bool {
    matches!(
        path,
        "/api/model"
            | "/api/mesh"
            | "/api/status"
            | "/api/centers"
            | "/api/metrics"
            | "/api/pose"
            | "/api/colors"
    ) || path
        .strip_prefix("/api/shader/")
        .is_some_and(|name| viewer.shaders.iter().any(|(n, _)| *n == name))
}

/// `what`, then the animations the file has.
fn animations_hint(viewer: &Viewer, what: &str) -> String {
    match viewer.animation_count() {
        0 => format!("{what}: the file has no animation"),
        n => format!("{what}: the file has animations 0 to {}", n - 1),
    }
}

/// `animation=INDEX|rest&time=SECONDS` (animation absent: the rest pose; time absent: 0), the
/// index one of the file's animations; `Err` says which parameter is wrong.
fn pose_query(viewer: &Viewer, query: &str) -> std::result::Result<(Option<usize>, f32), String> {
    let animation = match query_value(query, "animation") {
        None | Some("rest") => None,
        Some(a) => match a.parse::<usize>() {
            Ok(index) if index < viewer.animation_count() => Some(index),
            _ => return Err(animations_hint(viewer, &format!("animation={a}"))),
        },
    };
    let time_s = match query_value(query, "time") {
        None => 0.0,
        Some(t) => t
            .parse::<f32>()
            .map_err(|_| format!("time={t} is not a number"))?,
    };
    Ok((animation, time_s))
}

/// The value of `key` in a query string `a=1&b=2` (no decoding: the values are numbers).
fn query_value<'q>(query: &'q str, key: &str) -> Option<&'q str> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}
