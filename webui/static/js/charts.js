// Charts drawn as inline SVG at the container's own pixel width (redrawn when it changes).

import { count, h, outcomeLabel, s } from "./util.js";

const observers = new WeakMap();

/** Draw with draw(width) into container now and whenever its width changes. */
function responsive(container, draw) {
  const render = () => container.replaceChildren(...[draw(Math.max(260, container.clientWidth))].flat());
  render();
  if (!observers.has(container)) {
    let last = container.clientWidth;
    const observer = new ResizeObserver(() => {
      if (Math.abs(container.clientWidth - last) > 4) { last = container.clientWidth; observers.get(container)(); }
    });
    observer.observe(container);
  }
  observers.set(container, render);
}

/** Nice round tick values from 0 to at least max. */
function ticks(max, wanted = 4) {
  if (max <= 0) return [0, 1];
  const raw = max / wanted;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((m) => m >= raw && (m >= 1 || m === Math.round(m))) || power * 10;
  const whole = Math.max(1, Math.round(step));
  const values = [];
  for (let v = 0; v < max + whole; v += whole) { values.push(v); if (v >= max) break; }
  return values;
}

const pct = (n, total) => (total ? `${((n / total) * 100).toFixed(n / total < 0.001 && n ? 2 : 1)}%` : "0%");

/** Horizontal bars, one per outcome, with count and share. */
export function outcomeBars(container, outcomes, counts) {
  const total = outcomes.reduce((n, o) => n + (counts[o] || 0), 0);
  const max = Math.max(1, ...outcomes.map((o) => counts[o] || 0));
  responsive(container, (width) => {
    const rowH = 30;
    const left = 84;
    const right = 118;
    const barW = width - left - right;
    const height = outcomes.length * rowH;
    return s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
      "aria-label": `Cases by outcome: ${outcomes.map((o) => `${counts[o] || 0} ${o}`).join(", ")}` },
    outcomes.map((o, i) => {
      const n = counts[o] || 0;
      const y = i * rowH;
      const w = n ? Math.max(2, (n / max) * barW) : 0;
      return s("g", { class: `o-${o}` },
        s("title", {}, `${o}: ${count(n)} (${pct(n, total)})`),
        s("text", { x: 0, y: y + 19, class: "label" }, outcomeLabel(o).toLowerCase()),
        s("rect", { class: "track", x: left, y: y + 6, width: barW, height: 16, rx: 4 }),
        s("rect", { class: "bar", x: left, y: y + 6, width: w, height: 16, rx: 4 }),
        s("text", { x: width, y: y + 19, "text-anchor": "end", class: "value" }, `${count(n)} · ${pct(n, total)}`));
    }));
  });
}

/** Bins over the numbers seen: one per number, or a round width when there are too many. */
function bins(rows, maxBins) {
  const numbers = rows.map((r) => r.number);
  const lo = Math.min(...numbers);
  const hi = Math.max(...numbers);
  const span = hi - lo + 1;
  let width = 1;
  for (const m of [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000, 20000, 50000, 1e5, 1e6]) {
    width = m;
    if (Math.ceil(span / m) <= maxBins) break;
  }
  const start = Math.floor(lo / width) * width;
  const n = Math.floor((hi - start) / width) + 1;
  return { start, width, n };
}

/**
 * Columns: how many cases had each number (deals, piles, waits), by outcome: stacked in one
 * plot, or (split) one band per outcome with its own scale, so a rare outcome stays visible.
 * `tip` (an element) shows the column under the pointer.
 */
