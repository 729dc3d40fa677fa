// The inspector: sign in with a tenant's key, list its memories, and show one memory's episodes, activation,
// facts, graph and recall. Read-only: it only ever GETs.
import { ApiError, call, memoryPath, session } from "./api.js";
import { $, h, clear, show, when, STATES } from "./dom.js";
import { renderOverview, renderWindow, renderSignificance } from "./timeline.js";
import { renderActivation, highlight } from "./activation.js";
import { renderSummary, renderNoteAsk, renderFactsBlock, renderGraph, renderRecall, episodeCard } from "./panels.js";
import { loadUsers, openUser } from "./users.js";

const WINDOW = 150;           // episodes drawn at once: the timeline stays light at ten thousand
const EXPORT_AUTO_LIMIT = 20000; // messages; a larger export is loaded on request only
const POINTS = 120;           // moments per activation line

const view = { token: 0, memory: null, state: null, facts: [], exported: null, start: 0, activation: null,
  cursor: null, filter: "", userCursor: null };

function describe(error) {
  if (error instanceof ApiError) return `${error.message} (${error.status || "no answer"}${error.type ? ` ${error.type}` : ""})`;
  return String(error);
}

// ---- signing in ------------------------------------------------------------------------------------------
function showSignin(message) {
  show($("signin"), true);
  show($("app"), false);
  show($("who"), false);
  $("signin-error").textContent = message || "";
  show($("signin-error"), Boolean(message));
  $("api-key").focus();
}

async function signIn(key) {
  session.set(key);
  try {
    await Promise.all([loadMemories(true), loadUsers(view, true)]);
  } catch (error) {
    session.clear();
    showSignin(error instanceof ApiError && error.status === 401
      ? `This API key was refused: ${describe(error)}` : `Could not list memories: ${describe(error)}`);
    return;
  }
  show($("signin"), false);
  show($("app"), true);
  show($("who"), true);
  $("who-key").textContent = `key …${key.slice(-4)}`;
  route();
}

// ---- the memory list -------------------------------------------------------------------------------------
async function loadMemories(reset) {
  if (reset) view.cursor = null;
  const params = new URLSearchParams({ limit: "50" });
  if (view.cursor) params.set("cursor", view.cursor);
  if (view.filter) params.set("prefix", view.filter);
  const page = await call(`/v1/memories?${params}`);
  const list = $("memories");
  if (reset) clear(list);
  for (const m of page.memories) {
    const total = STATES.reduce((n, st) => n + (m.episodes[st] || 0), 0);
    list.append(h("li", { dataset: { memory: m.memory_id }, class: m.memory_id === view.memory ? "current" : "" },
      h("div", { class: "id" }, m.memory_id),
      h("div", { class: "meta" }, `${m.turns} turns · ${total} episodes · ${m.facts} facts`),
      h("div", { class: "meta" }, `active ${when(m.last_activity_at)}${m.note_ask_pending ? " · note ask pending" : ""}`)));
  }
  view.cursor = page.next_cursor;
  show($("memories-more"), Boolean(page.next_cursor));
  show($("memories-empty"), !list.children.length);
}

// ---- one user --------------------------------------------------------------------------------------------
async function showUser(id) {
  const token = ++view.token;
  document.body.dataset.ready = "loading";
  show($("user-error"), false);
  try {
    await openUser(id);
  } catch (error) {
    if (token !== view.token) return;
    if (error instanceof ApiError && error.status === 401) { session.clear(); showSignin(`Signed out: ${describe(error)}`); return; }
    show($("user-body"), false);
    $("user-error").textContent = error instanceof ApiError && error.status === 404
      ? `No user “${id}” for this key: ${describe(error)}` : `Could not open user “${id}”: ${describe(error)}`;
    show($("user-error"), true);
    document.body.dataset.ready = "error";
    return;
  }
  if (token !== view.token) return;
  show($("user-body"), true);
  document.body.dataset.ready = "yes";
}

