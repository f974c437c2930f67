// linkage review: one pair at a time, labelled with keys or buttons, each label POSTed at once.
// Record values are only ever set as text (never as markup), so a value holding HTML shows as
// the characters it is.
"use strict";

const KEYS = {
  m: "match", n: "non-match", u: "unsure",
  ArrowLeft: "back", Backspace: "back", ArrowRight: "skip",
};
const WORDS = { "match": "match", "non-match": "non-match", "unsure": "unsure", "": "not labelled yet" };
const MAX_DIFF_CELLS = 90000; // beyond this, a changed value is highlighted whole

const view = { data: null, index: 0, pending: 0, saved: 0, error: "", chain: Promise.resolve() };
let sequence = 0;

function $(id) { return document.getElementById(id); }

function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children.map((c) => (c instanceof Node ? c : String(c))));
  return node;
}

function pairs() { return view.data ? view.data.pairs : []; }

function counts() {
  const c = { "match": 0, "non-match": 0, "unsure": 0, "": 0 };
  for (const pair of pairs()) c[pair.label] += 1;
  return c;
}

function nextUnlabelled(from) {
  const list = pairs();
  for (let step = 1; step <= list.length; step += 1) {
    const i = (from + step) % list.length;
    if (!list[i].label) return i;
  }
  return -1;
}

// Character diff of two values (longest common subsequence): the parts only one side has
// are marked, so a one-letter typo stands out in a long address.
function diffParts(a, b) {
  const x = Array.from(a), y = Array.from(b);
  if (x.length * y.length > MAX_DIFF_CELLS) {
    return [[{ text: a, changed: true }], [{ text: b, changed: true }]];
  }
  const n = x.length, m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const left = [], right = [];
  const push = (parts, ch, changed) => {
    const last = parts[parts.length - 1];
    if (last && last.changed === changed) last.text += ch;
    else parts.push({ text: ch, changed });
  };
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { push(left, x[i], false); push(right, y[j], false); i += 1; j += 1; }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) { push(left, x[i], true); i += 1; }
    else { push(right, y[j], true); j += 1; }
  }
  while (i < n) { push(left, x[i], true); i += 1; }
  while (j < m) { push(right, y[j], true); j += 1; }
  return [left, right];
}

function valueCell(parts, value) {
  const td = el("td", "value");
  if (value === null || value === undefined) td.append(el("span", "empty", "(no such column)"));
  else if (value === "") td.append(el("span", "empty", "(empty)"));
  else for (const part of parts) td.append(part.changed ? el("mark", "", part.text) : part.text);
  return td;
}

function levelClass(level) {
  if (level === "exact" || level === "null" || level === "else") return level;
  return "partial";
}

function levelBadge(comparison) {
  const badge = el("span", `level ${levelClass(comparison.level)}`, comparison.level);
  badge.title = `${comparison.name}: ${comparison.level}`;
  return badge;
}

function fieldRow(name, left, right, comparisons) {
  const same = left === right;
  const missing = !same && (!left || !right);
  let parts = [[{ text: left || "", changed: false }], [{ text: right || "", changed: false }]];
  if (!same && left && right) parts = diffParts(left, right);
  else if (!same) parts = [[{ text: left || "", changed: true }], [{ text: right || "", changed: true }]];
  const row = el("tr", same ? "same" : missing ? "differs missing" : "differs");
  row.dataset.field = name;
  const levels = el("td", "levels");
  for (const c of comparisons.filter((c) => c.column === name)) levels.append(levelBadge(c), " ");
  row.append(el("th", "", name), valueCell(parts[0], left), valueCell(parts[1], right), levels);
  return row;
}

function number(text, digits) {
  const value = typeof text === "number" ? text : parseFloat(text);
  return Number.isFinite(value) ? value.toFixed(digits) : "—";
}

