/* secrets.c -- reading secret material is not an observation.
 *
 * The policy's `secrets:` list names files whose content an operator must
 * see being read (shadow files, private keys, keyrings, credentials,
 * /proc/PID/environ).  Every argument of a command, the values of its
 * options and its input redirections are checked against it; a hit is at
 * least config_mutation with the reason "reads secret material". */
#include "classifier/secrets.h"

#include "classifier/arena.h"

#include <fnmatch.h>
#include <stdint.h>
#include <string.h>

/* Could the glob p name something below directory pat[0..pl) (which ends
 * in '/')?  Its directory part, as a pattern, matches the directory. */
static bool glob_under(const char *p, const char *pat, size_t pl)
{
	const char *slash = strrchr(p, '/');
	char dir[512], want[512];
	size_t dl = slash ? (size_t)(slash - p) : 0;

	if (dl == 0 || dl >= sizeof(dir) || pl >= sizeof(want))
		return false;
	memcpy(dir, p, dl);
	dir[dl] = '\0';
	memcpy(want, pat, pl - 1);
	want[pl - 1] = '\0';
	return fnmatch(dir, want, 0) == 0;
}

/* Does the absolute path p (a glob when glob) name secret material? */
static bool secret_hit(const struct policy *pol, const char *p, bool glob)
{
	const char *base = strrchr(p, '/');

	uint64_t tri[16] = {0};

	base = base ? base + 1 : p;
	/* which 3-byte runs the path holds: a pattern whose literal starts with a
	 * run the path lacks cannot match it (skips almost every fnmatch) */
	for (const char *q = p; q[0] && q[1] && q[2]; q++) {
		unsigned short h = policy_tri_hash(q);

		tri[h >> 6] |= (uint64_t)1 << (h & 63);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < pol->secrets.n; i++) {
			const char *pat = pol->secrets.v[i];
			size_t pl;
			bool hit, both;

			if ((pat[0] == '!') != (pass == 0))
				continue;
			/* a path the pattern matches holds its literal part */
			if (!(glob && pass == 1) && pol->secret_tri[i] != 0xffff &&
			    !(tri[pol->secret_tri[i] >> 6] &
			      ((uint64_t)1 << (pol->secret_tri[i] & 63))))
				continue;
			if (!(glob && pass == 1) && pol->secret_lits[i][0] != '\0' &&
			    strstr(pat[0] == '/' || (pat[0] == '!' && pat[1] == '/') ? p : base,
			           pol->secret_lits[i]) == NULL)
				continue;
			if (pat[0] == '!')
				pat++;
			pl = strlen(pat);
			/* a glob word may name the pattern too (cat /etc/sha*); an
			 * exception holds only for the word itself */
			both = glob && pass == 1;
			if (pat[0] != '/')
				/* a bare * names every file: only a glob with some known
				 * letters of the name (id_*) is taken as naming a key */
				hit =
				    fnmatch(pat, base, 0) == 0 ||
				    (both && strcmp(base, "*") != 0 && fnmatch(base, pat, 0) == 0);
			else if (pat[pl - 1] == '/')
				hit = (strncmp(p, pat, pl) == 0 && p[pl] != '\0') ||
				      (both && glob_under(p, pat, pl));
			else
				hit = fnmatch(pat, p, 0) == 0 || (both && fnmatch(p, pat, 0) == 0);
			if (hit && pass == 0)
				return false; /* an exception: ssh_host_rsa_key.pub */
			if (hit)
				return true;
		}
	}
	return false;
}

/* Programs that look at a file's name or metadata, never its content. */
static bool metadata_only(const char *name)
{
	if (strchr("lsdtr[bnfgep", name[0]) == NULL)
		return false;
	static const char *const progs[] = {
	    "ls",       "stat",  "du",      "test",   "[",    "readlink", "realpath", "dirname",
	    "basename", "namei", "getfacl", "lsattr", "find", "echo",     "printf"};

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		if (strcmp(progs[i], name) == 0)
			return true;
	return false;
}

