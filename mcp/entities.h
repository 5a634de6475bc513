/* entities.h -- the inventory tools: attributes, relationships, health, checks, check_tool.
 *
 * Thin doors onto the SQL functions: the database decides what an agent may
 * write (health is scheduler-owned and dropped with a reason); these only
 * shape the answers. */
#ifndef AIRLOCK_MCP_ENTITIES_H
#define AIRLOCK_MCP_ENTITIES_H

#include "mcp/tools.h"

void mcp_entity_update_attributes(struct store *st, const cJSON *args, struct mcp_call *call);
void mcp_entity_create_relationship(struct store *st, const cJSON *args, struct mcp_call *call);
void mcp_entity_get_relations(struct store *st, const cJSON *args, struct mcp_call *call);
void mcp_entity_health_summary(struct store *st, const cJSON *args, struct mcp_call *call);
void mcp_entity_list_checks(struct store *st, const cJSON *args, struct mcp_call *call);
void mcp_entity_check_tool(struct store *st, const cJSON *args, struct mcp_call *call);

#endif
