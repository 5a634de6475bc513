/* sqlstate.h -- the SQLSTATEs airlock acts on, by name.
 *
 * AL001..AL016 and AL020..AL022 are raised by airlock's own SQL functions (the SQL API's
 * table of errors says what each means to a caller); the others are
 * PostgreSQL's.  Compare with sqlstate_is() or sqlstate_in_class(). */
#ifndef AIRLOCK_SQLSTATE_H
#define AIRLOCK_SQLSTATE_H

#include <stdbool.h>

#define SQLSTATE_UNKNOWN_ENTITY      "AL001" /* unknown target or entity */
#define SQLSTATE_INVALID_ARGUMENT    "AL002" /* empty, oversized or malformed argument */
#define SQLSTATE_AGENT_NOT_RUNNING   "AL003" /* pre-flight: the VM's guest agent is down */
#define SQLSTATE_CT_NOT_RUNNING      "AL004" /* pre-flight: the container is stopped */
#define SQLSTATE_ILLEGAL_TRANSITION  "AL005" /* the row's state does not allow it */
#define SQLSTATE_SELF_APPROVAL       "AL006" /* nobody decides their own request */
#define SQLSTATE_NOT_FOUND           "AL007" /* no such execution, or not the caller's */
#define SQLSTATE_APPROVAL_IMPOSSIBLE "AL008" /* unclassified, or the approval lapsed */
#define SQLSTATE_NOT_AN_APPROVER     "AL009" /* the caller may not decide approvals */
#define SQLSTATE_FLOOD_LIMIT         "AL010" /* over a limit of the gate policy */
#define SQLSTATE_TARGET_GONE         "AL016" /* the guest is gone from the cluster */
#define SQLSTATE_OUT_OF_SCOPE        "AL020" /* outside the agent's scope (gate.yaml) */
#define SQLSTATE_HARD_TO_READ        "AL021" /* approve a hard-to-read command: confirm it */
#define SQLSTATE_ACTION_LINK_INVALID "AL022" /* an action link that cannot decide (now) */
#define SQLSTATE_AIRLOCK_CLASS       "AL"    /* every state airlock raises itself */

#define SQLSTATE_CONNECTION_EXCEPTION_CLASS  "08"    /* the link to the server */
#define SQLSTATE_CONNECTION_DOES_NOT_EXIST   "08003" /* set by airlock: no session yet */
#define SQLSTATE_CONNECTION_FAILURE          "08006" /* set by airlock when a session is gone */
#define SQLSTATE_READ_ONLY_TRANSACTION       "25006" /* a standby, or a demoted primary */
#define SQLSTATE_SERIALIZATION_FAILURE       "40001" /* retry the transaction */
#define SQLSTATE_DEADLOCK_DETECTED           "40P01" /* retry the transaction */
#define SQLSTATE_INSUFFICIENT_PRIVILEGE      "42501" /* the login may not do this */
#define SQLSTATE_UNDEFINED_OBJECT            "42704" /* e.g. a role that does not exist */
#define SQLSTATE_INVALID_SQL_STATEMENT_NAME  "26000" /* no such prepared statement */
#define SQLSTATE_FEATURE_NOT_SUPPORTED       "0A000" /* e.g. a cached plan's result type changed */
#define SQLSTATE_QUERY_CANCELED              "57014" /* statement_timeout, or a cancel */
#define SQLSTATE_OPERATOR_INTERVENTION_CLASS "57P"   /* shutdown, crash, terminated backend */
#define SQLSTATE_LOCK_NOT_AVAILABLE          "55P03" /* lock_timeout, NOWAIT */
#define SQLSTATE_INSUFFICIENT_RESOURCES_CLASS                                                      \
	"53" /* disk full, out of memory, too many connections */
#define SQLSTATE_TRANSACTION_ROLLBACK_CLASS "40" /* serialization failure, deadlock */
#define SQLSTATE_SYSTEM_ERROR_CLASS         "58" /* I/O errors below the server */

/* True when sqlstate is exactly code.  NULL never matches. */
bool sqlstate_is(const char *sqlstate, const char *code);
/* True when sqlstate begins with the class prefix ("08", "57P", "AL"). */
bool sqlstate_in_class(const char *sqlstate, const char *cls);
/* True when the failure says nothing about the statement itself and the
 * same statement may well succeed later: no server answer at all ("" or
 * NULL), a lost connection, a timeout or cancel, a lock or serialization
 * conflict, a read-only server, resources (disk, memory, connections) or an
 * I/O error.  Such a failure never refuses a request: it is retried. */
bool sqlstate_transient(const char *sqlstate);

#endif