void secrets_read(struct judge *j, struct judge_seg *s, const struct sh_word *w, enum target_type t)
{
	const char *text = w->text;
	size_t len = judge_lit(w) ? w->len : w->prefix;
	const char *path = NULL;
	bool glob = (w->flags & SHW_GLOB) != 0 || !judge_lit(w);

	if (j->p->secrets.n == 0 || len == 0)
		return;
	if ((w->flags & SHW_TILDE) && (len == 1 || text[1] == '/'))
		path = judge_joinpath(j, j->p->home, text + 1, len - 1);
	else if (text[0] == '/')
		path = judge_normpath(j, text, len);
	else if (!(w->flags & SHW_TILDE) && !j->cwd_unknown && j->ncwd > 1) {
		/* relative: every directory a cd may have reached */
		for (size_t i = 1; i < j->ncwd; i++) {
			struct sh_word abs = *w;
			const char *pth = judge_joinpath(j, j->cwd[i], text, len);

			if (pth == NULL)
				return;
			abs.text = abs.raw = pth;
			abs.len = abs.raw_len = strlen(pth);
			abs.prefix = abs.len; /* only the known part was joined */
			abs.flags &= ~(unsigned)SHW_TILDE;
			secrets_read(j, s, &abs, t);
		}
		path = judge_joinpath(j, j->cwd[0], text, len);
	} else if (!(w->flags & SHW_TILDE)) {
		path = judge_joinpath(j, j->cwd_unknown ? "/" : j->cwd[0], text, len);
	}
	if (path == NULL) {
		/* the scratch arena is full: what is read cannot be told */
		judge_reason(j, s, "secret-read", "reads a path the command is too large to spell",
		             RISK_CONFIG_MUTATION, t);
		return;
	}
	if (!judge_lit(w)) {
		/* /etc/pve/priv/$x: the known part, as a glob */
		char *g = arena_alloc(j->a, strlen(path) + 2);

		if (g == NULL) {
			judge_reason(j, s, "secret-read",
			             "reads a path the command is too large to spell",
			             RISK_CONFIG_MUTATION, t);
			return;
		}
		memcpy(g, path, strlen(path));
		memcpy(g + strlen(path), "*", 2);
		path = g;
	}
	if (secret_hit(j->p, path, glob))
		judge_reason(
		    j, s, "secret-read",
		    judge_fmt(j, "reads secret material: %.*s", (int)(len > 100 ? 100 : len), text),
		    RISK_CONFIG_MUTATION, t);
}

/* Every argument that names secret material (an option's value too:
 * --key=/etc/ssh/ssh_host_rsa_key). */
/* The part of w from byte off on, judged as a read (an option's value, a
 * file:// URL's path). */
static void read_part(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t off,
                      enum target_type t)
{
	struct sh_word v = *w;

	v.text += off;
	v.len -= off;
	v.prefix = v.prefix >= off ? v.prefix - off : 0;
	v.flags &= ~(unsigned)SHW_TILDE;
	if (v.len > 0 && v.text[0] == '~')
		v.flags |= SHW_TILDE;
	secrets_read(j, s, &v, t);
}

static bool path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '/' || c == '.' || c == '_' || c == '-' || c == '~' || c == '*' || c == '?';
}

/* A word known only at run time may still spell a path in its source
 * (cat $(echo /etc/shadow)): the absolute paths written in it are judged. */
static void read_spelled(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                         enum target_type t)
{
	for (size_t i = 0; i < w->raw_len;) {
		size_t st;

		while (i < w->raw_len && !path_char(w->raw[i]))
			i++;
		st = i;
		while (i < w->raw_len && path_char(w->raw[i]))
			i++;
		if (i - st > 1 &&
		    (w->raw[st] == '/' || (w->raw[st] == '~' && w->raw[st + 1] == '/'))) {
			struct sh_word v = {.text = w->raw + st,
			                    .len = i - st,
			                    .prefix = i - st,
			                    .raw = w->raw + st,
			                    .raw_len = i - st};

			if (w->raw[st] == '~')
				v.flags |= SHW_TILDE;
			if (memchr(v.text, '*', v.len) || memchr(v.text, '?', v.len))
				v.flags |= SHW_GLOB;
			secrets_read(j, s, &v, t);
		}
	}
}

void secrets_args(struct judge *j, struct judge_seg *s, const char *name,
                  const struct judge_argv *av, enum target_type t)
{
	bool meta = metadata_only(name);

	if (j->p->secrets.n == 0)
		return;
	for (size_t i = 0; i < av->n; i++) {
		const struct sh_word *w = &av->w[i];
		const char *eq;

		if (!meta && !judge_lit(w) && w->prefix == 0)
			read_spelled(j, s, w, t);
		if (w->len == 0 || (meta && w->text[0] != '-'))
			continue; /* ls /etc/shadow looks at a name; du --files0-from= reads */
		if (w->text[0] == '-' && (eq = memchr(w->text, '=', w->prefix)) != NULL) {
			read_part(j, s, w, (size_t)(eq + 1 - w->text), t);
			continue;
		}
		if (w->text[0] == '-')
			continue;
		if (w->prefix >= 8 && memcmp(w->text, "file:///", 8) == 0) {
			read_part(j, s, w, 7, t); /* curl file:///etc/shadow */
			continue;
		}
		if (memmem(w->text, w->prefix, "://", 3) != NULL)
			continue; /* a URL names no local file */
		secrets_read(j, s, w, t);
		/* dd if=/etc/shadow, key=value words naming a path */
		eq = memchr(w->text, '=', w->prefix);
		if (eq != NULL && eq + 1 < w->text + w->len &&
		    (eq[1] == '/' || eq[1] == '~' ||
		     (eq - w->text <= 8 && strcmp(name, "dd") == 0)))
			read_part(j, s, w, (size_t)(eq + 1 - w->text), t);
	}
}
