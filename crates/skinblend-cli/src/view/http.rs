//! HTTP/1.1 as the viewer's server speaks it: a request head read within bounds (size and time)
//! and parsed into what routing needs, and answers written with the headers every answer
//! carries, or written and the connection closed without a reset.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use serde_json::json;

/// Content types of the answers.
pub const HTML: &str = "text/html; charset=utf-8";
/// JavaScript.
pub const JS: &str = "text/javascript; charset=utf-8";
/// Plain text.
pub const TEXT: &str = "text/plain; charset=utf-8";
/// JSON.
pub const JSON: &str = "application/json";
/// Binary data.
pub const BINARY: &str = "application/octet-stream";

/// The largest request head (request line and headers) read: browsers send under 2 KiB to this
/// server (no cookies are set for 127.0.0.1 by it), and common servers allow 8 to 16 KiB.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// The time a request head has to arrive, counted from when the server starts waiting for it
/// (a new connection, or the end of the previous answer on a kept-alive one): a slow or idle
/// client gives its slot back after this. Local requests take milliseconds.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The time an answer has to be taken by the client before the connection is dropped.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// After refusing a request (431, 503, a body) the server stops sending, then reads and drops
/// what the client still sends for at most this long and [`LINGER_BYTES`], so that closing does
/// not reset the connection before the client has read the answer.
pub const LINGER: Duration = Duration::from_millis(500);
/// See [`LINGER`]: bytes read and dropped at most (in [`READ_CHUNK`] pieces, never kept).
const LINGER_BYTES: usize = 256 * 1024;
/// Bytes read from a socket at once.
pub const READ_CHUNK: usize = 4096;

/// An answer: status, content type, body and at most one more header.
pub struct Reply {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
    extra: Option<(&'static str, String)>,
}

impl Reply {
    /// `body` of `content_type` with `status`.
    pub fn new(status: u16, content_type: &'static str, body: Vec<u8>) -> Self {
        Self {
            status,
            content_type,
            body,
            extra: None,
        }
    }

    /// `{"error": message}` with `status`.
    pub fn error(status: u16, message: &str) -> Self {
        Self::new(
            status,
            JSON,
            json!({ "error": message }).to_string().into_bytes(),
        )
    }

    /// The answer with one more header.
    pub fn with(mut self, name: &'static str, value: String) -> Self {
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
pub fn send(stream: &mut TcpStream, reply: &Reply, keep_alive: bool) -> std::io::Result<()> {
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
pub fn send_and_close(mut stream: TcpStream, reply: &Reply) {
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

/// How reading a request head ended.
pub enum Head {
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
pub fn read_head(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Head {
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
pub struct RequestHead {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path and query as sent.
    pub target: String,
    /// Whether the connection may serve another request after this one.
    pub keep_alive: bool,
    /// Whether the request carries a body (`Content-Length` above 0 or `Transfer-Encoding`),
    /// which this server never reads: the connection is closed after the answer.
    pub has_body: bool,
    /// The values of every `Host` header.
    pub hosts: Vec<String>,
}

/// Parses `head` (the request line and headers, with the blank line); `Err` is the 400 answer.
pub fn parse_head(head: &[u8]) -> std::result::Result<RequestHead, Reply> {
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
