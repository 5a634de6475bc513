/* anchorer.c -- sign the chain's head now and then; append it to the anchor file.
 * An anchor's event number is a chain position (execution_events.seq): only
 * sealed events are in the chain, so only they are anchored. */
#include "worker/anchorer.h"

#include "lib/anchor.h"
#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/syslogline.h"
#include "lib/xalloc.h"
#include "worker/durability.h"
#include "worker/metrics.h"
#include "worker/notify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* While an anchor cannot be written, its failure is logged again this often. */
#define ANCHOR_FAIL_LOG_MS 60000

struct anchorer {
	struct anchor_key *key;
	char *path;
	int every_events;
	int64_t every_ms;
	bool syslog;
	/* The last anchor written (or found in the file): 0 = none yet. */
	long long last_id;
	char last_hash[65];
	int64_t last_ms;
	/* What was already reported, so a finding is logged once, not every tick. */
	long long reported_id;
	/* Whether mutations wait while anchors cannot be written. */
	bool hold;
	/* The last anchor could not be written: it is retried at every tick. */
	bool failing;
	long long failures; /* attempts that failed in a row */
	int64_t fail_logged_ms;
	struct metrics *metrics;
	struct notifier *notifier;
	struct durability *durability;
};

/* Finds the last valid anchor of this key among the file's last lines (the
 * file only grows, so its tail is all a restart needs).  Lines that do not
 * verify (another key, a write cut short by a crash) are skipped and counted. */
#define TAIL_BYTES 16384

static int read_last(struct anchorer *a, char *err, size_t errlen)
{
	char lq[512];
	int fd = open(a->path, O_RDONLY);
	char *text = NULL;
	off_t size, from;
	ssize_t got;
	int bad = 0;

	if (fd < 0 || (size = lseek(fd, 0, SEEK_END)) < 0) {
		snprintf(err, errlen, "audit anchor_file %s: %s", a->path, strerror(errno));
		goto fail;
	}
	from = size > TAIL_BYTES ? size - TAIL_BYTES : 0;
	text = xmalloc(TAIL_BYTES + 1);
	got = pread(fd, text, TAIL_BYTES, from);
	if (got < 0) {
		snprintf(err, errlen, "audit anchor_file %s: %s", a->path, strerror(errno));
		goto fail;
	}
	text[got] = '\0';
	close(fd);
	/* Reading from the middle: the first, partial line is not a line. */
	char *line = text;
	if (from > 0 && (line = strchr(text, '\n')) != NULL)
		line++;
	for (char *next; line != NULL && *line; line = next) {
		struct anchor an;
		char why[160];
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (line[0] == '\0')
			continue;
		if (anchor_verify(a->key, line, &an, why, sizeof(why)) < 0) {
			bad++;
			continue;
		}
		a->last_id = an.event_id;
		memcpy(a->last_hash, an.hash, sizeof(a->last_hash));
	}
	free(text);
	if (bad > 0)
		log_msg(
		    LOG_WARN,
		    "evt=audit.anchor_file_lines_skipped file=%s lines=%d note=\"lines not signed "
		    "by this daemon's key (another key, an interrupted write, or an edit)\"",
		    log_quote(a->path, lq, sizeof(lq)), bad);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(text);
	return -1;
}

struct anchorer *anchorer_new(const struct config *cfg, char *err, size_t errlen)
{
	char lq[512];
	struct anchorer *a = xcalloc(1, sizeof(*a));
	int fd;

	a->key = anchor_key_load_private(cfg->audit_signing_key, err, errlen);
	if (a->key == NULL)
		goto fail;
	a->path = xstrdup(cfg->audit_anchor_file);
	a->every_events = cfg->audit_every_events;
	a->every_ms = (int64_t)cfg->audit_every_seconds * 1000;
	a->syslog = cfg->audit_syslog;
	a->hold = cfg->audit_hold_mutations;
	fd = open(a->path, O_WRONLY | O_APPEND | O_CREAT, 0640);
	if (fd < 0) {
		snprintf(err, errlen, "audit anchor_file %s: %s", a->path, strerror(errno));
		goto fail;
	}
	close(fd);
	if (read_last(a, err, errlen) < 0)
		goto fail;
	a->last_ms = deadline_now_ms();
	if (a->syslog)
		syslogline_open("airlockd");
	log_msg(LOG_INFO,
	        "evt=audit.anchoring file=%s key=%s last_event=%lld every_events=%d "
	        "every_s=%d",
	        log_quote(a->path, lq, sizeof(lq)), anchor_key_id(a->key), a->last_id,
	        a->every_events, cfg->audit_every_seconds);
	return a;
fail:
	anchorer_free(a);
	return NULL;
}

