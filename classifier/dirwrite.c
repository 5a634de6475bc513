/* dirwrite.c -- programs that write files they do not name below a
 * directory: archive extraction (tar -x, unzip, 7z x, ar x), downloads saved
 * under the URL's name or names a site chooses (wget, curl -O/-J), and git
 * subcommands that rewrite a work tree.  Each judges the file it will write,
 * or every path rule below the directory (judge_write_tree). */
#include "classifier/dirwrite.h"

#include "classifier/arena.h"

#include <stdbool.h>
#include <string.h>

/* tar x writes the archive's members below the directory it extracts into
 * (-C DIR, else the working directory): they may land on any path below it,
 * ~/.bashrc and ~/.ssh/ included, or anywhere with -P. */
void dirwrite_tar(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                  enum target_type t)
{
	bool extract = false, absolute = false;
	const struct sh_word *dir = NULL;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];

		if (!judge_lit(a))
			continue;
		if (judge_weq(a, "--extract") || judge_weq(a, "--get"))
			extract = true;
		else if (judge_weq(a, "-P") || judge_weq(a, "--absolute-names"))
			absolute = true;
		else if ((judge_weq(a, "-C") || judge_weq(a, "--directory")) && i + 1 < n)
			dir = &w[++i];
		else if (a->len > 12 && memcmp(a->text, "--directory=", 12) == 0)
			dir = NULL, absolute = absolute || a->text[12] == '\0';
		else if (a->len > 1 && a->text[0] == '-' && a->text[1] != '-') {
			extract = extract || memchr(a->text, 'x', a->len) != NULL;
			absolute = absolute || memchr(a->text, 'P', a->len) != NULL;
		} else if (i == 1 && a->len > 0 && a->text[0] != '-') {
			/* tar xzf x.tgz: the old style's first word is the options */
			extract = memchr(a->text, 'x', a->len) != NULL;
			absolute = memchr(a->text, 'P', a->len) != NULL;
		}
	}
	if (!extract)
		return;
	dirwrite_extract_into(j, s, dir, absolute, t);
}

void dirwrite_extract_into(struct judge *j, struct judge_seg *s, const struct sh_word *dir,
                           bool absolute, enum target_type t)
{
	if (absolute) {
		judge_write_unknown(j, s, "tar -P extracts members to the absolute paths they name",
		                    t);
		return;
	}
	if (dir != NULL) {
		judge_write_tree(j, s, dir, t);
		return;
	}
	judge_write_tree(
	    j, s, &(struct sh_word){.text = ".", .len = 1, .prefix = 1, .raw = ".", .raw_len = 1},
	    t);
}

/* The file name a download of url is saved under: its last path component,
 * without query or fragment ("index.html" when it has none). */
static const char *url_basename(struct judge *j, const struct sh_word *u, size_t *len)
{
	const char *t = u->text, *p = memmem(t, u->len, "://", 3);
	size_t start, end, last;

	if (p == NULL)
		return NULL;
	start = (size_t)(p - t) + 3;
	end = start;
	while (end < u->len && t[end] != '?' && t[end] != '#')
		end++;
	last = end;
	while (last > start && t[last - 1] != '/')
		last--;
	if (last == start || last == end) {
		/* http://host or http://host/dir/: wget saves index.html */
		*len = 10;
		return "index.html";
	}
	*len = end - last;
	return arena_strndup(j->a, t + last, *len);
}

/* wget (and curl -O/-J) save what they fetch in the working directory under
 * a name from the URL, or under names the server or the site's links choose
 * (-r, -m, -x, -p, --content-disposition, curl -J): the file, or every path
 * rule below the directory, is judged as written. */
