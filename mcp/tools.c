/* tools.c -- tool table, generated input schemas, argument validation, dispatch. */
#include "mcp/tools.h"

#include "mcp/entities.h"
#include "mcp/executions.h"
#include "mcp/recover.h"
#include "mcp/result.h"

#include "classifier/classes.h"
#include "lib/execstate.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ID 9007199254740991LL /* 2^53 - 1: ids a JSON client holds exactly */

enum param_type { PT_STRING, PT_INTEGER, PT_OBJECT, PT_STRINGS, PT_BOOLEAN };

struct param {
	const char *name;
	enum param_type type;
	bool required;
	int64_t min, max;           /* string: length in characters; integer: value;
	                             * strings: how many (each 1..1024 characters) */
	const char *const *choices; /* allowed strings, NULL-terminated; NULL = any */
	const char *description;
};

struct tool {
	const char *name;
	const char *title;
	const char *description;
	const struct param *params; /* ends with a NULL name */
	bool read_only, destructive, idempotent, open_world;
	const char *output_schema; /* JSON text */
	mcp_tool_fn fn;
};

#define ID_PARAM(what)                                                                             \
	{                                                                                          \
		"id", PT_INTEGER, true, 1, MAX_ID, NULL, what                                      \
	}
#define WAIT_PARAM(what)                                                                           \
	{                                                                                          \
		"wait_seconds", PT_INTEGER, false, 0, MCP_WAIT_MAX_SECONDS, NULL, what             \
	}
#define SLUG_PARAM(name, req, what)                                                                \
	{                                                                                          \
		name, PT_STRING, req, 1, 200, NULL, what                                           \
	}

static const struct param run_params[] = {
    {"target", PT_STRING, true, 1, 200, NULL,
     "Where to run: an entity slug such as vm:web01, lxc:nfs-export or proxmox-host:hubris."},
    {"command", PT_STRING, true, 1, 32640, NULL,
     "The shell command, run with bash --noprofile --norc +O extglob +O xpg_echo -c on the "
     "target (bash, whatever "
     "its /bin/sh is, with PATH, HOME=/root and LANG=C.UTF-8 as its only environment). "
     "At most 32,640 bytes once quoted "
     "for the remote shell (each single quote counts 4): a longer one is refused; put it in a "
     "script on the target instead."},
    {"action", PT_STRING, true, 1, 500, NULL,
     "A plain description of the change, for the operator and the rewind point's tag."},
    {"declared_risk", PT_STRING, false, 0, 0, risk_class_names,
     "Your own estimate of the risk. It can raise airlock's classification, never lower it."},
    {"change_id", PT_STRING, false, 1, 200, NULL,
     "Your change or ticket id, carried into the rewind point's tag."},
    WAIT_PARAM("Wait up to this many seconds (without polling) until the execution is final "
               "or needs a human; one call waits at most 50 s (below clients' 60 s request "
               "timeout) and then answers still pending, with the call to make next. 0 or "
               "absent: answer at once."),
    {NULL},
};

static const struct param get_params[] = {
    ID_PARAM("The execution id that run returned."),
    WAIT_PARAM("Wait up to this many seconds (without polling) until the execution is final; "
               "one call waits at most 50 s (below clients' 60 s request timeout) and then "
               "answers still pending, with the call to make next. 0 or absent: answer at "
               "once."),
    {NULL},
};

static const struct param list_params[] = {
    {"state", PT_STRING, false, 0, 0, exec_state_names, "Only executions in this state."},
    SLUG_PARAM("target", false, "Only executions on this target."),
    {"limit", PT_INTEGER, false, 1, 200, NULL, "Page size (default 50)."},
    {"cursor", PT_STRING, false, 1, 40, NULL,
     "nextCursor from the previous page, passed back unchanged."},
    {NULL},
};

static const struct param cancel_params[] = {
    ID_PARAM("The execution to cancel: one of yours that is not running yet."),
    {NULL},
};

static const struct param attr_params[] = {
    SLUG_PARAM("slug", true, "The entity, e.g. vm:web01."),
    {"attributes", PT_OBJECT, true, 0, 0, NULL,
     "Keys to set (merged into the entity's attributes). Scheduler-owned keys such as health "
     "are dropped with the reason."},
    {NULL},
};

