// Skinning in three.js with skinblend's own shaders: the GLSL ES 3.00 source of `skinblend
// shaders --lang glsl-es` (from /api/shader/NAME) patched into three.js's Lambert material, its
// `main` becoming a function the material calls in place of three's skinning chunks, and its
// palette uniform block bound as a three.js UniformsGroup. Nothing of the skinning is written
// twice.
import * as THREE from 'three';

// The exported source as a library for three.js's vertex shader: no #version (three writes
// it), attributes without explicit locations (three binds them by name), the outputs as plain
// globals, clip_from_world as the identity (three projects), and main renamed.
export function shaderLibrary(source, name) {
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

// Three.js's Lambert material skinned by `library` (from shaderLibrary), in `color`.
export function methodMaterial(library, color) {
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

// The palette uniform block `block` of `vec4s` vec4s, and the vectors that fill it.
export function paletteGroup(block, vec4s) {
  const group = new THREE.UniformsGroup();
  group.setName(block);
  const values = Array.from({ length: vec4s }, () => new THREE.Vector4());
  // An array of uniforms (three.js lays them out as std140 vec4s, one after another).
  group.add(values.map((v) => new THREE.Uniform(v)));
  return { group, values };
}
