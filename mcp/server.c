/* server.c -- MCP lifecycle, JSON-RPC dispatch and the wait loop. */
#include "mcp/server.h"

#include "mcp/db.h"
#include "mcp/executions.h"
#include "mcp/framing.h"
#include "mcp/jsonrpc.h"
#include "mcp/tools.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Preferred first; initialize echoes any of these and answers others with the first. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
#define BATCH_VERSION "2025-03-26" /* the only revision with JSON-RPC batches */

#define INSTRUCTIONS                                                                               \
	"airlock is the one door to the infrastructure. Make every change with the run tool; "     \
	"read results with get_execution. When a run waits for approval, tell your operator; "     \
	"when it is refused or fails, ask your operator. Never fall back to raw SSH, another "     \
	"MCP server or any other channel, whatever airlock answers. Before calling another "       \
	"server's tool that might touch a guest, call check_tool."

enum phase {
	PHASE_NEW,         /* before initialize */
	PHASE_INITIALIZED, /* initialize answered */
	PHASE_READY,       /* notifications/initialized received */
};

struct deferred {
	char *line; /* NULL: a line over the cap */
	size_t len;
};

struct mcp_server {
	struct mcp_db *db;
	struct mcp_reader *in;
	int out_fd;
	const volatile sig_atomic_t *stop;
	enum phase phase;
	const char *version;
	bool out_gone;
	struct deferred *queue; /* lines that arrived during a wait */
	size_t qhead, qlen, qcap;
};

struct mcp_server *mcp_server_new(struct mcp_db *db, int in_fd, int out_fd)
{
	struct mcp_server *s = xcalloc(1, sizeof(*s));

	s->db = db;
	s->in = mcp_reader_new(in_fd, MCP_LINE_MAX);
	s->out_fd = out_fd;
	return s;
}

void mcp_server_free(struct mcp_server *s)
{
	if (s == NULL)
		return;
	for (size_t i = s->qhead; i < s->qlen; i++)
		free(s->queue[i].line);
	free(s->queue);
	mcp_reader_free(s->in);
	free(s);
}

void mcp_server_set_stop_flag(struct mcp_server *s, const volatile sig_atomic_t *flag)
{
	s->stop = flag;
}

const char *mcp_server_version(const struct mcp_server *s)
{
	return s->version;
}

static bool stopping(const struct mcp_server *s)
{
	return s->out_gone || (s->stop != NULL && *s->stop);
}

static void send_reply(struct mcp_server *s, cJSON *reply)
{
	char *line;

	if (reply == NULL)
		return;
	line = mcp_json_print(reply);
	if (!s->out_gone && mcp_write_line(s->out_fd, line, strlen(line)) < 0) {
		log_msg(LOG_WARN, "evt=mcp.output_closed");
		s->out_gone = true;
	}
	free(line);
	cJSON_Delete(reply);
}

