// The page of `skinblend view`: the model once per method side by side with one orbit camera.
// Each method's vertex shader is the GLSL ES 3.00 source of `skinblend shaders --lang glsl-es`
// (from /api/shader/NAME), patched into three.js's Lambert material: its `main` becomes a
// function the material calls in place of three's skinning chunks, its palette uniform block is
// bound as a three.js UniformsGroup and filled with the bytes /api/pose prepares (skinblend_gpu's
// palette layout). Nothing of the skinning is written twice.
//
// URL parameters: animation=INDEX, time=SECONDS, paused. A test reads window.skinblendViewer:
// ready, error, renders, shownTime, and setTime(t) (a promise settled once t is drawn).
import * as THREE from 'three';
import { OrbitControls } from '/vendor/OrbitControls.js';

const api = {
  ready: false, error: null, renders: 0, shownTime: null, fps: 0, posesPerSecond: 0,
  setTime: null, state: null,
};
window.skinblendViewer = api;

const $ = (id) => document.getElementById(id);
const statusElement = $('status');
function showStatus(text) {
  if (api.error) return;
  statusElement.textContent = text;
}
// Where the shown error came from: 'pose' (cleared by the next pose that arrives) or 'page'
// (anything else: it stays).
let errorSource = null;
function showError(message, source = 'page') {
  api.error = message;
  errorSource = source;
  statusElement.textContent = message;
  statusElement.className = 'error';
}
function clearError(source) {
  if (errorSource !== source) return;
  api.error = null;
  errorSource = null;
  statusElement.textContent = '';
  statusElement.className = '';
}

