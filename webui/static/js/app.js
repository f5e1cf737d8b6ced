// On every page: the header's service indicator (workers up, work waiting) and local times.

import { $, api, applySizes, count, localiseTimes, poll } from "./util.js";

export { refreshOverview };

applySizes();
// Transitions stay off (html.preload) until the sizes above are painted, so nothing eases in on load.
requestAnimationFrame(() => requestAnimationFrame(() => document.documentElement.classList.remove("preload")));
localiseTimes();

const pill = $("#service-pill");

function showService(overview) {
  const workers = overview.workers.length;
  const waiting = overview.queued_cases;
  let state = "ok";
  let text = `${workers} worker${workers === 1 ? "" : "s"}`;
  if (!workers) { state = "down"; text = "No workers"; }
  if (waiting) { text += ` · ${count(waiting)} waiting`; if (workers) state = "busy"; }
  if (!overview.broker_up) { state = "down"; text += " · broker unreachable"; }
  pill.dataset.state = state;
  pill.querySelector(".service-text").textContent = text;
  pill.title = workers ? `Workers: ${overview.workers.map((w) => w.name).join(", ")}` : "No worker has reported lately";
}

/** Fetch the overview and tell the page (the pill, the dashboard's figures); true while work waits. */
async function refreshOverview() {
  try {
    const overview = await api("/api/overview");
    document.dispatchEvent(new CustomEvent("dealer:overview", { detail: overview }));
    return overview.queued_cases > 0;
  } catch (error) {
    // Reads are private and nobody is logged in: the service answers, it only shows nothing yet.
    const locked = error.status === 401;
    pill.dataset.state = locked ? "locked" : "down";
    pill.querySelector(".service-text").textContent = locked ? "Log in to see the service" : "Service unreachable";
    return false;
  }
}

document.addEventListener("dealer:overview", ({ detail }) => showService(detail));
// The dashboard follows the overview in its own event stream (dashboard.js); other pages look now and then,
// unless the page says there is nothing to see before logging in (reads private, nobody logged in).
if (!document.body.classList.contains("page-dashboard") && pill.dataset.state !== "locked") {
  const overviewPoll = poll(refreshOverview, { fast: 5000, slow: 15000 });
  document.addEventListener("dealer:refresh-overview", () => overviewPoll.now());
}
