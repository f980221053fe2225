/* unwind.c: the rules that step a call path from a frame to its caller's
 * (unwind.h), read from the .eh_frame call frame information every
 * x86-64 module carries (the same the C++ exceptions use), so that a call
 * path goes through code built without frame pointers. The hot path looks
 * a return address up in a table; a new address finds its FDE with
 * libgcc's _Unwind_Find_FDE (a binary search of .eh_frame_hdr) and runs
 * its CFA program up to the address, once. Rules this walk cannot follow
 * (a CFA by expression, rbp or the return address in another register)
 * end the walk there. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "unwind.h"

struct dwarf_eh_bases {
	void *tbase, *dbase, *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

cp_rule_slot cp_rules[CP_RULES];
static pthread_mutex_t cp_rules_mu = PTHREAD_MUTEX_INITIALIZER;

enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

/* rd is a bounded reader of call frame information. */
typedef struct {
	const uint8_t *p, *end;
	int bad;
} rd;

static uint8_t u8(rd *r) {
	if (r->p >= r->end) {
		r->bad = 1;
		return 0;
	}
	return *r->p++;
}

static uint64_t fixed(rd *r, int n) {
	if (r->end - r->p < n) {
		r->bad = 1;
		r->p = r->end;
		return 0;
	}
	uint64_t v = 0;
	memcpy(&v, r->p, n); /* little-endian */
	r->p += n;
	return v;
}

static uint64_t uleb(rd *r) {
	uint64_t v = 0;
	for (int s = 0; s < 64; s += 7) {
		uint8_t b = u8(r);
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return v;
}

static int64_t sleb(rd *r) {
	int64_t v = 0;
	int s = 0;
	uint8_t b;
	do {
		b = u8(r);
		v |= (int64_t)(b & 0x7f) << s;
		s += 7;
	} while ((b & 0x80) && s < 64);
	if (s < 64 && (b & 0x40))
		v |= -((int64_t)1 << s);
	return v;
}

/* encoded reads a pointer in DW_EH_PE encoding enc. */
static uint64_t encoded(rd *r, uint8_t enc, const struct dwarf_eh_bases *b) {
	if (enc == 0xff)
		return 0;
	const uint8_t *at = r->p;
	uint64_t v;
	switch (enc & 0x0f) {
	case 0x00: v = fixed(r, 8); break;
	case 0x01: v = uleb(r); break;
	case 0x02: v = fixed(r, 2); break;
	case 0x03: v = fixed(r, 4); break;
	case 0x04: v = fixed(r, 8); break;
	case 0x09: v = (uint64_t)sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)fixed(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)fixed(r, 4); break;
	case 0x0c: v = fixed(r, 8); break;
	default: r->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += (uintptr_t)at; break;
	case 0x20: v += (uintptr_t)b->tbase; break;
	case 0x30: v += (uintptr_t)b->dbase; break;
	case 0x40: v += (uintptr_t)b->func; break;
	default: r->bad = 1; return 0;
	}
	if (enc & 0x80) /* indirect: only personality pointers, which are skipped */
		v = 0;
	return v;
}

/* row is the rules of one row of the CFA table that the walk follows. */
typedef struct {
	int cfa_reg, cfa_ok;
	int64_t cfa_off;
	int rbp, ra;     /* 0 unchanged (same value), 1 saved at CFA + off, -1 unknown */
	int64_t rbp_off, ra_off;
} row;

typedef struct {
	uint64_t caf;
	int64_t daf;
	uint8_t fde_enc;
	int ra_reg;
} cie_info;

static void set_reg(row *w, uint64_t reg, int how, int64_t off, int ra_reg) {
	if (reg == REG_RBP)
		w->rbp = how, w->rbp_off = off;
	else if ((int)reg == ra_reg)
		w->ra = how, w->ra_off = off;
}

/* run runs a CFA program from loc up to target, the address looked up;
 * init is the CIE's row (for DW_CFA_restore). It returns 1 when target's
 * row is reached (past the program's end, the last row holds). */
