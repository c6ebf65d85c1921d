// The scirag page: asks /v1/answer, shows the cited answer, the evidence with per-layer
// ranks, the trace and the caller's scope; a citation opens its chunk in context
// (/v1/chunks/{id}). Everything is inserted as text, never as HTML from the server.
"use strict";
const $ = (id) => document.getElementById(id);
const keyBox = $("apikey");
keyBox.value = sessionStorage.getItem("scirag-key") || "";
keyBox.addEventListener("change", () => { sessionStorage.setItem("scirag-key", keyBox.value); loadScope(); });

function headers(json) {
  const h = {};
  if (keyBox.value) h["Authorization"] = "Bearer " + keyBox.value;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

function narrowing() {
  const scope = {};
  const lic = [...document.querySelectorAll("#licenses input:checked")].map((x) => x.value);
  if (lic.length) scope.licenses = lic;
  const split = (v) => v.split(",").map((x) => x.trim()).filter(Boolean);
  if ($("sources").value.trim()) scope.sources = split($("sources").value);
  if ($("exclude").value.trim()) scope.exclude_documents = split($("exclude").value);
  if ($("retracted").checked) scope.exclude_retracted = true;
  if ($("only-documents").value.trim()) scope.documents = split($("only-documents").value);
  if ($("only-years").value.trim()) scope.years = split($("only-years").value);
  return scope;
}

function scopeQuery() {
  const s = narrowing(), q = new URLSearchParams();
  for (const [k, v] of Object.entries(s)) q.set(k, Array.isArray(v) ? v.join(",") : String(v));
  const text = q.toString();
  return text ? "?" + text : "";
}

async function call(method, path, body) {
  const r = await fetch(path, { method, headers: headers(!!body), body: body ? JSON.stringify(body) : undefined });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) {
    const err = new Error(`${data.title || r.statusText}${data.detail ? ": " + data.detail : ""} (${data.code || r.status})`);
    err.problem = data;
    throw err;
  }
  return data;
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

async function loadScope() {
  try {
    const s = await call("GET", "/v1/scope" + scopeQuery());
    $("scope").textContent = JSON.stringify(s, null, 1);
    $("whoami").textContent = "role: " + s.role;
  } catch (e) {
    $("scope").textContent = e.message;
  }
  await loadDocuments();
}

// "page 3" / "pages 3-5", "line 9" / "lines 9-12": one page or line is never a range (issue 25)
function location_(c) {
  const span = (one, many, a, b) => (b && b !== a ? many + " " + a + "-" + b : one + " " + a);
  if (c.page_start) return span("page", "pages", c.page_start, c.page_end);
  if (c.line_start) return span("line", "lines", c.line_start, c.line_end);
  return c.lines ? "lines " + c.lines : "";
}

async function openChunk(chunkId, n) {
  const view = $("chunk-view");
  view.className = "";
  view.textContent = "loading chunk " + chunkId + " …";
  try {
    const c = await call("GET", `/v1/chunks/${chunkId}?context=1` + scopeQuery().replace("?", "&"));
    view.textContent = "";
    view.dataset.chunkId = String(c.chunk_id);
    view.append(el("div", (n ? `[${n}] ` : "") + c.title, "title"));
    view.append(el("div", `${c.section_path} · ${location_(c)} · ${c.license}`, "muted"));
    const all = [...c.context.filter((x) => x.ordinal < c.ordinal), c, ...c.context.filter((x) => x.ordinal > c.ordinal)];
    for (const x of all) {
      const cited = x.chunk_id === c.chunk_id;
      const div = el("div", x.content, "chunk" + (cited ? " cited" : ""));
      div.dataset.chunkId = String(x.chunk_id);
      if (!cited) div.title = `${x.section_path} · ${location_(x)}`;
      view.append(div);
    }
    $("chunk-panel").scrollIntoView({ behavior: "smooth", block: "start" });
  } catch (e) {
    view.textContent = e.message;
    view.className = "error";
  }
}

function renderAnswer(a) {
  const box = $("answer");
  box.textContent = "";
  box.className = a.abstained ? "abstained" : "";
  const byN = new Map((a.citations || []).map((c) => [String(c.n), c]));
  // Split on [n] markers; each known marker becomes a link to its chunk.
  const parts = String(a.answer || "").split(/(\[\d+\])/);
  for (const part of parts) {
    const m = part.match(/^\[(\d+)\]$/);
    if (m && byN.has(m[1])) {
      const c = byN.get(m[1]);
      const link = el("a", part, "cite");
      link.href = "#chunk-" + c.chunk_id;
      link.dataset.chunkId = String(c.chunk_id);
      link.addEventListener("click", (ev) => { ev.preventDefault(); openChunk(c.chunk_id, c.n); });
      box.append(link);
    } else {
      box.append(document.createTextNode(part));
    }
  }
  const list = $("citations");
  list.textContent = "";
  for (const c of a.citations || []) {
    const li = el("li");
    li.value = c.n;
    const link = el("a", c.cite || c.title, "cite");
    link.href = "#chunk-" + c.chunk_id;
    link.addEventListener("click", (ev) => { ev.preventDefault(); openChunk(c.chunk_id, c.n); });
    li.append(link);
    list.append(li);
  }
  const body = document.querySelector("#evidence tbody");
  body.textContent = "";
  for (const r of a.retrieval || []) {
    const tr = el("tr");
    tr.dataset.chunkId = String(r.chunk_id);
    tr.append(el("td", r.rank));
    const td = el("td");
    // the paper's title on every row, then the section within it (issue 25)
    const crumb = (r.citation && r.citation.section_path) || "";
    const link = el("a", r.title + (crumb ? " > " + crumb : ""), "cite");
    link.href = "#chunk-" + r.chunk_id;
    link.addEventListener("click", (ev) => { ev.preventDefault(); openChunk(r.chunk_id); });
    td.append(link);
    tr.append(td);
    tr.append(el("td", Number(r.score).toFixed(3)));
    const ranks = Object.entries(r.layers || {}).sort((x, y) => x[1] - y[1]).map(([k, v]) => `${k} #${v}`).join(", ");
    tr.append(el("td", ranks));
    body.append(tr);
  }
  $("trace").textContent = traceText(a.trace);
}

function traceText(t, indent = "") {
  if (!t) return "–";
  const lines = [];
  for (const s of t.stages || []) {
    lines.push(`${indent}${s.stage}: ${s.status} ${s.ms} ms, ${s.candidates} candidates`);
  }
  if (t.retrieve) lines.push(`${indent}retrieve (${t.retrieve.profile}, k=${t.retrieve.k}, ${t.retrieve.ms} ms):`, traceText(t.retrieve, indent + "  "));
  if (t.ms !== undefined && !indent) lines.push(`total ${t.ms} ms`);
  return lines.join("\n");
}

async function ask() {
  const q = $("question").value.trim();
  if (!q) return;
  $("error").textContent = "";
  $("status").textContent = "asking …";
  $("ask").disabled = true;
  const t0 = performance.now();
  try {
    const body = { question: q };
    const s = narrowing();
    if (Object.keys(s).length) body.scope = s;
    const a = await call("POST", "/v1/answer", body);
    renderAnswer(a);
    $("status").textContent = `answered in ${Math.round(performance.now() - t0)} ms (${a.answerer})`;
    document.body.dataset.state = "answered";
  } catch (e) {
    $("error").textContent = e.message;
    $("status").textContent = "";
    document.body.dataset.state = "error";
  } finally {
    $("ask").disabled = false;
  }
}

// The documents the scope shows (GET /v1/documents), with counts per license and source.
let documentsCall = 0;  // only the newest call may fill the view (an older one may answer later)
async function loadDocuments() {
  const body = document.querySelector("#documents tbody");
  const mine = ++documentsCall;
  try {
    const q = scopeQuery();
    const d = await call("GET", "/v1/documents" + (q ? q + "&" : "?") + "limit=1000");
    if (mine !== documentsCall) return;
    const rows = d.documents.map((x) => {
      const tr = el("tr");
      tr.dataset.documentId = String(x.document_id);
      for (const v of [x.document_id, x.title, x.year ?? "", x.license, x.source]) tr.append(el("td", v));
      return tr;
    });
    body.replaceChildren(...rows);
    const per = (key) => {
      const m = {};
      for (const c of d.counts) m[c[key]] = (m[c[key]] || 0) + c.documents;
      return Object.entries(m).sort().map(([k, n]) => `${k} ${n}`).join(", ");
    };
    const total = d.counts.reduce((a, c) => a + c.documents, 0);
    $("doc-counts").textContent = `${total} document(s); by license: ${per("license")}; by source: ${per("source")}`;
  } catch (e) {
    if (mine !== documentsCall) return;
    body.replaceChildren();
    $("doc-counts").textContent = e.message;
  }
}

$("ask").addEventListener("click", ask);
$("question").addEventListener("keydown", (ev) => { if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) ask(); });
$("apply-scope").addEventListener("click", loadScope);
// ?q=... fills the question and asks (links, and the browser test)
const params = new URLSearchParams(location.search);
if (params.get("q")) { $("question").value = params.get("q"); }
loadScope().then(() => { if (params.get("q")) ask(); });
