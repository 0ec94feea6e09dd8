// Colour maps (those of compare's pictures: area change, distance from the first method),
// computed by the server for the shown pose (/api/colors) and shown as vertex colours.
import * as THREE from 'three';
import { api, $, fail } from './status.js';

const SRGB_TO_LINEAR = Array.from({ length: 256 }, (_, i) => {
  const c = i / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
});

// The colour menu over `scenes` (from createViews) of `info` (/api/model); returns
// requestColors(), which brings the colours up to the shown pose (page.animation, the shown
// time) when a map is chosen. Sets page.dirty when the picture changes.
export function createColors(info, scenes, page) {
  const methods = info.methods;
  let coloring = 'none';
  let colorsInFlight = false;
  let colorsShown = null;
  function showColoring(on) {
    scenes.forEach((s) => s.meshes.forEach((object) => {
      object.material.vertexColors = on;
      object.material.uniforms.diffuse.value.set(on ? 0xffffff : `rgb(${s.method.color.join(',')})`);
      object.material.needsUpdate = true;
    }));
    page.dirty = true;
  }
  async function requestColors() {
    if (colorsInFlight || coloring === 'none') return;
    colorsInFlight = true;
    try {
      while (coloring !== 'none') {
        const key = `animation=${page.animation}&time=${api.shownTime ?? page.time}&map=${coloring}`;
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
        $('legend').textContent = {
          area: `surface area change against the bind pose: blue −${(high * 100).toFixed(0)}% … white 0 … red +${(high * 100).toFixed(0)}%`,
          distance: `distance from the ${methods[0].label} result: dark 0 … yellow ${(high * 100).toPrecision(3)}% of the size`,
          blend: 'blend value of the blended method: dark 0 (LBS) … yellow 1 (DQS)',
        }[coloring];
        page.dirty = true;
      }
    } finally {
      colorsInFlight = false;
    }
  }
  // The blend values' map only where the page shows blended.
  if (!methods.some((m) => m.name === 'blended')) $('coloring').querySelector('option[value="blend"]').remove();
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
  return requestColors;
}
