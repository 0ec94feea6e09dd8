// What the server computes once in the background, followed on /api/status: the centers of
// rotation (CoR shows once they arrive), the metrics of each animation (plotted once they
// arrive), and the progress on the status line.
import { fail, fetchOk, showError, showStatus } from './status.js';
import { drawPlots } from './plots.js';

// The background work of the model `info` (/api/model) shown in `views` (from createViews),
// for the animation `page.animation`. Sets page.dirty when the picture changes.
export function createBackground(info, views, page) {
  const metrics = new Map();
  let corReady = !views.hasCor;
  const plots = () => drawPlots(info.methods, metrics.get(page.animation), page);
  async function loadMetrics() {
    if (page.animation === 'rest' || metrics.has(page.animation)) { plots(); return; }
    const status = await (await fetchOk('/api/status')).json();
    if (status.metrics[page.animation]) {
      metrics.set(page.animation, await (await fetchOk(`/api/metrics?animation=${page.animation}`)).json());
    }
    plots();
  }
  async function pollStatus() {
    const status = await (await fetchOk('/api/status')).json();
    if (status.error) { showError(status.error); return; }
    if (status.centers && !corReady) {
      views.showCenters(await (await fetchOk('/api/centers')).arrayBuffer());
      corReady = true;
      page.dirty = true;
    }
    if (page.animation !== 'rest' && !metrics.has(page.animation) && status.metrics[page.animation]) await loadMetrics();
    if (status.stage) showStatus(`computing ${status.stage}: ${status.done}/${status.total}`);
    else showStatus(`${info.primitives.reduce((n, p) => n + p.vertices, 0)} vertices, ${info.primitives.length} primitives`);
    if (status.stage || !corReady || status.metrics.some((m) => !m)) setTimeout(() => pollStatus().catch(fail), 250);
  }
  return {
    // Whether every shown method can be drawn (CoR has its centers).
    ready: () => corReady,
    // Fetches the shown animation's metrics if they are ready, then draws the plots.
    loadMetrics,
    // Draws the plots of the shown animation at the shown time.
    drawPlots: plots,
    // Follows /api/status until the work is done (or failed), every 250 ms.
    pollStatus,
  };
}
