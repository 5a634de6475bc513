/* sidedoornote_test.c -- a side_door notice says which agent host, what it
 * reported and that nothing verified it; the host's own words (its name,
 * the denial's text) reach a chat receiver as text, never as markup or a
 * mention. */
#include "worker/sidedoornote.h"
#include "worker/webhookfmt.h"

#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *str(const cJSON *m, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_counts(void **state)
{
	cJSON *m;

	(void)state;
	m = sidedoor_notice("10.0.0.5", "ci-runner", "hermes", 3, 1, 2, "2026-12-01T10:00:00Z",
	                    "airlock hook: ssh to 10.0.0.11 reaches proxmox-host:pve1");
	assert_string_equal(str(m, "event"), "side_door");
	assert_string_equal(str(m, "entity"), "agent host ci-runner (10.0.0.5)");
	assert_string_equal(str(m, "client_addr"), "10.0.0.5");
	assert_string_equal(str(m, "provenance"), "reported by the agent's host, not verified");
	assert_int_equal(cJSON_GetObjectItem(m, "denials")->valueint, 3);
	assert_string_equal(
	    str(m, "text"),
	    "airlock: side door on agent host ci-runner (10.0.0.5), login hermes: 3 hook "
	    "denial(s), 1 ask(s), 2 side-door check(s) with an open door since the last notice; "
	    "latest: airlock hook: ssh to 10.0.0.11 reaches proxmox-host:pve1 -- reported by the "
	    "agent's host, not verified; see `airlock side-door`.");
	cJSON_Delete(m);

	/* only an open door, a host that gave no name, over the local socket */
	m = sidedoor_notice("local", "", "hermes", 0, 0, 1, "2026-12-01T10:00:00Z", "");
	assert_string_equal(str(m, "entity"), "agent host on a local socket");
	assert_string_equal(str(m, "client_addr"), "");
	assert_string_equal(str(m, "text"),
	                    "airlock: side door on agent host on a local socket, login hermes: 1 "
	                    "side-door check(s) with an open door since the last notice -- "
	                    "reported by the agent's host, not verified; see `airlock side-door`.");
	cJSON_Delete(m);
}

/* The host names itself and writes the denial's text: in a chat format
 * neither becomes a mention or a link. */
static void test_hostile_host(void **state)
{
	cJSON *m = sidedoor_notice("10.0.0.5", "@channel <http://evil|click> <!here>", "hermes", 1,
	                           0, 0, "2026-12-01T10:00:00Z", "[x](http://evil) @here");
	struct config_webhook h = {.name = "h",
	                           .url = "https://hooks.example/T0",
	                           .format = WEBHOOK_SLACK,
	                           .timeout_ms = 1000};
	struct wh_event e = {.event = "side_door", .raw = m};
	struct wh_request r;
	cJSON *b;
	const char *t;

	(void)state;
	/* Slack: a link or a mention needs < >, which arrive escaped */
	webhookfmt_build(&h, &e, "1", 1, &r);
	b = cJSON_Parse(r.body);
	assert_non_null(b);
	t = str(b, "text");
	assert_non_null(t);
	assert_null(strstr(t, "<http"));
	assert_null(strstr(t, "<!here>"));
	assert_non_null(strstr(t, "&lt;http://evil|click&gt;"));
	assert_non_null(strstr(t, "not verified"));
	cJSON_Delete(b);
	wh_request_clear(&r);
	/* Mattermost: @channel and @here mention everyone, [..](..) links */
	h.format = WEBHOOK_MATTERMOST;
	webhookfmt_build(&h, &e, "1", 1, &r);
	b = cJSON_Parse(r.body);
	assert_non_null(b);
	t = str(b, "text");
	assert_non_null(t);
	assert_null(strstr(t, "@channel"));
	assert_null(strstr(t, "@here"));
	assert_null(strstr(t, "[x](http"));
	cJSON_Delete(b);
	wh_request_clear(&r);
	cJSON_Delete(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counts),
	    cmocka_unit_test(test_hostile_host),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
