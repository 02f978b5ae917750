// A bounded map that forgets its least recently used entry first: the Worker's answer cache.
//
// A Map keeps its keys in insertion order, so a key read is moved to the end (deleted and set
// again) and the first key is always the least recently used one.

export class LruCache {
  /** At most `size` entries (a whole number >= 1: settings.SITE_ANSWER_CACHE, via site.json). */
  constructor(size) {
    if (!(Number.isInteger(size) && size >= 1)) throw new Error(`an LRU cache needs a size >= 1, got ${size}`);
    this.size = size;
    this.entries = new Map();
  }

  get length() {
    return this.entries.size;
  }

  has(key) {
    return this.entries.has(key);
  }

  /** The value kept for `key` (undefined when none), now the most recently used. */
  get(key) {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key);
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Keep `value` for `key`, dropping the least recently used entry when over the size. */
  set(key, value) {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value);
    return this;
  }
}
