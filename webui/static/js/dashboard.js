// The dashboard: job rows and service figures kept live by the server's event stream (polling
// /api/jobs and /api/overview when there is none), filters kept in the URL, actions on the selected
// jobs, and a drop zone that uploads a file and shows its job at once.

import { $, $$, api, count, fillOutcomes, fillProgress, fillStatus, fitMore, isFinished, live, localiseTimes, poll,
  query, seconds, size } from "./util.js";
import { attachDropzone, uploadFile } from "./upload.js";
import { refreshOverview } from "./app.js";

const table = $("#jobs");
const tbody = table.tBodies[0];
const template = $("#job-row-template");
const page = Number(table.dataset.page);
const perPage = Number(table.dataset.perPage);
const filterForm = $("#job-filters");
const filters = Object.fromEntries(["status", "game", "filename", "owner"].filter((name) => filterForm.elements[name])
  .map((name) => [name, filterForm.elements[name].value.trim()]).filter(([, value]) => value));
const filtered = Object.keys(filters).length > 0;

function newRow(job) {
  const row = template.content.firstElementChild.cloneNode(true);
  for (const link of $$("a", row)) link.href = `/jobs/${job.id}`;
  $(".col-id a", row).textContent = `#${job.id}`;
  const name = $(".fname", row);
  name.textContent = job.filename;
  name.title = job.filename;
  const chip = $(".chip", row);
  chip.className = `chip game-${job.game}`;
  chip.textContent = job.game;
  $(".sub span:last-child", row).textContent = size(job.size);
  const owner = $("[data-f=owner]", row);
  if (owner) owner.textContent = job.owner || "–";
  $("time", row).setAttribute("datetime", job.created_at);
  $("[data-f=bar]", row).setAttribute("aria-label", `Progress of job ${job.id}`);
  const pick = $("[data-f=pick]", row);
  if (pick) { pick.value = job.id; pick.setAttribute("aria-label", `Select job ${job.id}`); }
  row.dataset.job = job.id;
  row.classList.add("fresh");
  return row;
}

function fillRow(row, job) {
  if (row.dataset.status !== job.status) document.dispatchEvent(new CustomEvent("dealer:refresh-overview"));
  row.dataset.status = job.status;
  fillProgress($("[data-f=progress]", row), job);
  fillStatus($("[data-f=status]", row), job.status);
  fillOutcomes($("[data-f=outcomes]", row), job.counts, job.game);
}

/** Make the table show these jobs, in this order, reusing the rows it has (bars animate). */
function showJobs(jobs) {
  const rows = new Map($$("tr[data-job]", tbody).map((row) => [Number(row.dataset.job), row]));
  let previous = null;
  for (const job of jobs) {
    const row = rows.get(job.id) || newRow(job);
    rows.delete(job.id);
    fillRow(row, job);
    const wanted = previous ? previous.nextElementSibling : tbody.firstElementChild;
    if (wanted !== row) tbody.insertBefore(row, wanted);
    previous = row;
  }
  for (const row of rows.values()) row.remove();
  $("#jobs-empty").hidden = jobs.length > 0;
  localiseTimes(tbody);
  showSelection();
}

// --- live: the event stream, else polling ------------------------------------------------------
const listing = query({ page, per_page: perPage, ...filters });
let refresh = () => {};
live(`/events/dashboard?${listing}`, {
  jobs: (data) => showJobs(data.items),
  overview: (overview) => document.dispatchEvent(new CustomEvent("dealer:overview", { detail: overview })),
}, () => {
  const jobsPoll = poll(async () => {
    const data = await api(`/api/jobs?${listing}`);
    showJobs(data.items);
    return data.items.some((job) => !isFinished(job.status));
  }, { fast: 1000, slow: 5000 });
  const overviewPoll = poll(refreshOverview, { fast: 2000, slow: 5000 });
  document.addEventListener("dealer:refresh-overview", () => overviewPoll.now());
  refresh = () => jobsPoll.now();
});

// The figures at the top.
document.addEventListener("dealer:overview", ({ detail: o }) => {
  const set = (key, value) => { const el = $(`[data-s=${key}]`); if (el) el.textContent = value; };
  const workers = o.workers.length;
  $("#stat-workers").dataset.state = workers ? "ok" : "down";
  set("workers", workers);
  set("workers-sub", workers ? `${o.workers.reduce((n, w) => n + w.concurrency, 0)} processes` : "none heard from lately");
  set("running", o.jobs_by_status.splitting + o.jobs_by_status.solving);
  set("queued-jobs", o.jobs_by_status.queued);
  set("queued-cases", count(o.queued_cases));
  set("chunks", count(o.pending_chunks));
  // A user who sees only its own jobs is told whether the broker answers, not how much of everyone's work waits.
  set("depth", o.queue_depth !== null ? count(o.queue_depth) : o.broker_up ? "up" : "unreachable");
  const by = o.jobs_by_status;
  set("finished", count(by.succeeded + by.failed + by.cancelled));  // the big figure counts every ending
  set("succeeded", count(by.succeeded));
  set("failed", count(by.failed));
  set("cancelled", count(by.cancelled));
  showStuck(o.stuck_jobs);
});