async function fetchOk(url) {
  const response = await fetch(url);
  if (!response.ok) {
    let message = `${url}: HTTP ${response.status}`;
    try { message = (await response.json()).error ?? message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}

const BACKGROUND = 0x202428;

// The exported source as a library for three.js's vertex shader: no #version (three writes
// it), attributes without explicit locations (three binds them by name), the outputs as plain
// globals, clip_from_world as the identity (three projects), and main renamed.
function shaderLibrary(source, name) {
  const palette = source.match(/layout\(std140\) uniform (\w+) \{ \w+ \w+\[(\d+)\]; \};/);
  if (!palette) throw new Error(`/api/shader/${name}: no palette uniform block`);
  let text = source
    .replace(/^#version .*$/m, '')
    .replace(/layout\(location = \d+\) in /g, 'in ')
    .replace(/^smooth out /gm, '')
    .replace(/layout\(std140\) uniform \w+ \{ mat4x4 (\w+); \};/, 'const mat4 $1 = mat4(1.0);')
    .replace('void main() {', 'void skinblend_vertex_main() {');
  if (!text.includes('void skinblend_vertex_main()')) throw new Error(`/api/shader/${name}: no main`);
  return { text, block: palette[1], entries: Number(palette[2]) };
}

function methodMaterial(library, color) {
  const lambert = THREE.ShaderLib.lambert;
  const vertexShader = library.text + '\n' + lambert.vertexShader
    .replace('#include <skinbase_vertex>', 'skinblend_vertex_main();')
    .replace('#include <skinnormal_vertex>', 'objectNormal = _vs2fs_location1;')
    .replace('#include <skinning_vertex>', 'transformed = _vs2fs_location0;');
  const uniforms = THREE.UniformsUtils.clone(lambert.uniforms);
  uniforms.diffuse.value = new THREE.Color(color);
  const material = new THREE.ShaderMaterial({
    uniforms, vertexShader, fragmentShader: lambert.fragmentShader, lights: true,
    side: THREE.DoubleSide,
  });
  return material;
}

function paletteGroup(block, vec4s) {
  const group = new THREE.UniformsGroup();
  group.setName(block);
  const values = Array.from({ length: vec4s }, () => new THREE.Vector4());
  // An array of uniforms (three.js lays them out as std140 vec4s, one after another).
  group.add(values.map((v) => new THREE.Uniform(v)));
  return { group, values };
}

async function main() {
  const info = await (await fetchOk('/api/model')).json();
  const mesh = await (await fetchOk('/api/mesh')).arrayBuffer();
  $('title').textContent = `skinblend view: ${info.file}`;
  document.title = `skinblend view: ${info.file}`;
  const methods = info.methods;
  const libraries = [];
  for (const m of methods) {
    libraries.push(shaderLibrary(await (await fetchOk(`/api/shader/${m.name}`)).text(), m.name));
  }

  const canvas = $('view');
  const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
  if (!renderer.capabilities.isWebGL2) throw new Error('WebGL2 is not available in this browser');
  const gl = renderer.getContext();
  const debugInfo = gl.getExtension('WEBGL_debug_renderer_info');
  api.renderer = debugInfo ? gl.getParameter(debugInfo.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
  renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
  renderer.setScissorTest(true);
  renderer.setClearColor(BACKGROUND);

  // Palettes: one uniform block per skin and method.
  const groups = info.skins.map(() => methods.map((m, i) =>
    paletteGroup(libraries[i].block, libraries[i].entries * m.palette_entry_bytes / 16)));

  // Geometry per primitive, shared by the methods.
  const geometries = info.primitives.map((p) => {
    const n = p.vertices;
    const o = p.offsets;
    const g = new THREE.BufferGeometry();
    const positions = new THREE.BufferAttribute(new Float32Array(mesh, o.positions, 3 * n), 3);
    g.setAttribute('position', positions);
    g.setAttribute('_p2vs_location0', positions);
    g.setIndex(new THREE.BufferAttribute(new Uint32Array(mesh, o.indices, 3 * p.triangles), 1));
    if (o.normals === null) g.computeVertexNormals();
    else g.setAttribute('normal', new THREE.BufferAttribute(new Float32Array(mesh, o.normals, 3 * n), 3));
    g.setAttribute('_p2vs_location1', g.getAttribute('normal'));
    g.setAttribute('_p2vs_location2', new THREE.BufferAttribute(new Uint32Array(mesh, o.joints, 4 * n), 4));
    g.setAttribute('_p2vs_location3', new THREE.BufferAttribute(new Float32Array(mesh, o.weights, 4 * n), 4));
    return g;
  });

  const corIndex = methods.findIndex((m) => m.name === 'cor');
  let corReady = corIndex < 0;
  const scenes = methods.map((m, i) => {
    const scene = new THREE.Scene();
    scene.add(new THREE.HemisphereLight(0xffffff, 0x404048, 1.6));
    const light = new THREE.DirectionalLight(0xffffff, 1.8);
    light.position.set(1, 2, 3);
    scene.add(light);
    const meshes = info.primitives.map((p, k) => {
      const material = methodMaterial(libraries[i], `rgb(${m.color.join(',')})`);
      material.uniformsGroups = [groups[p.skin][i].group];
      // Its own geometry object (the same buffers) so that each method has its own colours.
      const geometry = new THREE.BufferGeometry();
      for (const [name, attribute] of Object.entries(geometries[k].attributes)) geometry.setAttribute(name, attribute);
      geometry.setIndex(geometries[k].index);
      const object = new THREE.Mesh(geometry, material);
      object.frustumCulled = false; // the bind-pose box says nothing of the skinned one
      object.visible = m.name !== 'cor'; // CoR waits for its centers
      scene.add(object);
      return object;
    });
    return { scene, meshes, method: m };
  });
  $('labels').replaceChildren(...methods.map((m) => {
    const d = document.createElement('div');
    d.textContent = m.label;
    d.style.color = `rgb(${m.color.join(',')})`;
    return d;
  }));

  // One camera for every viewport, framing the first frame's skinned box from the front.
  const lo = new THREE.Vector3(...info.bounds.min);
  const hi = new THREE.Vector3(...info.bounds.max);
  const center = lo.clone().add(hi).multiplyScalar(0.5);
  const radius = Math.max(hi.distanceTo(lo) / 2, 1e-6);
  const camera = new THREE.PerspectiveCamera(35, 1, radius / 100, radius * 100);
  const distance = radius / Math.sin(THREE.MathUtils.degToRad(35 / 2)) * 1.05;
  camera.position.copy(center).add(new THREE.Vector3(0, 0, distance));
  const controls = new OrbitControls(camera, canvas);
  controls.target.copy(center);
  controls.update();

  let dirty = true;
  controls.addEventListener('change', () => { dirty = true; });
  function resize() {
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    renderer.setSize(width, height, false);
    camera.aspect = width / methods.length / height;
    camera.updateProjectionMatrix();
    dirty = true;
  }
  window.addEventListener('resize', resize);
  resize();

  // Animation state.
  const params = new URLSearchParams(location.search);
  const select = $('animation');
  info.animations.forEach((a, i) => select.add(new Option(`${a.name} (${a.start_s.toFixed(2)}–${a.end_s.toFixed(2)} s)`, String(i))));
  if (info.animations.length === 0) select.add(new Option('rest pose', 'rest'));
  let animation = info.animations.length ? Math.min(Number(params.get('animation') ?? 0), info.animations.length - 1) : 'rest';
  select.value = String(animation);
  const clip = () => info.animations[animation] ?? { start_s: 0, end_s: 0 };
  const slider = $('time');
  let playing = !params.has('paused') && info.animations.length > 0;
  let time = params.has('time') ? Number(params.get('time')) : clip().start_s;
  function setClipRange() {
    slider.min = String(clip().start_s);
    slider.max = String(clip().end_s);
    slider.value = String(time);
  }
  setClipRange();
  $('play').textContent = playing ? 'pause' : 'play';

  // Poses: one request at a time; the newest wanted time wins. A failed request shows its
  // error and makes the next one wait, RETRY_FIRST_MS doubling up to RETRY_MAX_MS while they
  // keep failing (a page that cannot be served asks every few seconds, not every frame); the
  // next pose that arrives clears the error and the wait.
  const RETRY_FIRST_MS = 250;
  const RETRY_MAX_MS = 4000;
  let retryMs = 0;
  let retryAt = 0;
  let retryTimer = null;
  let wanted = time;
  let inFlight = false;
  let waiters = [];
  let posesDrawn = 0;
  async function requestPose() {
    if (inFlight) return;
    const wait = retryAt - performance.now();
    if (wait > 0) {
      if (retryTimer === null) {
        retryTimer = setTimeout(() => { retryTimer = null; requestPose().catch(fail); }, wait);
      }
      return;
    }
    inFlight = true;
    try {
      while (true) {
        const t = wanted;
        const a = animation;
        let bytes;
        try {
          bytes = await (await fetchOk(`/api/pose?animation=${a}&time=${t}`)).arrayBuffer();
        } catch (error) {
          retryMs = retryMs ? Math.min(2 * retryMs, RETRY_MAX_MS) : RETRY_FIRST_MS;
          retryAt = performance.now() + retryMs;
          showError(String(error.message ?? error), 'pose');
          return;
        }
        retryMs = 0;
        retryAt = 0;
        clearError('pose');
        applyPalettes(new Float32Array(bytes));
        api.shownTime = t;
        posesDrawn += 1;
        dirty = true;
        requestColors().catch(fail);
        if (t === wanted && a === animation) break;
      }
    } finally {
      inFlight = false;
    }
  }
  function applyPalettes(f) {
    let at = 0;
    info.skins.forEach((skin, s) => methods.forEach((m, i) => {
      const values = groups[s][i].values;
      const count = skin.joints * m.palette_entry_bytes / 16;
      for (let v = 0; v < count; v++, at += 4) values[v].set(f[at], f[at + 1], f[at + 2], f[at + 3]);
    }));
  }
  function want(t) {
    time = t;
    wanted = t;
    slider.value = String(t);
    $('time-label').textContent = `${t.toFixed(3)} s`;
    requestPose().catch(fail);
  }
  api.setTime = (t) => new Promise((resolve) => {
    playing = false;
    $('play').textContent = 'play';
    waiters.push({ t, resolve });
    want(t);
  });
  api.state = () => ({ animation, time, playing, shownTime: api.shownTime, renders: api.renders });

  slider.addEventListener('input', () => {
    playing = false;
    $('play').textContent = 'play';
    want(Number(slider.value));
  });
  $('play').addEventListener('click', () => {
    playing = !playing && info.animations.length > 0;
    $('play').textContent = playing ? 'pause' : 'play';
  });
  select.addEventListener('change', () => {
    animation = select.value === 'rest' ? 'rest' : Number(select.value);
    time = clip().start_s;
    setClipRange();
    want(time);
    loadMetrics().catch(fail);
  });

  // Colour maps (those of compare's pictures), computed by the server for the shown pose.
  const SRGB_TO_LINEAR = Array.from({ length: 256 }, (_, i) => {
    const c = i / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  let coloring = 'none';
  let colorsInFlight = false;
  let colorsShown = null;
  function showColoring(on) {
    scenes.forEach((s) => s.meshes.forEach((object) => {
      object.material.vertexColors = on;
      object.material.uniforms.diffuse.value.set(on ? 0xffffff : `rgb(${s.method.color.join(',')})`);
      object.material.needsUpdate = true;
    }));
    dirty = true;
  }
  async function requestColors() {
    if (colorsInFlight || coloring === 'none') return;
    colorsInFlight = true;
    try {
      while (coloring !== 'none') {
        const key = `animation=${animation}&time=${api.shownTime ?? time}&map=${coloring}`;
        if (key === colorsShown) break;
        const response = await fetch(`/api/colors?${key}`);
        if (response.status === 202) {
          $('legend').textContent = 'colours wait for the centers of rotation…';
          await new Promise((r) => setTimeout(r, 300));
          continue;
        }
        if (!response.ok) throw new Error((await response.json()).error ?? `/api/colors: HTTP ${response.status}`);
        const high = Number(response.headers.get('X-Color-High'));
        const bytes = new Uint8Array(await response.arrayBuffer());
        let at = 0;
        scenes.forEach((s) => s.meshes.forEach((object, k) => {
          const n = info.primitives[k].vertices;
          const rgb = new Float32Array(3 * n);
          for (let v = 0; v < n; v++, at += 4) {
            for (let c = 0; c < 3; c++) rgb[3 * v + c] = SRGB_TO_LINEAR[bytes[at + c]];
          }
          object.geometry.setAttribute('color', new THREE.BufferAttribute(rgb, 3));
        }));
        if (colorsShown === null) showColoring(true);
        colorsShown = key;
        $('legend').textContent = coloring === 'area'
          ? `surface area change against the bind pose: blue −${(high * 100).toFixed(0)}% … white 0 … red +${(high * 100).toFixed(0)}%`
          : `distance from the ${methods[0].label} result: dark 0 … yellow ${(high * 100).toPrecision(3)}% of the size`;
        dirty = true;
      }
    } finally {
      colorsInFlight = false;
    }
  }
  $('coloring').addEventListener('change', () => {
    coloring = $('coloring').value;
    colorsShown = null;
    if (coloring === 'none') {
      showColoring(false);
      $('legend').textContent = '';
    } else {
      requestColors().catch(fail);
    }
  });

  // Background work: centers of rotation (CoR shows once they arrive) and the metrics.
  const metrics = new Map();
  async function loadMetrics() {
    if (animation === 'rest' || metrics.has(animation)) { drawPlots(); return; }
    const status = await (await fetchOk('/api/status')).json();
    if (status.metrics[animation]) {
      metrics.set(animation, await (await fetchOk(`/api/metrics?animation=${animation}`)).json());
    }
    drawPlots();
  }
  async function pollStatus() {
    const status = await (await fetchOk('/api/status')).json();
    if (status.error) { showError(status.error); return; }
    if (status.centers && !corReady) {
      const centers = await (await fetchOk('/api/centers')).arrayBuffer();
      let at = 0;
      info.primitives.forEach((p, k) => {
        const attribute = new THREE.BufferAttribute(new Float32Array(centers, at, 4 * p.vertices), 4);
        scenes[corIndex].meshes[k].geometry.setAttribute('_p2vs_location4', attribute);
        at += 16 * p.vertices;
      });
      scenes[corIndex].meshes.forEach((object) => { object.visible = true; });
      corReady = true;
      dirty = true;
    }
    if (animation !== 'rest' && !metrics.has(animation) && status.metrics[animation]) await loadMetrics();
    if (status.stage) showStatus(`computing ${status.stage}: ${status.done}/${status.total}`);
    else showStatus(`${info.primitives.reduce((n, p) => n + p.vertices, 0)} vertices, ${info.primitives.length} primitives`);
    if (status.stage || !corReady || status.metrics.some((m) => !m)) setTimeout(() => pollStatus().catch(fail), 250);
  }

  // Plots of compare's per-frame metrics, with the current time marked.
  function drawPlots() {
    const data = metrics.get(animation);
    plot($('plot-volume'), 'volume ratio (posed ÷ bind)', data, data?.methods.map((label, i) => ({
      label, color: `rgb(${methods[i].color.join(',')})`, values: data.frames.map((f) => f.volume_ratio[i]),
    })));
    const pairColors = ['#e69f00', '#cc79a7', '#56b4e9'];
    plot($('plot-distance'), 'largest distance between methods, % of the size', data, data?.pairs.map((pair, k) => ({
      label: pair.label, color: pairColors[k % pairColors.length], values: data.frames.map((f) => f.max_distance_percent[k]),
    })));
  }
  function plot(element, title, data, series) {
    const c = element.getContext('2d');
    const w = element.width;
    const h = element.height;
    c.clearRect(0, 0, w, h);
    c.fillStyle = '#ccd';
    c.font = '12px system-ui, sans-serif';
    c.fillText(title, 8, 14);
    if (!data) { c.fillText(animation === 'rest' ? 'no animation' : 'computing…', 8, 34); return; }
    const times = data.frames.map((f) => f.time_s);
    const all = series.flatMap((s) => s.values).filter((v) => v !== null && Number.isFinite(v));
    if (all.length === 0) { c.fillText('no values (open mesh or no triangles)', 8, 34); return; }
    let lo = Math.min(...all);
    let hi = Math.max(...all);
    if (hi - lo < 1e-9) { lo -= 0.5 * Math.max(Math.abs(lo), 1e-3); hi += 0.5 * Math.max(Math.abs(hi), 1e-3); }
    const left = 54; const right = w - 8; const top = 22; const bottom = h - 22;
    const x = (t) => left + (right - left) * (t - times[0]) / Math.max(times[times.length - 1] - times[0], 1e-9);
    const y = (v) => bottom - (bottom - top) * (v - lo) / (hi - lo);
    c.strokeStyle = '#445';
    c.strokeRect(left, top, right - left, bottom - top);
    c.fillStyle = '#99a';
    c.fillText(hi.toPrecision(4), 2, top + 10);
    c.fillText(lo.toPrecision(4), 2, bottom);
    c.fillText(`${times[0].toFixed(2)} s`, left, h - 6);
    c.fillText(`${times[times.length - 1].toFixed(2)} s`, right - 40, h - 6);
    series.forEach((s, k) => {
      c.strokeStyle = s.color;
      c.lineWidth = 1.5;
      c.beginPath();
      let pen = false;
      s.values.forEach((v, i) => {
        if (v === null || !Number.isFinite(v)) { pen = false; return; }
        if (pen) c.lineTo(x(times[i]), y(v)); else c.moveTo(x(times[i]), y(v));
        pen = true;
      });
      c.stroke();
      c.fillStyle = s.color;
      c.fillText(s.label, left + 8 + 90 * k, top + 14);
    });
    c.strokeStyle = '#fff';
    c.beginPath();
    c.moveTo(x(time), top);
    c.lineTo(x(time), bottom);
    c.stroke();
  }

  // The loop: advance time when playing, draw when something changed, count frames.
  let last = performance.now();
  let windowStart = last;
  let framesInWindow = 0;
  let posesAtWindowStart = 0;
  let plottedTime = null;
  function frame(now) {
    try {
      step(now);
    } catch (error) {
      fail(error);
      return;
    }
    requestAnimationFrame(frame);
  }
  function step(now) {
    const dt = (now - last) / 1000;
    last = now;
    if (playing) {
      const { start_s: start, end_s: end } = clip();
      // A time that is not a number (?time=NaN) plays from the clip's start.
      let t = Number.isFinite(time) ? time + dt : start;
      if (t > end) t = start + ((t - start) % Math.max(end - start, 1e-6));
      want(t);
    }
    if (dirty) {
      const width = canvas.width / methods.length;
      scenes.forEach((s, i) => {
        renderer.setViewport(i * width, 0, width, canvas.height);
        renderer.setScissor(i * width, 0, width, canvas.height);
        renderer.render(s.scene, camera);
      });
      dirty = false;
      api.renders += 1;
      api.ready = api.ready || (corReady && api.shownTime !== null);
      framesInWindow += 1;
      waiters = waiters.filter((w) => {
        if (w.t === api.shownTime) { w.resolve(api.state()); return false; }
        return true;
      });
      if (plottedTime !== time) { plottedTime = time; drawPlots(); }
    }
    if (now - windowStart >= 1000) {
      api.fps = framesInWindow * 1000 / (now - windowStart);
      api.posesPerSecond = (posesDrawn - posesAtWindowStart) * 1000 / (now - windowStart);
      $('fps').textContent = playing ? `${api.fps.toFixed(0)} frames/s, ${api.posesPerSecond.toFixed(0)} poses/s` : 'paused';
      windowStart = now;
      framesInWindow = 0;
      posesAtWindowStart = posesDrawn;
    }
  }
  want(time);
  requestAnimationFrame(frame);
  await pollStatus();
}

function fail(error) {
  showError(String(error && error.message ? error.message : error));
}
main().catch(fail);
