// Charts drawn as SVG by hand: a line/dot/bar plot, horizontal bars and a clickable heat map.

const NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    if (key === "text") node.textContent = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) if (child) node.append(child);
  return node;
}

function frame(host, width, height, label) {
  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    class: "chart-svg",
    role: "img",
    "aria-label": label,
    preserveAspectRatio: "xMidYMid meet",
  });
  root.append(svg("title", { text: label }));
  host.replaceChildren(root);
  return root;
}

function scale(d0, d1, r0, r1) {
  const span = d1 - d0 || 1;
  return (v) => r0 + ((v - d0) / span) * (r1 - r0);
}

function ticks(min, max, count = 5) {
  const step = (max - min) / count;
  return Array.from({ length: count + 1 }, (_, i) => min + i * step);
}

/**
 * A plot of series over numeric axes.
 * spec: {label, x: {min, max, label, ticks, format}, y: {...}, series: [{type: "line"|"dots"|"bars",
 *        points: [[x, y]], className, name}], vline: {x, label}, width, height}
 */
export function plot(host, spec) {
  const width = spec.width || 640;
  const height = spec.height || 300;
  const m = { top: 16, right: spec.y2 ? 56 : 20, bottom: 46, left: 56 };
  const root = frame(host, width, height, spec.label);
  const x = scale(spec.x.min, spec.x.max, m.left, width - m.right);
  const yMain = scale(spec.y.min, spec.y.max, height - m.bottom, m.top);
  const y = yMain;
  const y2 = spec.y2 ? scale(spec.y2.min, spec.y2.max, height - m.bottom, m.top) : null;
  const fx = spec.x.format || ((v) => String(Math.round(v)));
  const fy = spec.y.format || ((v) => v.toFixed(1));
  const axes = svg("g", { class: "axes" });
  for (const t of spec.y.ticks || ticks(spec.y.min, spec.y.max)) {
    axes.append(
      svg("line", { x1: m.left, x2: width - m.right, y1: y(t), y2: y(t), class: "grid-line" }),
      svg("text", { x: m.left - 8, y: y(t) + 4, class: "tick", "text-anchor": "end", text: fy(t) }),
    );
  }
  for (const t of spec.x.ticks || ticks(spec.x.min, spec.x.max)) {
    axes.append(
      svg("line", { x1: x(t), x2: x(t), y1: height - m.bottom, y2: height - m.bottom + 5, class: "axis-line" }),
      svg("text", { x: x(t), y: height - m.bottom + 18, class: "tick", "text-anchor": "middle", text: fx(t) }),
    );
  }
  axes.append(
    svg("line", { x1: m.left, x2: width - m.right, y1: height - m.bottom, y2: height - m.bottom, class: "axis-line" }),
    svg("text", { x: (m.left + width - m.right) / 2, y: height - 6, class: "axis-label", "text-anchor": "middle", text: spec.x.label }),
    svg("text", {
      x: 14,
      y: (m.top + height - m.bottom) / 2,
      class: "axis-label",
      "text-anchor": "middle",
      transform: `rotate(-90 14 ${(m.top + height - m.bottom) / 2})`,
      text: spec.y.label,
    }),
  );
  if (spec.y2) {
    const fy2 = spec.y2.format || ((v) => v.toFixed(1));
    for (const t of spec.y2.ticks || ticks(spec.y2.min, spec.y2.max)) {
      axes.append(svg("text", { x: width - m.right + 8, y: y2(t) + 4, class: "tick y2", "text-anchor": "start", text: fy2(t) }));
    }
    const mid = (m.top + height - m.bottom) / 2;
    axes.append(
      svg("text", { x: width - 10, y: mid, class: "axis-label", "text-anchor": "middle", transform: `rotate(90 ${width - 10} ${mid})`, text: spec.y2.label }),
    );
  }
  root.append(axes);
  for (const s of spec.series) {
    const g = svg("g", { class: `series ${s.className || ""}` });
    const y = s.axis === "y2" && y2 ? y2 : yMain;
    if (s.type === "line" && s.points.length) {
      const d = s.points.map(([px, py], i) => `${i ? "L" : "M"}${x(px).toFixed(1)},${y(py).toFixed(1)}`).join("");
      g.append(svg("path", { d, class: "line" }));
    } else if (s.type === "dots") {
      for (const [px, py] of s.points) g.append(svg("circle", { cx: x(px), cy: y(py), r: s.r || 4, class: "dot" }));
    } else if (s.type === "bars") {
      const n = s.points.length || 1;
      const band = ((width - m.left - m.right) / n) * 0.8;
      for (const [px, py] of s.points) {
        const top = y(Math.max(py, spec.y.min));
        g.append(svg("rect", { x: x(px) - band / 2, y: top, width: Math.max(band, 1), height: Math.max(y(spec.y.min) - top, 0), class: "bar" }));
      }
    }
    root.append(g);
  }
  if (spec.vline) {
    const vx = x(spec.vline.x);
    root.append(
      svg("line", { x1: vx, x2: vx, y1: m.top, y2: height - m.bottom, class: "marker-line" }),
      svg("text", { x: vx + 4, y: m.top + 10, class: "marker-label", text: spec.vline.label || "" }),
    );
  }
  if (spec.legend) {
    const g = svg("g", { class: "legend" });
    spec.legend.forEach((item, i) => {
      const lx = m.left + 8 + i * 170;
      g.append(
        svg("rect", { x: lx, y: height - m.bottom - 22, width: 12, height: 12, class: `swatch ${item.className}` }),
        svg("text", { x: lx + 18, y: height - m.bottom - 12, class: "tick", text: item.name }),
      );
    });
    root.append(g);
  }
  return root;
}

