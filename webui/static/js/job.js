// The job page: live progress and timings while it runs (its status in the title too), charts, the results
// table, the cancel / rerun / delete buttons, and "Notify me".

import { $, $$, api, count, exportWithProgress, fillProgress, fillStatus, formValues, h, isFinished, live, micros, poll,
  readJSON, seconds } from "./util.js";
import { distribution, hasRareOutcome, outcomeBars, rateChart } from "./charts.js";
import { notifyControl, showTitle, statusWords } from "./notice.js";
import { resultsTable } from "./results.js";
import { contextSnippet } from "./upload.js";

const data = readJSON("job-data");
const { game } = data;
let job = data.job;
const jobId = job.id;

// --- charts --------------------------------------------------------------------------------
const tip = h("p", { class: "chart-tip", "aria-live": "off" }, "Point at a column to see its numbers.");
$("#chart-distribution").append(tip);

/** What the charts and the table say when they have no case: true of the job as it is now. */
function nothing() {
  if (job.status === "failed") return "No case was solved before the job failed.";
  if (job.status === "cancelled") return "No case was solved before the job was cancelled.";
  if (job.status === "succeeded") return "The file holds no cases.";
  return "Nothing solved yet.";
}

function drawOutcomes() {
  outcomeBars($("#chart-outcomes .chart-body"), game.outcomes, job.counts);
}

let layout = null; // "stacked" or "split": chosen by the reader, else by the data
let lastDist = null;

function drawDist() {
  const split = (layout || (hasRareOutcome(lastDist) ? "split" : "stacked")) === "split";
  for (const button of $$("[data-layout]")) button.setAttribute("aria-pressed", String(button.dataset.layout === (split ? "split" : "stacked")));
  distribution($("#chart-distribution .chart-body"), lastDist, tip, { split, empty: nothing() });
}

let nextDistAt = 0;
async function drawDistribution() {
  const started = performance.now();
  lastDist = await api(`/api/jobs/${jobId}/distribution`);
  // On a big job the query takes a while: ask again no sooner than ten times as long as it took.
  nextDistAt = performance.now() + 10 * (performance.now() - started);
  drawDist();
}

for (const button of $$("[data-layout]")) {
  button.addEventListener("click", () => { layout = button.dataset.layout; if (lastDist) drawDist(); });
}

// --- live figures --------------------------------------------------------------------------
function showJob() {
  $("#job").dataset.status = job.status;
  showTitle(`job ${job.id}`, job.status, job.progress);
  fillProgress($("#job-progress [data-f=progress]"), job);
  fillStatus($(".job-meta [data-f=status]"), job.status);
  const solved = Object.values(job.counts).reduce((a, b) => a + b, 0);
  for (const [outcome, n] of Object.entries(job.counts)) {
    $(`[data-c="${outcome}"]`).textContent = count(n);
    $(`[data-p="${outcome}"]`).textContent = `${solved ? ((n / solved) * 100).toFixed(1) : "0.0"}%`;
  }
  const finished = isFinished(job.status);
  $("[data-f=total]").textContent = job.total_known || finished ? `${count(job.total)} ${game.unit}s`
    : `${count(job.total)} ${game.unit}s so far…`;
  $("#download-output").hidden = job.status !== "succeeded";
  $("#download-input").hidden = !job.split_at;
  // The action buttons are only there for whoever may use them (see job.html).
  if ($("#cancel")) $("#cancel").hidden = finished;
  if ($("#delete")) $("#delete").hidden = !finished;
  $("#job-error").hidden = !job.error;
  $("#job-error [data-f=error]").textContent = job.error || "";
  showFaults();
  // What the job can no longer have, once it failed or was cancelled: a judge output to check against.
  const closed = ["failed", "cancelled"].includes(job.status);
  $("#checks-closed").hidden = !closed;
  $("#checks-closed [data-f=checks-status]").textContent = job.status;
  if ($("#check-form")) $("#check-form").hidden = closed;
  $("#job-warnings").hidden = !job.warnings.length;
  $("#job-warnings [data-f=warnings]").replaceChildren(...job.warnings.map((w) => h("li", {}, w.text)));
  drawOutcomes();
}

/** The faults of a failed job's file (the first ones, each with its lines) and how many more: the markup of
 * templates/_faults.html. A job view without them (a job that failed otherwise) shows none. */
function showFaults() {
  const faults = job.faults || [];
  $("#job-faults").hidden = !faults.length;
  $("#job-faults").replaceChildren(...faults.map((fault) => h("li", { class: "fault" },
    h("p", { class: "fault-where" }, fault.message),
    contextSnippet(fault.context, fault.line, fault.column))));
  const more = (job.fault_count || 0) - faults.length;
  $("#job-faults-more").hidden = more <= 0;
  $("#job-faults-more").textContent = `and ${count(more)} more fault${more === 1 ? "" : "s"}`;
}

/** What a job that has just failed keeps, its partial output and its kept cases with their downloads
 * (templates/_faults.html: kept): worded by the server alone, so taken from the page as served now that the
 * job has ended (a job ends once). */
async function showKept() {
  const served = new DOMParser().parseFromString(await (await fetch(location.pathname)).text(), "text/html");
  const block = served.querySelector("#job-kept");
  if (block) $("#job-kept").replaceWith(block);
}

