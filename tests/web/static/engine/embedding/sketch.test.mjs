// The seeded test matrix in JavaScript equals Python's bit for bit
// (src/raglab/embedding/sketch.py): oracle, the parity fixture embedding.json (small matrices
// entry by entry, large ones by the SHA-256 of their little-endian float64 bytes).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { seededMatrix } from "../../../../../src/raglab/web/static/engine/embedding/sketch.js";
import { fixture } from "../fixtures.mjs";

test("the seeded test matrix, to the last bit", () => {
  const { small, large } = fixture("embedding").sketch;
  assert.ok(small.length > 0 && large.length > 0);
  for (const { n, width, seed, values } of small) {
    const got = seededMatrix(n, width, seed);
    assert.deepEqual(Array.from(got), values.flat(), `${n} x ${width}, seed ${seed}`);
  }
  for (const { n, width, seed, sha256 } of large) {
    const got = seededMatrix(n, width, seed);
    const digest = createHash("sha256").update(new Uint8Array(got.buffer)).digest("hex");
    assert.equal(digest, sha256, `${n} x ${width}, seed ${seed}`);
  }
});
