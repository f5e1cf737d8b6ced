// A pending check's page: wait for the check to be judged (its job may still be solving), then show it; its
// status in the title meanwhile, and "Notify me" (notice.js).

import { $, api } from "./util.js";
import { notifyControl, showTitle, statusWords } from "./notice.js";

const banner = $("#check");
const id = banner.dataset.check;
const notifier = notifyControl($("#notify-me"));

async function poll() {
  try {
    const check = await api(`/api/checks/${id}`);
    if (check.status !== "pending") {
      const shown = check.status === "done" ? check.verdict : check.status;
      showTitle(`check ${id}`, shown);
      notifier.ended(`Check ${id}: ${statusWords(shown)}`, `${check.filename} against job ${check.job_id}`,
        `dealer-check-${id}`);
      window.location.reload();
      return;
    }
  } catch {
    // The server may be restarting: try again at the next tick.
  }
  window.setTimeout(poll, 1000);
}

window.setTimeout(poll, 1000);