void anchorer_free(struct anchorer *a)
{
	if (a == NULL)
		return;
	if (a->syslog)
		syslogline_close();
	anchor_key_free(a->key);
	free(a->path);
	free(a);
}

void anchorer_alarms(struct anchorer *a, struct metrics *m, struct notifier *n,
                     struct durability *d)
{
	if (a == NULL)
		return;
	a->metrics = m;
	a->notifier = n;
	a->durability = d;
}

/* Before a line is added, the file must end with a whole line: a tail cut
 * short (a crash mid-write) is ended with a newline, so the next anchor
 * starts a line of its own and is never glued to the piece, which stays as
 * evidence of the interrupted write (`audit verify --anchors` reports it as
 * torn, not as an edit; an append-only file could not be cut anyway).  -1
 * with the reason in err. */
static int repair_tail(struct anchorer *a, int fd, char *err, size_t errlen)
{
	char lq[512], last;
	struct stat st;
	ssize_t got;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if (st.st_size == 0)
		return 0;
	got = pread(fd, &last, 1, st.st_size - 1);
	if (got != 1) {
		snprintf(err, errlen, "reading the file's end: %s",
		         got < 0 ? strerror(errno) : "empty");
		return -1;
	}
	if (last == '\n')
		return 0;
	if (write(fd, "\n", 1) != 1) {
		snprintf(err, errlen, "ending a line cut short: %s", strerror(errno));
		return -1;
	}
	log_msg(LOG_WARN,
	        "evt=audit.anchor_tail_repaired file=%s how=ended note=\"the file ended in a line "
	        "cut short (an interrupted write); it was ended so that the next anchor is whole\"",
	        log_quote(a->path, lq, sizeof(lq)));
	return 0;
}

/* Appends the line whole, or not at all, and makes it durable; -1 with the
 * reason in err. */
