// The in-tab engine's answers to API requests, for tests/web/test_site.py: reads a written
// site's data/site.json and a JSON list of request URLs, prints {url: {status, body}} as JSON.
//
//   node tests/web/site_answers.mjs SITE_DIR URLS_JSON_FILE
//
// A URL written "POST /api/..." is asked with that method.

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [site, urlsFile] = process.argv.slice(2);
const { answer, Refusal } = await import(pathToFileURL(resolve(site, "static/engine/routes.js")).href);
const data = JSON.parse(readFileSync(join(site, "data/site.json"), "utf-8"));
const out = {};
for (const url of JSON.parse(readFileSync(urlsFile, "utf-8"))) {
  try {
    const [method, path] = url.startsWith("POST ") ? ["POST", url.slice(5)] : ["GET", url];
    out[url] = { status: 200, body: answer(data, path, () => {}, { method }) };
  } catch (error) {
    out[url] = { status: error instanceof Refusal ? error.status : 422, body: { detail: error.message } };
  }
}
process.stdout.write(JSON.stringify(out));
