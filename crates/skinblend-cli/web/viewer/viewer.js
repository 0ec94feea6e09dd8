// The page of `skinblend view`: the model once per method side by side with one orbit camera,
// its animations with play/pause and a time slider, the colour maps and the per-frame metrics
// of `compare`. This file loads the model and wires the parts together; each part is a module
// beside it: status.js (what tests read, the status line, fetch), shading.js (skinblend's
// shaders in three.js), scene.js (the viewports), poses.js (palettes from the server),
// colors.js (colour maps), background.js and plots.js (centers of rotation, metrics).
//
// URL parameters: animation=INDEX, time=SECONDS, paused. A test reads window.skinblendViewer:
// ready, error, renders, shownTime, and setTime(t) (a promise settled once t is drawn).
import { api, $, fail, fetchOk } from './status.js';
import { shaderLibrary } from './shading.js';
import { createViews } from './scene.js';
import { createPoseRequests } from './poses.js';
import { createColors } from './colors.js';
import { createBackground } from './background.js';

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

  // What is shown and wanted: the animation ('rest' without one), the time, whether it plays,
  // the time whose pose is wanted from the server, and whether the picture must be drawn.
  const page = { animation: 'rest', time: 0, playing: false, wanted: 0, dirty: true };
  const views = createViews($('view'), info, mesh, libraries, () => { page.dirty = true; });

  // Animation state.
  const params = new URLSearchParams(location.search);
  const select = $('animation');
  info.animations.forEach((a, i) => select.add(new Option(`${a.name} (${a.start_s.toFixed(2)}–${a.end_s.toFixed(2)} s)`, String(i))));
  if (info.animations.length === 0) select.add(new Option('rest pose', 'rest'));
  page.animation = info.animations.length ? Math.min(Number(params.get('animation') ?? 0), info.animations.length - 1) : 'rest';
  select.value = String(page.animation);
  const clip = () => info.animations[page.animation] ?? { start_s: 0, end_s: 0 };
  const slider = $('time');
  page.playing = !params.has('paused') && info.animations.length > 0;
  page.time = params.has('time') ? Number(params.get('time')) : clip().start_s;
  function setClipRange() {
    slider.min = String(clip().start_s);
    slider.max = String(clip().end_s);
    slider.value = String(page.time);
  }
  setClipRange();
  $('play').textContent = page.playing ? 'pause' : 'play';

  // Poses: each that arrives fills the palettes, is drawn and recoloured.
  const requestColors = createColors(info, views.scenes, page);
  const background = createBackground(info, views, page);
  page.wanted = page.time;
  let waiters = [];
  let posesDrawn = 0;
  const requestPose = createPoseRequests(page, (palettes, t) => {
    views.applyPalettes(palettes);
    api.shownTime = t;
    posesDrawn += 1;
    page.dirty = true;
    requestColors().catch(fail);
  });
  function want(t) {
    page.time = t;
    page.wanted = t;
    slider.value = String(t);
    $('time-label').textContent = `${t.toFixed(3)} s`;
    requestPose().catch(fail);
  }
  api.setTime = (t) => new Promise((resolve) => {
    page.playing = false;
    $('play').textContent = 'play';
    waiters.push({ t, resolve });
    want(t);
  });
  api.state = () => ({
    animation: page.animation, time: page.time, playing: page.playing, shownTime: api.shownTime,
    renders: api.renders,
  });

  slider.addEventListener('input', () => {
    page.playing = false;
    $('play').textContent = 'play';
    want(Number(slider.value));
  });
  $('play').addEventListener('click', () => {
    page.playing = !page.playing && info.animations.length > 0;
    $('play').textContent = page.playing ? 'pause' : 'play';
  });
  select.addEventListener('change', () => {
    page.animation = select.value === 'rest' ? 'rest' : Number(select.value);
    page.time = clip().start_s;
    setClipRange();
    want(page.time);
    background.loadMetrics().catch(fail);
  });

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
    if (page.playing) {
      const { start_s: start, end_s: end } = clip();
      // A time that is not a number (?time=NaN) plays from the clip's start.
      let t = Number.isFinite(page.time) ? page.time + dt : start;
      if (t > end) t = start + ((t - start) % Math.max(end - start, 1e-6));
      want(t);
    }
    if (page.dirty) {
      views.draw();
      page.dirty = false;
      api.renders += 1;
      api.ready = api.ready || (background.ready() && api.shownTime !== null);
      framesInWindow += 1;
      waiters = waiters.filter((w) => {
        if (w.t === api.shownTime) { w.resolve(api.state()); return false; }
        return true;
      });
      if (plottedTime !== page.time) { plottedTime = page.time; background.drawPlots(); }
    }
    if (now - windowStart >= 1000) {
      api.fps = framesInWindow * 1000 / (now - windowStart);
      api.posesPerSecond = (posesDrawn - posesAtWindowStart) * 1000 / (now - windowStart);
      $('fps').textContent = page.playing ? `${api.fps.toFixed(0)} frames/s, ${api.posesPerSecond.toFixed(0)} poses/s` : 'paused';
      windowStart = now;
      framesInWindow = 0;
      posesAtWindowStart = posesDrawn;
    }
  }
  want(page.time);
  requestAnimationFrame(frame);
  await background.pollStatus();
}

main().catch(fail);
