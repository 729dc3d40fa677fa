// The timeline: every episode on a strip (canvas, so ten thousand cost nothing), and the window's episodes by
// turn as SVG, coloured by state, with each fade, sleep and ceiling seal marked at its turn.
import { s, clear, width } from "./dom.js";

const COLOURS = { live: "#2e7d32", leaving: "#ef9a00", sealed: "#1e63b8", forgotten: "#9aa0a6" };
const LANE = 22, TOP = 16, AXIS = 22;

export function renderOverview(canvas, episodes, range, onPick) {
  // The stylesheet sizes the canvas to its card; its pixels follow that size.
  const w = width(canvas), ratio = window.devicePixelRatio || 1;
  canvas.width = w * ratio;
  canvas.height = 28 * ratio;
  const ctx = canvas.getContext("2d");
  ctx.scale(ratio, ratio);
  ctx.clearRect(0, 0, w, 28);
  const n = episodes.length;
  if (!n) return;
  const per = w / n;
  for (let i = 0; i < n; i++) {
    ctx.fillStyle = COLOURS[episodes[i].state] || "#000";
    ctx.fillRect(i * per, 4, Math.max(per, 0.6), 20);
  }
  ctx.strokeStyle = "#000";
  ctx.lineWidth = 2;
  ctx.strokeRect(range[0] * per + 1, 1, Math.max((range[1] - range[0]) * per - 2, 2), 26);
  canvas.onclick = (event) => {
    const box = canvas.getBoundingClientRect();
    onPick(Math.floor(((event.clientX - box.left) / box.width) * n));
  };
}

// Overlapping episodes (a turn split between two) go on the next free lane.
function lanes(episodes) {
  const ends = [];
  return episodes.map((e) => {
    let lane = ends.findIndex((end) => end < e.first_turn);
    if (lane < 0) { lane = ends.length; ends.push(0); }
    ends[lane] = e.last_turn;
    return lane;
  });
}

// The window's turns: from its first episode to where the next window starts (or past the current turn, for the
// latest window, so the fade a decorate of this turn made has its mark).
export function turnScale(episodes, w, endTurn) {
  const lo = Math.min(...episodes.map((e) => e.first_turn));
  const hi = Math.max(endTurn || 0, Math.max(...episodes.map((e) => e.last_turn)) + 1);
  const left = 40, right = w - 12;
  return { lo, hi, x: (turn) => left + ((turn - lo) / Math.max(hi - lo, 1)) * (right - left), left, right };
}

export function renderWindow(container, episodes, markers, hover, endTurn) {
  clear(container);
  if (!episodes.length) return;
  const w = width(container), scale = turnScale(episodes, w, endTurn), lane = lanes(episodes);
  const height = TOP + LANE * (Math.max(...lane) + 1) + AXIS;
  const svg = s("svg", { viewBox: `0 0 ${w} ${height}`, height, role: "img",
    "aria-label": `${episodes.length} episodes, turns ${scale.lo} to ${scale.hi - 1}` });
  const group = s("g", { class: "episodes" });
  episodes.forEach((e, i) => {
    const x0 = scale.x(e.first_turn), x1 = scale.x(e.last_turn + 1);
    group.append(s("rect", {
      class: `episode ${e.state}`, x: x0.toFixed(1), y: TOP + lane[i] * LANE, width: Math.max(x1 - x0, 1).toFixed(1),
      height: LANE - 4, dataset: { episode: e.id, state: e.state },
    }));
  });
  group.addEventListener("mouseover", (ev) => ev.target.dataset.episode && hover.over(ev.target.dataset.episode, ev));
  group.addEventListener("mousemove", (ev) => hover.move(ev));
  group.addEventListener("mouseout", () => hover.out());
  svg.append(group);
  const cutTo = Math.max(...episodes.map((e) => e.last_turn)) + 1;
  if (scale.hi > cutTo + 1) {  // turns after the window's last episode: not cut into episodes yet, or the next window's
    svg.append(s("rect", { class: "uncut", x: scale.x(cutTo), y: TOP, width: scale.x(scale.hi) - scale.x(cutTo), height: LANE - 4 },
      s("title", {}, `turns ${cutTo}–${scale.hi - 1}: not in this window's episodes`)));
  }
  const marks = s("g", { class: "markers" });
  for (const m of markers) {
    if (m.turn === null || m.turn < scale.lo || m.turn > scale.hi) continue;
    const x = scale.x(m.turn).toFixed(1);
    marks.append(s("line", { class: `marker ${m.reason}`, x1: x, x2: x, y1: 2, y2: height - AXIS,
      dataset: { reason: m.reason, turn: m.turn } },
      s("title", {}, `${m.reason} at turn ${m.turn}: ${m.episodes} episode${m.episodes === 1 ? "" : "s"} moved`)));
    marks.append(s("text", { x: Number(x) + 2, y: 11 }, m.reason[0].toUpperCase()));
  }
  svg.append(marks);
  svg.append(axis(scale, height - AXIS + 4, "turn"));
  container.append(svg);
}

function axis(scale, y, label) {
  const g = s("g", { class: "axis" });
  g.append(s("line", { x1: scale.left, x2: scale.right, y1: y, y2: y }));
  const span = scale.hi - scale.lo, step = Math.max(1, Math.ceil(span / 10));
  for (let t = scale.lo; t < scale.hi; t += step) {
    g.append(s("text", { x: scale.x(t), y: y + 13 }, String(t)));
  }
  g.append(s("text", { x: 2, y: y + 13 }, label));
  return g;
}

export function renderSignificance(container, episodes, significance, hover, endTurn) {
  clear(container);
  if (!episodes.length) return;
  const w = width(container), scale = turnScale(episodes, w, endTurn), height = 56;
  const top = Math.max(1e-9, ...episodes.map((e) => significance.get(e.id) || 0));
  const svg = s("svg", { viewBox: `0 0 ${w} ${height}`, height, role: "img", "aria-label": "significance" });
  svg.append(s("text", { x: 2, y: 12 }, "significance"));
  const g = s("g", { class: "bars" });
  for (const e of episodes) {
    const value = significance.get(e.id) || 0, x0 = scale.x(e.first_turn), x1 = scale.x(e.last_turn + 1);
    const bar = Math.max(1, (value / top) * (height - 16));
    g.append(s("rect", { class: "bar", x: x0.toFixed(1), y: (height - bar).toFixed(1),
      width: Math.max(x1 - x0 - 1, 1).toFixed(1), height: bar.toFixed(1), dataset: { episode: e.id } }));
  }
  g.addEventListener("mouseover", (ev) => ev.target.dataset.episode && hover.over(ev.target.dataset.episode, ev));
  g.addEventListener("mousemove", (ev) => hover.move(ev));
  g.addEventListener("mouseout", () => hover.out());
  svg.append(g);
  container.append(svg);
}
