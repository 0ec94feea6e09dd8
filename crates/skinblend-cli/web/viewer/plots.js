// Plots of compare's per-frame metrics (/api/metrics) over the shown clip, with the current
// time marked: the volume ratio per method and the largest distance between methods.
import { $ } from './status.js';

const PAIR_COLORS = ['#e69f00', '#cc79a7', '#56b4e9'];

// Both plots of `data` (the metrics of page.animation, or undefined while they are computed)
// for `methods` (/api/model's), the line at page.time.
export function drawPlots(methods, data, page) {
  plot($('plot-volume'), 'volume ratio (posed ÷ bind)', data, page, data?.methods.map((label, i) => ({
    label, color: `rgb(${methods[i].color.join(',')})`, values: data.frames.map((f) => f.volume_ratio[i]),
  })));
  plot($('plot-distance'), 'largest distance between methods, % of the size', data, page, data?.pairs.map((pair, k) => ({
    label: pair.label, color: PAIR_COLORS[k % PAIR_COLORS.length], values: data.frames.map((f) => f.max_distance_percent[k]),
  })));
}

function plot(element, title, data, page, series) {
  const c = element.getContext('2d');
  const w = element.width;
  const h = element.height;
  c.clearRect(0, 0, w, h);
  c.fillStyle = '#ccd';
  c.font = '12px system-ui, sans-serif';
  c.fillText(title, 8, 14);
  if (!data) { c.fillText(page.animation === 'rest' ? 'no animation' : 'computing…', 8, 34); return; }
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
  c.moveTo(x(page.time), top);
  c.lineTo(x(page.time), bottom);
  c.stroke();
}
