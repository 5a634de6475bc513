/* protection.c -- is this VM protected by Zerto?  The approval screen's question. */
#include "zerto/protection.h"

#include "zerto/api.h"
#include "zerto/policy.h"

#include "lib/buf.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *zerto_protection_state_str(enum zerto_protection_state s)
{
	switch (s) {
	case ZERTO_PROT_PROTECTED:
		return "protected";
	case ZERTO_PROT_NOT_PROTECTED:
		return "not_protected";
	case ZERTO_PROT_AMBIGUOUS:
		return "ambiguous";
	case ZERTO_PROT_UNREACHABLE:
		return "unreachable";
	}
	return "unreachable";
}

/* Each protecting VPG by name with whether it can take a checkpoint now:
 * "VPG web-aws: taggable (MeetingSLA), VPG web-gcp: not taggable now
 * (NotMeetingSLA, Syncing)".  Kept short enough for the summary. */
static void per_vpg(const struct zerto_vm_row *rows, size_t n, struct buf *out)
{
	for (size_t i = 0; i < n; i++) {
		bool ok = zerto_vpg_taggable(rows[i].status, rows[i].substatus);
		if (out->len > 300) {
			buf_printf(out, ", and %zu more", n - i);
			break;
		}
		buf_printf(out, "%sVPG %.60s: ", i ? ", " : "",
		           rows[i].vpg_name && rows[i].vpg_name[0] ? rows[i].vpg_name : "?");
		if (ok)
			buf_printf(out, "taggable (%s)", zerto_vpg_status_name(rows[i].status));
		else
			buf_printf(out, "not taggable now (%s, %s)",
			           zerto_vpg_status_name(rows[i].status),
			           zerto_vpg_substatus_name(rows[i].substatus));
	}
}

int zerto_protection(struct zerto_client *c, const char *vm_id, const char *vm_name,
                     struct zerto_protection *out)
{
	struct zerto_vm_row *rows = NULL;
	struct zerto_err e = {0};
	struct buf ids;
	size_t n = 0;
	const char *vm = vm_name ? vm_name : vm_id ? vm_id : "";

	memset(out, 0, sizeof(*out));
	buf_init(&ids, 0);
	if (zerto_list_vms(c, vm_id, vm_id ? NULL : vm_name, &rows, &n, &e) < 0) {
		out->state = ZERTO_PROT_UNREACHABLE;
		snprintf(
		    out->summary, sizeof(out->summary),
		    "Zerto protection unknown: %.380s. A mutating change will be refused until "
		    "the ZVM answers.",
		    e.msg);
		buf_free(&ids);
		return -1;
	}
	size_t k = zerto_vm_rows_distinct(rows, n, &ids);
	if (n == 0) {
		out->state = ZERTO_PROT_NOT_PROTECTED;
		snprintf(out->summary, sizeof(out->summary),
		         "not protected by Zerto: no rewind point is possible for %s", vm);
	} else if (k > 1) {
		out->state = ZERTO_PROT_AMBIGUOUS;
		snprintf(out->summary, sizeof(out->summary),
		         "ambiguous: '%s' matches %zu Zerto VMs (%s); set the Zerto VM identifier",
		         vm, k, buf_str(&ids));
	} else {
		struct buf per = BUF_INIT;
		out->state = ZERTO_PROT_PROTECTED;
		out->nvpgs = (int)n;
		for (size_t i = 0; i < n; i++)
			out->ntaggable += zerto_vpg_taggable(rows[i].status, rows[i].substatus);
		per_vpg(rows, n, &per);
		snprintf(out->summary, sizeof(out->summary),
		         "protected by %d VPG%s (%d taggable now)%s; %s", out->nvpgs,
		         out->nvpgs == 1 ? "" : "s", out->ntaggable,
		         out->ntaggable < out->nvpgs
		             ? ": a VPG is syncing or not protecting, so the guard will refuse"
		             : ": a rewind point will be made before the change runs",
		         buf_str(&per));
		buf_free(&per);
	}
	zerto_vm_rows_free(rows, n);
	buf_free(&ids);
	return 0;
}
