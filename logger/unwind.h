/* unwind.h: how to step from a frame to its caller's, by the call frame
 * information of the code (unwind.c), for call paths through code built
 * without frame pointers. */
#ifndef CPATH_UNWIND_H
#define CPATH_UNWIND_H
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* cp_frame_rule is the step from a frame whose code is at a return
 * address to its caller's: the canonical frame address (CFA: the stack
 * pointer the caller had before its call) is the frame's stack pointer or
 * its rbp plus cfa_off; the return address is saved at CFA + ra_off, and
 * the caller's rbp at CFA + rbp_off if rbp_saved (else rbp is the
 * caller's still). kind 0: no rule known (no call frame information, or
 * one this walk does not follow): the walk ends there. */
enum { CP_RULE_NONE, CP_RULE_SP, CP_RULE_BP };
typedef struct cp_frame_rule {
	int32_t cfa_off;
	int16_t rbp_off;
	int8_t ra_off;
	uint8_t kind : 2, rbp_saved : 1;
} cp_frame_rule;

/* cp_rule_slot is an entry of the table of rules by return address. */
typedef struct cp_rule_slot {
	uint64_t pc; /* 0: empty; written last, with release */
	cp_frame_rule rule;
} cp_rule_slot;

#define CP_RULES 16384 /* a run's return addresses on call paths: thousands at most */
extern cp_rule_slot cp_rules[CP_RULES];
/* cp_rule_miss reads the rule at return address pc, in code, from its call
 * frame information, and enters it in the table. */
void cp_rule_miss(uint64_t pc, cp_frame_rule *r);

static inline uint32_t cp_rule_hash(uint64_t pc) { return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 50); }

/* cp_rule_find finds the rule at return address pc in the table, without
 * a lock (filled once per address by cp_rule_miss): 1 if it holds pc, which
 * was then code (cp_rule_miss is only asked for code). */
static inline int cp_rule_find(uint64_t pc, cp_frame_rule *r) {
	uint32_t h = cp_rule_hash(pc);
	for (int i = 0; i < 8; i++) {
		const cp_rule_slot *s = &cp_rules[(h + i) & (CP_RULES - 1)];
		uint64_t p = __atomic_load_n(&s->pc, __ATOMIC_ACQUIRE);
		if (p == pc) {
			*r = s->rule;
			return 1;
		}
		if (!p)
			break;
	}
	return 0;
}

#pragma GCC visibility pop
#endif