static int run(rd *r, const cie_info *ci, const struct dwarf_eh_bases *b, uint64_t loc, uint64_t target, row *w,
	       const row *init) {
	row stack[8];
	int depth = 0;
	while (r->p < r->end && !r->bad) {
		uint8_t op = u8(r), lo = op & 0x3f;
		uint64_t reg, adv = 0;
		switch (op & 0xc0) {
		case 0x40:
			adv = lo;
			goto advance;
		case 0x80:
			set_reg(w, lo, 1, (int64_t)uleb(r) * ci->daf, ci->ra_reg);
			continue;
		case 0xc0:
			if (lo == REG_RBP)
				w->rbp = init->rbp, w->rbp_off = init->rbp_off;
			else if (lo == ci->ra_reg)
				w->ra = init->ra, w->ra_off = init->ra_off;
			continue;
		}
		switch (op) {
		case 0x00: continue;
		case 0x01:
			loc = encoded(r, ci->fde_enc, b);
			if (loc > target)
				return 1;
			continue;
		case 0x02: adv = u8(r); goto advance;
		case 0x03: adv = fixed(r, 2); goto advance;
		case 0x04: adv = fixed(r, 4); goto advance;
		case 0x05:
			reg = uleb(r);
			set_reg(w, reg, 1, (int64_t)uleb(r) * ci->daf, ci->ra_reg);
			continue;
		case 0x06:
			reg = uleb(r);
			if (reg == REG_RBP)
				w->rbp = init->rbp, w->rbp_off = init->rbp_off;
			else if ((int)reg == ci->ra_reg)
				w->ra = init->ra, w->ra_off = init->ra_off;
			continue;
		case 0x07: set_reg(w, uleb(r), -1, 0, ci->ra_reg); continue; /* undefined */
		case 0x08: set_reg(w, uleb(r), 0, 0, ci->ra_reg); continue;  /* same value */
		case 0x09:                                                 /* in another register */
			reg = uleb(r);
			uleb(r);
			set_reg(w, reg, -1, 0, ci->ra_reg);
			continue;
		case 0x0a:
			if (depth == 8)
				return 0;
			stack[depth++] = *w;
			continue;
		case 0x0b:
			if (depth == 0)
				return 0;
			*w = stack[--depth];
			continue;
		case 0x0c:
			w->cfa_reg = (int)uleb(r);
			w->cfa_off = (int64_t)uleb(r);
			w->cfa_ok = 1;
			continue;
		case 0x0d: w->cfa_reg = (int)uleb(r); continue;
		case 0x0e: w->cfa_off = (int64_t)uleb(r); continue;
		case 0x0f: /* the CFA by a DWARF expression */
			r->p += uleb(r);
			w->cfa_ok = 0;
			continue;
		case 0x10: /* a register by an expression */
		case 0x16:
			reg = uleb(r);
			r->p += uleb(r);
			set_reg(w, reg, -1, 0, ci->ra_reg);
			continue;
		case 0x11:
			reg = uleb(r);
			set_reg(w, reg, 1, sleb(r) * ci->daf, ci->ra_reg);
			continue;
		case 0x12:
			w->cfa_reg = (int)uleb(r);
			w->cfa_off = sleb(r) * ci->daf;
			w->cfa_ok = 1;
			continue;
		case 0x13: w->cfa_off = sleb(r) * ci->daf; continue;
		case 0x14: /* val_offset: a value, not a saved register */
			reg = uleb(r);
			uleb(r);
			set_reg(w, reg, -1, 0, ci->ra_reg);
			continue;
		case 0x15:
			reg = uleb(r);
			sleb(r);
			set_reg(w, reg, -1, 0, ci->ra_reg);
			continue;
		case 0x2e: uleb(r); continue; /* GNU_args_size */
		case 0x2f:
			reg = uleb(r);
			set_reg(w, reg, 1, -(int64_t)uleb(r) * ci->daf, ci->ra_reg);
			continue;
		default: return 0;
		}
	advance:
		loc += adv * ci->caf;
		if (loc > target)
			return 1;
	}
	return !r->bad;
}