static const struct param rel_params[] = {
    SLUG_PARAM("source", true, "The entity the relationship starts from."),
    SLUG_PARAM("target", true, "The entity it points to."),
    {"type", PT_STRING, true, 1, 63, NULL,
     "What the relationship is: lowercase words joined by dashes, e.g. depends-on, runs-on."},
    {NULL},
};

static const struct param relations_params[] = {
    SLUG_PARAM("slug", true, "The entity whose relationships (both directions) to list."),
    {NULL},
};

static const struct param health_params[] = {
    SLUG_PARAM("slug", false, "One entity; absent: every entity."),
    {NULL},
};

static const struct param check_tool_params[] = {
    {"server", PT_STRING, true, 1, 200, NULL, "The MCP server that offers the tool."},
    {"tool", PT_STRING, true, 1, 200, NULL, "The tool's name on that server."},
    SLUG_PARAM("vm", false, "The VM the call would touch, if any."),
    {NULL},
};

static const struct param recover_params[] = {
    {"paths", PT_STRINGS, true, 1, 16, NULL,
     "The guest files to restore, absolute: /etc/nginx/nginx.conf (Linux guests)."},
    {"execution_id", PT_INTEGER, false, 1, MAX_ID, NULL,
     "Restore from the rewind points taken before this execution (its target is the VM)."},
    {"checkpoint", PT_STRING, false, 1, 500, NULL,
     "Or: a Zerto checkpoint id or tag (then vm is required)."},
    SLUG_PARAM("vm", false, "The VM, e.g. vm:web01 (implied by execution_id)."),
    {"keep_replaced", PT_BOOLEAN, false, 0, 0, NULL,
     "Keep each current file beside it as <path>.airlock-<id> (default true)."},
    {"change_id", PT_STRING, false, 1, 200, NULL, "Your change or ticket id."},
    {NULL},
};

#define EXECUTION_OUTPUT                                                                           \
	"{\"type\":\"object\",\"properties\":{"                                                    \
	"\"execution\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},"        \
	"\"state\":{\"type\":\"string\"}},\"required\":[\"id\",\"state\"]},"                       \
	"\"final\":{\"type\":\"boolean\"},\"next_step\":{\"type\":\"string\"},"                    \
	"\"console_url\":{\"type\":\"string\"},\"next_call\":{\"type\":\"object\",\"properties\":" \
	"{"                                                                                        \
	"\"tool\":{\"type\":\"string\"},\"arguments\":{\"type\":\"object\"}},\"required\":["       \
	"\"tool\","                                                                                \
	"\"arguments\"]},"                                                                         \
	"\"wait\":{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":\"integer\"},"        \
	"\"settled\":{\"type\":\"boolean\"},\"ended\":{\"type\":\"string\"}},\"required\":["       \
	"\"seconds\",\"settled\",\"ended\"]}},"                                                    \
	"\"required\":[\"execution\",\"final\",\"next_step\"]}"

#define LIST_OUTPUT(key)                                                                           \
	"{\"type\":\"object\",\"properties\":{\"" key "\":{\"type\":\"array\",\"items\":{"         \
	"\"type\":\"object\"}}},\"required\":[\"" key "\"]}"