// ---- one memory ------------------------------------------------------------------------------------------
function route() {
  const user = location.hash.match(/^#\/u\/(.+)$/);
  const userId = user ? decodeURIComponent(user[1]) : null;
  for (const li of $("users").children) li.classList.toggle("current", li.dataset.user === userId);
  show($("user"), Boolean(userId));
  show($("memory"), !userId);
  if (userId) { showUser(userId); return; }
  const match = location.hash.match(/^#\/m\/(.+)$/);
  const id = match ? decodeURIComponent(match[1]) : null;
  for (const li of $("memories").children) li.classList.toggle("current", li.dataset.memory === id);
  if (id) openMemory(id);
  else { show($("memory-body"), false); show($("memory-error"), false); show($("memory-none"), true); }
}

function memoryError(message) {
  show($("memory-body"), false);
  show($("memory-none"), false);
  $("memory-error").textContent = message;
  show($("memory-error"), true);
  document.body.dataset.ready = "error";
}

async function openMemory(id) {
  const token = ++view.token;
  document.body.dataset.ready = "loading";
  Object.assign(view, { memory: id, state: null, facts: [], exported: null, activation: null });
  show($("memory-none"), false);
  show($("memory-error"), false);
  let state, facts, workflow;
  // The first window is the newest episodes: its activation is asked for at once, beside the memory itself.
  const firstWindow = call(`${memoryPath(id)}/activation?newest=true&limit=${WINDOW}&points=${POINTS}`);
  firstWindow.catch(() => {});
  try {
    [state, facts, workflow] = await Promise.all([
      call(memoryPath(id)), call(`${memoryPath(id)}/facts`), call(`${memoryPath(id)}/workflow`)]);
  } catch (error) {
    if (token !== view.token) return;
    if (error instanceof ApiError && error.status === 401) { session.clear(); showSignin(`Signed out: ${describe(error)}`); return; }
    memoryError(error instanceof ApiError && error.status === 404
      ? `No memory “${id}” for this key: ${describe(error)}` : `Could not open “${id}”: ${describe(error)}`);
    return;
  }
  if (token !== view.token) return;
  view.state = state;
  view.facts = facts.facts;
  const counts = Object.fromEntries(STATES.map((st) => [st, 0]));
  for (const e of state.episodes) counts[e.state] += 1;
  renderSummary(state, counts);
  renderNoteAsk(state, workflow);
  renderFactsBlock(state.facts_block);
  renderGraph(view.facts, null, $("graph-search").value);
  show($("memory-body"), true);
  view.start = Math.max(0, state.episodes.length - WINDOW);
  await drawWindow(token, firstWindow);
  if (token !== view.token) return;
  document.body.dataset.ready = "yes";
  loadExport(token, state.messages <= EXPORT_AUTO_LIMIT);
}

async function loadExport(token, automatic) {
  if (!automatic) {
    const button = h("button", { type: "button" }, `Load the export (${view.state.messages} messages) for recall blocks, entities and turn texts`);
    button.onclick = () => loadExport(token, true);
    renderRecall(null, button);
    document.body.dataset.exported = "deferred";
    return;
  }
  renderRecall(null);
  try {
    const exported = await call(`${memoryPath(view.memory)}/export`);
    if (token !== view.token) return;
    view.exported = exported;
    renderRecall(exported);
    renderGraph(view.facts, exported, $("graph-search").value);
  } catch (error) {
    if (token !== view.token) return;
    clear($("recall")).append(h("p", { class: "error" }, `Could not load the export: ${describe(error)}`));
    document.body.dataset.exported = "failed";
    return;
  }
  document.body.dataset.exported = "yes";
}

function windowEpisodes() {
  return view.state.episodes.slice(view.start, view.start + WINDOW);
}

async function drawWindow(token, prefetched) {
  const all = view.state.episodes, shown = windowEpisodes();
  $("window-label").textContent = all.length
    ? `episodes ${view.start + 1}–${view.start + shown.length} of ${all.length}` : "no episodes yet (history not cut)";
  $("window-prev").disabled = view.start <= 0;
  $("window-next").disabled = view.start + WINDOW >= all.length;
  renderOverview($("overview"), all, [view.start, view.start + shown.length], (i) => {
    view.start = Math.max(0, Math.min(all.length - WINDOW, i - Math.floor(WINDOW / 2)));
    drawWindow(view.token);
  });
  if (!shown.length) {
    clear($("timeline")); clear($("significance"));
    clear($("activation")).append(h("p", { class: "muted" }, "No episodes yet: the history has not been cut."));
    return;
  }
  const first = Math.min(...shown.map((e) => e.first_turn)), last = Math.max(...shown.map((e) => e.last_turn));
  let data;
  try {
    data = await (prefetched
      || call(`${memoryPath(view.memory)}/activation?first_turn=${first}&last_turn=${last}&limit=${WINDOW * 2}&points=${POINTS}`));
  } catch (error) {
    if (token !== view.token) return;
    clear($("activation")).append(h("p", { class: "error" }, `Could not compute activation: ${describe(error)}`));
    data = null;
  }
  if (token !== view.token) return;
  view.activation = data;
  const markers = data ? data.markers : [];
  const next = all[view.start + shown.length];
  const endTurn = next ? next.first_turn : view.state.turns + 1;
  renderWindow($("timeline"), shown, markers, hover, endTurn);
  renderSignificance($("significance"), shown, new Map(shown.map((e) => [e.id, e.significance])), hover, endTurn);
  if (data) renderActivation($("activation"), data, new Set(shown.map((e) => e.id)), $("log-scale").checked, hover);
}

// ---- hovering an episode ---------------------------------------------------------------------------------
const tooltip = $("tooltip");
const hover = {
  current: null,
  over(id, event) {
    const episode = view.state && view.state.episodes.find((e) => e.id === id);
    if (!episode) return;
    if (this.current) highlight(document, this.current, false);
    this.current = id;
    highlight(document, id, true);
    clear(tooltip).append(...episodeCard(episode, view.facts, view.exported && view.exported.messages));
    tooltip.dataset.episode = id;
    show(tooltip, true);
    this.move(event);
  },
  move(event) {
    const x = Math.min(event.clientX + 14, window.innerWidth - tooltip.offsetWidth - 8);
    const y = event.clientY + 16 + tooltip.offsetHeight > window.innerHeight ? event.clientY - tooltip.offsetHeight - 10 : event.clientY + 16;
    tooltip.style.left = `${Math.max(4, x)}px`;
    tooltip.style.top = `${Math.max(4, y)}px`;
  },
  out() {
    if (this.current) highlight(document, this.current, false);
    this.current = null;
    show(tooltip, false);
  },
};

// ---- wiring ----------------------------------------------------------------------------------------------
function wire() {
  $("signin-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = $("api-key").value.trim();
    $("api-key").value = "";
    if (key) signIn(key);
  });
  $("sign-out").onclick = () => { session.clear(); view.token++; location.hash = ""; showSignin(""); };
  $("memories").addEventListener("click", (event) => {
    const li = event.target.closest("li");
    if (li) location.hash = `#/m/${encodeURIComponent(li.dataset.memory)}`;
  });
  $("memories-more").onclick = () => loadMemories(false).catch((e) => memoryError(describe(e)));
  $("users").addEventListener("click", (event) => {
    const li = event.target.closest("li");
    if (li) location.hash = `#/u/${encodeURIComponent(li.dataset.user)}`;
  });
  $("users-more").onclick = () => loadUsers(view, false).catch((e) => memoryError(describe(e)));
  let typing = null;
  $("memory-filter").addEventListener("input", (event) => {
    clearTimeout(typing);
    typing = setTimeout(() => { view.filter = event.target.value.trim(); loadMemories(true).catch((e) => memoryError(describe(e))); }, 250);
  });
  $("window-prev").onclick = () => { view.start = Math.max(0, view.start - WINDOW); drawWindow(view.token); };
  $("window-next").onclick = () => {
    view.start = Math.min(Math.max(0, view.state.episodes.length - WINDOW), view.start + WINDOW);
    drawWindow(view.token);
  };
  $("log-scale").onchange = () => view.activation && renderActivation($("activation"), view.activation,
    new Set(windowEpisodes().map((e) => e.id)), $("log-scale").checked, hover);
  $("graph-search").addEventListener("input", (event) => renderGraph(view.facts, view.exported, event.target.value));
  window.addEventListener("hashchange", route);
  let resizing = null;
  window.addEventListener("resize", () => { clearTimeout(resizing); resizing = setTimeout(() => view.state && drawWindow(view.token), 200); });
}

wire();
if (session.key) signIn(session.key);
else showSignin("");
