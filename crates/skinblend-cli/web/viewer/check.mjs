// Drives the page of `skinblend view` in headless Chromium (playwright-core from tools/,
// `npm ci --prefix tools`) and writes what it saw for crates/skinblend-cli/tests/view.rs:
//
//   node crates/skinblend-cli/web/viewer/check.mjs URL OUT_DIR TIME_S OTHER_TIME_S [PLAY_SECONDS [MAP]]
//
// Loads URL?paused&time=TIME_S, waits until the page has drawn that pose (or reports an
// error), screenshots the viewports (OUT_DIR/first.png), moves the time slider to OTHER_TIME_S
// and screenshots again (OUT_DIR/second.png), plays for PLAY_SECONDS (default 3) and reads the
// page's frame rate, then shows TIME_S with the colour map MAP (area, distance or blend; default
// area) (OUT_DIR/colored.png,
// and the whole page in OUT_DIR/page.png). OUT_DIR/result.json holds the console errors, page
// errors, failed requests, the page's error line, the renderer, the rates and the statuses of
// requests for paths outside the viewer's files (sent by node, not the page). Exits 1 only
// when the browser could not be driven. CHROMIUM (default /usr/bin/chromium) picks the
// browser; WebGL runs on SwiftShader.
import { writeFile, mkdir } from 'node:fs/promises';
import { get } from 'node:http';
import path from 'node:path';
import { withHeadlessChromium } from '../../../../tools/headless-chromium.mjs';

const [url, out, first, second, play = '3', map = 'area'] = process.argv.slice(2);
// Each map's legend starts so once its colours are shown.
const LEGENDS = { area: 'surface area', distance: 'distance from', blend: 'blend value' };
if (!url || !out || first === undefined || second === undefined) {
  console.error('usage: node crates/skinblend-cli/web/viewer/check.mjs URL OUT_DIR TIME_S OTHER_TIME_S [PLAY_SECONDS]');
  process.exit(2);
}
await mkdir(out, { recursive: true });
const result = { console_errors: [], page_errors: [], failed_requests: [], error: null };
let exitCode = 1;
try {
  await withHeadlessChromium({ viewport: { width: 1200, height: 760 } }, async (browser) => {
    const page = await browser.newPage();
    page.on('console', (m) => { if (m.type() === 'error') result.console_errors.push(m.text()); });
    page.on('pageerror', (e) => result.page_errors.push(e.stack ?? e.message));
    page.on('response', (r) => { if (r.status() >= 400) result.failed_requests.push(`${r.status()} ${r.url()}`); });
    await page.goto(`${url}?paused&time=${first}`);
    await Promise.race([
      page.waitForFunction(() => window.skinblendViewer?.ready || window.skinblendViewer?.error,
        null, { timeout: 120_000, polling: 100 }),
      new Promise((resolve, reject) => page.on('pageerror', (e) => reject(new Error(`page error: ${e.message}`)))),
    ]);
    result.error = await page.evaluate(() => window.skinblendViewer.error);
    result.renderer = await page.evaluate(() => window.skinblendViewer.renderer ?? null);
    if (result.error === null) {
      const view = page.locator('#view');
      result.first = await page.evaluate((t) => window.skinblendViewer.setTime(t), Number(first));
      await view.screenshot({ path: path.join(out, 'first.png') });
      await page.locator('#time').fill(String(second));
      // The slider snaps to its step from the clip's start: wait for the time it took.
      await page.waitForFunction(() => {
        const v = window.skinblendViewer;
        return v.shownTime === Number(document.getElementById('time').value);
      }, null, { timeout: 60_000, polling: 50 });
      // One more frame so that the drawn pose is the shown time's.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      result.second = await page.evaluate(() => window.skinblendViewer.state());
      await view.screenshot({ path: path.join(out, 'second.png') });
      await page.locator('#play').click();
      await page.waitForTimeout(Number(play) * 1000 + 1100);
      result.fps = await page.evaluate(() => window.skinblendViewer.fps);
      result.poses_per_second = await page.evaluate(() => window.skinblendViewer.posesPerSecond);
      await page.locator('#play').click();
      await page.evaluate((t) => window.skinblendViewer.setTime(t), Number(first));
      // The colour map at the first time (OUT_DIR/colored.png).
      await page.locator('#coloring').selectOption(map);
      await page.waitForFunction((legend) => document.getElementById('legend').textContent.startsWith(legend),
        LEGENDS[map], { timeout: 120_000, polling: 100 });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await view.screenshot({ path: path.join(out, 'colored.png') });
      await page.waitForTimeout(300);
    }
    await page.screenshot({ path: path.join(out, 'page.png') });
    // Paths outside the viewer's files, as sent (not normalized by the page): the statuses.
    result.outside = {};
    const { hostname, port } = new URL(url);
    for (const p of ['/../Cargo.toml', '/%2e%2e/Cargo.toml', '/vendor/%2e%2e%2f..%2fCargo.toml', '/etc/passwd']) {
      result.outside[p] = await new Promise((resolve, reject) => {
        get({ hostname, port, path: p }, (response) => { response.resume(); resolve(response.statusCode); })
          .on('error', reject);
      });
    }
    exitCode = 0;
  });
} catch (error) {
  result.driver_error = String(error && error.message ? error.message : error);
  console.error(`check.mjs: ${result.driver_error}`);
} finally {
  await writeFile(path.join(out, 'result.json'), JSON.stringify(result, null, 2));
}
process.exit(exitCode);