function showTimings(t) {
  const set = (key, text) => { const el = $(`[data-t=${key}]`); if (el) el.textContent = text; };
  set("queued_seconds", seconds(t.queued_seconds));
  set("split_seconds", seconds(t.split_seconds));
  set("elapsed_seconds", seconds(t.elapsed_seconds));
  // Nothing solved yet is no speed of zero, and a mean of nothing is no mean.
  set("rate", t.rate > 0 ? count(t.rate) : "–");
  set("solve_us_mean", micros(t.solve_us_mean));
  set("solve_us_p99", micros(t.solve_us_p99));
  // The slowest case as the job has it now: none once a failure took its cases away.
  const slow = t.slowest_case;
  $("[data-t=slowest]").replaceChildren(...(slow ? [h("a", { href: `/jobs/${jobId}/cases/${slow.index}` },
    `Case ${count(slow.index)}`), ` · ${micros(slow.solve_us)}`] : ["–"]));
  set("cached", count(job.cache_hits));
  set("failed_cases", count(job.failed_cases));
}

for (const link of [$("#export-csv"), $("#export-ndjson")]) {
  exportWithProgress(link, $("#export-status"), () => job.done + job.failed_cases);
}

// --- results -------------------------------------------------------------------------------
const filters = $("#results-filters");
const table = resultsTable({
  table: $("#results-table"), pager: $("#results-pager"), countEl: $("#results-count"), errorEl: $("#results-error"),
  endpoint: `/api/jobs/${jobId}/cases`, numberName: game.number_name, empty: nothing,
  columns: ["index", "input", "line", "outcome", "number", "solve_us"],
  onState: (params) => {
    const q = new URLSearchParams(params).toString();
    history.replaceState(null, "", `${location.pathname}${q ? `?${q}` : ""}${location.hash}`);
  },
});

function fillForm(params) {
  for (const el of filters.elements) if (el.name) el.value = params[el.name] ?? "";
}

filters.addEventListener("submit", (event) => {
  event.preventDefault();
  table.load({ ...formValues(filters), sort: table.params.sort });
});
filters.addEventListener("reset", () => setTimeout(() => table.load({ sort: table.params.sort }), 0));
$("#f-outcome").addEventListener("change", () => filters.requestSubmit());
for (const tile of $$(".count-tile")) {
  tile.addEventListener("click", (event) => {
    event.preventDefault();
    fillForm({ ...formValues(filters), outcome: tile.dataset.outcome });
    filters.requestSubmit();
    $("#results").scrollIntoView({ behavior: "smooth" });
  });
}

const initial = Object.fromEntries(new URLSearchParams(location.search));
fillForm(initial);
table.load(initial);

// --- actions -------------------------------------------------------------------------------
const actionError = $("#action-error");
async function act(button, work) {
  button.disabled = true;
  actionError.hidden = true;
  try {
    await work();
  } catch (error) {
    actionError.textContent = error.message.charAt(0).toUpperCase() + error.message.slice(1);
    actionError.hidden = false;
  } finally {
    button.disabled = false;
  }
}

$("#cancel")?.addEventListener("click", (event) => act(event.currentTarget, async () => {
  job = await api(`/api/jobs/${jobId}/cancel`, { method: "POST" });
  showJob();
}));
$("#rerun")?.addEventListener("click", (event) => act(event.currentTarget, async () => {
  const again = await api(`/api/jobs/${jobId}/rerun`, { method: "POST" });
  location.assign(`/jobs/${again.id}`);
}));
$("#delete")?.addEventListener("click", (event) => act(event.currentTarget, async () => {
  if (!confirm(`Delete job #${jobId} and its ${count(job.total)} results?`)) return;
  await api(`/api/jobs/${jobId}`, { method: "DELETE" });
  location.assign("/");
}));

// --- throughput over the run ------------------------------------------------------------------
let nextThroughputAt = 0;
async function drawThroughput() {
  nextThroughputAt = performance.now() + 5000;
  rateChart($("#chart-throughput .chart-body"), await api(`/api/jobs/${jobId}/throughput`), "this job", nothing());
}

// --- keep it live: the server's event stream, else polling -------------------------------------------
drawOutcomes();
// Drawn beside the page's first look, not awaited: a job deleted meanwhile (by this page's own Delete, clicked
// before they were answered) answers them 404, which is no error of the page's, as with the live updates below.
for (const draw of [drawDistribution, drawThroughput]) draw().catch((error) => console.warn(error));

let events = 0;
const notifier = notifyControl($("#notify-me"));
if (isFinished(job.status)) notifier.done();
async function onJob(next) {
  const wasFinished = isFinished(job.status);
  job = next;
  showJob();
  events += 1;
  const finished = isFinished(job.status);
  if (finished && !wasFinished) {
    if (job.status === "failed") showKept().catch((error) => console.warn(error));
    notifier.ended(`Job ${job.id}: ${statusWords(job.status)}`, `${job.filename} · ${count(job.done)} ${game.unit}s solved`,
      `dealer-job-${job.id}`);
  }
  // The header's count of work waiting loses this job's cases as it ends: now, not at its next look.
  if (finished) document.dispatchEvent(new CustomEvent("dealer:refresh-overview"));
  if (finished || events % 3 === 0) {
    if (finished || performance.now() >= nextDistAt) await drawDistribution();
    if (finished || performance.now() >= nextThroughputAt) await drawThroughput();
    // Fill a table that is not full yet with the cases solved since (a full one stays put).
    if (!finished && $$("#results-table tbody tr[data-case]").length < 25) table.load(table.params);
  }
  if (finished) table.load(table.params);
}

if (!isFinished(job.status)) {
  live(`/events/jobs/${jobId}`, { job: onJob, timings: showTimings }, () => {
    const poller = poll(async () => {
      const next = await api(`/api/jobs/${jobId}`);
      showTimings(await api(`/api/jobs/${jobId}/timings`));
      await onJob(next);
      if (isFinished(job.status)) poller.stop();
      return !isFinished(job.status);
    }, { fast: 1000, slow: 1000 });
  });
}