function renderPair() {
  const list = pairs();
  const section = $("pair");
  if (!list.length) { section.hidden = true; return; }
  const pair = list[view.index];
  section.hidden = false;
  section.dataset.index = String(view.index);
  section.dataset.idL = pair.id_l;
  section.dataset.idR = pair.id_r;
  $("position").textContent = `pair ${view.index + 1} of ${list.length}`;
  $("ids").textContent = `${pair.id_l} ~ ${pair.id_r}`;
  const score = [`match weight ${number(pair.match_weight, 2)}`];
  if (number(pair.match_probability, 3) !== "—") {
    score.push(`probability ${number(pair.match_probability, 3)}`);
  }
  if (pair.band) score.push(`band ${pair.band}`);
  $("score").textContent = score.join(" · ");
  const current = $("current-label");
  current.textContent = `your label: ${WORDS[pair.label]}`;
  current.dataset.label = pair.label;

  const body = $("records").tBodies[0];
  body.replaceChildren(...view.data.fields.map(
    (name, k) => fieldRow(name, pair.left[k], pair.right[k], pair.comparisons)));

  const table = $("comparisons").tBodies[0];
  table.replaceChildren(...pair.comparisons.map((c) => {
    const row = el("tr", "", el("td", "", c.name), el("td", "", levelBadge(c)),
      el("td", "number", c.similarity === null ? "—" : number(c.similarity, 3)),
      el("td", "number", c.contribution === null ? "—" : number(c.contribution, 2)));
    return row;
  }));
  $("comparisons-box").hidden = pair.comparisons.length === 0;

  for (const state of ["match", "non-match", "unsure"]) {
    $(state).setAttribute("aria-pressed", String(pair.label === state));
  }
  $("back").disabled = view.index === 0;
  $("skip").disabled = view.index === list.length - 1;
}

function renderProgress() {
  const list = pairs();
  const c = counts();
  const labelled = list.length - c[""];
  $("progress-text").textContent = `${labelled} of ${list.length} labelled ` +
    `(${c.match} match, ${c["non-match"]} non-match, ${c.unsure} unsure)`;
  $("progress-bar").max = Math.max(list.length, 1);
  $("progress-bar").value = labelled;
  document.title = `linkage review: ${labelled}/${list.length}`;
  const done = $("done");
  done.hidden = !list.length || labelled < list.length;
  done.textContent = `All ${list.length} pairs are labelled. Stop the server (Ctrl-C) and run ` +
    "the command below to measure precision per band.";
}

function renderStatus() {
  const status = $("status");
  const error = $("error");
  error.hidden = !view.error;
  error.textContent = view.error;
  if (view.pending > 0) {
    status.dataset.state = "saving";
    status.textContent = "saving…";
  } else if (view.error) {
    status.dataset.state = "error";
    status.textContent = "not saved";
  } else if (view.saved > 0) {
    status.dataset.state = "saved";
    status.textContent = "all labels saved";
  } else {
    status.dataset.state = "ready";
    status.textContent = "";
  }
}

function render() {
  renderPair();
  renderProgress();
  renderStatus();
}

// Labels are sent one after another, in the order given, so the file ends as the screen shows.
function save(pair, state, previous) {
  sequence += 1;
  const mine = sequence;
  pair.sequence = mine;
  view.pending += 1;
  view.chain = view.chain.then(async () => {
    try {
      const response = await fetch("/api/label", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ id_l: pair.id_l, id_r: pair.id_r, label: state }),
      });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) throw new Error(answer.error || `the server answered ${response.status}`);
      view.saved += 1;
      view.error = "";
    } catch (err) {
      if (pair.sequence === mine) pair.label = previous; // the screen shows what the file holds
      const hint = err instanceof TypeError ? " (is `linkage review` still running?)" : "";
      view.error = `Not saved: ${err.message}${hint}`;
    } finally {
      view.pending -= 1;
      render();
    }
  });
}

function act(action) {
  const list = pairs();
  if (!list.length) return;
  if (action === "back") {
    view.index = Math.max(view.index - 1, 0);
  } else if (action === "skip") {
    view.index = Math.min(view.index + 1, list.length - 1);
  } else {
    const pair = list[view.index];
    const previous = pair.label;
    pair.label = action;
    save(pair, action, previous);
    const next = nextUnlabelled(view.index);
    view.index = next >= 0 ? next : Math.min(view.index + 1, list.length - 1);
  }
  render();
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || !view.data) return;
  const key = Object.hasOwn(KEYS, event.key) ? event.key : event.key.toLowerCase();
  if (!Object.hasOwn(KEYS, key)) return;
  const action = KEYS[key];
  event.preventDefault();
  act(action);
}

async function start() {
  try {
    const response = await fetch("/api/pairs");
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || `the server answered ${response.status}`);
    view.data = data;
  } catch (err) {
    view.error = `Cannot load the pairs: ${err.message}`;
    renderStatus();
    return;
  }
  $("labels-path").textContent = view.data.labels_path;
  $("calibrate-command").textContent = view.data.calibrate_command;
  const first = pairs().findIndex((pair) => !pair.label);
  view.index = first >= 0 ? first : 0;
  document.addEventListener("keydown", onKey);
  for (const button of document.querySelectorAll("#buttons button")) {
    button.addEventListener("click", () => { act(button.dataset.action); button.blur(); });
  }
  render();
  document.body.dataset.ready = "true";
}

document.addEventListener("DOMContentLoaded", start);
