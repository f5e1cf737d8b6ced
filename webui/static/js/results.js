// A results table fed by a JSON endpoint (a job's cases or the history search):
// sortable columns, pages, and the filters the page hands it.

import { api, compactTime, count, h, micros, outcomeLabel, query, utcTime } from "./util.js";

const COLUMNS = {
  job_id: { label: "Job", sort: "job_id", cell: (r) => h("a", { href: `/jobs/${r.job_id}` }, `#${r.job_id}`) },
  index: { label: "#", sort: "index", num: true, cell: (r) => h("a", { href: `/cases/${r.id}`, "aria-label": `Case ${count(r.index)}` }, count(r.index)) },
  game: { label: "Game", cell: (r) => h("span", { class: "chip" }, r.game) },
  input: { label: "Input", cls: "input-cell", cell: (r) => h("span", { title: r.input }, r.input) },
  line: { label: "Judge output", cls: "line-cell", cell: (r) => (r.line ? h("code", {}, r.line) : h("span", { class: "muted" }, r.error || "–")) },
  outcome: { label: "Outcome", sort: "outcome", cell: (r) => (r.outcome ? h("span", { class: `badge outcome o-${r.outcome}` }, outcomeLabel(r.outcome)) : "–") },
  number: { label: "Number", sort: "number", num: true, cell: (r) => (r.number ?? "–") },
  solve_us: { label: "Solve time", sort: "solve_us", num: true, cell: (r) => (r.cached ? h("span", { class: "muted", title: "answered from the result cache" }, "cached") : micros(r.solve_us)) },
  solved_at: { label: "Solved", sort: "solved_at", cls: "time-cell", cell: (r) => h("time", { datetime: r.solved_at, title: utcTime(r.solved_at) }, compactTime(r.solved_at)) },
};

const PER_PAGE = 25;
/** The parameters that say where a page starts, as opposed to what it shows. */
const PLACE = ["after", "before", "last", "page"];
const withoutPlace = (params) => Object.fromEntries(Object.entries(params).filter(([key]) => !PLACE.includes(key)));

export function resultsTable({ table, pager, countEl, errorEl, endpoint, columns, numberName, onState, apiParams = (p) => p,
  defaultSort = "index", empty = () => "No results yet." }) {
  let params = {};
  let request = 0;
  const cols = columns.map((key) => ({ key, ...COLUMNS[key], label: key === "number" && numberName ? numberName : COLUMNS[key].label }));

  const head = h("thead", {}, h("tr", {}, cols.map((c) => h("th", { scope: "col", class: c.num ? "num" : null, "data-key": c.key },
    c.sort ? h("button", { type: "button", onclick: () => sortBy(c.sort) }, c.label) : c.label))));
  const body = h("tbody");
  table.replaceChildren(head, body);
  body.addEventListener("click", (event) => {
    if (event.target.closest("a")) return;
    const row = event.target.closest("tr[data-case]");
    if (row) window.location.assign(`/cases/${row.dataset.case}`);
  });

  function sortBy(key) {
    const current = params.sort || defaultSort;
    const next = current === key ? `-${key}` : key;
    load({ ...withoutPlace(params), sort: next });
  }

  function showSort() {
    const sort = params.sort || defaultSort;
    for (const th of head.querySelectorAll("th")) {
      const c = cols.find((col) => col.key === th.dataset.key);
      if (!c.sort) continue;
      th.setAttribute("aria-sort", sort === c.sort ? "ascending" : sort === `-${c.sort}` ? "descending" : "none");
    }
  }

  // Pages follow cursors (a page starts after or before a case), so that the millionth
  // result comes as fast as the first; where a page starts in the list is counted here.
  let first = 0;
  let total = null; // results matching, once a page has said

  function showPager(data) {
    pager.replaceChildren();
    if (!data.prev && !data.next) return;
    const go = (place, at) => () => { first = at; load({ ...withoutPlace(params), ...place }); };
    const shown = data.items.length;
    const of = data.total_exact ? count(data.total) : `at least ${count(data.total)}`;
    pager.append(
      h("button", { class: "btn btn-ghost", type: "button", disabled: !data.prev, onclick: go({}, 0), "aria-label": "First page" }, "«"),
      h("button", { class: "btn btn-ghost", type: "button", disabled: !data.prev, onclick: go({ before: data.prev }, Math.max(0, first - PER_PAGE)), rel: "prev" }, "← Previous"),
      h("span", { class: "pager-info" }, `${count(first + 1)}–${count(first + shown)} of ${of}`),
      h("button", { class: "btn btn-ghost", type: "button", disabled: !data.next, onclick: go({ after: data.next }, first + shown), rel: "next" }, "Next →"),
      h("button", { class: "btn btn-ghost", type: "button", disabled: !data.next || !data.total_exact, onclick: go({ last: 1 }, Math.max(0, data.total - PER_PAGE)), "aria-label": "Last page" }, "»"));
  }

  const filtered = () => Object.keys(params).some((key) => !["sort", "per_page", ...PLACE].includes(key));

  async function load(next = params) {
    params = Object.fromEntries(Object.entries(next).filter(([, v]) => v !== "" && v !== undefined && v !== null));
    if (!PLACE.some((key) => key in params)) first = 0;
    if (params.sort === defaultSort) delete params.sort;
    const mine = ++request;
    showSort();
    body.querySelectorAll("tr").forEach((tr) => tr.classList.add("loading"));
    if (onState) onState(params);
    let data;
    try {
      data = await api(`${endpoint}?${query({ per_page: PER_PAGE, sort: defaultSort, ...apiParams(params) })}`);
    } catch (error) {
      if (mine !== request) return;
      errorEl.textContent = error.message.charAt(0).toUpperCase() + error.message.slice(1);
      errorEl.hidden = false;
      body.replaceChildren(h("tr", { class: "empty-row" }, h("td", { colspan: cols.length }, "No results: fix the filter above.")));
      countEl.textContent = "";
      pager.replaceChildren();
      return;
    }
    if (mine !== request) return;
    errorEl.hidden = true;
    countEl.textContent = `${data.total_exact ? "" : "at least "}${count(data.total)} result${data.total === 1 ? "" : "s"}`;
    total = data.total_exact ? data.total : null;
    body.replaceChildren(...(data.items.length ? data.items.map((r) => h("tr", { "data-case": r.id },
      cols.map((c) => h("td", { class: [c.num ? "num" : "", c.cls || "", `col-${c.key}`].join(" ").trim(), "data-label": c.label },
        c.cell(r))))) :
      [h("tr", { class: "empty-row" }, h("td", { colspan: cols.length }, filtered() ? "Nothing matches these filters." : empty()))]));
    showPager(data);
  }

  /** Name the number column after the game's number (deals, piles, waits). */
  function setNumberName(name) {
    const th = head.querySelector("th[data-key=number]");
    if (th) (th.querySelector("button") || th).textContent = name || COLUMNS.number.label;
    const column = cols.find((c) => c.key === "number");
    if (column) column.label = name || COLUMNS.number.label;
  }

  return { load, setNumberName, get params() { return params; }, get total() { return total; } };
}

/** Turn a filter form's date fields into since/until (the "to" day counts in full). */
export function dateRange(values) {
  const out = { ...values };
  if (out.until && /^\d{4}-\d{2}-\d{2}$/.test(out.until)) {
    const day = new Date(`${out.until}T00:00:00Z`);
    day.setUTCDate(day.getUTCDate() + 1);
    out.until = day.toISOString().slice(0, 10);
  }
  return out;
}

