#!/usr/bin/env node
// Times `skinblend pose` on every frame of every animation of a glTF file: one process per
// frame (load, sample, skin, write), as a pipeline would call it.
// Usage: node tools/pose-every-frame.mjs SKINBLEND_BINARY FILE OUT_DIR [--fps 24] [--method dq] [--ext glb]
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = args[i + 1];
  args.splice(i, 2);
  return value;
};
const fps = Number(option('--fps', '24'));
const method = option('--method', 'dq');
const ext = option('--ext', 'glb');
const [binary, file, outDir] = args;
if (!binary || !file || !outDir || !(fps > 0)) {
  console.error('usage: node tools/pose-every-frame.mjs SKINBLEND_BINARY FILE OUT_DIR [--fps 24] [--method dq] [--ext glb]');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const info = JSON.parse(execFileSync(binary, ['info', file, '--json'], { encoding: 'utf8' }));
let allFrames = 0;
let allSeconds = 0;
for (const [index, animation] of info.animations.entries()) {
  const frames = Math.floor(animation.duration_s * fps + 1e-6) + 1;
  const start = process.hrtime.bigint();
  for (let frame = 0; frame < frames; frame += 1) {
    const time = animation.start_s + frame / fps;
    const out = path.join(outDir, `${index}-${String(frame).padStart(4, '0')}.${ext}`);
    execFileSync(binary, ['pose', file, '--animation', String(index), '--time', String(time), '--method', method, '-o', out]);
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  allFrames += frames;
  allSeconds += seconds;
  console.log(`animation ${index} ${JSON.stringify(animation.name)}: ${frames} frames in ${seconds.toFixed(3)} s (${((seconds / frames) * 1000).toFixed(1)} ms per frame)`);
}
console.log(`all: ${allFrames} frames in ${allSeconds.toFixed(3)} s (${((allSeconds / allFrames) * 1000).toFixed(1)} ms per frame, method ${method}, ${fps} fps, .${ext})`);
