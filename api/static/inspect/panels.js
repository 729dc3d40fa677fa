// The text panels: summary and note ask, the facts block, the knowledge graph, recall blocks, the hover card.
import { h, $, clear, when, duration, STATES } from "./dom.js";

export function renderSummary(state, counts) {
  $("memory-title").textContent = state.memory_id;
  const items = [
    ["messages", state.messages], ["turns", state.turns], ["episodes", state.episodes.length],
    ["facts in force", state.facts], ["last user message", when(state.last_user_message_at)],
    ["created", when(state.created_at)],
  ];
  clear($("summary")).append(...items.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v))));
  const legend = clear($("legend"));
  for (const st of STATES) {
    legend.append(h("span", { class: "chip", id: `count-${st}`, dataset: { state: st, count: counts[st] } },
      h("i", { class: `state-${st}` }), `${st} ${counts[st]}`));
  }
  for (const m of ["fade", "sleep", "ceiling"]) {
    legend.append(h("span", { class: "chip" }, h("i", { class: `mark-${m}` }), `${m} (marker)`));
  }
}

let ticking = null;

export function renderNoteAsk(state, workflow) {
  const box = clear($("note-ask"));
  clearInterval(ticking);
  const ask = state.note_ask;
  const link = workflow && workflow.temporal_ui_url
    ? h("a", { href: workflow.temporal_ui_url, target: "_blank", rel: "noopener noreferrer", id: "workflow-link" },
      "Open the memory's workflow in the Temporal UI")
    : h("span", { class: "muted" }, workflow ? `Workflow ${workflow.workflow_id} (set LETHE_TEMPORAL_UI_URL to link it)` : "");
  if (!ask.pending) {
    box.className = "";
    box.append(h("span", { id: "note-ask-state" }, "No note ask pending. "), link);
    return;
  }
  box.className = "pending";
  const waited = h("span", { id: "note-ask-waited" });
  // Measured on the gateway's clock, which is also the memory's: the browser's may differ.
  const since = Date.parse(ask.since), serverNow = Date.parse(state.now), loaded = Date.now();
  const tick = () => { waited.textContent = duration(serverNow + (Date.now() - loaded) - since); };
  tick();
  ticking = setInterval(tick, 1000);
  box.append(h("span", { id: "note-ask-state" },
    `Note ask pending for turns ${ask.turns[0]}–${ask.turns[1]}, asked ${ask.asks} time${ask.asks === 1 ? "" : "s"}, `
    + `waiting since ${when(ask.since)} (`), waited, "). ", link);
}

export function renderFactsBlock(text) {
  const pre = $("facts-block");
  pre.textContent = text || "";
  pre.dataset.empty = text ? "no" : "yes";
  if (!text) pre.append(h("span", { class: "muted" }, "No facts block yet: no sealed episode has left facts."));
}

const RETIRED_BY = /(retired|superseded)_by/;

function retiredBy(fact) {
  const key = Object.keys(fact).find((k) => RETIRED_BY.test(k) && fact[k] !== null && fact[k] !== undefined);
  return key ? fact[key] : null;
}

// A fact's claim kind as the table shows it; an open question says whether something has settled it.
export function claimKind(fact) {
  const kind = (fact.kind || "fact").replace("_", " ");
  if (fact.kind === "open_question") return fact.settled_by ? "question (settled)" : "open question";
  return kind;
}

export function isRetired(fact) {
  return Boolean(fact.valid_to || fact.retired_at || retiredBy(fact));
}

