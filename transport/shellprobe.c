/* shellprobe.c -- which shell a target's commands get, and the targets that
 * have none (see transport.h, "the one shell"). */
#include "transport/transport_int.h"

#include "lib/deadline.h"
#include "lib/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Asked of the one shell itself: its own version (empty in anything but
 * bash), where /bin/bash and /bin/sh lead, and whether it started in POSIX
 * mode.  Builtins and readlink only. */
static const char probe_script[] =
    "printf 'bash=%s\\n' \"$BASH_VERSION\"; "
    "printf 'path=%s\\n' \"$(readlink -f " SHELL_PATH " 2>/dev/null)\"; "
    "if shopt -qo posix; then echo posix=on; else echo posix=off; fi; "
    "printf 'sh=%s\\n' \"$(readlink -f /bin/sh 2>/dev/null)\"";

const char *transport_shell_state_name(enum transport_shell_state s)
{
	static const char *names[] = {"bash", "none", "unknown"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* ---- what is remembered ---------------------------------------------------- */

static char *memo_key(const struct transport_node *node, enum target_type type, int vmid)
{
	return xasprintf("%s\n%d\n%d", node->name, (int)type,
	                 type == TARGET_PROXMOX_HOST ? 0 : vmid);
}

/* Remembers (why != NULL) or forgets (NULL) that the target has no bash. */
static void memo_set(struct transport *t, const struct transport_node *node, enum target_type type,
                     int vmid, const char *why)
{
	char *key = memo_key(node, type, vmid);
	struct shell_memo **at, *m = NULL;

	pthread_mutex_lock(&t->mu);
	for (at = &t->no_bash; *at; at = &(*at)->next)
		if (strcmp((*at)->key, key) == 0)
			break;
	if (why == NULL && *at != NULL) {
		m = *at;
		*at = m->next;
	} else if (why != NULL) {
		if (*at == NULL) {
			*at = xcalloc(1, sizeof(**at));
			(*at)->key = key;
			key = NULL;
		}
		transport_set_text((*at)->why, sizeof((*at)->why), why);
	}
	pthread_mutex_unlock(&t->mu);
	if (m != NULL) {
		free(m->key);
		free(m);
	}
	free(key);
}

void transport_shell_forget(struct transport *t)
{
	while (t->no_bash != NULL) {
		struct shell_memo *m = t->no_bash;
		t->no_bash = m->next;
		free(m->key);
		free(m);
	}
}

static void target_words(const struct transport_node *node, enum target_type type, int vmid,
                         char *out, size_t outlen)
{
	if (type == TARGET_VM)
		snprintf(out, outlen, "VM %d on node %s", vmid, node->name);
	else if (type == TARGET_LXC)
		snprintf(out, outlen, "container %d on node %s", vmid, node->name);
	else
		snprintf(out, outlen, "node %s", node->name);
}

int transport_shell_refused(struct transport *t, const struct transport_node *node,
                            enum target_type type, int vmid, char *why, size_t whylen)
{
	char *key = memo_key(node, type, vmid), found[sizeof(t->no_bash->why)] = "", where[160];
	bool none = false;

	pthread_mutex_lock(&t->mu);
	for (const struct shell_memo *m = t->no_bash; m; m = m->next)
		if (strcmp(m->key, key) == 0) {
			memcpy(found, m->why, sizeof(found));
			none = true;
			break;
		}
	pthread_mutex_unlock(&t->mu);
	free(key);
	if (!none)
		return 0;
	target_words(node, type, vmid, where, sizeof(where));
	/* Fits a result's errmsg (512 bytes) with the longest node name. */
	snprintf(why, whylen,
	         "%.80s has no bash: %.180s. airlock runs every command under " SHELL_PATH
	         ", the shell its classifier judges, so nothing was sent. Install bash there "
	         "(apt-get install bash; Alpine: apk add bash); commands run once the next "
	         "probe finds it",
	         where, found);
	return -1;
}

/* ---- the probe --------------------------------------------------------------- */

/* The value of "key=" at the start of a line of out, into dst. */
static void out_value(const char *out, const char *key, char *dst, size_t dstlen)
{
	size_t kl = strlen(key);

	dst[0] = '\0';
	for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			const char *v = p + kl + 1;
			size_t n = strcspn(v, "\n");
			if (n >= dstlen)
				n = dstlen - 1;
			memcpy(dst, v, n);
			dst[n] = '\0';
			return;
		}
	}
}