export function distribution(container, dist, tip, { split = false, empty = "Nothing solved yet." } = {}) {
  const rows = dist.by_number.filter((r) => r.number !== null);
  if (!rows.length) {
    container.replaceChildren(h("p", { class: "muted" }, empty));
    return;
  }
  const present = dist.outcomes.filter((o) => rows.some((r) => r.outcome === o));
  responsive(container, (width) => {
    const left = 56;
    const right = 8;
    const top = 8;
    const bottom = 34;
    const plotW = width - left - right;
    const { start, width: binW, n } = bins(rows, Math.max(8, Math.min(60, Math.floor(plotW / 14))));
    const cols = Array.from({ length: n }, () => Object.fromEntries(dist.outcomes.map((o) => [o, 0])));
    for (const r of rows) cols[Math.floor((r.number - start) / binW)][r.outcome] += r.count;
    const step = plotW / n;
    const gap = step > 64 ? step - 48 : step > 6 ? Math.min(4, step * 0.18) : 0; // columns at most 48 px wide
    const label = (i) => (binW === 1 ? `${start + i}` : `${start + i * binW}–${start + (i + 1) * binW - 1}`);
    const name = dist.number_name;
    const describe = (i) => `${label(i)} ${name}: ${present.map((o) => `${count(cols[i][o])} ${o}`).join(", ")}`;
    // One band (stacked) or one per outcome (split), each with its own scale.
    const bandH = split ? Math.max(64, Math.min(110, Math.floor(300 / present.length))) : 200;
    const bandGap = split ? 14 : 0;
    const bands = split ? present.map((o) => [o]) : [present];
    const height = top + bands.length * bandH + (bands.length - 1) * bandGap + bottom;
    const parts = [];
    bands.forEach((outcomes, b) => {
      const y0 = top + b * (bandH + bandGap);
      const totals = cols.map((c) => outcomes.reduce((t, o) => t + c[o], 0));
      const yTicks = ticks(Math.max(...totals), split ? 2 : 4);
      const yMax = yTicks[yTicks.length - 1];
      const y = (v) => y0 + bandH - (v / yMax) * bandH;
      for (const t of yTicks) {
        parts.push(s("line", { class: "grid-line", x1: left, x2: width - right, y1: y(t), y2: y(t) }),
          s("text", { x: left - 8, y: y(t) + 4, "text-anchor": "end" }, count(t)));
      }
      if (split) parts.push(s("text", { x: left + 6, y: y0 + 12, class: `label o-${outcomes[0]}` }, outcomeLabel(outcomes[0]).toLowerCase()));
      cols.forEach((c, i) => {
        let acc = 0;
        const x = left + i * step + gap / 2;
        const segs = outcomes.filter((o) => c[o]).map((o) => {
          const bottomY = y(acc);
          acc += c[o];
          return s("rect", { class: `seg o-${o}`, x, y: y(acc), width: Math.max(1, step - gap), height: Math.max(1, bottomY - y(acc)) });
        });
        const g = s("g", { class: "col" }, s("title", {}, describe(i)),
          s("rect", { class: "hit", x: left + i * step, y: y0, width: step, height: bandH }), segs);
        if (tip) g.addEventListener("pointerenter", () => { tip.textContent = describe(i); });
        parts.push(g);
      });
      parts.push(s("line", { class: "axis", x1: left, x2: width - right, y1: y0 + bandH, y2: y0 + bandH }));
    });
    const axisY = height - bottom;
    const every = Math.max(1, Math.ceil(n / Math.max(1, Math.floor(plotW / (binW === 1 ? 28 : 56)))));
    cols.forEach((_, i) => {
      if (i % every === 0) {
        parts.push(s("text", { x: left + i * step + step / 2, y: axisY + 16, "text-anchor": "middle" }, binW === 1 ? label(i) : String(start + i * binW)));
      }
    });
    parts.push(s("text", { x: left + plotW / 2, y: height - 2, "text-anchor": "middle" }, `number of ${name}${binW > 1 ? ` (columns of ${binW})` : ""}`));
    const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
      "aria-label": `Cases by number of ${name}, from ${start} to ${start + n * binW - 1}, ${split ? "one band per outcome" : "stacked by outcome"}` }, parts);
    const legend = h("div", { class: "chart-legend" }, dist.outcomes.map((o) => h("span", { class: "legend-item" },
      h("i", { class: `swatch o-${o}`, "aria-hidden": "true" }), `${outcomeLabel(o).toLowerCase()} (${count(dist.counts[o] || 0)})`)));
    return [svg, legend];
  });
}

