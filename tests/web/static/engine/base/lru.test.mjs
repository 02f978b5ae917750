// The Worker's answer cache is bounded: it keeps at most its size, dropping the least recently
// used entry first. Oracle: the definition of LRU, worked by hand on each sequence below.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LruCache } from "../../../../../src/raglab/web/static/engine/base/lru.js";

test("the cache never holds more than its size, however many answers pass through", () => {
  const cache = new LruCache(3);
  for (let i = 0; i < 1000; i++) cache.set(`GET /api/bm25/search?q=${i}`, { i });
  assert.equal(cache.length, 3);
  assert.deepEqual([...cache.entries.keys()], [997, 998, 999].map((i) => `GET /api/bm25/search?q=${i}`));
});

test("a read keeps an entry: the least recently used one goes first", () => {
  const cache = new LruCache(2);
  cache.set("a", 1).set("b", 2);
  assert.equal(cache.get("a"), 1); // a is now newer than b
  cache.set("c", 3); // drops b
  assert.equal(cache.has("b"), false);
  assert.equal(cache.get("a"), 1);
  assert.equal(cache.get("c"), 3);
  cache.set("a", 10); // a replaced, not added twice
  assert.equal(cache.length, 2);
  assert.equal(cache.get("a"), 10);
  assert.equal(cache.get("missing"), undefined);
});

test("a size below one is refused", () => {
  assert.throws(() => new LruCache(0), /size >= 1/);
  assert.throws(() => new LruCache(1.5), /size >= 1/);
});
