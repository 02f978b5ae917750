// Binary search as Python's bisect module. Oracle: bisect_left and bisect_right worked by hand.
import assert from "node:assert/strict";
import { test } from "node:test";

import { bisectLeft, bisectRight } from "../../../../../src/raglab/web/static/engine/base/bisect.js";

test("bisectLeft and bisectRight place x before and after its equals, as Python's bisect", () => {
  const a = [1, 3, 3, 3, 7];
  // x: bisect_left, bisect_right (Python: bisect.bisect_left(a, x), bisect.bisect_right(a, x)).
  const cases = [[0, 0, 0], [1, 0, 1], [2, 1, 1], [3, 1, 4], [5, 4, 4], [7, 4, 5], [9, 5, 5]];
  for (const [x, left, right] of cases) {
    assert.equal(bisectLeft(a, x), left, `bisect_left(${x})`);
    assert.equal(bisectRight(a, x), right, `bisect_right(${x})`);
  }
  assert.equal(bisectLeft([], 1), 0);
  assert.equal(bisectRight(new Int32Array([2, 2]), 2), 2);
});
