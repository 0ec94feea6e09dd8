//! CoR centers as data: saving and loading them to the bit, the file format's refusals, the
//! centers' contract, and one test per error the precomputation and CoR skinning add.

mod common;

use common::cor::*;
use glam::Vec3;
use skinblend::cor::{
    decode_rotation_centers, encode_rotation_centers, has_rotation_center, rotation_centers,
    CorOptions, COR_FORMAT_VERSION, NO_ROTATION_CENTER,
};
use skinblend::fixtures::{self};
use skinblend::{
    prepare, skin, skin_into, Influences, Method, RunOptions, SkinError, SkinInput, SkinOutputs,
};

// ---------------------------------------------------------------------------------------------
// Saving and loading.

#[test]
fn save_then_load_is_exact_to_the_bit() {
    let fixture = fixtures::shear_cap();
    let mut centers = centers_of(&fixture, &CorOptions::default()).centers;
    centers.push(Vec3::new(-0.0, f32::MIN_POSITIVE, f32::MAX));
    let bytes = encode_rotation_centers(&centers).unwrap();
    assert_eq!(bytes.len(), 28 + 12 * centers.len());
    assert_eq!(&bytes[..8], b"SKBLCOR\0");
    let loaded = decode_rotation_centers(&bytes).unwrap();
    assert_eq!(bits(&loaded), bits(&centers));
    assert!(loaded.iter().any(|c| !has_rotation_center(*c)));
    // Nothing at all round-trips too.
    assert_eq!(
        decode_rotation_centers(&encode_rotation_centers(&[]).unwrap()),
        Ok(vec![])
    );
}

#[test]
fn cor_data_magic() {
    let mut bytes = encode_rotation_centers(&[Vec3::ONE]).unwrap();
    bytes[0] = b'X';
    assert_eq!(
        decode_rotation_centers(&bytes),
        Err(SkinError::CorDataMagic {
            found: *b"XKBLCOR\0"
        })
    );
}

#[test]
fn cor_data_version() {
    let mut bytes = encode_rotation_centers(&[Vec3::ONE]).unwrap();
    bytes[8..12].copy_from_slice(&7u32.to_le_bytes());
    assert_eq!(
        decode_rotation_centers(&bytes),
        Err(SkinError::CorDataVersion {
            found: 7,
            supported: COR_FORMAT_VERSION
        })
    );
}

#[test]
fn cor_data_length_on_every_truncation_and_on_trailing_bytes() {
    let bytes = encode_rotation_centers(&[Vec3::ONE, NO_ROTATION_CENTER, Vec3::X]).unwrap();
    for len in 0..bytes.len() {
        let error = decode_rotation_centers(&bytes[..len]).unwrap_err();
        let expected = if len < 20 { 28 } else { bytes.len() };
        assert_eq!(
            error,
            SkinError::CorDataLength {
                expected,
                found: len
            },
            "truncated to {len}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        decode_rotation_centers(&longer),
        Err(SkinError::CorDataLength {
            expected: bytes.len(),
            found: bytes.len() + 1
        })
    );
    // A vertex count too large for memory is a length error, not an overflow.
    let mut huge = bytes;
    huge[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        decode_rotation_centers(&huge),
        Err(SkinError::CorDataLength { .. })
    ));
}

#[test]
fn cor_data_checksum() {
    let bytes = encode_rotation_centers(&[Vec3::ONE, Vec3::Y]).unwrap();
    for at in 20..bytes.len() {
        let mut corrupt = bytes.clone();
        corrupt[at] ^= 0x10;
        assert!(
            matches!(
                decode_rotation_centers(&corrupt),
                Err(SkinError::CorDataChecksum { stored, computed }) if stored != computed
            ),
            "byte {at} flipped"
        );
    }
}

