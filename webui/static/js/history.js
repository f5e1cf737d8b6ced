// History search: the form drives the results table and the export links; the URL keeps the
// search, so it can be shared or bookmarked.

import { $, exportWithProgress, formValues, games, query } from "./util.js";
import { dateRange, resultsTable } from "./results.js";

const form = $("#history-form");
const gameSelect = $("#f-game");
const outcomeSelect = $("#f-outcome");
const all = games();

/** Outcome choices and the number's name follow the chosen game. */
function followGame() {
  const game = all.find((g) => g.slug === gameSelect.value);
  const outcomes = game ? game.outcomes : [...new Set(all.flatMap((g) => g.outcomes))];
  const current = outcomeSelect.value || outcomeSelect.dataset.selected;
  outcomeSelect.replaceChildren(new Option("Any outcome", ""), ...outcomes.map((o) => new Option(o, o)));
  outcomeSelect.value = outcomes.includes(current) ? current : "";
  const numberName = $("[data-number-name]");
  numberName.textContent = game ? game.number_name : numberName.dataset.any;
  table.setNumberName(game && game.number_name);
  const input = $("#f-input");
  input.placeholder = game ? `paste a ${game.unit}: finds it in every job, whatever the spacing` : input.dataset.any;
}

const table = resultsTable({
  table: $("#results-table"), pager: $("#results-pager"), countEl: $("#results-count"), errorEl: $("#results-error"),
  endpoint: "/api/results", columns: ["job_id", "index", "game", "input", "line", "outcome", "number", "solved_at"],
  apiParams: dateRange, defaultSort: "-solved_at",
  onState: (params) => {
    const q = query(params);
    history.replaceState(null, "", `${location.pathname}${q ? `?${q}` : ""}`);
    const filters = dateRange(params);
    for (const key of ["page", "after", "before", "last"]) delete filters[key];
    $("#export-csv").href = `/api/results/export?${query({ ...filters, format: "csv" })}`;
    $("#export-ndjson").href = `/api/results/export?${query({ ...filters, format: "ndjson" })}`;
  },
});

for (const link of [$("#export-csv"), $("#export-ndjson")]) {
  exportWithProgress(link, $("#export-status"), () => table.total);
}

gameSelect.addEventListener("change", followGame);
followGame();

form.addEventListener("submit", (event) => {
  event.preventDefault();
  table.load({ ...formValues(form), sort: table.params.sort });
});

table.load(Object.fromEntries(new URLSearchParams(location.search)));
