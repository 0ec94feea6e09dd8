// Drives the page of `skinblend view` through failing pose requests in headless Chromium
// (playwright-core from tools/, `npm ci --prefix tools`) and writes what it saw for
// crates/skinblend-cli/tests/view.rs:
//
//   node crates/skinblend-cli/web/viewer/recover.mjs URL OUT_DIR [FAIL_SECONDS]
//
// 1. Loads URL?paused&time=NaN (the server cannot pose NaN) and waits for the page's error
//    (`nan_error`). 2. Clicks play: the page must play from the clip's start; waits up to 10 s
//    for the error to clear and a pose to be drawn (`recovered_after_play`), counting the pose
//    requests meanwhile. 3. Makes every /api/pose request fail (500, through playwright's
//    routing) for FAIL_SECONDS (default 6) while playing, recording when each pose request was
//    sent (`failing_request_ms`, from the start of the failures) and the error the page shows
//    (`failing_error`). 4. Lets requests through again and waits up to 10 s for the error to
//    clear and new poses to be drawn (`recovered_after_failures`). OUT_DIR/result.json holds
//    these, the page errors, and the console errors other than the failed requests' own. Exits
//    1 only when the browser could not be driven. CHROMIUM picks the browser.
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { withHeadlessChromium } from '../../../../tools/headless-chromium.mjs';

const [url, out, failSeconds = '6'] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node crates/skinblend-cli/web/viewer/recover.mjs URL OUT_DIR [FAIL_SECONDS]');
  process.exit(2);
}
await mkdir(out, { recursive: true });
const result = { console_errors: [], page_errors: [] };
let exitCode = 1;
// How long the page gets to recover (the longest retry wait is 4 s).
const RECOVER_MS = 10_000;
try {
  await withHeadlessChromium({ viewport: { width: 1200, height: 760 } }, async (browser) => {
    const page = await browser.newPage();
    page.on('console', (m) => {
      // The browser logs each failed request itself ("Failed to load resource: ... 400/500").
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) result.console_errors.push(m.text());
    });
    page.on('pageerror', (e) => result.page_errors.push(e.stack ?? e.message));
    const poseRequests = [];
    page.on('request', (r) => { if (new URL(r.url()).pathname === '/api/pose') poseRequests.push(Date.now()); });
    const state = () => page.evaluate(() => ({
      error: window.skinblendViewer?.error ?? null,
      shownTime: window.skinblendViewer?.shownTime ?? null,
      renders: window.skinblendViewer?.renders ?? 0,
    }));
    // Waits until the page shows no error and has drawn a pose after `after` (its renders).
    const recovered = async (after) => {
      try {
        await page.waitForFunction((r) => {
          const v = window.skinblendViewer;
          return v.error === null && v.shownTime !== null && Number.isFinite(v.shownTime) && v.renders > r;
        }, after, { timeout: RECOVER_MS, polling: 100 });
        return true;
      } catch {
        return false;
      }
    };

    await page.goto(`${url}?paused&time=NaN`);
    await page.waitForFunction(() => window.skinblendViewer?.error, null, { timeout: 120_000, polling: 100 });
    result.nan_error = (await state()).error;

    const beforePlay = await state();
    const playAt = Date.now();
    await page.locator('#play').click();
    result.recovered_after_play = await recovered(beforePlay.renders);
    result.recover_ms = Date.now() - playAt;
    result.requests_until_recovered = poseRequests.filter((t) => t >= playAt).length;

    const isPose = (u) => u.pathname === '/api/pose';
    await page.route(isPose, (route) => route.fulfill({
      status: 500, contentType: 'application/json', body: JSON.stringify({ error: 'injected failure' }),
    }));
    const failAt = Date.now();
    await page.waitForTimeout(Number(failSeconds) * 1000);
    result.failing_request_ms = poseRequests.filter((t) => t >= failAt).map((t) => t - failAt);
    result.failing_error = (await state()).error;
    await page.unroute(isPose);
    result.recovered_after_failures = await recovered((await state()).renders);
    result.final = await state();
    exitCode = 0;
  });
} catch (error) {
  result.driver_error = String(error && error.message ? error.message : error);
  console.error(`recover.mjs: ${result.driver_error}`);
} finally {
  await writeFile(path.join(out, 'result.json'), JSON.stringify(result, null, 2));
}
process.exit(exitCode);
