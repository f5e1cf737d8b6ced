// The case page: the input drawn as cards or tiles, and the replay of the stored trace.

import { $, h, readJSON } from "./util.js";
import { createPlayer } from "./replay.js";
import * as tenTwentyThirty from "./games/ten-twenty-thirty.js";
import * as accordion from "./games/accordion.js";
import * as mahjong from "./games/mahjong.js";

const GAMES = { "10-20-30": tenTwentyThirty, accordion, mahjong };
const data = readJSON("case-data");
const game = GAMES[data.game];

$("#input-view").replaceChildren(...game.inputView(data));

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

const root = $("#player");
if (root && data.trace) {
  try {
    const { frames, marks } = game.frames(data);
    window.dealerReplay = createPlayer(root, frames, (frame, options) => game.render(frame, options, data), { marks });
  } catch (error) {
    root.replaceChildren(h("div", { class: "alert alert-error", role: "alert" },
      h("div", { class: "alert-title" }, "This trace cannot be replayed"), h("div", { class: "alert-body" }, error.message)));
  }
}