static const struct tool tools[] = {
    {"run", "Run a command through airlock",
     "Ask airlock to run a shell command on a target (Proxmox host, VM or LXC container). "
     "airlock classifies the risk, holds risky commands for a human operator, takes a Zerto "
     "rewind point, and only then runs it; every step is recorded. The answer is the "
     "execution and what to do now. Pre-flight refusals (unknown target, VM guest agent not "
     "running, container stopped) come back at once and nothing is queued. This is the only "
     "way to change infrastructure: whatever the answer, never fall back to raw SSH or "
     "another tool.",
     run_params, false, true, false, true, EXECUTION_OUTPUT, mcp_exec_run},
    {"get_execution", "Read one execution",
     "One of your executions as it stands: state, class and reasons, approvals and expiry, "
     "rewind points, exit code and captured output, and what to do now. Output that carries "
     "secret material is held for an operator: output_hold says what it contains and where, "
     "and whether an operator released or discarded it. With wait_seconds, waits for it to "
     "become final.",
     get_params, true, false, true, false, EXECUTION_OUTPUT, mcp_exec_get},
    {"list_executions", "List executions",
     "Your executions, newest first, optionally by state or target. Pages with cursor / "
     "nextCursor. Rows omit stdout and stderr: read one with get_execution.",
     list_params, true, false, true, false,
     "{\"type\":\"object\",\"properties\":{\"executions\":{\"type\":\"array\",\"items\":{"
     "\"type\":\"object\"}},\"nextCursor\":{\"type\":\"string\"}},\"required\":["
     "\"executions\"]}",
     mcp_exec_list},
    {"cancel_execution", "Cancel an execution",
     "Cancel one of your executions that has not started running. Nothing runs afterwards.",
     cancel_params, false, false, true, false, EXECUTION_OUTPUT, mcp_exec_cancel},
    {"update_entity_attributes", "Record entity attributes",
     "Merge attributes into an inventory entity. health and probed attributes belong to the "
     "scheduler: they are dropped, and the answer says so with the reason.",
     attr_params, false, true, true, false,
     "{\"type\":\"object\",\"properties\":{\"slug\":{\"type\":\"string\"},\"merged\":{"
     "\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"dropped\":{\"type\":\"array\","
     "\"items\":{\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\"},"
     "\"reason\":{\"type\":\"string\"}},\"required\":[\"key\",\"reason\"]}},\"attributes\":{"
     "\"type\":\"object\"}},\"required\":[\"slug\",\"merged\",\"dropped\"]}",
     mcp_entity_update_attributes},
    {"create_relationship", "Record a relationship",
     "Record that source relates to target (e.g. vm:zimaos depends-on lxc:nfs-export). Recording "
     "an "
     "existing relationship again changes nothing.",
     rel_params, false, false, true, false,
     "{\"type\":\"object\",\"properties\":{\"source\":{\"type\":\"string\"},\"target\":{"
     "\"type\":\"string\"},\"type\":{\"type\":\"string\"},\"created\":{\"type\":\"boolean\"}},"
     "\"required\":[\"source\",\"target\",\"type\",\"created\"]}",
     mcp_entity_create_relationship},
    {"get_relations", "Read relationships", "Relationships of one entity, outgoing and incoming.",
     relations_params, true, false, true, false, LIST_OUTPUT("relations"),
     mcp_entity_get_relations},
    {"get_health_summary", "Read health",
     "What the scheduler last observed: health, QEMU guest agent, status and check counts, "
     "for one entity or all.",
     health_params, true, false, true, false, LIST_OUTPUT("entities"), mcp_entity_health_summary},
    {"list_checks", "Read checks",
     "The scheduler's individual probe results, for one entity or all.", health_params, true, false,
     true, false, LIST_OUTPUT("checks"), mcp_entity_list_checks},
    {"check_tool", "Classify another tool",
     "Before calling a tool on another MCP server that might touch a guest, ask what is "
     "known about it: read_only (call it), mutating (guard first: a rewind point before it "
     "runs), exec (it runs commands on a machine: send the command through run instead) "
     "or unknown (ask the human; unknown does not mean safe).",
     check_tool_params, true, false, true, false,
     "{\"type\":\"object\",\"properties\":{\"verdict\":{\"type\":\"string\",\"enum\":["
     "\"read_only\",\"mutating\",\"exec\",\"unknown\"]},\"advice\":{\"type\":\"string\"},"
     "\"what_to_do\":{\"type\":\"string\"}},\"required\":[\"verdict\",\"advice\","
     "\"what_to_do\"]}",
     mcp_entity_check_tool},
    {"recover_file", "Recover files from a rewind point",
     "Ask airlock to restore guest files as they were at a rewind point (the Zerto checkpoint "
     "taken before one of your executions, or one named by id or tag), with file-level "
     "restore. Always held for a human operator, who sees the checkpoint, its time, the VPG "
     "and site and the paths; you cannot approve it. Each current file is kept beside it "
     "unless keep_replaced is false. The answer is the execution; follow it with "
     "get_execution.",
     recover_params, false, true, false, true, EXECUTION_OUTPUT, mcp_recover_file},
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

static const struct tool *find_tool(const char *name)
{
	for (size_t i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i].name, name) == 0)
			return &tools[i];
	return NULL;
}

bool mcp_tools_exists(const char *name)
{
	return find_tool(name) != NULL;
}

