/* pages.h -- the console's pages, rendered from the database as the signed-in
 * operator's own login.  Every value from the database goes through
 * html_text()/html_block(); nothing is written into a page unescaped.  Each
 * function appends HTML to out and returns 0, or -1 with the database's
 * reason on db (the caller shows it). */
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

/* The pending requests as a list (the live part of the Pending page). */
int page_pending_list(struct buf *out, struct store *db);
/* The Pending page: the list, refreshed when the server says something changed. */
int page_pending(struct buf *out, struct store *db, const struct page_ctx *pc);

/* One request: everything an approver needs, and the decision forms.  A
 * notice (NULL for none) is shown at the top, as an error when is_error.
 * 1 when there is no such request. */
int page_request(struct buf *out, struct store *db, const struct page_ctx *pc, long long id,
                 const char *notice, bool is_error);
/* The live part of the request page: state, votes, events, output. */
int page_request_state(struct buf *out, struct store *db, long long id);

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

/* The sign-in form, with a message (NULL for none). */
void page_signin(struct buf *out, const char *message);
/* A small page with one message (errors outside a session). */
void page_message(struct buf *out, const char *title, const char *message);

#endif
