// The viewports: the model once per method side by side (one three.js scene each over the same
// vertex buffers), one orbit camera framing the first frame's skinned box, and the palettes
// and centers of rotation the server sends put where the shaders read them.
import * as THREE from 'three';
import { OrbitControls } from '/vendor/OrbitControls.js';
import { api, $ } from './status.js';
import { methodMaterial, paletteGroup } from './shading.js';

const BACKGROUND = 0x202428;

// The viewports of `info` (/api/model) over `mesh` (/api/mesh), each method skinned by its
// shader library (`libraries[i]`, from shaderLibrary) on `canvas`; `changed()` is called when
// the picture must be drawn again (camera moved, canvas resized).
export function createViews(canvas, info, mesh, libraries, changed) {
  const methods = info.methods;
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
      // Blended reads each vertex's blend value at location 4 (CoR its center there).
      if (m.name === 'blended') {
        geometry.setAttribute('_p2vs_location4', new THREE.BufferAttribute(new Float32Array(mesh, p.offsets.blend, p.vertices), 1));
      }
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

  controls.addEventListener('change', changed);
  function resize() {
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    renderer.setSize(width, height, false);
    camera.aspect = width / methods.length / height;
    camera.updateProjectionMatrix();
    changed();
  }
  window.addEventListener('resize', resize);
  resize();

  return {
    scenes,
    // Whether the page shows CoR, which waits for its centers of rotation (showCenters).
    hasCor: corIndex >= 0,
    // Draws every viewport.
    draw() {
      const width = canvas.width / methods.length;
      scenes.forEach((s, i) => {
        renderer.setViewport(i * width, 0, width, canvas.height);
        renderer.setScissor(i * width, 0, width, canvas.height);
        renderer.render(s.scene, camera);
      });
    },
    // The bytes of /api/pose (as f32) into the uniform blocks: per skin, per method.
    applyPalettes(f) {
      let at = 0;
      info.skins.forEach((skin, s) => methods.forEach((m, i) => {
        const values = groups[s][i].values;
        const count = skin.joints * m.palette_entry_bytes / 16;
        for (let v = 0; v < count; v++, at += 4) values[v].set(f[at], f[at + 1], f[at + 2], f[at + 3]);
      }));
    },
    // The bytes of /api/centers (a vec4 per vertex, primitive after primitive) into CoR's
    // meshes, which then show.
    showCenters(centers) {
      let at = 0;
      info.primitives.forEach((p, k) => {
        const attribute = new THREE.BufferAttribute(new Float32Array(centers, at, 4 * p.vertices), 4);
        scenes[corIndex].meshes[k].geometry.setAttribute('_p2vs_location4', attribute);
        at += 16 * p.vertices;
      });
      scenes[corIndex].meshes.forEach((object) => { object.visible = true; });
    },
  };
}
