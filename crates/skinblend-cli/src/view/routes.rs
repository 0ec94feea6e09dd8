//! The viewer's routes: the page's own files and the model's JSON and binary endpoints
//! (`/api/...`), a fixed table; 404 for every other path (no path is looked up on disk), 403 for
//! a Host that is not this server's.

use serde_json::json;
use skinblend_gltf::GltfError;

use super::assets;
use super::background;
use super::colors::ColorMapKind;
use super::http::{Reply, RequestHead, BINARY, JSON, TEXT};
use super::layout::file_name;
use super::viewer::Viewer;
use crate::output::one_line;

/// What every worker reads: the viewer's data and the names the Host header may carry.
pub struct Site {
    /// The model's data.
    pub viewer: Viewer,
    /// `127.0.0.1:PORT` and `localhost:PORT`, compared without regard to case.
    hosts: [String; 2],
    /// The file as the command line named it, and its file name: error bodies carry the name
    /// only (an absolute path says more about this machine than the page needs).
    shown: String,
    file_name: String,
}

impl Site {
    /// The site of `viewer` served at 127.0.0.1:`port`.
    pub fn new(viewer: Viewer, port: u16) -> Self {
        let shown = viewer.shown.clone();
        let file_name = file_name(&shown);
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

/// Answers one request from the route table: the page's files and `/api/...`; 404 for every
/// other path (no path is looked up on disk, so `..`, encoded or not, reaches nothing).
pub fn answer(site: &Site, request: &RequestHead) -> Reply {
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
    let known = assets::file(path).is_some() || route_is_api(viewer, path);
    if !known {
        return Reply::error(404, "not found");
    }
    if request.method != "GET" {
        return Reply::error(405, "only GET").with("Allow", "GET".to_owned());
    }
    if let Some((content_type, body)) = assets::file(path) {
        return Reply::new(200, content_type, body.to_vec());
    }
    let state = || background::lock(&viewer.background);
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
                Some("blend") => Some(ColorMapKind::BlendValues),
                _ => None,
            };
            let usage = "animation=INDEX|rest&time=SECONDS&map=area|distance|blend";
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
    let line = format!("{}: {}", site.shown, one_line(error));
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
