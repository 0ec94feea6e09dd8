// What the page shows its user and its tests: window.skinblendViewer (read by check.mjs and
// recover.mjs: ready, error, renders, shownTime, fps, posesPerSecond, renderer, setTime(t),
// state()), the status line with the error it shows, and a fetch that fails with the server's
// error message.

export const api = {
  ready: false, error: null, renders: 0, shownTime: null, fps: 0, posesPerSecond: 0,
  setTime: null, state: null,
};
window.skinblendViewer = api;

export const $ = (id) => document.getElementById(id);
const statusElement = $('status');

export function showStatus(text) {
  if (api.error) return;
  statusElement.textContent = text;
}

// Where the shown error came from: 'pose' (cleared by the next pose that arrives) or 'page'
// (anything else: it stays).
let errorSource = null;
export function showError(message, source = 'page') {
  api.error = message;
  errorSource = source;
  statusElement.textContent = message;
  statusElement.className = 'error';
}
export function clearError(source) {
  if (errorSource !== source) return;
  api.error = null;
  errorSource = null;
  statusElement.textContent = '';
  statusElement.className = '';
}

// Shows an error that stops what raised it (a page error: it stays).
export function fail(error) {
  showError(String(error && error.message ? error.message : error));
}

// fetch(url), or an Error with the server's message (`{"error": ...}`) when it answers 4xx/5xx.
export async function fetchOk(url) {
  const response = await fetch(url);
  if (!response.ok) {
    let message = `${url}: HTTP ${response.status}`;
    try { message = (await response.json()).error ?? message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}
