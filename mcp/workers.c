/* workers.c -- the pool that runs tool calls, and the wait for an execution to settle. */
#include "mcp/workers.h"

#include "mcp/agent.h"
#include "mcp/jsonrpc.h"
#include "mcp/result.h"
#include "mcp/tools.h"

#include "store/store.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct job {
	cJSON *id;    /* the request's id (NULL = null) */
	char *idtext; /* the same as JSON text, to match cancellations */
	char *tool;
	cJSON *args;
	cJSON *params; /* for _meta.progressToken */
	void *slot;
	atomic_bool cancelled;
	struct job *next;
};

struct worker {
	struct mcp_workers *pool;
	pthread_t thread;
	struct mcp_agent *agent;
	int wake[2];         /* a byte here ends the worker's wait early */
	pthread_cond_t work; /* a job for this worker, or quit */
	struct job *current;
};

struct mcp_workers {
	pthread_mutex_t lock;
	pthread_cond_t idle; /* a job finished */
	/* Idle workers, the one idle last on top: a job goes to it, so a few
	 * sessions serve a client that sends one call at a time, and the others
	 * connect only when calls overlap. */
	struct worker *idlers[MCP_WORKERS];
	int nidle;
	struct job *head, *tail;
	int queued, running;
	bool quit;
	atomic_int closed; /* 0 while input flows, else the enum mcp_wait_end to end waits with */
	mcp_answer_fn answer;
	mcp_notify_fn notify;
	void *arg;
	struct worker workers[MCP_WORKERS];
};

static void job_free(struct job *j)
{
	cJSON_Delete(j->id);
	free(j->idtext);
	free(j->tool);
	cJSON_Delete(j->args);
	cJSON_Delete(j->params);
	free(j);
}

static void wake(struct worker *w)
{
	ssize_t n;

	do
		n = write(w->wake[1], "w", 1);
	while (n < 0 && errno == EINTR);
	/* EAGAIN: the pipe is full, so a wake-up is pending anyway. */
}

static void drain_wake(struct worker *w)
{
	char buf[64];

	while (read(w->wake[0], buf, sizeof(buf)) > 0)
		;
}

/* Why a wait must end now, or -1 when it may go on. */
static int must_end(struct worker *w, struct job *j)
{
	int closed = atomic_load(&w->pool->closed);

	if (atomic_load(&j->cancelled))
		return MCP_WAIT_CANCELLED;
	return closed != 0 ? closed : -1;
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

static void progress_send(struct mcp_workers *pool, struct progress *p, int64_t id,
                          const char *state, int64_t left_ms)
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
	pool->notify(pool->arg, n);
	p->next_ms = deadline_now_ms() + PROGRESS_EVERY_MS;
	log_msg(LOG_INFO, "exec=%lld evt=mcp.progress state=%s n=%d", (long long)id, st, p->count);
}

/* Takes what the session holds: 1 when a state change was announced, 0 when
 * none was, -1 when the session is lost. */
static int state_changed(struct store *st)
{
	char ch[64];
	int hit = 0;

	if (store_wait_notify(st, 0) < 0)
		return -1;
	while (store_notification(st, ch, sizeof(ch), NULL, 0) == 1)
		if (strcmp(ch, MCP_STATE_CHANNEL) == 0)
			hit = 1;
	return hit;
}

/* Waits, without polling the database, until call's execution settles, the
 * budget runs out, the client cancels the request, or input ends. */
static void wait_execution(struct worker *w, struct job *j, struct mcp_call *call)
{
	struct store *st = mcp_agent_store(w->agent);
	int64_t deadline = deadline_now_ms() + (int64_t)call->wait_seconds * 1000;
	enum mcp_wait_end why = MCP_WAIT_STOPPED;
	int reconnects = 0;
	struct progress prog;
	char state[40];

	log_msg(LOG_INFO, "exec=%lld evt=mcp.wait seconds=%d", (long long)call->wait_id,
	        call->wait_seconds);
	progress_init(&prog, j->params);
	if (prog.token != NULL && mcp_exec_state(st, call->wait_id, state, sizeof(state)) == 0)
		progress_send(w->pool, &prog, call->wait_id, state, deadline - deadline_now_ms());
	for (;;) {
		int hit, end = must_end(w, j);
		int64_t left;

		if (end >= 0) {
			why = (enum mcp_wait_end)end;
			break;
		}
		hit = state_changed(st);
		if (hit < 0 && reconnects++ < 3 && mcp_agent_ready(w->agent) == 0)
			hit = 1; /* listening again on a new session: re-read, then wait on */
		if (hit < 0)
			break; /* the database is gone: the answer says so */
		if (hit > 0) {
			if (mcp_agent_ready(w->agent) < 0 ||
			    mcp_exec_state(st, call->wait_id, state, sizeof(state)) < 0)
				break;
			if (mcp_exec_settled(state, call->wait_until_final)) {
				why = MCP_WAIT_SETTLED;
				break;
			}
			if (strcmp(state, prog.state) != 0)
				progress_send(w->pool, &prog, call->wait_id, state,
				              deadline - deadline_now_ms());
			continue; /* drain what arrived during that read */
		}
		left = deadline - deadline_now_ms();
		if (left <= 0) {
			why = MCP_WAIT_TIMEOUT;
			break;
		}
		if (prog.token != NULL && deadline_now_ms() >= prog.next_ms)
			progress_send(w->pool, &prog, call->wait_id, prog.state, left);
		if (prog.token != NULL && prog.next_ms - deadline_now_ms() < left)
			left = prog.next_ms - deadline_now_ms() > 0
			           ? prog.next_ms - deadline_now_ms()
			           : 0;
		/* Sleeps until a notification, a wake-up (cancel, end of input) or
		 * the time runs out; a lost session shows on the next round. */
		if (store_wait_notify_or(st, w->wake[0], (int)left) == 2)
			drain_wake(w);
	}
	log_msg(LOG_INFO, "exec=%lld evt=mcp.wait_end why=%s", (long long)call->wait_id,
	        mcp_exec_wait_end_name(why));
	cJSON_Delete(prog.token);
	mcp_exec_end_wait(st, call, why);
}

