/* assets.c -- the stylesheet and the small script, as C strings. */
#include "web/assets.h"

#include <string.h>

static const char css[] =
    ":root{--fg:#1d2327;--muted:#5f6b73;--bg:#f7f7f4;--card:#fff;--line:#dcdcd6;"
    "--accent:#2f5d7c;--warn:#8a5a00;--bad:#a12a2a;--good:#2d6a3e}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;font:16px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--fg);"
    "background:var(--bg)}\n"
    "header{display:flex;flex-wrap:wrap;gap:.2rem .8rem;align-items:center;padding:.35rem .7rem;"
    "background:var(--card);border-bottom:1px solid var(--line);font-size:.92rem}\n"
    ".brand{font-weight:600;letter-spacing:.02em}\n"
    "nav a{margin-right:.7rem;color:var(--accent);text-decoration:none}\n"
    ".signout{margin-left:auto;display:flex;gap:.4rem;align-items:center}\n"
    ".signout button{padding:.2rem .5rem;font-size:.85rem}\n"
    "main{max-width:60rem;margin:0 auto;padding:.5rem .7rem 2rem}\n"
    "h1{font-size:1.3rem;margin:.3rem 0 .6rem}h1.req{font-size:1.15rem;margin:.2rem 0 .2rem}\n"
    "h2{font-size:1.05rem;margin:1.2rem 0 .4rem}\n"
    "h4{margin:.6rem 0 .2rem;font-size:.9rem;color:var(--muted)}\n"
    "ul.pending{list-style:none;padding:0;margin:0}\n"
    "li.req{display:flex;gap:.5rem;align-items:flex-start;margin-bottom:.5rem}\n"
    "li.req input.pick{margin-top:.9rem;width:1.3rem;height:1.3rem;flex:none}\n"
    "li.req a{display:block;flex:1;min-width:0;padding:.6rem .7rem;background:var(--card);"
    "border:1px solid var(--line);border-radius:6px;color:inherit;text-decoration:none}\n"
    "li.req .command{display:block;margin:.2rem 0;white-space:pre-wrap;overflow-wrap:anywhere}\n"
    "li.req .purpose{display:block;font-style:italic}\n"
    ".meta,.note,.count{color:var(--muted);font-size:.9rem}\n"
    ".small{font-size:.85rem;margin:.2rem 0}\n"
    ".class{font-weight:600}.class.destructive{color:var(--bad)}"
    ".class.config_mutation{color:var(--warn)}\n"
    "pre,code{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.9rem}\n"
    "pre.command{background:#fff;border:2px solid var(--accent);padding:.5rem .6rem;margin:.2rem 0;"
    "white-space:pre-wrap;overflow-wrap:anywhere;border-radius:6px;max-height:10.5em;overflow:auto}"
    "\n"
    "pre.output{background:#fff;border:1px solid var(--line);padding:.6rem;max-height:24rem;"
    "overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere}\n"
    "mark.hidden-char{background:#ffd54f;color:#000;outline:1px solid var(--warn);"
    "border-radius:2px;padding:0 1px}mark.hidden-char.bidi{background:#ff8a65}\n"
    ".hidden-chars{background:#fff3cd;outline:1px dashed var(--warn)}\n"
    ".error{color:var(--bad);font-weight:600}.warn{color:var(--warn)}.ok{color:var(--good)}\n"
    ".calm{color:var(--good)}\n"
    "p.status{margin:.1rem 0 .3rem;font-size:.9rem}\n"
    "p.label{margin:.3rem 0 0;font-size:.85rem;color:var(--muted)}\n"
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.15rem .7rem;margin:.4rem 0}\n"
    "dl.facts dt{color:var(--muted);font-size:.85rem;padding-top:.1rem}"
    "dl.facts dd{margin:0;overflow-wrap:anywhere;font-size:.95rem}\n"
    "table{border-collapse:collapse;width:100%;background:var(--card);font-size:.9rem}\n"
    "th,td{border:1px solid var(--line);padding:.3rem .45rem;text-align:left;vertical-align:top;"
    "word-break:normal;overflow-wrap:break-word}\n"
    "@media(max-width:40rem){table{display:block;overflow-x:auto}}\n"
    "tr.named td{background:#fff8e6}\n"
    ".decide{display:grid;gap:.5rem;margin:.6rem 0;grid-template-columns:1fr;align-items:end}\n"
    "@media(min-width:48rem){.decide{grid-template-columns:1fr 1fr}}\n"
    ".decide form,form.bulk,form.confirm{display:flex;flex-direction:column;gap:.4rem;margin:0}\n"
    ".row{display:flex;gap:.4rem}.row input{flex:1;min-width:0}\n"
    "label.confirm-read{flex-direction:row;align-items:center;gap:.4rem;font-size:.9rem;"
    "color:var(--warn)}\n"
    "form.signin,form.search{display:flex;flex-direction:column;gap:.5rem;"
    "background:var(--card);padding:.8rem;border:1px solid var(--line);border-radius:6px}\n"
    "form.search{flex-direction:row;flex-wrap:wrap;align-items:flex-end}\n"
    "form.bulk{background:var(--card);padding:.5rem;border:1px solid var(--line);"
    "border-radius:6px;margin:.5rem 0}form.bulk .row{flex-wrap:wrap}"
    "form.bulk .row input{flex:1 1 14rem}form.bulk p{margin:0}\n"
    "details{margin:.4rem 0}details>summary{cursor:pointer;color:var(--accent);padding:.2rem 0}\n"
    "label{display:flex;flex-direction:column;gap:.2rem;font-size:.95rem}\n"
    "input,select,button{font:inherit;padding:.45rem .6rem;border:1px solid var(--line);"
    "border-radius:4px}\n"
    "button{background:var(--accent);color:#fff;border:0;cursor:pointer;white-space:nowrap}\n"
    "button.approve{background:var(--good)}button.reject{background:var(--bad)}\n"
    ".live{font-size:.8rem;color:var(--muted);margin:.3rem 0}\n"
    "ul.bulk-result li.refused{color:var(--bad)}\n"
    "ol.events{padding-left:1.2rem;font-size:.9rem}ol.events .detail{display:block;"
    "color:var(--muted);overflow-wrap:anywhere}\n";

