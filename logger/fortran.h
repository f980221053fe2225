/* fortran.h: helpers for the generated Fortran wrappers (fortran.c). */
#ifndef CPATH_FORTRAN_H
#define CPATH_FORTRAN_H
#include <mpi.h>

/* MPI_STATUS_SIZE: Open MPI's Fortran status is the C struct seen as Fints. */
#define CP_FSTATUS ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))

MPI_Request *cp_f_reqs(const MPI_Fint *f, int n, MPI_Request *small, int nsmall);
MPI_Datatype *cp_f_types(const MPI_Fint *f, int n);
MPI_Fint *cp_f_statuses_in(MPI_Fint *user, int n);
MPI_Status *cp_f_statuses_out(const MPI_Fint *f, int n);
void cp_f_statuses_free(MPI_Fint *f, MPI_Fint *user, MPI_Status *c);
int *cp_f_indices(const MPI_Fint *f, int n);
#endif
