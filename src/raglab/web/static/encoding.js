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

function indicator() {
  let node = document.getElementById("encoding-status");
  if (!node) {
    node = document.createElement("p");
    node.id = "encoding-status";
    node.setAttribute("role", "status");
    // Styled here, so the indicator needs nothing from the page's stylesheet.
    node.style.cssText =
      "position:fixed;left:1rem;bottom:1rem;z-index:30;margin:0;max-width:28rem;padding:.5rem .75rem;border-radius:.4rem;background:#1f2933;color:#fff;font-size:.9rem;box-shadow:0 2px 8px rgba(0,0,0,.3)";
    document.body.append(node);
  }
  return node;
}

/** "encoding, n of N" in words, for the indicator and any exhibit waiting on it. */
export function encodingText(progress) {
  return `Neural model: encoding, ${progress.done} of ${progress.total} (the chunks and questions, once; the vectors are then kept on disk). Its numbers appear when it is done.`;
}

function show(progress) {
  const node = indicator();
  node.hidden = false;
  node.textContent = encodingText(progress);
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
