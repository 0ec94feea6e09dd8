//! `skinblend view`: the server (only its own routes, 127.0.0.1, the one-line error of a broken
//! file, Ctrl-C) with plain HTTP requests, and the page in headless Chromium
//! (`web/viewer/check.mjs`): no console error, the 180° twist collapsed by LBS and not by DQS in
//! the screenshot's pixels, the time slider and the colour map changing the picture, a sample
//! model, an error after start shown on the page and in the terminal as the CLI's line, and
//! the page recovering from failed requests (and backing off while they fail). Raw TCP: the
//! server's bounds (request head size: 431 with bounded memory; connections at once: 503; idle
//! connections time out), the Host check, 405 with `Allow`, 4xx for bad parameters, and error
//! bodies without absolute paths.
//!
//! The browser tests need node with `tools/node_modules/playwright-core` (`npm ci --prefix
//! tools`) and Chromium, the CesiumMan test the sample models (`../shared/models`): each skips
//! with a message when they are missing, except under `CI=true`, where it fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

mod support;

use skinblend_testkit::{models_dir, repository_root};
use support::{chromium_or_skip, command, temp_dir};

/// The built-in rigs as .glb in a fresh folder (`skinblend rigs`).
fn rigs(name: &str) -> skinblend_testkit::ScratchDir {
    let dir = temp_dir(name);
    let out = command()
        .args(["rigs", "-o"])
        .arg(&dir)
        .output()
        .expect("run skinblend rigs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// A running `skinblend view` and its URL; killed when dropped.
struct Server {
    child: Child,
    port: u16,
    url: String,
}

impl Server {
    fn start(file: &Path) -> Self {
        Self::start_with_stderr(file, Stdio::inherit())
    }

    fn start_with_stderr(file: &Path, stderr: Stdio) -> Self {
        let mut child = command()
            .arg("view")
            .arg(file)
            .args(["--no-open", "--port", "0"])
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
    fn raw(&self, request_line: &str, host: &str) -> (u16, Vec<u8>) {
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
    fn exchange(&self, request: &[u8], timeout: Duration) -> Option<(u16, String, Vec<u8>)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream.set_read_timeout(Some(timeout)).expect("timeout");
        stream.write_all(request).expect("send");
        read_answer(&mut stream)
    }

    /// The server's resident memory in bytes (Linux: /proc/PID/status).
    #[cfg(target_os = "linux")]
    fn resident_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/PID/status");
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS");
        kib * 1024
    }

    fn get(&self, path: &str) -> (u16, Vec<u8>) {
        self.raw(
            &format!("GET {path} HTTP/1.1"),
            &format!("127.0.0.1:{}", self.port),
        )
    }
}

/// Reads one answer until the connection closes or the read times out: status, head, body
/// (`None` when nothing that looks like an answer came).
fn read_answer(stream: &mut TcpStream) -> Option<(u16, String, Vec<u8>)> {
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

fn serves_its_routes_and_nothing_else() {
    let dir = rigs("routes");
    let server = Server::start(&dir.join("twist_fine.glb"));
    for path in [
        "/",
        "/index.html",
        "/viewer.js",
        "/vendor/three.module.min.js",
    ] {
        let (status, body) = server.get(path);
        assert_eq!(status, 200, "{path}");
        assert!(!body.is_empty(), "{path}");
    }
    let (status, body) = server.get("/api/model");
    assert_eq!(status, 200);
    let model: serde_json::Value = serde_json::from_slice(&body).expect("model JSON");
    assert_eq!(model["animations"][0]["name"], "sweep");
    assert_eq!(model["primitives"][0]["vertices"], 1058);
    // Two joints, one palette entry each for LBS (48 bytes), DQS (96) and CoR (144).
    let (status, body) = server.get("/api/pose?animation=0&time=2");
    assert_eq!(status, 200);
    assert_eq!(body.len(), 2 * (48 + 96 + 144));
    let (status, body) = server.get("/api/shader/dq");
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).starts_with("#version 300 es"));
    // Paths outside the route table: traversal in every spelling, absolute paths and forms.
    for path in [
        "/../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/%2E%2E%2FCargo.toml",
        "/vendor/../Cargo.toml",
        "/vendor/%2e%2e/viewer.js",
        "/..%2f..%2fCargo.toml",
        "//etc/passwd",
        "/etc/passwd",
        "/Cargo.toml",
        "/twist_fine.glb",
        "/api/shader/../../Cargo.toml",
        "/api/shader/wgsl",
        "/vendor/",
        "/index.html/",
        "http://127.0.0.1/../Cargo.toml",
    ] {
        let (status, body) = server.get(path);
        assert_eq!(status, 404, "{path}: {}", String::from_utf8_lossy(&body));
        assert!(
            !String::from_utf8_lossy(&body).contains("[workspace]"),
            "{path}"
        );
    }
    let (status, _) = server.raw("POST / HTTP/1.1", &format!("127.0.0.1:{}", server.port));
    assert_eq!(status, 405);
    let host = format!("127.0.0.1:{}", server.port);
    let post = format!("POST /api/pose HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n");
    let (status, head, _) = server
        .exchange(post.as_bytes(), Duration::from_secs(30))
        .expect("an answer to POST");
    assert_eq!(status, 405, "{head}");
    assert!(
        head.lines().any(|l| l == "Allow: GET"),
        "405 without Allow: GET: {head}"
    );
    // Another name for 127.0.0.1 (DNS rebinding) is refused.
    let (status, _) = server.raw("GET / HTTP/1.1", &format!("evil.example:{}", server.port));
    assert_eq!(status, 403);
    // Bad parameters are the client's error (4xx), naming the parameter.
    for (path, named) in [
        ("/api/pose?animation=7&time=0", "animation=7"),
        ("/api/pose?animation=99", "animation=99"),
        ("/api/pose?animation=x", "animation=x"),
        ("/api/pose?animation=0&time=soon", "time=soon"),
        ("/api/pose?animation=0&time=NaN", "time NaN s is not finite"),
        ("/api/colors?animation=99&time=0&map=area", "animation=99"),
        ("/api/metrics?animation=99", "animation=INDEX"),
    ] {
        let (status, body) = server.get(path);
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body.contains(named), "{path}: {body}");
    }
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
}