static cJSON *error_reply(const cJSON *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static cJSON *error_reply(const cJSON *id, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return mcp_reply_error(id, code, msg, NULL);
}

/* Copies s into out, cut (if it must be) on a character boundary. */
static void clip_utf8(const char *s, char *out, size_t outsz)
{
	size_t n = strlen(s);

	if (n >= outsz) {
		n = outsz - 1;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out, s, n);
	out[n] = '\0';
}

static cJSON *do_initialize(struct mcp_server *s, const cJSON *id, const cJSON *params,
                            bool in_batch)
{
	const cJSON *pv = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
	const cJSON *caps = cJSON_GetObjectItemCaseSensitive(params, "capabilities");
	const cJSON *info = cJSON_GetObjectItemCaseSensitive(params, "clientInfo");
	const cJSON *cname = cJSON_GetObjectItemCaseSensitive(info, "name");
	cJSON *r, *c, *si;
	char q[200];

	if (in_batch)
		return error_reply(id, MCP_INVALID_REQUEST,
		                   "Invalid Request: initialize must not be part of a batch");
	if (s->phase != PHASE_NEW)
		return error_reply(id, MCP_INVALID_REQUEST,
		                   "Invalid Request: the session is already initialized");
	if (!cJSON_IsObject(params) || !cJSON_IsString(pv))
		return error_reply(
		    id, MCP_INVALID_PARAMS,
		    "Invalid params: initialize needs params.protocolVersion (a string)");
	if ((caps != NULL && !cJSON_IsObject(caps)) || (info != NULL && !cJSON_IsObject(info)))
		return error_reply(id, MCP_INVALID_PARAMS,
		                   "Invalid params: capabilities and clientInfo must be objects");
	s->version = versions[0];
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(pv->valuestring, versions[i]) == 0)
			s->version = versions[i];
	s->phase = PHASE_INITIALIZED;
	log_msg(LOG_INFO, "evt=mcp.initialized version=%s requested=%s client=%s", s->version,
	        log_quote(pv->valuestring, q, 64),
	        log_quote(cJSON_IsString(cname) ? cname->valuestring : "", q + 64, sizeof(q) - 64));
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "protocolVersion", s->version);
	c = cJSON_AddObjectToObject(r, "capabilities");
	cJSON_AddFalseToObject(cJSON_AddObjectToObject(c, "tools"), "listChanged");
	si = cJSON_AddObjectToObject(r, "serverInfo");
	cJSON_AddStringToObject(si, "name", MCP_SERVER_NAME);
	cJSON_AddStringToObject(si, "title", "airlock");
	cJSON_AddStringToObject(si, "version", MCP_SERVER_VERSION);
	cJSON_AddStringToObject(r, "instructions", INSTRUCTIONS);
	return mcp_reply_result(id, r);
}

static void wait_execution(struct mcp_server *s, struct mcp_call *call, const cJSON *req_id,
                           const cJSON *params);

static cJSON *do_tools_call(struct mcp_server *s, const cJSON *id, const cJSON *params)
{
	char lq[512];
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	cJSON *empty = NULL;
	struct mcp_call call;
	int64_t t0 = deadline_now_ms();

	if (!cJSON_IsObject(params) || !cJSON_IsString(name))
		return error_reply(id, MCP_INVALID_PARAMS,
		                   "Invalid params: tools/call needs params.name (a string)");
	if (!mcp_tools_exists(name->valuestring)) {
		char shown[80];
		clip_utf8(name->valuestring, shown, sizeof(shown));
		return error_reply(id, MCP_INVALID_PARAMS,
		                   "Invalid params: unknown tool \"%s\" (tools/list names them)",
		                   shown);
	}
	if (args != NULL && !cJSON_IsObject(args))
		return error_reply(id, MCP_INVALID_PARAMS,
		                   "Invalid params: tools/call arguments must be an object");
	if (args == NULL)
		args = empty = cJSON_CreateObject();
	mcp_tools_call(s->db, name->valuestring, args, &call);
	cJSON_Delete(empty);
	if (call.wait_id != 0) {
		wait_execution(s, &call, id, params);
		if (call.result == NULL)
			return NULL; /* cancelled by the client: no answer */
	}
	log_msg(LOG_INFO, "evt=mcp.tool_call tool=%s is_error=%d ms=%lld",
	        log_quote(name->valuestring, lq, sizeof(lq)),
	        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call.result, "isError")),
	        (long long)(deadline_now_ms() - t0));
	return mcp_reply_result(id, call.result);
}

