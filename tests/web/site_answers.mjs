// The in-tab engine's answers to API requests, for tests/web/test_site.py: reads a written
// site's data/site.json and a JSON list of request URLs, prints {url: {status, body}} as JSON.
//
//   node tests/web/site_answers.mjs SITE_DIR URLS_JSON_FILE
//
// A URL written "POST /api/..." is asked with that method, and "POST /api/... {json}" with
// that JSON body.

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [site, urlsFile] = process.argv.slice(2);
const { answer, Refusal } = await import(pathToFileURL(resolve(site, "static/engine/routes.js")).href);
const data = JSON.parse(readFileSync(join(site, "data/site.json"), "utf-8"));
const out = {};
const split = (rest) => {
  const at = rest.indexOf(" ");
  return at < 0 ? [rest, null] : [rest.slice(0, at), JSON.parse(rest.slice(at + 1))];
};
for (const url of JSON.parse(readFileSync(urlsFile, "utf-8"))) {
  try {
    const [method, path, body] = url.startsWith("POST ") ? ["POST", ...split(url.slice(5))] : ["GET", url, null];
    out[url] = { status: 200, body: answer(data, path, () => {}, { method, body }) };
  } catch (error) {
    out[url] = { status: error instanceof Refusal ? error.status : 422, body: { detail: error.message } };
  }
}
process.stdout.write(JSON.stringify(out));
