// skinblend conformance check in WebGL2 (no framework). Loads vectors/manifest.json and
// shaders/interface-glsl-es.json, runs each method's exported GLSL ES 3.00 vertex shader over
// every case and frame with transform feedback, and compares positions and normals with the
// expected ones within the manifest's tolerance, leaving out the normals the manifest marks
// undefined (expected[method].undefined_normals; counted). The result is left in
// window.conformanceResult (and window.conformanceDone = true); any failure, including a
// missing WebGL2, sets ok = false with a message: nothing passes with nothing checked.
'use strict';

const FRAGMENT_SHADER = `#version 300 es
precision highp float;
out vec4 color;
void main() { color = vec4(1.0); }
`;

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
const fetchJson = async (url) => (await fetchOk(url)).json();
const fetchText = async (url) => (await fetchOk(url)).text();
const fetchF32 = async (url) => new Float32Array(await (await fetchOk(url)).arrayBuffer());
const fetchU32 = async (url) => new Uint32Array(await (await fetchOk(url)).arrayBuffer());

function compile(gl, type, source, name) {
  const shader = gl.createShader(type);
  gl.shaderSource(shader, source);
  gl.compileShader(shader);
  if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) {
    throw new Error(`${name} does not compile: ${gl.getShaderInfoLog(shader)}`);
  }
  return shader;
}

function program(gl, vertexSource, iface) {
  const p = gl.createProgram();
  gl.attachShader(p, compile(gl, gl.VERTEX_SHADER, vertexSource, iface.file));
  gl.attachShader(p, compile(gl, gl.FRAGMENT_SHADER, FRAGMENT_SHADER, 'fragment shader'));
  gl.transformFeedbackVaryings(p, [iface.position_output, iface.normal_output], gl.SEPARATE_ATTRIBS);
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) {
    throw new Error(`${iface.file} does not link: ${gl.getProgramInfoLog(p)}`);
  }
  return p;
}

// The rows (r0, r1, r2) of a column-major 4x4 at joint j, as 12 floats.
function rowsOf(palette, j) {
  const m = palette.subarray(16 * j, 16 * j + 16);
  const out = new Float32Array(12);
  for (let r = 0; r < 3; r++) for (let c = 0; c < 4; c++) out[4 * r + c] = m[4 * c + r];
  return out;
}

// The palette uniform block's bytes for a method (the layout of skinblend_gpu::GpuPalette): LBS
// the skin matrix's rows (48 bytes); DQS the dual quaternion, residual rows and rigid flag (96);
// CoR and blended that entry, then the skin matrix's rows (144).
function paletteBlock(method, iface, frame, jointCount) {
  const words = iface.palette_entry_bytes / 4;
  const buffer = new ArrayBuffer(iface.uniform_palette_joints * iface.palette_entry_bytes);
  const f = new Float32Array(buffer);
  const u = new Uint32Array(buffer);
  for (let j = 0; j < jointCount; j++) {
    const base = j * words;
    if (method === 'linear') {
      f.set(rowsOf(frame.palette, j), base);
      continue;
    }
    f.set(frame.dual_quats.subarray(8 * j, 8 * j + 8), base);
    f.set(frame.residuals.subarray(12 * j, 12 * j + 12), base + 8);
    u[base + 20] = frame.rigid[j];
    if (words >= 36) f.set(rowsOf(frame.palette, j), base + 24);
  }
  return buffer;
}

async function loadCase(c) {
  const v = c.vertices;
  return {
    positions: await fetchF32('vectors/' + v.positions),
    normals: await fetchF32('vectors/' + v.normals),
    joints: await fetchU32('vectors/' + v.joints),
    weights: await fetchF32('vectors/' + v.weights),
    centers: await fetchF32('vectors/' + v.centers),
    blend: v.blend_values ? await fetchF32('vectors/' + v.blend_values) : null,
  };
}

// Per role of a method's own vertex input: the case's array and its components.
const EXTRA_INPUTS = { center: ['centers', 4], blend: ['blend', 1] };

async function loadFrame(frame) {
  return {
    label: frame.label,
    palette: await fetchF32('vectors/' + frame.palette),
    dual_quats: await fetchF32('vectors/' + frame.dual_quats),
    residuals: await fetchF32('vectors/' + frame.residuals),
    rigid: await fetchU32('vectors/' + frame.rigid),
    expected: frame.expected,
  };
}

function attribute(gl, location, data, size, integer) {
  const buffer = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
  gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
  gl.enableVertexAttribArray(location);
  if (integer) gl.vertexAttribIPointer(location, size, gl.UNSIGNED_INT, 0, 0);
  else gl.vertexAttribPointer(location, size, gl.FLOAT, false, 0, 0);
  return buffer;
}