/* Refreshes every [data-frag] element when the server-sent stream reports a
 * change, and once when the stream (re)opens, keeping the boxes ticked for
 * a bulk decision (a box is its request's id and payload hash: one whose
 * request changed comes back unticked).  Fragments are HTML the server
 * escaped; nothing from the page's data is evaluated. */
static const char js[] =
    "(function () {\n"
    "  'use strict';\n"
    "  var live = document.getElementById('live');\n"
    "  var frags = Array.prototype.slice.call(document.querySelectorAll('[data-frag]'));\n"
    "  if (!live || !frags.length || !window.EventSource) { return; }\n"
    "  function say(state, text) { live.dataset.state = state;"
    " live.textContent = 'live updates: ' + text; }\n"
    "  function refresh() {\n"
    "    frags.forEach(function (el) {\n"
    "      fetch(el.dataset.frag, {credentials: 'same-origin', cache: 'no-store'})\n"
    "        .then(function (r) {\n"
    "          if (r.status === 401) { say('ended', 'session ended, sign in again'); "
    "throw new Error('401'); }\n"
    "          if (!r.ok) { throw new Error(String(r.status)); }\n"
    "          return r.text();\n"
    "        })\n"
    "        .then(function (html) {\n"
    "          var picked = {};\n"
    "          el.querySelectorAll('input.pick:checked').forEach(function (i) {"
    " picked[i.value] = true; });\n"
    "          el.innerHTML = html;\n"
    "          el.querySelectorAll('input.pick').forEach(function (i) {"
    " if (picked[i.value] && !i.disabled) { i.checked = true; } });\n"
    "          el.dataset.version = String((Number(el.dataset.version) || 0) + 1);\n"
    "        })\n"
    "        .catch(function () {});\n"
    "    });\n"
    "  }\n"
    "  var es = new EventSource('/events');\n"
    "  es.addEventListener('open', function () { say('live', 'on'); refresh(); });\n"
    "  es.addEventListener('change', refresh);\n"
    "  es.addEventListener('end', function () { es.close();"
    " say('ended', 'session ended, sign in again'); });\n"
    "  es.onerror = function () { if (live.dataset.state !== 'ended')"
    " { say('reconnecting', 'reconnecting'); } };\n"
    "})();\n";

const char *assets_get(const char *path, const char **type, size_t *len)
{
	if (strcmp(path, "/static/app.css") == 0) {
		*type = "text/css; charset=utf-8";
		*len = sizeof(css) - 1;
		return css;
	}
	if (strcmp(path, "/static/app.js") == 0) {
		*type = "text/javascript; charset=utf-8";
		*len = sizeof(js) - 1;
		return js;
	}
	return NULL;
}
