/* flr.h -- journal file-level restore (FLR) on a ZVM: points in time, mount,
 * session status, browse, download, unmount, and the mapping of a guest path
 * (/etc/app.conf, C:\Users\j\app.conf) into the FLR namespace
 * ("<partition>/etc/app.conf").
 *
 * Lenient about case and unknown fields, strict about the fields used (as
 * api.h).  Every returned string is the caller's. */
#ifndef AIRLOCK_ZERTO_FLR_H
#define AIRLOCK_ZERTO_FLR_H

#include "zerto/client.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One FLR session as GET /v1/flrs lists it. */
struct zerto_flr_session {
	char *id;            /* "<guid>.<siteGuid>" */
	char *status;        /* MountInProgress, MountCompletedSuccessfully, MountFailed, ... */
	char *vm_id;         /* "" when absent */
	char *vpg_id;        /* "" when absent */
	char *checkpoint_id; /* "" when absent */
	int64_t mount_ms;    /* MountTime, 0 when absent or unreadable */
};

/* GET /v1/flrs[?vmIdentifier=vm_id] (vm_id NULL: every session). */
int zerto_flr_list(struct zerto_client *c, const char *vm_id, struct zerto_flr_session **s,
                   size_t *n, struct zerto_err *e);
void zerto_flr_sessions_free(struct zerto_flr_session *s, size_t n);
/* GET /v1/flrs/{id}: one session (the answer may be an array of one or an
 * object). */
int zerto_flr_get(struct zerto_client *c, const char *id, struct zerto_flr_session *s,
                  struct zerto_err *e);
void zerto_flr_session_clear(struct zerto_flr_session *s);

/* GET /v1/vms/{vm}/pointsInTime?vpgIdentifier=&startDate=&endDate= around
 * at_ms (0: no window): *found when checkpoint cp_id is among them, then
 * *allowed and *reason (CanMount; reason "" when none). */
int zerto_flr_can_mount(struct zerto_client *c, const char *vm_id, const char *vpg_id,
                        const char *cp_id, int64_t at_ms, bool *found, bool *allowed, char **reason,
                        struct zerto_err *e);

/* POST /v1/flrs {"Jflr": {...}}: the session id. */
int zerto_flr_mount(struct zerto_client *c, const char *vpg_id, const char *vm_id,
                    const char *cp_id, char **session_id, struct zerto_err *e);
/* DELETE /v1/flrs/{id}: the unmount task's id ("" when the ZVM gave none). */
int zerto_flr_unmount(struct zerto_client *c, const char *id, char **task_id, struct zerto_err *e);

struct zerto_flr_item {
	char *path; /* full FLR path, "partition#1 Ext4/etc/hostname" */
	char *type; /* Partition, Folder, File, ... ("" when absent) */
	bool browsable;
	bool downloadable;
	char *why_not;  /* AdditionalInformation when not downloadable, else "" */
	long long size; /* SizeInBytes, -1 when absent */
};

/* POST /v1/flrs/{id}/browse {"Path": path}: the items under path. */
int zerto_flr_browse(struct zerto_client *c, const char *id, const char *path,
                     struct zerto_flr_item **items, size_t *n, struct zerto_err *e);
void zerto_flr_items_free(struct zerto_flr_item *items, size_t n);

/* POST /v1/flrs/{id}/download {"PathList": [path]}: the download URL. */
int zerto_flr_download_url(struct zerto_client *c, const char *id, const char *path, char **url,
                           struct zerto_err *e);

/* A guest path split for FLR: *drive gets the upper-case drive letter of a
 * Windows path (C:\a\b or C:/a/b) or '\0' for a Linux path (/a/b); *rel gets
 * the path's components joined with '/' ("a/b"), the caller's to free.  -1
 * for anything else (relative, empty or "."/".." components, a bare drive). */
int zerto_flr_split_guest_path(const char *guest, char *drive, char **rel);

/* Whether partition name p (as browsing "" lists it) names drive letter d
 * ("C: NTFS", "Local Disk (C:)", "partition#2 NTFS C:\"): a "C:" not preceded
 * by a letter. */
bool zerto_flr_partition_is_drive(const char *p, char d);

/* Finds guest inside the mounted session: lists the partitions and browses
 * each one's copy of the file's directory.  A Windows path looks only in the
 * partitions that name its drive letter; when partitions name letters but not
 * this one, it is not there; when none names any, every partition is looked
 * in.  Found in more than one partition is ambiguous: refused, never guessed.
 * On success *item is the file's entry (clear with
 * zerto_flr_items_free(item, 1)).  -1 with e set when no partition holds it,
 * several do (ZERTO_ERR_SHAPE, the message naming the partitions) or a call
 * failed. */
int zerto_flr_find(struct zerto_client *c, const char *id, const char *guest,
                   struct zerto_flr_item **item, struct zerto_err *e);

#endif
