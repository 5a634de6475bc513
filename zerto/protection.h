/* protection.h -- the approval screen's question: does Zerto protect this VM,
 * and could the guard tag it now?  Cheap: GET /v1/localsite and GET /v1/vms. */
#ifndef AIRLOCK_ZERTO_PROTECTION_H
#define AIRLOCK_ZERTO_PROTECTION_H

#include "zerto/client.h"

enum zerto_protection_state {
	ZERTO_PROT_PROTECTED,     /* in n VPGs (ntaggable of which can be tagged now) */
	ZERTO_PROT_NOT_PROTECTED, /* Zerto does not protect it: no rewind point possible */
	ZERTO_PROT_AMBIGUOUS,     /* the name matches several Zerto VMs */
	ZERTO_PROT_UNREACHABLE,   /* the ZVM did not answer (or refused us) */
};

struct zerto_protection {
	enum zerto_protection_state state;
	int nvpgs;
	int ntaggable;
	char summary[512]; /* one line for the approval screen */
};

/* The cheap question for the approval screen: one GET /v1/localsite and one
 * GET /v1/vms.  Returns 0, or -1 when state is UNREACHABLE. */
int zerto_protection(struct zerto_client *c, const char *vm_id, const char *vm_name,
                     struct zerto_protection *out);
/* "protected", "not_protected", "ambiguous", "unreachable". */
const char *zerto_protection_state_str(enum zerto_protection_state s);

#endif
