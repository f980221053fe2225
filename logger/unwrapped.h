/* unwrapped.h: the counts of the MPI calls the logger does not record
 * (unwrapped.sigs; the wrappers are unwrapped_gen.c). */
#ifndef CPATH_UNWRAPPED_H
#define CPATH_UNWRAPPED_H
#include <stddef.h>
#include <stdint.h>

/* The chunk kind of the counts (trace.ChunkUnwrapped). */
#define CP_CHUNK_UNWRAPPED 6
/* The most bytes of counts a log gets: far more than the calls listed
 * need (under 50 bytes each). */
#define CP_UW_ROOM 8192

extern const int cp_uw_n;
extern const char *const cp_uw_names[];
/* By the call's index in cp_uw_names: its calls, and its time in the
 * body's clock unit (cp_now). */
extern uint64_t cp_uw_calls[], cp_uw_ticks[];

static inline void cp_uw_count(int i, int64_t ticks) {
	__atomic_fetch_add(&cp_uw_calls[i], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cp_uw_ticks[i], ticks > 0 ? (uint64_t)ticks : 0, __ATOMIC_RELAXED);
}

/* cp_uw_payload codes the Unwrapped chunk's payload into a static buffer
 * and returns it, its length in *n (0 when no such call was made). Async-
 * signal-safe: the end of the log calls it, from the signal path too. */
const uint8_t *cp_uw_payload(size_t *n);
#endif
