// Runs the WebGL2 conformance page (index.html) in headless Chromium through playwright-core
// and fails unless every method agrees with every vector.
//
//   node web/conformance/run.mjs VECTORS_DIR SHADERS_DIR            # check, exit 0 or 1
//   node web/conformance/run.mjs VECTORS_DIR SHADERS_DIR --serve    # only serve, open it yourself
//
// VECTORS_DIR from `skinblend conformance -o DIR`, SHADERS_DIR from `skinblend shaders --lang
// glsl-es -o DIR`. Serves this folder at /, VECTORS_DIR at /vectors/ and SHADERS_DIR at
// /shaders/ on 127.0.0.1. playwright-core comes from tools/ (npm ci --prefix tools).
// CHROMIUM (default /usr/bin/chromium) picks the browser; WebGL runs on SwiftShader.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withHeadlessChromium } from '../../tools/headless-chromium.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const [vectors, shaders, mode] = process.argv.slice(2);
if (!vectors || !shaders) {
  console.error('usage: node web/conformance/run.mjs VECTORS_DIR SHADERS_DIR [--serve]');
  process.exit(2);
}
const roots = [
  ['/vectors/', path.resolve(vectors)],
  ['/shaders/', path.resolve(shaders)],
  ['/', here],
];
const types = { '.html': 'text/html', '.js': 'text/javascript', '.json': 'application/json' };

const server = createServer(async (request, response) => {
  const url = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
  const [prefix, root] = roots.find(([p]) => url.startsWith(p));
  const file = path.resolve(root, '.' + url.slice(prefix.length - 1));
  if (!file.startsWith(root + path.sep)) {
    response.writeHead(403).end();
    return;
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
const address = `http://127.0.0.1:${server.address().port}/index.html`;
if (mode === '--serve') {
  console.log(`open ${address} (Ctrl-C to stop)`);
} else {
  let exitCode = 1;
  try {
    await withHeadlessChromium({}, async (browser) => {
      const page = await browser.newPage();
      page.on('pageerror', (error) => console.error(`page error: ${error.message}`));
      await page.goto(address);
      await page.waitForFunction(() => window.conformanceDone === true, null, { timeout: 540_000, polling: 500 });
      const result = await page.evaluate(() => window.conformanceResult);
      console.log(`renderer: ${result.renderer ?? 'none'}`);
      for (const [method, s] of Object.entries(result.methods)) {
        console.log(`${method}: ${s.vectors} vectors (${s.vertices} vertices, ${s.undefined_normals} undefined normals not checked); worst position error ` +
          `${s.worst_position.toExponential(2)} of the case's scale (${s.worst_at}); worst normal error ${s.worst_normal.toExponential(2)}`);
      }
      for (const failure of result.failures) console.log(`FAIL ${failure}`);
      console.log(`${result.ok ? 'PASS' : 'FAIL'}: checked ${result.vectors} vectors (${result.vertices} vertex results): ${result.message}`);
      exitCode = result.ok && result.vectors > 0 ? 0 : 1;
    });
  } finally {
    server.close();
  }
  process.exit(exitCode);
}
