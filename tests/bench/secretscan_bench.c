/* secretscan_bench.c -- the scanner's cost on the worker's path: time per MiB
 * of harmless output (what nearly every command prints), of output that ends
 * in a secret, and of inputs built to make every check look as far as it may;
 * against the time to copy the same bytes once (memcpy), the least any
 * recording of them costs.
 *
 *   secretscan_bench [MiB] [ROUNDS] */
#include "lib/secretscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Fills buf with copies of unit; returns the length. */
static size_t fill(char *buf, size_t len, const char *unit)
{
	size_t k = strlen(unit), n = 0;

	while (n + k <= len) {
		memcpy(buf + n, unit, k);
		n += k;
	}
	return n;
}

static const char harmless[] =
    "Jan 01 12:00:00 hubris sshd[812]: Accepted publickey for root from 192.0.2.10 port 50022 "
    "ssh2: ED25519 SHA256:q5HB1ZRVwZxZVNgqo3oQ8yP2t3jYbC9sJpE0F4C6r5w\n"
    "root         1  0.0  0.1 168404 12776 ?        Ss   Jan01   0:07 /sbin/init\n"
    "-rw-r--r-- 1 root root  1234 Jan  1 12:00 /etc/pve/storage.cfg\n"
    "{\"id\":\"qemu/"
    "101\",\"node\":\"hubris\",\"type\":\"qemu\",\"vmid\":101,\"status\":\"running\","
    "\"maxmem\":2147483648,\"uptime\":86400}\n"
    "smbios1: uuid=6f1e0c8a-2b7d-4c3e-9f10-1a2b3c4d5e6f\nPATH=/usr/sbin:/usr/bin\nPWD=/root\n"
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  /usr/bin/ls\n";

static void measure(const char *name, const char *buf, size_t len, int rounds, double copy_ms)
{
	double *t = malloc(sizeof(double) * (size_t)rounds);
	struct secretscan_match m;
	int found = 0;
	char *dst = malloc(len);

	for (int r = 0; r < rounds; r++) {
		double t0 = now_ms();
		found = secretscan_find(buf, len, false, &m);
		t[r] = now_ms() - t0;
	}
	qsort(t, (size_t)rounds, sizeof(double), cmp_double);
	double mib = (double)len / (1 << 20);
	printf("secretscan: %-34s %6.2f MiB: median %7.3f ms (%7.3f ms/MiB, %6.0f MiB/s), "
	       "max %7.3f ms, memcpy x%.1f, %s\n",
	       name, mib, t[rounds / 2], t[rounds / 2] / mib, mib / (t[rounds / 2] / 1e3),
	       t[rounds - 1], copy_ms > 0 ? t[rounds / 2] / copy_ms : 0.0,
	       found ? secretscan_kind_name(m.kind) : "nothing held");
	free(t);
	free(dst);
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 1;
	int rounds = argc > 2 ? atoi(argv[2]) : 50;
	size_t len = mib << 20;
	char *buf = malloc(len + 1), *dst = malloc(len + 1);
	static const char *const adversarial[] = {
	    "$6$",
	    "$2b$12$",
	    ":",
	    "=",
	    "eyJ",
	    "-----BEGIN ",
	    "LS0tLS1CRUdJTi",
	    "password=",
	    "PVEAPIToken a!",
	    "://a:",
	    "SCRAM-SHA-256$1:",
	    "\"password\":\"",
	    "::a:",
	    "a:1:",
	    "otpauth://",
	    "Bearer x",
	};
	size_t n;
	double copy;

	if (buf == NULL || dst == NULL || rounds < 1)
		return 2;
	n = fill(buf, len, harmless);
	double t0 = now_ms();
	for (int r = 0; r < rounds; r++) {
		memcpy(dst, buf, n);
		__asm__ __volatile__("" : : "r"(dst) : "memory");
	}
	copy = (now_ms() - t0) / rounds;
	printf("secretscan: memcpy of %zu MiB: %.3f ms\n", mib, copy);
	/* What an observation usually prints: a few KiB.  Timed as a batch of
	 * calls, each far below the clock's resolution alone. */
	{
		size_t small = n < 4096 ? n : 4096;
		struct secretscan_match m;
		int k = 2000, found = 0;
		double t1 = now_ms();
		for (int i = 0; i < k; i++)
			found += secretscan_find(buf, small, false, &m);
		printf("secretscan: %-34s %6zu B:   mean %7.2f us per output, %s\n",
		       "a typical observation's output", small, (now_ms() - t1) * 1e3 / k,
		       found ? "held" : "nothing held");
	}
	measure("harmless output", buf, n, rounds, copy);
	memcpy(buf + n - 64, "\nAKIAABCDEFGHIJKLMNOP in the last line\n", 39);
	measure("a secret in the last line", buf, n, rounds, copy);
	for (size_t i = 0; i < sizeof(adversarial) / sizeof(adversarial[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "adversarial \"%s\"...", adversarial[i]);
		n = fill(buf, len, adversarial[i]);
		measure(name, buf, n, rounds > 10 ? 10 : rounds, copy);
	}
	free(buf);
	free(dst);
	return 0;
}
