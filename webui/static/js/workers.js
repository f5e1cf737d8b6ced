// The workers view: each worker's heartbeat, what its processes solve now and its throughput, refreshed
// every few seconds (the heartbeats themselves come every two).

import { $, api, count, h, poll, readJSON } from "./util.js";
import { rateChart } from "./charts.js";

function worker(w) {
  const busy = w.busy.length ? w.busy.map((p) => h("li", {}, `process ${p.pid}: `, h("a", { href: `/jobs/${p.job_id}` }, `job #${p.job_id}`),
    `, cases ${count(p.first_index)}–${count(p.last_index)}`)) : [h("li", { class: "muted" }, "nothing")];
  return { busy, age: w.heartbeat_age_seconds === null ? "stopped" : `${w.heartbeat_age_seconds} s ago` };
}

function show(data) {
  const alive = data.workers.filter((w) => w.alive);
  $("[data-w=alive]").textContent = alive.length;
  $("[data-w=processes]").textContent = alive.reduce((n, w) => n + (w.concurrency || 0), 0);
  $("[data-w=minute]").textContent = count(data.solved_last_minute);
  $("[data-w=hour]").textContent = count(data.total.cases);
  // One line per worker beside the total, when there is more than one (else it would hide the total).
  const each = data.workers.length > 1 ? data.workers.map((w) => ({ name: w.name, throughput: w.throughput })) : [];
  rateChart($("#chart-total .chart-body"), [{ name: "every worker", throughput: data.total }, ...each]);
  const list = $("#worker-list");
  const known = new Set([...list.querySelectorAll("[data-worker]")].map((el) => el.dataset.worker));
  const now = new Set(data.workers.map((w) => w.name));
  // A worker that came or went changes the list's shape: the page is drawn again by the server.
  if (known.size !== now.size || [...now].some((name) => !known.has(name))) { location.reload(); return; }
  for (const w of data.workers) {
    const card = list.querySelector(`[data-worker="${CSS.escape(w.name)}"]`);
    const { busy, age } = worker(w);
    card.querySelector("[data-f=age]").textContent = age;
    card.querySelector("[data-f=minute]").textContent = count(w.solved_last_minute);
    card.querySelector("[data-f=processed]").textContent = count(w.processed);
    const badge = card.querySelector("[data-f=alive]");
    badge.textContent = w.alive ? "up" : "gone";
    badge.className = `badge status ${w.alive ? "status-succeeded" : "status-failed"}`;
    card.querySelector("[data-f=busy]").replaceChildren(...busy);
    rateChart(card.querySelector(".chart-body"), w.throughput, w.name);
  }
}

show(readJSON("workers-data"));
poll(async () => { show(await api("/api/workers")); return true; }, { fast: 3000, slow: 3000 });
