// Small DOM helpers. Text always goes in as text nodes: nothing a memory holds is ever parsed as markup.
const SVG = "http://www.w3.org/2000/svg";

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  return fill(node, attrs, children);
}

export function s(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG, tag), attrs, children);
}

function fill(node, attrs, children) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const $ = (id) => document.getElementById(id);

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

export function show(node, visible) { node.hidden = !visible; }

export function when(iso) {
  if (!iso) return "never";
  const d = new Date(iso);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC").replace(/Z$/, " UTC");
}

export function duration(ms) {
  const sec = Math.max(0, Math.round(ms / 1000));
  const d = Math.floor(sec / 86400), hr = Math.floor((sec % 86400) / 3600), min = Math.floor((sec % 3600) / 60);
  if (d) return `${d} d ${hr} h`;
  if (hr) return `${hr} h ${min} min`;
  if (min) return `${min} min ${sec % 60} s`;
  return `${sec} s`;
}

export const STATES = ["live", "leaving", "sealed", "forgotten"];

export function width(node, fallback = 900) {
  return Math.max(320, Math.floor(node.clientWidth || fallback));
}
