// Binary search in an ascending array, as Python's bisect module (which the Python stages use).

/** The number of entries of ascending `a` below `x` (Python's bisect_left). */
export function bisectLeft(a, x) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The number of entries of ascending `a` at most `x` (Python's bisect_right). */
export function bisectRight(a, x) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (x < a[mid]) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