static void run_job(struct worker *w, struct job *j)
{
	char lq[512];
	struct store *st = mcp_agent_store(w->agent);
	struct mcp_call call;
	int64_t t0 = deadline_now_ms();

	if (atomic_load(&j->cancelled)) {
		log_msg(LOG_INFO, "evt=mcp.tool_cancelled tool=%s started=0",
		        log_quote(j->tool, lq, sizeof(lq)));
		w->pool->answer(w->pool->arg, j->slot, NULL);
		return;
	}
	memset(&call, 0, sizeof(call));
	if (mcp_agent_ready(w->agent) < 0)
		call.result = mcp_result_db_error(st, j->tool);
	else
		mcp_tools_call(st, j->tool, j->args, &call);
	if (call.wait_id != 0)
		wait_execution(w, j, &call);
	if (atomic_load(&j->cancelled)) {
		/* The client said it no longer wants the answer. */
		log_msg(LOG_INFO, "evt=mcp.tool_cancelled tool=%s started=1",
		        log_quote(j->tool, lq, sizeof(lq)));
		cJSON_Delete(call.result);
		w->pool->answer(w->pool->arg, j->slot, NULL);
		return;
	}
	log_msg(LOG_INFO, "evt=mcp.tool_call tool=%s is_error=%d ms=%lld",
	        log_quote(j->tool, lq, sizeof(lq)),
	        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call.result, "isError")),
	        (long long)(deadline_now_ms() - t0));
	w->pool->answer(w->pool->arg, j->slot, mcp_reply_result(j->id, call.result));
}

