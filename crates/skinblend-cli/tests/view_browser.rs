//! `skinblend view`'s page in headless Chromium (`crates/skinblend-cli/web/viewer/check.mjs`
//! and `recover.mjs`): no console error, the 180° twist collapsed by LBS and not by DQS in the
//! screenshot's pixels, the time slider and the colour map changing the picture, a sample
//! model, an error after start shown on the page and in the terminal as the CLI's line, and
//! the page recovering from failed requests (and backing off while they fail). The server over
//! plain HTTP: view_server.rs.
//!
//! Needs node with `tools/node_modules/playwright-core` (`npm ci --prefix tools`) and Chromium,
//! the CesiumMan test the sample models (`../shared/models`): each skips with a message when
//! they are missing, except under `CI=true`, where it fails.

use std::path::Path;
use std::process::Stdio;

#[path = "view/harness.rs"]
mod harness;
mod support;

use harness::{rigs, Server};
use skinblend_testkit::{models_dir, repository_root, PageDriver};
use support::command;

/// What check.mjs saw (OUT/result.json), asserting only that it could drive the browser;
/// `map`: the colour map of OUT/colored.png.
fn run_check(
    driver: &PageDriver,
    server: &Server,
    out: &Path,
    time_s: &str,
    other_time_s: f32,
    (play_s, map): (f32, &str),
) -> serde_json::Value {
    let status = driver
        .node("crates/skinblend-cli/web/viewer/check.mjs")
        .arg(&server.url)
        .arg(out)
        .arg(time_s)
        .arg(other_time_s.to_string())
        .arg(play_s.to_string())
        .arg(map)
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
    driver: &PageDriver,
    server: &Server,
    out: &Path,
    time_s: f32,
    other_time_s: f32,
    (play_s, map): (f32, &str),
) -> serde_json::Value {
    let result = run_check(
        driver,
        server,
        out,
        &time_s.to_string(),
        other_time_s,
        (play_s, map),
    );
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
/// Blended at 180° with its ring at blend ½: the ring's points lie halfway between LBS's (on
/// the axis) and DQS's (on the cylinder), half the radius, so its width is about half the
/// body's. It must clear each end by a tenth of the body's width, far more than the pixel or
/// two of antialiasing, far less than the quarter that separates it from either.
const BETWEEN_MARGIN: f64 = 0.1;

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
    // LBS, DQS, CoR and blended: every method the rig can run (its file carries blend values).
    const PANELS: usize = 4;
    let Some(driver) = PageDriver::or_skip("the viewer's browser test") else {
        return;
    };
    let dir = rigs("browser-twist");
    let server = Server::start(&dir.join("twist_fine.glb"));
    let out = dir.join("page");
    // 2 s is the rig's 180° (90° per second), 1 s its 90°.
    check_page(&driver, &server, &out, 2.0, 1.0, (1.0, "area"));
    let at_180 = Picture::open(&out.join("first.png"));
    let at_90 = Picture::open(&out.join("second.png"));
    let (lbs, lbs_ring, lbs_body) = ring_width_ratio(&row_widths(&at_180, 0, PANELS));
    let (dqs, dqs_ring, dqs_body) = ring_width_ratio(&row_widths(&at_180, 1, PANELS));
    let (cor, _, _) = ring_width_ratio(&row_widths(&at_180, 2, PANELS));
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
}

/// The fourth view: blended with DQS on the twisting joint (`--dq-joints joint1`, the rule the
/// rig file's own values follow, given again to take the flag's path), whose ring, weighted
/// half and half, takes half of each method, so that at 180° its width lies between LBS's
/// collapsed ring and DQS's round one; and the blend values' colour map.
fn browser_shows_blended_between_lbs_and_dqs() {
    let Some(driver) = PageDriver::or_skip("the viewer's browser test") else {
        return;
    };
    let dir = rigs("browser-blended");
    let server = Server::start_with_args(
        &dir.join("twist_fine.glb"),
        &["--dq-joints", "joint1"],
        std::process::Stdio::inherit(),
    );
    let out = dir.join("page");
    check_page(&driver, &server, &out, 2.0, 1.0, (1.0, "blend"));
    let at_180 = Picture::open(&out.join("first.png"));
    let ratio = |panel| ring_width_ratio(&row_widths(&at_180, panel, 4)).0;
    let (lbs, dqs, blended) = (ratio(0), ratio(1), ratio(3));
    eprintln!("180°: ring ÷ body width LBS {lbs:.3}, DQS {dqs:.3}, blended {blended:.3}");
    assert!(
        lbs + BETWEEN_MARGIN < blended && blended + BETWEEN_MARGIN < dqs,
        "blended's ring {blended:.3} is not between LBS's {lbs:.3} and DQS's {dqs:.3}"
    );
    let colored = Picture::open(&out.join("colored.png"));
    let recolored = changed_share(&at_180, &colored);
    assert!(
        recolored > POSE_CHANGED_SHARE,
        "the blend values' map changed nothing: {recolored}"
    );
    drop(server);
}

fn browser_plays_a_sample_model() {
    let Some(driver) = PageDriver::or_skip("the viewer's browser test") else {
        return;
    };
    let Some(models) = models_dir() else {
        return;
    };
    let model = models.join("CesiumMan/CesiumMan.glb");
    let server = Server::start(&model);
    // Kept in target/tmp: docs/reports.md's picture comes from here (page.png).
    let out = repository_root().join("target/tmp/view-CesiumMan");
    let _ = std::fs::remove_dir_all(&out);
    let result = check_page(&driver, &server, &out, 0.5, 1.5, (3.0, "area"));
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
    let Some(driver) = PageDriver::or_skip("the viewer's browser test") else {
        return;
    };
    let dir = rigs("browser-error");
    let file = dir.join("twist_coarse.glb");
    let log = dir.join("stderr.txt");
    let server = Server::start_with_stderr(
        &file,
        Stdio::from(std::fs::File::create(&log).expect("log file")),
    );
    // The page asks for the pose at ?time=NaN: the server cannot pose it.
    let result = run_check(
        &driver,
        &server,
        &dir.join("page"),
        "NaN",
        1.0,
        (0.0, "area"),
    );
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
}

/// Pose requests per second the page may send while every one fails, measured from 2 s after
/// the failures start (its wait doubles from 0.25 s to 4 s: about 0.5 per second by then; the
/// old page sent one per frame).
const FAILING_REQUESTS_PER_SECOND: f64 = 3.0;

fn browser_recovers_after_failed_poses_and_backs_off_while_they_fail() {
    let Some(driver) = PageDriver::or_skip("the viewer's browser test") else {
        return;
    };
    let dir = rigs("browser-recover");
    let server = Server::start_with_stderr(&dir.join("twist_coarse.glb"), Stdio::null());
    let out = dir.join("page");
    let fail_s = 6.0;
    let status = driver
        .node("crates/skinblend-cli/web/viewer/recover.mjs")
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
}

skinblend_testkit::test_main!(
    browser_shows_the_candy_wrapper_in_lbs_and_not_in_dqs,
    browser_shows_blended_between_lbs_and_dqs,
    browser_plays_a_sample_model,
    an_error_after_start_is_the_cli_line_on_the_page_and_in_the_terminal,
    browser_recovers_after_failed_poses_and_backs_off_while_they_fail,
);
