/* unwrapped.c: the payload of the Unwrapped chunk, the counts of the MPI
 * calls the logger does not record (docs/log-format.md): for each call
 * made at least once, its name's length (uvarint), the name, the calls
 * (uvarint) and their time in the body's clock unit (uvarint). */
#include <string.h>

#include "unwrapped.h"

static uint8_t cp_uw_buf[CP_UW_ROOM];

static uint8_t *cp_uw_uv(uint8_t *p, uint64_t v) {
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

const uint8_t *cp_uw_payload(size_t *n) {
	uint8_t *p = cp_uw_buf;
	for (int i = 0; i < cp_uw_n; i++) {
		uint64_t calls = __atomic_load_n(&cp_uw_calls[i], __ATOMIC_RELAXED);
		if (calls == 0)
			continue;
		size_t len = strlen(cp_uw_names[i]);
		if ((size_t)(p - cp_uw_buf) + len + 3 * 10 > sizeof cp_uw_buf)
			break; /* cannot happen with the calls listed */
		p = cp_uw_uv(p, len);
		memcpy(p, cp_uw_names[i], len);
		p += len;
		p = cp_uw_uv(p, calls);
		p = cp_uw_uv(p, __atomic_load_n(&cp_uw_ticks[i], __ATOMIC_RELAXED));
	}
	*n = (size_t)(p - cp_uw_buf);
	return cp_uw_buf;
}
