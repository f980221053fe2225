/* mpit.h: the MPI's eager limits, read through the MPI tool interface (mpit.c). */
#ifndef CPATH_MPIT_H
#define CPATH_MPIT_H
#include <stdint.h>

typedef struct cp_cvar {
	char name[128];
	int64_t value;
} cp_cvar;

int cp_eager_limits(cp_cvar *out, int max);
#endif
