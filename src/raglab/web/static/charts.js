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

// A chart's text is set in viewBox units, so a drawing shown narrower than it was laid out shrinks
// its labels with it (a 640-unit plot on a 330 px phone turned 11 px ticks into 5.7 px). So no
// drawing is shown below its own size: the plot and the bars are laid out at the width their
// host has (`fitWidth`), and one that cannot narrow, the heat map, scrolls inside its host.
function frame(host, width, height, label) {
  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    class: "chart-svg",
    role: "img",
    "aria-label": label,
    preserveAspectRatio: "xMidYMid meet",
  });
  root.style.minWidth = `${width}px`;
  root.append(svg("title", { text: label }));
  host.replaceChildren(root);
  return root;
}

// Each chart host's width, read by the ResizeObserver after a layout the browser made anyway:
// a host observed before its first drawing (watchHosts) is drawn at that width without reading
// its layout, where reading it between one exhibit's writes and the next forced the browser to
// lay the page out again in the middle of a script (a cold load did so once per chart). A host
// not yet seen at a width (new, or hidden: 0) is read once, here.
const widths = new WeakMap();

function hostWidth(host) {
  const known = widths.get(host);
  if (known) return known;
  const read = Math.floor(host.clientWidth);
  widths.set(host, read);
  return read;
}

/** The width to lay a chart out at: its own, or its host's where the host is narrower. */
function fitWidth(host, width) {
  const available = hostWidth(host);
  return available > 0 && available < width ? available : width;
}

// Charts laid out for their host's width are drawn again when that width changes.
const laidOut = new WeakMap();
const resized = typeof ResizeObserver === "undefined"
  ? null
  : new ResizeObserver((entries) => {
      // Read in the observer's callback, the page just laid out: no layout is forced here.
      for (const { target } of entries) widths.set(target, Math.floor(target.clientWidth));
      for (const { target } of entries) {
        const last = laidOut.get(target);
        if (!last || fitWidth(target, last.full) === last.width) continue;
        // Next frame, not inside the observer's callback: redrawing changes the host's height.
        requestAnimationFrame(() => {
          const now = laidOut.get(target);
          if (now === last && fitWidth(target, last.full) !== last.width) last.draw();
        });
      }
    });

function remember(host, full, width, draw) {
  laidOut.set(host, { full, width, draw });
  if (resized) resized.observe(host);
}

/** Watch the width of every chart host under `root` (`.chart-host`) from now on, so that its
 * first drawing finds the width already measured. */
export function watchHosts(root = document) {
  if (resized) for (const host of root.querySelectorAll(".chart-host")) resized.observe(host);
}