/* rule_at reads the rule at return address pc from its FDE. */
static cp_frame_rule rule_at(uint64_t pc) {
	cp_frame_rule none = {0};
	struct dwarf_eh_bases b = {0};
	/* A return address follows its call: the call's row is at pc - 1. */
	uint64_t target = pc - 1;
	const uint8_t *fde = _Unwind_Find_FDE((void *)(uintptr_t)target, &b);
	if (!fde)
		return none;
	uint32_t len32;
	memcpy(&len32, fde, 4);
	if (len32 == 0 || len32 == 0xffffffffu)
		return none;
	rd f = {fde + 4, fde + 4 + len32, 0};
	const uint8_t *idp = f.p;
	uint32_t cie_off = (uint32_t)fixed(&f, 4);
	const uint8_t *cie = idp - cie_off;
	memcpy(&len32, cie, 4);
	if (len32 == 0 || len32 == 0xffffffffu)
		return none;
	rd c = {cie + 4, cie + 4 + len32, 0};
	if (fixed(&c, 4) != 0)
		return none; /* not a CIE */
	uint8_t version = u8(&c);
	const char *aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	u8(&c);
	cie_info ci = {.fde_enc = 0};
	ci.caf = uleb(&c);
	ci.daf = sleb(&c);
	ci.ra_reg = version == 1 ? u8(&c) : (int)uleb(&c);
	const uint8_t *insns = c.p;
	if (aug[0] == 'z') {
		uint64_t n = uleb(&c);
		rd a = {c.p, c.p + n, 0};
		for (const char *q = aug + 1; *q && !a.bad; q++) {
			switch (*q) {
			case 'R': ci.fde_enc = u8(&a); break;
			case 'P': {
				uint8_t e = u8(&a);
				encoded(&a, e & 0x7f, &b);
				break;
			}
			case 'L': u8(&a); break;
			case 'S': case 'B': break;
			default: return none;
			}
		}
		insns = c.p + n;
	} else if (aug[0]) {
		return none;
	}
	if (c.bad || ci.ra_reg != REG_RA || insns > c.end)
		return none;
	uint64_t start = encoded(&f, ci.fde_enc, &b);
	uint64_t range = encoded(&f, ci.fde_enc & 0x0f, &b);
	if (aug[0] == 'z')
		f.p += uleb(&f);
	if (f.bad || target < start || target >= start + range || f.p > f.end)
		return none;

	row w = {.cfa_reg = -1};
	rd ip = {insns, c.end, 0};
	if (!run(&ip, &ci, &b, start, target, &w, &w))
		return none;
	row init = w;
	if (!run(&f, &ci, &b, start, target, &w, &init))
		return none;
	if (!w.cfa_ok || (w.cfa_reg != REG_RSP && w.cfa_reg != REG_RBP) || w.ra != 1 || w.rbp < 0)
		return none;
	if (w.cfa_off <= 0 || w.cfa_off > INT32_MAX || w.ra_off < INT8_MIN || w.ra_off > INT8_MAX || w.rbp_off < INT16_MIN ||
	    w.rbp_off > INT16_MAX)
		return none;
	cp_frame_rule r = {.cfa_off = (int32_t)w.cfa_off, .rbp_off = (int16_t)w.rbp_off, .ra_off = (int8_t)w.ra_off,
			   .kind = w.cfa_reg == REG_RSP ? CP_RULE_SP : CP_RULE_BP, .rbp_saved = w.rbp == 1};
	return r;
}

void cp_rule_miss(uint64_t pc, cp_frame_rule *r) {
	pthread_mutex_lock(&cp_rules_mu);
	uint32_t h = cp_rule_hash(pc);
	cp_rule_slot *free = NULL;
	for (int i = 0; i < 8; i++) {
		cp_rule_slot *s = &cp_rules[(h + i) & (CP_RULES - 1)];
		if (s->pc == pc) { /* another thread's, meanwhile */
			*r = s->rule;
			pthread_mutex_unlock(&cp_rules_mu);
			return;
		}
		if (!s->pc) {
			free = s;
			break;
		}
	}
	*r = rule_at(pc);
	if (free) { /* else the table is full there: read again next time */
		free->rule = *r;
		__atomic_store_n(&free->pc, pc, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&cp_rules_mu);
}