/** Whether an outcome is rare enough (under a tenth of the cases) to be lost in a stacked chart. */
export function hasRareOutcome(dist) {
  const total = Object.values(dist.counts).reduce((a, b) => a + b, 0);
  return Object.values(dist.counts).some((n) => n > 0 && n < total / 10);
}

// Times in UTC, as everywhere on the pages (util.utcTime).
const CLOCK = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: "UTC" });
const PALETTE = ["var(--c-running)", "var(--c-win)", "var(--c-draw)", "var(--c-ready)", "var(--accent)", "var(--c-failed)"];

/**
 * Cases per second over time (a ThroughputView): the first series as an area, any others as lines
 * in their own colours, with a legend. series: [{name, throughput}]; `empty` is said when there is no point.
 */
export function rateChart(container, series, label, empty = "Nothing solved yet.") {
  const list = Array.isArray(series) ? series : [{ name: label, throughput: series }];
  const main = list[0].throughput;
  const points = main.points;
  if (!points.length) { container.replaceChildren(h("p", { class: "muted" }, empty)); return; }
  const start = Date.parse(points[0].at);
  const step = main.interval_seconds * 1000;
  const end = Date.parse(points[points.length - 1].at) + step;
  const peak = Math.max(1, ...list.flatMap((one) => one.throughput.points.map((p) => p.rate)));
  const latest = points[points.length - 1].rate;
  responsive(container, (width) => {
    const height = 150;
    const left = 46;
    const top = 8;
    const bottom = 22;
    const plotW = width - left - 8;
    const plotH = height - top - bottom;
    const axis = ticks(peak, 3);
    const yMax = axis[axis.length - 1] || 1;
    const x = (at) => left + ((Date.parse(at) + step / 2 - start) / (end - start)) * plotW;
    const y = (rate) => top + plotH - (rate / yMax) * plotH;
    const parts = axis.map((v) => [
      s("line", { class: "grid-line", x1: left, x2: width - 8, y1: y(v), y2: y(v) }),
      s("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end" }, count(v))]);
    const times = [start, start + (end - start) / 2, end];
    times.forEach((t, i) => parts.push(s("text", { x: left + ((t - start) / (end - start)) * plotW, y: height - 4,
      "text-anchor": ["start", "middle", "end"][i] }, CLOCK.format(new Date(t)))));
    list.forEach((one, i) => {
      const pts = one.throughput.points;
      if (!pts.length) return;
      const line = pts.map((p) => `${x(p.at).toFixed(1)},${y(p.rate).toFixed(1)}`).join(" ");
      const colour = PALETTE[i % PALETTE.length];
      if (i === 0) {
        parts.push(s("polygon", { class: "rate-area", style: { fill: colour },
          points: `${x(pts[0].at).toFixed(1)},${y(0)} ${line} ${x(pts[pts.length - 1].at).toFixed(1)},${y(0)}` }));
      }
      parts.push(s("polyline", { class: "rate-line", style: { stroke: colour }, points: line }));
      // A run shorter than two intervals has no line to draw: its points show as dots.
      if (pts.length < 3) {
        for (const p of pts) parts.push(s("circle", { class: "rate-dot", style: { fill: colour }, cx: x(p.at), cy: y(p.rate), r: 4 }));
      }
    });
    const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
      "aria-label": `Cases per second for ${list[0].name}, every ${main.interval_seconds} s from ${CLOCK.format(new Date(start))} `
        + `to ${CLOCK.format(new Date(end))}: peak ${count(peak)}, last ${count(latest)}` }, parts);
    if (list.length < 2) return svg;
    const legend = h("div", { class: "chart-legend" }, list.map((one, i) => h("span", { class: "legend-item" },
      h("i", { class: "swatch", style: { background: PALETTE[i % PALETTE.length] }, "aria-hidden": "true" }), one.name)));
    return [svg, legend];
  });
}
