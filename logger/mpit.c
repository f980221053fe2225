/*
 * mpit.c: the control variables that say up to what size the MPI may
 * complete a send before its receiver takes part (eager limits: Open MPI's
 * btl_*_eager_limit, MPICH's MPIR_CVAR_*EAGER*_SIZE…), read in
 * MPI_Finalize, once the call is recorded, for a chunk at the end of the
 * log. They explain the analyzer's Late Receiver decisions; the timing in
 * the log decides.
 *
 * Under Open MPI they are read from its MCA variable registry, which
 * MPI_Init filled with the variables of the components it opened: 0.2 ms.
 * The MPI tool interface, the portable way, is the fallback: its start-up
 * takes Open MPI 4.1 about 0.2 s, which every job paid at its end.
 */
#define _GNU_SOURCE /* strcasestr */
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mpit.h"

/* eager says whether a control variable's name is an eager size limit:
 * "eager" with "limit", "size" or "_sz" (Open MPI's btl_vader_eager_limit,
 * MPICH's MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE and _NEMESIS_SHM_EAGER_MAX_SZ).
 * MPICH's MPIR_CVAR_CTXID_EAGER_SIZE has the words but counts context id
 * words, not message bytes. */
static int eager(const char *name)
{
	if (!strcasestr(name, "eager") || strcasestr(name, "ctxid"))
		return 0;
	return strcasestr(name, "limit") || strcasestr(name, "size") || strcasestr(name, "_sz");
}

/* ompi_eager_limits is cp_eager_limits from Open MPI's MCA variables:
 * each dumped as "name=value (source)" by mca_base_var_dump (the form
 * ompi_info prints; the registry's own API, stable since Open MPI 1.8, where
 * MPI_T reads the same values), those with an integer value kept. It
 * returns -1 where the MPI is not Open MPI or has no such registry. */
static int ompi_eager_limits(cp_cvar *out, int max)
{
	char version[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0;
	if (PMPI_Get_library_version(version, &len) != MPI_SUCCESS || strncmp(version, "Open MPI v", 10) != 0)
		return -1;
	int (*count)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "mca_base_var_get_count");
	int (*dump)(int, char ***, int) = (int (*)(int, char ***, int))dlsym(RTLD_DEFAULT, "mca_base_var_dump");
	if (!count || !dump)
		return -1;
	enum { DUMP_SIMPLE = 2 }; /* MCA_BASE_VAR_DUMP_SIMPLE */
	int n = 0, num = count();
	for (int i = 0; i < num; i++) {
		char **lines = NULL;
		if (dump(i, &lines, DUMP_SIMPLE) != 0 || lines == NULL)
			continue;
		for (int k = 0; lines[k] != NULL; k++) {
			char *eq = strchr(lines[k], '='), *end;
			if (eq != NULL && n < max && (size_t)(eq - lines[k]) < sizeof out->name) {
				*eq = 0;
				long long v = strtoll(eq + 1, &end, 10);
				if (eager(lines[k]) && end != eq + 1 && (*end == ' ' || *end == 0)) {
					strcpy(out[n].name, lines[k]);
					out[n].value = v;
					n++;
				}
			}
			free(lines[k]);
		}
		free(lines);
	}
	return n;
}

/* cp_eager_limits fills out with up to max eager limits (integer control
 * variables bound to no object) and returns how many: Open MPI's from its
 * registry, others' through the MPI tool interface. The logger's own
 * calls go to PMPI_T, so a tool layered above it sees none of them.
 *
 * MPI_T_init_thread asks for the thread level MPI_Init provided: Open MPI
 * (4.1) takes the first MPI_T_init_thread's level as the library's, so
 * asking for MPI_THREAD_SINGLE switched off its locking in a program that
 * had MPI_THREAD_MULTIPLE, which then crashed or hung in ob1's matching
 * when several threads communicated. */
int cp_eager_limits(cp_cvar *out, int max)
{
	int n = ompi_eager_limits(out, max);
	if (n >= 0)
		return n;
	n = 0;
	int level = MPI_THREAD_SINGLE, provided, num;
	PMPI_Query_thread(&level);
	if (PMPI_T_init_thread(level, &provided) != MPI_SUCCESS)
		return 0;
	if (PMPI_T_cvar_get_num(&num) != MPI_SUCCESS)
		num = 0;
	for (int i = 0; i < num && n < max; i++) {
		char name[sizeof out->name];
		int nlen = sizeof name, verb, bind, scope, dlen = 0, count;
		MPI_Datatype dt;
		MPI_T_enum en;
		MPI_T_cvar_handle h;
		if (PMPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, NULL, &dlen, &bind, &scope) != MPI_SUCCESS)
			continue;
		if (bind != MPI_T_BIND_NO_OBJECT || !eager(name))
			continue;
		if (PMPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS)
			continue;
		union {
			int i;
			unsigned u;
			unsigned long ul;
			unsigned long long ull;
			MPI_Count c;
			char pad[64];
		} v;
		int ok = count == 1 && PMPI_T_cvar_read(h, &v) == MPI_SUCCESS;
		PMPI_T_cvar_handle_free(&h);
		if (!ok)
			continue;
		int64_t x;
		if (dt == MPI_INT)
			x = v.i;
		else if (dt == MPI_UNSIGNED)
			x = v.u;
		else if (dt == MPI_UNSIGNED_LONG)
			x = (int64_t)v.ul;
		else if (dt == MPI_UNSIGNED_LONG_LONG)
			x = (int64_t)v.ull;
		else if (dt == MPI_COUNT)
			x = (int64_t)v.c;
		else
			continue;
		memcpy(out[n].name, name, sizeof name);
		out[n].value = x;
		n++;
	}
	PMPI_T_finalize();
	return n;
}