static cJSON *do_request(struct mcp_server *s, const struct mcp_msg *m, bool in_batch)
{
	static const char *const known[] = {"initialize", "ping", "tools/list", "tools/call"};
	bool found = false;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		found = found || strcmp(m->method, known[i]) == 0;
	if (!found) {
		char shown[80];
		clip_utf8(m->method, shown, sizeof(shown));
		return error_reply(m->id, MCP_METHOD_NOT_FOUND, "Method not found: %s", shown);
	}
	if (m->params != NULL && !cJSON_IsObject(m->params))
		return error_reply(m->id, MCP_INVALID_PARAMS,
		                   "Invalid params: params must be an "
		                   "object");
	if (strcmp(m->method, "ping") == 0)
		return mcp_reply_result(m->id, cJSON_CreateObject());
	if (strcmp(m->method, "initialize") == 0)
		return do_initialize(s, m->id, m->params, in_batch);
	if (s->phase == PHASE_NEW)
		return error_reply(m->id, MCP_INVALID_REQUEST,
		                   "Invalid Request: not initialized; send initialize first");
	if (strcmp(m->method, "tools/list") == 0) {
		const cJSON *cursor = cJSON_GetObjectItemCaseSensitive(m->params, "cursor");
		if (cursor != NULL)
			return error_reply(m->id, MCP_INVALID_PARAMS,
			                   "Invalid params: invalid cursor (the tool list has one "
			                   "page)");
		return mcp_reply_result(m->id, mcp_tools_list());
	}
	return do_tools_call(s, m->id, m->params);
}

static void do_notification(struct mcp_server *s, const struct mcp_msg *m)
{
	if (strcmp(m->method, "notifications/initialized") == 0 && s->phase == PHASE_INITIALIZED)
		s->phase = PHASE_READY;
	/* Everything else (cancelled for a finished request, progress, unknown) needs
	 * nothing from us, and notifications are never answered. */
}

/* One message of a line or batch: its reply, or NULL when none is due. */
static cJSON *handle_message(struct mcp_server *s, const cJSON *item, const char *raw, size_t len,
                             bool in_batch)
{
	struct mcp_msg m;
	cJSON *reply = NULL;

	mcp_msg_classify(item, raw, len, &m);
	switch (m.kind) {
	case MCP_MSG_INVALID:
		reply = error_reply(m.id, MCP_INVALID_REQUEST, "Invalid Request: %s", m.why);
		break;
	case MCP_MSG_RESPONSE:
		log_msg(LOG_DEBUG, "evt=mcp.stray_response"); /* we send no requests */
		break;
	case MCP_MSG_NOTIFICATION:
		do_notification(s, &m);
		break;
	case MCP_MSG_REQUEST:
		reply = do_request(s, &m, in_batch);
		break;
	}
	mcp_msg_clear(&m);
	return reply;
}

static void handle_batch(struct mcp_server *s, const cJSON *root, const char *line, size_t len)
{
	size_t n = 0;
	size_t *spans;
	cJSON *replies;
	const cJSON *item;
	size_t i = 0;

	if (s->version == NULL || strcmp(s->version, BATCH_VERSION) != 0) {
		send_reply(s, error_reply(NULL, MCP_INVALID_REQUEST,
		                          "Invalid Request: batches are not supported by protocol "
		                          "version %s",
		                          s->version ? s->version : "(not initialized)"));
		return;
	}
	if (cJSON_GetArraySize(root) == 0) {
		send_reply(s,
		           error_reply(NULL, MCP_INVALID_REQUEST, "Invalid Request: empty batch"));
		return;
	}
	spans = mcp_json_element_spans(line, len, &n);
	replies = cJSON_CreateArray();
	cJSON_ArrayForEach(item, root)
	{
		const char *raw = i < n ? line + spans[2 * i] : NULL;
		size_t rawlen = i < n ? spans[2 * i + 1] - spans[2 * i] : 0;
		cJSON *r = handle_message(s, item, raw, rawlen, true);
		if (r != NULL)
			cJSON_AddItemToArray(replies, r);
		i++;
	}
	free(spans);
	if (cJSON_GetArraySize(replies) > 0)
		send_reply(s, replies);
	else
		cJSON_Delete(replies);
}

