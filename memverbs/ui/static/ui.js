// memverbs ui: the timeline's live lane. Everything else is plain server-rendered HTML.
"use strict";
(function () {
  const feed = document.getElementById("feed");
  if (!feed) return;
  const status = document.getElementById("live-status");
  let cursor = Number(feed.dataset.cursor || 0);
  let failures = 0;

  function place(item) {
    const old = feed.querySelector('[data-key="' + CSS.escape(item.key) + '"]');
    if (old) old.remove();
    const t = document.createElement("template");
    t.innerHTML = item.html; // server-rendered and escaped there; the row carries its data-key
    const row = t.content.firstElementChild;
    row.classList.add("fresh");
    feed.prepend(row);
  }

  async function poll() {
    const url = feed.dataset.feed + (feed.dataset.feed.includes("?") ? "&" : "?") + "after=" + cursor;
    try {
      const res = await fetch(url, { credentials: "same-origin", cache: "no-store" });
      if (!res.ok) throw new Error(String(res.status));
      const body = await res.json();
      const items = body.items.slice().reverse(); // oldest first, so the newest ends on top
      items.forEach(place);
      if (items.length) {
        const empty = document.getElementById("feed-empty");
        if (empty) empty.remove();
        status.textContent = items.length + " new change" + (items.length === 1 ? "" : "s");
      }
      cursor = body.cursor;
      failures = 0;
    } catch (err) {
      failures += 1;
      status.textContent = "live updates paused: the inspector is not answering (" + err.message + ")";
    }
    setTimeout(poll, failures ? Math.min(10000, 500 * 2 ** failures) : 500);
  }
  setTimeout(poll, 500);
})();
