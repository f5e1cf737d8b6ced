// The dashboard: job rows kept live by polling /api/jobs, service figures from /api/overview,
// and a drop zone that uploads a file and shows its job at once.

import { $, $$, api, count, fillOutcomes, fillProgress, fillStatus, isFinished, localiseTimes, poll, size } from "./util.js";
import { attachDropzone, uploadFile } from "./upload.js";

const table = $("#jobs");
const tbody = table.tBodies[0];
const template = $("#job-row-template");
const page = Number(table.dataset.page);
const perPage = Number(table.dataset.perPage);

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
  $("time", row).setAttribute("datetime", job.created_at);
  $("[data-f=bar]", row).setAttribute("aria-label", `Progress of job ${job.id}`);
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
}

const poller = poll(async () => {
  const data = await api(`/api/jobs?page=${page}&per_page=${perPage}`);
  showJobs(data.items);
  return data.items.some((job) => !isFinished(job.status));
}, { fast: 700, slow: 4000 });

// The figures at the top, from the overview app.js polls.
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
  set("depth", o.queue_depth === null ? "unreachable" : count(o.queue_depth));
  set("succeeded", count(o.jobs_by_status.succeeded));
  set("failed", o.jobs_by_status.failed);
  set("cancelled", o.jobs_by_status.cancelled);
});

// Quick upload: drop or choose a file, watch it go up, then its row takes over (only shown to
// whoever may upload: with API keys configured, after logging in).
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
    if (page === 1 && !$(`tr[data-job="${job.id}"]`, tbody)) {
      const row = newRow(job);
      fillRow(row, job);
      tbody.prepend(row);
      $("#jobs-empty").hidden = true;
      localiseTimes(tbody);
    }
    poller.now();
  } catch (error) {
    status.replaceChildren(Object.assign(document.createElement("span"), { className: "error", textContent: error.message }));
  }
});
