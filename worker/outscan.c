/* outscan.c -- the worker's hold decision for one result. */
#include "worker/outscan.h"

#include "lib/xalloc.h"

#include <cjson/cJSON.h>
#include <string.h>

void outscan_result(const char *out, size_t outlen, bool out_truncated, const char *err,
                    size_t errlen, bool err_truncated, const char *error, struct outscan_hold *h)
{
	struct secretscan_match m;
	const struct {
		const char *name, *data;
		size_t len;
		bool truncated;
	} texts[] = {
	    {"stdout", out, out ? outlen : 0, out_truncated},
	    {"stderr", err, err ? errlen : 0, err_truncated},
	    {"error", error, error ? strlen(error) : 0, false},
	};

	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		if (texts[i].len == 0 ||
		    !secretscan_find(texts[i].data, texts[i].len, texts[i].truncated, &m))
			continue;
		if (!h->held) {
			h->held = true;
			h->kind = m.kind;
			h->stream = texts[i].name;
			h->line = m.line;
		}
		if (i == 2)
			h->error_held = true;
	}
}

char *outscan_hold_json(const struct outscan_hold *h)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	cJSON_AddStringToObject(o, "kind", secretscan_kind_name(h->kind));
	cJSON_AddStringToObject(o, "label", secretscan_kind_label(h->kind));
	cJSON_AddStringToObject(o, "stream", h->stream);
	cJSON_AddNumberToObject(o, "line", (double)h->line);
	cJSON_AddBoolToObject(o, "error_held", h->error_held);
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

char *outscan_clean_reason(const char *reason, enum secretscan_kind *kind)
{
	struct secretscan_match m;

	*kind = SECRET_NONE;
	if (reason == NULL)
		return NULL;
	if (!secretscan_find(reason, strlen(reason), false, &m))
		return xstrdup(reason);
	/* Every check starts its match where the secret (or its own marker)
	 * starts: what comes before is the sentence airlock wrote. */
	*kind = m.kind;
	return xasprintf("%.*s[withheld: the rest contained %s]", (int)m.offset, reason,
	                 secretscan_kind_label(m.kind));
}
