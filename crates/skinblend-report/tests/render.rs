//! The renderer puts pixels where the geometry is, differs where methods differ, and is
//! identical where they agree.

use glam::Vec3;
use skinblend::fixtures;
use skinblend::Method;
use skinblend_report::color::ColorMap;
use skinblend_report::evidence::{compare_figure, skin_fixture, Coloring};
use skinblend_report::render::{render, Bounds, Camera, MeshView, BACKGROUND};
use skinblend_report::ReportError;

/// A render is deterministic, so equal geometry must give equal bytes: no tolerance.
const EXACT: usize = 0;

/// Pixels that must change between LBS and DQS at a 180° twist: the pinch at the middle of the
/// cylinder is tens of pixels wide in a 460-pixel-high panel, so far more than this many differ.
const MIN_DIFFERING_PIXELS: usize = 500;

fn fixture_render(
    fixture: &fixtures::Fixture,
    angle: f32,
    method: Method,
) -> skinblend_report::RgbImage {
    let centers = skinblend::evidence::fixture_rotation_centers(fixture).expect("centers");
    let positions = skin_fixture(fixture, angle, method, &centers).expect("skin");
    // Frame the rest pose for every method so that pixels compare.
    let bounds = Bounds::of(&fixture.positions)
        .expect("bounds")
        .union(Bounds {
            min: Vec3::splat(-1.0),
            max: Vec3::splat(2.0),
        });
    let camera = Camera::three_quarter(&bounds, 240, 240);
    render(
        &MeshView {
            name: fixture.name,
            positions: &positions,
            triangles: &fixture.triangles,
            colors: None,
        },
        &camera,
    )
    .expect("render")
}

#[test]
fn a_known_triangle_lands_where_the_camera_puts_it() {
    // A triangle in the plane through the origin facing the camera, big enough to cover the
    // center of the image and small enough to leave the corners empty.
    let bounds = Bounds {
        min: Vec3::splat(-1.0),
        max: Vec3::splat(1.0),
    };
    let camera = Camera::three_quarter(&bounds, 200, 100);
    let (r, u) = (camera.right * 0.5, camera.up * 0.5);
    let positions = [-r - u, r - u, u];
    let image = render(
        &MeshView {
            name: "triangle",
            positions: &positions,
            triangles: &[[0, 1, 2]],
            colors: None,
        },
        &camera,
    )
    .expect("render");
    assert_eq!((image.width(), image.height()), (200, 100));
    // The origin projects to the image center (the box's center is the target).
    let center = camera.project(Vec3::ZERO);
    assert!(
        (center.x - 100.0).abs() < 1e-3 && (center.y - 50.0).abs() < 1e-3,
        "{center}"
    );
    assert_ne!(
        image.get(100, 50),
        Some(BACKGROUND),
        "the center is covered"
    );
    // Inside near each projected corner (pulled 20% towards the centroid): covered.
    let centroid = (positions[0] + positions[1] + positions[2]) / 3.0;
    for p in positions {
        let q = camera.project(p + (centroid - p) * 0.2);
        assert_ne!(
            image.get(q.x as u32, q.y as u32),
            Some(BACKGROUND),
            "inside at {q}"
        );
    }
    // Outside: the image corners, and just above the apex.
    for (x, y) in [(0, 0), (199, 0), (0, 99), (199, 99)] {
        assert_eq!(
            image.get(x, y),
            Some(BACKGROUND),
            "corner ({x}, {y}) is empty"
        );
    }
    let above_apex = camera.project(u * 1.3);
    assert_eq!(
        image.get(above_apex.x as u32, above_apex.y as u32),
        Some(BACKGROUND)
    );
    // Covered area: the triangle's projected area in pixels, within its antialiased rim.
    let [a, b, c] = positions.map(|p| camera.project(p));
    let area = ((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)).abs() / 2.0;
    let covered = image.count_not(BACKGROUND) as f32;
    let perimeter = a.distance(b) + b.distance(c) + c.distance(a);
    assert!(
        (covered - area).abs() <= perimeter,
        "covered {covered}, area {area}"
    );
}

