// Poses from the server (/api/pose: the palettes of every skin and method at a time): one
// request at a time; the newest wanted time wins. A failed request shows its error and makes
// the next one wait, RETRY_FIRST_MS doubling up to RETRY_MAX_MS while they keep failing (a page
// that cannot be served asks every few seconds, not every frame); the next pose that arrives
// clears the error and the wait.
import { clearError, fail, fetchOk, showError } from './status.js';

const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 4000;

// requestPose() for the pose `page` wants (page.animation, page.wanted), handing each pose
// that arrives to `arrived(palettes as f32, time)`.
export function createPoseRequests(page, arrived) {
  let retryMs = 0;
  let retryAt = 0;
  let retryTimer = null;
  let inFlight = false;
  async function requestPose() {
    if (inFlight) return;
    const wait = retryAt - performance.now();
    if (wait > 0) {
      if (retryTimer === null) {
        retryTimer = setTimeout(() => { retryTimer = null; requestPose().catch(fail); }, wait);
      }
      return;
    }
    inFlight = true;
    try {
      while (true) {
        const t = page.wanted;
        const a = page.animation;
        let bytes;
        try {
          bytes = await (await fetchOk(`/api/pose?animation=${a}&time=${t}`)).arrayBuffer();
        } catch (error) {
          retryMs = retryMs ? Math.min(2 * retryMs, RETRY_MAX_MS) : RETRY_FIRST_MS;
          retryAt = performance.now() + retryMs;
          showError(String(error.message ?? error), 'pose');
          return;
        }
        retryMs = 0;
        retryAt = 0;
        clearError('pose');
        arrived(new Float32Array(bytes), t);
        if (t === page.wanted && a === page.animation) break;
      }
    } finally {
      inFlight = false;
    }
  }
  return requestPose;
}
