/* recover.h -- the recover_file tool: ask to restore guest files from a
 * rewind point (airlock.recover), always held for an operator. */
#ifndef AIRLOCK_MCP_RECOVER_H
#define AIRLOCK_MCP_RECOVER_H

#include "mcp/tools.h"

void mcp_recover_file(struct store *st, const cJSON *args, struct mcp_call *call);

#endif
