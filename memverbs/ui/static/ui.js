// memverbs ui: the theme, local times, keyboard navigation and the timeline's live lane.
// Every view and action works without it: the pages are server-rendered HTML and plain forms.
"use strict";
(function () {
  const root = document.documentElement;
  const THEME = "memverbs-theme";

  // Before the first paint (this file loads in <head>, not deferred): the theme chosen in this
  // browser, if any; otherwise the system's (prefers-color-scheme in ui.css).
  try {
    const chosen = localStorage.getItem(THEME);
    if (chosen === "light" || chosen === "dark") root.dataset.theme = chosen;
  } catch (err) { /* storage off: the system's theme */ }

  function systemTheme() {
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  function theme() { return root.dataset.theme || systemTheme(); }
  function setTheme(next) {
    root.dataset.theme = next;
    try { localStorage.setItem(THEME, next); } catch (err) { /* not remembered */ }
    const button = document.getElementById("theme-toggle");
    if (button) label(button);
  }
  function label(button) {
    const other = theme() === "dark" ? "light" : "dark";
    button.setAttribute("aria-label", "Switch to the " + other + " theme");
    button.title = "Switch to the " + other + " theme (t)";
    button.textContent = other === "dark" ? "☾" : "☀";
  }

  // -- times: the server writes UTC; say them in the reader's zone ------------------------
  const DAY = 86400000;
  function localTimes(scope) {
    const now = new Date();
    const today = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
    scope.querySelectorAll("time[datetime]:not([data-day])").forEach(function (el) {  // a day is no moment: no zone
      const at = new Date(el.getAttribute("datetime"));
      if (isNaN(at)) return;
      const hm = at.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
      const t = at.getTime();
      let text;
      if (t >= today) text = "today " + hm;
      else if (t >= today - DAY) text = "yesterday " + hm;
      else if (at.getFullYear() === now.getFullYear()) text = at.toLocaleDateString(undefined, { month: "short", day: "numeric" }) + " " + hm;
      else text = at.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
      el.textContent = text;
      el.title = at.toLocaleString(undefined, { dateStyle: "full", timeStyle: "long" });
    });
  }

  // -- keyboard ---------------------------------------------------------------------------
  const GO = { t: "/timeline", e: "/entities", p: "/pack", s: "/search", c: "/conflicts", a: "/access", h: "/health" };
  let pendingG = 0;

  function rows() {
    return Array.from(document.querySelectorAll("main .rows > li:not(.plain), main tbody tr"))
      .filter(function (el) { return el.offsetParent !== null && el.querySelector("a[href]"); });
  }
  function primaryLink(row) {
    return row.querySelector("a.primary") || row.querySelector("a[href]");
  }
  function move(step) {
    const list = rows();
    if (!list.length) return;
    let i = list.findIndex(function (r) { return r.classList.contains("kb-current"); });
    if (i < 0) i = list.findIndex(function (r) { return r.contains(document.activeElement); });
    const next = i < 0 ? (step > 0 ? 0 : list.length - 1) : Math.max(0, Math.min(list.length - 1, i + step));
    list.forEach(function (r) { r.classList.remove("kb-current"); });
    const row = list[next];
    row.classList.add("kb-current");
    const link = primaryLink(row);
    if (link) link.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
  }
  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  function onKey(ev) {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const help = document.getElementById("keys");
    if (typing(ev.target)) {
      if (ev.key === "Escape") ev.target.blur();
      return;
    }
    if (pendingG && Date.now() - pendingG < 1500 && GO[ev.key]) {
      pendingG = 0;
      ev.preventDefault();
      location.href = GO[ev.key];
      return;
    }
    pendingG = 0;
    switch (ev.key) {
      case "/": {
        ev.preventDefault();
        const box = document.querySelector("main input[type=search]");
        if (box) { box.focus(); box.select(); } else location.href = "/search";
        break;
      }
      case "j": ev.preventDefault(); move(1); break;
      case "k": ev.preventDefault(); move(-1); break;
      case "o": case "Enter": {
        const row = document.querySelector("main .kb-current");
        const link = row && primaryLink(row);
        if (link && ev.key === "o") { ev.preventDefault(); link.click(); }
        break;
      }
      case "x": {
        const row = document.querySelector("main .kb-current");
        const acts = row && row.querySelector("details.acts");
        if (acts) { ev.preventDefault(); acts.open = !acts.open; if (acts.open) { const f = acts.querySelector("input:not([type=hidden]), button"); if (f) f.focus(); } }
        break;
      }
      case "[": case "]": {
        const link = document.querySelector(ev.key === "[" ? "main a[rel=prev]" : "main a[rel=next]");
        if (link) { ev.preventDefault(); link.click(); }
        break;
      }
      case "g": pendingG = Date.now(); break;
      case "t": ev.preventDefault(); setTheme(theme() === "dark" ? "light" : "dark"); break;
      case "?":
        if (help && help.showModal) { ev.preventDefault(); if (help.open) help.close(); else help.showModal(); }
        break;
      default:
    }
  }

  // -- the timeline's live lane -----------------------------------------------------------
  function live() {
    const feed = document.getElementById("feed");
    if (!feed || !feed.dataset.feed) return;
    const status = document.getElementById("live-status");
    let cursor = Number(feed.dataset.cursor || 0);
    let failures = 0;

    // A change is new unless its row is already shown at that very moment: the feed answers
    // "at or after the cursor" (two changes may share a millisecond), so the newest row comes
    // back on every poll and must not count, nor flash, again.
    function place(item) {
      const old = feed.querySelector('[data-key="' + CSS.escape(item.key) + '"]');
      if (old && old.dataset.at === String(item.at)) return false;
      if (old) old.remove();
      const t = document.createElement("template");
      t.innerHTML = item.html; // server-rendered and escaped there; the row carries its data-key
      const row = t.content.firstElementChild;
      row.classList.add("fresh");
      localTimes(row);
      feed.prepend(row);
      return true;
    }

    async function poll() {
      const url = feed.dataset.feed + (feed.dataset.feed.includes("?") ? "&" : "?") + "after=" + cursor;
      try {
        const res = await fetch(url, { credentials: "same-origin", cache: "no-store" });
        if (!res.ok) throw new Error(String(res.status));
        const body = await res.json();
        const items = body.items.slice().reverse(); // oldest first, so the newest ends on top
        const added = items.filter(place).length;
        if (added) {
          const empty = document.getElementById("feed-empty");
          if (empty) empty.remove();
          feed.hidden = false;
          status.lastChild.textContent = added + " new change" + (added === 1 ? "" : "s") + " at the top";
        }
        cursor = body.cursor;
        failures = 0;
        status.classList.remove("off");
      } catch (err) {
        failures += 1;
        status.classList.add("off");
        status.lastChild.textContent = "live updates paused: the inspector is not answering (" + err.message + ")";
      }
      setTimeout(poll, failures ? Math.min(10000, 500 * 2 ** failures) : 500);
    }
    setTimeout(poll, 500);
  }

  document.addEventListener("DOMContentLoaded", function () {
    const button = document.getElementById("theme-toggle");
    if (button) {
      label(button);
      button.hidden = false;
      button.addEventListener("click", function () { setTheme(theme() === "dark" ? "light" : "dark"); });
    }
    const help = document.getElementById("keys");
    const open = document.getElementById("keys-open");
    if (help && open && help.showModal) {
      open.hidden = false;
      open.addEventListener("click", function () { help.showModal(); });
      const close = document.getElementById("keys-close");
      if (close) close.addEventListener("click", function () { help.close(); });
    }
    localTimes(document);
    document.addEventListener("keydown", onKey);
    live();
  });
})();
