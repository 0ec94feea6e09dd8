// Runs the three.js block of docs/engines.md as pasted (index.html, threejs-check.mjs) in headless
// Chromium through playwright-core and fails unless the +180° twist keeps its ring round.
//
//   node web/engines/run.mjs VECTORS_DIR SHADERS_DIR [--method dq|linear] [--doc FILE] [--serve]
//
// VECTORS_DIR from `skinblend conformance -o DIR`, SHADERS_DIR from `skinblend shaders --lang
// glsl-es -o DIR`. Serves this folder at /, the vendored three.js
// (crates/skinblend-cli/web/viewer/vendor/) at /vendor/, docs/engines.md (or --doc FILE, for a
// test's altered copy) at /doc/engines.md, VECTORS_DIR at /vectors/ and SHADERS_DIR at
// /shaders/ on 127.0.0.1. Any console error or page error fails the run. Exit 0 on PASS, 1 on
// FAIL. --method linear is the negative control (LBS collapses the ring, so it fails).
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withHeadlessChromium } from '../../tools/headless-chromium.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repository = path.resolve(here, '../..');
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const [, value] = args.splice(i, 2);
  return value;
};
const serveOnly = args.includes('--serve');
if (serveOnly) args.splice(args.indexOf('--serve'), 1);
const method = option('--method') ?? 'dq';
const doc = path.resolve(option('--doc') ?? path.join(repository, 'docs/engines.md'));
const [vectors, shaders] = args;
if (!vectors || !shaders || args.length !== 2) {
  console.error('usage: node web/engines/run.mjs VECTORS_DIR SHADERS_DIR [--method dq|linear] [--doc FILE] [--serve]');
  process.exit(2);
}
const roots = [
  ['/vectors/', path.resolve(vectors)],
  ['/shaders/', path.resolve(shaders)],
  ['/vendor/', path.join(repository, 'crates/skinblend-cli/web/viewer/vendor')],
  ['/', here],
];
const types = {
  '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.json': 'application/json', '.md': 'text/markdown; charset=utf-8',
};

const server = createServer(async (request, response) => {
  const url = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
  let file;
  if (url === '/favicon.ico') {
    response.writeHead(204).end();
    return;
  }
  if (url === '/doc/engines.md') {
    file = doc;
  } else {
    const [prefix, root] = roots.find(([p]) => url.startsWith(p));
    file = path.resolve(root, '.' + url.slice(prefix.length - 1));
    if (!file.startsWith(root + path.sep)) {
      response.writeHead(403).end();
      return;
    }
  }
  try {
    const body = await readFile(file);
    response.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
    response.end(body);
  } catch {
    response.writeHead(404).end();
  }
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = `http://127.0.0.1:${server.address().port}/index.html?method=${method}`;
if (serveOnly) {
  console.log(`open ${address} (Ctrl-C to stop)`);
} else {
  let exitCode = 1;
  try {
    await withHeadlessChromium({}, async (browser) => {
      const page = await browser.newPage();
      const errors = [];
      page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`console error: ${message.text()}`);
      });
      await page.goto(address);
      await page.waitForFunction(() => window.engineDone === true, null, { timeout: 120_000, polling: 200 });
      const result = await page.evaluate(() => window.engineResult);
      console.log(`renderer: ${result.renderer ?? 'none'}`);
      for (const error of errors) console.log(error);
      console.log(`${result.ok && errors.length === 0 ? 'PASS' : 'FAIL'}: ${result.message}`);
      exitCode = result.ok && errors.length === 0 ? 0 : 1;
    });
  } finally {
    server.close();
  }
  process.exit(exitCode);
}
