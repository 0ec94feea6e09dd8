//! The harness of the `skinblend view` tests (view_server.rs, view_browser.rs): the built-in
//! rigs in a scratch folder, and a running server with plain HTTP/1.1 requests to it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use skinblend_testkit::ScratchDir;

use crate::support::{command, write_rigs};

/// The built-in rigs as .glb in a fresh scratch folder for test `name` (`skinblend rigs`).
pub fn rigs(name: &str) -> ScratchDir {
    let dir = ScratchDir::new(&format!("cli-{name}"));
    let _ = write_rigs(&dir);
    dir
}

/// A running `skinblend view` and its URL; killed when dropped.
pub struct Server {
    /// The `skinblend view` process.
    pub child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The URL it printed.
    pub url: String,
}

impl Server {
    /// Starts `skinblend view FILE --no-open --port 0`, its stderr the test's.
    pub fn start(file: &Path) -> Self {
        Self::start_with_stderr(file, Stdio::inherit())
    }

    /// Starts `skinblend view FILE --no-open --port 0` with its stderr to `stderr`, and reads
    /// the URL it prints.
    pub fn start_with_stderr(file: &Path, stderr: Stdio) -> Self {
        Self::start_with_args(file, &[], stderr)
    }

    /// Starts `skinblend view FILE --no-open --port 0 ARGS...` with its stderr to `stderr`,
    /// and reads the URL it prints.
    pub fn start_with_args(file: &Path, args: &[&str], stderr: Stdio) -> Self {
        let mut child = command()
            .arg("view")
            .arg(file)
            .args(["--no-open", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start skinblend view");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the URL");
        let url = line.trim().to_owned();
        let port = url
            .strip_prefix("http://127.0.0.1:")
            .and_then(|rest| rest.trim_end_matches('/').parse().ok())
            .unwrap_or_else(|| panic!("no http://127.0.0.1:PORT/ on stdout: {line:?}"));
        Self { child, port, url }
    }

    /// Sends `request_line` (e.g. `GET / HTTP/1.1`) with `host` and returns the status and
    /// the body.
    pub fn raw(&self, request_line: &str, host: &str) -> (u16, Vec<u8>) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        write!(
            stream,
            "{request_line}\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .expect("send");
        let mut response = Vec::new();
        stream.read_to_end(&mut response).expect("read");
        let split = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a header");
        let head = String::from_utf8_lossy(&response[..split]).into_owned();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {head:?}"));
        (status, response[split + 4..].to_vec())
    }

    /// Sends `request` as it is and reads the answer until the server closes the connection
    /// (or `timeout` passes): its status, head and body; `None` when no answer came.
    pub fn exchange(&self, request: &[u8], timeout: Duration) -> Option<(u16, String, Vec<u8>)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream.set_read_timeout(Some(timeout)).expect("timeout");
        stream.write_all(request).expect("send");
        read_answer(&mut stream)
    }

    /// The server's resident memory in bytes (Linux: /proc/PID/status).
    #[cfg(target_os = "linux")]
    pub fn resident_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/PID/status");
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS");
        kib * 1024
    }

    /// `GET path` with this server's Host: the status and the body.
    pub fn get(&self, path: &str) -> (u16, Vec<u8>) {
        self.raw(
            &format!("GET {path} HTTP/1.1"),
            &format!("127.0.0.1:{}", self.port),
        )
    }
}

/// Reads one answer until the connection closes or the read times out: status, head, body
/// (`None` when nothing that looks like an answer came).
pub fn read_answer(stream: &mut TcpStream) -> Option<(u16, String, Vec<u8>)> {
    let mut response = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => response.extend_from_slice(&chunk[..n]),
        }
    }
    let split = response.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&response[..split]).into_owned();
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, head, response[split + 4..].to_vec()))
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (at most 60 s) until the server's background work is done, so that its memory is
/// not growing by itself while a test measures it.
pub fn wait_for_background(server: &Server) {
    for _ in 0..600 {
        let (status, body) = server.get("/api/status");
        assert_eq!(status, 200);
        let state: serde_json::Value = serde_json::from_slice(&body).expect("status JSON");
        if state["stage"].is_null() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the background work did not finish in 60 s");
}
