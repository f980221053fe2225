/* modules.h: loaded modules (modules.c). */
#ifndef CPATH_MODULES_H
#define CPATH_MODULES_H
#include <pthread.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

typedef struct cp_module {
	const char *name; /* "" for the executable */
	uint64_t base, start, end;
	unsigned char id[64];
	int idlen;
} cp_module;

int cp_modules(cp_module *out, int max);
void cp_modules_known(const cp_module *m, const int *logged, int n);
extern uint64_t cp_mods_pend[];
extern int cp_nmods_pend;
void cp_module_miss(uint64_t cs);
extern volatile int cp_mods_stale;
extern pthread_mutex_t cp_mods_mu;
extern __thread __attribute__((tls_model("initial-exec"))) uint64_t cp_hit_lo, cp_hit_len;

/* cp_code_seen says whether pc is in an executable segment of a module
 * mapped at the last listing: the call-path walk's check of each return
 * address, without a lock or a system call. */
int cp_code_find(uint64_t pc);
extern __thread __attribute__((tls_model("initial-exec"))) uint64_t cp_code_lo, cp_code_len;
static inline int cp_code_seen(uint64_t pc) {
	return __builtin_expect(pc - cp_code_lo < cp_code_len, 1) || cp_code_find(pc);
}

/* cp_module_seen is the hot path's check: the call site is in the module of
 * the last one looked up, or is looked up. */
static inline void cp_module_seen(uint64_t cs) {
	if (__builtin_expect(cs - cp_hit_lo >= cp_hit_len, 0))
		cp_module_miss(cs);
}
#pragma GCC visibility pop
#endif