/** The jobs that have not moved for several stall periods, each a link to its page (hidden when none). */
function showStuck(jobs) {
  $("#stuck-jobs").hidden = !jobs.length;
  $("[data-s=stuck]").replaceChildren(...jobs.map((job) => {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = `/jobs/${job.id}`;
    link.textContent = `Job #${job.id}`;
    item.append(link, ` (${job.status}, ${job.filename}): still for ${seconds(job.still_seconds)}`);
    return item;
  }));
}

// --- filters: a choice applies at once; the URL keeps them ---------------------------------------
for (const select of $$("select", filterForm)) select.addEventListener("change", () => filterForm.requestSubmit());

// --- a long error: shown whole on demand ----------------------------------------------------------
// Whether an error is cut depends on the width it gets: looked at on load and whenever the window changes.
const fitAll = () => { for (const block of $$("[data-f=progress]", tbody)) fitMore(block); };
fitAll();
window.addEventListener("resize", fitAll);
tbody.addEventListener("click", (event) => {
  const more = event.target.closest("[data-f=more]");
  if (!more) return;
  const block = more.closest("[data-f=progress]");
  const open = block.classList.toggle("expanded");
  more.setAttribute("aria-expanded", String(open));
  more.textContent = open ? "Show less" : "Show the whole error";
});

// --- actions on the selected jobs -----------------------------------------------------------------
const bulk = $("#bulk");
const pickAll = $("#pick-all");
const picked = () => $$("[data-f=pick]", tbody).filter((box) => box.checked);

function showSelection() {
  if (!bulk) return;
  const boxes = $$("[data-f=pick]", tbody);
  const chosen = picked();
  $("#bulk-count").textContent = chosen.length ? `${chosen.length} job${chosen.length === 1 ? "" : "s"} selected` : "No job selected";
  for (const button of $$("[data-bulk]", bulk)) button.disabled = !chosen.length;
  pickAll.checked = boxes.length > 0 && chosen.length === boxes.length;
  pickAll.indeterminate = chosen.length > 0 && chosen.length < boxes.length;
}

const ACTIONS = {
  cancel: { verb: "Cancelled", run: (id) => api(`/api/jobs/${id}/cancel`, { method: "POST" }), applies: (s) => !isFinished(s) },
  rerun: { verb: "Rerun", run: (id) => api(`/api/jobs/${id}/rerun`, { method: "POST" }), applies: () => true },
  delete: { verb: "Deleted", run: (id) => api(`/api/jobs/${id}`, { method: "DELETE" }), applies: (s) => isFinished(s) },
};

if (bulk) {
  tbody.addEventListener("change", (event) => { if (event.target.matches("[data-f=pick]")) showSelection(); });
  pickAll.addEventListener("change", () => {
    for (const box of $$("[data-f=pick]", tbody)) box.checked = pickAll.checked;
    showSelection();
  });
  for (const button of $$("[data-bulk]", bulk)) {
    button.addEventListener("click", async () => {
      const action = ACTIONS[button.dataset.bulk];
      const rows = picked().map((box) => box.closest("tr"));
      const chosen = rows.filter((row) => action.applies(row.dataset.status)).map((row) => Number(row.dataset.job));
      const skipped = rows.length - chosen.length;
      if (button.dataset.bulk === "delete" && chosen.length
          && !confirm(`Delete ${chosen.length} job${chosen.length === 1 ? "" : "s"} and their results?`)) return;
      const status = $("#bulk-status");
      status.textContent = "Working…";
      const failures = [];
      for (const id of chosen) {
        try { await action.run(id); } catch (error) { failures.push(`#${id}: ${error.message}`); }
      }
      let text = `${action.verb} ${chosen.length - failures.length} of ${rows.length}.`;
      if (skipped) text += ` ${skipped} skipped (${button.dataset.bulk === "cancel" ? "already finished" : "still running"}).`;
      if (failures.length) text += ` Failed: ${failures.join("; ")}`;
      status.textContent = text;
      for (const box of picked()) box.checked = false;
      showSelection();
      refresh();
    });
  }
  showSelection();
}

// --- quick upload: drop or choose a file, watch it go up, then its row takes over -------------------
const form = $("#quick-upload");
const status = $("#quick-status");
if (form) attachDropzone(form, $("#quick-file"), async (file) => {
  status.textContent = `Uploading ${file.name}…`;
  try {
    const job = await uploadFile(file, "", (sent, total) => {
      status.textContent = `Uploading ${file.name}: ${Math.floor((sent / total) * 100)}% of ${size(total)}`;
    });
    status.replaceChildren(`Job #${job.id} created for ${file.name} (${job.game}). `,
      Object.assign(document.createElement("a"), { href: `/jobs/${job.id}`, textContent: "Open it" }));
    if (page === 1 && !filtered && !$(`tr[data-job="${job.id}"]`, tbody)) {
      const row = newRow(job);
      fillRow(row, job);
      tbody.prepend(row);
      $("#jobs-empty").hidden = true;
      localiseTimes(tbody);
      showSelection();
    }
    refresh();
  } catch (error) {
    status.replaceChildren(Object.assign(document.createElement("span"), { className: "error", textContent: error.message }));
  }
});