fn a_broken_file_is_the_one_line_error_of_the_other_commands() {
    let dir = temp_dir("broken");
    let file = dir.join("broken.glb");
    // A GLB header that declares 16 bytes in a file of 12.
    std::fs::write(&file, b"glTF\x02\x00\x00\x00\x10\x00\x00\x00").expect("write");
    let view = command()
        .arg("view")
        .arg(&file)
        .arg("--no-open")
        .output()
        .expect("run view");
    let info = command().arg("info").arg(&file).output().expect("run info");
    assert_eq!(view.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&view.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("truncated"), "{stderr}");
    assert_eq!(stderr, String::from_utf8_lossy(&info.stderr));
    assert!(view.stdout.is_empty(), "no URL for a broken file");
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(unix)]
fn ctrl_c_stops_it_cleanly() {
    let dir = rigs("ctrlc");
    let mut server = Server::start(&dir.join("twist_coarse.glb"));
    assert_eq!(server.get("/").0, 200);
    let signal = Command::new("kill")
        .args(["-INT", &server.child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(signal.success());
    // It looks at the flag every 100 ms: 10 s is ample, and a hang fails instead of blocking.
    let mut status = None;
    for _ in 0..100 {
        status = server.child.try_wait().expect("wait");
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = status.expect("still running 10 s after Ctrl-C");
    assert_eq!(status.code(), Some(0), "Ctrl-C should end it with success");
    std::fs::remove_dir_all(&dir).ok();
}

/// What check.mjs saw (OUT/result.json), asserting only that it could drive the browser.
fn run_check(
    server: &Server,
    out: &Path,
    time_s: &str,
    other_time_s: f32,
    play_s: f32,
) -> serde_json::Value {
    let status = Command::new("node")
        .arg(repository_root().join("web/viewer/check.mjs"))
        .arg(&server.url)
        .arg(out)
        .arg(time_s)
        .arg(other_time_s.to_string())
        .arg(play_s.to_string())
        .status()
        .expect("run node");
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("result.json")).expect("result.json"))
            .expect("result JSON");
    assert!(status.success(), "check.mjs: {result}");
    result
}

/// What check.mjs saw, after asserting the page had no error of any kind.
fn check_page(
    server: &Server,
    out: &Path,
    time_s: f32,
    other_time_s: f32,
    play_s: f32,
) -> serde_json::Value {
    let result = run_check(server, out, &time_s.to_string(), other_time_s, play_s);
    for key in ["console_errors", "page_errors", "failed_requests"] {
        assert_eq!(
            result[key].as_array().map(Vec::len),
            Some(0),
            "{key}: {result}"
        );
    }
    assert!(
        result["error"].is_null(),
        "the page shows an error: {result}"
    );
    let outside = result["outside"].as_object().expect("outside statuses");
    assert!(!outside.is_empty());
    for (path, status) in outside {
        assert_eq!(status, 404, "{path}: {result}");
    }
    eprintln!(
        "{}: {:.1} frames/s, {:.1} poses/s playing, renderer {}",
        server.url, result["fps"], result["poses_per_second"], result["renderer"]
    );
    result
}

/// An RGB screenshot.
struct Picture {
    width: usize,
    height: usize,
    rgb: Vec<[u8; 3]>,
}

impl Picture {
    fn open(path: &Path) -> Self {
        let decoder = png::Decoder::new(std::io::BufReader::new(
            std::fs::File::open(path).expect("open png"),
        ));
        let mut reader = decoder.read_info().expect("png header");
        let mut buffer = vec![0; reader.output_buffer_size().expect("png size")];
        let info = reader.next_frame(&mut buffer).expect("png data");
        let channels = info.color_type.samples();
        let rgb = buffer[..info.buffer_size()]
            .chunks_exact(channels)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        Self {
            width: info.width as usize,
            height: info.height as usize,
            rgb,
        }
    }

    fn at(&self, x: usize, y: usize) -> [u8; 3] {
        self.rgb[y * self.width + x]
    }
}

/// A pixel differs from the background when a channel differs by more than this: the
/// background is one flat clear colour, and antialiased edges of the dark shaded mesh still
/// differ by more than this (a smaller value would count only compression-free noise, of which
/// a PNG screenshot has none; a larger one would lose the dimmest shading).
const FOREGROUND_CHANNEL_DIFFERENCE: u8 = 12;

/// Rows and columns at the screenshot's border left out of the silhouettes: the element
/// screenshot's first row can catch the page's edge above the canvas.
const BORDER_PX: usize = 3;

/// The silhouette of viewport `panel` of `panels` (side by side): per row, how many pixels
/// differ from the background (the viewport's pixel at its top-left inside the border); 0 for
/// the border rows.
fn row_widths(picture: &Picture, panel: usize, panels: usize) -> Vec<usize> {
    let x0 = picture.width * panel / panels + BORDER_PX;
    let x1 = picture.width * (panel + 1) / panels - BORDER_PX;
    let background = picture.at(x0, BORDER_PX);
    (0..picture.height)
        .map(|y| {
            if y < BORDER_PX || y + BORDER_PX >= picture.height {
                return 0;
            }
            (x0..x1)
                .filter(|&x| {
                    let p = picture.at(x, y);
                    (0..3).any(|c| p[c].abs_diff(background[c]) > FOREGROUND_CHANNEL_DIFFERENCE)
                })
                .count()
        })
        .collect()
}

/// The width at the middle of the silhouette's height (the twist rig's joint ring: the rig
/// spans y 0 to 2 around its joint at y = 1 and the camera looks at the box's center), the
/// smallest within ±2 rows, divided by the mean width at a quarter and three quarters of the
/// height (the undeformed cylinder on either side).
fn ring_width_ratio(widths: &[usize]) -> (f64, usize, f64) {
    let top = widths.iter().position(|&w| w > 0).expect("a silhouette");
    let bottom = widths.iter().rposition(|&w| w > 0).expect("a silhouette");
    let middle = (top + bottom) / 2;
    let ring = (middle - 2..=middle + 2)
        .map(|y| widths[y])
        .min()
        .unwrap_or(0);
    let quarter = (bottom - top) / 4;
    let body = (widths[top + quarter] + widths[bottom - quarter]) as f64 / 2.0;
    (ring as f64 / body, ring, body)
}

/// LBS at 180°: the ring's radius is cos 90° = 0 of the cylinder's, so its silhouette at the
/// ring is a few antialiased pixels; below a quarter of the body's width leaves room for the
/// shading of the pinched surface around it.
const LBS_COLLAPSED_BELOW: f64 = 0.25;
/// DQS keeps the radius: the ring is as wide as the body up to the antialiased edge and the
/// shading seam at the ring (a pixel or two of ~100).
const DQS_KEPT_ABOVE: f64 = 0.9;

/// Share of a viewport's pixels that must differ between two poses for "the slider changed the
/// pose": far above zero (identical frames) and far below what a visible change of the twist
/// rig gives (the LBS waist alone is thousands of pixels).
const POSE_CHANGED_SHARE: f64 = 0.005;

/// Share of pixels that differ (over the area both pictures cover: the page's layout may
/// round an element screenshot's height differently by a pixel).
fn changed_share(a: &Picture, b: &Picture) -> f64 {
    let (width, height) = (a.width.min(b.width), a.height.min(b.height));
    let mut changed = 0usize;
    for y in 0..height {
        for x in 0..width {
            let (p, q) = (a.at(x, y), b.at(x, y));
            if (0..3).any(|c| p[c].abs_diff(q[c]) > FOREGROUND_CHANNEL_DIFFERENCE) {
                changed += 1;
            }
        }
    }
    changed as f64 / (width * height) as f64
}

fn browser_shows_the_candy_wrapper_in_lbs_and_not_in_dqs() {
    if chromium_or_skip("the viewer's browser test").is_none() {
        return;
    }
    let dir = rigs("browser-twist");
    let server = Server::start(&dir.join("twist_fine.glb"));
    let out = dir.join("page");
    // 2 s is the rig's 180° (90° per second), 1 s its 90°.
    check_page(&server, &out, 2.0, 1.0, 1.0);
    let at_180 = Picture::open(&out.join("first.png"));
    let at_90 = Picture::open(&out.join("second.png"));
    let (lbs, lbs_ring, lbs_body) = ring_width_ratio(&row_widths(&at_180, 0, 3));
    let (dqs, dqs_ring, dqs_body) = ring_width_ratio(&row_widths(&at_180, 1, 3));
    let (cor, _, _) = ring_width_ratio(&row_widths(&at_180, 2, 3));
    eprintln!(
        "180°: ring ÷ body width LBS {lbs:.3} ({lbs_ring} of {lbs_body} px), DQS {dqs:.3} \
         ({dqs_ring} of {dqs_body} px), CoR {cor:.3}"
    );
    assert!(
        lbs < LBS_COLLAPSED_BELOW,
        "LBS ring not collapsed: {lbs:.3}"
    );
    assert!(dqs > DQS_KEPT_ABOVE, "DQS ring collapsed: {dqs:.3}");
    assert!(cor > DQS_KEPT_ABOVE, "CoR ring collapsed: {cor:.3}");
    let changed = changed_share(&at_180, &at_90);
    assert!(
        changed > POSE_CHANGED_SHARE,
        "the slider did not change the pose: {changed}"
    );
    // The area-change map colours the same pose: LBS's waist is blue, the rest near white.
    let colored = Picture::open(&out.join("colored.png"));
    let recolored = changed_share(&at_180, &colored);
    assert!(
        recolored > POSE_CHANGED_SHARE,
        "the colour map changed nothing: {recolored}"
    );
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
}

fn browser_plays_a_sample_model() {
    if chromium_or_skip("the viewer's browser test").is_none() {
        return;
    }
    let Some(models) = models_dir() else {
        return;
    };
    let model = models.join("CesiumMan/CesiumMan.glb");
    let server = Server::start(&model);
    // Kept in target/tmp: the README's picture comes from here (page.png).
    let out = repository_root().join("target/tmp/view-CesiumMan");
    let _ = std::fs::remove_dir_all(&out);
    let result = check_page(&server, &out, 0.5, 1.5, 3.0);
    let a = Picture::open(&out.join("first.png"));
    let b = Picture::open(&out.join("second.png"));
    let changed = changed_share(&a, &b);
    assert!(
        changed > POSE_CHANGED_SHARE,
        "the slider did not change the pose: {changed}"
    );
    assert!(result["fps"].as_f64().is_some_and(|f| f > 0.0), "{result}");
}

fn an_error_after_start_is_the_cli_line_on_the_page_and_in_the_terminal() {
    if chromium_or_skip("the viewer's browser test").is_none() {
        return;
    }
    let dir = rigs("browser-error");
    let file = dir.join("twist_coarse.glb");
    let log = dir.join("stderr.txt");
    let server = Server::start_with_stderr(
        &file,
        Stdio::from(std::fs::File::create(&log).expect("log file")),
    );
    // The page asks for the pose at ?time=NaN: the server cannot pose it.
    let result = run_check(&server, &dir.join("page"), "NaN", 1.0, 0.0);
    drop(server);
    let shown = result["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error on the page: {result}"));
    let pose = command()
        .arg("pose")
        .arg(&file)
        .args(["--time", "NaN", "-o"])
        .arg(dir.join("never.glb"))
        .output()
        .expect("run pose");
    assert_eq!(pose.status.code(), Some(1));
    let cli = String::from_utf8_lossy(&pose.stderr).trim_end().to_owned();
    // The page shows the file's name where the terminal shows the path as given.
    let name = file.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        format!("skinblend: {shown}"),
        cli.replace(file.to_str().unwrap(), name),
        "page vs the pose command"
    );
    let terminal = std::fs::read_to_string(&log).expect("stderr");
    assert!(terminal.lines().any(|l| l == cli), "terminal: {terminal}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Connections the server serves at once (`MAX_CONNECTIONS` in
/// crates/skinblend-cli/src/view/server.rs).
const MAX_CONNECTIONS: usize = 32;
/// The largest request head it reads (`MAX_HEAD_BYTES` there).
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// How long it waits for a request head (`HEAD_TIMEOUT` there).
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Waits (at most 60 s) until the server's background work is done, so that its memory is
/// not growing by itself while a test measures it.
fn wait_for_background(server: &Server) {
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

fn a_request_head_over_the_cap_is_431_and_memory_stays_bounded() {
    /// What the client tries to send as one header: 4096 times the cap, far beyond it.
    const SENT: usize = 64 * 1024 * 1024;
    /// Growth of the server's resident memory allowed while it refuses the header: a quarter
    /// of what was sent (the old server kept all of it, twice over).
    const GROWTH_BELOW: u64 = (SENT / 4) as u64;
    let dir = rigs("head-cap");
    let server = Server::start(&dir.join("twist_coarse.glb"));
    wait_for_background(&server);
    #[cfg(target_os = "linux")]
    let before = server.resident_bytes();
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut writer = stream.try_clone().expect("clone");
    let host = format!("127.0.0.1:{}", server.port);
    let sending = std::thread::spawn(move || {
        let chunk = vec![b'a'; 64 * 1024];
        let mut sent = 0usize;
        let start = format!("GET / HTTP/1.1\r\nHost: {host}\r\nX-Big: ");
        if writer.write_all(start.as_bytes()).is_err() {
            return sent;
        }
        // Until the server stops reading (it closes) or all is sent.
        while sent < SENT && writer.write_all(&chunk).is_ok() {
            sent += chunk.len();
        }
        sent
    });
    let sent = sending.join().expect("writer");
    // Measured with the connection still open: a server that kept the header still holds it.
    #[cfg(target_os = "linux")]
    let after = server.resident_bytes();
    let answer = read_answer(&mut stream);
    eprintln!("sent {sent} bytes of one header; answer {answer:?}");
    let (status, _, body) = answer.expect("an answer to the oversized head");
    assert_eq!(status, 431, "{}", String::from_utf8_lossy(&body));
    assert!(String::from_utf8_lossy(&body).contains(&MAX_HEAD_BYTES.to_string()));
    #[cfg(target_os = "linux")]
    {
        let growth = after.saturating_sub(before);
        eprintln!("resident memory {before} -> {after} bytes");
        assert!(growth < GROWTH_BELOW, "the server grew by {growth} bytes");
    }
    drop(stream);
    // A head just under the cap is served.
    let padding = "b".repeat(MAX_HEAD_BYTES - 200);
    let request = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Pad: {padding}\r\nConnection: close\r\n\r\n",
        server.port
    );
    let (status, _, _) = server
        .exchange(request.as_bytes(), Duration::from_secs(30))
        .expect("an answer");
    assert_eq!(status, 200);
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
}

fn connections_beyond_the_cap_get_503_and_idle_ones_time_out() {
    let dir = rigs("connection-cap");
    let server = Server::start(&dir.join("twist_coarse.glb"));
    assert_eq!(server.get("/").0, 200);
    let idle: Vec<TcpStream> = (0..MAX_CONNECTIONS)
        .map(|_| TcpStream::connect(("127.0.0.1", server.port)).expect("connect"))
        .collect();
    let answer = server.exchange(
        format!(
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            server.port
        )
        .as_bytes(),
        Duration::from_secs(5),
    );
    let (status, head, _) = answer.expect("an answer beyond the cap within 5 s");
    assert_eq!(status, 503, "{head}");
    assert!(head.contains("Retry-After: 1"), "{head}");
    // The idle connections hold their slots at most HEAD_TIMEOUT: then the server closes them
    // and serves again.
    std::thread::sleep(HEAD_TIMEOUT + Duration::from_secs(1));
    for mut stream in idle {
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut byte = [0u8; 1];
        assert!(
            matches!(stream.read(&mut byte), Ok(0) | Err(_)),
            "an idle connection still open after {HEAD_TIMEOUT:?}"
        );
    }
    let mut served = false;
    for _ in 0..50 {
        if server.get("/").0 == 200 {
            served = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        served,
        "no slot came free after the idle connections timed out"
    );
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
}

fn the_host_header_is_one_and_matched_without_case() {
    let dir = rigs("host");
    let server = Server::start(&dir.join("twist_coarse.glb"));
    let port = server.port;
    let ask = |headers: &str| {
        let request = format!("GET / HTTP/1.1\r\n{headers}Connection: close\r\n\r\n");
        server
            .exchange(request.as_bytes(), Duration::from_secs(30))
            .map(|(status, _, _)| status)
    };
    for headers in [
        format!("HOST: 127.0.0.1:{port}\r\n"),
        format!("host: LOCALHOST:{port}\r\n"),
        format!("Host: LocalHost:{port}\r\n"),
    ] {
        assert_eq!(ask(&headers), Some(200), "{headers:?}");
    }
    for headers in [
        // The first one ours: a proxy in between may read the second.
        format!("Host: 127.0.0.1:{port}\r\nHost: evil.example:{port}\r\n"),
        format!("Host: 127.0.0.1:{port}\r\nhost: 127.0.0.1:{port}\r\n"),
        String::new(),
    ] {
        let status = ask(&headers);
        assert!(matches!(status, Some(400 | 421)), "{headers:?}: {status:?}");
    }
    assert_eq!(ask(&format!("Host: evil.example:{port}\r\n")), Some(403));
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
}

fn error_bodies_carry_no_absolute_path() {
    let dir = rigs("paths");
    let file = dir.join("twist_coarse.glb");
    assert!(file.is_absolute());
    let server = Server::start(&file);
    let folder = dir.to_str().unwrap();
    let mut statuses = Vec::new();
    for path in [
        "/api/pose?animation=0&time=NaN",
        "/api/pose?animation=99",
        "/api/colors?animation=0&time=NaN&map=area",
        "/api/metrics?animation=5",
        "/nothing",
        "/api/shader/none",
    ] {
        let (status, body) = server.get(path);
        let body = String::from_utf8_lossy(&body);
        assert!(status >= 400 || status == 202, "{path}: {status}");
        assert!(!body.contains(folder), "{path}: {body}");
        statuses.push(status);
        if path.contains("pose") && path.contains("NaN") {
            assert!(
                body.contains("twist_coarse.glb: time NaN"),
                "{path}: {body}"
            );
        }
    }
    let (_, body) = server.get("/api/status");
    assert!(!String::from_utf8_lossy(&body).contains(folder));
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
}

/// Pose requests per second the page may send while every one fails, measured from 2 s after
/// the failures start (its wait doubles from 0.25 s to 4 s: about 0.5 per second by then; the
/// old page sent one per frame).
const FAILING_REQUESTS_PER_SECOND: f64 = 3.0;

fn browser_recovers_after_failed_poses_and_backs_off_while_they_fail() {
    if chromium_or_skip("the viewer's browser test").is_none() {
        return;
    }
    let dir = rigs("browser-recover");
    let server = Server::start_with_stderr(&dir.join("twist_coarse.glb"), Stdio::null());
    let out = dir.join("page");
    let fail_s = 6.0;
    let status = Command::new("node")
        .arg(repository_root().join("web/viewer/recover.mjs"))
        .arg(&server.url)
        .arg(&out)
        .arg(fail_s.to_string())
        .status()
        .expect("run node");
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("result.json")).expect("result.json"))
            .expect("result JSON");
    assert!(status.success(), "recover.mjs: {result}");
    eprintln!("{result}");
    assert_eq!(
        result["nan_error"], "twist_coarse.glb: time NaN s is not finite",
        "{result}"
    );
    // ?paused&time=NaN, then play: the next request is valid and the page shows it.
    assert_eq!(result["recovered_after_play"], true, "{result}");
    assert_eq!(result["failing_error"], "injected failure", "{result}");
    let late = result["failing_request_ms"]
        .as_array()
        .expect("request times")
        .iter()
        .filter(|t| t.as_f64().is_some_and(|t| t >= 2000.0))
        .count();
    let rate = late as f64 / (fail_s - 2.0);
    assert!(
        rate <= FAILING_REQUESTS_PER_SECOND,
        "{rate:.1} failing requests per second: {result}"
    );
    assert_eq!(result["recovered_after_failures"], true, "{result}");
    for key in ["console_errors", "page_errors"] {
        assert_eq!(
            result[key].as_array().map(Vec::len),
            Some(0),
            "{key}: {result}"
        );
    }
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
}

skinblend_testkit::test_main!(
    serves_its_routes_and_nothing_else,
    a_broken_file_is_the_one_line_error_of_the_other_commands,
    ctrl_c_stops_it_cleanly,
    browser_shows_the_candy_wrapper_in_lbs_and_not_in_dqs,
    browser_plays_a_sample_model,
    an_error_after_start_is_the_cli_line_on_the_page_and_in_the_terminal,
    a_request_head_over_the_cap_is_431_and_memory_stays_bounded,
    connections_beyond_the_cap_get_503_and_idle_ones_time_out,
    the_host_header_is_one_and_matched_without_case,
    error_bodies_carry_no_absolute_path,
    browser_recovers_after_failed_poses_and_backs_off_while_they_fail,
);