// Entities come from the export once the graph keeps them; until then, the names the facts link.
export function renderGraph(facts, exported, query) {
  const q = (query || "").trim().toLowerCase();
  const byKey = new Map(facts.map((f) => [f.fact_key, f]));
  const entityBox = clear($("graph-entities"));
  const entities = exported && Array.isArray(exported.entities) ? exported.entities : null;
  if (entities) {
    const shown = entities.filter((e) => !q || JSON.stringify(e).toLowerCase().includes(q));
    entityBox.append(h("span", { class: "muted" }, `${shown.length} of ${entities.length} entities: `));
    for (const e of shown.slice(0, 300)) {
      // The export lists every name an entity was given in its own section, `entity_aliases`.
      const named = Array.isArray(exported.entity_aliases) ? exported.entity_aliases.filter((a) => a.entity_id === e.id) : [];
      const aliases = named.map((a) => a.name).filter((n) => n !== e.name);
      entityBox.append(h("span", { class: "entity", title: aliases.length ? `also: ${aliases.join(", ")}` : "" },
        e.canonical_name || e.name || e.entity_key || JSON.stringify(e), e.kind ? ` (${e.kind})` : ""));
    }
  } else {
    const names = new Set(facts.flatMap((f) => [f.subject, f.object]).filter((n) => n && (!q || n.toLowerCase().includes(q))));
    entityBox.append(h("span", { class: "muted", id: "graph-entities-note" },
      `Names the facts link (${names.size}); this gateway keeps no resolved entities yet: `));
    for (const n of [...names].slice(0, 300)) entityBox.append(h("span", { class: "entity" }, n));
  }
  const rows = facts.filter((f) => !q || [f.note, f.subject, f.object].join(" ").toLowerCase().includes(q));
  const current = rows.filter((f) => !isRetired(f)).length;
  const table = h("table", { id: "graph-table" },
    h("thead", {}, h("tr", {}, ...["", "kind", "fact", "links", "turns", "written", "retired"].map((c) => h("th", {}, c)))));
  const body = h("tbody");
  for (const f of rows.slice(-1000).reverse()) {
    const retired = isRetired(f), by = retiredBy(f), other = by ? byKey.get(by) || facts.find((x) => x.id === by) : null;
    body.append(h("tr", { class: retired ? "retired" : "current", dataset: { fact: f.fact_key } },
      h("td", {}, f.milestone ? "★" : ""),
      h("td", { class: "kind" }, claimKind(f)),
      h("td", {}, f.note || h("span", { class: "muted" }, "(nothing worth keeping)")),
      h("td", {}, `${f.subject} → ${f.object}`),
      h("td", {}, `${f.first_turn}–${f.last_turn}`),
      h("td", {}, when(f.at)),
      h("td", { class: "why" }, retired ? `${f.retired_as ? `${f.retired_as.replace("_", " ")}, ` : ""}${when(f.valid_to || f.retired_at)}${other ? ` by “${other.note}”` : by ? ` by ${by}` : ""}` : "current")));
  }
  table.append(body);
  clear($("graph-facts")).append(
    h("p", { class: "muted", id: "graph-count" }, `${rows.length} facts (${current} current, ${rows.length - current} retired)`
      + (rows.length > 1000 ? `, the newest 1000 shown` : "")),
    table);
}

export function renderRecall(exported, loadButton) {
  const box = clear($("recall"));
  if (loadButton) { box.append(loadButton); return; }
  if (!exported) { box.append(h("p", { class: "muted" }, "Loading the memory's export…")); return; }
  const blocks = exported.recall_blocks;
  if (!Array.isArray(blocks)) {
    box.append(h("p", { class: "muted", id: "recall-none" }, "None yet: this gateway does not keep recall blocks yet."));
    return;
  }
  if (!blocks.length) {
    box.append(h("p", { class: "muted", id: "recall-none" }, "None yet: no turn of this memory has had a recall block."));
    return;
  }
  for (const block of blocks.slice(-500)) {
    const parts = Object.entries(block).filter(([k, v]) => typeof v === "string" && v.length > 40 && !k.endsWith("_at"));
    box.append(h("div", { class: "recall-turn", dataset: { turn: block.turn } },
      h("b", {}, `Turn ${block.turn ?? "?"}`), block.at ? h("span", { class: "muted" }, ` · ${when(block.at)}`) : "",
      ...parts.map(([k, v]) => h("div", {}, h("span", { class: "muted" }, k.replace(/_/g, " ")), h("pre", {}, v)))));
  }
}

export function episodeCard(episode, facts, messages) {
  const mine = facts.filter((f) => (f.episode_keys || []).includes(episode.id));
  const card = [
    h("b", {}, `${episode.id} · ${episode.state}`), h("br"),
    h("span", { class: "dim" }, `turns ${episode.first_turn}–${episode.last_turn} · ${episode.tokens} tokens · `
      + `activation ${episode.activation} · significance ${episode.significance}`
      // Salience: the kind of moment it was and how strongly it was encoded, once the lane has judged it.
      + (episode.act ? ` · ${episode.act.replace("_", " ")}, salience ${episode.salience}` : "")
      + (episode.sealed_without_facts ? " · sealed without facts" : "")),
  ];
  if (messages) {
    const said = messages.filter((m) => m.turn >= episode.first_turn && m.turn <= episode.last_turn && m.role === "user");
    if (said.length) {
      card.push(h("div", {}, h("span", { class: "dim" }, "user turns:"),
        h("ul", {}, ...said.slice(0, 4).map((m) => h("li", {}, `${m.turn}: ${text(m.body).slice(0, 140)}`)))));
    }
  }
  card.push(h("div", {}, h("span", { class: "dim" }, mine.length ? `facts written for it (${mine.length}):` : "no facts written for it"),
    mine.length ? h("ul", {}, ...mine.slice(0, 6).map((f) => h("li", {}, f.note || "(nothing worth keeping)"))) : ""));
  return card;
}

function text(body) {
  const c = body && (body.content ?? body.output);
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((p) => p.text || "").join(" ");
  return "";
}
