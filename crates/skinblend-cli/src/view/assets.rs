//! The page's own files, embedded at build time from the crate's `web/viewer/` (three.js
//! vendored under `web/viewer/vendor/`, pinned by `web/viewer/package-lock.json`; CI checks the
//! bytes against the npm package): path, content type, bytes.

use super::http::{HTML, JS, TEXT};

/// One file of the page from `web/viewer/`, served at `/` + its name.
macro_rules! asset {
    ($name:literal, $content_type:expr) => {
        (
            concat!("/", $name),
            $content_type,
            include_bytes!(concat!("../../web/viewer/", $name)).as_slice(),
        )
    };
}

/// Every file of the page: path, content type, bytes. `/` is `index.html`.
pub const FILES: &[(&str, &str, &[u8])] = &[
    (
        "/",
        HTML,
        include_bytes!("../../web/viewer/index.html").as_slice(),
    ),
    asset!("index.html", HTML),
    asset!("viewer.js", JS),
    asset!("status.js", JS),
    asset!("shading.js", JS),
    asset!("scene.js", JS),
    asset!("poses.js", JS),
    asset!("colors.js", JS),
    asset!("background.js", JS),
    asset!("plots.js", JS),
    asset!("viewer.css", "text/css; charset=utf-8"),
    asset!("vendor/three.module.min.js", JS),
    asset!("vendor/three.core.min.js", JS),
    asset!("vendor/OrbitControls.js", JS),
    asset!("vendor/LICENSE-three", TEXT),
];

/// The file served at `path`, if any: its content type and bytes.
pub fn file(path: &str) -> Option<(&'static str, &'static [u8])> {
    FILES
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|&(_, content_type, bytes)| (content_type, bytes))
}
