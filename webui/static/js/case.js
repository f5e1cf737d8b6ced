// The case page: the input drawn as cards or tiles, and the replay of the stored trace. Each game draws
// and replays its cases in its own module, games/<slug>.js, loaded here by the case's game.

import { $, h, readJSON } from "./util.js";
import { createPlayer } from "./replay.js";

const data = readJSON("case-data");
const root = $("#player");

const copy = $("#copy-input");
copy.addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(copy.dataset.copy);
    copy.textContent = "Copied";
  } catch {
    copy.textContent = "Select the text below";
  }
  setTimeout(() => { copy.textContent = "Copy"; }, 1500);
});

function cannotReplay(message) {
  root.replaceChildren(h("div", { class: "alert alert-error", role: "alert" },
    h("div", { class: "alert-title" }, "This trace cannot be replayed"), h("div", { class: "alert-body" }, message)));
}

let game = null;
try {
  game = await import(`./games/${encodeURIComponent(data.game)}.js`);
} catch (error) {
  if (root) cannotReplay(`the page has no player for ${data.game} (${error.message})`);
}

if (game) {
  $("#input-view").replaceChildren(...game.inputView(data));
  if (root && data.trace) {
    try {
      const { frames, marks } = game.frames(data);
      window.dealerReplay = createPlayer(root, frames, (frame, options) => game.render(frame, options, data), { marks });
    } catch (error) {
      cannotReplay(error.message);
    }
  }
}
