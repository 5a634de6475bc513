/* chat.h -- what the console checks of a chat's button callback before it
 * believes which chat user pressed it.  Pure. */
#ifndef AIRLOCK_WEB_CHAT_H
#define AIRLOCK_WEB_CHAT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* How far Slack's timestamp may be from now (a replay older than this is
 * refused even with a valid signature). */
#define CHAT_SLACK_SKEW_S 300

/* Whether signature ("v0=<hex>") is Slack's: HMAC-SHA256 under the app's
 * signing secret of "v0:" timestamp ":" body, with timestamp (decimal Unix
 * seconds) within CHAT_SLACK_SKEW_S of now. */
bool chat_slack_verified(const char *secret, size_t secretlen, const char *timestamp,
                         const char *body, size_t bodylen, const char *signature, time_t now);

/* Whether mac is what airlockd put in a Mattermost button's context for
 * token: "sha256=" HMAC-SHA256 under the webhook's secret of "mattermost."
 * token. */
bool chat_mattermost_verified(const char *secret, size_t secretlen, const char *token,
                              const char *mac);

#endif
