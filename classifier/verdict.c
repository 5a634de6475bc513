/* verdict.c -- reason bookkeeping and rendering for struct verdict. */
#include "classifier/verdict.h"

#include "classifier/arena.h"
#include "lib/buf.h"
#include "lib/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Scratch for one classification: enough for a 1 MiB command many times over. */
#define VERDICT_ARENA_LIMIT ((size_t)96 << 20)

struct verdict_mem {
	struct arena *a;
	struct verdict_reason reasons[VERDICT_MAX_REASONS];
};

struct arena *verdict_begin(struct verdict *v)
{
	if (v->mem == NULL) {
		v->mem = xcalloc(1, sizeof(*v->mem));
		v->mem->a = arena_new(VERDICT_ARENA_LIMIT);
	}
	arena_reset(v->mem->a);
	v->cls = RISK_READ_ONLY;
	v->reasons = v->mem->reasons;
	v->nreasons = 0;
	v->nomitted = 0;
	v->needs_root = false;
	v->net_view = false;
	v->writes = NULL;
	v->nwrites = 0;
	v->writes_unknown = false;
	v->action_rule = NULL;
	return v->mem->a;
}

void verdict_add(struct verdict *v, int segment, const char *segment_text, const char *rule_id,
                 const char *words, enum risk_class cls, enum target_type target)
{
	struct verdict_reason *r;

	if (cls > v->cls)
		v->cls = cls;
	if (v->nreasons < VERDICT_MAX_REASONS) {
		r = &v->mem->reasons[v->nreasons++];
	} else {
		/* Full: keep the reasons that explain the highest classes. */
		size_t low = 0;

		for (size_t i = 1; i < v->nreasons; i++)
			if (v->mem->reasons[i].cls < v->mem->reasons[low].cls)
				low = i;
		v->nomitted++;
		if (v->mem->reasons[low].cls >= cls)
			return;
		r = &v->mem->reasons[low];
	}
	r->segment = segment;
	r->segment_text = segment_text ? segment_text : "";
	r->rule_id = rule_id;
	r->words = words ? words : "";
	r->cls = cls;
	r->target = target;
}

void verdict_finish(struct verdict *v)
{
	struct verdict_reason *r = v->mem->reasons;

	for (size_t i = 1; i < v->nreasons; i++) {
		struct verdict_reason t = r[i];
		size_t j = i;

		while (j > 0 && r[j - 1].segment > t.segment) {
			r[j] = r[j - 1];
			j--;
		}
		r[j] = t;
	}
}

void verdict_free(struct verdict *v)
{
	if (v == NULL || v->mem == NULL)
		return;
	arena_free(v->mem->a);
	free(v->mem);
	v->mem = NULL;
	v->reasons = NULL;
	v->nreasons = 0;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80             ? 1
	             : (s[0] & 0xe0) == 0xc0 ? 2
	             : (s[0] & 0xf0) == 0xe0 ? 3
	             : (s[0] & 0xf8) == 0xf0 ? 4
	                                     : 0;

	if (len == 0 || len > n || (len == 2 && s[0] < 0xc2) || (len == 4 && s[0] > 0xf4))
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (len == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, surrogate */
	if (len == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return len;
}

/* Appends s as valid UTF-8 (invalid bytes become U+FFFD); flat: control
 * bytes become spaces. */
static void put_utf8(struct buf *b, const char *s, bool flat)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n;) {
		size_t l = utf8_len((const unsigned char *)s + i, n - i);

		if (l == 0) {
			buf_puts(b, "\xef\xbf\xbd");
			i++;
		} else if (flat && l == 1 && ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)) {
			buf_putc(b, ' ');
			i++;
		} else {
			buf_append(b, s + i, l);
			i += l;
		}
	}
}

void verdict_json_add_string(cJSON *o, const char *key, const char *s)
{
	struct buf b = BUF_INIT;

	put_utf8(&b, s, false);
	cJSON_AddStringToObject(o, key, buf_str(&b));
	buf_free(&b);
}

cJSON *verdict_reasons_json(const struct verdict *v)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < v->nreasons; i++) {
		const struct verdict_reason *r = &v->reasons[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "segment", r->segment);
		verdict_json_add_string(o, "text", r->segment_text);
		verdict_json_add_string(o, "rule", r->rule_id);
		verdict_json_add_string(o, "words", r->words);
		cJSON_AddStringToObject(o, "class", risk_class_name(r->cls));
		cJSON_AddStringToObject(o, "target", target_type_name(r->target));
		cJSON_AddItemToArray(arr, o);
	}
	if (v->nomitted > 0) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "omitted", (double)v->nomitted);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* Appends s with tabs, newlines and other control bytes shown as spaces. */
static void put_flat(struct buf *b, const char *s)
{
	put_utf8(b, s, true);
}

char *verdict_reasons_text(const struct verdict *v)
{
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < v->nreasons; i++) {
		const struct verdict_reason *r = &v->reasons[i];

		if (i > 0)
			buf_puts(&b, "; ");
		if (r->segment > 0)
			buf_printf(&b, "segment %d: ", r->segment);
		put_flat(&b, r->words);
		buf_puts(&b, " (rule ");
		put_flat(&b, r->rule_id);
		buf_printf(&b, ") on %s => %s", target_type_name(r->target),
		           risk_class_name(r->cls));
	}
	if (v->nomitted > 0)
		buf_printf(&b, "; %zu more reasons omitted", v->nomitted);
	return buf_steal(&b);
}
