/* assets.h -- the console's stylesheet and script, compiled in: the console
 * loads nothing from anywhere else. */
#ifndef AIRLOCK_WEB_ASSETS_H
#define AIRLOCK_WEB_ASSETS_H

#include <stddef.h>

/* The asset at path ("/static/app.css"), its type in *type; NULL when none. */
const char *assets_get(const char *path, const char **type, size_t *len);

#endif