/* The first line of s, printable bytes only. */
static void first_line(const char *s, char *dst, size_t dstlen)
{
	size_t i = 0;

	for (; s && *s && *s != '\n' && i + 1 < dstlen; s++)
		dst[i++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	dst[i] = '\0';
}

/* Where /bin/sh leads, asked without any shell: readlink, started by env. */
static void probe_sh(struct transport *t, const struct transport_node *node, enum target_type type,
                     int vmid, int timeout_ms, char *sh, size_t shlen)
{
	struct transport_result r;
	char tag[SHELL_TAG_MAX];
	char *prog = xasprintf(SHELL_ENV_PROGRAM " -i %s readlink -f /bin/sh", shell_env[0]);

	memset(&r, 0, sizeof(r));
	r.exit_code = -1;
	transport_new_tag(t, tag);
	transport_run_prog(t, node, type, vmid, prog, tag, deadline_now_ms() + timeout_ms, 4096,
	                   NULL, false, &r);
	sh[0] = '\0';
	if (r.status == TRANSPORT_EXITED && r.exit_code == 0 && r.out && r.out[0] == '/')
		first_line(r.out, sh, shlen);
	transport_result_free(&r);
	free(prog);
}

int transport_shell_probe(struct transport *t, const struct transport_node *node,
                          enum target_type type, int vmid, int timeout_ms,
                          struct transport_shell *out)
{
	struct transport_limits lim = {.timeout_ms = timeout_ms, .output_cap = 4096};
	struct transport_result r;
	char posix[8], line[200], found[300];

	memset(out, 0, sizeof(*out));
	out->state = TRANSPORT_SHELL_UNKNOWN;
	transport_exec_command(t, node, type, vmid, probe_script, &lim, false, &r);
	first_line(r.err, line, sizeof(line));
	found[0] = '\0';
	if (r.status == TRANSPORT_EXITED && r.exit_code == 0) {
		out_value(r.out, "bash", out->bash_version, sizeof(out->bash_version));
		out_value(r.out, "path", out->bash_path, sizeof(out->bash_path));
		out_value(r.out, "posix", posix, sizeof(posix));
		out_value(r.out, "sh", out->sh, sizeof(out->sh));
		if (out->bash_path[0] == '\0')
			snprintf(out->bash_path, sizeof(out->bash_path), SHELL_PATH);
		if (out->bash_version[0] == '\0')
			snprintf(found, sizeof(found),
			         SHELL_PATH " (%.200s) is not GNU bash: it ran the probe without "
			                    "$BASH_VERSION",
			         out->bash_path);
		else if (strcmp(posix, "off") != 0)
			snprintf(found, sizeof(found),
			         SHELL_PATH " (bash %s) starts in POSIX mode, which the classifier "
			                    "does not model",
			         out->bash_version);
		else
			out->state = TRANSPORT_SHELL_BASH;
	} else if (r.status == TRANSPORT_EXITED) {
		/* The line ran, bash did not: env could not start it, or
		 * something else sits at /bin/bash and refused its options. */
		if (r.exit_code == 127 && strstr(r.err, SHELL_ENV_PROGRAM) &&
		    !strstr(r.err, SHELL_PATH))
			snprintf(found, sizeof(found), "no " SHELL_ENV_PROGRAM " (%s)", line);
		else if (r.exit_code == 127)
			snprintf(found, sizeof(found), "no " SHELL_PATH " (%s)", line);
		else if (r.exit_code == 126)
			snprintf(found, sizeof(found), SHELL_PATH " cannot be executed (%s)", line);
		else
			snprintf(found, sizeof(found),
			         SHELL_PATH " is not GNU bash: it refused bash's options (exit %d: "
			                    "%s)",
			         r.exit_code, line);
	} else if (r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_PVE &&
	           strstr(r.errmsg, "Failed to execute child process")) {
		/* The guest agent could not start env itself. */
		snprintf(found, sizeof(found), "no " SHELL_ENV_PROGRAM " (%.200s)", r.errmsg);
	}
	if (out->state == TRANSPORT_SHELL_BASH) {
		snprintf(out->detail, sizeof(out->detail),
		         "bash %.60s at %.120s runs every command (no startup file, fixed "
		         "environment); /bin/sh is %.120s",
		         out->bash_version, out->bash_path, out->sh[0] ? out->sh : "unknown");
		memo_set(t, node, type, vmid, NULL);
	} else if (found[0] != '\0') {
		out->state = TRANSPORT_SHELL_NONE;
		out->bash_version[0] = '\0';
		probe_sh(t, node, type, vmid, timeout_ms, out->sh, sizeof(out->sh));
		snprintf(out->detail, sizeof(out->detail), "%.220s; /bin/sh is %.150s", found,
		         out->sh[0] ? out->sh : "unknown");
		memo_set(t, node, type, vmid, out->detail);
	} else {
		snprintf(out->detail, sizeof(out->detail),
		         "the shell could not be asked: %s%s%.300s",
		         transport_status_name(r.status), r.errmsg[0] ? ": " : "", r.errmsg);
	}
	transport_result_free(&r);
	return out->state == TRANSPORT_SHELL_UNKNOWN ? -1 : 0;
}
