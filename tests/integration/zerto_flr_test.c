/* zerto_flr_test.c -- the FLR client against the ZVM simulator: mount, both
 * shapes of the session answer, Windows drive letters and Linux paths mapped
 * into the FLR namespace, the download cap, download URLs off the ZVM
 * refused, unmount.  Run by tests/suites/60-zerto.sh under zvmsimctl. */
#include "zerto/api.h"
#include "zerto/flr.h"
#include "zerto/policy.h"

#include "tests/integration/zerto_sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SCALE 20.0

static const char *fixture =
    "{\"local_site\": {\"name\": \"Site-A\"},"
    " \"peer_sites\": [{\"name\": \"Azure-East\", \"type\": \"Azure\", \"platform\": \"azure\"}],"
    " \"vpgs\": [{\"name\": \"win-local\", \"recovery\": \"Site-A\"},"
    "            {\"name\": \"two-local\", \"recovery\": \"Site-A\"},"
    "            {\"name\": \"lin-local\", \"recovery\": \"Site-A\"},"
    "            {\"name\": \"lin-cloud\", \"recovery\": \"Azure-East\"}],"
    " \"vms\": [{\"name\": \"win01\", \"vpgs\": [\"win-local\"], \"os\": \"windows\"},"
    "          {\"name\": \"two01\", \"vpgs\": [\"two-local\"], \"partitions\": 2},"
    "          {\"name\": \"lin01\", \"vpgs\": [\"lin-local\", \"lin-cloud\"]}]}";

struct env {
	struct zerto_client *c;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	struct zerto_config cfg = sim_config(SCALE);
	char err[256];

	sim_reset(SCALE);
	cJSON_Delete(sim_call("POST", "/_sim/fixture", fixture));
	e->c = zerto_client_new(&cfg, err, sizeof(err));
	assert_non_null(e->c);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	zerto_client_free(e->c);
	free(e);
	return 0;
}

/* The VM's row for vpg_name. */
static struct zerto_vm_row row_for(struct zerto_client *c, const char *vm, const char *vpg_name,
                                   bool *here)
{
	struct zerto_vm_row *rows = NULL, out = {0};
	size_t n = 0;
	struct zerto_err e = {0};

	assert_int_equal(zerto_list_vms(c, NULL, vm, &rows, &n, &e), 0);
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].vpg_name, vpg_name) == 0) {
			*here = rows[i].recovers_here;
			out.vm_id = strdup(rows[i].vm_id);
			out.vpg_id = strdup(rows[i].vpg_id);
		}
	zerto_vm_rows_free(rows, n);
	assert_non_null(out.vm_id);
	return out;
}

/* The latest checkpoint of a VPG. */
static char *latest_cp(struct zerto_client *c, const char *vpg_id)
{
	struct zerto_checkpoint *cps = NULL;
	size_t n = 0;
	struct zerto_err e = {0};
	int64_t now;
	char *id;

	assert_int_equal(zerto_server_time(c, &now, &e), 0);
	assert_int_equal(zerto_list_checkpoints(c, vpg_id, now - 600000, 0, &cps, &n, &e), 0);
	assert_true(n > 0);
	id = strdup(cps[n - 1].id);
	zerto_checkpoints_free(cps, n);
	return id;
}

/* Mounts and waits (bounded) for MountCompletedSuccessfully. */
static char *mount(struct zerto_client *c, const char *vpg, const char *vm, const char *cp)
{
	struct zerto_err e = {0};
	char *sid = NULL;

	assert_int_equal(zerto_flr_mount(c, vpg, vm, cp, &sid, &e), 0);
	for (int i = 0; i < 200; i++) {
		struct zerto_flr_session s;

		assert_int_equal(zerto_flr_get(c, sid, &s, &e), 0);
		bool ready = strcmp(s.status, "MountCompletedSuccessfully") == 0;
		assert_string_equal(s.id, sid);
		zerto_flr_session_clear(&s);
		if (ready)
			return sid;
		usleep(50000);
	}
	fail_msg("the mount did not complete");
	return NULL;
}

