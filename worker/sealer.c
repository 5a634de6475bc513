/* sealer.c -- seal unsealed audit events into the chain, in batches. */
#include "worker/sealer.h"

#include "lib/log.h"
#include "lib/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

struct sealer {
	bool failing; /* the last batch failed: its error was logged */
	long long sealed;
};

struct sealer *sealer_new(void)
{
	return xcalloc(1, sizeof(struct sealer));
}

void sealer_free(struct sealer *s)
{
	free(s);
}

long long sealer_tick(struct sealer *s, struct store *db, int max_batches)
{
	static const char sql[] = "SELECT airlock.seal_events($1::integer)";
	char lq[512], batch[16];
	long long total = 0;

	snprintf(batch, sizeof(batch), "%d", SEALER_BATCH);
	for (int i = 0; i < max_batches; i++) {
		struct store_res *res = store_exec(db, sql, 1, (const char *const[]){batch});
		long long n;

		if (res == NULL) {
			if (!s->failing)
				log_msg(LOG_ERROR, "evt=audit.seal_failed error=%s",
				        log_quote(store_errmsg(db), lq, sizeof(lq)));
			s->failing = true;
			return -1;
		}
		n = strtoll(store_get(res, 0, 0), NULL, 10);
		store_clear(res);
		if (s->failing)
			log_msg(LOG_INFO, "evt=audit.seal_recovered");
		s->failing = false;
		total += n;
		if (n < SEALER_BATCH)
			break;
	}
	if (total > 0) {
		s->sealed += total;
		log_msg(LOG_DEBUG, "evt=audit.sealed events=%lld total=%lld", total, s->sealed);
	}
	return total;
}