static cJSON *param_schema(const struct param *p)
{
	cJSON *s = cJSON_CreateObject();

	switch (p->type) {
	case PT_STRING:
		cJSON_AddStringToObject(s, "type", "string");
		if (p->choices != NULL) {
			cJSON *e = cJSON_AddArrayToObject(s, "enum");
			for (const char *const *c = p->choices; *c != NULL; c++)
				cJSON_AddItemToArray(e, cJSON_CreateString(*c));
		} else {
			cJSON_AddNumberToObject(s, "minLength", (double)p->min);
			cJSON_AddNumberToObject(s, "maxLength", (double)p->max);
		}
		break;
	case PT_INTEGER:
		cJSON_AddStringToObject(s, "type", "integer");
		cJSON_AddNumberToObject(s, "minimum", (double)p->min);
		cJSON_AddNumberToObject(s, "maximum", (double)p->max);
		break;
	case PT_OBJECT:
		cJSON_AddStringToObject(s, "type", "object");
		break;
	case PT_STRINGS: {
		cJSON_AddStringToObject(s, "type", "array");
		cJSON *it = cJSON_AddObjectToObject(s, "items");
		cJSON_AddStringToObject(it, "type", "string");
		cJSON_AddNumberToObject(it, "minLength", 1);
		cJSON_AddNumberToObject(it, "maxLength", 1024);
		cJSON_AddNumberToObject(s, "minItems", (double)p->min);
		cJSON_AddNumberToObject(s, "maxItems", (double)p->max);
		break;
	}
	case PT_BOOLEAN:
		cJSON_AddStringToObject(s, "type", "boolean");
		break;
	}
	cJSON_AddStringToObject(s, "description", p->description);
	return s;
}

static cJSON *tool_json(const struct tool *t)
{
	cJSON *j = cJSON_CreateObject();
	cJSON *in, *props, *req, *ann;

	cJSON_AddStringToObject(j, "name", t->name);
	cJSON_AddStringToObject(j, "title", t->title);
	cJSON_AddStringToObject(j, "description", t->description);
	in = cJSON_AddObjectToObject(j, "inputSchema");
	cJSON_AddStringToObject(in, "type", "object");
	props = cJSON_AddObjectToObject(in, "properties");
	req = cJSON_CreateArray();
	for (const struct param *p = t->params; p->name != NULL; p++) {
		cJSON_AddItemToObject(props, p->name, param_schema(p));
		if (p->required)
			cJSON_AddItemToArray(req, cJSON_CreateString(p->name));
	}
	if (cJSON_GetArraySize(req) > 0)
		cJSON_AddItemToObject(in, "required", req);
	else
		cJSON_Delete(req);
	cJSON_AddFalseToObject(in, "additionalProperties");
	cJSON_AddItemToObject(j, "outputSchema", mcp_result_parse_db_json(t->output_schema));
	ann = cJSON_AddObjectToObject(j, "annotations");
	cJSON_AddStringToObject(ann, "title", t->title);
	cJSON_AddBoolToObject(ann, "readOnlyHint", t->read_only);
	cJSON_AddBoolToObject(ann, "destructiveHint", t->destructive);
	cJSON_AddBoolToObject(ann, "idempotentHint", t->idempotent);
	cJSON_AddBoolToObject(ann, "openWorldHint", t->open_world);
	return j;
}

cJSON *mcp_tools_list(void)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(r, "tools");

	for (size_t i = 0; i < NTOOLS; i++)
		cJSON_AddItemToArray(list, tool_json(&tools[i]));
	return r;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* Appends at most max bytes of s, cut on a character boundary. */
static void put_clipped(struct buf *b, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max) {
		buf_puts(b, s);
		return;
	}
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	buf_append(b, s, max);
	buf_puts(b, "...");
}

