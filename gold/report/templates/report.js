// The report's behaviour: draw each chart from its Vega-Lite spec and let the
// run picker choose the runs every chart, table and panel shows.
(() => {
  "use strict";
  const specs = JSON.parse(document.getElementById("specs").textContent);
  const picked = document.body.dataset.picked;
  const boxes = Array.from(document.querySelectorAll("input.pick"));
  // Export as PNG or SVG only: the other actions open the online Vega editor.
  const options = {mode: "vega-lite", renderer: "svg",
                   actions: {export: true, source: false, compiled: false, editor: false}};
  const views = {};

  function show() {
    const ids = boxes.filter((box) => box.checked).map((box) => box.value);
    for (const row of document.querySelectorAll("tr.run-row")) {
      row.classList.toggle("off", !ids.includes(row.dataset.runId));
    }
    for (const el of document.querySelectorAll("[data-run-id]:not(.run-row)")) {
      el.hidden = !ids.includes(el.dataset.runId);
    }
    // A chart that was hidden measures its box again when shown.
    window.dispatchEvent(new Event("resize"));
    return Promise.all(Object.values(views).map((view) => view.signal(picked, ids).runAsync()));
  }

  function pick(ids, on) {
    for (const box of boxes) {
      if (ids.includes(box.value)) box.checked = on;
    }
    return show();
  }

  document.getElementById("picker").addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) return;
    const all = boxes.map((box) => box.value);
    if (button.dataset.pick === "all") pick(all, true);
    if (button.dataset.pick === "none") pick(all, false);
    if (button.dataset.pick === "grouping") {
      const rows = document.querySelectorAll(`tr.run-row[data-grouping="${button.dataset.grouping}"]`);
      const ids = Array.from(rows, (row) => row.dataset.runId);
      // Shows the grouping's runs unless they are all shown already, then hides them.
      pick(ids, !boxes.every((box) => !ids.includes(box.value) || box.checked));
    }
  });
  for (const box of boxes) box.addEventListener("change", show);

  const drawn = Array.from(document.querySelectorAll("[data-chart]"), (el) => {
    const name = el.dataset.chart;
    const key = el.dataset.run ? `${name}:${el.dataset.run}` : name;
    const spec = el.dataset.run ? specs[name][el.dataset.run] : specs[name];
    return vegaEmbed(el, spec, options).then((result) => { views[key] = result.view; });
  });
  const ready = Promise.all(drawn).then(show).then(() => true);
  ready.catch((error) => console.error("report: a chart failed to draw:", error));
  // The Vega views by chart name ("hot_keys:<run id>" per run), for the console and tests.
  window.dkgReport = {views, ready, pick};
})();