void dirwrite_download(struct judge *j, struct judge_seg *s, const char *name,
                       const struct sh_word *w, size_t n, enum target_type t)
{
	bool curl = strcmp(name, "curl") == 0, remote_name = false, tree = false;
	static const struct sh_word dot = {
	    .text = ".", .len = 1, .prefix = 1, .raw = ".", .raw_len = 1};

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];
		const char *x = a->text;

		if (!judge_lit(a) || a->len < 2 || x[0] != '-')
			continue;
		if (judge_weq(a, "--"))
			break;
		if (x[1] == '-') {
			/* named output or no file at all: the rules judge these */
			if ((a->len >= 9 && memcmp(x, "--output-", 9) == 0 && !curl) ||
			    (a->len >= 8 && memcmp(x, "--output", 8) == 0 && curl) ||
			    (a->len >= 8 && memcmp(x, "--spider", 8) == 0) ||
			    (a->len >= 12 && memcmp(x, "--directory-", 12) == 0))
				return;
			if (curl && (memcmp(x, "--remote-name", a->len < 13 ? a->len : 13) == 0 &&
			             a->len >= 10))
				remote_name = true;
			if ((!curl && ((a->len >= 5 && memcmp(x, "--rec", 5) == 0) ||
			               (a->len >= 5 && memcmp(x, "--mir", 5) == 0) ||
			               (a->len >= 9 && memcmp(x, "--force-d", 9) == 0) ||
			               (a->len >= 6 && memcmp(x, "--page", 6) == 0) ||
			               (a->len >= 10 && memcmp(x, "--content-", 10) == 0) ||
			               (a->len >= 7 && memcmp(x, "--input", 7) == 0))) ||
			    (curl && a->len >= 15 && memcmp(x, "--remote-header", 15) == 0))
				tree = true;
			continue;
		}
		for (size_t k = 1; k < a->len; k++) {
			char c = x[k];

			if (!curl && (c == 'O' || c == 'P' || c == 'o' || c == 'a'))
				return; /* -O/-P name where; -o/-a are logs, -O follows */
			if (curl && (c == 'o'))
				return;
			if (curl && c == 'O')
				remote_name = true;
			if (curl && c == 'J')
				tree = true;
			if (!curl && (c == 'r' || c == 'm' || c == 'x' || c == 'p' || c == 'i'))
				tree = true;
			if (!curl && strchr("nTtUwlARBe", c) != NULL)
				break; /* the rest of the word is a value */
			if (curl && strchr("wXHAemdubxryYzFKCTDc", c) != NULL)
				break;
		}
	}
	if (curl && !remote_name && !tree)
		return; /* curl writes to stdout */
	if (tree) {
		judge_write_tree(j, s, &dot, t);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		size_t len;
		const char *b;

		if (!judge_lit(&w[i]) || (b = url_basename(j, &w[i], &len)) == NULL)
			continue;
		judge_write(j, s,
		            &(struct sh_word){
		                .text = b, .len = len, .prefix = len, .raw = b, .raw_len = len},
		            t);
	}
}

/* unzip, 7z x/e and ar x extract into the working directory unless told
 * where (unzip -d DIR, 7z -oDIR); listing and testing write nothing. */
void dirwrite_unpack(struct judge *j, struct judge_seg *s, const char *name,
                     const struct sh_word *w, size_t n, enum target_type t)
{
	bool seven = strcmp(name, "7z") == 0 || strcmp(name, "7za") == 0;
	bool ar = strcmp(name, "ar") == 0;
	const struct sh_word *dir = NULL;
	size_t ops = 0;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];

		if (!judge_lit(a))
			continue;
		if (!seven && !ar &&
		    (judge_weq(a, "-l") || judge_weq(a, "-t") || judge_weq(a, "-v") ||
		     judge_weq(a, "-p") || judge_weq(a, "-c") || judge_weq(a, "-z") ||
		     judge_weq(a, "-Z") || judge_weq(a, "-Z1")))
			return; /* unzip lists, tests or prints */
		if (!seven && !ar && judge_weq(a, "-d")) {
			dir = i + 1 < n ? &w[++i] : NULL; /* unzip -d DIR: members below DIR */
			continue;
		}
		if (seven && a->len > 2 && memcmp(a->text, "-o", 2) == 0) {
			struct sh_word *v = arena_alloc(j->a, sizeof(*v));

			if (v == NULL)
				return;
			*v = *a; /* 7z -oDIR */
			v->text += 2;
			v->len -= 2;
			v->prefix = v->len;
			v->flags &= ~(unsigned)SHW_TILDE;
			dir = v;
			continue;
		}
		if (a->len > 0 && a->text[0] == '-')
			continue;
		ops++;
		if ((seven || ar) && ops == 1) {
			/* the command letter: 7z x/e, ar x extract; anything else does not */
			bool x = seven ? (judge_weq(a, "x") || judge_weq(a, "e"))
			               : memchr(a->text, 'x', a->len) != NULL;

			if (!x)
				return;
		}
	}
	dirwrite_extract_into(j, s, dir, false, t);
}

/* cpio -i extracts below the working directory (-D DIR), or at the absolute
 * names the archive holds unless --no-absolute-filenames; cpio -p copies
 * below its destination directory.  unrar x/e extracts into the working
 * directory or the destination operand (ending in /). */