/**
 * Horizontal bars, signed or not. spec: {label, rows: [{label, value, className, note}], format}
 */
export function hbars(host, spec) {
  const rowH = 30;
  const width = spec.width || 640;
  const labelW = spec.labelWidth || 170;
  const noteW = spec.noteWidth || 70;
  const height = spec.rows.length * rowH + 16;
  const root = frame(host, width, height, spec.label);
  const values = spec.rows.map((r) => r.value);
  const lo = Math.min(0, ...values);
  const hi = Math.max(0, ...values, 1e-9);
  const x = scale(lo, hi, labelW, width - noteW);
  const format = spec.format || ((v) => v.toFixed(2));
  root.append(svg("line", { x1: x(0), x2: x(0), y1: 4, y2: height - 8, class: "axis-line" }));
  spec.rows.forEach((row, i) => {
    const top = 8 + i * rowH;
    const x0 = x(Math.min(0, row.value));
    const x1 = x(Math.max(0, row.value));
    root.append(
      svg("text", { x: labelW - 8, y: top + 17, class: "tick", "text-anchor": "end", text: row.label }),
      svg("rect", { x: x0, y: top + 4, width: Math.max(x1 - x0, 1), height: rowH - 10, class: `bar ${row.className || (row.value < 0 ? "negative" : "positive")}` }),
      svg("text", { x: x1 + 6, y: top + 17, class: "value", text: row.note || format(row.value) }),
    );
  });
  return root;
}

function mix(a, b, t) {
  return a.map((v, i) => Math.round(v + (b[i] - v) * t));
}

