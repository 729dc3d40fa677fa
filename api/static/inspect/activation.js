// Activation over time: one polyline per episode in the window, values as the gateway's engine computed them.
import { s, clear, width, when } from "./dom.js";

const FLOOR = 1e-4;

export function renderActivation(container, data, shownIds, logScale, hover) {
  clear(container);
  const series = data.episodes.filter((e) => shownIds.has(e.id));
  const w = width(container), height = 260, left = 52, right = w - 12, top = 10, bottom = height - 24;
  const times = data.times.map((t) => Date.parse(t));
  const t0 = times[0], t1 = times[times.length - 1];
  const x = (t) => left + ((t - t0) / Math.max(t1 - t0, 1)) * (right - left);
  let hi = FLOOR * 10;
  for (const e of series) for (const v of e.activation) if (v !== null && v > hi) hi = v;
  const y = logScale
    ? (v) => bottom - ((Math.log10(Math.max(v, FLOOR)) - Math.log10(FLOOR)) / (Math.log10(hi) - Math.log10(FLOOR))) * (bottom - top)
    : (v) => bottom - (v / hi) * (bottom - top);
  const svg = s("svg", { viewBox: `0 0 ${w} ${height}`, height, role: "img",
    "aria-label": `activation of ${series.length} episodes from ${when(data.from)} to ${when(data.to)}` });
  const axes = s("g", { class: "axis" });
  axes.append(s("line", { x1: left, x2: right, y1: bottom, y2: bottom }), s("line", { x1: left, x2: left, y1: top, y2: bottom }));
  const ticks = logScale ? logTicks(hi) : [0, hi / 2, hi];
  for (const v of ticks) axes.append(s("text", { x: 2, y: y(v) + 4 }, v >= 0.01 || v === 0 ? v.toFixed(2) : v.toExponential(0)));
  axes.append(s("text", { x: left, y: height - 6 }, when(data.from)));
  axes.append(s("text", { x: right, y: height - 6, "text-anchor": "end" }, when(data.to)));
  svg.append(axes);
  const marks = s("g", { class: "markers" });
  for (const m of data.markers) {
    const at = Date.parse(m.at);
    if (at < t0 || at > t1) continue;
    const mx = x(at).toFixed(1);
    marks.append(s("line", { class: `marker ${m.reason}`, x1: mx, x2: mx, y1: top, y2: bottom, dataset: { reason: m.reason } },
      s("title", {}, `${m.reason} at ${when(m.at)} (turn ${m.turn ?? "?"})`)));
  }
  svg.append(marks);
  const lines = s("g", { class: "lines" });
  for (const e of series) {
    const points = [];
    e.activation.forEach((v, i) => { if (v !== null) points.push(`${x(times[i]).toFixed(1)},${y(v).toFixed(1)}`); });
    lines.append(s("polyline", { class: `series ${e.state}`, points: points.join(" "), dataset: { episode: e.id } }));
  }
  lines.addEventListener("mouseover", (ev) => ev.target.dataset.episode && hover.over(ev.target.dataset.episode, ev));
  lines.addEventListener("mousemove", (ev) => hover.move(ev));
  lines.addEventListener("mouseout", () => hover.out());
  svg.append(lines);
  container.append(svg);
  return series.length;
}

function logTicks(hi) {
  const ticks = [];
  for (let p = Math.log10(FLOOR); p <= Math.log10(hi); p++) ticks.push(10 ** p);
  return ticks;
}

export function highlight(root, id, on) {
  for (const node of root.querySelectorAll(`[data-episode="${CSS.escape(id)}"]`)) node.classList.toggle("hot", on);
}
