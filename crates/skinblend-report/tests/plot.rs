//! Plots where two series coincide (DQS and CoR on the twist; "DQS vs LBS" and "CoR vs LBS" in
//! `compare` on a twist): the later line is drawn dashed over the earlier one, so both show,
//! and the legend says they coincide.

use skinblend_report::plot::{draw, series_styles, LinePlot, Marker, Series, COINCIDENT_SHARE};
use skinblend_report::RgbImage;

const RED: [u8; 3] = [230, 0, 0];
const BLUE: [u8; 3] = [0, 0, 230];

fn series(name: &str, color: [u8; 3], points: Vec<(f64, f64)>) -> Series {
    Series {
        name: name.to_owned(),
        color,
        marker: Marker::None,
        points,
    }
}

fn plot(series: Vec<Series>) -> LinePlot {
    LinePlot {
        title: "coinciding".to_owned(),
        x_label: "x".to_owned(),
        y_label: "y".to_owned(),
        series,
        reference_y: None,
        y_include: None,
        legend_lower_left: false,
    }
}

fn curve(offset: f64) -> Vec<(f64, f64)> {
    (0..=36)
        .map(|i| {
            let x = f64::from(i) * 5.0;
            (x, 100.0 * (x.to_radians() / 2.0).cos().abs() + offset)
        })
        .collect()
}

/// Pixels within a few levels of `color` (the line's own colour, not its antialiased edge).
fn count_color(image: &RgbImage, color: [u8; 3]) -> usize {
    image
        .pixels()
        .chunks_exact(3)
        .filter(|p| (0..3).all(|c| p[c].abs_diff(color[c]) <= 8))
        .count()
}

/// The red line's pixels that must show when blue is drawn over it: far more than the legend's
/// 22-pixel sample of it (66 pixels with its thickness and antialiasing: all that showed when
/// blue was drawn solid over it) and far fewer than the whole line (about 1400).
const HIDDEN_LINE_SHOWS_ABOVE: usize = 200;

#[test]
fn a_series_drawn_over_an_identical_one_leaves_it_visible() {
    let image = draw(&plot(vec![
        series("DQS", RED, curve(0.0)),
        series("CoR", BLUE, curve(0.0)),
    ]))
    .expect("draw");
    let red = count_color(&image, RED);
    let blue = count_color(&image, BLUE);
    assert!(
        red > HIDDEN_LINE_SHOWS_ABOVE,
        "the earlier line shows in {red} pixels only (the later one {blue})"
    );
    assert!(blue > HIDDEN_LINE_SHOWS_ABOVE, "the dashed line: {blue}");
    // Apart, both are solid: the earlier line is whole.
    let apart = draw(&plot(vec![
        series("DQS", RED, curve(0.0)),
        series("CoR", BLUE, curve(30.0)),
    ]))
    .expect("draw");
    assert!(count_color(&apart, RED) > red, "solid when apart");
}

#[test]
fn coinciding_series_are_dashed_and_the_legend_says_so() {
    // The drawn y span here is about 175 (-50 to 100 and 8% on either side): 0.1 apart is
    // within COINCIDENT_SHARE of it, 5 apart is not.
    const { assert!(0.1 < COINCIDENT_SHARE * 150.0 && 5.0 > COINCIDENT_SHARE * 200.0) };
    let (close, far) = (0.1, 5.0);
    let styles = series_styles(&plot(vec![
        series("LBS", [0, 0, 0], curve(-50.0)),
        series("DQS", RED, curve(0.0)),
        series("CoR", BLUE, curve(close)),
        series("other", [0, 200, 0], curve(far)),
    ]));
    let dashed: Vec<bool> = styles.iter().map(|s| s.dashed()).collect();
    assert_eq!(dashed, [false, false, true, false], "{styles:?}");
    assert_eq!(styles[2].coincides_with, Some(1));
    assert_eq!(styles[2].label, "CoR (dashed: coincides with DQS)");
    assert_eq!(styles[1].label, "DQS");
    // Different x values never coincide, nor do series without finite points.
    let shifted: Vec<(f64, f64)> = curve(0.0).iter().map(|&(x, y)| (x + 1.0, y)).collect();
    let styles = series_styles(&plot(vec![
        series("a", RED, curve(0.0)),
        series("b", BLUE, shifted),
        series("c", BLUE, vec![(0.0, f64::NAN)]),
        series("d", BLUE, vec![(1.0, f64::NAN)]),
    ]));
    assert!(styles.iter().all(|s| !s.dashed()), "{styles:?}");
}