static void unmount(struct zerto_client *c, const char *sid, const char *vm)
{
	struct zerto_err e = {0};
	struct zerto_task t;
	char *task = NULL;
	struct zerto_flr_session *ss = NULL;
	size_t n = 0;

	assert_int_equal(zerto_flr_unmount(c, sid, &task, &e), 0);
	for (int i = 0; i < 200; i++) {
		assert_int_equal(zerto_get_task(c, task, &t, &e), 0);
		bool done = zerto_task_terminal(t.state);
		int st = t.state;
		zerto_task_clear(&t);
		if (done) {
			assert_int_equal(st, ZERTO_TASK_COMPLETED);
			break;
		}
		usleep(50000);
	}
	free(task);
	assert_int_equal(zerto_flr_list(c, vm, &ss, &n, &e), 0);
	assert_int_equal(n, 0);
	zerto_flr_sessions_free(ss, n);
}

static void find_ok(struct zerto_client *c, const char *sid, const char *guest, const char *want)
{
	struct zerto_flr_item *it = NULL;
	struct zerto_err e = {0};

	if (zerto_flr_find(c, sid, guest, &it, &e) != 0)
		fail_msg("%s: %s", guest, e.msg);
	assert_string_equal(it->path, want);
	assert_false(it->browsable);
	assert_true(it->size > 0);
	zerto_flr_items_free(it, 1);
}

static void test_windows_drive_letters(void **state)
{
	struct env *env = *state;
	bool here = false;
	struct zerto_vm_row r = row_for(env->c, "win01", "win-local", &here);
	char *cp = latest_cp(env->c, r.vpg_id);
	char *sid = mount(env->c, r.vpg_id, r.vm_id, cp);
	struct zerto_flr_item *it = NULL;
	struct zerto_err e = {0};

	assert_true(here);
	find_ok(env->c, sid, "C:\\Users\\j\\app.conf", "partition#2 NTFS (C:)/Users/j/app.conf");
	find_ok(env->c, sid, "c:/Windows/win.ini", "partition#2 NTFS (C:)/Windows/win.ini");
	/* Partitions name their letters and none is D:, so C:'s copy is not D:'s. */
	assert_int_equal(zerto_flr_find(env->c, sid, "D:\\Users\\j\\app.conf", &it, &e), -1);
	assert_null(it);
	assert_non_null(strstr(e.msg, "no partition is drive D:"));
	assert_non_null(strstr(e.msg, "partition#1 NTFS System Reserved"));
	assert_int_equal(zerto_flr_find(env->c, sid, "C:\\nope.txt", &it, &e), -1);
	unmount(env->c, sid, r.vm_id);
	free(sid);
	free(cp);
	free(r.vm_id);
	free(r.vpg_id);
}