static int append(struct anchorer *a, const char *line, char *err, size_t errlen)
{
	/* Read too: the file's end is looked at before each line. */
	int fd = open(a->path, O_RDWR | O_APPEND | O_CREAT, 0640);
	size_t n = strlen(line);
	off_t before;
	ssize_t w;
	int rc = -1;

	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if (repair_tail(a, fd, err, errlen) < 0)
		goto out;
	before = lseek(fd, 0, SEEK_END);
	w = write(fd, line, n);
	if (w != (ssize_t)n) {
		int e = errno;
		if (w < 0) {
			snprintf(err, errlen, "%s", strerror(e));
			goto out;
		}
		/* Cut short (a full disk): the piece goes again, or the next
		 * write's repair ends it. */
		bool cut = before >= 0 && ftruncate(fd, before) == 0;
		snprintf(err, errlen, "short write: %zd of %zu bytes (the disk is full?); %s", w, n,
		         cut ? "the piece was cut off again"
		             : "the piece is ended before the next");
		goto out;
	}
	if (fsync(fd) != 0) {
		snprintf(err, errlen, "fsync: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

/* An anchor could not be written: logged (again each minute while it lasts),
 * and the first time also the metrics, the webhooks and, with
 * audit.hold_mutations, the hold on mutations. */
static void failed(struct anchorer *a, const char *err, int64_t now)
{
	char lq[512], lq2[512], text[1200], why[1100];

	a->failures++;
	metrics_anchor(a->metrics, true);
	if (a->failing && now - a->fail_logged_ms < ANCHOR_FAIL_LOG_MS)
		return;
	a->fail_logged_ms = now;
	log_msg(LOG_ERROR,
	        "evt=audit.anchor_failed file=%s attempts=%lld mutations=%s error=%s "
	        "note=\"retried every second\"",
	        log_quote(a->path, lq2, sizeof(lq2)), a->failures, a->hold ? "held" : "running",
	        log_quote(err, lq, sizeof(lq)));
	if (a->failing)
		return;
	a->failing = true;
	snprintf(why, sizeof(why),
	         "the audit anchor file %s cannot be written (%s): no change runs until the "
	         "audit chain's head is signed outside the database again (audit.hold_mutations)",
	         a->path, err);
	if (a->hold && a->durability)
		durability_hold(a->durability, why);
	if (a->notifier) {
		cJSON *m = cJSON_CreateObject();
		snprintf(text, sizeof(text),
		         "airlock: the audit anchor file %s cannot be written (%s). Anchors are "
		         "retried every second; %s. Free the disk or fix the file's permissions.",
		         a->path, err,
		         a->hold ? "until one lands, mutations are held (observations still run)"
		                 : "mutations keep running without anchors (audit.hold_mutations: "
		                   "false)");
		cJSON_AddStringToObject(m, "event", "audit_anchor_failed");
		cJSON_AddStringToObject(m, "detail", err);
		cJSON_AddStringToObject(m, "text", text);
		notifier_post(a->notifier, NULL, m);
	}
}

static void recovered(struct anchorer *a)
{
	char lq[512];

	if (!a->failing)
		return;
	log_msg(LOG_INFO, "evt=audit.anchor_recovered file=%s failed_attempts=%lld",
	        log_quote(a->path, lq, sizeof(lq)), a->failures);
	a->failing = false;
	a->failures = 0;
	metrics_anchor(a->metrics, false);
	if (a->durability)
		durability_hold(a->durability, NULL);
}

/* Is the event anchored last still there, with the hash that was signed? */
static void check_continuity(struct anchorer *a, struct store *db, long long head)
{
	char id[32];
	struct store_res *res;

	if (a->last_id == 0 || a->reported_id == a->last_id)
		return;
	if (head < a->last_id) {
		log_msg(LOG_ERROR,
		        "evt=audit.truncated anchored_event=%lld newest_event=%lld note=\"events "
		        "the daemon anchored are gone from the database\"",
		        a->last_id, head);
		a->reported_id = a->last_id;
		return;
	}
	snprintf(id, sizeof(id), "%lld", a->last_id);
	res = store_exec(db, "SELECT hash FROM airlock.execution_events WHERE seq = $1::bigint", 1,
	                 (const char *const[]){id});
	if (res == NULL)
		return; /* the next tick tries again */
	if (store_nrows(res) == 0 || strcmp(store_get(res, 0, 0), a->last_hash) != 0) {
		log_msg(
		    LOG_ERROR,
		    "evt=audit.rewritten anchored_event=%lld note=\"the event's hash is not the "
		    "one the daemon signed: the chain up to it was rewritten\"",
		    a->last_id);
		a->reported_id = a->last_id;
	}
	store_clear(res);
}

void anchorer_tick(struct anchorer *a, struct store *db, bool force)
{
	char lq[512];
	struct store_res *res;
	long long head;
	char err[256], *line;
	int64_t now = deadline_now_ms();

	if (a == NULL || db == NULL)
		return;
	/* The head of the chain: the newest sealed event, by chain position. */
	res = store_exec(db,
	                 "SELECT seq, hash FROM airlock.execution_events WHERE seq IS NOT NULL "
	                 "ORDER BY seq DESC LIMIT 1",
	                 0, NULL);
	if (res == NULL) {
		log_msg(LOG_WARN, "evt=audit.head_failed error=%s",
		        log_quote(store_errmsg(db), lq, sizeof(lq)));
		return;
	}
	if (store_nrows(res) == 0) {
		store_clear(res);
		return;
	}
	head = strtoll(store_get(res, 0, 0), NULL, 10);
	check_continuity(a, db, head);
	if (head == a->last_id || (!force && !a->failing && head - a->last_id < a->every_events &&
	                           (head < a->last_id || now - a->last_ms < a->every_ms))) {
		store_clear(res);
		return;
	}
	line = anchor_sign(a->key, head, store_get(res, 0, 1), time(NULL), err, sizeof(err));
	if (line == NULL) {
		log_msg(LOG_ERROR, "evt=audit.anchor_failed error=%s",
		        log_quote(err, lq, sizeof(lq)));
	} else if (append(a, line, err, sizeof(err)) < 0) {
		failed(a, err, now);
	} else {
		recovered(a);
		a->last_id = head;
		snprintf(a->last_hash, sizeof(a->last_hash), "%s", store_get(res, 0, 1));
		a->last_ms = now;
		if (a->syslog) {
			line[strlen(line) - 1] = '\0'; /* the newline */
			syslogline_send(line);
		}
		log_msg(LOG_DEBUG, "evt=audit.anchored event=%lld", head);
	}
	free(line);
	store_clear(res);
}