void dirwrite_cpio_unrar(struct judge *j, struct judge_seg *s, const char *name,
                         const struct sh_word *w, size_t n, enum target_type t)
{
	static const struct sh_word dot = {
	    .text = ".", .len = 1, .prefix = 1, .raw = ".", .raw_len = 1};
	const struct sh_word *dir = NULL, *last = NULL;
	bool in = false, pass = false, relative = false, extract = false;
	size_t ops = 0;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];

		if (!judge_lit(a)) {
			judge_write_unknown(
			    j, s, judge_fmt(j, "%s with words known only at run time", name), t);
			return;
		}
		if (strcmp(name, "unrar") == 0) {
			if (a->len > 0 && a->text[0] == '-')
				continue;
			if (++ops == 1)
				extract = judge_weq(a, "x") || judge_weq(a, "e");
			else if (ops > 2)
				last = a;
			continue;
		}
		if (judge_weq(a, "--no-absolute-filenames")) {
			relative = true;
		} else if (judge_weq(a, "-D") || judge_weq(a, "--directory")) {
			dir = i + 1 < n ? &w[++i] : NULL;
		} else if (a->len > 12 && memcmp(a->text, "--directory=", 12) == 0) {
			struct sh_word *v = arena_alloc(j->a, sizeof(*v));

			if (v == NULL) {
				judge_write_unknown(j, s, "cpio's directory could not be spelled",
				                    t);
				return;
			}
			*v = *a;
			v->text += 12;
			v->len -= 12;
			v->prefix = v->len;
			v->flags &= ~(unsigned)SHW_TILDE;
			dir = v;
		} else if (judge_weq(a, "--extract")) {
			in = true;
		} else if (judge_weq(a, "--pass-through")) {
			pass = true;
		} else if (a->len > 1 && a->text[0] == '-' && a->text[1] != '-') {
			for (size_t k = 1; k < a->len; k++) {
				if (a->text[k] == 'i')
					in = true;
				else if (a->text[k] == 'p')
					pass = true;
				else if (strchr("DFOIEHMRC", a->text[k]) != NULL) {
					if (a->text[k] == 'D')
						dir = k + 1 < a->len
						          ? NULL
						          : (i + 1 < n ? &w[i + 1] : NULL);
					if (k + 1 == a->len)
						i++;
					break;
				}
			}
		} else if (a->len > 0 && a->text[0] != '-') {
			last = a;
		}
	}
	if (strcmp(name, "unrar") == 0) {
		if (!extract)
			return; /* l, t, p: lists, tests, prints */
		if (last != NULL && last->len > 0 && last->text[last->len - 1] == '/')
			judge_write_tree(j, s, last, t);
		else
			judge_write_tree(j, s, &dot, t);
		return;
	}
	if (pass) {
		if (last != NULL)
			judge_write_tree(j, s, last, t);
		else
			judge_write_unknown(j, s, "cpio -p without a destination directory", t);
		return;
	}
	if (!in)
		return; /* -o writes the archive to stdout */
	if (!relative) {
		judge_write_unknown(j, s,
		                    "cpio -i writes members at the absolute paths they name (no "
		                    "--no-absolute-filenames)",
		                    t);
		return;
	}
	judge_write_tree(j, s, dir != NULL ? dir : &dot, t);
}

/* git subcommands that write the work tree (or, for clone and init, a new
 * directory): what they write lies below the repository's directory (-C DIR,
 * else the working directory), so every path rule below it counts. */
void dirwrite_git(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                  enum target_type t)
{
	static const char *const writers[] = {
	    "checkout",  "switch",        "restore",  "reset",       "pull",
	    "merge",     "rebase",        "stash",    "cherry-pick", "revert",
	    "am",        "apply",         "clean",    "rm",          "mv",
	    "clone",     "init",          "worktree", "submodule",   "sparse-checkout",
	    "read-tree", "checkout-index"};
	const struct sh_word *dir = NULL;
	static const struct sh_word dot = {
	    .text = ".", .len = 1, .prefix = 1, .raw = ".", .raw_len = 1};
	size_t i = 1;

	while (i < n && judge_lit(&w[i]) && w[i].len > 1 && w[i].text[0] == '-') {
		const struct sh_word *a = &w[i];

		if (judge_weq(a, "-C") && i + 1 < n) {
			dir = &w[i + 1]; /* several -C: relative to each other; the last decides */
			i += 2;
			continue;
		}
		if (judge_weq(a, "-c") && i + 1 < n) {
			i += 2;
			continue;
		}
		if ((a->len > 11 && memcmp(a->text, "--work-tree", 11) == 0) ||
		    (a->len > 9 && memcmp(a->text, "--git-dir", 9) == 0)) {
			judge_write_unknown(
			    j, s, "git with a work tree or repository named elsewhere", t);
			return;
		}
		i++;
	}
	if (i >= n || !judge_lit(&w[i]))
		return;
	for (size_t k = 0; k < sizeof(writers) / sizeof(writers[0]); k++) {
		if (!judge_weq(&w[i], writers[k]))
			continue;
		if (strcmp(writers[k], "clone") == 0 || strcmp(writers[k], "init") == 0) {
			/* the last operand names the new directory, else it is made here */
			const struct sh_word *last = NULL;
			size_t ops = 0;

			for (size_t m = i + 1; m < n; m++)
				if (!(w[m].len > 0 && w[m].text[0] == '-' && judge_lit(&w[m]))) {
					last = &w[m];
					ops++;
				}
			if (ops >= (strcmp(writers[k], "clone") == 0 ? 2u : 1u) && last != NULL &&
			    dir == NULL) {
				judge_write_tree(j, s, last, t);
				return;
			}
		}
		judge_write_tree(j, s, dir ? dir : &dot, t);
		return;
	}
}
