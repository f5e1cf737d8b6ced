// A pending check's page: wait for the check to be judged (its job may still be solving), then show it.

import { $, api } from "./util.js";

const banner = $("#check");
const id = banner.dataset.check;

async function poll() {
  try {
    const check = await api(`/api/checks/${id}`);
    if (check.status !== "pending") {
      window.location.reload();
      return;
    }
  } catch {
    // The server may be restarting: try again at the next tick.
  }
  window.setTimeout(poll, 1000);
}

window.setTimeout(poll, 1000);
