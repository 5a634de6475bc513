/* paths.h -- where airlock finds what it ships (migrations, seeds, the
 * example configuration) and its configuration directory.
 *
 * The share directory is, in order: $AIRLOCK_SHARE when set; the source
 * checkout when the running binary is <checkout>/build/bin/<name> and
 * <checkout>/migrations exists (so `make test` and `make demo` use the tree
 * they built); else the directory compiled in by `make SHAREDIR=...`
 * (default PREFIX/share/airlock). */
#ifndef AIRLOCK_PATHS_H
#define AIRLOCK_PATHS_H

/* The share directory; caller frees. */
char *paths_share(void);
/* paths_share()/sub; caller frees. */
char *paths_share_sub(const char *sub);
/* Why paths_share() chose what it did: "AIRLOCK_SHARE", "checkout" or
 * "built-in".  Static. */
const char *paths_share_origin(void);
/* The configuration directory compiled in (SYSCONFDIR/airlock, e.g.
 * /etc/airlock).  Static. */
const char *paths_confdir(void);
/* The daemon's default configuration file: SYSCONFDIR/airlock/airlockd.yaml.
 * Static. */
const char *paths_daemon_config(void);

#endif
