/* assets.c -- the stylesheet and the small script, as C strings. */
#include "web/assets.h"

#include <string.h>

static const char css[] =
    ":root{--fg:#1d2327;--muted:#5f6b73;--bg:#f7f7f4;--card:#fff;--line:#dcdcd6;"
    "--accent:#2f5d7c;--warn:#8a5a00;--bad:#a12a2a;--good:#2d6a3e}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;font:16px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--fg);"
    "background:var(--bg)}\n"
    "header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.6rem 1rem;"
    "background:var(--card);border-bottom:1px solid var(--line)}\n"
    ".brand{font-weight:600;letter-spacing:.02em}\n"
    "nav a{margin-right:.9rem;color:var(--accent);text-decoration:none}\n"
    ".signout{margin-left:auto;display:flex;gap:.5rem;align-items:center}\n"
    "main{max-width:60rem;margin:0 auto;padding:1rem}\n"
    "h1{font-size:1.4rem;margin:.4rem 0 1rem}h2{font-size:1.1rem;margin:1.6rem 0 .5rem}\n"
    "h4{margin:.6rem 0 .2rem;font-size:.9rem;color:var(--muted)}\n"
    "ul.pending{list-style:none;padding:0;margin:0}\n"
    "li.req a{display:block;padding:.7rem .8rem;margin-bottom:.6rem;background:var(--card);"
    "border:1px solid var(--line);border-radius:6px;color:inherit;text-decoration:none}\n"
    "li.req .command{display:block;margin:.3rem 0;white-space:pre-wrap;word-break:break-all}\n"
    ".meta,.note,.count{color:var(--muted);font-size:.9rem}\n"
    ".class{font-weight:600}.class.destructive{color:var(--bad)}"
    ".class.config_mutation{color:var(--warn)}\n"
    "pre,code{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.92rem}\n"
    "pre.command{background:#fff;border:2px solid var(--accent);padding:.8rem;"
    "white-space:pre-wrap;word-break:break-all;border-radius:6px}\n"
    "pre.output{background:#fff;border:1px solid var(--line);padding:.6rem;max-height:24rem;"
    "overflow:auto;white-space:pre-wrap;word-break:break-all}\n"
    ".hidden-chars{background:#fff3cd;outline:1px dashed var(--warn)}\n"
    ".error{color:var(--bad);font-weight:600}.warn{color:var(--warn)}.ok{color:var(--good)}\n"
    ".calm{color:var(--good)}\n"
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}\n"
    "dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;word-break:break-all}\n"
    "table{border-collapse:collapse;width:100%;background:var(--card);font-size:.92rem}\n"
    "th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top;"
    "word-break:break-word}\n"
    "tr.named td{background:#fff8e6}\n"
    ".decide{display:grid;gap:1rem;margin:1.5rem 0;grid-template-columns:1fr}\n"
    "@media(min-width:40rem){.decide{grid-template-columns:1fr 1fr}}\n"
    ".decide form,form.signin,form.search{display:flex;flex-direction:column;gap:.5rem;"
    "background:var(--card);padding:.8rem;border:1px solid var(--line);border-radius:6px}\n"
    "form.search{flex-direction:row;flex-wrap:wrap}\n"
    "label{display:flex;flex-direction:column;gap:.2rem;font-size:.95rem}\n"
    "input,select,button{font:inherit;padding:.45rem .6rem;border:1px solid var(--line);"
    "border-radius:4px}\n"
    "button{background:var(--accent);color:#fff;border:0;cursor:pointer}\n"
    "button.approve{background:var(--good)}button.reject{background:var(--bad)}\n"
    ".live{font-size:.85rem;color:var(--muted)}\n"
    "ol.events{padding-left:1.2rem;font-size:.9rem}ol.events .detail{display:block;"
    "color:var(--muted);word-break:break-all}\n";

/* Refreshes every [data-frag] element when the server-sent stream reports a
 * change, and once when the stream (re)opens.  Fragments are HTML the
 * server escaped; nothing from the page's data is evaluated. */
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
    "        .then(function (html) { el.innerHTML = html;"
    " el.dataset.version = String((Number(el.dataset.version) || 0) + 1); })\n"
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
