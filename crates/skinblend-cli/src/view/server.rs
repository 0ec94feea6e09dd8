//! The viewer's HTTP server: a fixed table of routes, nothing from the file system.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use serde_json::json;
use tiny_http::{Header, Method as HttpMethod, Request, Response};

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

/// How often the request loop looks at the Ctrl-C flag.
const STOP_POLL: Duration = Duration::from_millis(100);

/// Binds 127.0.0.1 at the requested port, prints the URL (on stdout, alone on its line) and
/// answers requests until Ctrl-C.
pub fn serve(viewer: Viewer, request: &ViewRequest<'_>) -> Result<()> {
    let server = tiny_http::Server::http(("127.0.0.1", request.port))
        .map_err(|error| anyhow!("127.0.0.1:{}: cannot listen: {error}", request.port))?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|address| address.port())
        .context("the server has no IP address")?;
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
    let hosts = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    while !stop.load(Ordering::SeqCst) {
        match server.recv_timeout(STOP_POLL) {
            Ok(Some(request)) => answer(&viewer, &hosts, request),
            Ok(None) => {}
            Err(error) => return Err(error).context("the viewer's server"),
        }
    }
    eprintln!("skinblend: stopped the viewer");
    Ok(())
}

/// `response` with the header `name: value`. Ours are ASCII names and values (literals and
/// formatted numbers), always valid; one that were not is left out rather than failing the
/// answer.
fn with_header<R: std::io::Read>(response: Response<R>, name: &str, value: &str) -> Response<R> {
    match Header::from_bytes(name.as_bytes(), value.as_bytes()) {
        Ok(header) => response.with_header(header),
        Err(()) => response,
    }
}

/// A response with the headers every answer carries.
fn respond(request: Request, status: u16, content_type: &str, body: Vec<u8>) {
    respond_with(request, status, content_type, body, None);
}

/// [`respond`] with one more header.
fn respond_with(
    request: Request,
    status: u16,
    content_type: &str,
    body: Vec<u8>,
    extra: Option<(&str, &str)>,
) {
    let mut response = Response::from_data(body).with_status_code(status);
    response = with_header(response, "Content-Type", content_type);
    response = with_header(response, "Cache-Control", "no-store");
    response = with_header(response, "X-Content-Type-Options", "nosniff");
    if let Some((name, value)) = extra {
        response = with_header(response, name, value);
    }
    // A client that went away is not the server's error.
    let _ = request.respond(response);
}

fn respond_error(request: Request, status: u16, message: &str) {
    respond(
        request,
        status,
        JSON,
        json!({ "error": message }).to_string().into_bytes(),
    );
}

/// A request the model cannot answer (a degenerate pose, say): the CLI's one-line error,
/// printed in the terminal and sent to the page.
fn respond_failure(viewer: &Viewer, request: Request, error: &anyhow::Error) {
    let line = format!("{}: {}", viewer.shown, crate::one_line(error));
    eprintln!("skinblend: {line}");
    respond_error(request, 500, &line);
}

