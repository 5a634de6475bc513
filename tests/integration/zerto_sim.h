/* zerto_sim.h -- the test side of tests/zvmsim: read its env file settings,
 * drive its /_sim/ control plane, build a client for it.  Header-only (static
 * functions) because only the zerto integration programs include it. */
#ifndef AIRLOCK_TESTS_ZERTO_SIM_H
#define AIRLOCK_TESTS_ZERTO_SIM_H

#include "zerto/client.h"

#include "lib/buf.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A required environment variable (written by zvmsimctl); missing is fatal. */
static inline const char *sim_env(const char *name)
{
	const char *v = getenv(name);

	if (v == NULL || v[0] == '\0') {
		fprintf(stderr, "%s not set: run under tests/zvmsim/zvmsimctl run -- ...\n", name);
		exit(2);
	}
	return v;
}

static inline size_t sim_write(char *p, size_t size, size_t n, void *userp)
{
	buf_append(userp, p, size * n);
	return size * n;
}

/* GET/POST/DELETE on the simulator's control plane; the parsed answer (caller
 * deletes) or NULL.  A non-2xx answer is fatal: the test rig is broken. */
static inline cJSON *sim_call(const char *method, const char *path, const char *body)
{
	CURL *h = curl_easy_init();
	struct buf b;
	char *url = NULL;
	long status = 0;
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	cJSON *j = NULL;

	buf_init(&b, 0);
	if (asprintf(&url, "%s%s", sim_env("ZVMSIM_URL"), path) < 0)
		abort();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CAINFO, sim_env("ZVMSIM_CA"));
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 20000L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sim_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	if (strcmp(method, "POST") == 0)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "{}");
	else if (strcmp(method, "GET") != 0)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK || status < 200 || status > 299) {
		fprintf(stderr, "zvmsim %s %s: curl %d, HTTP %ld: %s\n", method, path, (int)rc,
		        status, buf_str(&b));
		exit(2);
	}
	j = cJSON_Parse(buf_str(&b));
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	free(url);
	buf_free(&b);
	return j;
}

static inline void sim_postf(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline void sim_postf(const char *path, const char *fmt, ...)
{
	va_list ap;
	char *body = NULL;

	va_start(ap, fmt);
	if (vasprintf(&body, fmt, ap) < 0)
		abort();
	va_end(ap);
	cJSON_Delete(sim_call("POST", path, body));
	free(body);
}

/* Fresh estate, no faults, no tokens, empty request log, the given scale. */
static inline void sim_reset(double scale)
{
	cJSON_Delete(sim_call("POST", "/_sim/reset", "{}"));
	sim_postf("/_sim/clock", "{\"scale\": %g}", scale);
	cJSON_Delete(sim_call("DELETE", "/_sim/requests", NULL));
}

/* Requests in the log matching method and a path substring (NULL: any) and
 * status (0: any). */
static inline int sim_count(const char *method, const char *path_part, long status)
{
	cJSON *log = sim_call("GET", "/_sim/requests", NULL);
	const cJSON *r;
	int n = 0;

	cJSON_ArrayForEach(r, log)
	{
		const char *m = cJSON_GetObjectItem(r, "method")->valuestring;
		const char *p = cJSON_GetObjectItem(r, "path")->valuestring;
		long st = (long)cJSON_GetObjectItem(r, "status")->valuedouble;

		if (method != NULL && strcmp(m, method) != 0)
			continue;
		if (path_part != NULL && strcasestr(p, path_part) == NULL)
			continue;
		if (status != 0 && st != status)
			continue;
		n++;
	}
	cJSON_Delete(log);
	return n;
}

/* A config for the simulator; secret from its file, CA verified. */
static inline struct zerto_config sim_config(double scale)
{
	struct zerto_config cfg = {0};

	cfg.base_url = sim_env("ZVMSIM_URL");
	cfg.token_url = sim_env("ZVMSIM_TOKEN_URL");
	cfg.client_id = sim_env("ZVMSIM_CLIENT_ID");
	cfg.secret_file = sim_env("ZVMSIM_SECRET_FILE");
	cfg.ca_file = sim_env("ZVMSIM_CA");
	cfg.connect_timeout_ms = 3000;
	cfg.request_timeout_ms = 15000;
	cfg.time_scale = scale;
	return cfg;
}

#endif
