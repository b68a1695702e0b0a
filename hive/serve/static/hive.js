// hive serve: live updates (server-sent events), filters, actions. No build step.
(function () {
  "use strict";
  const live = document.getElementById("live");
  const dot = document.getElementById("live-dot");
  const meta = (name) => { const m = document.querySelector(`meta[name="${name}"]`); return m ? m.content : ""; };
  let version = meta("hive-version");
  let busy = false, again = false;
  // Text the script shows (an assignee, a label, an error) as the server shows text
  // (hive.text.UNSHOWN_CHARS, without_control): each control character as "?", each
  // bidirectional control and invisible format character as its code point ("<U+202E>"),
  // so none reorders or hides what people read, and they see that the text holds one.
  const UNSHOWN = /[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0001}\u{e0020}-\u{e007f}]/gu;
  const CONTROL = /^[\u0000-\u001f\u007f-\u009f\u2028\u2029]$/u;
  const codePoint = (char) => `<U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}>`;
  const shown = (text) => String(text).replace(UNSHOWN, (char) => (CONTROL.test(char) ? "?" : codePoint(char)));

  // Someone typing in the live area (a note, a close reason) keeps their text: the
  // swap waits while they are in a field they typed in, and whenever it happens the
  // text typed so far, the focus and the caret are carried into the new content
  // (a fetch in flight when they start typing, text left in a field they moved out of).
  function typing() {
    const field = document.activeElement;
    return field && live.contains(field) && /^(INPUT|TEXTAREA)$/.test(field.tagName) && field.value;
  }

  // A field is known across a swap by its form (action and cell) and its name.
  function formKey(form) {
    const cell = form.elements.namedItem("cell_id");
    return `${form.getAttribute("action") || ""}|${cell && "value" in cell ? cell.value : ""}`;
  }
  function typedFields(root) {
    return [...root.querySelectorAll("textarea[name], input[name]")].filter(
      (field) => field.tagName === "TEXTAREA" || /^(text|search|email|url|number)$/.test(field.type));
  }
  function fieldKey(field) {
    return `${field.form ? formKey(field.form) : ""}|${field.name}`;
  }
  function keepTyped() {
    const values = new Map();
    let focus = null;
    for (const field of typedFields(live)) {
      if (field.value !== field.defaultValue) values.set(fieldKey(field), field.value);
      if (field === document.activeElement) {
        focus = { key: fieldKey(field), start: field.selectionStart, end: field.selectionEnd };
      }
    }
    const sending = [...live.querySelectorAll("form.action[data-sending]")].map(formKey);
    // the diffs someone opened or closed stay so (a commit anywhere refreshes the page)
    const opened = new Map([...live.querySelectorAll("details[data-key]")].map((d) => [d.dataset.key, d.open]));
    return () => {
      for (const details of live.querySelectorAll("details[data-key]")) {
        if (opened.has(details.dataset.key)) details.open = opened.get(details.dataset.key);
      }
      for (const field of typedFields(live)) {
        const key = fieldKey(field);
        if (values.has(key)) field.value = values.get(key);
        if (focus && focus.key === key) {
          field.focus();
          if (focus.start !== null) field.setSelectionRange(focus.start, focus.end);
        }
      }
      for (const form of live.querySelectorAll("form.action")) {
        if (sending.includes(formKey(form))) markSending(form, true);
      }
    };
  }

  // A refresh waiting for the field says so on the body (data-waiting: the state token
  // it will show), until it runs.
  function waitForField() {
    document.body.dataset.waiting = version;
    document.activeElement.addEventListener("blur", () => refresh(), { once: true });
  }

  async function refresh() {
    if (busy) { again = true; return; }
    if (typing()) { waitForField(); return; }
    delete document.body.dataset.waiting;
    busy = true;
    try {
      const response = await fetch(location.pathname + location.search, {
        headers: { "X-Hive-Fragment": "1" }, cache: "no-store",
      });
      const html = await response.text();
      version = response.headers.get("X-Hive-Version") || version;
      if (typing()) { waitForField(); return; } // they started typing while it was fetched
      const restore = keepTyped();
      live.innerHTML = html;
      restore();
      showWho();
      showFacets();
      document.body.dataset.version = version;
      document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
    } catch (err) {
      dot.classList.add("off");
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  // The header says who the server acts as and whether it writes: a server restarted
  // in another mode (or as another actor) sends it with each refresh.
  function showWho() {
    const now = live.querySelector("template#who-now");
    if (!now) return;
    document.getElementById("who").replaceChildren(now.content.cloneNode(true));
    now.remove();
  }

  function showLive(on) {
    dot.classList.toggle("off", !on);
    document.body.dataset.live = on ? "1" : "0";
  }
  function heard(token) {
    if (token && token !== version) { version = token; refresh(); }
  }
  function listen(tell) {
    const source = new EventSource("/events");
    source.addEventListener("open", () => { showLive(true); tell({ live: true }); });
    source.addEventListener("error", () => { showLive(false); tell({ live: false }); });
    source.addEventListener("version", (event) => { heard(event.data); tell({ live: true, token: event.data }); });
  }

  // One event stream per browser, not per tab: a browser opens at most six
  // connections to a server, so six open tabs, each holding a stream, left a
  // seventh tab loading forever. The tab holding the lock listens and tells the
  // others; when it closes, another one takes over.
  function connect() {
    if (!(navigator.locks && window.BroadcastChannel)) { listen(() => {}); return; }
    const channel = new BroadcastChannel("hive-events");
    let last = null; // what this tab, while it listens, last told the others
    channel.onmessage = (event) => {
      const said = event.data;
      if (said.hello) { if (last) channel.postMessage(last); return; }
      showLive(said.live);
      if (said.token) heard(said.token);
    };
    channel.postMessage({ hello: true });
    navigator.locks.request("hive-events", () => new Promise(() => {
      listen((said) => { last = { live: said.live, token: said.token || (last && last.token) }; channel.postMessage(last); });
    }));
  }

  // Filters: apply as you type or pick, keeping the URL shareable.
  const filters = document.getElementById("filters");
  if (filters) {
    let timer = null;
    const apply = () => {
      const params = new URLSearchParams();
      for (const [key, value] of new FormData(filters)) { if (value) params.set(key, value); }
      const query = params.toString();
      history.replaceState(null, "", location.pathname + (query ? "?" + query : ""));
      refresh();
    };
    filters.addEventListener("change", apply);
    filters.addEventListener("input", (event) => {
      if (event.target.name !== "q") return;
      clearTimeout(timer);
      timer = setTimeout(apply, 200);
    });
    filters.addEventListener("submit", (event) => { event.preventDefault(); apply(); });
  }

  // The filter fields show the URL's query (a pager link or going back changes it).
  function showQuery() {
    if (!filters) return;
    const params = new URLSearchParams(location.search);
    for (const field of filters.elements) {
      if (field.name && field !== document.activeElement) field.value = params.get(field.name) || "";
    }
  }

  // The assignee and label lists follow the hive (an agent who just joined is listed).
  function showFacets() {
    const facets = document.getElementById("facets");
    if (!filters || !facets) return;
    for (const name of ["assignee", "label"]) {
      const select = filters.elements.namedItem(name);
      const chosen = select.value;
      const values = JSON.parse(facets.dataset[name]);
      if (chosen && !values.includes(chosen)) values.push(chosen);
      select.replaceChildren(select.options[0], ...values.map((value) => new Option(shown(value), value)));
      select.value = chosen;
    }
  }

  // Pagination inside the live area: fetch in place.
  live.addEventListener("click", (event) => {
    const link = event.target.closest(".pager a");
    if (!link) return;
    event.preventDefault();
    history.pushState(null, "", link.getAttribute("href"));
    showQuery();
    refresh();
  });
  window.addEventListener("popstate", () => { showQuery(); refresh(); });

  // Actions: POST with the server's token; the change then arrives like any other.
  const flash = document.getElementById("flash");
  function say(text, bad) {
    flash.textContent = shown(text);
    flash.className = bad ? "bad" : "good";
    flash.hidden = false;
    clearTimeout(say.timer);
    say.timer = setTimeout(() => { flash.hidden = true; }, 6000);
  }
  document.addEventListener("submit", async (event) => {
    const form = event.target.closest("form.action");
    if (!form) return;
    event.preventDefault();
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
    const body = new URLSearchParams(new FormData(form));
    const key = formKey(form);
    // a refresh while the POST is out replaces the form: the one on the page now
    const current = () => [...live.querySelectorAll("form.action")].find((f) => formKey(f) === key) || form;
    // the token the form was rendered with: a page refreshed after the server restarted
    // carries the new server's token in its forms (the meta tag is the first server's)
    const given = form.elements.namedItem("token");
    const token = (given && "value" in given && given.value) || meta("hive-token");
    markSending(form, true);
    try {
      const response = await fetch(form.action, {
        method: "POST", body, headers: { "X-Hive-Token": token, "Accept": "application/json" },
      });
      const answer = await response.json();
      if (response.ok) {
        say(`done: ${form.action.split("/").pop()} (commit ${String(answer.commit).slice(0, 10)})`, false);
        form.reset();
        current().reset();
        refresh();
      } else {
        say(`error: ${answer.error}`, true);
      }
    } catch (err) {
      say(`error: ${err}`, true);
    } finally {
      markSending(form, false);
      markSending(current(), false);
    }
  });

  function markSending(form, sending) {
    const button = form.querySelector("button");
    if (button) button.disabled = sending;
    if (sending) form.dataset.sending = "1"; else delete form.dataset.sending;
  }

  // Time moves without commits: a reservation expires, "2m ago" gets older. A page
  // on screen re-renders now and then (the server's clock_seconds) to say so.
  const clock = Number(document.body.dataset.clock) * 1000;
  if (clock > 0) setInterval(() => { if (!document.hidden) refresh(); }, clock);

  // The mail page shows the most recently active thread when the URL names none: name
  // it, so a message arriving in another thread does not swap the one being read.
  const shownThread = live.querySelector(".thread[data-key]");
  if (location.pathname === "/mail" && shownThread) {
    const params = new URLSearchParams(location.search);
    if (!params.has("thread")) {
      params.set("thread", shownThread.dataset.key);
      history.replaceState(null, "", "/mail?" + params.toString());
    }
  }

  connect();
})();
