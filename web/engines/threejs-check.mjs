// Runs the three.js block of docs/engines.md as pasted: the page fetches the document (served at
// /doc/engines.md), takes its one ```js block verbatim and runs it as the body of an async
// function, giving it what the block says the user has: THREE (the vendored three.js),
// `geometry` (a BufferGeometry with the triangles), `positions`, `normals`, `weights`
// (BufferAttributes), `jointsUint32`, `paletteBuffer` (this frame's palette block), `scene` and
// `camera`. The glue is the built-in rig twist_coarse (vectors/, from `skinblend conformance`:
// its vertices and the prepared palette of its last frame, +180°; triangles from
// vectors/rigs/twist_coarse.glb). Then it renders, reads the pixels back and compares the
// silhouette's width at the twisted joint with the rest width. The result is left in
// window.engineResult (and window.engineDone = true).
//
// URL parameter method=linear (a negative control: the block with 'dq' replaced by 'linear' and
// an LBS palette) must fail: LBS collapses the ring at 180°.
import * as THREE from 'three';

// The twisted ring passes when its silhouette is at least this fraction of the rest width.
// DQS turns the 50/50 ring by 90° rigidly (the same 12-gon, the same width up to a pixel of
// rasterization: about 2% of the 58 px rest width); LBS collapses it onto the axis (about 0).
// 0.9 leaves room for rasterization and fails a ring shrunk by a tenth.
const RING_KEPT = 0.9;

const logElement = document.getElementById('log');
function log(line) {
  logElement.textContent += line + '\n';
  console.log(line);
}

async function fetchOk(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response;
}
const f32 = async (url) => new Float32Array(await (await fetchOk(url)).arrayBuffer());
const u32 = async (url) => new Uint32Array(await (await fetchOk(url)).arrayBuffer());

