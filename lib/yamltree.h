/* yamltree.h -- a YAML document as a small tree whose nodes know their line
 * and column, so a caller can say "seeds/policy.yaml:12:5: unknown class".
 *
 * One document per text; anchors, aliases and tags other than the standard
 * ones are refused.  Scalars keep their text; `quoted` tells whether the
 * author quoted it (so "true" and true can be told apart). */
#ifndef AIRLOCK_YAMLTREE_H
#define AIRLOCK_YAMLTREE_H

#include <stdbool.h>
#include <stddef.h>

enum yt_kind { YT_SCALAR, YT_SEQ, YT_MAP };

struct yt_node {
	enum yt_kind kind;
	int line, col;          /* 1-based position of the node's start */
	char *scalar;           /* YT_SCALAR: the value, NUL-terminated */
	bool quoted;            /* YT_SCALAR: written in single or double quotes */
	size_t n;               /* YT_SEQ: items; YT_MAP: key/value pairs */
	struct yt_node **items; /* YT_SEQ: n items; YT_MAP: 2n nodes, key then value */
};

/* Parses text; NULL on error with "name:line:col: reason" in err.  An empty
 * document gives an empty map.  Free with yt_free(). */
struct yt_node *yt_parse(const char *text, size_t len, const char *name, char *err, size_t errlen);
void yt_free(struct yt_node *n); /* NULL is a no-op */
/* The value under key in a map, or NULL when absent or n is not a map. */
const struct yt_node *yt_get(const struct yt_node *map, const char *key);
/* Human name of a kind, for error messages: "scalar", "list", "mapping". */
const char *yt_kind_name(enum yt_kind k);

#endif
