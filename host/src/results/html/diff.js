// Two runs compared (`assay diff --html`): the verdict, both runs' counts,
// every case whose status changed, the added and removed cases, and per
// check key how its scores moved. DATA is { title, diff, regressions }:
// `diff` as `assay diff --json` prints it, `regressions` the verdict's
// reasons as the terminal words them. The hash: #q=TEXT filters ids.
function draw(DATA) {
  var D = DATA.diff;
  var ROWS = 500;
  var LISTS = [
    ["newly_failing", "Newly failing", "failed"],
    ["newly_flaky", "Newly flaky", "flaky"],
    ["newly_passing", "Newly passing", "passed"],
    ["no_longer_flaky", "No longer flaky", "passed"],
    ["still_failing", "Still failing", "failed"],
    ["added", "Added", ""],
    ["removed", "Removed", ""]
  ];

  function verdictSection() {
    var section = el("section", { id: "verdict" });
    var regressed = D.verdict.regressed;
    section.appendChild(el("h2", { id: "diff-verdict", className: regressed ? "failed" : "passed",
      text: regressed ? "REGRESSED: " + DATA.regressions.join("; ") : "NO REGRESSION" }));
    var counts = el("table", { id: "diff-counts" }, el("thead", null, el("tr", null, el("th", { text: "run" }),
      el("th", { className: "num", text: "cases" }), el("th", { className: "num", text: "passed" }), el("th", { className: "num", text: "failed" }),
      el("th", { className: "num", text: "flaky" }), el("th", { className: "num", text: "errors" }))));
    var body = el("tbody");
    [["old", D.old], ["new", D["new"]]].forEach(function (side) {
      var s = side[1];
      body.appendChild(el("tr", { id: "diff-" + side[0] }, el("td", { text: side[0] + ": " + s.dir }),
        el("td", { className: "num", text: String(s.cases) }), el("td", { className: "num passed", text: String(s.passed) }),
        el("td", { className: "num failed", text: String(s.failed) }), el("td", { className: "num flaky", text: String(s.flaky) }),
        el("td", { className: "num error", text: String(s.errors) })));
    });
    counts.appendChild(body);
    section.appendChild(counts);
    var cards = el("div", { className: "cards" });
    LISTS.forEach(function (list) {
      cards.appendChild(el("div", { className: "card" },
        el("span", { className: "value " + list[2], id: "count-" + list[0], text: String(D[list[0]].length) }),
        el("span", { className: "label", text: list[1].toLowerCase() })));
    });
    cards.appendChild(el("div", { className: "card" }, el("span", { className: "value", id: "count-unchanged", text: String(D.unchanged) }),
      el("span", { className: "label", text: "unchanged" })));
    section.appendChild(cards);
    return section;
  }

  function listSection(list, q) {
    var name = list[0], all = D[name];
    var rows = all.filter(function (c) { return !q || c.id.toLowerCase().indexOf(q) >= 0; });
    var section = el("section", { id: "list-" + name },
      el("h2", { text: list[1] + " (" + (q ? rows.length + " of " : "") + all.length + ")" }));
    if (!rows.length) {
      section.appendChild(el("p", { className: "muted", text: all.length ? "None matches the search." : "None." }));
      return section;
    }
    var oneRun = name === "added" || name === "removed";
    var head = oneRun ? [el("th", { text: "case" }), el("th", { text: name === "added" ? "status" : "was" })]
      : [el("th", { text: "case" }), el("th", { text: "old" }), el("th", { text: "new" })];
    var table = el("table", { className: "diff-list" }, el("thead", null, el.apply(null, ["tr", null].concat(head))));
    var body = el("tbody");
    rows.slice(0, ROWS).forEach(function (c) {
      var cells = oneRun ? [el("td", { className: "case-id", text: c.id }), el("td", { className: c.status, text: c.status })]
        : [el("td", { className: "case-id", text: c.id }), el("td", { className: c.old, text: c.old }), el("td", { className: c["new"], text: c["new"] })];
      body.appendChild(el.apply(null, ["tr", null].concat(cells)));
    });
    table.appendChild(body);
    section.appendChild(table);
    if (rows.length > ROWS) section.appendChild(el("p", { className: "muted", text: (rows.length - ROWS) + " more: search to narrow." }));
    return section;
  }

  function mean(m) { return m === null || m === undefined ? "–" : fmt(m, 3); }
  function signed(n) { return (n > 0 ? "+" : "") + fmt(n, 3); }

  function scoresSection() {
    var section = el("section", { id: "scores" }, el("h2", { text: "Scores per check key" }));
    if (!D.scores.length) {
      section.appendChild(el("p", { className: "muted", text: "No check gave a score in either run." }));
      return section;
    }
    var table = el("table", { id: "diff-scores" }, el("thead", null, el("tr", null, el("th", { text: "key" }),
      el("th", { className: "num", text: "old mean" }), el("th", { className: "num", text: "new mean" }),
      el("th", { className: "num", text: "change (cases in both)" }), el("th", { text: "moved most" }))));
    var body = el("tbody");
    D.scores.forEach(function (k) {
      var moved = el("ul");
      k.dropped.concat(k.rose).forEach(function (m) {
        moved.appendChild(el("li", { className: m.change < 0 ? "fail" : "pass", text: signed(m.change) + " " + m.id + " (" + fmt(m.old, 3) + " → " + fmt(m["new"], 3) + ")" }));
      });
      var change = k.change === null ? "no case scored in both" : signed(k.change) + " over " + k.paired;
      body.appendChild(el("tr", { "data-key": k.key }, el("td", { text: k.key }), el("td", { className: "num", text: mean(k.old_mean) }),
        el("td", { className: "num", text: mean(k.new_mean) }),
        el("td", { className: "num " + (k.change < 0 ? "fail" : "pass"), text: change }), el("td", null, moved)));
    });
    table.appendChild(body);
    section.appendChild(table);
    return section;
  }

  var fixed = null;
  function render() {
    var state = readState();
    var q = (state.q || "").toLowerCase();
    if (!fixed) fixed = { verdict: verdictSection(), scores: scoresSection() };
    app.textContent = "";
    app.appendChild(el("h1", { text: DATA.title }));
    app.appendChild(fixed.verdict);
    var search = el("input", { type: "search", id: "search", placeholder: "Search case ids", value: state.q || "" });
    search.onchange = function () { change({ q: search.value }); };
    app.appendChild(el("div", { className: "controls" }, search));
    LISTS.forEach(function (list) { app.appendChild(listSection(list, q)); });
    app.appendChild(fixed.scores);
  }

  window.addEventListener("hashchange", render);
  render();
  markDrawn();
}
