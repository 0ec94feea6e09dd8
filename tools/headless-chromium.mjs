// Headless Chromium as the web checks drive it (web/conformance/run.mjs,
// crates/skinblend-cli/web/viewer/check.mjs): playwright-core from this folder (`npm ci --prefix
// tools`), the browser at $CHROMIUM (default /usr/bin/chromium), a fresh profile each run, WebGL
// on SwiftShader, no background traffic.
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);

// Runs `use(browser)` on a new headless browser context (`options` as playwright's
// launchPersistentContext takes them, e.g. a viewport), then closes it and removes its profile,
// whether `use` returned or threw; returns what `use` returned.
export async function withHeadlessChromium(options, use) {
  const { chromium } = require('playwright-core');
  const profile = await mkdtemp(path.join(tmpdir(), 'skinblend-chromium-'));
  try {
    // playwright passes the profile as --user-data-dir, headless as --headless.
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      headless: true,
      ...options,
      args: [
        '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
      ],
    });
    try {
      return await use(browser);
    } finally {
      await browser.close();
    }
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}
