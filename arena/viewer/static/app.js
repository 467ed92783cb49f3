// arena view: every text from the log goes into the page through textContent,
// never as markup, so answers and reviews cannot inject anything. The one
// exception, answers shown as markdown, is HTML the server rendered with raw
// HTML escaped; it is parsed here into an inert document and copied element by
// element through an allow-list (safeMarkdown), never assigned as markup.
"use strict";

const FILTERS = ["model", "reviewer", "verdict", "category"];
const state = { page: 1, pages: 1, filters: {}, current: null };

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(url + ": HTTP " + response.status);
  return response.json();
}

function readLocation() {
  const params = new URLSearchParams(window.location.search);
  for (const name of FILTERS) state.filters[name] = params.get(name) || "";
  state.page = Math.max(1, parseInt(params.get("page") || "1", 10) || 1);
  state.current = params.get("review");
}

function query(extra) {
  const params = new URLSearchParams();
  for (const name of FILTERS) if (state.filters[name]) params.set(name, state.filters[name]);
  params.set("page", String(state.page));
  for (const [k, v] of Object.entries(extra || {})) if (v) params.set(k, v);
  return params;
}

function writeLocation() {
  const params = query({ review: state.current });
  window.history.replaceState(null, "", "?" + params.toString());
}

function fillSelect(name, values) {
  const select = document.getElementById("f-" + name);
  for (const value of values) {
    const option = el("option", value);
    option.value = value;
    select.appendChild(option);
  }
  select.value = values.includes(state.filters[name]) ? state.filters[name] : "";
  state.filters[name] = select.value;
  select.addEventListener("change", () => {
    state.filters[name] = select.value;
    state.page = 1;
    loadPage();
  });
}

async function loadFacets() {
  const facets = await getJSON("/api/facets");
  document.getElementById("run").textContent = facets.run;
  fillSelect("model", facets.models);
  fillSelect("reviewer", facets.reviewers);
  fillSelect("verdict", facets.verdicts);
  fillSelect("category", facets.categories);
  document.getElementById("notes").textContent = facets.notes.join(" ");
}

async function loadPage() {
  const data = await getJSON("/api/reviews?" + query().toString());
  state.page = data.page;
  state.pages = data.pages;
  const body = document.querySelector("#reviews tbody");
  body.replaceChildren();
  for (const row of data.rows) {
    const tr = el("tr");
    tr.dataset.id = row.id;
    if (row.id === state.current) tr.classList.add("current");
    for (const key of ["question_id", "category", "model_a", "model_b", "reviewer", "verdict"]) {
      tr.appendChild(el("td", row[key] === null ? "" : row[key]));
    }
    tr.tabIndex = 0;
    tr.addEventListener("click", () => showBattle(row.id));
    tr.addEventListener("keydown", (event) => {
      if (event.key === "Enter") showBattle(row.id);
    });
    body.appendChild(tr);
  }
  document.getElementById("page-info").textContent =
    "page " + data.page + " of " + data.pages + " (" + data.total + " reviews)";
  document.getElementById("prev").disabled = data.page <= 1;
  document.getElementById("next").disabled = data.page >= data.pages;
  writeLocation();
  document.body.dataset.loaded = String(Date.now());
}

// Elements an answer's markdown may produce; anything else is dropped (script,
// style and the like with their content) or unwrapped (its text kept).
const MARKDOWN_TAGS = new Set(["P", "H1", "H2", "H3", "H4", "H5", "H6", "UL", "OL", "LI", "PRE",
  "CODE", "EM", "STRONG", "BLOCKQUOTE", "A", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "HR",
  "BR", "S", "DEL"]);
const DROPPED_TAGS = new Set(["SCRIPT", "STYLE", "TEMPLATE", "IFRAME", "OBJECT", "EMBED", "SVG",
  "MATH", "NOSCRIPT", "TITLE", "IMG", "VIDEO", "AUDIO", "FORM", "INPUT", "BUTTON", "LINK", "META"]);

function safeHref(href) {
  // Only absolute http, https and mailto links; anything else (javascript:, data:,
  // relative paths into this server) loses its target.
  let url;
  try {
    url = new URL(href);
  } catch (err) {
    return null;
  }
  return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
}

function copySafe(source, target) {
  for (const node of Array.from(source.childNodes)) {
    if (node.nodeType === Node.TEXT_NODE) {
      target.appendChild(document.createTextNode(node.textContent));
      continue;
    }
    if (node.nodeType !== Node.ELEMENT_NODE || DROPPED_TAGS.has(node.tagName)) continue;
    if (!MARKDOWN_TAGS.has(node.tagName)) {
      copySafe(node, target);
      continue;
    }
    const out = document.createElement(node.tagName.toLowerCase());
    if (node.tagName === "A") {
      const href = safeHref(node.getAttribute("href") || "");
      if (href) {
        out.setAttribute("href", href);
        out.setAttribute("rel", "noopener noreferrer nofollow");
        out.setAttribute("target", "_blank");
      }
    }
    if (node.tagName === "OL" && node.hasAttribute("start")) {
      const start = parseInt(node.getAttribute("start"), 10);
      if (Number.isFinite(start)) out.setAttribute("start", String(start));
    }
    copySafe(node, out);
    target.appendChild(out);
  }
}