/** Every tick, or every n-th where they would crowd closer than `gap` units. */
function thin(values, at, gap) {
  if (values.length < 3) return values;
  const spans = values.slice(1).map((v, i) => Math.abs(at(v) - at(values[i])));
  const every = Math.ceil(gap / Math.max(Math.min(...spans), 1e-9));
  return every <= 1 ? values : values.filter((_, i) => i % every === 0);
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
 *        points: [[x, y]], className, name, data: {key: value} (data-* on its group), titles: [text]
 *        (one per dot)}], vline: {x, label} (its x also as the line's data-x), width, height}
 */
export function plot(host, spec) {
  const full = spec.width || 640;
  const width = fitWidth(host, full);
  remember(host, full, width, () => plot(host, spec));
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
  // Labels no closer than 36 units (a narrow layout keeps every second or third).
  for (const t of thin(spec.x.ticks || ticks(spec.x.min, spec.x.max), x, 36)) {
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
    // `data` puts the numbers a series draws on its group as data-* attributes, to be read back.
    const data = Object.fromEntries(Object.entries(s.data || {}).map(([key, value]) => [`data-${key}`, value]));
    const g = svg("g", { class: `series ${s.className || ""}`, ...data });
    const y = s.axis === "y2" && y2 ? y2 : yMain;
    if (s.type === "line" && s.points.length) {
      const d = s.points.map(([px, py], i) => `${i ? "L" : "M"}${x(px).toFixed(1)},${y(py).toFixed(1)}`).join("");
      g.append(svg("path", { d, class: "line" }));
    } else if (s.type === "dots") {
      // `titles`, where given, names each dot (a tooltip, and text a screen reader can reach).
      s.points.forEach(([px, py], i) => {
        const dot = svg("circle", { cx: x(px), cy: y(py), r: s.r || 4, class: "dot" });
        if (s.titles) dot.append(svg("title", { text: s.titles[i] }));
        g.append(dot);
      });
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
    // The label goes on the line's left where there is no room for it on the right.
    const left = vx > width - m.right - 64;
    root.append(
      svg("line", { x1: vx, x2: vx, y1: m.top, y2: height - m.bottom, class: "marker-line", "data-x": spec.vline.x }),
      svg("text", { x: left ? vx - 4 : vx + 4, y: m.top + 10, class: "marker-label", "text-anchor": left ? "end" : "start", text: spec.vline.label || "" }),
    );
  }
  if (spec.legend) {
    const g = svg("g", { class: "legend" });
    const spacing = Math.min(170, (width - m.left - m.right - 8) / spec.legend.length);
    spec.legend.forEach((item, i) => {
      const lx = m.left + 8 + i * spacing;
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
 * Where the host is too narrow for the label, bar and note side by side, each row puts its label
 * and note on a line of their own above the bar (and the note on a second line if both do not fit).
 */
export function hbars(host, spec) {
  const full = spec.width || 640;
  const width = fitWidth(host, full);
  remember(host, full, width, () => hbars(host, spec));
  const labelW = spec.labelWidth || 170;
  const noteW = spec.noteWidth || 70;
  const format = spec.format || ((v) => v.toFixed(2));
  const values = spec.rows.map((r) => r.value);
  const lo = Math.min(0, ...values);
  const hi = Math.max(0, ...values, 1e-9);
  const bar = (row) => `bar ${row.className || (row.value < 0 ? "negative" : "positive")}`;
  const note = (row) => row.note || format(row.value);
  if (width - labelW - noteW >= 160) {
    const rowH = 30;
    const height = spec.rows.length * rowH + 16;
    const root = frame(host, width, height, spec.label);
    const x = scale(lo, hi, labelW, width - noteW);
    root.append(svg("line", { x1: x(0), x2: x(0), y1: 4, y2: height - 8, class: "axis-line" }));
    spec.rows.forEach((row, i) => {
      const top = 8 + i * rowH;
      const x0 = x(Math.min(0, row.value));
      const x1 = x(Math.max(0, row.value));
      root.append(
        svg("text", { x: labelW - 8, y: top + 17, class: "tick", "text-anchor": "end", text: row.label }),
        svg("rect", { x: x0, y: top + 4, width: Math.max(x1 - x0, 1), height: rowH - 10, class: bar(row) }),
        svg("text", { x: x1 + 6, y: top + 17, class: "value", text: note(row) }),
      );
    });
    return root;
  }
  // Stacked: about 0.6 em a character, the label at 11 px and the note at 12 px.
  const line = 16;
  const lines = spec.rows.map((row) => (row.label.length * 6.6 + note(row).length * 7.2 + 16 <= width ? 1 : 2));
  const rowH = (n) => n * line + 24;
  const height = lines.reduce((sum, n) => sum + rowH(n), 8);
  const root = frame(host, width, height, spec.label);
  const x = scale(lo, hi, 2, width - 2);
  let top = 4;
  spec.rows.forEach((row, i) => {
    const y = top + lines[i] * line + 2;
    const x0 = x(Math.min(0, row.value));
    const x1 = x(Math.max(0, row.value));
    root.append(
      svg("text", { x: 2, y: top + 12, class: "tick", "text-anchor": "start", text: row.label }),
      svg("text", { x: width - 2, y: top + 12 + (lines[i] - 1) * line, class: "value", "text-anchor": "end", text: note(row) }),
      svg("rect", { x: x0, y, width: Math.max(x1 - x0, 1), height: 14, class: bar(row) }),
      svg("line", { x1: x(0), x2: x(0), y1: y - 3, y2: y + 17, class: "axis-line" }),
    );
    top += rowH(lines[i]);
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
 * Optional: text(i, j), each cell's label (default: the value to 2 decimals); tied: [[i, j], …],
 * cells marked with a dot (class "tied"); marks: [{at: [i, j], label, className}], a diamond at a
 * place that may lie between cells (at 7.5: on the line between columns 7 and 8).
 * Returns {root, update(pos)}, which stay the map's own when it is drawn again for a new width.
 *
 * Cells are 44 units wide where the host has the room; in a narrower host (a phone) they narrow
 * to fit it, down to HEATMAP_MIN_CELL, so every column stays in view at the text's own size
 * rather than running off into a scroll area. Only a host narrower still scrolls.
 */
const HEATMAP_CELL = 44;
const HEATMAP_MIN_CELL = 18;

export function heatmap(host, spec) {
  const handle = { root: null, update: null };
  let current = spec.current || null;
  const nr = spec.rows.length;
  const nc = spec.cols.length;
  const wide = { top: 12, left: 64, bottom: 48, right: 12 };
  const full = wide.left + nc * HEATMAP_CELL + wide.right;

  function draw() {
    // A redraw for a new width keeps the keyboard on the map.
    const hadFocus = handle.root !== null && document.activeElement === handle.root;
    const width = fitWidth(host, full);
    remember(host, full, width, draw);
    const narrow = width < full;
    const m = narrow ? { ...wide, left: 44, right: 2 } : wide;
    const cell = narrow ? Math.max(HEATMAP_MIN_CELL, Math.floor(((width - m.left - m.right) / nc) * 10) / 10) : HEATMAP_CELL;
    const cellH = 26;
    // A narrow cell has no room beside its count for the star: the count sits lower, under it.
    const textY = narrow ? cellH - 6 : cellH / 2 + 4;
    const drawn = m.left + nc * cell + m.right;
    const height = m.top + nr * cellH + m.bottom;
    const root = frame(host, drawn, height, spec.label);
    root.setAttribute("role", "group");
    root.setAttribute("tabindex", "0");
    root.classList.add("heatmap");
    const flat = spec.values.flat();
    const lo = Math.min(...flat);
    const hi = Math.max(...flat);
    const light = [246, 241, 228];
    const dark = [44, 62, 120];
    const tied = new Set((spec.tied || []).map(([i, j]) => `${i},${j}`));
    const cells = svg("g");
    for (let i = 0; i < nr; i++) {
      for (let j = 0; j < nc; j++) {
        const v = spec.values[i][j];
        const t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
        const colour = mix(light, dark, t);
        // Dark text on light cells and white on dark ones, whichever contrasts more.
        const onDark = (1.05 / (luminance(colour) + 0.05)) > ((luminance(colour) + 0.05) / 0.0746);
        const isTied = tied.has(`${i},${j}`);
        const g = svg("g", { class: isTied ? "cell tied" : "cell", "data-i": i, "data-j": j });
        g.append(
          svg("rect", { x: m.left + j * cell, y: m.top + i * cellH, width: cell - 1, height: cellH - 1, fill: `rgb(${colour.join(",")})` }),
          svg("text", {
            x: m.left + j * cell + cell / 2,
            y: m.top + i * cellH + textY,
            "text-anchor": "middle",
            class: onDark ? "cell-text on-dark" : "cell-text",
            text: spec.text ? spec.text(i, j) : v.toFixed(2),
          }),
        );
        if (isTied) g.append(svg("circle", { cx: m.left + j * cell + 5, cy: m.top + i * cellH + 5, r: 2.5, class: onDark ? "tied-dot on-dark" : "tied-dot" }));
        if (spec.describe) g.append(svg("title", { text: spec.describe(i, j) }));
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
    const ringNode = svg("rect", { width: cell - 5, height: cellH - 5, class: "current-ring" });
    const star = spec.best
      ? svg("text", { x: m.left + spec.best[1] * cell + cell - (narrow ? 6 : 8), y: m.top + spec.best[0] * cellH + 11, "text-anchor": "middle", class: "best-star", text: "★" })
      : null;
    const marks = (spec.marks || []).map((mark) => {
      const cx = m.left + (mark.at[1] + 0.5) * cell;
      const cy = m.top + (mark.at[0] + 0.5) * cellH;
      const r = 6;
      return svg(
        "g",
        { class: `mark ${mark.className || ""}`.trim(), "data-i": mark.at[0], "data-j": mark.at[1] },
        svg("polygon", { points: `${cx},${cy - r} ${cx + r},${cy} ${cx},${cy + r} ${cx - r},${cy}` }),
        svg("title", { text: mark.label }),
      );
    });
    root.append(svg("g", { class: "overlay" }, ringNode, star, ...marks));
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
    handle.root = root;
    handle.update = update;
    if (hadFocus) root.focus({ preventScroll: true });
  }

  draw();
  return handle;
}

/**
 * Fit each display formula under `root` to its box: one wider than its box at the page's size is
 * set just small enough to fit, so no part of it sits in a scroll area on a phone. Each formula's
 * width in ems is measured here once (`--formula-em`); styles.css (`math.fit`) turns that and the
 * box's width into a font size, so the fit follows the box as the window changes.
 */
export function fitFormulas(root = document) {
  const formulas = [...root.querySelectorAll("math[display=block]")];
  for (const m of formulas) {
    m.classList.remove("fit");
    m.style.width = "max-content";
  }
  const ems = formulas.map((m) => m.getBoundingClientRect().width / parseFloat(getComputedStyle(m).fontSize));
  formulas.forEach((m, i) => {
    m.style.width = "";
    m.style.setProperty("--formula-em", ems[i].toFixed(3));
    m.classList.add("fit");
  });
}
