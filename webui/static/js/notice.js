// Word when work is done, on the job and check pages: the status in the document's title (a tab in the
// background tells it too), and a "Notify me" button that asks for the browser's Notification permission
// and, once given, notifies once when the page sees the job or check end.

/** The mark a title starts with: done well, ended otherwise, still running. */
const MARKS = { succeeded: "✓", accepted: "✓", failed: "✗", cancelled: "✗", wrong_answer: "✗",
  presentation_error: "✗" };

/** What the title says of a status: "✓ succeeded", "… solving 42%", "✗ wrong answer" (the same as the
 * server renders first: templates/job.html and check.html). */
export function statusWords(status, progress) {
  const words = status.replaceAll("_", " ");
  const share = progress === undefined ? "" : ` ${Math.floor(progress * 100)}%`;
  return `${MARKS[status] || "…"} ${words}${MARKS[status] ? "" : share}`;
}

/** Set the title: "✓ succeeded · job 12 · Dealer". */
export function showTitle(what, status, progress) {
  document.title = `${statusWords(status, progress)} · ${what} · Dealer`;
}

/** The "Notify me" button: hidden where the browser has no notifications; asks for permission on a click
 * and is armed once given. ``ended(title, body)`` notifies once, if armed. */
export function notifyControl(button) {
  let armed = false;
  const supported = button && "Notification" in window;
  if (button) button.hidden = !supported || Notification.permission === "denied";
  const show = () => {
    button.setAttribute("aria-pressed", String(armed));
    button.textContent = armed ? "Will notify you" : "Notify me";
    button.title = armed ? "A notification comes when this ends (click to take it back)"
      : "Ask the browser to notify you when this ends";
  };
  if (supported) {
    show();
    button.addEventListener("click", async () => {
      if (armed) {
        armed = false;
      } else {
        armed = (Notification.permission === "granted" ? "granted" : await Notification.requestPermission())
          === "granted";
        if (Notification.permission === "denied") button.hidden = true;
      }
      show();
    });
  }
  return {
    ended(title, body, tag) {
      if (button) button.hidden = true; // nothing left to wait for
      if (!armed) return;
      armed = false;
      // The tag: one notification for one end, however many pages of it were open.
      new Notification(title, { body, tag });
    },
    done() { if (button) button.hidden = true; },
  };
}
