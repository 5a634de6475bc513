/* server.c -- MCP lifecycle, JSON-RPC dispatch and the reader thread. */
#include "mcp/server.h"

#include "mcp/agent.h"
#include "mcp/executions.h"
#include "mcp/framing.h"
#include "mcp/jsonrpc.h"
#include "mcp/result.h"
#include "mcp/tools.h"
#include "mcp/workers.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* How long the end of input waits for the calls still in flight.  Waits end
 * at once then; this bounds statements (each also bounded by the session's
 * statement and lock timeouts). */
#define DRAIN_MS 10000

/* The replies of one batch: filled by the reader and by workers in any
 * order, sent as one array (in the batch's order) when the last is in. */
struct batch {
	struct mcp_server *srv;
	size_t n, pending; /* pending counts the reader too, until it has placed all */
	cJSON **replies;
	struct slot {
		struct batch *b;
		size_t i;
	} * slots;
};

struct mcp_server {
	struct mcp_reader *in;
	int out_fd;
	pthread_mutex_t out_lock; /* one whole line at a time; also guards batches */
	atomic_bool out_gone;
	const volatile sig_atomic_t *stop;
	enum phase phase; /* the reader thread's alone, like version */
	const char *version;
	struct mcp_workers *workers;
	bool abandoned; /* calls were still in flight when the drain gave up */
};

static void send_reply(struct mcp_server *s, cJSON *reply);
static void batch_put(struct batch *b, size_t i, cJSON *reply);

static void on_answer(void *arg, void *slot, cJSON *reply)
{
	struct slot *sl = slot;

	if (sl == NULL)
		send_reply(arg, reply);
	else
		batch_put(sl->b, sl->i, reply);
}

static void on_notify(void *arg, cJSON *msg)
{
	send_reply(arg, msg);
}

struct mcp_server *mcp_server_new(const char *conninfo, struct mcp_agent *first, int in_fd,
                                  int out_fd)
{
	struct mcp_server *s = xcalloc(1, sizeof(*s));

	s->in = mcp_reader_new(in_fd, MCP_LINE_MAX);
	s->out_fd = out_fd;
	pthread_mutex_init(&s->out_lock, NULL);
	atomic_init(&s->out_gone, false);
	s->workers = mcp_workers_new(conninfo, first, on_answer, on_notify, s);
	return s;
}

void mcp_server_free(struct mcp_server *s)
{
	if (s == NULL)
		return;
	if (s->abandoned)
		return; /* a thread may still use it: the process exit takes it all */
	mcp_workers_free(s->workers);
	pthread_mutex_destroy(&s->out_lock);
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
	return atomic_load(&s->out_gone) || (s->stop != NULL && *s->stop);
}

/* Writes one message as one line; any thread. */
static void send_reply(struct mcp_server *s, cJSON *reply)
{
	char *line;

	if (reply == NULL)
		return;
	line = mcp_json_print(reply);
	pthread_mutex_lock(&s->out_lock);
	if (!atomic_load(&s->out_gone) && mcp_write_line(s->out_fd, line, strlen(line)) < 0) {
		log_msg(LOG_WARN, "evt=mcp.output_closed");
		atomic_store(&s->out_gone, true);
	}
	pthread_mutex_unlock(&s->out_lock);
	free(line);
	cJSON_Delete(reply);
}

static struct batch *batch_new(struct mcp_server *s, size_t n)
{
	struct batch *b = xcalloc(1, sizeof(*b));

	b->srv = s;
	b->n = n;
	b->pending = n + 1;
	b->replies = xcalloc(n ? n : 1, sizeof(*b->replies));
	b->slots = xcalloc(n ? n : 1, sizeof(*b->slots));
	for (size_t i = 0; i < n; i++) {
		b->slots[i].b = b;
		b->slots[i].i = i;
	}
	return b;
}

/* Places reply i (NULL: none is due), or with i == n marks that the reader
 * has placed everything.  The last one in sends the array and frees b. */