// The one ```js block of the Markdown text, exactly as written.
function snippetOf(markdown) {
  const blocks = [...markdown.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  if (blocks.length !== 1) throw new Error(`docs/engines.md: ${blocks.length} js blocks, expected 1`);
  return blocks[0];
}

// The triangle indices of the first primitive of a .glb, and its POSITION floats.
function glbPrimitive(bytes) {
  const view = new DataView(bytes);
  const jsonLength = view.getUint32(12, true);
  const json = JSON.parse(new TextDecoder().decode(new Uint8Array(bytes, 20, jsonLength)));
  const binStart = 20 + jsonLength + 8;
  const primitive = json.meshes[0].primitives[0];
  const read = (index) => {
    const accessor = json.accessors[index];
    const bufferView = json.bufferViews[accessor.bufferView];
    const offset = binStart + (bufferView.byteOffset ?? 0) + (accessor.byteOffset ?? 0);
    const size = { SCALAR: 1, VEC3: 3, VEC4: 4 }[accessor.type] * accessor.count;
    const Type = { 5121: Uint8Array, 5123: Uint16Array, 5125: Uint32Array, 5126: Float32Array }[accessor.componentType];
    return new Type(bytes.slice(offset, offset + size * Type.BYTES_PER_ELEMENT));
  };
  return { indices: Uint32Array.from(read(primitive.indices)), positions: read(primitive.attributes.POSITION) };
}

// The palette block (skinblend_gpu::GpuPalette's bytes, zero-padded to the uniform block) from
// the vectors of one frame, as web/conformance/conformance.js packs it.
function paletteBlock(method, iface, frame, jointCount) {
  const buffer = new ArrayBuffer(iface.uniform_palette_joints * iface.palette_entry_bytes);
  const f = new Float32Array(buffer);
  const u = new Uint32Array(buffer);
  const words = iface.palette_entry_bytes / 4;
  for (let j = 0; j < jointCount; j++) {
    const base = j * words;
    if (method === 'linear') {
      for (let r = 0; r < 3; r++) for (let c = 0; c < 4; c++) f[base + 4 * r + c] = frame.palette[16 * j + 4 * c + r];
    } else {
      f.set(frame.dual_quats.subarray(8 * j, 8 * j + 8), base);
      f.set(frame.residuals.subarray(12 * j, 12 * j + 12), base + 8);
      u[base + 20] = frame.rigid[j];
    }
  }
  return buffer;
}

// Lit pixels in row `y` (0 at the bottom) of an RGBA read-back of `width` columns.
function rowWidth(pixels, width, y) {
  let lit = 0;
  for (let x = 0; x < width; x++) lit += pixels[4 * (y * width + x)] > 127 ? 1 : 0;
  return lit;
}

async function main() {
  const method = new URLSearchParams(location.search).get('method') ?? 'dq';
  const result = { ok: false, method, message: '' };
  window.engineResult = result;

  const manifest = await (await fetchOk('vectors/manifest.json')).json();
  const twist = manifest.cases.find((c) => c.name === 'twist_coarse');
  const frameEntry = twist.frames[twist.frames.length - 1];
  if (!frameEntry.label.startsWith('180°')) throw new Error(`twist_coarse's last frame is ${frameEntry.label}`);
  const v = twist.vertices;
  const vertices = {
    positions: await f32('vectors/' + v.positions),
    normals: await f32('vectors/' + v.normals),
    joints: await u32('vectors/' + v.joints),
    weights: await f32('vectors/' + v.weights),
  };
  const frame = {
    palette: await f32('vectors/' + frameEntry.palette),
    dual_quats: await f32('vectors/' + frameEntry.dual_quats),
    residuals: await f32('vectors/' + frameEntry.residuals),
    rigid: await u32('vectors/' + frameEntry.rigid),
  };
  const glb = glbPrimitive(await (await fetchOk('vectors/' + twist.source)).arrayBuffer());
  if (glb.positions.length !== vertices.positions.length || glb.positions.some((x, i) => x !== vertices.positions[i])) {
    throw new Error(`vectors/${twist.source}: its vertices are not the case's`);
  }
  const interfaces = await (await fetchOk('shaders/interface-glsl-es.json')).json();
  const iface = interfaces.shaders.find((s) => s.method === method);

  let snippet = snippetOf(await (await fetchOk('doc/engines.md')).text());
  if (method !== 'dq') {
    if (!snippet.includes("s.method === 'dq'")) throw new Error("the block does not pick s.method === 'dq'");
    snippet = snippet.replace("s.method === 'dq'", `s.method === '${method}'`);
  }

  const canvas = document.getElementById('canvas');
  const renderer = new THREE.WebGLRenderer({ canvas, preserveDrawingBuffer: true });
  if (!renderer.capabilities.isWebGL2) throw new Error('WebGL2 is not available in this browser');
  const gl = renderer.getContext();
  const debugInfo = gl.getExtension('WEBGL_debug_renderer_info');
  result.renderer = debugInfo ? gl.getParameter(debugInfo.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
  renderer.setPixelRatio(1);
  renderer.setSize(canvas.width, canvas.height, false);
  renderer.setClearColor(0x000000);
  renderer.debug.onShaderError = (_gl, _program, vertex) => {
    throw new Error(`the shader does not compile: ${_gl.getShaderInfoLog(vertex)}`);
  };

  // What the block expects the user to have.
  const scene = new THREE.Scene();
  const camera = new THREE.OrthographicCamera(-1.1, 1.1, 2.1, -0.1, 0.1, 10); // the rig: y 0..2
  camera.position.set(0, 0, 5);
  const geometry = new THREE.BufferGeometry();
  geometry.setIndex(new THREE.BufferAttribute(glb.indices, 1));
  const positions = new THREE.BufferAttribute(vertices.positions, 3);
  const normals = new THREE.BufferAttribute(vertices.normals, 3);
  const weights = new THREE.BufferAttribute(vertices.weights, 4);
  const jointsUint32 = vertices.joints;
  const paletteBuffer = paletteBlock(method, iface, frame, twist.joint_count);

  const AsyncFunction = (async () => {}).constructor;
  const run = new AsyncFunction('THREE', 'geometry', 'positions', 'normals', 'jointsUint32', 'weights',
    'paletteBuffer', 'scene', 'camera', snippet);
  await run(THREE, geometry, positions, normals, jointsUint32, weights, paletteBuffer, scene, camera);
  if (scene.children.length === 0) throw new Error('the block added nothing to the scene');

  renderer.render(scene, camera);
  if (renderer.info.render.calls < 1) throw new Error('nothing was drawn');
  const { width, height } = canvas;
  const pixels = new Uint8Array(4 * width * height);
  gl.readPixels(0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
  const row = (y) => Math.round((new THREE.Vector3(0, y, 0).project(camera).y + 1) / 2 * height - 0.5);
  // The joint's ring (y = 1, weights 50/50) and a ring moved rigidly by joint 0 (y = 0.25).
  const jointRow = row(1.0);
  const restRow = row(0.25);
  result.joint_width = Math.min(...[-2, -1, 0, 1, 2].map((d) => rowWidth(pixels, width, jointRow + d)));
  result.rest_width = rowWidth(pixels, width, restRow);
  result.ratio = result.joint_width / result.rest_width;
  result.required = RING_KEPT;
  if (result.rest_width < 0.4 / 2.2 * width) {
    throw new Error(`the rest ring is ${result.rest_width} px wide, expected about ${Math.round(0.5 / 2.2 * width)}: nothing usable was drawn`);
  }
  result.ok = result.ratio >= RING_KEPT;
  result.message = `${method} at +180°: the ring at the joint is ${result.joint_width} px wide, the rest ring ` +
    `${result.rest_width} px (${result.ratio.toFixed(3)}; at least ${RING_KEPT} required)`;
}

main()
  .catch((error) => {
    window.engineResult.ok = false;
    window.engineResult.message = String(error && error.message ? error.message : error);
  })
  .finally(() => {
    const r = window.engineResult;
    const status = document.getElementById('status');
    status.textContent = (r.ok ? 'PASS: ' : 'FAIL: ') + r.message;
    log(status.textContent);
    document.title = `skinblend three.js snippet: ${r.ok ? 'PASS' : 'FAIL'}`;
    window.engineDone = true;
  });