void mcp_server_handle_line(struct mcp_server *s, const char *line, size_t len)
{
	char why[128];
	const char *dup;
	cJSON *root;

	if (strspn(line, " \t\r") == len)
		return; /* blank lines carry no message */
	root = mcp_json_parse(line, len, why, sizeof(why));
	if (root == NULL) {
		send_reply(s, error_reply(NULL, MCP_PARSE_ERROR, "Parse error: %s", why));
		return;
	}
	dup = mcp_json_duplicate_key(root);
	if (dup != NULL)
		send_reply(s, error_reply(NULL, MCP_INVALID_REQUEST,
		                          "Invalid Request: a key appears twice in one object"));
	else if (cJSON_IsArray(root))
		handle_batch(s, root, line, len);
	else
		send_reply(s, handle_message(s, root, line, len, false));
	cJSON_Delete(root);
}

static void too_long(struct mcp_server *s)
{
	send_reply(s,
	           error_reply(NULL, MCP_INVALID_REQUEST,
	                       "Invalid Request: message line longer than %u bytes", MCP_LINE_MAX));
}

static void defer_line(struct mcp_server *s, const char *line, size_t len)
{
	if (s->qlen == s->qcap) {
		s->qcap = s->qcap ? 2 * s->qcap : 8;
		s->queue = xrealloc(s->queue, s->qcap * sizeof(*s->queue));
	}
	/* A copy of all len bytes: the line may hold NUL bytes (it is still answered,
	 * with -32700), so no string copy. */
	s->queue[s->qlen].line = NULL;
	if (line != NULL) {
		s->queue[s->qlen].line = xmalloc(len + 1);
		memcpy(s->queue[s->qlen].line, line, len);
		s->queue[s->qlen].line[len] = '\0';
	}
	s->queue[s->qlen].len = len;
	s->qlen++;
}

/* A line that arrived while waiting: ping is answered now, a cancellation of
 * the waiting request is noted, the rest waits its turn.  Returns true when
 * the line cancelled req_id. */
static bool during_wait(struct mcp_server *s, const char *line, size_t len, const cJSON *req_id)
{
	char why[128];
	cJSON *root = mcp_json_parse(line, len, why, sizeof(why));
	struct mcp_msg m;
	bool cancelled = false, handled = false;

	if (root == NULL || mcp_json_duplicate_key(root) != NULL || !cJSON_IsObject(root)) {
		cJSON_Delete(root);
		defer_line(s, line, len);
		return false;
	}
	mcp_msg_classify(root, line, len, &m);
	if (m.kind == MCP_MSG_REQUEST && strcmp(m.method, "ping") == 0 &&
	    (m.params == NULL || cJSON_IsObject(m.params))) {
		send_reply(s, mcp_reply_result(m.id, cJSON_CreateObject()));
		handled = true;
	} else if (m.kind == MCP_MSG_NOTIFICATION &&
	           strcmp(m.method, "notifications/cancelled") == 0) {
		const cJSON *rid = cJSON_GetObjectItemCaseSensitive(m.params, "requestId");
		char *a = rid ? cJSON_PrintUnformatted(rid) : NULL;
		char *b = cJSON_PrintUnformatted(req_id);
		cancelled = a != NULL && strcmp(a, b) == 0;
		handled = true;
		free(a);
		free(b);
	}
	if (!handled)
		defer_line(s, line, len);
	mcp_msg_clear(&m);
	cJSON_Delete(root);
	return cancelled;
}

/* Reads whatever input is buffered or readable without blocking.  Returns
 * true when req_id was cancelled. */
static bool read_during_wait(struct mcp_server *s, const cJSON *req_id)
{
	char *line;
	size_t len;
	bool cancelled = false;

	for (;;) {
		switch (mcp_reader_next(s->in, &line, &len)) {
		case MCP_READ_LINE:
			if (strspn(line, " \t\r") != len)
				cancelled = during_wait(s, line, len, req_id) || cancelled;
			continue;
		case MCP_READ_TOO_LONG:
			defer_line(s, NULL, 0);
			continue;
		case MCP_READ_AGAIN:
		case MCP_READ_EOF:
			return cancelled;
		}
	}
}

