// hive serve: live updates (server-sent events), filters, actions. No build step.
(function () {
  "use strict";
  const live = document.getElementById("live");
  const dot = document.getElementById("live-dot");
  const meta = (name) => { const m = document.querySelector(`meta[name="${name}"]`); return m ? m.content : ""; };
  let version = meta("hive-version");
  let busy = false, again = false;

  // Someone typing in the live area (a note, a close reason) keeps their text:
  // the swap waits until they leave the field.
  function typing() {
    const field = document.activeElement;
    return field && live.contains(field) && /^(INPUT|TEXTAREA)$/.test(field.tagName) && field.value;
  }

  async function refresh() {
    if (busy) { again = true; return; }
    if (typing()) {
      document.activeElement.addEventListener("blur", () => refresh(), { once: true });
      return;
    }
    busy = true;
    try {
      const response = await fetch(location.pathname + location.search, {
        headers: { "X-Hive-Fragment": "1" }, cache: "no-store",
      });
      const html = await response.text();
      version = response.headers.get("X-Hive-Version") || version;
      live.innerHTML = html;
      document.body.dataset.version = version;
      document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
    } catch (err) {
      dot.classList.add("off");
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  function connect() {
    const source = new EventSource("/events");
    source.addEventListener("open", () => { dot.classList.remove("off"); document.body.dataset.live = "1"; });
    source.addEventListener("error", () => { dot.classList.add("off"); document.body.dataset.live = "0"; });
    source.addEventListener("version", (event) => {
      if (event.data && event.data !== version) { version = event.data; refresh(); }
    });
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

  // Pagination inside the live area: fetch in place.
  live.addEventListener("click", (event) => {
    const link = event.target.closest(".pager a");
    if (!link) return;
    event.preventDefault();
    history.pushState(null, "", link.getAttribute("href"));
    refresh();
  });
  window.addEventListener("popstate", refresh);

  // Actions: POST with the server's token; the change then arrives like any other.
  const flash = document.getElementById("flash");
  function say(text, bad) {
    flash.textContent = text;
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
    const button = form.querySelector("button");
    if (button) button.disabled = true;
    try {
      const response = await fetch(form.action, {
        method: "POST", body, headers: { "X-Hive-Token": meta("hive-token"), "Accept": "application/json" },
      });
      const answer = await response.json();
      if (response.ok) {
        say(`done: ${form.action.split("/").pop()} (commit ${String(answer.commit).slice(0, 10)})`, false);
        form.reset();
        refresh();
      } else {
        say(`error: ${answer.error}`, true);
      }
    } catch (err) {
      say(`error: ${err}`, true);
    } finally {
      if (button) button.disabled = false;
    }
  });

  connect();
})();