function safeMarkdown(html) {
  // DOMParser's document is inert: nothing in it runs or loads.
  const parsed = new DOMParser().parseFromString(String(html), "text/html");
  const box = el("div", null, "markdown");
  copySafe(parsed.body, box);
  return box;
}

function turnsBlock(title, turns, rendered) {
  const box = el("div");
  box.appendChild(el("h3", title));
  if (!turns.length) box.appendChild(el("p", "(no text)", "hint"));
  turns.forEach((text, k) => {
    if (turns.length > 1) box.appendChild(el("h4", "turn " + (k + 1)));
    box.appendChild(rendered && typeof rendered[k] === "string" ? safeMarkdown(rendered[k]) : el("pre", text));
  });
  return box;
}

function answerBlock(label, answer) {
  if (!answer) return turnsBlock(label + ": not logged", []);
  const box = turnsBlock(label + ": " + answer.model, answer.turns, answer.html);
  if (answer.status !== "ok") box.appendChild(el("p", answer.status + ": " + (answer.error || ""), "failed"));
  return box;
}

function renderBattle(id, battle) {
  const pane = document.getElementById("battle");
  pane.replaceChildren();
  const q = battle.question;
  pane.appendChild(el("h2", "Question " + q.id + (q.category ? " (" + q.category + ")" : "")));
  q.turns.forEach((text, k) => {
    if (q.turns.length > 1) pane.appendChild(el("h4", "turn " + (k + 1)));
    pane.appendChild(el("pre", text));
  });
  const answers = el("div", null, "answers");
  answers.appendChild(answerBlock("first answer", battle.answers[0]));
  answers.appendChild(answerBlock("second answer", battle.answers[1]));
  pane.appendChild(answers);
  pane.appendChild(el("h3", "Reviews (" + battle.reviews.length + ")"));
  for (const r of battle.reviews) {
    const box = el("div", null, "review" + (r.id === id ? " focus" : ""));
    box.dataset.id = r.id;
    const head = el("p");
    head.appendChild(el("span", r.reviewer + " judged A = " + r.model_a + ", B = " + r.model_b + ": "));
    head.appendChild(el("span", r.verdict, "verdict"));
    if (typeof r.p_a === "number") head.appendChild(el("span", " (share of the win to A: " + r.p_a + ")"));
    box.appendChild(head);
    if (r.text !== null) box.appendChild(el("pre", r.text));
    if (r.error) box.appendChild(el("p", r.error, "failed"));
    pane.appendChild(box);
  }
  for (const d of battle.discussions) {
    const box = el("div", null, "discussion");
    box.appendChild(el("h3", "Discussion " + d.leader + " and " + d.follower + " (" + (d.trigger || "") + ")"));
    box.appendChild(el("p", "A = " + d.model_a + ", B = " + d.model_b + "; outcome: " +
      (d.outcome || "in progress") + (d.verdict ? ", verdict " + d.verdict : "") +
      (d.reason ? " (" + d.reason + ")" : "")));
    for (const t of d.turns) {
      box.appendChild(el("h4", t.kind + " " + t.turn + ", " + t.speaker + ": " + (t.preference || t.status)));
      if (t.text !== null) box.appendChild(el("pre", t.text));
      if (t.error) box.appendChild(el("p", t.error, "failed"));
    }
    pane.appendChild(box);
  }
}

async function showBattle(id) {
  state.current = id;
  for (const tr of document.querySelectorAll("#reviews tbody tr")) {
    tr.classList.toggle("current", tr.dataset.id === id);
  }
  try {
    renderBattle(id, await getJSON("/api/battle/" + encodeURIComponent(id)));
  } catch (err) {
    document.getElementById("battle").replaceChildren(el("p", String(err), "failed"));
  }
  writeLocation();
  document.body.dataset.battle = id;
}

async function start() {
  readLocation();
  document.getElementById("prev").addEventListener("click", () => { state.page -= 1; loadPage(); });
  document.getElementById("next").addEventListener("click", () => { state.page += 1; loadPage(); });
  await loadFacets();
  await loadPage();
  if (state.current) await showBattle(state.current);
}

document.addEventListener("DOMContentLoaded", () => {
  start().catch((err) => {
    document.getElementById("notes").textContent = "arena view: " + err;
  });
});
