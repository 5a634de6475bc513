/* qmjson_fuzz.c -- libFuzzer over the decoder of qm's JSON (transport/qmjson).
 *
 * qm's output comes from the Proxmox node, so it is untrusted input: the
 * decoder must never crash, overrun a buffer, leak or keep more than its cap,
 * however the bytes are split across SSH reads.  The first input byte picks
 * the chunk size; the rest is fed in chunks of that size, then finished. */
#include "transport/qmjson.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CAP 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qmjson *p;
	size_t chunk;

	if (size == 0)
		return 0;
	chunk = (size_t)data[0] % 64 + 1;
	data++;
	size--;
	p = qmjson_new(FUZZ_CAP);
	for (size_t off = 0; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		if (qmjson_feed(p, (const char *)data + off, n) < 0)
			break;
	}
	if (qmjson_finish(p) == 0) {
		struct qmjson_result *r = qmjson_result(p);
		if (r->out.len > FUZZ_CAP || r->err.len > FUZZ_CAP)
			abort(); /* the cap is a promise */
	}
	(void)qmjson_error(p);
	qmjson_free(p);
	return 0;
}