// Runs one method's program over one case and frame; returns captured positions and normals.
function run(gl, p, method, iface, data, frame, n, jointCount) {
  const vao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  const buffers = [
    attribute(gl, 0, data.positions, 3, false),
    attribute(gl, 1, data.normals, 3, false),
    attribute(gl, 2, data.joints, 4, true),
    attribute(gl, 3, data.weights, 4, false),
  ];
  // The method's own input (CoR's center, blended's blend value) where the interface names one.
  for (const [role, [key, size]] of Object.entries(EXTRA_INPUTS)) {
    const location = iface.attributes[role];
    if (location === null || location === undefined) continue;
    if (!data[key]) throw new Error(`${iface.file} reads ${role}, the vectors have no ${key} (vectors older than this page)`);
    buffers.push(attribute(gl, location, data[key], size, false));
  }

  const paletteBuffer = gl.createBuffer();
  gl.bindBuffer(gl.UNIFORM_BUFFER, paletteBuffer);
  gl.bufferData(gl.UNIFORM_BUFFER, paletteBlock(method, iface, frame, jointCount), gl.STATIC_DRAW);
  const clipBuffer = gl.createBuffer();
  gl.bindBuffer(gl.UNIFORM_BUFFER, clipBuffer);
  gl.bufferData(gl.UNIFORM_BUFFER, new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]), gl.STATIC_DRAW);
  const paletteIndex = gl.getUniformBlockIndex(p, iface.palette);
  const clipIndex = gl.getUniformBlockIndex(p, iface.clip_from_world);
  if (paletteIndex === gl.INVALID_INDEX) throw new Error(`${iface.file}: no uniform block ${iface.palette}`);
  gl.uniformBlockBinding(p, paletteIndex, 0);
  gl.bindBufferBase(gl.UNIFORM_BUFFER, 0, paletteBuffer);
  if (clipIndex !== gl.INVALID_INDEX) {
    gl.uniformBlockBinding(p, clipIndex, 1);
    gl.bindBufferBase(gl.UNIFORM_BUFFER, 1, clipBuffer);
  }

  const outputs = [gl.createBuffer(), gl.createBuffer()];
  for (const b of outputs) {
    gl.bindBuffer(gl.TRANSFORM_FEEDBACK_BUFFER, b);
    gl.bufferData(gl.TRANSFORM_FEEDBACK_BUFFER, n * 12, gl.STREAM_READ);
  }
  gl.bindBuffer(gl.TRANSFORM_FEEDBACK_BUFFER, null);
  const tf = gl.createTransformFeedback();
  gl.bindTransformFeedback(gl.TRANSFORM_FEEDBACK, tf);
  gl.bindBufferBase(gl.TRANSFORM_FEEDBACK_BUFFER, 0, outputs[0]);
  gl.bindBufferBase(gl.TRANSFORM_FEEDBACK_BUFFER, 1, outputs[1]);
  gl.useProgram(p);
  gl.enable(gl.RASTERIZER_DISCARD);
  gl.beginTransformFeedback(gl.POINTS);
  gl.drawArrays(gl.POINTS, 0, n);
  gl.endTransformFeedback();
  gl.disable(gl.RASTERIZER_DISCARD);
  gl.bindTransformFeedback(gl.TRANSFORM_FEEDBACK, null);

  const captured = [new Float32Array(n * 3), new Float32Array(n * 3)];
  for (let i = 0; i < 2; i++) {
    gl.bindBuffer(gl.TRANSFORM_FEEDBACK_BUFFER, outputs[i]);
    gl.getBufferSubData(gl.TRANSFORM_FEEDBACK_BUFFER, 0, captured[i]);
  }
  gl.bindBuffer(gl.TRANSFORM_FEEDBACK_BUFFER, null);
  const error = gl.getError();
  if (error !== gl.NO_ERROR) throw new Error(`${iface.file}: WebGL error 0x${error.toString(16)}`);
  gl.bindVertexArray(null);
  for (const b of [...buffers, paletteBuffer, clipBuffer, ...outputs]) gl.deleteBuffer(b);
  gl.deleteTransformFeedback(tf);
  gl.deleteVertexArray(vao);
  return captured;
}

// The largest |a - b| over all components (NaN counts as infinite) and where, leaving out the
// vertices in `skip` (a Set of vertex indices).
function worst(a, b, skip = new Set()) {
  let value = 0;
  let at = -1;
  for (let i = 0; i < a.length; i++) {
    if (skip.has(Math.floor(i / 3))) continue;
    let d = Math.abs(a[i] - b[i]);
    if (!(d <= Infinity)) d = Infinity;
    if (d > value) { value = d; at = Math.floor(i / 3); }
  }
  return { value, vertex: at };
}

