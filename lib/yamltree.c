/* yamltree.c -- libyaml's event stream folded into a positioned tree. */
#include "lib/yamltree.h"

#include "lib/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Deep nesting is refused rather than recursed into without bound. */
#define YT_MAX_DEPTH 64

struct yt_parser {
	yaml_parser_t p;
	const char *name;
	char *err;
	size_t errlen;
};

static void set_err(struct yt_parser *yp, int line, int col, const char *reason)
{
	snprintf(yp->err, yp->errlen, "%s:%d:%d: %s", yp->name, line, col, reason);
}

static struct yt_node *node_new(enum yt_kind kind, const yaml_mark_t *m)
{
	struct yt_node *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	return n;
}

static void node_push(struct yt_node *parent, struct yt_node *child, size_t *cap)
{
	if (parent->n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		parent->items = xrealloc(parent->items, *cap * sizeof(*parent->items));
	}
	parent->items[parent->n++] = child;
}

static struct yt_node *parse_node(struct yt_parser *yp, yaml_event_t *ev, int depth);

/* Frees a collection still being built: a map's items are not yet paired. */
static void abandon(struct yt_node *n)
{
	n->kind = YT_SEQ;
	yt_free(n);
}

/* Reads children until the matching end event; ev is the start event. */
static struct yt_node *parse_collection(struct yt_parser *yp, yaml_event_t *start, int depth)
{
	enum yt_kind kind = start->type == YAML_SEQUENCE_START_EVENT ? YT_SEQ : YT_MAP;
	yaml_event_type_t end = kind == YT_SEQ ? YAML_SEQUENCE_END_EVENT : YAML_MAPPING_END_EVENT;
	struct yt_node *n = node_new(kind, &start->start_mark);
	size_t cap = 0;

	if (depth > YT_MAX_DEPTH) {
		set_err(yp, n->line, n->col, "nesting too deep");
		abandon(n);
		return NULL;
	}
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&yp->p, &ev)) {
			set_err(yp, (int)yp->p.problem_mark.line + 1,
			        (int)yp->p.problem_mark.column + 1,
			        yp->p.problem ? yp->p.problem : "parse error");
			abandon(n);
			return NULL;
		}
		if (ev.type == end) {
			yaml_event_delete(&ev);
			break;
		}
		struct yt_node *child = parse_node(yp, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (child == NULL) {
			abandon(n);
			return NULL;
		}
		if (kind == YT_MAP && n->n % 2 == 0) {
			if (child->kind != YT_SCALAR) {
				set_err(yp, child->line, child->col,
				        "a mapping key must be a plain value");
				yt_free(child);
				abandon(n);
				return NULL;
			}
			for (size_t i = 0; i < n->n; i += 2)
				if (strcmp(n->items[i]->scalar, child->scalar) == 0) {
					char reason[160];
					snprintf(reason, sizeof(reason), "duplicate key \"%.100s\"",
					         child->scalar);
					set_err(yp, child->line, child->col, reason);
					yt_free(child);
					abandon(n);
					return NULL;
				}
		}
		node_push(n, child, &cap);
	}
	if (kind == YT_MAP)
		n->n /= 2;
	return n;
}

static struct yt_node *parse_node(struct yt_parser *yp, yaml_event_t *ev, int depth)
{
	struct yt_node *n;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor) {
			set_err(yp, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
			        "anchors are not supported");
			return NULL;
		}
		n = node_new(YT_SCALAR, &ev->start_mark);
		n->scalar = xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		if (strlen(n->scalar) != ev->data.scalar.length) {
			set_err(yp, n->line, n->col, "NUL byte in value");
			yt_free(n);
			return NULL;
		}
		n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
		            ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
		return n;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if ((ev->type == YAML_SEQUENCE_START_EVENT && ev->data.sequence_start.anchor) ||
		    (ev->type == YAML_MAPPING_START_EVENT && ev->data.mapping_start.anchor)) {
			set_err(yp, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
			        "anchors are not supported");
			return NULL;
		}
		return parse_collection(yp, ev, depth);
	case YAML_ALIAS_EVENT:
		set_err(yp, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
		        "aliases are not supported");
		return NULL;
	default:
		set_err(yp, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
		        "unexpected YAML event");
		return NULL;
	}
}

struct yt_node *yt_parse(const char *text, size_t len, const char *name, char *err, size_t errlen)
{
	struct yt_parser yp = {.name = name ? name : "<yaml>", .err = err, .errlen = errlen};
	struct yt_node *root = NULL;
	yaml_event_t ev;
	int state = 0; /* 0 before doc, 1 in doc (root read), 2 after doc end */

	if (errlen)
		err[0] = '\0';
	if (!yaml_parser_initialize(&yp.p)) {
		snprintf(err, errlen, "%s: cannot initialise YAML parser", yp.name);
		return NULL;
	}
	yaml_parser_set_input_string(&yp.p, (const unsigned char *)text, len);
	for (;;) {
		if (!yaml_parser_parse(&yp.p, &ev)) {
			set_err(&yp, (int)yp.p.problem_mark.line + 1,
			        (int)yp.p.problem_mark.column + 1,
			        yp.p.problem ? yp.p.problem : "parse error");
			goto fail;
		}
		yaml_event_type_t t = ev.type;
		if (t == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (t == YAML_DOCUMENT_START_EVENT && state == 2) {
			set_err(&yp, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
			        "only one YAML document is allowed");
			yaml_event_delete(&ev);
			goto fail;
		}
		if (t == YAML_DOCUMENT_END_EVENT)
			state = 2;
		if (t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT ||
		    t == YAML_MAPPING_START_EVENT || t == YAML_ALIAS_EVENT) {
			root = parse_node(&yp, &ev, 0);
			yaml_event_delete(&ev);
			if (root == NULL)
				goto fail;
			state = 1;
			continue;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&yp.p);
	if (root == NULL) {
		yaml_mark_t m = {0, 0, 0};
		root = node_new(YT_MAP, &m);
	} else if (root->kind == YT_SCALAR && !root->quoted && root->scalar[0] == '\0') {
		/* "---" followed by nothing is an empty document. */
		yt_free(root);
		yaml_mark_t m = {0, 0, 0};
		root = node_new(YT_MAP, &m);
	}
	return root;
fail:
	yt_free(root);
	yaml_parser_delete(&yp.p);
	return NULL;
}

void yt_free(struct yt_node *n)
{
	if (n == NULL)
		return;
	size_t count = n->kind == YT_MAP ? n->n * 2 : n->kind == YT_SEQ ? n->n : 0;
	for (size_t i = 0; i < count; i++)
		yt_free(n->items[i]);
	free(n->items);
	free(n->scalar);
	free(n);
}

const struct yt_node *yt_get(const struct yt_node *map, const char *key)
{
	if (map == NULL || map->kind != YT_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->items[2 * i]->scalar, key) == 0)
			return map->items[2 * i + 1];
	return NULL;
}

const char *yt_kind_name(enum yt_kind k)
{
	switch (k) {
	case YT_SCALAR:
		return "scalar";
	case YT_SEQ:
		return "list";
	case YT_MAP:
		return "mapping";
	}
	return "?";
}