/* Sleeps in poll() until the database or the client has something or
 * timeout_ms passes, then takes in what the client sent.  -1 when the wait
 * must end (poll or read failed); *cancelled when the client cancelled req_id. */
static int wait_io(struct mcp_server *s, const cJSON *req_id, int64_t timeout_ms, bool *cancelled)
{
	struct pollfd fds[2] = {
	    {.fd = mcp_db_socket(s->db), .events = POLLIN},
	    {.fd = mcp_reader_fd(s->in), .events = POLLIN},
	};

	if (poll(fds, 2, (int)timeout_ms) < 0 && errno != EINTR)
		return -1;
	if (fds[1].revents != 0) {
		if (mcp_reader_fill(s->in) < 0 && errno != EINTR)
			return -1;
		*cancelled = read_during_wait(s, req_id);
	}
	return 0;
}

/* Progress reports for a waiting request whose client asked for them with
 * params._meta.progressToken: one when the wait starts, one on every state
 * change it sees, and a heartbeat every PROGRESS_EVERY_MS while nothing
 * changes, so that the client knows the wait is alive. */
#define PROGRESS_EVERY_MS 15000

struct progress {
	cJSON *token;    /* the client's token (copied); NULL: no reports */
	int count;       /* the last value sent: it must increase */
	int64_t next_ms; /* when the next heartbeat is due */
	char state[40];  /* the last state reported */
};

static void progress_init(struct progress *p, const cJSON *params)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *tok = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
	char num[32];

	memset(p, 0, sizeof(*p));
	if (cJSON_IsString(tok)) {
		p->token = cJSON_CreateString(tok->valuestring);
	} else if (cJSON_IsNumber(tok) && tok->valuedouble == floor(tok->valuedouble) &&
	           fabs(tok->valuedouble) <= 9007199254740991.0) {
		snprintf(num, sizeof(num), "%.0f", tok->valuedouble);
		p->token = cJSON_CreateRaw(num);
	}
}

static void progress_send(struct mcp_server *s, struct progress *p, int64_t id, const char *state,
                          int64_t left_ms)
{
	cJSON *n, *params;
	char msg[160], st[sizeof(p->state)];

	if (p->token == NULL)
		return;
	/* state may be p->state itself (the heartbeat repeats the last state):
	 * copy through st, since snprintf from a buffer into itself is undefined. */
	snprintf(st, sizeof(st), "%s", state);
	memcpy(p->state, st, sizeof(st));
	snprintf(msg, sizeof(msg), "execution %lld: %s; waiting up to %lld s more", (long long)id,
	         st, (long long)(left_ms + 999) / 1000);
	n = cJSON_CreateObject();
	cJSON_AddStringToObject(n, "jsonrpc", "2.0");
	cJSON_AddStringToObject(n, "method", "notifications/progress");
	params = cJSON_AddObjectToObject(n, "params");
	cJSON_AddItemToObject(params, "progressToken", cJSON_Duplicate(p->token, 1));
	cJSON_AddNumberToObject(params, "progress", ++p->count);
	cJSON_AddStringToObject(params, "message", msg);
	send_reply(s, n);
	p->next_ms = deadline_now_ms() + PROGRESS_EVERY_MS;
	log_msg(LOG_INFO, "exec=%lld evt=mcp.progress state=%s n=%d", (long long)id, st, p->count);
}

/* Waits, without polling the database, until call's execution settles, the
 * budget runs out, the client cancels the request or input ends. */