async function main() {
  const result = { ok: false, vectors: 0, vertices: 0, undefined_normals: 0, methods: {}, failures: [], message: '' };
  window.conformanceResult = result;
  const gl = document.getElementById('canvas').getContext('webgl2');
  if (!gl) throw new Error('WebGL2 is not available in this browser: nothing was checked');
  const debugInfo = gl.getExtension('WEBGL_debug_renderer_info');
  result.renderer = debugInfo ? gl.getParameter(debugInfo.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
  log(`WebGL2: ${gl.getParameter(gl.VERSION)}, ${result.renderer}`);
  const manifest = await fetchJson('vectors/manifest.json');
  if (manifest.format !== 'skinblend-conformance' || manifest.version !== 1) {
    throw new Error(`vectors/manifest.json: not skinblend-conformance version 1`);
  }
  const interfaces = await fetchJson('shaders/interface-glsl-es.json');
  const tolerance = manifest.tolerance;
  const maxBlock = gl.getParameter(gl.MAX_UNIFORM_BLOCK_SIZE);
  for (const method of manifest.methods) {
    const iface = interfaces.shaders.find((s) => s.method === method);
    if (!iface) throw new Error(`shaders/interface-glsl-es.json: no shader for ${method}`);
    if (iface.uniform_palette_joints * iface.palette_entry_bytes > maxBlock) {
      throw new Error(`${iface.file}: palette block larger than MAX_UNIFORM_BLOCK_SIZE ${maxBlock}`);
    }
    const p = program(gl, await fetchText('shaders/' + iface.file), iface);
    const stats = { vectors: 0, vertices: 0, undefined_normals: 0, worst_position: 0, worst_normal: 0, worst_at: '' };
    result.methods[method] = stats;
    for (const c of manifest.cases) {
      if (c.joint_count > iface.uniform_palette_joints) {
        throw new Error(`${c.name}: ${c.joint_count} joints, the ${method} block holds ${iface.uniform_palette_joints}`);
      }
      const data = await loadCase(c);
      for (const [f, frameEntry] of c.frames.entries()) {
        const frame = await loadFrame(frameEntry);
        const [positions, normals] = run(gl, p, method, iface, data, frame, c.vertex_count, c.joint_count);
        const expectedPositions = await fetchF32('vectors/' + frameEntry.expected[method].positions);
        const expectedNormals = await fetchF32('vectors/' + frameEntry.expected[method].normals);
        const position = worst(positions, expectedPositions);
        // The manifest's rules.undefined_normals: these vertices' exact normal is zero, their
        // expected normal rounding noise; their positions are checked, their normals are not.
        const undefined = frameEntry.expected[method].undefined_normals;
        if (!Array.isArray(undefined)) {
          throw new Error(`${c.name}: expected.${method}.undefined_normals missing (vectors older than this page)`);
        }
        const normal = worst(normals, expectedNormals, new Set(undefined));
        stats.undefined_normals += undefined.length;
        const relative = position.value / c.scale;
        const where = `${c.name} frame ${f} (${frame.label})`;
        if (relative > stats.worst_position) { stats.worst_position = relative; stats.worst_at = where; }
        stats.worst_normal = Math.max(stats.worst_normal, normal.value);
        if (relative > tolerance.position) {
          result.failures.push(`${method} ${where}: position off by ${relative.toExponential(2)} of scale at vertex ${position.vertex}`);
        }
        if (normal.value > tolerance.normal) {
          result.failures.push(`${method} ${where}: normal off by ${normal.value.toExponential(2)} at vertex ${normal.vertex}`);
        }
        stats.vectors += 1;
        stats.vertices += c.vertex_count;
      }
    }
    gl.deleteProgram(p);
    result.vectors += stats.vectors;
    result.vertices += stats.vertices;
    result.undefined_normals += stats.undefined_normals;
    log(`${method}: ${stats.vectors} vectors (${stats.vertices} vertices; ${stats.undefined_normals} undefined normals not checked), worst position ${stats.worst_position.toExponential(2)} of scale (${stats.worst_at}), worst normal ${stats.worst_normal.toExponential(2)}`);
  }
  if (result.vectors === 0) throw new Error('the manifest has no cases: nothing was checked');
  for (const failure of result.failures) log('FAIL ' + failure);
  result.ok = result.failures.length === 0;
  result.message = result.ok
    ? `all ${result.vectors} vectors agree within position ${tolerance.position} (relative) and normal ${tolerance.normal} ` +
      `(${result.undefined_normals} normals the manifest marks undefined not checked)`
    : `${result.failures.length} disagreements`;
}

main()
  .catch((error) => {
    window.conformanceResult.ok = false;
    window.conformanceResult.message = String(error && error.message ? error.message : error);
  })
  .finally(() => {
    const r = window.conformanceResult;
    const status = document.getElementById('status');
    status.textContent = (r.ok ? 'PASS: ' : 'FAIL: ') + r.message;
    status.className = r.ok ? 'pass' : 'fail';
    document.title = `skinblend conformance: ${r.ok ? 'PASS' : 'FAIL'}`;
    log(status.textContent);
    window.conformanceDone = true;
  });
