//! `skinblend view FILE`: a live side-by-side viewer (LBS | DQS | CoR) in the browser.
//!
//! A small HTTP/1.1 server of its own on `std::net` (bounded: connections, request head size,
//! time to send a head; see `server`), bound to 127.0.0.1, serves the page (this crate's
//! web/viewer/, embedded in the binary with three.js vendored beside it, so it works offline and
//! from any folder) and the model's data as JSON and binary endpoints. Nothing else: no path reaches
//! the file system, and any other path is 404. The page skins in the vertex shader with the GLSL ES
//! functions of `skinblend shaders --lang glsl-es` (served as generated here, at start) and
//! the palettes this server prepares per pose with the core (`/api/pose`), so the DQS split
//! and the CoR placement are the ones the CPU, the GPU and the conformance vectors use.
//! Centers of rotation the file does not carry and the per-frame metrics of `compare` are
//! computed once, in the background, while the page shows the progress (`/api/status`).

mod assets;
mod background;
mod browser;
mod colors;
mod http;
mod layout;
mod primitives;
mod routes;
mod server;
mod viewer;

use std::path::Path;

use anyhow::{Context, Result};
use skinblend::Method;
use skinblend_gltf::Model;

/// What `skinblend view` was asked.
#[derive(Debug)]
pub struct ViewRequest<'a> {
    /// The glTF file.
    pub file: &'a Path,
    /// The port on 127.0.0.1 (0: a free one the system picks).
    pub port: u16,
    /// The methods side by side, in order (empty: every method the model can run).
    pub methods: Vec<Method>,
    /// Where blended's blend values come from, beside the file's.
    pub blend: &'a crate::dq_blend::BlendArgs,
    /// Whether to try to open a browser (never under `CI`, nor without a display on Linux).
    pub open: bool,
}

/// Loads the file, prepares the viewer's data (any error here is the command's one-line error
/// and exit 1) and serves it until Ctrl-C.
pub fn run(request: &ViewRequest<'_>) -> Result<()> {
    let context = || request.file.display().to_string();
    let mut model = Model::open(request.file).with_context(context)?;
    let dq_blend = request.blend.apply(&mut model).with_context(context)?;
    let methods = if request.methods.is_empty() {
        model.skinnable_methods(dq_blend)
    } else {
        request.methods.clone()
    };
    let shown = request.file.display().to_string();
    // The server lives until the process ends; the model is shared by the request loop and the
    // background computation without copies.
    let model: &'static Model = Box::leak(Box::new(model));
    let viewer = viewer::Viewer::new(model, &shown, &methods, dq_blend).with_context(context)?;
    server::serve(viewer, request.port, request.open)
}