static void batch_put(struct batch *b, size_t i, cJSON *reply)
{
	struct mcp_server *s = b->srv;
	cJSON *all = NULL;
	bool done;

	pthread_mutex_lock(&s->out_lock);
	if (i < b->n)
		b->replies[i] = reply;
	done = --b->pending == 0;
	pthread_mutex_unlock(&s->out_lock);
	if (!done)
		return;
	for (size_t k = 0; k < b->n; k++) {
		if (b->replies[k] == NULL)
			continue;
		if (all == NULL)
			all = cJSON_CreateArray();
		cJSON_AddItemToArray(all, b->replies[k]);
	}
	send_reply(s, all); /* none due (all notifications): nothing is sent */
	free(b->replies);
	free(b->slots);
	free(b);
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

/* A tools/call: answered here when it is malformed, else queued for a
 * worker (then NULL, and the worker answers through slot). */
static cJSON *do_tools_call(struct mcp_server *s, const cJSON *id, const cJSON *params,
                            struct slot *slot)
{
	char lq[512];
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	cJSON *empty = NULL, *invalid;
	int queued;

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
	/* Invalid arguments never reach a worker or the database. */
	invalid = mcp_tools_check(name->valuestring, args);
	if (invalid != NULL) {
		cJSON_Delete(empty);
		return mcp_reply_result(id, invalid);
	}
	queued = mcp_workers_submit(s->workers, id, name->valuestring, args, params, slot);
	cJSON_Delete(empty);
	if (queued == 0)
		return NULL;
	log_msg(LOG_WARN, "evt=mcp.busy tool=%s queued=%d",
	        log_quote(name->valuestring, lq, sizeof(lq)), MCP_QUEUE_MAX);
	return mcp_reply_result(
	    id, mcp_result_error("airlock-mcp is busy: too many calls are waiting for their turn",
	                         "Nothing was done. Wait for answers to the calls you already "
	                         "made, then call again. " MCP_NO_BYPASS));
}

/* A request's reply, or NULL when a worker will answer it (through slot). */
static cJSON *do_request(struct mcp_server *s, const struct mcp_msg *m, bool in_batch,
                         struct slot *slot)
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
	return do_tools_call(s, m->id, m->params, slot);
}

static void do_notification(struct mcp_server *s, const struct mcp_msg *m)
{
	if (strcmp(m->method, "notifications/initialized") == 0 && s->phase == PHASE_INITIALIZED)
		s->phase = PHASE_READY;
	if (strcmp(m->method, "notifications/cancelled") == 0 && cJSON_IsObject(m->params)) {
		const cJSON *rid = cJSON_GetObjectItemCaseSensitive(m->params, "requestId");
		if (cJSON_IsString(rid) || cJSON_IsNumber(rid) || cJSON_IsRaw(rid))
			mcp_workers_cancel(s->workers, rid);
	}
	/* Everything else (progress, unknown) needs nothing from us, and
	 * notifications are never answered. */
}

/* One message of a line or batch: its reply, or NULL when none is due now
 * (a notification, or a call a worker will answer through slot). */
static cJSON *handle_message(struct mcp_server *s, const cJSON *item, const char *raw, size_t len,
                             bool in_batch, struct slot *slot)
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
		reply = do_request(s, &m, in_batch, slot);
		if (reply == NULL)
			slot = NULL; /* queued: the worker answers */
		break;
	}
	mcp_msg_clear(&m);
	if (slot != NULL)
		batch_put(slot->b, slot->i, reply);
	return slot != NULL ? NULL : reply;
}

