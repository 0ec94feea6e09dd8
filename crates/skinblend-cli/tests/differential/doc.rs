//! The differential test's documents (a glTF JSON and its buffer, mutated in place) and its
//! deterministic random numbers.

use serde_json::Value;

pub struct Rng(u64);

impl Rng {
    /// The generator of mutant `index` of a run with `seed`.
    pub fn new(seed: u64, index: u64) -> Self {
        let mut rng = Self(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        rng.next();
        rng
    }

    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (`None` when `n` is 0).
    pub fn below(&mut self, n: usize) -> Option<usize> {
        (n > 0).then(|| (self.next() % n as u64) as usize)
    }

    /// One of `items`, which must not be empty.
    pub fn choose<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len()).expect("non-empty")].clone()
    }
}

// ---------------------------------------------------------------------------------------------
// A document to mutate: the JSON and buffer 0 (the GLB BIN chunk).

#[derive(Clone)]
pub struct Doc {
    /// The glTF JSON.
    pub json: Value,
    /// Buffer 0.
    pub bin: Vec<u8>,
}

fn base64_decode(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut accumulator, mut bits) = (0u32, 0u32);
    for byte in text.trim_end_matches('=').bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64"),
        };
        accumulator = (accumulator << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((accumulator >> bits) as u8);
            accumulator &= (1 << bits) - 1;
        }
    }
    out
}

impl Doc {
    /// A valid source file: a GLB, or a .gltf whose one buffer is a data: URI (made the BIN
    /// chunk, so that every mutant is one self-contained GLB).
    pub fn parse(bytes: &[u8]) -> Self {
        if let Some((json, bin)) = skinblend_testkit::glb_chunks(bytes) {
            return Self {
                json: serde_json::from_slice(json).unwrap(),
                bin: bin.to_vec(),
            };
        }
        let mut json: Value = serde_json::from_slice(bytes).unwrap();
        let uri = json["buffers"][0]["uri"]
            .as_str()
            .expect("one data: buffer");
        let bin = base64_decode(uri.split_once(',').expect("data: URI").1);
        json["buffers"][0]
            .as_object_mut()
            .unwrap()
            .remove("uri")
            .unwrap();
        Self { json, bin }
    }

    /// The document as one GLB file.
    pub fn glb(&self) -> Vec<u8> {
        skinblend_testkit::glb_bytes(&serde_json::to_vec(&self.json).unwrap(), &self.bin)
    }

    /// The length of the top-level array `key` (0 when absent).
    pub fn len(&self, key: &str) -> usize {
        self.json
            .get(key)
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    }

    /// A random index into the top-level array `key`.
    pub fn pick(&self, rng: &mut Rng, key: &str) -> Option<usize> {
        rng.below(self.len(key))
    }

    /// `value[key]` as an index.
    pub fn uint(value: &Value, key: &str) -> Option<usize> {
        value.get(key).and_then(Value::as_u64).map(|v| v as usize)
    }

    /// Accessors used as `what` (`"POSITION"`, `"JOINTS_0"`, `"WEIGHTS_0"`, `"indices"`,
    /// `"inverseBindMatrices"`, `"input"`, `"output"`).
    pub fn accessors_used_as(&self, what: &str) -> Vec<usize> {
        let mut found = Vec::new();
        let empty = Vec::new();
        let list = |key: &str| {
            self.json
                .get(key)
                .and_then(Value::as_array)
                .unwrap_or(&empty)
        };
        match what {
            "inverseBindMatrices" => {
                for skin in list("skins") {
                    found.extend(Self::uint(skin, what));
                }
            }
            "input" | "output" => {
                for animation in list("animations") {
                    for sampler in animation["samplers"].as_array().unwrap_or(&empty) {
                        found.extend(Self::uint(sampler, what));
                    }
                }
            }
            _ => {
                for mesh in list("meshes") {
                    for primitive in mesh["primitives"].as_array().unwrap_or(&empty) {
                        if what == "indices" {
                            found.extend(Self::uint(primitive, what));
                        } else {
                            found.extend(Self::uint(&primitive["attributes"], what));
                        }
                    }
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The byte in buffer 0 where component `component` of element `element` of `accessor`
    /// starts, and the component's size (non-matrix accessors and MAT4 of floats).
    pub fn locate(
        &self,
        accessor: usize,
        element: usize,
        component: usize,
    ) -> Option<(usize, usize)> {
        let a = &self.json["accessors"][accessor];
        let view = &self.json["bufferViews"][Self::uint(a, "bufferView")?];
        if Self::uint(view, "buffer")? != 0 {
            return None;
        }
        let size = match a["componentType"].as_u64()? {
            5120 | 5121 => 1,
            5122 | 5123 => 2,
            _ => 4,
        };
        let components = match a["type"].as_str()? {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            _ => return None,
        };
        if element >= Self::uint(a, "count")? || component >= components {
            return None;
        }
        let stride = Self::uint(view, "byteStride").unwrap_or(size * components);
        let at = Self::uint(view, "byteOffset").unwrap_or(0)
            + Self::uint(a, "byteOffset").unwrap_or(0)
            + element * stride
            + component * size;
        (at + size <= self.bin.len()).then_some((at, size))
    }

    /// Writes the `size` low bytes of `value` at byte `at` of buffer 0.
    pub fn write(&mut self, at: usize, size: usize, value: u64) {
        self.bin[at..at + size].copy_from_slice(&value.to_le_bytes()[..size]);
    }

    /// Reads `size` bytes at byte `at` of buffer 0 as a little-endian number.
    pub fn read(&self, at: usize, size: usize) -> u64 {
        let mut bytes = [0u8; 8];
        bytes[..size].copy_from_slice(&self.bin[at..at + size]);
        u64::from_le_bytes(bytes)
    }
}
