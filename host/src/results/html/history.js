// The history of several runs: a row per run (counts, pass rate, the mean
// score of each check key), the pass rate drawn across the runs, and what
// changed from each run to the next.
function draw(DATA) {
  app.appendChild(el("h1", { text: "assay history: " + DATA.title }));

  // The pass rate across the runs, one point each.
  var w = 800, h = 200, pad = 24, n = DATA.runs.length;
  var chart = svg("svg", { width: "100%", viewBox: "0 0 " + w + " " + (h + 2 * pad), role: "img", id: "pass-rate-chart" });
  chart.appendChild(svg("title", {}, "pass rate per run"));
  var x = function (i) { return pad + (n > 1 ? (i * (w - 2 * pad)) / (n - 1) : (w - 2 * pad) / 2); };
  var y = function (rate) { return pad + h - (rate / 100) * h; };
  chart.appendChild(svg("line", { "class": "axis", x1: pad, y1: y(0), x2: w - pad, y2: y(0) }));
  chart.appendChild(svg("text", { x: 0, y: y(100) + 4 }, "100 %"));
  chart.appendChild(svg("text", { x: 0, y: y(0) + 4 }, "0 %"));
  var points = DATA.runs.map(function (run, i) { return x(i) + "," + y(run.pass_rate); }).join(" ");
  chart.appendChild(svg("polyline", { "class": "rate", points: points }));
  DATA.runs.forEach(function (run, i) {
    var dot = svg("circle", { "class": "rate-point", cx: x(i), cy: y(run.pass_rate), r: 4 });
    dot.appendChild(svg("title", {}, run.name + ": " + fmt(run.pass_rate, 1) + " %"));
    chart.appendChild(dot);
  });
  app.appendChild(el("section", { id: "trend" }, el("h2", { text: "Pass rate (passed + flaky)" }), chart));

  // A row per run.
  var head = el("tr", null, el("th", { text: "run" }), el("th", { text: "started" }), el("th", { className: "num", text: "cases" }),
    el("th", { className: "num", text: "passed" }), el("th", { className: "num", text: "failed" }), el("th", { className: "num", text: "flaky" }),
    el("th", { className: "num", text: "errors" }), el("th", { className: "num", text: "pass rate" }));
  DATA.keys.forEach(function (key) { head.appendChild(el("th", { className: "num", text: "mean " + key })); });
  var body = el("tbody");
  DATA.runs.forEach(function (run) {
    var row = el("tr", { className: "history-run" }, el("td", { text: run.name }), el("td", { text: run.started_at || "" }),
      el("td", { className: "num", text: String(run.cases) }), el("td", { className: "num", text: String(run.passed) }),
      el("td", { className: "num", text: String(run.failed) }), el("td", { className: "num", text: String(run.flaky) }),
      el("td", { className: "num", text: String(run.errors) }), el("td", { className: "num pass-rate", text: fmt(run.pass_rate, 1) + " %" }));
    DATA.keys.forEach(function (key) {
      row.appendChild(el("td", { className: "num", text: run.means[key] === undefined ? "" : fmt(run.means[key], 3) }));
    });
    body.appendChild(row);
  });
  app.appendChild(el("section", { id: "runs" }, el("h2", { text: "Runs" }), el("table", { id: "run-table" }, el("thead", null, head), body)));

  // What changed from each run to the next.
  var changes = el("section", { id: "changes" }, el("h2", { text: "Cases that changed" }));
  DATA.steps.forEach(function (step) {
    var box = el("div", { className: "step" }, el("h3", { text: step.from + " → " + step.to }));
    var lists = [["newly failing", step.newly_failing, "failed"], ["newly passing", step.newly_passing, "passed"], ["newly flaky", step.newly_flaky, "flaky"]];
    var any = false;
    lists.forEach(function (list) {
      if (!list[1].length) return;
      any = true;
      var ul = el("ul", { className: "changed " + list[2] });
      list[1].forEach(function (c) { ul.appendChild(el("li", { className: "changed-case", text: c.id + " (" + c.old + " → " + c.new + ")" })); });
      box.appendChild(el("p", { text: list[0] + " (" + list[1].length + ")" }));
      box.appendChild(ul);
    });
    if (step.added || step.removed) box.appendChild(el("p", { className: "muted", text: step.added + " added, " + step.removed + " removed" }));
    if (!any) box.appendChild(el("p", { className: "muted", text: "No case changed status." }));
    changes.appendChild(box);
  });
  app.appendChild(changes);
  markDrawn();
}