static void handle_batch(struct mcp_server *s, const cJSON *root, const char *line, size_t len)
{
	size_t n = 0, count = (size_t)cJSON_GetArraySize(root);
	size_t *spans;
	const cJSON *item;
	struct batch *b;
	size_t i = 0;

	if (s->version == NULL || strcmp(s->version, BATCH_VERSION) != 0) {
		send_reply(s, error_reply(NULL, MCP_INVALID_REQUEST,
		                          "Invalid Request: batches are not supported by protocol "
		                          "version %s",
		                          s->version ? s->version : "(not initialized)"));
		return;
	}
	if (count == 0) {
		send_reply(s,
		           error_reply(NULL, MCP_INVALID_REQUEST, "Invalid Request: empty batch"));
		return;
	}
	spans = mcp_json_element_spans(line, len, &n);
	b = batch_new(s, count);
	cJSON_ArrayForEach(item, root)
	{
		const char *raw = i < n ? line + spans[2 * i] : NULL;
		size_t rawlen = i < n ? spans[2 * i + 1] - spans[2 * i] : 0;
		handle_message(s, item, raw, rawlen, true, &b->slots[i]);
		i++;
	}
	free(spans);
	batch_put(b, count, NULL); /* the reader's share: the batch may complete now */
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
		send_reply(s, handle_message(s, root, line, len, false, NULL));
	cJSON_Delete(root);
}

void mcp_server_settle(struct mcp_server *s)
{
	mcp_workers_drain(s->workers, -1);
}

static void too_long(struct mcp_server *s)
{
	send_reply(s,
	           error_reply(NULL, MCP_INVALID_REQUEST,
	                       "Invalid Request: message line longer than %u bytes", MCP_LINE_MAX));
}

/* Input is over: waits end and are answered, queued calls run, and the calls
 * in flight get DRAIN_MS to finish. */
static void finish(struct mcp_server *s, enum mcp_wait_end why)
{
	int64_t t0 = deadline_now_ms();

	mcp_workers_close_input(s->workers, why);
	if (mcp_workers_drain(s->workers, DRAIN_MS) < 0) {
		s->abandoned = true;
		log_msg(LOG_ERROR, "evt=mcp.drain_timeout in_flight=%d ms=%lld",
		        mcp_workers_in_flight(s->workers), (long long)(deadline_now_ms() - t0));
	}
}

/* Waits until input is readable: 1, or 0 when a signal came (the caller
 * checks its stop flag), -1 on failure.  SIGTERM and SIGINT stay blocked
 * outside this wait, so one that arrives between checking the stop flag and
 * waiting is taken here, not lost until the next line of input. */
static int wait_input(struct mcp_server *s, const sigset_t *during)
{
	struct pollfd p = {.fd = mcp_reader_fd(s->in), .events = POLLIN};

	if (ppoll(&p, 1, NULL, during) < 0)
		return errno == EINTR ? 0 : -1;
	return 1;
}

int mcp_server_run(struct mcp_server *s)
{
	sigset_t stops, during;
	char *line;
	size_t len;
	int rc = 0;

	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stops, &during);
	while (!stopping(s)) {
		enum mcp_read r = mcp_reader_next(s->in, &line, &len);
		if (r == MCP_READ_LINE) {
			mcp_server_handle_line(s, line, len);
		} else if (r == MCP_READ_TOO_LONG) {
			too_long(s);
		} else if (r == MCP_READ_EOF) {
			log_msg(LOG_INFO, "evt=mcp.eof in_flight=%d",
			        mcp_workers_in_flight(s->workers));
			break;
		} else {
			int ready = wait_input(s, &during);
			if (ready == 0)
				continue;
			if (ready < 0 || mcp_reader_fill(s->in) < 0) {
				log_msg(LOG_ERROR, "evt=mcp.read_failed errno=%d", errno);
				rc = -1;
				break;
			}
		}
	}
	pthread_sigmask(SIG_SETMASK, &during, NULL);
	finish(s, stopping(s) || rc < 0 ? MCP_WAIT_STOPPED : MCP_WAIT_INPUT_END);
	if (s->abandoned || atomic_load(&s->out_gone))
		rc = -1;
	return rc;
}
