/* fortran.c: conversions for the Fortran wrappers: arrays of handles and
 * statuses, 1-based indices. Only what the logger records is converted;
 * the call itself goes to Open MPI's Fortran PMPI entry unchanged. */
#include <stdlib.h>
#include "cpathlog.h"
#include "fortran.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "the logger assumes default Fortran INTEGER");

MPI_Request *cp_f_reqs(const MPI_Fint *f, int n, MPI_Request *small, int nsmall) {
	MPI_Request *r = n <= nsmall ? small : malloc(sizeof(MPI_Request) * (size_t)n);
	for (int i = 0; i < n; i++)
		r[i] = PMPI_Request_f2c(f[i]);
	return r;
}

MPI_Datatype *cp_f_types(const MPI_Fint *f, int n) {
	MPI_Datatype *t = malloc(sizeof(MPI_Datatype) * (size_t)(n > 0 ? n : 1));
	for (int i = 0; i < n; i++)
		t[i] = f ? PMPI_Type_f2c(f[i]) : MPI_DATATYPE_NULL;
	return t;
}

/* Statuses the program ignores are still needed to resolve wildcard sources. */
MPI_Fint *cp_f_statuses_in(MPI_Fint *user, int n) {
	if (user != MPI_F_STATUSES_IGNORE)
		return user;
	return calloc((size_t)(n > 0 ? n : 1), sizeof(MPI_Fint) * (size_t)CP_FSTATUS);
}

MPI_Status *cp_f_statuses_out(const MPI_Fint *f, int n) {
	MPI_Status *s = calloc((size_t)(n > 0 ? n : 1), sizeof(MPI_Status));
	for (int i = 0; i < n; i++)
		PMPI_Status_f2c(f + (size_t)i * CP_FSTATUS, &s[i]);
	return s;
}

void cp_f_statuses_free(MPI_Fint *f, MPI_Fint *user, MPI_Status *c) {
	if (f != user)
		free(f);
	free(c);
}

int *cp_f_indices(const MPI_Fint *f, int n) {
	int *x = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	for (int i = 0; i < n; i++)
		x[i] = f[i] - 1;
	return x;
}
