// L2-penalised logistic regression by accelerated full-batch gradient descent, on standardised features.
//
// Mirrors src/raglab/rerank/logistic.py: rows x_i standardised on the training rows, labels y_i
// in {0, 1}, p_i = σ(w · x_i + c),
//   J(w, c) = −(1/m) Σ [y_i log p_i + (1 − y_i) log(1 − p_i)] + (λ/2) ‖w‖²   (c not penalised),
// minimised from the given initial weights (Python's seeded N(0, 0.01²) draw) and the bias at the
// base rate's log-odds, θ₀ = x₀, by Nesterov's accelerated gradient (1983) with the gradient
// restart of O'Donoghue & Candès (2015): each step
//   x_k = θ_{k−1} − η ∇J(θ_{k−1});  j ← 0 if ∇J(θ_{k−1}) · (x_k − x_{k−1}) > 0;  j ← j + 1;
//   θ_k = x_k + ((j − 1)/(j + 2)) (x_k − x_{k−1}),
// until ‖∇J(θ_k)‖ < tolerance (θ_k returned) or the iterations run out. Every step's sums run in
// row order, as numpy's do up to rounding.

/** Column-wise z-scores fitted on rows X (an array of equal-length arrays): {mean, std}, std the
 * population deviation, 1 for a constant column. */
export function fitStandardiser(X) {
  if (X.length === 0) throw new Error("cannot standardise with no rows");
  const m = X.length;
  const d = X[0].length;
  const mean = new Float64Array(d);
  for (const row of X) for (let j = 0; j < d; j++) mean[j] += row[j];
  for (let j = 0; j < d; j++) mean[j] /= m;
  const std = new Float64Array(d);
  for (const row of X) {
    for (let j = 0; j < d; j++) {
      const c = row[j] - mean[j];
      std[j] += c * c;
    }
  }
  for (let j = 0; j < d; j++) {
    const s = Math.sqrt(std[j] / m);
    std[j] = s > 0 ? s : 1.0;
  }
  return { mean, std };
}

/** X standardised: an array of Float64Array rows. */
export function standardise({ mean, std }, X) {
  return X.map((row) => {
    if (row.length !== mean.length) throw new Error(`rows must have ${mean.length} columns`);
    return Float64Array.from(row, (x, j) => (x - mean[j]) / std[j]);
  });
}

/** σ(z) = 1 / (1 + e^(−z)) for z ≥ 0 and e^z / (1 + e^z) below (e^(−|z|) never overflows). */
export function sigmoid(z) {
  const e = Math.exp(-Math.abs(z));
  return (z >= 0 ? 1.0 : e) / (1.0 + e);
}

/** log(1 + e^z) without overflow, as numpy's logaddexp(0, z). */
function softplus(z) {
  if (z === 0) return Math.LN2;
  return z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z));
}

function decisions(Z, w, b) {
  return Z.map((row) => {
    let z = 0.0;
    for (let j = 0; j < w.length; j++) z += row[j] * w[j];
    return z + b;
  });
}

// The descent's loop runs thousands of steps over every training row: the rows lie in one
// Float64Array (row i at i·d), so no step allocates. Each sum keeps the order, and so the
// rounding, of decisions() and of plain loops: the decision's products added from 0 in column
// order, the gradient's in row order.

/** z_i = x_i · w + b for the m rows of the flat `Z` (m × d), written into `z`. */
function flatDecisions(Z, m, d, w, b, z) {
  for (let i = 0, at = 0; i < m; i++, at += d) {
    let s = 0.0;
    for (let j = 0; j < d; j++) s += Z[at + j] * w[j];
    z[i] = s + b;
  }
}

/** ∂J/∂w at (w, b) written into `gw`; returns ∂J/∂c. `z` and `e` are scratch arrays of m. */
function flatGradient(Z, m, d, y, w, b, l2, gw, z, e) {
  if (d === 6) return gradient6(Z, m, y, w, b, l2, gw, z, e);
  gw.fill(0.0);
  let gb = 0.0;
  for (let i = 0, at = 0; i < m; i++, at += d) {
    let s = 0.0;
    for (let j = 0; j < d; j++) s += Z[at + j] * w[j];
    const r = sigmoid(s + b) - y[i];
    for (let j = 0; j < d; j++) gw[j] += Z[at + j] * r;
    gb += r;
  }
  for (let j = 0; j < d; j++) gw[j] = gw[j] / m + l2 * w[j];
  return gb / m;
}

/** flatGradient for the reranker's six features, its weights and sums held in locals, in three
 * passes over the rows: the decisions, their exponentials, then the residuals summed. The same
 * operations in the same order as one pass; but Math.exp is a call that spills every live
 * register, so the call's pass holds few, and the other two run free of it (about a sixth
 * faster in V8 than one pass). */
