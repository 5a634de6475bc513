/* pages.h -- the console's pages, rendered from the database as the signed-in
 * operator's own login.  Every value from the database goes through
 * html_text()/html_block()/html_command(); nothing is written into a page
 * unescaped.  Each function appends HTML to out and returns 0, or -1 with
 * the database's reason on db (the caller shows it). */
#ifndef AIRLOCK_WEB_PAGES_H
#define AIRLOCK_WEB_PAGES_H

#include "lib/buf.h"
#include "store/store.h"

#include <stdbool.h>

/* What every page needs from the session. */
struct page_ctx {
	const char *login;
	const char *csrf;
};

/* The frame around a page's body: header with navigation, sign-out form. */
void page_begin(struct buf *out, const struct page_ctx *pc, const char *title);
void page_end(struct buf *out);

/* The queue's filters (web/queue.c); each NULL or "" for any.  state is an
 * open state (received, queued, pending_approval, approved, running) or
 * "open" for all of them; NULL or "": pending_approval. */
struct queue_filter {
	const char *target; /* entity slug glob, * and ? as wildcards */
	const char *agent;  /* requester login glob */
	const char *cls;    /* read_only, reversible_low, config_mutation, destructive */
	const char *state;
	const char *older; /* waiting longer than: 90s, 15m, 2h, 1d */
};
/* Why f cannot be used (a sentence for the page), or NULL when it can. */
const char *queue_filter_problem(const struct queue_filter *f);
/* f as a query string ("?target=...&..."; "" when nothing is set). */
void queue_filter_query(struct buf *out, const struct queue_filter *f);

/* The requests the filter selects, with a box to tick on each that waits
 * for a decision (the live part of the Pending page), then the held output. */
int page_pending_list(struct buf *out, struct store *db, const struct queue_filter *f);
/* The Pending page: the filters, the list (refreshed when the server says
 * something changed) and the form that decides the ticked ones. */
int page_pending(struct buf *out, struct store *db, const struct page_ctx *pc,
                 const struct queue_filter *f);
/* The outcome of a bulk decision: one line per request. */
void page_bulk_result(struct buf *out, const struct page_ctx *pc, const char *what,
                      const struct buf *lines, int decided, int refused);

/* One request (web/request.c), decision first: what will run, where, who
 * asked and why, the class in words, the votes, the rewind status, the
 * preview's headline and the decision forms on the first screen; the
 * reasons, blast radius, preview, events, raw JSON and history below,
 * folded.  A notice (NULL for none) is shown at the top, as an error when
 * is_error.  1 when there is no such request. */
int page_request(struct buf *out, struct store *db, const struct page_ctx *pc, long long id,
                 const char *notice, bool is_error);
/* The live parts of the request page: its status (state, votes and who
 * cast them, expiry, outcome, output); and its events. */
int page_request_state(struct buf *out, struct store *db, long long id);
int page_request_events(struct buf *out, struct store *db, long long id);

/* What the action page needs of a request: the decision-first summary
 * (without forms) into out, and what its form needs. */
struct request_view {
	char *state;       /* the request's state */
	char *hash;        /* its payload hash ("" when none) */
	char *hard_why;    /* why its command is hard to read, or NULL */
	bool hard_confirm; /* and the gate asks the approver to confirm reading it */
	bool own;          /* the signed-in operator asked for it */
};
int page_request_summary(struct buf *out, struct store *db, const struct page_ctx *pc, long long id,
                         struct request_view *rv);
void request_view_clear(struct request_view *rv);

/* The box an approver ticks when the command is hard to read (inside an
 * approve form). */
void page_confirm_read(struct buf *out, const char *why);

/* An agent (web/agent.c): its requests, its side-door events when the
 * database records them, and the limits and rules that bind it. */
int page_agent(struct buf *out, struct store *db, const struct page_ctx *pc, const char *login);

/* Executions matching q (target, command, requester, change id, action;
 * empty for all) and state (NULL or "" for any), newest first. */
int page_history(struct buf *out, struct store *db, const struct page_ctx *pc, const char *q,
                 const char *state);
/* The audit chain's verification and the console's sign-in history. */
int page_audit(struct buf *out, struct store *db, const struct page_ctx *pc);

/* An output stream (bytea's text form) as a block, or nothing for NULL. */
void page_output_block(struct buf *out, const char *label, const char *hex, const char *truncated);

/* Held output (web/held.c): the list of what waits for a decision (the live
 * part of the Pending page); one request's hold in its live state; and its
 * held bytes with the release and discard forms on its page. */
int page_held_list(struct buf *out, struct store *db);
int page_held_status(struct buf *out, struct store *db, const char *id);
int page_held_section(struct buf *out, struct store *db, const struct page_ctx *pc, const char *id);

/* The side door (sidedoor.c): what airlockd's probes observed on the nodes,
 * and what agents' hosts reported (hook denials and asks, host checks),
 * never mixed; and its one line, on the pending page and at the head of
 * that page (nothing when there is nothing). */
int page_side_door(struct buf *out, struct store *db, const struct page_ctx *pc);
int page_side_door_line(struct buf *out, struct store *db);

/* The sign-in form, with a message (NULL for none) and the console path to
 * return to once signed in (NULL or unsafe: the Pending page). */
void page_signin(struct buf *out, const char *message, const char *next);
/* A small page with one message (errors outside a session). */
void page_message(struct buf *out, const char *title, const char *message);

#endif
