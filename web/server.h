/* server.h -- airlock-web's HTTP(S) server on libmicrohttpd: one thread per
 * connection (a server-sent-event stream blocks its own thread only),
 * bounded connections per address and in all. */
#ifndef AIRLOCK_WEB_SERVER_H
#define AIRLOCK_WEB_SERVER_H

#include "web/config.h"

#include <stddef.h>

struct web_server;

/* Loads the TLS files, connects airlock-web's own login, starts LISTEN and
 * the listener.  NULL with the reason in err. */
struct web_server *web_server_start(const struct web_config *cfg, char *err, size_t errlen);
/* Stops accepting, ends every stream and session, frees.  NULL is a no-op. */
void web_server_stop(struct web_server *s);

#endif
