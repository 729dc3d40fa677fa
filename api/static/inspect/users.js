// Users: a tenant's people, each with the graph their conversations feed, where each fact came from, and the
// per-source profile that decides what feeds it. Read-only, like the rest of the page.
import { call } from "./api.js";
import { $, h, clear, show, when } from "./dom.js";

const userPath = (id) => `/v1/users/${encodeURIComponent(id)}`;
const memoryLink = (id) => h("a", { href: `#/m/${encodeURIComponent(id)}`, class: "memory-link" }, id);

export async function loadUsers(state, reset) {
  if (reset) state.userCursor = null;
  const params = new URLSearchParams({ limit: "50" });
  if (state.userCursor) params.set("cursor", state.userCursor);
  const page = await call(`/v1/users?${params}`);
  const list = $("users");
  if (reset) clear(list);
  for (const u of page.users) {
    list.append(h("li", { dataset: { user: u.user_id } },
      h("div", { class: "id" }, u.user_id),
      h("div", { class: "meta" }, `${u.memories} conversations · ${u.facts} facts`)));
  }
  state.userCursor = page.next_cursor;
  show($("users-more"), Boolean(page.next_cursor));
  show($("users-empty"), !list.children.length);
}

function retiredWhy(f) {
  if (f.merged_into) return `restates ${f.merged_into}`;
  if (f.retired_by === "forgotten") return "forgotten by request";
  if (f.retired_at) return `${f.retired_as ? `${f.retired_as.replace("_", " ")}, ` : ""}retired ${when(f.retired_at)}${f.retired_by ? ` by ${f.retired_by}` : ""}`;
  return "current";
}

export async function openUser(id) {
  const [user, facts] = await Promise.all([call(userPath(id)), call(`${userPath(id)}/facts`)]);
  $("user-title").textContent = `User ${user.user_id}`;
  clear($("user-summary")).append(
    h("div", {}, h("dt", {}, "since"), h("dd", {}, when(user.created_at))),
    h("div", {}, h("dt", {}, "conversations"), h("dd", {}, String(user.memories.length))),
    h("div", {}, h("dt", {}, "facts in force"), h("dd", {}, String(user.facts_in_force))));
  const conversations = clear($("user-memories"));
  for (const m of user.memories) {
    conversations.append(h("li", {}, memoryLink(m.memory_id), h("span", { class: "muted" }, ` active ${when(m.last_active_at)}`)));
  }
  if (!user.memories.length) conversations.append(h("li", { class: "muted" }, "No conversation holds this user now."));
  const profile = h("table", { id: "user-profile-table" },
    h("thead", {}, h("tr", {}, h("th", {}, "source"), h("th", {}, "feeds the graph"))));
  const rows = h("tbody");
  for (const [source, fed] of Object.entries(user.profile).sort()) {
    rows.append(h("tr", { dataset: { source }, class: fed ? "current" : "retired" },
      h("td", {}, source), h("td", {}, fed ? "feeds" : "muted")));
  }
  profile.append(rows);
  clear($("user-profile")).append(profile);
  const table = h("table", { id: "user-facts-table" },
    h("thead", {}, h("tr", {}, ...["fact", "links", "source", "kind", "from", "written", "state"].map((c) => h("th", {}, c)))));
  const body = h("tbody");
  for (const f of facts.facts.slice().reverse()) {
    const retired = Boolean(f.retired_at || f.merged_into);
    body.append(h("tr", { class: retired ? "retired" : "current", dataset: { fact: f.fact_key } },
      h("td", {}, f.note),
      h("td", {}, `${f.subject} → ${f.object}`),
      h("td", {}, f.source),
      h("td", { class: "kind" }, (f.kind || "fact").replace("_", " ")),
      h("td", {}, f.origin_memory_id ? memoryLink(f.origin_memory_id) : h("span", { class: "muted" }, "added here")),
      h("td", {}, when(f.at)),
      h("td", { class: "why" }, retiredWhy(f))));
  }
  table.append(body);
  clear($("user-facts")).append(
    h("p", { class: "muted", id: "user-facts-count" }, `${facts.facts.length} facts`), table);
}
