// prchain report: plots, the chain filter, trajectory toggles and the patch panel. No network.
"use strict";

function readJson(id) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

function drawPlots() {
  if (typeof Plotly === "undefined") return;
  document.querySelectorAll(".plot[data-figure-id]").forEach((el) => {
    const figure = readJson(el.dataset.figureId);
    if (figure) Plotly.newPlot(el, figure.data, figure.layout, { displayModeBar: false, responsive: true });
  });
}

const DIFF_OPTIONS = { drawFileList: false, outputFormat: "line-by-line", matching: "none" };

// Swap each raw diff under `root` for diff2html's rendering; text that is no diff stays as it is.
function renderDiffs(root) {
  if (typeof Diff2Html === "undefined" || !root) return;
  root.querySelectorAll("pre.raw-diff").forEach((pre) => {
    if (pre.closest(".patch-pieces")) return;  // rendered when shown in the patch panel
    const text = pre.textContent;
    if (!/^(diff --git|--- |@@ )/m.test(text)) return;
    const files = Diff2Html.parse(text);
    if (!files.length) return;
    const rendered = document.createElement("div");
    rendered.className = "rendered-diff";
    rendered.innerHTML = Diff2Html.html(files, DIFF_OPTIONS);
    pre.replaceWith(rendered);
  });
}

const MAX_ROWS = 1000;

function cell(row, text, className) {
  const td = row.insertCell();
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

function link(td, href, text) {
  td.textContent = "";
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  td.appendChild(a);
}

function chainRow(body, c) {
  const row = body.insertRow();
  row.className = "chain-row";
  const id = cell(row, String(c.id));
  if (c.page) link(id, "chains/" + c.id + ".html", String(c.id));
  cell(row, c.repo);
  cell(row, String(c.len), "num");
  cell(row, c.score.toFixed(2), "num");
  cell(row, c.prs.map((n) => "#" + n).join(" ← "));
  cell(row, c.title, "title");
  const outcome = cell(row, "");
  const badge = document.createElement("span");
  badge.className = "badge outcome-" + c.outcome.replace(/ /g, "-");
  badge.textContent = c.outcome;
  outcome.appendChild(badge);
  cell(row, c.judge === null ? "-" : c.judge.toFixed(2), "num");
  const traj = cell(row, "");
  if (c.rollout !== null) link(traj, "trajectories/" + c.rollout + ".html", "#" + c.rollout);
}

function setupChainFilter() {
  const chains = readJson("chains-data");
  const body = document.getElementById("chain-rows");
  if (!chains || !body) return;
  const value = (id) => document.getElementById(id).value.trim();
  const apply = () => {
    const text = value("f-text").toLowerCase();
    const repo = value("f-repo");
    const len = value("f-len");
    const outcome = value("f-outcome");
    const judge = parseFloat(value("f-judge"));
    const score = parseFloat(value("f-score"));
    const matches = chains.filter((c) =>
      (!repo || c.repo === repo) &&
      (!len || c.len === Number(len)) &&
      (!outcome || c.outcome === outcome) &&
      (isNaN(judge) || (c.judge !== null && c.judge >= judge)) &&
      (isNaN(score) || c.score >= score) &&
      (!text || String(c.id) === text || c.title.toLowerCase().includes(text) ||
        c.prs.some((n) => "#" + n === text || String(n) === text)));
    body.textContent = "";
    matches.slice(0, MAX_ROWS).forEach((c) => chainRow(body, c));
    const shown = Math.min(matches.length, MAX_ROWS);
    document.getElementById("chain-count").textContent =
      matches.length + " of " + chains.length + " chains match" +
      (shown < matches.length ? " (first " + shown + " shown)" : "");
  };
  document.getElementById("chain-filters").addEventListener("input", apply);
  apply();
}

function setupToggles() {
  document.querySelectorAll("input[data-hide]").forEach((box) => {
    const sync = () => document.body.classList.toggle(box.dataset.hide, box.checked);
    box.addEventListener("change", sync);
    sync();
  });
  const expand = document.getElementById("expand-all");
  if (expand) {
    expand.addEventListener("click", () => {
      const boxes = document.querySelectorAll("details.observation");
      const open = !Array.from(boxes).every((d) => d.open);
      boxes.forEach((d) => { d.open = open; });
      expand.textContent = open ? "collapse all observations" : "expand all observations";
    });
  }
}

function showPatch(stage, step) {
  const pieces = Array.from(document.querySelectorAll("#patch-" + stage + " .patch-piece"))
    .filter((p) => Number(p.dataset.step) <= step);
  const exact = pieces.filter((p) => p.classList.contains("exact"));
  const chosen = exact.length ? exact.slice(-1) : pieces;
  const body = document.getElementById("patch-body");
  body.textContent = "";
  chosen.forEach((p) => body.appendChild(p.cloneNode(true)));
  renderDiffs(body);  // the copies sit outside .patch-pieces, so they render now
  document.getElementById("patch-title").textContent =
    "stage " + stage + ": cumulative patch after step " + step;
  document.getElementById("patch-panel").hidden = false;
}

function setupPatches() {
  document.querySelectorAll("a.show-patch").forEach((a) => {
    a.addEventListener("click", (event) => {
      event.preventDefault();
      showPatch(a.dataset.stage, Number(a.dataset.step));
    });
  });
  const close = document.getElementById("patch-close");
  if (close) close.addEventListener("click", () => { document.getElementById("patch-panel").hidden = true; });
}

document.addEventListener("DOMContentLoaded", () => {
  drawPlots();
  renderDiffs(document.querySelector("main"));
  setupChainFilter();
  setupToggles();
  setupPatches();
});
