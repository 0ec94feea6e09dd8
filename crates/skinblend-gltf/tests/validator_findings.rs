//! Files the Khronos glTF-Validator refuses and the loader once accepted, found by the
//! differential test (`crates/skinblend-cli/tests/differential.rs`, which also checks that the
//! validator reports an error on each). Each is a small variant of the generated two-joint strip
//! in `tests/data/validator/`, refused with an error that names the place.

use std::path::PathBuf;

use skinblend_gltf::Model;

/// Each regression file and text its error must contain.
const REFUSED: &[(&str, &str)] = &[
    ("min-mismatch", "accessors[0].max[0]"),
    ("position-without-bounds", "attributes[\"POSITION\"].min"),
    ("input-without-bounds", "key time accessors must declare"),
    ("empty-scene", "scenes[0].nodes: is empty"),
    ("required-not-used", "not listed in extensionsUsed"),
    ("asset-version-1", "asset.version"),
    ("matrix-and-trs", "has both matrix and translation"),
    ("duplicate-channel-target", "already animated"),
    ("animated-matrix-node", "given by a matrix"),
    ("scene-lists-child", "is not a root"),
    ("skeleton-not-ancestor", "skins[0].skeleton"),
    (
        "misaligned-accessor",
        "not a multiple of the component size",
    ),
    ("texcoord-gap", "numbered from 0"),
    (
        "unknown-attribute",
        "is not an attribute of the specification",
    ),
    ("skin-without-mesh", "no mesh to skin"),
    (
        "view-past-declared-buffer",
        "run past the end of buffers[0]",
    ),
    ("zero-count", "accessors[2].count: is 0"),
    ("stride-too-large", "bufferViews[2].byteStride"),
    ("rotation-not-unit", "not a unit quaternion"),
    ("more-inverse-binds", "matrices for 1 joints"),
    ("strided-indices", "which this use does not allow"),
    (
        "shared-view-without-stride",
        "required when vertex accessors share a view",
    ),
    ("primitive-restart", "primitive restart value"),
];

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/validator/{name}.glb"))
}

#[test]
fn every_validator_finding_is_refused_with_its_place() {
    for (name, expected) in REFUSED {
        match Model::open(data(name)) {
            Ok(_) => panic!("{name}: loaded, but the validator refuses it"),
            Err(error) => {
                let message = error.to_string();
                assert!(
                    message.contains(expected),
                    "{name}: expected {expected:?} in: {message}"
                );
            }
        }
    }
}

/// The specification says a channel without a target node is ignored; the validator accepts
/// it, and so must the loader (the `gltf` crate alone refuses it).
#[test]
fn a_channel_without_a_target_node_is_ignored() {
    let model = Model::open(data("accepted-channel-without-node")).unwrap();
    assert_eq!(model.animations()[0].channels.len(), 1);
    assert_eq!(model.animations()[0].channels[0].node, 1);
}
