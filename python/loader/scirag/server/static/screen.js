// The screening view: one record at a time, most likely relevant first, with the
// stopping rule; i / e / u decide (e uses the selected reason). Talks to /v1/campaigns.
"use strict";
const $ = (id) => document.getElementById(id);
$("apikey").value = sessionStorage.getItem("scirag-key") || "";
$("campaign").value = sessionStorage.getItem("scirag-campaign") || "";
let current = null;

function headers() {
  const h = { "Content-Type": "application/json" };
  if ($("apikey").value) h["Authorization"] = "Bearer " + $("apikey").value;
  return h;
}
function base() { return "/v1/campaigns/" + encodeURIComponent($("campaign").value.trim()); }

async function call(path, options) {
  const r = await fetch(base() + path, { headers: headers(), ...(options || {}) });
  const body = await r.json();
  if (!r.ok) throw new Error((body.code || r.status) + ": " + (body.detail || body.title || ""));
  return body;
}

async function load() {
  sessionStorage.setItem("scirag-key", $("apikey").value);
  sessionStorage.setItem("scirag-campaign", $("campaign").value);
  $("error").textContent = "";
  delete document.body.dataset.state;
  try {
    const next = await call("/next?n=1");
    const s = next.stopping;
    $("progress").textContent = `${s.screened} of ${s.records} screened, ${s.included} included` +
      (next.model ? ` (model ${next.model}, trained on ${next.training_size})` : " (records in the order found until one include and one exclude)");
    $("stop").textContent = `${s.irrelevant_in_a_row} irrelevant in a row; stopping suggested at ${s.stop_after}` +
      (s.suggest_stop ? ": the stopping rule is met, you may stop." : "");
    $("stop").className = s.suggest_stop ? "met" : "muted";
    const reasons = $("reason");
    if (!reasons.options.length) {
      for (const x of next.exclusion_reasons) reasons.add(new Option(x, x));
    }
    current = next.records[0] || null;
    $("record").dataset.recordId = current ? current.record_id : "";
    $("title").textContent = current ? current.title : "Nothing left to screen.";
    $("title").className = current ? "" : "muted";
    $("meta").textContent = current ? [`#${current.record_id}`, current.year || "n.d.", current.authors].filter(Boolean).join(" · ") : "";
    $("abstract").textContent = current ? (current.abstract || "(no abstract)") : "";
    const p = await call("/prisma");
    $("prisma").textContent = JSON.stringify(p.counts, null, 1);
    document.body.dataset.state = "ready";
  } catch (e) {
    $("error").textContent = e.message;
    document.body.dataset.state = "error";
  }
}

async function decide(decision) {
  if (!current) return;
  const body = { record_id: current.record_id, decision };
  if (decision === "exclude") body.reason = $("reason").value;
  delete document.body.dataset.state;
  try {
    await call("/decisions", { method: "POST", body: JSON.stringify(body) });
  } catch (e) {
    $("error").textContent = e.message;
    document.body.dataset.state = "error";
    return;
  }
  await load();
}

$("load").addEventListener("click", load);
$("include").addEventListener("click", () => decide("include"));
$("exclude").addEventListener("click", () => decide("exclude"));
$("unsure").addEventListener("click", () => decide("unsure"));
document.addEventListener("keydown", (ev) => {
  if (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT") return;
  if (ev.key === "i") decide("include");
  else if (ev.key === "e") decide("exclude");
  else if (ev.key === "u") decide("unsure");
});
if ($("apikey").value && $("campaign").value) load();
