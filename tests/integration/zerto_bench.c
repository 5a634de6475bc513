/* zerto_bench.c -- guard overhead per cadence profile, side by side in one run.
 *
 * Three threads guard three VMs at once, each protected by one VPG of one
 * profile (vSphere 5 s, Azure 60 s, AWS 630 s cadence; tag listed 4 / 35 /
 * 128 s after the insert).  For every guard the simulator says when the tag
 * became listed (real time); we measure when the guard returned.  Printed per
 * profile: rounds, median and worst of
 *   lag   = guard returned - tag listed (ms)
 *   ratio = whole guard time / simulator's insert-to-listed time.
 * Real time (scale 1) unless ZERTO_BENCH_SCALE says otherwise; run under
 * tests/zvmsim/zvmsimctl run (tests/bench/60-zerto.sh does). */
#include "zerto/guard.h"

#include "tests/integration/zerto_sim.h"

#include <math.h>
#include <pthread.h>
#include <time.h>

#define MAX_ROUNDS 64

struct profile {
	const char *name;
	const char *vm;
	int rounds;
	struct zerto_client *c;
	double start[MAX_ROUNDS], end[MAX_ROUNDS];
	char *tag[MAX_ROUNDS];
	int ok;
};

static double now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run_profile(void *p)
{
	struct profile *pr = p;

	for (int i = 0; i < pr->rounds; i++) {
		char change[64];
		struct zerto_guard_result r;

		snprintf(change, sizeof(change), "bench-%s-%d", pr->name, i);
		struct zerto_guard_request req = {.vm_name = pr->vm,
		                                  .agent = "bench",
		                                  .action = "measure guard overhead",
		                                  .change_id = change,
		                                  .now = time(NULL)};
		pr->start[i] = now_real();
		enum zerto_outcome o = zerto_guard_run(pr->c, &req, NULL, &r);
		pr->end[i] = now_real();
		if (o != ZERTO_GUARD_OK) {
			fprintf(stderr, "bench %s round %d: %s\n", pr->name, i, r.message);
		} else {
			pr->tag[i] = r.tag;
			r.tag = NULL;
			pr->ok++;
		}
		zerto_guard_result_clear(&r);
	}
	return NULL;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Prints one profile's line; returns its worst ratio (or +inf on failure). */
static double report(struct profile *pr, const cJSON *tags)
{
	double lag[MAX_ROUNDS], ratio[MAX_ROUNDS], vis[MAX_ROUNDS], total[MAX_ROUNDS];
	int n = 0;

	for (int i = 0; i < pr->rounds; i++) {
		const cJSON *t;

		if (pr->tag[i] == NULL)
			continue;
		cJSON_ArrayForEach(t, tags)
		{
			const cJSON *tg = cJSON_GetObjectItem(t, "tag");
			const cJSON *ins = cJSON_GetObjectItem(t, "inserted_real_unix");
			const cJSON *v = cJSON_GetObjectItem(t, "visible_real_unix");

			if (!cJSON_IsString(tg) || strcmp(tg->valuestring, pr->tag[i]) != 0 ||
			    !cJSON_IsNumber(v))
				continue;
			vis[n] = v->valuedouble - ins->valuedouble;
			total[n] = pr->end[i] - pr->start[i];
			lag[n] = (pr->end[i] - v->valuedouble) * 1000.0;
			ratio[n] = total[n] / vis[n];
			n++;
			break;
		}
	}
	if (n == 0 || pr->ok != pr->rounds) {
		printf("%-8s %3d/%-3d rounds ok: FAILED\n", pr->name, pr->ok, pr->rounds);
		return INFINITY;
	}
	double vmed = median(vis, n), tmed = median(total, n), lmed = median(lag, n),
	       rmed = median(ratio, n);
	double lmax = lag[n - 1], rmax = ratio[n - 1]; /* sorted by median() */
	printf("%-8s %6d %10.2f %10.2f %10.0f %10.0f %10.3f %10.3f\n", pr->name, n, vmed, tmed,
	       lmed, lmax, rmed, rmax);
	return rmax;
}

int main(void)
{
	const char *sc = getenv("ZERTO_BENCH_SCALE");
	double scale = sc ? atof(sc) : 1.0;
	struct profile prof[3] = {
	    {.name = "vsphere", .vm = "bench-vs", .rounds = 10},
	    {.name = "azure", .vm = "bench-az", .rounds = 3},
	    {.name = "aws", .vm = "bench-aw", .rounds = 1},
	};
	pthread_t th[3];
	char err[256];
	double worst = 0;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	sim_reset(scale);
	struct zerto_config cfg = sim_config(scale);
	for (int i = 0; i < 3; i++) {
		prof[i].c = zerto_client_new(&cfg, err, sizeof(err));
		if (prof[i].c == NULL) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		pthread_create(&th[i], NULL, run_profile, &prof[i]);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	cJSON *tags = sim_call("GET", "/_sim/tags", NULL);
	printf("zerto guard overhead (simulator time scale %g; times in real seconds)\n", scale);
	printf("%-8s %6s %10s %10s %10s %10s %10s %10s\n", "profile", "rounds", "visible_s",
	       "guard_s", "lag_ms", "lag_max", "ratio", "ratio_max");
	for (int i = 0; i < 3; i++) {
		double r = report(&prof[i], tags);
		if (r > worst)
			worst = r;
	}
	printf("worst ratio %.3f (aim < 1.15)\n", worst);
	cJSON_Delete(tags);
	for (int i = 0; i < 3; i++) {
		for (int k = 0; k < prof[i].rounds; k++)
			free(prof[i].tag[k]);
		zerto_client_free(prof[i].c);
	}
	return isinf(worst) ? 1 : 0;
}