function gradient6(Z, m, y, w, b, l2, gw, z, e) {
  const w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5];
  for (let i = 0, at = 0; i < m; i++, at += 6) {
    let s = 0.0;
    s += Z[at] * w0;
    s += Z[at + 1] * w1;
    s += Z[at + 2] * w2;
    s += Z[at + 3] * w3;
    s += Z[at + 4] * w4;
    s += Z[at + 5] * w5;
    z[i] = s + b;
  }
  for (let i = 0; i < m; i++) e[i] = Math.exp(-Math.abs(z[i]));
  let g0 = 0.0, g1 = 0.0, g2 = 0.0, g3 = 0.0, g4 = 0.0, g5 = 0.0, gb = 0.0;
  for (let i = 0, at = 0; i < m; i++, at += 6) {
    // sigmoid(z) as sigmoid() has it, from e = exp(-|z|).
    const ei = e[i];
    const r = (z[i] >= 0 ? 1.0 : ei) / (1.0 + ei) - y[i];
    g0 += Z[at] * r;
    g1 += Z[at + 1] * r;
    g2 += Z[at + 2] * r;
    g3 += Z[at + 3] * r;
    g4 += Z[at + 4] * r;
    g5 += Z[at + 5] * r;
    gb += r;
  }
  gw[0] = g0 / m + l2 * w0;
  gw[1] = g1 / m + l2 * w1;
  gw[2] = g2 / m + l2 * w2;
  gw[3] = g3 / m + l2 * w3;
  gw[4] = g4 / m + l2 * w4;
  gw[5] = g5 / m + l2 * w5;
  return gb / m;
}

function loss(z, y, w, l2) {
  let total = 0.0;
  for (let i = 0; i < z.length; i++) total += softplus(z[i]) - y[i] * z[i];
  let ww = 0.0;
  for (const v of w) ww += v * v;
  return total / z.length + 0.5 * l2 * ww;
}

const norm = (gw, gb) => Math.sqrt(gw.reduce((s, v) => s + v * v, 0.0) + gb * gb);

/** Fit the model on raw feature rows X (m rows of d) and labels y (0 or 1, both present):
 * {weights, bias, featureNames, standardiser, loss, iterations, gradientNorm, converged}.
 * `init` holds the d initial weights. */
export function fitLogistic(X, y, { l2, learningRate, iterations, tolerance, init, featureNames }) {
  const m = X.length;
  if (m === 0) throw new Error("the reranker needs at least one training row");
  const d = X[0].length;
  if (featureNames.length !== d) throw new Error(`${featureNames.length} feature names for ${d} columns`);
  if (y.length !== m || !y.every((v) => v === 0 || v === 1)) throw new Error("labels must be 0 or 1, one a row");
  const nPos = y.reduce((s, v) => s + v, 0);
  if (nPos === 0 || nPos === m) throw new Error("training labels must contain both classes (0 and 1)");
  if (!(l2 >= 0)) throw new Error("l2 must be non-negative");
  if (!(learningRate > 0)) throw new Error("learning_rate must be positive");
  if (!(iterations >= 1)) throw new Error("iterations must be at least 1");
  if (init.length !== d) throw new Error(`init must hold ${d} weights`);
  const standardiser = fitStandardiser(X);
  const Z = new Float64Array(m * d);
  // standardise(standardiser, X), written straight into the flat rows.
  const { mean, std } = standardiser;
  X.forEach((row, i) => {
    if (row.length !== d) throw new Error(`rows must have ${d} columns`);
    for (let j = 0; j < d; j++) Z[i * d + j] = (row[j] - mean[j]) / std[j];
  });
  const labels = Float64Array.from(y);
  const z = new Float64Array(m);
  const e = new Float64Array(m);
  const w = Float64Array.from(init);
  const gw = new Float64Array(d);
  let b = Math.log(nPos / (m - nPos));
  let gb = flatGradient(Z, m, d, labels, w, b, l2, gw, z, e);
  let gradNorm = norm(gw, gb);
  // (w, b) is θ, where the gradient is taken; (xw, xb) the last gradient step's point x.
  const xw = Float64Array.from(w);
  const nw = new Float64Array(d);
  let xb = b;
  let steps = 0;
  let sinceRestart = 0;
  while (steps < iterations && gradNorm >= tolerance) {
    for (let j = 0; j < d; j++) nw[j] = w[j] - learningRate * gw[j];
    const nb = b - learningRate * gb;
    steps++;
    // The gradient at θ still points along the move from x_{k−1} to x_k: the momentum has
    // carried past the optimum along it, so it restarts from 0.
    let along = 0.0;
    for (let j = 0; j < d; j++) along += gw[j] * (nw[j] - xw[j]);
    if (along + gb * (nb - xb) > 0.0) sinceRestart = 0;
    sinceRestart++;
    const beta = (sinceRestart - 1) / (sinceRestart + 2);
    for (let j = 0; j < d; j++) {
      w[j] = nw[j] + beta * (nw[j] - xw[j]);
      xw[j] = nw[j];
    }
    b = nb + beta * (nb - xb);
    xb = nb;
    gb = flatGradient(Z, m, d, labels, w, b, l2, gw, z, e);
    gradNorm = norm(gw, gb);
  }
  flatDecisions(Z, m, d, w, b, z);
  return {
    weights: w,
    bias: b,
    featureNames: [...featureNames],
    standardiser,
    loss: loss(z, y, w, l2),
    iterations: steps,
    gradientNorm: gradNorm,
    converged: gradNorm < tolerance,
  };
}

/** The probability that each raw feature row is relevant: σ(w · standardise(x) + b). */
export function predictProba(model, X) {
  return decisions(standardise(model.standardiser, X), model.weights, model.bias).map(sigmoid);
}