/* Appends what is wrong with v for p to problems ("; "-separated), if anything. */
static void check_param(const struct param *p, const cJSON *v, struct buf *problems)
{
	struct buf one = BUF_INIT;

	switch (p->type) {
	case PT_STRING:
		if (!cJSON_IsString(v)) {
			buf_printf(&one, "\"%s\" must be a string", p->name);
		} else if (p->choices != NULL) {
			bool ok = false;
			for (const char *const *c = p->choices; *c != NULL; c++)
				ok = ok || strcmp(*c, v->valuestring) == 0;
			if (!ok) {
				buf_printf(&one, "\"%s\" must be one of:", p->name);
				for (const char *const *c = p->choices; *c != NULL; c++)
					buf_printf(&one, " %s", *c);
			}
		} else {
			size_t n = utf8_chars(v->valuestring);
			if (n < (size_t)p->min)
				buf_printf(&one, "\"%s\" must not be empty", p->name);
			else if (n > (size_t)p->max)
				buf_printf(&one,
				           "\"%s\" is %zu characters; at most %lld are accepted",
				           p->name, n, (long long)p->max);
		}
		break;
	case PT_INTEGER:
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
		    v->valuedouble != floor(v->valuedouble))
			buf_printf(&one, "\"%s\" must be an integer", p->name);
		else if (v->valuedouble < (double)p->min || v->valuedouble > (double)p->max)
			buf_printf(&one, "\"%s\" must be between %lld and %lld", p->name,
			           (long long)p->min, (long long)p->max);
		break;
	case PT_OBJECT:
		if (!cJSON_IsObject(v))
			buf_printf(&one, "\"%s\" must be an object", p->name);
		break;
	case PT_STRINGS: {
		int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
		const cJSON *e;
		bool strings = n >= 0;
		cJSON_ArrayForEach(e, v) strings = strings && cJSON_IsString(e) &&
		                                   e->valuestring[0] != '\0' &&
		                                   utf8_chars(e->valuestring) <= 1024;
		if (!strings || n < p->min || n > p->max)
			buf_printf(&one, "\"%s\" must be a list of %lld to %lld non-empty strings",
			           p->name, (long long)p->min, (long long)p->max);
		break;
	}
	case PT_BOOLEAN:
		if (!cJSON_IsBool(v))
			buf_printf(&one, "\"%s\" must be true or false", p->name);
		break;
	}
	if (one.len > 0)
		buf_printf(problems, "%s%s", problems->len > 0 ? "; " : "", buf_str(&one));
	buf_free(&one);
}

static void describe_params(const struct tool *t, struct buf *b)
{
	static const char *const type_names[] = {"string", "integer", "object", "array of strings",
	                                         "boolean"};

	buf_printf(b, ". %s takes:", t->name);
	for (const struct param *p = t->params; p->name != NULL; p++)
		buf_printf(b, "%s %s (%s%s)", p == t->params ? "" : ",", p->name,
		           type_names[p->type], p->required ? ", required" : "");
	buf_puts(b, ".");
}

char *mcp_tools_validate(const char *name, const cJSON *args)
{
	const struct tool *t = find_tool(name);
	struct buf problems = BUF_INIT;
	struct buf msg = BUF_INIT;

	for (const cJSON *a = args->child; a != NULL; a = a->next) {
		const struct param *p = t->params;
		while (p->name != NULL && strcmp(p->name, a->string) != 0)
			p++;
		if (p->name != NULL)
			continue;
		buf_puts(&problems,
		         problems.len > 0 ? "; unknown argument \"" : "unknown argument \"");
		put_clipped(&problems, a->string, 64);
		buf_puts(&problems, "\"");
	}
	for (const struct param *p = t->params; p->name != NULL; p++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, p->name);
		if (v == NULL && p->required)
			buf_printf(&problems, "%smissing required \"%s\"",
			           problems.len > 0 ? "; " : "", p->name);
		else if (v != NULL)
			check_param(p, v, &problems);
	}
	if (problems.len == 0) {
		buf_free(&problems);
		return NULL;
	}
	buf_printf(&msg, "invalid arguments for %s: %s", name, buf_str(&problems));
	describe_params(t, &msg);
	buf_free(&problems);
	return buf_steal(&msg);
}

cJSON *mcp_tools_check(const char *name, const cJSON *args)
{
	char lq[512];
	char *problem = mcp_tools_validate(name, args);
	cJSON *r;

	if (problem == NULL)
		return NULL;
	r = mcp_result_error(problem, "Nothing was done. Fix the arguments and call again.");
	log_msg(LOG_INFO, "evt=mcp.tool_invalid tool=%s", log_quote(name, lq, sizeof(lq)));
	free(problem);
	return r;
}

void mcp_tools_call(struct store *st, const char *name, const cJSON *args, struct mcp_call *call)
{
	memset(call, 0, sizeof(*call));
	find_tool(name)->fn(st, args, call);
}
