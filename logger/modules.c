/* modules.c: the objects loaded in the process (dl_iterate_phdr), so that
 * the analyzer can resolve call sites inside shared libraries: path, load
 * address, address range and GNU build-id of each. Go lists them at
 * MPI_Init; the log header names the executable, and a module chunk names
 * each other module when the first call site in it is logged (so a log
 * carries the modules its call sites need, not the dozens an MPI program
 * loads); a call site outside every module known (a library loaded later
 * with dlopen) makes Go list them again. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "modules.h"

/* Guards the table and the pending call sites: threads look up call
 * sites at once, and Go (cpathGoModules) runs with it held. */
pthread_mutex_t cp_mods_mu = PTHREAD_MUTEX_INITIALIZER;

#define CP_MAXMODS 1024
static struct {
	uint64_t start, end;
	int logged;
} cp_known[CP_MAXMODS];
static int cp_nknown;
/* a logged module: the last call site this thread looked up was in it */
__thread __attribute__((tls_model("initial-exec"))) uint64_t cp_hit_lo, cp_hit_len;
volatile int cp_mods_stale;
/* Call sites that need a module logged (or the modules listed again). */
#define CP_MAXPEND 64
uint64_t cp_mods_pend[CP_MAXPEND];
int cp_nmods_pend;

struct cp_iter {
	cp_module *out;
	int max, n;
};

static void cp_build_id(struct dl_phdr_info *info, cp_module *m) {
	m->idlen = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *e = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= e) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof *nh;
			const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
			const unsigned char *next = desc + ((nh->n_descsz + 3) & ~3u);
			if (next > e)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
				int n = nh->n_descsz < sizeof m->id ? (int)nh->n_descsz : (int)sizeof m->id;
				memcpy(m->id, desc, (size_t)n);
				m->idlen = n;
				return;
			}
			p = next;
		}
	}
}

static int cp_iter_cb(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	struct cp_iter *it = data;
	if (it->n >= it->max)
		return 1;
	cp_module *m = &it->out[it->n];
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uint64_t a = (uint64_t)info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
	}
	if (hi == 0)
		return 0;
	m->name = info->dlpi_name ? info->dlpi_name : "";
	m->base = (uint64_t)info->dlpi_addr;
	m->start = lo;
	m->end = hi;
	cp_build_id(info, m);
	it->n++;
	return 0;
}

/* The executable segments of the modules mapped at the last listing,
 * sorted, for the call-path walk: a return address outside them is no
 * caller's (code built without frame pointers leaves other values where
 * the walk looks) and ends the walk, without a lookup that would list the
 * modules again. Two tables: the walk reads the one published, without a
 * lock; a listing (rare) fills the other and publishes it. */
#define CP_MAXCODE 2048
typedef struct {
	uint64_t lo, hi;
} cp_range;
static cp_range cp_code_tab[2][CP_MAXCODE];
static int cp_code_n[2];
static int cp_code_cur;
/* the executable segment this thread's walk found last */
__thread __attribute__((tls_model("initial-exec"))) uint64_t cp_code_lo, cp_code_len;

struct cp_code_iter {
	cp_range *out;
	int n;
};

static int cp_code_cb(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	struct cp_code_iter *it = data;
	for (int i = 0; i < info->dlpi_phnum && it->n < CP_MAXCODE; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_memsz > 0) {
			uint64_t a = (uint64_t)info->dlpi_addr + ph->p_vaddr;
			it->out[it->n++] = (cp_range){a, a + ph->p_memsz};
		}
	}
	return 0;
}

/* cp_code_list lists the executable segments again: at MPI_Init and when
 * Go lists the modules (with cp_mods_mu held, so one writer at a time). */
static void cp_code_list(void) {
	int next = 1 - __atomic_load_n(&cp_code_cur, __ATOMIC_RELAXED);
	struct cp_code_iter it = {cp_code_tab[next], 0};
	dl_iterate_phdr(cp_code_cb, &it);
	for (int i = 1; i < it.n; i++) /* few: insertion sort */
		for (int j = i; j > 0 && it.out[j].lo < it.out[j - 1].lo; j--) {
			cp_range x = it.out[j];
			it.out[j] = it.out[j - 1];
			it.out[j - 1] = x;
		}
	cp_code_n[next] = it.n;
	__atomic_store_n(&cp_code_cur, next, __ATOMIC_RELEASE);
}

int cp_code_find(uint64_t pc) {
	int cur = __atomic_load_n(&cp_code_cur, __ATOMIC_ACQUIRE);
	const cp_range *r = cp_code_tab[cur];
	int lo = 0, hi = cp_code_n[cur];
	while (lo < hi) { /* the first range ending above pc */
		int mid = (lo + hi) / 2;
		if (r[mid].hi <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == cp_code_n[cur] || pc < r[lo].lo)
		return 0;
	cp_code_lo = r[lo].lo;
	cp_code_len = r[lo].hi - r[lo].lo;
	return 1;
}

int cp_modules(cp_module *out, int max) {
	struct cp_iter it = {out, max, 0};
	dl_iterate_phdr(cp_iter_cb, &it);
	return it.n;
}

/* cp_modules_known sets the table of modules: address ranges, and whether
 * each is in the log already. Called at MPI_Init, and from Go with
 * cp_mods_mu held. Other threads keep their last hit: a logged module
 * stays logged. */
void cp_modules_known(const cp_module *m, const int *logged, int n) {
	if (n > CP_MAXMODS)
		n = CP_MAXMODS;
	for (int i = 0; i < n; i++) {
		cp_known[i].start = m[i].start;
		cp_known[i].end = m[i].end;
		cp_known[i].logged = logged[i];
	}
	cp_nknown = n;
	cp_code_list();
	cp_hit_lo = cp_hit_len = 0;
	cp_mods_stale = 0;
	cp_nmods_pend = 0;
}

/* cp_module_miss looks up a call site outside the module of the last one:
 * in a logged module, it becomes the last one; otherwise the call site is
 * kept for Go to log its module (listing the modules again if it is in
 * none known). */
void cp_module_miss(uint64_t cs) {
	pthread_mutex_lock(&cp_mods_mu);
	for (int i = 0; i < cp_nknown; i++)
		if (cs >= cp_known[i].start && cs < cp_known[i].end) {
			if (cp_known[i].logged) {
				cp_hit_lo = cp_known[i].start;
				cp_hit_len = cp_known[i].end - cp_known[i].start;
				pthread_mutex_unlock(&cp_mods_mu);
				return;
			}
			cp_known[i].logged = 1; /* Go logs it */
			break;
		}
	if (cp_nmods_pend < CP_MAXPEND)
		cp_mods_pend[cp_nmods_pend++] = cs;
	cp_mods_stale = 1;
	pthread_mutex_unlock(&cp_mods_mu);
}
