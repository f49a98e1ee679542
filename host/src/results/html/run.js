// The report of one run: the summary, the case table with its filters and
// drill-down, failure modes, score and latency charts, tokens, and the
// sections of `assay assess`, `eval` and `validate` when the run was one.
// The hash: #status=failed&page=2&size=500&case=ID.
function draw(DATA) {
  var CASES = DATA.cases;
  var SIZES = [50, 100, 500, 1000, 10000];

  // One entry per case for filtering, built once.
  // Each case's first failure (why its row is red) and the causes of its
  // failures (a check key and its message with the particulars taken out),
  // for the table and the grouped failure modes.
  function pattern(message) {
    return String(message).split("\n")[0]
      .replace(/`[^`]*`/g, "`…`").replace(/"(?:[^"\\]|\\.)*"/g, "\"…\"").replace(/-?\d+(?:\.\d+)?/g, "N");
  }
  var INDEX = CASES.map(function (entry, i) {
    var r = entry.result;
    var keys = {}, reason = "", causes = {};
    if (r.error) { reason = r.error.kind + ": " + r.error.message; causes[r.error.kind + ": " + pattern(r.error.message)] = true; }
    (r.samples || []).forEach(function (s) {
      s.runs.forEach(function (run) {
        run.interactions.forEach(function (it) {
          var at = "interaction " + (it.index + 1) + ": ";
          if (it.error) {
            if (!reason && !s.passed) reason = at + it.error.kind + ": " + it.error.message;
            if (!s.passed) causes[it.error.kind + ": " + pattern(it.error.message)] = true;
          }
          it.checks.forEach(function (c) {
            keys[c.key] = true;
            if (c.outcome === "pass" || c.gate === false || s.passed) return;
            if (!reason) reason = at + c.target + " " + c.key + ": " + c.message;
            causes[c.key + " (" + c.outcome + "): " + pattern(c.message)] = true;
          });
        });
      });
    });
    return {
      i: i, id: r.id, status: r.status, agent: r.agent, connections: r.connections || [],
      keys: keys, reason: reason.split("\n")[0], causes: Object.keys(causes),
      samples: (r.samples || []).filter(function (s) { return s.passed; }).length, duration: r.duration_ms,
      text: (r.id + "\n" + r.agent + "\n" + r.file).toLowerCase()
    };
  });
  // Failures first: what a person opens a report for.
  var STATUS_ORDER = { error: 0, failed: 1, flaky: 2, passed: 3 };

  // ---- the summary --------------------------------------------------------
  function summarySection() {
    var s = DATA.summary;
    var section = el("section", { id: "summary" }, el("h2", { text: "Summary" }));
    if (!s) {
      section.appendChild(el("p", { className: "failed", text: "The run did not finish: there is no summary.json, the table holds every case that finished." }));
      return section;
    }
    var finished = s.passed + s.flaky;
    var rate = s.cases ? (finished * 100) / s.cases : 0;
    var cards = el("div", { className: "cards" });
    function card(id, label, value, cls) {
      cards.appendChild(el("div", { className: "card" },
        el("span", { className: "value " + (cls || ""), id: id, text: String(value) }),
        el("span", { className: "label", text: label })));
    }
    card("summary-cases", "cases", s.cases);
    card("summary-passed", "passed", s.passed, "passed");
    card("summary-failed", "failed", s.failed, "failed");
    card("summary-flaky", "flaky", s.flaky, "flaky");
    card("summary-errors", "errors", s.errors, "error");
    card("summary-pass-rate", "pass rate (passed + flaky)", fmt(rate, 1) + " %");
    card("summary-duration", "duration", ms(s.duration_ms));
    card("summary-agent", "waiting for agents", ms(s.agent_ms));
    var flags = s.flags || {};
    ["api_error", "empty_output", "evaluation_error"].forEach(function (flag) {
      card("summary-" + flag.replace(/_/g, "-"), flag, flags[flag] || 0);
    });
    if (s.usage) card("summary-tokens", "tokens (prompt + answer)", s.usage.prompt_tokens + " + " + s.usage.completion_tokens);
    section.appendChild(cards);
    if (s.not_run) section.appendChild(el("p", { className: "failed", text: s.not_run + " cases never ran: " + (s.stopped ? "the run was stopped: " + s.stopped + "." : "a reporter failed.") }));
    (s.reporter_errors || []).forEach(function (e) { section.appendChild(el("p", { className: "failed", text: "failed to " + e })); });
    if (s.suites && s.suites.length) {
      var table = el("table", null, el("thead", null, el("tr", null,
        el("th", { text: "suite" }), el("th", { className: "num", text: "cases" }), el("th", { className: "num", text: "passed" }),
        el("th", { text: "mean scores" }))));
      var body = el("tbody");
      s.suites.forEach(function (suite) {
        var scores = Object.keys(suite.mean_scores).map(function (k) { return k + " " + fmt(suite.mean_scores[k], 3); }).join(", ");
        body.appendChild(el("tr", null, el("td", { text: suite.file }), el("td", { className: "num", text: String(suite.cases) }),
          el("td", { className: "num", text: String(suite.passed) }), el("td", { text: scores })));
      });
      table.appendChild(body);
      section.appendChild(el("h3", { text: "Suites" }));
      section.appendChild(table);
    }
    return section;
  }

  // ---- charts -------------------------------------------------------------
  function histogram(dist, caption, unit) {
    var w = 600, h = 200, pad = 18, max = Math.max.apply(null, dist.bins) || 1;
    var chart = svg("svg", { width: "100%", viewBox: "0 0 " + w + " " + (h + 2 * pad), role: "img" });
    chart.appendChild(svg("title", {}, dist.name + ": " + caption));
    var barWidth = (w - 2) / dist.bins.length;
    dist.bins.forEach(function (count, i) {
      if (!count) return;
      var barHeight = (count / max) * h;
      var bar = svg("rect", { "class": "bar", x: 1 + i * barWidth, y: pad + h - barHeight, width: Math.max(barWidth - 1, 1), height: barHeight });
      bar.appendChild(svg("title", {}, count + " in [" + fmt(dist.low + i * (dist.high - dist.low) / dist.bins.length, 3) + ", " +
        fmt(dist.low + (i + 1) * (dist.high - dist.low) / dist.bins.length, 3) + "]"));
      chart.appendChild(bar);
    });
    chart.appendChild(svg("line", { "class": "axis", x1: 0, y1: pad + h, x2: w, y2: pad + h }));
    chart.appendChild(svg("text", { x: 0, y: pad + h + 13 }, fmt(dist.low, 2) + unit));
    chart.appendChild(svg("text", { x: w, y: pad + h + 13, "text-anchor": "end" }, fmt(dist.high, 2) + unit));
    chart.appendChild(svg("text", { x: 0, y: 11 }, "max bar " + max));
    return el("div", { className: "chart" }, el("h3", { text: dist.name }), chart, el("div", { className: "caption", text: caption }));
  }

  function chartsSection() {
    var section = el("section", { id: "charts" }, el("h2", { text: "Scores, latency and tokens" }));
    if (DATA.metrics.length) {
      section.appendChild(el("h3", { text: "Scores per metric key (each case's mean score of the key)" }));
      var metrics = el("div", { className: "charts", id: "metrics" });
      DATA.metrics.forEach(function (d) {
        metrics.appendChild(histogram(d, "mean " + fmt(d.mean, 3) + " over " + d.count + " cases, min " + fmt(d.min, 3) + ", max " + fmt(d.max, 3), ""));
      });
      section.appendChild(metrics);
    } else {
      section.appendChild(el("p", { className: "muted", text: "No check gave a score." }));
    }
    if (DATA.latency.length) {
      section.appendChild(el("h3", { text: "The agent's latency per connection (agent_ms of each answered interaction)" }));
      var latency = el("div", { className: "charts", id: "latency" });
      DATA.latency.forEach(function (d) {
        latency.appendChild(histogram(d, d.count + " answers: mean " + ms(d.mean) + ", p50 " + ms(d.p50) + ", p90 " + ms(d.p90) + ", max " + ms(d.max), " ms"));
      });
      section.appendChild(latency);
    }
    section.appendChild(el("h3", { text: "Token usage" }));
    if (DATA.tokens.length) {
      var table = el("table", { id: "tokens" }, el("thead", null, el("tr", null, el("th", { text: "connection" }),
        el("th", { className: "num", text: "answers" }), el("th", { className: "num", text: "prompt tokens" }),
        el("th", { className: "num", text: "answer tokens" }))));
      var body = el("tbody");
      DATA.tokens.forEach(function (t) {
        body.appendChild(el("tr", null, el("td", { text: t.connection }), el("td", { className: "num", text: String(t.answers) }),
          el("td", { className: "num", text: String(t.prompt_tokens) }), el("td", { className: "num", text: String(t.completion_tokens) })));
      });
      table.appendChild(body);
      section.appendChild(table);
    } else {
      section.appendChild(el("p", { className: "muted", text: "No connection reported token usage." }));
    }
    return section;
  }

  // ---- failure modes: each cause once, with the cases it failed ----------
  var MODE_ROWS = 200;
  function modesSection() {
    var groups = {}, order = [];
    INDEX.forEach(function (row) {
      row.causes.forEach(function (cause) {
        if (!groups[cause]) { groups[cause] = []; order.push(cause); }
        groups[cause].push(row);
      });
    });
    order.sort(function (a, b) { return groups[b].length - groups[a].length || (a < b ? -1 : 1); });
    var section = el("section", { id: "modes" }, el("h2", { text: "Failure modes (" + order.length + ")" }));
    if (!order.length) {
      section.appendChild(el("p", { className: "muted", text: "No sample failed." }));
      return section;
    }
    section.appendChild(el("p", { className: "muted", text: "Each cause once — a check key and its message with names, quotes and numbers as …/N — with the cases it failed. Click a row to list them." }));
    var table = el("table", { id: "mode-table" }, el("thead", null, el("tr", null, el("th", { text: "cause" }),
      el("th", { className: "num", text: "cases" }), el("th", { text: "for example" }))));
    var body = el("tbody");
    order.slice(0, MODE_ROWS).forEach(function (cause) {
      var rows = groups[cause];
      body.appendChild(el("tr", { className: "mode-row", onclick: function () { change({ cause: cause, page: "", "case": "" }); } },
        el("td", { className: "cause", text: cause }),
        el("td", { className: "num", text: String(rows.length) }),
        el("td", { text: rows.slice(0, 3).map(function (r) { return r.id; }).join(", ") + (rows.length > 3 ? ", …" : "") })));
    });
    table.appendChild(body);
    section.appendChild(table);
    if (order.length > MODE_ROWS) section.appendChild(el("p", { className: "muted", text: (order.length - MODE_ROWS) + " more causes: filter the cases below and open one." }));
    return section;
  }

  // ---- the case table -----------------------------------------------------
  function options(select, values, chosen, all) {
    select.appendChild(el("option", { value: "", text: all }));
    values.forEach(function (v) {
      var option = el("option", { value: v, text: v });
      if (v === chosen) option.selected = true;
      select.appendChild(option);
    });
    return select;
  }

  function matches(row, state) {
    if (state.status && row.status !== state.status) return false;
    if (state.agent && row.agent !== state.agent) return false;
    if (state.connection && row.connections.indexOf(state.connection) < 0) return false;
    if (state.key && !row.keys[state.key]) return false;
    if (state.q && row.text.indexOf(state.q.toLowerCase()) < 0) return false;
    if (state.cause && row.causes.indexOf(state.cause) < 0) return false;
    return true;
  }

  var ALL = {
    agents: unique(INDEX.map(function (r) { return r.agent; })).sort(),
    connections: unique([].concat.apply([], INDEX.map(function (r) { return r.connections; }))).sort(),
    keys: unique([].concat.apply([], INDEX.map(function (r) { return Object.keys(r.keys); }))).sort()
  };

  function casesSection(state) {
    var section = el("section", { id: "cases" }, el("h2", { text: "Cases" }));
    var search = el("input", { type: "search", id: "search", placeholder: "Search ids, agents and files", value: state.q || "" });
    search.onchange = function () { change({ q: search.value, page: "" }); };
    var controls = el("div", { className: "controls" }, search,
      options(el("select", { id: "filter-status", onchange: function () { change({ status: this.value, page: "" }); } }),
        ["passed", "failed", "flaky", "error"], state.status, "every status"),
      options(el("select", { id: "filter-agent", onchange: function () { change({ agent: this.value, page: "" }); } }),
        ALL.agents, state.agent, "every agent"),
      options(el("select", { id: "filter-connection", onchange: function () { change({ connection: this.value, page: "" }); } }),
        ALL.connections, state.connection, "every connection"),
      options(el("select", { id: "filter-key", onchange: function () { change({ key: this.value, page: "" }); } }),
        ALL.keys, state.key, "every check key"));
    section.appendChild(controls);

    if (state.cause) {
      section.appendChild(el("p", { id: "cause-filter" }, "Only the cases that failed by: " + state.cause + " ",
        el("button", { onclick: function () { change({ cause: "", page: "" }); } }, "show every case")));
    }
    var rows = INDEX.filter(function (row) { return matches(row, state); });
    var sort = state.sort || "status", descending = state.dir === "desc";
    var value = {
      id: function (r) { return r.id; }, status: function (r) { return STATUS_ORDER[r.status]; },
      agent: function (r) { return r.agent; }, reason: function (r) { return r.reason; },
      samples: function (r) { return r.samples; }, duration: function (r) { return r.duration; }
    }[sort] || function (r) { return STATUS_ORDER[r.status]; };
    rows = rows.slice().sort(function (a, b) {
      var x = value(a), y = value(b);
      var order = x < y ? -1 : x > y ? 1 : (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      return descending ? -order : order;
    });
    var size = parseInt(state.size, 10) || 100;
    var pages = Math.max(1, Math.ceil(rows.length / size));
    var page = Math.min(Math.max(parseInt(state.page, 10) || 1, 1), pages);
    var sizeSelect = el("select", { id: "page-size", onchange: function () { change({ size: this.value, page: "" }); } });
    SIZES.concat(SIZES.indexOf(size) < 0 ? [size] : []).forEach(function (n) {
      var option = el("option", { value: String(n), text: n + " a page" });
      if (n === size) option.selected = true;
      sizeSelect.appendChild(option);
    });
    var pager = el("div", { className: "pager" },
      el("button", { id: "page-previous", onclick: function () { change({ page: String(page - 1) }); } }, "‹ previous"),
      el("span", { id: "page-of", text: "page " + page + " of " + pages + " · " + rows.length + " of " + INDEX.length + " cases" }),
      el("button", { id: "page-next", onclick: function () { change({ page: String(page + 1) }); } }, "next ›"),
      sizeSelect);
    pager.firstChild.disabled = page <= 1;
    pager.children[2].disabled = page >= pages;
    section.appendChild(pager);

    function head(column, label, num) {
      var mark = sort === column ? (descending ? " ▼" : " ▲") : "";
      return el("th", { className: "sortable" + (num ? " num" : ""), "data-sort": column,
        onclick: function () { change({ sort: column, dir: sort === column && !descending ? "desc" : "", page: "" }); } }, label + mark);
    }
    var table = el("table", { id: "case-table" }, el("thead", null, el("tr", null, head("id", "id"), head("status", "status"),
      head("reason", "why"), head("agent", "agent"), el("th", { text: "connections" }), head("samples", "samples passed", true),
      head("duration", "duration", true))));
    var body = el("tbody");
    rows.slice((page - 1) * size, page * size).forEach(function (row) {
      var r = CASES[row.i].result;
      var passed = (r.samples || []).filter(function (s) { return s.passed; }).length;
      var flags = ["api_error", "empty_output", "evaluation_error"].filter(function (f) { return r[f]; });
      body.appendChild(el("tr", { className: "case-row", "data-case": r.id, onclick: function () { change({ "case": r.id }); } },
        el("td", { className: "case-id", text: r.id }),
        el("td", null, el("span", { className: "badge " + r.status, text: r.status }),
          flags.length ? el("span", { className: "muted", text: flags.join(" ") }) : null),
        el("td", { className: "case-reason", text: row.reason }),
        el("td", { text: r.agent }), el("td", { text: (r.connections || []).join(", ") }),
        el("td", { className: "num", text: passed + "/" + (r.samples || []).length + " passed, needed " + String(r.success_ratio).split("/")[0] }),
        el("td", { className: "num", text: ms(r.duration_ms) })));
    });
    table.appendChild(body);
    section.appendChild(table);
    return section;
  }

  // ---- one case, drilled down ---------------------------------------------
  function field(label, value) {
    return el("tr", null, el("th", { text: label }), el("td", null, el("pre", { text: json(value) })));
  }

  // A check's actual value as results keep it: its own, or (`actual_is_answer`)
  // the preview of the interaction's answer text (`actual_preview` in
  // check/verdict.rs: the first 300 characters, then "…").
  function actualOf(check, response) {
    if (check.actual !== undefined) return check.actual;
    if (!check.actual_is_answer || !response || typeof response.text !== "string") return undefined;
    var chars = Array.from(response.text);
    return chars.length > 300 ? chars.slice(0, 300).join("") + "\u2026" : response.text;
  }

  // The checks of an interaction of the case read from `file`: a check that
  // did not pass names the line of the file that asks for it.
  function checksTable(checks, file, response) {
    var table = el("table", { className: "checks" }, el("thead", null, el("tr", null, el("th", { text: "check" }),
      el("th", { text: "outcome" }), el("th", { text: "expected" }), el("th", { text: "actual" }), el("th", { text: "message" }),
      el("th", { className: "num", text: "score" }), el("th", { text: "extras" }))));
    var body = el("tbody");
    checks.forEach(function (c) {
      var outcome = c.outcome + (c.gate === false ? " (not gating)" : "") + (c.error_kind ? " (" + c.error_kind + ")" : "");
      body.appendChild(el("tr", { className: "check " + c.outcome },
        el("td", null, c.target + " " + c.key, c.line ? el("div", { className: "muted check-place", text: file + ":" + c.line }) : null),
        el("td", { className: c.outcome, text: outcome }),
        el("td", null, el("pre", { text: json(c.expected) })),
        el("td", null, actualOf(c, response) === undefined ? el("span", { className: "muted", text: "(missing)" }) : el("pre", { text: actualOf(c, response) })),
        el("td", { className: "check-message", text: c.message + (c.truncated ? " (cut by a host cap)" : "") }),
        el("td", { className: "num", text: c.score === undefined ? "" : fmt(c.score, 3) }),
        el("td", null, c.extras === undefined ? null : el("pre", { text: json(c.extras) }))));
    });
    table.appendChild(body);
    return table;
  }

  function interactionView(it, file) {
    var box = el("div", { className: "interaction" });
    var head = "interaction " + (it.index + 1) + ": " + (it.passed ? "passed" : "did not pass") + " · agent " + ms(it.agent_ms) + " · in all " + ms(it.duration_ms);
    if (it.usage) head += " · tokens " + it.usage.prompt_tokens + " + " + it.usage.completion_tokens;
    box.appendChild(el("h4", { className: it.passed ? "pass" : "fail", text: head }));
    if (it.request) {
      var request = el("table", { className: "request" });
      ["text", "sly_data"].forEach(function (part) {
        if (it.request[part] !== undefined) request.appendChild(field("sent " + part, it.request[part]));
      });
      box.appendChild(request);
    }
    if (it.error) box.appendChild(el("p", { className: "error request-error", text: "request failed (" + it.error.kind + "): " + it.error.message }));
    if (it.checks.length) box.appendChild(checksTable(it.checks, file, it.response));
    if (it.response) {
      var response = el("table", { className: "response" });
      ["text", "structure", "sly_data", "chat_context", "messages"].forEach(function (part) {
        if (it.response[part] !== undefined) response.appendChild(field(part, it.response[part]));
      });
      box.appendChild(el("details", null, el("summary", { text: "the reduced response" }), response));
    }
    (it.logs || []).forEach(function (log) {
      box.appendChild(el("details", null, el("summary", { text: "log of " + log.plugin }),
        el("pre", { text: log.lines.map(function (l) { return l.level + ": " + l.message; }).join("\n") })));
    });
    return box;
  }

  function detailSection(id) {
    var index = -1;
    for (var i = 0; i < CASES.length; i++) if (CASES[i].result.id === id) { index = i; break; }
    var section = el("section", { id: "detail", className: "panel" });
    section.appendChild(el("button", { className: "close", onclick: function () { change({ "case": "" }); } }, "close"));
    if (index < 0) {
      section.appendChild(el("p", { className: "failed", text: "No case has the id " + id + "." }));
      return section;
    }
    var entry = CASES[index], r = entry.result;
    section.appendChild(el("h2", { id: "detail-id", text: r.id }));
    section.appendChild(el("p", null, el("span", { className: "badge " + r.status, text: r.status }),
      "agent " + r.agent + " · connections " + (r.connections || []).join(", ") + " · success_ratio " + r.success_ratio +
      " · " + ms(r.duration_ms) + " · " + r.file));
    if (r.error) section.appendChild(el("p", { className: "error case-error", text: r.error.kind + ": " + r.error.message }));
    if (entry.modes.length) {
      section.appendChild(el("h3", { text: "Failure modes" }));
      var list = el("ul", { className: "modes" });
      entry.modes.forEach(function (m) {
        list.appendChild(el("li", { text: m.description + " — " + m.samples + " samples (" + fmt(m.percent, 0) + " %), " + m.occurrences + " occurrences" }));
      });
      section.appendChild(list);
    }
    (r.samples || []).forEach(function (s) {
      var box = el("div", { className: "sample" + (s.passed ? "" : " failed-sample") },
        el("h3", { className: s.passed ? "pass" : "fail", text: "sample " + s.index + ": " + (s.passed ? "passed" : "failed") + " · " + ms(s.duration_ms) }));
      s.runs.forEach(function (run) {
        box.appendChild(el("p", { text: "over " + run.connection + ": " + (run.passed ? "passed" : "failed") }));
        run.interactions.forEach(function (it) { box.appendChild(interactionView(it, r.file)); });
      });
      section.appendChild(box);
    });
    return section;
  }

  // ---- assess, eval and validate: what those commands wrote ---------------
  function table(id, heads, rows) {
    var head = el("tr");
    heads.forEach(function (h) { head.appendChild(el("th", h.num ? { className: "num", text: h.text } : { text: h.text || h })); });
    var body = el("tbody");
    rows.forEach(function (cells) {
      var row = el("tr");
      cells.forEach(function (cell, i) {
        var td = el("td", heads[i].num ? { className: "num" } : null);
        if (cell !== null && typeof cell === "object") td.appendChild(cell); else td.textContent = cell === null ? "" : String(cell);
        row.appendChild(td);
      });
      body.appendChild(row);
    });
    return el("table", id ? { id: id } : null, el("thead", null, head), body);
  }

  // A weighted score as the terminal prints it: 0.83 (5/6), 1 error.
  function tally(t) {
    var score = t.score === null ? "n/a (nothing judged)" : fmt(t.score, 2) + " (" + t.matched_weight + "/" + t.total_weight + ")";
    return score + (t.errors ? ", " + t.errors + (t.errors === 1 ? " error" : " errors") : "");
  }

  function verdict(passed) {
    if (passed === undefined || passed === null) return "";
    return el("span", { className: "badge " + (passed ? "passed" : "failed"), text: passed ? "passed" : "FAILED" });
  }

  function categoriesTable(id, categories) {
    var names = Object.keys(categories || {});
    if (!names.length) return el("p", { className: "muted", text: "No expectation names a category." });
    return table(id, ["category", { text: "score", num: true }], names.map(function (n) { return [n, tally(categories[n])]; }));
  }

  function assessmentSection(report) {
    var cases = report.cases || [];
    var section = el("section", { id: "assessment" }, el("h2", { text: "Assessment (assay assess): " + cases.length + " cases" }));
    section.appendChild(table("assessment-cases", ["case", "status", { text: "samples passed", num: true }, "failure modes"],
      cases.map(function (a) {
        var modes = el("ul", { className: "modes" });
        (a.modes || []).forEach(function (m) {
          var item = el("li", { text: m.samples + " of " + a.samples + " samples (" + fmt(m.percent, 0) + " %), " + m.occurrences + " times: " + m.description });
          (m.examples || []).forEach(function (e) {
            item.appendChild(el("div", { className: "muted", text: "e.g. sample " + e.sample + ": " + e.message + (e.actual === undefined || e.actual === null ? "" : " (actual: " + e.actual + ")") }));
          });
          modes.appendChild(item);
        });
        (a.llm_modes || []).forEach(function (m) {
          modes.appendChild(el("li", { className: "llm-mode", text: "judge: " + m.samples + " samples, " + m.occurrences + " times: " + m.description }));
        });
        if (a.error) modes.appendChild(el("li", { className: "error", text: a.error.kind + ": " + a.error.message }));
        return [a.case_id, el("span", { className: "badge " + a.status, text: a.status }), a.passed + "/" + a.samples, modes];
      })));
    return section;
  }

  function evalSection(report) {
    var scenarios = report.scenarios || [];
    var section = el("section", { id: "eval" }, el("h2", { text: "Scenarios (assay eval): " + scenarios.length }));
    var cards = el("div", { className: "cards" }, el("div", { className: "card" },
      el("span", { className: "value", id: "eval-overall", text: tally(report.overall) }), el("span", { className: "label", text: "overall weighted score" })));
    section.appendChild(cards);
    section.appendChild(el("h3", { text: "Per category" }));
    section.appendChild(categoriesTable("eval-categories", report.categories));
    section.appendChild(el("h3", { text: "Per scenario" }));
    section.appendChild(table("eval-scenarios", ["scenario", "agent", { text: "score", num: true }, "verdict", "expectations"],
      scenarios.map(function (s) {
        var detail = el("div");
        if (s.error) detail.appendChild(el("p", { className: "error", text: s.error.kind + ": " + s.error.message }));
        var judged = {};
        (s.samples || []).forEach(function (sample) {
          (sample.expectations || []).forEach(function (e) { (judged[e.expectation_id] = judged[e.expectation_id] || []).push({ sample: sample.index, e: e }); });
        });
        (s.expectations || []).forEach(function (x) {
          var line = x.expectation_id + ": " + (x.score === null ? "not judged" : fmt(x.score, 2)) +
            (x.threshold === undefined ? "" : " (threshold " + x.threshold + ")") + (x.required ? "" : " · not required") +
            (x.met === null ? "" : x.met ? " · met" : x.required ? " · MISSED" : " · not met");
          var box = el("details", null, el("summary", x.met === false ? { className: "fail", text: line } : { text: line }));
          (judged[x.expectation_id] || []).forEach(function (j) {
            var e = j.e;
            box.appendChild(el("div", { className: e.matched === false ? "fail" : e.matched ? "pass" : "error",
              text: "sample " + j.sample + " · " + e.key + " · weight " + e.weight + ": " + (e.matched === null ? "ERROR" : e.matched ? "MATCH" : "MISS") + " — " + e.message }));
          });
          detail.appendChild(box);
        });
        (s.samples || []).forEach(function (sample) {
          if (sample.response !== undefined && sample.response !== null) {
            detail.appendChild(el("details", null, el("summary", { text: "answer of sample " + sample.index }), el("pre", { text: sample.response })));
          }
          if (sample.error) detail.appendChild(el("p", { className: "error", text: "sample " + sample.index + ": " + sample.error.kind + ": " + sample.error.message }));
        });
        return [s.scenario_id, s.agent, tally(s.score), verdict(s.passed), detail];
      })));
    return section;
  }

  function confusionMatrix(c) {
    return table("validate-confusion", ["", { text: "judged match", num: true }, { text: "judged no match", num: true }], [
      ["wanted match", c.true_positive, c.false_negative],
      ["wanted no match", c.false_positive, c.true_negative]
    ]);
  }

  function validationSection(report) {
    var files = report.files || [];
    var section = el("section", { id: "validation" }, el("h2", { text: "Judge validation (assay validate): " + files.length + " files" }));
    section.appendChild(el("div", { className: "cards" }, el("div", { className: "card" },
      el("span", { className: "value", id: "validate-agreement", text: tally(report.agreement) }),
      el("span", { className: "label", text: "weighted agreement with the wanted results" }))));
    section.appendChild(el("h3", { text: "Confusion matrix (wanted × judged, counts)" }));
    section.appendChild(confusionMatrix(report.confusion));
    if (report.confusion.errors) section.appendChild(el("p", { className: "error", text: report.confusion.errors + " judgments could not be made." }));
    section.appendChild(el("h3", { text: "Per category" }));
    section.appendChild(categoriesTable("validate-categories", report.categories));
    section.appendChild(el("h3", { text: "Per mock response" }));
    var rows = [];
    files.forEach(function (f) {
      if (f.error) rows.push([f.scenario_id, "", el("span", { className: "error", text: f.error.kind + ": " + f.error.message })]);
      (f.mock_responses || []).forEach(function (m) {
        var list = el("ul");
        m.judgments.forEach(function (j) {
          var judged = j.actual_result === null ? "could not judge" : j.actual_result ? "judged match" : "judged no match";
          list.appendChild(el("li", { className: j.agrees === false ? "fail" : j.agrees ? "" : "error",
            text: j.expectation_id + ": wanted " + (j.wanted_result ? "match" : "no match") + ", " + judged + " (" + j.key + ", weight " + j.weight + "): " + j.message }));
        });
        rows.push([f.scenario_id + " / " + m.mock_response_id, tally(m.agreement), list]);
      });
    });
    section.appendChild(table("validate-mocks", ["mock response", { text: "agreement", num: true }, "judgments"], rows));
    return section;
  }

  // ---- the page -----------------------------------------------------------
  var fixed = null;
  function render() {
    var state = readState();
    if (!fixed) {
      fixed = {
        summary: summarySection(),
        // What `assess`, `eval` or `validate` found: the headline of their runs.
        commands: [DATA.assessment && assessmentSection(DATA.assessment), DATA.eval && evalSection(DATA.eval),
          DATA.validation && validationSection(DATA.validation)].filter(Boolean),
        modes: modesSection(),
        charts: chartsSection()
      };
    }
    app.textContent = "";
    app.appendChild(el("h1", { text: "assay report: " + DATA.title }));
    var run = DATA.summary && DATA.summary.run;
    if (run) {
      var made = ["assay " + run.assay, "started " + run.started_at];
      if (run.commit) made.push("commit " + run.commit);
      app.appendChild(el("p", { id: "run-info", className: "muted" }, made.join(" · "),
        run.command ? el("code", { text: " " + run.command.map(function (a) { return /[\s"']/.test(a) ? JSON.stringify(a) : a; }).join(" ") }) : null));
    }
    if (state["case"]) app.appendChild(detailSection(state["case"]));
    app.appendChild(fixed.summary);
    fixed.commands.forEach(function (section) { app.appendChild(section); });
    app.appendChild(fixed.modes);
    app.appendChild(casesSection(state));
    app.appendChild(fixed.charts);
    if (state["case"]) window.scrollTo(0, 0);
  }

  window.addEventListener("hashchange", render);
  render();
  markDrawn();
}