#[test]
fn renders_are_not_empty() {
    for fixture in [
        fixtures::twist_fine(),
        fixtures::bend_fine(),
        fixtures::shear_cap(),
    ] {
        for method in skinblend::Method::ALL {
            let image = fixture_render(&fixture, 90.0, method);
            assert!(
                image.count_not(BACKGROUND) > 1000,
                "{} {method:?} drew {} pixels",
                fixture.name,
                image.count_not(BACKGROUND)
            );
        }
    }
}

#[test]
fn methods_render_identically_in_the_bind_pose() {
    let fixture = fixtures::twist_fine();
    let lbs = fixture_render(&fixture, 0.0, Method::Linear);
    for method in skinblend::Method::ALL {
        let other = fixture_render(&fixture, 0.0, method);
        assert_eq!(lbs.count_differing(&other), Some(EXACT), "{method:?}");
    }
}

#[test]
fn methods_render_differently_where_the_geometry_differs() {
    let fixture = fixtures::twist_fine();
    let lbs = fixture_render(&fixture, 180.0, Method::Linear);
    let dqs = fixture_render(&fixture, 180.0, Method::DualQuaternion);
    let differing = lbs.count_differing(&dqs).expect("same size");
    assert!(
        differing >= MIN_DIFFERING_PIXELS,
        "{differing} pixels differ"
    );
}

#[test]
fn comparison_figures_carry_a_legend_and_one_panel_per_method() {
    let fixture = fixtures::twist_fine();
    let centers = skinblend::evidence::fixture_rotation_centers(&fixture).expect("centers");
    let posed: Vec<(String, Vec<Vec3>)> = skinblend::Method::ALL
        .iter()
        .map(|&m| {
            (
                m.name().to_owned(),
                skin_fixture(&fixture, 90.0, m, &centers).expect("skin"),
            )
        })
        .collect();
    let with_legend = compare_figure(
        "t",
        &fixture.positions,
        &fixture.triangles,
        &posed,
        Coloring::EdgeStrain,
        0.05,
    )
    .expect("figure");
    let without = compare_figure(
        "t",
        &fixture.positions,
        &fixture.triangles,
        &posed,
        Coloring::None,
        0.05,
    )
    .expect("figure");
    assert!(
        with_legend.height() > without.height(),
        "the legend adds a band"
    );
    assert!(with_legend.width() > 2 * 160, "panels side by side");
}

#[test]
fn colour_maps_clamp_and_centre() {
    let map = ColorMap::diverging(0.25, "x", 100.0);
    assert_eq!(map.color(-1.0), map.color(-0.25));
    assert_eq!(map.color(1.0), map.color(0.25));
    assert_ne!(map.color(-0.25), map.color(0.25));
    assert_eq!(map.color(f32::NAN), map.color(0.0));
}

#[test]
fn bad_meshes_are_errors_not_panics() {
    let camera = Camera::three_quarter(
        &Bounds {
            min: Vec3::ZERO,
            max: Vec3::ONE,
        },
        10,
        10,
    );
    let positions = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let out_of_range = render(
        &MeshView {
            name: "m",
            positions: &positions,
            triangles: &[[0, 1, 3]],
            colors: None,
        },
        &camera,
    );
    assert!(matches!(
        out_of_range,
        Err(ReportError::VertexIndexOutOfRange {
            triangle: 0,
            vertex: 3,
            ..
        })
    ));
    let nan = [Vec3::ZERO, Vec3::X, Vec3::new(f32::NAN, 0.0, 0.0)];
    let non_finite = render(
        &MeshView {
            name: "m",
            positions: &nan,
            triangles: &[[0, 1, 2]],
            colors: None,
        },
        &camera,
    );
    assert!(matches!(
        non_finite,
        Err(ReportError::NonFinite { vertex: 2, .. })
    ));
    let map = ColorMap::sequential(1.0, "x", 1.0);
    let short = render(
        &MeshView {
            name: "m",
            positions: &positions,
            triangles: &[[0, 1, 2]],
            colors: Some((&[0.0], &map)),
        },
        &camera,
    );
    assert!(matches!(
        short,
        Err(ReportError::AttributeLength {
            expected: 3,
            found: 1,
            ..
        })
    ));
    let zero = Camera { width: 0, ..camera };
    assert!(matches!(
        render(
            &MeshView {
                name: "m",
                positions: &positions,
                triangles: &[[0, 1, 2]],
                colors: None
            },
            &zero
        ),
        Err(ReportError::ImageSize { .. })
    ));
}
