#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into fuzz/seeds/<target>/.

    python3 fuzz/seeds/generate.py

Deterministic: running it again rewrites the same bytes. The seeds are small (a few hundred
bytes to a few KB each) and valid: glTF files that load and skin, and rigs that skin, so the
fuzzer starts from inputs that reach deep into the code. The rig seeds use the byte encoding of
`fuzz/src/lib.rs` (`Reader`) and the layouts documented at the top of
`fuzz/fuzz_targets/influences.rs` and `fuzz/fuzz_targets/skin.rs`: change them together.
"""

import base64
import json
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT, UNSIGNED_INT, FLOAT = 5120, 5121, 5122, 5123, 5125, 5126
WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}


def write(target, name, data):
    directory = os.path.join(HERE, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


# ---------------------------------------------------------------------------------------------
# glTF documents


class Builder:
    """A glTF document written from code: JSON plus one binary buffer (buffer 0)."""

    def __init__(self):
        self.json = {
            "asset": {"version": "2.0", "generator": "skinblend fuzz seeds"},
            "scene": 0,
            "scenes": [{"nodes": []}],
            "nodes": [],
        }
        self.bin = bytearray()

    def add(self, key, value):
        self.json.setdefault(key, []).append(value)
        return len(self.json[key]) - 1

    def view(self, data):
        while len(self.bin) % 4:
            self.bin.append(0)
        offset = len(self.bin)
        self.bin += data
        return self.add("bufferViews", {"buffer": 0, "byteOffset": offset, "byteLength": len(data)})

    def accessor(self, data, component_type, kind, count, normalized=False):
        accessor = {"bufferView": self.view(data), "componentType": component_type,
                    "count": count, "type": kind}
        if normalized:
            accessor["normalized"] = True
        return self.add("accessors", accessor)

    def floats(self, values, kind):
        width = WIDTH[kind]
        index = self.accessor(struct.pack(f"<{len(values)}f", *values), FLOAT, kind,
                              len(values) // width)
        if kind in ("VEC3", "SCALAR"):
            columns = [values[i::width] for i in range(width)]
            self.json["accessors"][index]["min"] = [min(c) for c in columns]
            self.json["accessors"][index]["max"] = [max(c) for c in columns]
        return index

    def ints(self, values, component_type, kind, normalized=False):
        fmt = {BYTE: "b", UNSIGNED_BYTE: "B", SHORT: "h", UNSIGNED_SHORT: "H", UNSIGNED_INT: "I"}
        data = struct.pack(f"<{len(values)}{fmt[component_type]}", *values)
        return self.accessor(data, component_type, kind, len(values) // WIDTH[kind], normalized)

    def node(self, node, root):
        index = self.add("nodes", node)
        if root:
            self.json["scenes"][0]["nodes"].append(index)
        return index

    def _padded_bin(self):
        data = bytes(self.bin)
        return data + b"\0" * (-len(data) % 4)

    def glb(self):
        document = dict(self.json)
        data = self._padded_bin()
        if data:
            document["buffers"] = [{"byteLength": len(data)}]
        text = json.dumps(document, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 4)
        total = 12 + 8 + len(text) + (8 + len(data) if data else 0)
        out = b"glTF" + struct.pack("<II", 2, total) + struct.pack("<I", len(text)) + b"JSON" + text
        if data:
            out += struct.pack("<I", len(data)) + b"BIN\0" + data
        return out

    def gltf(self):
        """JSON with the buffer embedded as a data: URI."""
        document = dict(self.json)
        data = self._padded_bin()
        if data:
            uri = "data:application/octet-stream;base64," + base64.b64encode(data).decode()
            document["buffers"] = [{"byteLength": len(data), "uri": uri}]
        return json.dumps(document, indent=1).encode()


def quat_axis_angle(axis, angle):
    s = math.sin(angle / 2)
    return [axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2)]


def translation_matrix(x, y, z):
    return [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, x, y, z, 1]


def strip(rows, normals=False, tangents=False, weights_kind="float", joints_kind=UNSIGNED_SHORT,
          interpolation="LINEAR"):
    """A vertical strip of `rows` vertex pairs from y = 0 to 2 skinned to two joints (joint 0 at
    the origin, joint 1 at y = 1), with triangles and an animation of joint 1 about +Z.
    Returns the builder, the mesh index and the node indices (mesh node, joint 0, joint 1)."""
    b = Builder()
    positions, joints, weights = [], [], []
    for r in range(rows):
        y = 2.0 * r / (rows - 1)
        w1 = min(max(y / 2.0, 0.0), 1.0)
        for x in (-0.25, 0.25):
            positions += [x, y, 0.0]
            joints += [0, 1, 0, 0]
            weights += [1.0 - w1, w1, 0.0, 0.0]
    count = len(positions) // 3
    indices = []
    for r in range(rows - 1):
        a = 2 * r
        indices += [a, a + 1, a + 2, a + 1, a + 3, a + 2]
    attributes = {"POSITION": b.floats(positions, "VEC3"),
                  "JOINTS_0": b.ints(joints, joints_kind, "VEC4")}
    if weights_kind == "float":
        attributes["WEIGHTS_0"] = b.floats(weights, "VEC4")
    else:  # normalized unsigned bytes
        attributes["WEIGHTS_0"] = b.ints([round(w * 255) for w in weights], UNSIGNED_BYTE,
                                         "VEC4", normalized=True)
    if normals:
        attributes["NORMAL"] = b.floats([0.0, 0.0, 1.0] * count, "VEC3")
    if tangents:
        attributes["TANGENT"] = b.floats([1.0, 0.0, 0.0, 1.0] * count, "VEC4")
    mesh = b.add("meshes", {"primitives": [{
        "attributes": attributes, "indices": b.ints(indices, UNSIGNED_SHORT, "SCALAR")}]})
    ibm = b.floats(translation_matrix(0, 0, 0) + translation_matrix(0, -1, 0), "MAT4")
    joint0 = b.node({"name": "joint0", "children": [1]}, True)
    joint1 = b.node({"name": "joint1", "translation": [0.0, 1.0, 0.0]}, False)
    b.add("skins", {"joints": [joint0, joint1], "inverseBindMatrices": ibm})
    mesh_node = b.node({"name": "strip", "mesh": mesh, "skin": 0}, True)
    q = quat_axis_angle((0, 0, 1), math.pi / 2)
    if interpolation == "CUBICSPLINE":
        times = b.floats([0.0, 1.0], "SCALAR")
        zero = [0.0, 0.0, 0.0, 0.0]
        values = zero + [0.0, 0.0, 0.0, 1.0] + zero + zero + q + zero
    else:
        times = b.floats([0.0, 0.5, 1.0], "SCALAR")
        half = quat_axis_angle((0, 0, 1), math.pi / 4)
        values = [0.0, 0.0, 0.0, 1.0] + half + q
    rotations = b.floats(values, "VEC4")
    b.add("animations", {"name": "bend", "samplers": [
        {"input": times, "output": rotations, "interpolation": interpolation}],
        "channels": [{"sampler": 0, "target": {"node": joint1, "path": "rotation"}}]})
    return b, mesh, (mesh_node, joint0, joint1)


def gltf_seeds():
    # The smallest valid document.
    write("load_gltf", "minimal.gltf", b'{"asset":{"version":"2.0"}}')

    # A strip with normals and tangents, as GLB and as JSON with a data: URI.
    b, _, _ = strip(3, normals=True, tangents=True)
    write("load_gltf", "strip.glb", b.glb())
    write("load_gltf", "strip_data_uri.gltf", b.gltf())

    # CUBICSPLINE rotation, a STEP translation and a STEP scale of joint 1, normalized u8 weights,
    # u8 joints, and morph targets on the skinned mesh driven by a weights channel.
    b, mesh, (mesh_node, _, joint1) = strip(3, normals=True, weights_kind="u8",
                                            joints_kind=UNSIGNED_BYTE,
                                            interpolation="CUBICSPLINE")
    delta_a = b.floats([0.5, 0.0, 0.0] * 6, "VEC3")
    delta_n = b.floats([0.0, 0.25, 0.0] * 6, "VEC3")
    delta_b = b.floats([0.0, 0.0, 0.5] * 6, "VEC3")
    primitive = b.json["meshes"][mesh]["primitives"][0]
    primitive["targets"] = [{"POSITION": delta_a, "NORMAL": delta_n}, {"POSITION": delta_b}]
    b.json["meshes"][mesh]["weights"] = [0.5, 0.0]
    b.json["nodes"][mesh_node]["weights"] = [0.25, 0.75]
    step_times = b.floats([0.0, 0.5], "SCALAR")
    translations = b.floats([0.0, 1.0, 0.0, 0.0, 1.5, 0.0], "VEC3")
    scales = b.floats([1.0, 1.0, 1.0, 1.0, 2.0, 0.5], "VEC3")
    weight_times = b.floats([0.0, 1.0], "SCALAR")
    morph_weights = b.floats([0.0, 0.0, 1.0, 0.5], "SCALAR")
    animation = b.json["animations"][0]
    animation["samplers"] += [
        {"input": step_times, "output": translations, "interpolation": "STEP"},
        {"input": step_times, "output": scales, "interpolation": "STEP"},
        {"input": weight_times, "output": morph_weights},
    ]
    animation["channels"] += [
        {"sampler": 1, "target": {"node": joint1, "path": "translation"}},
        {"sampler": 2, "target": {"node": joint1, "path": "scale"}},
        {"sampler": 3, "target": {"node": mesh_node, "path": "weights"}},
    ]
    write("load_gltf", "cubic_step_morph.gltf", b.gltf())

    # Eight influences (JOINTS_1 / WEIGHTS_1) over four joints, one of them mirrored and one
    # scaled; a sparse POSITION accessor; a root with a matrix; one mesh skinned by two nodes
    # with two skins.
    b = Builder()
    count = 4
    base = [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0]
    position_view = b.view(struct.pack("<12f", *base))
    sparse_indices = b.view(struct.pack("<2H", 1, 3))
    sparse_values = b.view(struct.pack("<6f", 0.5, 1.0, 0.0, -0.5, 3.0, 0.0))
    positions = b.add("accessors", {
        "bufferView": position_view, "componentType": FLOAT, "count": count, "type": "VEC3",
        "min": [-0.5, 0.0, 0.0], "max": [0.5, 3.0, 0.0],
        "sparse": {"count": 2,
                   "indices": {"bufferView": sparse_indices, "componentType": UNSIGNED_SHORT},
                   "values": {"bufferView": sparse_values}}})
    joints0 = b.ints([0, 1, 2, 3] * count, UNSIGNED_BYTE, "VEC4")
    joints1 = b.ints([3, 2, 1, 0] * count, UNSIGNED_BYTE, "VEC4")
    weights0 = b.floats([0.25, 0.125, 0.125, 0.0] * count, "VEC4")
    weights1 = b.floats([0.125, 0.125, 0.125, 0.125] * count, "VEC4")
    mesh = b.add("meshes", {"primitives": [{"attributes": {
        "POSITION": positions, "JOINTS_0": joints0, "JOINTS_1": joints1,
        "WEIGHTS_0": weights0, "WEIGHTS_1": weights1}, "mode": 0}]})
    root = b.node({"name": "root", "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0.5, 0, 1],
                   "children": [1, 2, 3, 4]}, True)
    joints = [b.node({"name": "j0"}, False),
              b.node({"name": "j1", "translation": [0, 1, 0], "scale": [-1, 1, 1]}, False),
              b.node({"name": "j2", "translation": [0, 2, 0], "scale": [1.5, 0.5, 1]}, False),
              b.node({"name": "j3", "translation": [0, 3, 0],
                      "rotation": quat_axis_angle((0, 1, 0), math.pi)}, False)]
    ibm = []
    for y in range(4):
        ibm += translation_matrix(0, -y, 0)
    ibm_accessor = b.floats(ibm, "MAT4")
    b.add("skins", {"joints": joints, "inverseBindMatrices": ibm_accessor, "skeleton": root})
    b.add("skins", {"joints": list(reversed(joints))})
    b.node({"mesh": mesh, "skin": 0}, True)
    b.node({"mesh": mesh, "skin": 1, "translation": [5, 0, 0]}, True)
    times = b.floats([0.0, 2.0], "SCALAR")
    twist = b.floats([0.0, 0.0, 0.0, 1.0] + quat_axis_angle((0, 1, 0), 3.0), "VEC4")
    b.add("animations", {"samplers": [{"input": times, "output": twist}],
                         "channels": [{"sampler": 0, "target": {"node": joints[1],
                                                                "path": "rotation"}}]})
    write("load_gltf", "eight_influences_sparse.glb", b.glb())

    # KHR_mesh_quantization: i16 positions, normalized i8 normals, u16 joints, normalized u16
    # weights; triangles as a strip without indices.
    b = Builder()
    b.json["extensionsUsed"] = ["KHR_mesh_quantization"]
    b.json["extensionsRequired"] = ["KHR_mesh_quantization"]
    # Each element padded to 8 bytes: vertex attribute elements are 4-byte aligned.
    quantized = [250, 0, 0, 0, -250, 0, 0, 0, 250, 1000, 0, 0, -250, 1000, 0, 0,
                 250, 2000, 0, 0, -250, 2000, 0, 0]
    position = b.ints(quantized, SHORT, "VEC4")
    b.json["accessors"][position]["type"] = "VEC3"
    b.json["bufferViews"][b.json["accessors"][position]["bufferView"]]["byteStride"] = 8
    b.json["accessors"][position]["min"] = [-250, 0, 0]
    b.json["accessors"][position]["max"] = [250, 2000, 0]
    normals = b.ints([0, 0, 127, 0] * 6, BYTE, "VEC4", normalized=True)
    b.json["accessors"][normals]["type"] = "VEC3"
    b.json["bufferViews"][b.json["accessors"][normals]["bufferView"]]["byteStride"] = 4
    joints = b.ints([0, 1, 0, 0] * 6, UNSIGNED_SHORT, "VEC4")
    weights = []
    for w1 in (0.0, 0.0, 0.5, 0.5, 1.0, 1.0):
        weights += [round((1 - w1) * 65535), round(w1 * 65535), 0, 0]
    weight_accessor = b.ints(weights, UNSIGNED_SHORT, "VEC4", normalized=True)
    mesh = b.add("meshes", {"primitives": [{"attributes": {
        "POSITION": position, "NORMAL": normals, "JOINTS_0": joints,
        "WEIGHTS_0": weight_accessor}, "mode": 5}]})
    j0 = b.node({"name": "j0", "children": [1]}, True)
    j1 = b.node({"name": "j1", "translation": [0, 1, 0]}, False)
    dequantize = [0.001, 0, 0, 0, 0, 0.001, 0, 0, 0, 0, 0.001, 0]
    ibm = b.floats(dequantize + [0, 0, 0, 1] + dequantize + [0, -1, 0, 1], "MAT4")
    b.add("skins", {"joints": [j0, j1], "inverseBindMatrices": ibm})
    b.node({"mesh": mesh, "skin": 0}, True)
    write("load_gltf", "quantized.glb", b.glb())

    # An unskinned textured quad (triangle fan) beside a skinned one, no animation.
    b, _, _ = strip(2)
    del b.json["animations"]
    quad = b.floats([0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0], "VEC3")
    uv = b.floats([0, 0, 1, 0, 1, 1, 0, 1], "VEC2")
    mesh = b.add("meshes", {"name": "quad", "primitives": [{
        "attributes": {"POSITION": quad, "TEXCOORD_0": uv}, "mode": 6}]})
    b.node({"name": "quad", "mesh": mesh, "translation": [2, 0, 0],
            "rotation": [0, 0, 0.6, 0.8]}, True)
    write("load_gltf", "unskinned_fan.gltf", b.gltf())


# ---------------------------------------------------------------------------------------------
# Rigs in the compact encoding of `fuzz/src/lib.rs`


def fl(x):
    """One float: a single byte when x is a multiple of 1/16 in [-7.5, 7.4375], else raw."""
    t = x * 16 + 120
    if t == int(t) and 0 <= t < 0xF0:
        return bytes([int(t)])
    return b"\xfb" + struct.pack("<f", x)


def fls(*xs):
    return b"".join(fl(x) for x in xs)


def rigid(q, t):
    """`Reader::matrix` mode 1: a quaternion and a translation."""
    return b"\x01" + fls(*q) + fls(*t)


def scaled(s, q, t):
    """Mode 2: scale, rotation, translation."""
    return b"\x02" + fls(*s) + fls(*q) + fls(*t)


def mirrored(axis, q, t):
    """Mode 4: a rigid motion mirrored on `axis`."""
    return b"\x04" + bytes([axis]) + fls(*q) + fls(*t)


def skin_rig(method, vertices, k, joints, palette, *, normals=True, tangents=True,
             renormalize=True, simd=True, parallel=True, joint_centers=None, repeat=False,
             tail=b""):
    """A `skin` input: `vertices` is a list of (position, normal, tangent, [(joint, weight)])."""
    methods = {"linear": 0, "dq": 1, "cor": 2, "cor-computed": 3}
    flags = (int(normals) | int(tangents) << 1 | methods[method] << 2 | int(renormalize) << 4
             | int(simd) << 5 | int(parallel) << 6 | int(joint_centers is not None) << 7)
    flags2 = 0xC1 if repeat else 0
    out = bytes([len(vertices), k - 1, len(palette) - 1, flags, flags2])
    for position, normal, tangent, influences in vertices:
        out += fls(*position)
        if normals:
            out += fls(*normal)
        if tangents:
            out += fls(*tangent)
        assert len(influences) == k
        for joint, weight in influences:
            out += bytes([joint]) + fl(weight)
    out += b"".join(palette)
    if joint_centers is not None:
        out += b"".join(fls(*c) for c in joint_centers)
    return out + tail


def ring(y, count, weights):
    """`count` vertices on a circle of radius 0.25 at height y, all with the same influences."""
    out = []
    for i in range(count):
        a = 2 * math.pi * i / count
        # Round to sixteenths so every coordinate is one byte.
        x, z = round(0.25 * math.cos(a) * 16) / 16, round(0.25 * math.sin(a) * 16) / 16
        n = (x * 4, 0.0, z * 4)
        out.append(((x, y, z), n, (0.0, 1.0, 0.0, 1.0), weights))
    return out


def rig_seeds():
    identity = b"\x00"
    half_turn = rigid(quat_axis_angle((0, 1, 0), math.pi), (0, 0, 0))
    bend = rigid([round(c * 16) / 16 for c in quat_axis_angle((0, 0, 1), math.pi / 2)],
                 (1.0, 1.0, 0.0))
    cylinder = (ring(0.0, 4, [(0, 1.0), (1, 0.0)]) + ring(1.0, 4, [(0, 0.5), (1, 0.5)])
                + ring(2.0, 4, [(1, 1.0), (0, 0.0)]))
    # The candy wrapper: a 180° twist under each method.
    write("skin", "twist_linear", skin_rig("linear", cylinder, 2, 2, [identity, half_turn]))
    write("skin", "twist_dq", skin_rig("dq", cylinder, 2, 2, [identity, half_turn],
                                       simd=False))
    # CoR with centers computed from the triangles of two quads.
    triangles = bytes([0, 4, 1, 1, 4, 5, 4, 8, 5, 5, 8, 9])
    write("skin", "bend_cor_computed",
          skin_rig("cor-computed", cylinder, 2, 2, [identity, bend],
                   tail=bytes([len(triangles) // 3]) + triangles))
    # CoR with centers read from the input: odd byte, then a center; even byte: none.
    centers = b"".join(b"\x01" + fls(0.0, v[0][1], 0.0) if i % 3 else b"\x00"
                       for i, v in enumerate(cylinder))
    write("skin", "bend_cor_centers",
          skin_rig("cor", cylinder, 2, 2, [identity, bend], renormalize=False, tail=centers))
    # Scaled, sheared and mirrored joints under DQS, about their joint centers.
    four = ring(0.0, 3, [(0, 0.5), (1, 0.25), (2, 0.25), (3, 0.0)]) \
        + ring(1.0, 3, [(2, 0.5), (3, 0.5), (0, 0.0), (1, 0.0)])
    palette = [scaled((1.5, 1.5, 1.5), (0, 0, 0, 1), (0, 0, 0)),
               mirrored(0, (0, 0, 0, 1), (0, 1, 0)),
               b"\x06" + fls(1, 0, 0, 0.5, 1, 0, 0, 0, 1, 0, 0, 0),  # shear
               scaled((1.25, 1.0, 0.75), quat_axis_angle((1, 0, 0), 0.0), (0, 0, 1))]
    write("skin", "residuals_dq",
          skin_rig("dq", four, 4, 4, palette, joint_centers=[(0, y, 0) for y in range(4)]))
    # Degenerate and nearly rigid matrices under LBS with normals (singular normal matrices).
    palette = [b"\x05\x01" + fls(1, 1, 1, 0, 0, 0, 1, 0, 0, 0), b"\x07" + rigid((0, 0, 0, 1),
               (0, 0, 0))[1:] + bytes([1, 2, 3, 4, 5, 6, 7, 8, 9])]
    write("skin", "degenerate_linear", skin_rig("linear", cylinder, 2, 2, palette, simd=False))
    # Enough vertices to split over threads (parallel against serial).
    write("skin", "parallel_dq",
          skin_rig("dq", cylinder[:4], 2, 2, [identity, half_turn], repeat=True))


def influence_seeds():
    def entries(pairs):
        return b"".join(bytes([j]) + fl(w) for j, w in pairs)

    def lists(vertex_lists):
        out = bytes([len(vertex_lists)])
        for lst in vertex_lists:
            out += bytes([len(lst)]) + entries(lst)
        return out

    # k = 4, 3 joints: two whole vertices for `new` (no length mismatch: byte 1), then lists
    # with a repeated joint, more than k influences, weights to renormalize, and none.
    flat = [(0, 0.5), (1, 0.5), (2, 0.0), (0, 0.0), (2, 1.0), (0, 0.0), (0, 0.0), (1, 0.0)]
    vertex_lists = [[(2, 0.5), (0, 0.25), (2, 0.125), (1, 0.25)],
                    [(0, 0.125), (1, 0.5), (2, 0.25), (1, 0.125), (0, 0.0625)],
                    [(1, 2.0)], []]
    write("influences", "mixed", bytes([4, 3, len(flat), 1]) + entries(flat) + lists(vertex_lists))
    # k = 1, 65536 joints (the most a u16 addresses), joint 65535 via the 0xFF escape.
    flat = [(0, 1.0)]
    write("influences", "max_joints",
          bytes([1, 251, 1, 1]) + entries(flat) + bytes([1, 2, 0xFF, 0xFF, 0xFF]) + fl(1.0)
          + b"\x07" + fl(0.5))
    # k = 8, 8 joints, eight slots of one vertex.
    flat = [(j, 0.125) for j in range(8)]
    write("influences", "eight", bytes([8, 8, len(flat), 1]) + entries(flat)
          + lists([[(j, 1.0 / (j + 1)) for j in range(8)]]))


if __name__ == "__main__":
    gltf_seeds()
    rig_seeds()
    influence_seeds()
