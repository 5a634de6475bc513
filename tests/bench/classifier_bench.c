/* classifier_bench.c -- classifications per second, median and p99 per
 * command over a corpus (tests/data/classifier*.tsv lines), and the heap
 * growth across the timed rounds (one verdict reused: expected 0).
 *
 *   classifier_bench POLICY ROUNDS CORPUS... */
#include "classifier/classifier.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cmd {
	enum target_type t;
	char *text;
	size_t len;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (f == NULL)
		return NULL;
	do {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap + 1);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Batch escapes back into bytes, in place. */
static size_t unescape(char *s)
{
	size_t o = 0;

	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '\\' && s[i + 1]) {
			i++;
			s[o++] = s[i] == 'n' ? '\n' : s[i] == 't' ? '\t' : s[i];
		} else {
			s[o++] = s[i];
		}
	}
	s[o] = '\0';
	return o;
}

static size_t load_corpus(const char *path, struct cmd **cmds, size_t n)
{
	size_t len;
	char *text = slurp(path, &len), *line, *save = NULL;

	if (text == NULL) {
		fprintf(stderr, "classifier_bench: cannot read %s\n", path);
		exit(1);
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *t1, *t2;
		enum target_type t;

		if (line[0] == '#' || (t1 = strchr(line, '\t')) == NULL ||
		    (t2 = strchr(t1 + 1, '\t')) == NULL)
			continue;
		*t2 = '\0';
		if (target_type_parse(t1 + 1, &t) != 0)
			continue;
		*cmds = realloc(*cmds, (n + 1) * sizeof(**cmds));
		(*cmds)[n].t = t;
		(*cmds)[n].text = strdup(t2 + 1);
		(*cmds)[n].len = unescape((*cmds)[n].text);
		n++;
	}
	free(text);
	return n;
}

int main(int argc, char **argv)
{
	struct cmd *cmds = NULL;
	size_t n = 0, total;
	int rounds;
	char err[512], *yaml;
	size_t ylen;
	struct policy *p;
	struct classifier *c;
	struct verdict v = VERDICT_INIT;
	double *lat, t0, wall;
	size_t heap_before, heap_after;

	if (argc < 4) {
		fprintf(stderr, "usage: classifier_bench POLICY ROUNDS CORPUS...\n");
		return 2;
	}
	rounds = atoi(argv[2]);
	for (int i = 3; i < argc; i++)
		n = load_corpus(argv[i], &cmds, n);
	yaml = slurp(argv[1], &ylen);
	p = yaml ? policy_parse(yaml, ylen, argv[1], err, sizeof(err)) : NULL;
	if (p == NULL || n == 0 || rounds < 1) {
		fprintf(stderr, "classifier_bench: no policy or corpus (%s)\n",
		        yaml ? err : argv[1]);
		return 1;
	}
	c = classifier_new(p, err, sizeof(err));
	/* warm-up: the verdict's scratch reaches its working size */
	for (size_t i = 0; i < n; i++)
		classifier_classify(c, cmds[i].t, cmds[i].text, cmds[i].len, RISK_READ_ONLY, &v);
	total = n * (size_t)rounds;
	lat = malloc(total * sizeof(*lat));
	heap_before = mallinfo2().uordblks;
	wall = now_ns();
	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < n; i++) {
			t0 = now_ns();
			classifier_classify(c, cmds[i].t, cmds[i].text, cmds[i].len, RISK_READ_ONLY,
			                    &v);
			lat[(size_t)r * n + i] = now_ns() - t0;
		}
	}
	wall = now_ns() - wall;
	heap_after = mallinfo2().uordblks;
	qsort(lat, total, sizeof(*lat), cmp_double);
	printf("classifier: %zu commands x %d rounds = %zu classifications in %.3f s\n", n, rounds,
	       total, wall / 1e9);
	printf("classifier: %.0f classifications/s (one core)\n", (double)total / (wall / 1e9));
	printf("classifier: per command median %.2f us, p90 %.2f us, p99 %.2f us, max %.2f us\n",
	       lat[total / 2] / 1e3, lat[total * 90 / 100] / 1e3, lat[total * 99 / 100] / 1e3,
	       lat[total - 1] / 1e3);
	printf("classifier: heap growth over the timed rounds: %ld bytes\n",
	       (long)heap_after - (long)heap_before);
	free(lat);
	verdict_free(&v);
	classifier_free(c);
	policy_free(p);
	free(yaml);
	for (size_t i = 0; i < n; i++)
		free(cmds[i].text);
	free(cmds);
	return 0;
}