static void test_linux_paths_download_and_cap(void **state)
{
	struct env *env = *state;
	bool here = false;
	struct zerto_vm_row r = row_for(env->c, "lin01", "lin-local", &here);
	char *cp = latest_cp(env->c, r.vpg_id);
	char *sid, *url = NULL;
	struct zerto_flr_item *it = NULL;
	struct zerto_err e = {0};
	char tmpl[] = "/tmp/zerto-flr-test.XXXXXX", head[128];
	int fd = mkstemp(tmpl);
	long long size = 0;

	assert_true(fd >= 0);
	unlink(tmpl);
	/* The session answer as an object (one help page's shape) works too. */
	cJSON_Delete(sim_call("POST", "/_sim/config", "{\"flr_object\": true}"));
	sid = mount(env->c, r.vpg_id, r.vm_id, cp);
	find_ok(env->c, sid, "/etc/nginx/nginx.conf", "partition#1 Ext4/etc/nginx/nginx.conf");
	/* A folder longer than the ZVM's page: every page is read. */
	struct zerto_flr_item *all = NULL;
	size_t nall = 0;
	assert_int_equal(
	    zerto_flr_browse(env->c, sid, "partition#1 Ext4/usr/share/doc", &all, &nall, &e), 0);
	assert_int_equal(nall, 1200);
	assert_string_equal(all[1199].path, "partition#1 Ext4/usr/share/doc/f1199");
	zerto_flr_items_free(all, nall);
	find_ok(env->c, sid, "/usr/share/doc/f1150", "partition#1 Ext4/usr/share/doc/f1150");
	assert_int_equal(zerto_flr_find(env->c, sid, "/var/lib/big.img", &it, &e), 0);
	assert_false(it->downloadable); /* over 1.5 GB: the ZVM says why */
	assert_non_null(strstr(it->why_not, "1.5 GB"));
	zerto_flr_items_free(it, 1);
	assert_int_equal(
	    zerto_flr_download_url(env->c, sid, "partition#1 Ext4/etc/nginx/nginx.conf", &url, &e),
	    0);
	/* Over the cap: refused, and no more than the cap was kept. */
	assert_int_equal(zerto_client_download(env->c, url, 1000, fd, &size, &e), -1);
	assert_non_null(strstr(e.msg, "larger than the 1000-byte cap"));
	assert_true(lseek(fd, 0, SEEK_END) <= 1000);
	/* Within it: every byte, from the start of the file. */
	assert_int_equal(zerto_client_download(env->c, url, 5000, fd, &size, &e), 0);
	assert_int_equal(size, 2412);
	assert_int_equal(lseek(fd, 0, SEEK_END), 2412);
	assert_int_equal(pread(fd, head, 12, 0), 12);
	assert_memory_equal(head, "# lin01 at c", 12);
	/* A URL off the ZVM never gets the token. */
	int before = sim_count(NULL, NULL, 0);
	assert_int_equal(
	    zerto_client_download(env->c, "https://example.invalid/x", 5000, fd, &size, &e), -1);
	assert_non_null(strstr(e.msg, "not on the ZVM"));
	assert_int_equal(zerto_client_download(env->c, "http://127.0.0.1/x", 5000, fd, &size, &e),
	                 -1);
	assert_non_null(strstr(e.msg, "not https"));
	assert_int_equal(sim_count(NULL, NULL, 0), before);
	unmount(env->c, sid, r.vm_id);
	close(fd);
	free(url);
	free(sid);
	free(cp);
	free(r.vm_id);
	free(r.vpg_id);
}

/* The same path in two filesystems: refused, naming both; never a guess. */
static void test_ambiguous_path_refused(void **state)
{
	struct env *env = *state;
	bool here = false;
	struct zerto_vm_row r = row_for(env->c, "two01", "two-local", &here);
	char *cp = latest_cp(env->c, r.vpg_id);
	char *sid = mount(env->c, r.vpg_id, r.vm_id, cp);
	struct zerto_flr_item *it = NULL;
	struct zerto_err e = {0};

	assert_int_equal(zerto_flr_find(env->c, sid, "/etc/hostname", &it, &e), -1);
	assert_null(it);
	assert_non_null(strstr(e.msg, "ambiguous"));
	assert_non_null(strstr(e.msg, "partition#1 Ext4/etc/hostname"));
	assert_non_null(strstr(e.msg, "partition#2 Ext4/etc/hostname"));
	unmount(env->c, sid, r.vm_id);
	free(sid);
	free(cp);
	free(r.vm_id);
	free(r.vpg_id);
}

static void test_cloud_vpg_refused_and_points_in_time(void **state)
{
	struct env *env = *state;
	bool here = true, found = false, allowed = true;
	struct zerto_vm_row r = row_for(env->c, "lin01", "lin-cloud", &here);
	char *cp = latest_cp(env->c, r.vpg_id), *reason = NULL, *sid = NULL;
	struct zerto_err e = {0};

	assert_false(here);
	assert_int_equal(
	    zerto_flr_can_mount(env->c, r.vm_id, r.vpg_id, cp, 0, &found, &allowed, &reason, &e),
	    0);
	assert_true(found);
	assert_false(allowed);
	assert_non_null(strstr(reason, "Azure-East"));
	assert_int_equal(zerto_flr_mount(env->c, r.vpg_id, r.vm_id, cp, &sid, &e), -1);
	assert_int_equal(e.http_status, 400);
	assert_non_null(strstr(e.msg, "Azure-East"));
	free(reason);
	free(cp);
	free(r.vm_id);
	free(r.vpg_id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_windows_drive_letters, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_linux_paths_download_and_cap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ambiguous_path_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cloud_vpg_refused_and_points_in_time, setup,
	                                    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
