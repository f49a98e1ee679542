// The parts every page of assay's HTML reports shares, and how a page gets
// its data. A page is this script, then its view (run.js or diff.js),
// wrapped in one function; the view defines `draw(DATA)`.
//
// Every text from the results goes into the page as text (textContent, SVG
// text nodes), never as markup. The state (filters, page, open case) lives
// in the URL's hash, so that a link opens the same view.
//
// The data is one JSON document, compressed (raw deflate) and base64'd in
// the element #data: a 10,000-case run's JSON is ~30 MB, its
// compressed form a tenth of that. DecompressionStream reads it back
// without any request (Chrome 80+, Firefox 113+, Safari 16.4+).
"use strict";
var app = document.getElementById("app");

function load(draw) {
  var node = document.getElementById("data");
  if (typeof DecompressionStream === "undefined") {
    app.textContent = "This browser cannot read the report's data: it needs DecompressionStream " +
      "(Chrome 80+, Firefox 113+, Safari 16.4+).";
    return;
  }
  var text = atob(node.textContent.trim());
  var bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  var inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  new Response(inflated).text().then(function (json) {
    draw(JSON.parse(json));
  }).catch(function (error) {
    app.textContent = "The report's data cannot be read: " + error;
  });
}

function el(tag, attrs) {
  var node = document.createElement(tag);
  for (var name in attrs || {}) {
    if (name === "text") node.textContent = attrs[name];
    else if (name === "className") node.className = attrs[name];
    else if (name === "onclick" || name === "oninput" || name === "onchange") node[name] = attrs[name];
    else node.setAttribute(name, attrs[name]);
  }
  for (var k = 2; k < arguments.length; k++) {
    var child = arguments[k];
    if (child === null || child === undefined) continue;
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function svg(tag, attrs, text) {
  var node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (var name in attrs) node.setAttribute(name, attrs[name]);
  if (text !== undefined) node.textContent = text;
  return node;
}

function fmt(n, digits) {
  if (typeof n !== "number" || !isFinite(n)) return "–";
  return n.toFixed(digits === undefined ? 1 : digits);
}

function ms(n) { return n >= 1000 ? fmt(n / 1000, 2) + " s" : fmt(n, 1) + " ms"; }

function json(value) { return typeof value === "string" ? value : JSON.stringify(value, null, 2); }

function unique(list) { var seen = {}; return list.filter(function (v) { return seen[v] ? false : (seen[v] = true); }); }

// The state in the hash.
function readState() {
  var state = {};
  location.hash.replace(/^#/, "").split("&").forEach(function (part) {
    if (!part) return;
    var at = part.indexOf("=");
    var key = at < 0 ? part : part.slice(0, at);
    state[decodeURIComponent(key)] = at < 0 ? "" : decodeURIComponent(part.slice(at + 1));
  });
  return state;
}

function writeState(state) {
  var parts = [];
  for (var key in state) {
    if (state[key] !== "" && state[key] !== undefined && state[key] !== null) {
      parts.push(encodeURIComponent(key) + "=" + encodeURIComponent(state[key]));
    }
  }
  location.hash = parts.join("&");
}

function change(updates) {
  var state = readState();
  for (var key in updates) state[key] = updates[key];
  writeState(state);
}

// Marks the first screen drawn: what benches/report.sh and the tests read.
function markDrawn() {
  app.appendChild(el("p", { className: "muted", id: "rendered", "data-ms": fmt(performance.now(), 1),
    text: "Drawn in " + fmt(performance.now(), 0) + " ms." }));
}