/** WCAG relative luminance of an sRGB colour given as [r, g, b] in 0..255. */
function luminance(rgb) {
  const [r, g, b] = rgb.map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/**
 * A heat map of values[i][j] (rows i, columns j), with the current and best cells marked.
 * spec: {label, rows, cols, values, rowLabel, colLabel, current: [i, j], best: [i, j],
 *        onPick(i, j), describe(i, j)}. Click a cell, or focus the map and use the arrow keys.
 */
export function heatmap(host, spec) {
  const nr = spec.rows.length;
  const nc = spec.cols.length;
  const cell = 44;
  const cellH = 26;
  const m = { top: 12, left: 64, bottom: 48, right: 12 };
  const width = m.left + nc * cell + m.right;
  const height = m.top + nr * cellH + m.bottom;
  const root = frame(host, width, height, spec.label);
  root.setAttribute("role", "group");
  root.setAttribute("tabindex", "0");
  root.classList.add("heatmap");
  const flat = spec.values.flat();
  const lo = Math.min(...flat);
  const hi = Math.max(...flat);
  const light = [246, 241, 228];
  const dark = [44, 62, 120];
  const cells = svg("g");
  for (let i = 0; i < nr; i++) {
    for (let j = 0; j < nc; j++) {
      const v = spec.values[i][j];
      const t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
      const colour = mix(light, dark, t);
      // Dark text on light cells and white on dark ones, whichever contrasts more.
      const onDark = (1.05 / (luminance(colour) + 0.05)) > ((luminance(colour) + 0.05) / 0.0746);
      const g = svg("g", { class: "cell", "data-i": i, "data-j": j });
      g.append(
        svg("rect", { x: m.left + j * cell, y: m.top + i * cellH, width: cell - 1, height: cellH - 1, fill: `rgb(${colour.join(",")})` }),
        svg("text", {
          x: m.left + j * cell + cell / 2,
          y: m.top + i * cellH + cellH / 2 + 4,
          "text-anchor": "middle",
          class: onDark ? "cell-text on-dark" : "cell-text",
          text: v.toFixed(2),
        }),
      );
      g.addEventListener("click", () => spec.onPick(i, j));
      cells.append(g);
    }
  }
  root.append(cells);
  spec.rows.forEach((r, i) =>
    root.append(svg("text", { x: m.left - 8, y: m.top + i * cellH + cellH / 2 + 4, "text-anchor": "end", class: "tick", text: r.toFixed(1) })),
  );
  spec.cols.forEach((c, j) =>
    root.append(svg("text", { x: m.left + j * cell + cell / 2, y: m.top + nr * cellH + 16, "text-anchor": "middle", class: "tick", text: c.toFixed(1) })),
  );
  root.append(
    svg("text", { x: m.left + (nc * cell) / 2, y: height - 8, "text-anchor": "middle", class: "axis-label", text: spec.colLabel }),
    svg("text", {
      x: 14,
      y: m.top + (nr * cellH) / 2,
      "text-anchor": "middle",
      class: "axis-label",
      transform: `rotate(-90 14 ${m.top + (nr * cellH) / 2})`,
      text: spec.rowLabel,
    }),
  );
  let current = spec.current || null;
  const ringNode = svg("rect", { width: cell - 5, height: cellH - 5, class: "current-ring" });
  const star = spec.best
    ? svg("text", { x: m.left + spec.best[1] * cell + cell - 8, y: m.top + spec.best[0] * cellH + 11, "text-anchor": "middle", class: "best-star", text: "★" })
    : null;
  root.append(svg("g", { class: "overlay" }, ringNode, star));
  const update = (pos) => {
    current = pos;
    if (!pos) {
      ringNode.setAttribute("visibility", "hidden");
      root.setAttribute("aria-label", spec.label);
      return;
    }
    ringNode.setAttribute("visibility", "visible");
    ringNode.setAttribute("x", String(m.left + pos[1] * cell + 2));
    ringNode.setAttribute("y", String(m.top + pos[0] * cellH + 2));
    root.setAttribute("aria-label", `${spec.label}. ${spec.describe(pos[0], pos[1])}`);
  };
  update(current);
  root.addEventListener("keydown", (event) => {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    const [i, j] = current || [0, 0];
    const ni = Math.min(nr - 1, Math.max(0, i + move[0]));
    const nj = Math.min(nc - 1, Math.max(0, j + move[1]));
    spec.onPick(ni, nj);
  });
  return { root, update };
}