/// Answers one request from the route table: the page's files and `/api/...`; 404 for every
/// other path (no path is looked up on disk, so `..`, encoded or not, reaches nothing).
fn answer(viewer: &Viewer, hosts: &[String], request: Request) {
    // A page on another site cannot reach this server through a name that resolves to
    // 127.0.0.1 (DNS rebinding): the Host must be this address.
    let host_ok = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .is_some_and(|h| hosts.iter().any(|ok| h.value.as_str() == ok));
    if !host_ok {
        respond_error(
            request,
            403,
            "the Host header must be 127.0.0.1:PORT or localhost:PORT",
        );
        return;
    }
    let url = request.url().to_owned();
    let (path, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
    let known = FILES.iter().any(|(p, _, _)| *p == path) || route_is_api(viewer, path);
    if !known {
        respond_error(request, 404, "not found");
        return;
    }
    if *request.method() != HttpMethod::Get {
        respond_error(request, 405, "only GET");
        return;
    }
    if let Some((_, content_type, body)) = FILES.iter().find(|(p, _, _)| *p == path) {
        respond(request, 200, content_type, body.to_vec());
        return;
    }
    let state = || {
        viewer
            .background
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    };
    match path {
        "/api/model" => respond(request, 200, JSON, viewer.model_json.clone().into_bytes()),
        "/api/mesh" => respond(request, 200, BINARY, viewer.mesh_bytes.clone()),
        "/api/status" => {
            let body = {
                let s = state();
                json!({
                    "stage": s.stage,
                    "done": s.done,
                    "total": s.total,
                    "centers": s.centers.is_some(),
                    "metrics": s.metrics.iter().map(Option::is_some).collect::<Vec<_>>(),
                    "error": s.error,
                })
            };
            respond(request, 200, JSON, body.to_string().into_bytes());
        }
        "/api/centers" => {
            let centers = state().centers.clone();
            match centers {
                Some(bytes) => respond(request, 200, BINARY, bytes.as_ref().clone()),
                None => respond_error(request, 503, "centers of rotation not ready"),
            }
        }
        "/api/metrics" => {
            let animation = query_value(query, "animation").and_then(|a| a.parse::<usize>().ok());
            let metrics = animation.and_then(|a| state().metrics.get(a).cloned());
            match metrics {
                Some(Some(text)) => respond(request, 200, JSON, text.as_bytes().to_vec()),
                Some(None) => respond_error(request, 503, "metrics not ready"),
                None => respond_error(request, 400, "animation=INDEX of an animation of the file"),
            }
        }
        "/api/colors" => {
            let kind = match query_value(query, "map") {
                Some("area") => Some(ColorMapKind::AreaChange),
                Some("distance") => Some(ColorMapKind::DistanceFromFirst),
                _ => None,
            };
            match (pose_query(query), kind) {
                (Some((animation, time_s)), Some(kind)) => {
                    match viewer.colors(animation, time_s, kind) {
                        Ok(Some(colors)) => {
                            let high = colors.high.to_string();
                            let extra = Some(("X-Color-High", high.as_str()));
                            respond_with(request, 200, BINARY, colors.rgba, extra);
                        }
                        // Not an error: the page asks again (202, so no console error).
                        Ok(None) => respond_error(request, 202, "centers of rotation not ready"),
                        Err(error) => respond_failure(viewer, request, &error),
                    }
                }
                _ => respond_error(
                    request,
                    400,
                    "animation=INDEX|rest&time=SECONDS&map=area|distance",
                ),
            }
        }
        "/api/pose" => match pose_query(query) {
            Some((animation, time_s)) => match viewer.pose_bytes(animation, time_s) {
                Ok(bytes) => respond(request, 200, BINARY, bytes),
                Err(error) => respond_failure(viewer, request, &error),
            },
            None => respond_error(request, 400, "animation=INDEX|rest&time=SECONDS"),
        },
        _ => {
            let name = path.strip_prefix("/api/shader/").unwrap_or_default();
            match viewer.shaders.iter().find(|(n, _)| *n == name) {
                Some((_, source)) => respond(request, 200, TEXT, source.clone().into_bytes()),
                None => respond_error(request, 404, "not found"),
            }
        }
    }
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

/// `animation=INDEX|rest&time=SECONDS` (animation absent: the rest pose; time absent: 0).
fn pose_query(query: &str) -> Option<(Option<usize>, f32)> {
    let animation = match query_value(query, "animation") {
        None | Some("rest") => None,
        Some(a) => Some(a.parse::<usize>().ok()?),
    };
    let time_s = match query_value(query, "time") {
        None => 0.0,
        Some(t) => t.parse::<f32>().ok()?,
    };
    Some((animation, time_s))
}

/// The value of `key` in a query string `a=1&b=2` (no decoding: the values are numbers).
fn query_value<'q>(query: &'q str, key: &str) -> Option<&'q str> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}