#[test]
fn rotation_centers_must_be_finite_or_all_nan() {
    let bad = Vec3::new(f32::NAN, 0.0, 0.0);
    assert_eq!(
        encode_rotation_centers(&[Vec3::ONE, bad]),
        Err(SkinError::NonFiniteAttribute {
            attribute: "rotation_centers",
            vertex: 1
        })
    );
    // A stored infinity with a valid checksum is still refused on load.
    let mut bytes = encode_rotation_centers(&[Vec3::ONE]).unwrap();
    bytes[20..24].copy_from_slice(&f32::INFINITY.to_bits().to_le_bytes());
    let body = bytes.len() - 8;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &bytes[..body] {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    bytes[body..].copy_from_slice(&hash.to_le_bytes());
    assert_eq!(
        decode_rotation_centers(&bytes),
        Err(SkinError::NonFiniteAttribute {
            attribute: "rotation_centers",
            vertex: 0
        })
    );
    let influences = Influences::new(1, vec![0, 0], vec![1.0, 1.0], 1).unwrap();
    let positions = [Vec3::ZERO, Vec3::ONE];
    let input = SkinInput::new(&positions, None, None, &influences).unwrap();
    assert_eq!(
        input
            .with_rotation_centers(&[Vec3::ZERO, Vec3::new(0.0, f32::INFINITY, 0.0)])
            .unwrap_err(),
        SkinError::NonFiniteAttribute {
            attribute: "rotation_centers",
            vertex: 1
        }
    );
    assert_eq!(
        input.with_rotation_centers(&[Vec3::ZERO]).unwrap_err(),
        SkinError::AttributeLength {
            attribute: "rotation_centers",
            expected: 2,
            found: 1
        }
    );
    assert!(input
        .with_rotation_centers(&[Vec3::ZERO, NO_ROTATION_CENTER])
        .is_ok());
}

// ---------------------------------------------------------------------------------------------
// Errors of the precomputation and of skinning.

#[test]
fn missing_rotation_centers() {
    let fixture = fixtures::twist_coarse();
    let input = SkinInput::new(&fixture.positions, None, None, &fixture.influences).unwrap();
    let expected = SkinError::MissingRotationCenters { vertex_count: 60 };
    assert_eq!(
        skin(
            &input,
            &fixture.palette(90.0),
            None,
            &options(Method::CenterOfRotation)
        ),
        Err(expected.clone())
    );
    let prepared = prepare(
        &fixture.palette(90.0),
        None,
        &options(Method::CenterOfRotation),
    )
    .unwrap();
    let mut out = vec![Vec3::ZERO; 60];
    assert_eq!(
        skin_into(
            &input,
            &prepared,
            SkinOutputs::positions(&mut out),
            RunOptions::default()
        ),
        Err(expected)
    );
}

#[test]
fn invalid_cor_option() {
    let fixture = fixtures::twist_coarse();
    let cases = [
        (
            "sigma",
            CorOptions {
                sigma: 0.0,
                ..CorOptions::default()
            },
            0.0,
        ),
        (
            "sigma",
            CorOptions {
                sigma: -1.0,
                ..CorOptions::default()
            },
            -1.0,
        ),
        (
            "subdivision_epsilon",
            CorOptions {
                subdivision_epsilon: 1e-3,
                ..CorOptions::default()
            },
            1e-3,
        ),
        (
            "weight_quantum",
            CorOptions {
                weight_quantum: -0.5,
                ..CorOptions::default()
            },
            -0.5,
        ),
    ];
    for (option, cor_options, value) in cases {
        assert_eq!(
            rotation_centers(
                &fixture.positions,
                &fixture.triangles,
                &fixture.influences,
                &cor_options
            ),
            Err(SkinError::InvalidCorOption { option, value }),
        );
    }
    let nan = CorOptions {
        subdivision_epsilon: f32::NAN,
        ..CorOptions::default()
    };
    assert!(matches!(
        rotation_centers(&fixture.positions, &fixture.triangles, &fixture.influences, &nan),
        Err(SkinError::InvalidCorOption { option: "subdivision_epsilon", value }) if value.is_nan()
    ));
}

#[test]
fn precomputation_names_bad_positions_and_triangles() {
    let fixture = fixtures::twist_coarse();
    let options = CorOptions::default();
    assert_eq!(
        rotation_centers(
            &fixture.positions[1..],
            &fixture.triangles,
            &fixture.influences,
            &options
        ),
        Err(SkinError::AttributeLength {
            attribute: "positions",
            expected: 60,
            found: 59
        })
    );
    let mut positions = fixture.positions.clone();
    positions[7].y = f32::NAN;
    assert_eq!(
        rotation_centers(
            &positions,
            &fixture.triangles,
            &fixture.influences,
            &options
        ),
        Err(SkinError::NonFiniteAttribute {
            attribute: "positions",
            vertex: 7
        })
    );
    let mut triangles = fixture.triangles.clone();
    triangles[5][2] = 60;
    assert_eq!(
        rotation_centers(
            &fixture.positions,
            &triangles,
            &fixture.influences,
            &options
        ),
        Err(SkinError::VertexIndexOutOfRange {
            element: "triangles",
            index: 5,
            vertex: 60,
            vertex_count: 60
        })
    );
}
