// The shared "encoding, n of N" indicator: shown while a neural number waits for the model.
//
// The server encodes the chunks' and questions' vectors in the background from its start; a
// request that needs them before they are ready is answered 202 with the progress (lib.js then
// waits here and asks again), and a table answered without its neural rows carries the progress
// too. Either way this module shows "encoding, n of N" in one place, polls /api/neural/encoding
// until the vectors are ready, then hides it and tells the page ("raglab:neural-ready").

const POLL_MS = 1000;
let waiting = null; // the one promise of the encoding's end, shared by every waiting request
const listeners = new Set();

// The indicator sits in the sticky bar at the top of the page (index.html), so it is in view
// wherever the reader has scrolled and covers nothing; the longer sentence is its title.
function indicator() {
  return document.getElementById("encoding-status");
}

/** "encoding, n of N" in words, for the indicator and any exhibit waiting on it. */
export function encodingText(progress) {
  return `Neural model: encoding, ${progress.done} of ${progress.total} (the chunks and questions, once; the vectors are then kept on disk). Its numbers appear when it is done.`;
}

function show(progress) {
  const node = indicator();
  node.hidden = false;
  node.textContent = `Neural model: encoding, ${progress.done} of ${progress.total}`;
  node.title = encodingText(progress);
  for (const fn of listeners) fn(progress);
}

/** Call fn(progress) at every update while encoding runs; returns a function that stops it. */
export function onProgress(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Resolves once the server's neural vectors are ready, showing `progress` (and each later
 *  one) meanwhile; every caller shares one poll. */
export function untilEncoded(progress) {
  if (progress && !progress.ready) show(progress);
  if (!waiting) {
    waiting = (async () => {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        let now;
        try {
          const response = await fetch("/api/neural/encoding", { headers: { Accept: "application/json" } });
          now = await response.json();
        } catch {
          continue; // the server is busy or restarting: ask again
        }
        if (now.ready) break;
        show(now);
      }
      indicator().hidden = true;
      waiting = null;
      document.dispatchEvent(new CustomEvent("raglab:neural-ready"));
    })();
  }
  return waiting;
}
