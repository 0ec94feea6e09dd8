//! Limits: hostile counts are refused before memory is allocated for them, files over the size
//! limit before they are read, and URIs cannot reach outside the glTF file's folder.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use serde_json::json;
use skinblend_gltf::{Model, MAX_FILE_BYTES};

/// Records the largest single allocation, so a test can show that a declared count did not
/// turn into an allocation of that size.
struct LargestAllocation;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers every operation to the system allocator; only records sizes.
unsafe impl GlobalAlloc for LargestAllocation {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: LargestAllocation = LargestAllocation;

/// No allocation while loading a small hostile file may exceed this: the file is a few hundred
/// bytes, its real data a few kilobytes; 16 MiB is far above that and far below what the
/// declared counts (billions of elements, gigabytes) would take.
const SMALL_FILE_ALLOCATION_BOUND: usize = 16 << 20;

fn temp_dir(name: &str) -> skinblend_testkit::ScratchDir {
    skinblend_testkit::ScratchDir::new(&format!("limits-{name}"))
}

/// Loads bytes that must fail, and checks that no allocation came near the declared size.
fn refused_without_allocating(bytes: &[u8]) -> String {
    // Other tests run on other threads and allocate little; the bound is far above them.
    LARGEST.store(0, Ordering::SeqCst);
    let Err(error) = Model::from_bytes(bytes, None) else {
        panic!("a hostile file loaded");
    };
    let error = error.to_string();
    let largest = LARGEST.load(Ordering::SeqCst);
    assert!(
        largest < SMALL_FILE_ALLOCATION_BOUND,
        "allocated {largest} bytes before refusing: {error}"
    );
    error
}

#[test]
fn a_huge_count_in_a_buffer_view_is_refused_before_allocating() {
    let (mut b, ..) = strip(3);
    // POSITION (accessor 0): four billion VEC3 would be 96 GB decoded.
    b.json["accessors"][0]["count"] = json!(4_000_000_000u64);
    let error = refused_without_allocating(&b.glb());
    assert!(
        error.contains("accessors[0].byteOffset") && error.contains("4000000000 elements"),
        "{error}"
    );
}

#[test]
fn a_huge_count_without_a_buffer_view_is_refused_before_allocating() {
    let (mut b, ..) = strip(3);
    // A sparse accessor has no buffer to bound its count: the limit does.
    let accessor = b.add(
        "accessors",
        json!({ "componentType": FLOAT, "type": "VEC3", "count": 1_000_000_000u64,
                "sparse": { "count": 1, "indices": { "bufferView": 0, "componentType": UNSIGNED_BYTE },
                            "values": { "bufferView": 0 } } }),
    );
    b.json["meshes"][0]["primitives"][0]["targets"] = json!([{ "POSITION": accessor }]);
    let error = refused_without_allocating(&b.glb());
    assert!(
        error.contains(&format!("accessors[{accessor}].count")) && error.contains("limit"),
        "{error}"
    );
}

#[test]
fn a_huge_glb_chunk_length_is_refused_before_allocating() {
    let (b, ..) = strip(3);
    let mut bytes = b.glb();
    // The BIN chunk's length field, after the header (12) and the JSON chunk.
    let json_length = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let bin_length_at = 12 + 8 + json_length;
    bytes[bin_length_at..bin_length_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let error = refused_without_allocating(&bytes);
    assert!(error.contains("GLB byte"), "{error}");
}

/// Writes the strip as `model.gltf` with its buffer in `uri` (relative to the folder), and the
/// buffer itself at `bin_at`.
fn gltf_with_buffer_uri(dir: &Path, uri: &str, bin_at: &Path) -> PathBuf {
    let (b, ..) = strip(3);
    let mut json = b.json.clone();
    json["buffers"] = json!([{ "byteLength": b.bin.len(), "uri": uri }]);
    if let Some(parent) = bin_at.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(bin_at, &b.bin).unwrap();
    let file = dir.join("model.gltf");
    std::fs::write(&file, serde_json::to_vec(&json).unwrap()).unwrap();
    file
}

#[test]
fn buffer_uris_inside_the_folder_load() {
    let root = temp_dir("inside");
    let folder = root.join("asset");
    for uri in [
        "data.bin",
        "sub/data.bin",
        "sub/../data2.bin",
        "sub%2Fdata3.bin",
    ] {
        let target = match uri {
            "sub/../data2.bin" => folder.join("data2.bin"),
            "sub%2Fdata3.bin" => folder.join("sub/data3.bin"),
            other => folder.join(other),
        };
        std::fs::create_dir_all(folder.join("sub")).unwrap();
        let file = gltf_with_buffer_uri(&folder, uri, &target);
        Model::open(&file).unwrap_or_else(|e| panic!("{uri}: {e}"));
    }
}

#[test]
fn buffer_uris_cannot_escape_the_folder() {
    let root = temp_dir("escape");
    let folder = root.join("asset");
    std::fs::create_dir_all(&folder).unwrap();
    let secret = root.join("secret.bin");
    let secret_text = secret.to_str().unwrap().to_owned();
    let cases = [
        ("../secret.bin", "leads outside"),
        ("%2E%2E/secret.bin", "leads outside"),
        ("sub/../../secret.bin", "leads outside"),
        (secret_text.as_str(), "absolute path"),
        ("link/secret.bin", "leads outside"),
    ];
    #[cfg(unix)]
    std::os::unix::fs::symlink(&root, folder.join("link")).unwrap();
    std::fs::create_dir_all(folder.join("sub")).unwrap();
    for (uri, why) in cases {
        if uri.starts_with("link") && !cfg!(unix) {
            continue;
        }
        let file = gltf_with_buffer_uri(&folder, uri, &secret);
        let error = Model::open(&file)
            .err()
            .unwrap_or_else(|| panic!("{uri} was read"))
            .to_string();
        assert!(
            error.contains("buffers[0].uri") && error.contains(why),
            "{uri}: {error}"
        );
    }
    // Without a folder (bytes from memory), no file is read at all.
    let (b, ..) = strip(3);
    let mut json = b.json.clone();
    json["buffers"] = json!([{ "byteLength": b.bin.len(), "uri": "data.bin" }]);
    let error = Model::from_bytes(&serde_json::to_vec(&json).unwrap(), None)
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("without its folder"), "{error}");
}

#[test]
fn files_over_the_size_limit_are_refused_before_reading() {
    let dir = temp_dir("size");
    // Sparse files: they take no disk space, and reading one would take minutes and gigabytes.
    let big = dir.join("big.glb");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    LARGEST.store(0, Ordering::SeqCst);
    let error = Model::open(&big).err().unwrap().to_string();
    assert!(
        error.contains("big.glb") && error.contains("over the limit"),
        "{error}"
    );
    assert!(LARGEST.load(Ordering::SeqCst) < SMALL_FILE_ALLOCATION_BOUND);
    // The same for an external buffer.
    let file = gltf_with_buffer_uri(&dir, "big.bin", &dir.join("big.bin"));
    std::fs::File::options()
        .write(true)
        .open(dir.join("big.bin"))
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    let error = Model::open(&file).err().unwrap().to_string();
    assert!(
        error.contains("big.bin") && error.contains("over the limit"),
        "{error}"
    );
}