static void wait_execution(struct mcp_server *s, struct mcp_call *call, const cJSON *req_id,
                           const cJSON *params)
{
	int64_t deadline = deadline_now_ms() + (int64_t)call->wait_seconds * 1000;
	enum mcp_wait_end why = MCP_WAIT_STOPPED;
	int reconnects = 0;
	struct progress prog;
	char state[40];

	log_msg(LOG_INFO, "exec=%lld evt=mcp.wait seconds=%d", (long long)call->wait_id,
	        call->wait_seconds);
	progress_init(&prog, params);
	if (prog.token != NULL && mcp_exec_state(s->db, call->wait_id, state, sizeof(state)) == 0)
		progress_send(s, &prog, call->wait_id, state, deadline - deadline_now_ms());
	if (read_during_wait(s, req_id))
		why = MCP_WAIT_CANCELLED;
	while (why != MCP_WAIT_CANCELLED && !stopping(s)) {
		int hit = mcp_db_notified(s->db, call->wait_id);
		bool cancelled = false;
		int64_t left;

		if (hit < 0 && reconnects++ < 3 && mcp_db_connect(s->db) == 0)
			hit = 1; /* listening again on a new connection: re-read, then wait on */
		if (hit < 0)
			break; /* the database is gone: the answer says so */
		if (hit > 0) {
			if (mcp_exec_state(s->db, call->wait_id, state, sizeof(state)) < 0)
				break;
			if (mcp_exec_settled(state, call->wait_until_final)) {
				why = MCP_WAIT_SETTLED;
				break;
			}
			if (strcmp(state, prog.state) != 0)
				progress_send(s, &prog, call->wait_id, state,
				              deadline - deadline_now_ms());
			continue; /* drain what arrived during that read */
		}
		left = deadline - deadline_now_ms();
		if (left <= 0) {
			why = MCP_WAIT_TIMEOUT;
			break;
		}
		if (prog.token != NULL && deadline_now_ms() >= prog.next_ms)
			progress_send(s, &prog, call->wait_id, prog.state, left);
		if (prog.token != NULL && prog.next_ms - deadline_now_ms() < left)
			left = prog.next_ms - deadline_now_ms() > 0
			           ? prog.next_ms - deadline_now_ms()
			           : 0;
		if (mcp_reader_at_eof(s->in)) {
			why = MCP_WAIT_INPUT_END;
			break;
		}
		if (wait_io(s, req_id, left, &cancelled) < 0)
			break;
		if (cancelled)
			why = MCP_WAIT_CANCELLED;
	}
	log_msg(LOG_INFO, "exec=%lld evt=mcp.wait_end why=%s", (long long)call->wait_id,
	        mcp_exec_wait_end_name(why));
	cJSON_Delete(prog.token);
	mcp_exec_end_wait(s->db, call, why);
}

int mcp_server_run(struct mcp_server *s)
{
	char *line;
	size_t len;

	while (!stopping(s)) {
		if (s->qhead < s->qlen) {
			/* Take the entry out first: handling it may queue more. */
			struct deferred d = s->queue[s->qhead++];
			if (d.line == NULL)
				too_long(s);
			else
				mcp_server_handle_line(s, d.line, d.len);
			free(d.line);
			if (s->qhead == s->qlen)
				s->qhead = s->qlen = 0;
			continue;
		}
		switch (mcp_reader_next(s->in, &line, &len)) {
		case MCP_READ_LINE:
			mcp_server_handle_line(s, line, len);
			break;
		case MCP_READ_TOO_LONG:
			too_long(s);
			break;
		case MCP_READ_AGAIN:
			if (mcp_reader_fill(s->in) < 0) {
				if (errno == EINTR)
					continue;
				log_msg(LOG_ERROR, "evt=mcp.read_failed errno=%d", errno);
				return -1;
			}
			break;
		case MCP_READ_EOF:
			log_msg(LOG_INFO, "evt=mcp.eof");
			return 0;
		}
	}
	return s->out_gone ? -1 : 0;
}