/* Puts w on the idle stack, or takes it off; under pool->lock. */
static void set_idle(struct worker *w, bool idle)
{
	struct mcp_workers *pool = w->pool;
	int i = 0;

	while (i < pool->nidle && pool->idlers[i] != w)
		i++;
	if (idle && i == pool->nidle) {
		pool->idlers[pool->nidle++] = w;
	} else if (!idle && i < pool->nidle) {
		memmove(&pool->idlers[i], &pool->idlers[i + 1],
		        (size_t)(pool->nidle - i - 1) * sizeof(pool->idlers[0]));
		pool->nidle--;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct mcp_workers *pool = w->pool;

	pthread_mutex_lock(&pool->lock);
	for (;;) {
		struct job *j;
		while (pool->head == NULL && !pool->quit) {
			set_idle(w, true);
			pthread_cond_wait(&w->work, &pool->lock);
		}
		set_idle(w, false);
		if (pool->head == NULL)
			break; /* quit, and nothing left */
		j = pool->head;
		pool->head = j->next;
		if (pool->head == NULL)
			pool->tail = NULL;
		pool->queued--;
		pool->running++;
		w->current = j;
		pthread_mutex_unlock(&pool->lock);

		drain_wake(w); /* left over from an earlier call */
		run_job(w, j);

		pthread_mutex_lock(&pool->lock);
		w->current = NULL;
		pool->running--;
		job_free(j);
		pthread_cond_broadcast(&pool->idle);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

static void pipe_nonblocking(int fds[2])
{
	if (pipe(fds) < 0)
		fatal("evt=mcp.pipe_failed errno=%d", errno);
	for (int i = 0; i < 2; i++) {
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	}
}

struct mcp_workers *mcp_workers_new(const char *conninfo, struct mcp_agent *first,
                                    mcp_answer_fn answer, mcp_notify_fn notify, void *arg)
{
	struct mcp_workers *pool = xcalloc(1, sizeof(*pool));
	sigset_t all, old;

	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->idle, NULL);
	atomic_init(&pool->closed, 0);
	pool->answer = answer;
	pool->notify = notify;
	pool->arg = arg;
	/* Signals are for the reader thread (its blocking read returns on them). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* All idle, the first worker on top: the session already open serves
	 * the first call. */
	for (int i = 0; i < MCP_WORKERS; i++)
		pool->idlers[pool->nidle++] = &pool->workers[MCP_WORKERS - 1 - i];
	for (int i = 0; i < MCP_WORKERS; i++) {
		struct worker *w = &pool->workers[i];
		w->pool = pool;
		w->agent = i == 0 && first != NULL ? first : mcp_agent_new(conninfo);
		pipe_nonblocking(w->wake);
		pthread_cond_init(&w->work, NULL);
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
			fatal("evt=mcp.thread_failed");
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pool;
}

int mcp_workers_submit(struct mcp_workers *pool, const cJSON *id, const char *tool,
                       const cJSON *args, const cJSON *params, void *slot)
{
	struct job *j;

	pthread_mutex_lock(&pool->lock);
	if (pool->queued >= MCP_QUEUE_MAX) {
		pthread_mutex_unlock(&pool->lock);
		return -1;
	}
	j = xcalloc(1, sizeof(*j));
	j->id = id ? cJSON_Duplicate(id, 1) : NULL;
	j->idtext = id ? cJSON_PrintUnformatted(id) : xstrdup("null");
	j->tool = xstrdup(tool);
	j->args = cJSON_Duplicate(args, 1);
	j->params = params ? cJSON_Duplicate(params, 1) : NULL;
	j->slot = slot;
	atomic_init(&j->cancelled, false);
	if (pool->tail)
		pool->tail->next = j;
	else
		pool->head = j;
	pool->tail = j;
	pool->queued++;
	if (pool->nidle > 0) {
		struct worker *w = pool->idlers[--pool->nidle];
		pthread_cond_signal(&w->work);
	}
	pthread_mutex_unlock(&pool->lock);
	return 0;
}

void mcp_workers_cancel(struct mcp_workers *pool, const cJSON *request_id)
{
	char *key = cJSON_PrintUnformatted(request_id);
	int n = 0;

	pthread_mutex_lock(&pool->lock);
	for (struct job *j = pool->head; j != NULL; j = j->next)
		if (strcmp(j->idtext, key) == 0) {
			atomic_store(&j->cancelled, true);
			n++;
		}
	for (int i = 0; i < MCP_WORKERS; i++) {
		struct worker *w = &pool->workers[i];
		if (w->current != NULL && strcmp(w->current->idtext, key) == 0) {
			atomic_store(&w->current->cancelled, true);
			wake(w);
			n++;
		}
	}
	pthread_mutex_unlock(&pool->lock);
	log_msg(LOG_INFO, "evt=mcp.cancel_request matched=%d", n);
	free(key);
}

void mcp_workers_close_input(struct mcp_workers *pool, enum mcp_wait_end why)
{
	pthread_mutex_lock(&pool->lock);
	atomic_store(&pool->closed, (int)why);
	for (int i = 0; i < MCP_WORKERS; i++)
		wake(&pool->workers[i]);
	pthread_mutex_unlock(&pool->lock);
}

int mcp_workers_in_flight(struct mcp_workers *pool)
{
	int n;

	pthread_mutex_lock(&pool->lock);
	n = pool->queued + pool->running;
	pthread_mutex_unlock(&pool->lock);
	return n;
}

int mcp_workers_drain(struct mcp_workers *pool, int64_t timeout_ms)
{
	int64_t until = deadline_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int rc = 0;

	pthread_mutex_lock(&pool->lock);
	while (rc == 0 && pool->queued + pool->running > 0) {
		if (timeout_ms < 0)
			pthread_cond_wait(&pool->idle, &pool->lock);
		else if (deadline_cond_wait(&pool->idle, &pool->lock, until) == ETIMEDOUT)
			rc = pool->queued + pool->running > 0 ? -1 : 0;
	}
	pthread_mutex_unlock(&pool->lock);
	return rc;
}

void mcp_workers_free(struct mcp_workers *pool)
{
	if (pool == NULL)
		return;
	pthread_mutex_lock(&pool->lock);
	pool->quit = true;
	for (int i = 0; i < MCP_WORKERS; i++)
		pthread_cond_signal(&pool->workers[i].work);
	pthread_mutex_unlock(&pool->lock);
	for (int i = 0; i < MCP_WORKERS; i++) {
		struct worker *w = &pool->workers[i];
		pthread_join(w->thread, NULL);
		mcp_agent_free(w->agent);
		close(w->wake[0]);
		close(w->wake[1]);
		pthread_cond_destroy(&w->work);
	}
	pthread_cond_destroy(&pool->idle);
	pthread_mutex_destroy(&pool->lock);
	free(pool);
}
