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

/* mpi_f08 (f08.c): TYPE(MPI_Status) is the C struct in both MPIs (Open
 * MPI's mpif.h status too; MPICH's MPI_F08_status), but its IGNORE
 * sentinels are the f08 ones under MPICH. */
#if defined(OPEN_MPI)
#define CP_F08_FSTATUS CP_FSTATUS
#define CP_F08_STATUS_IGNORE MPI_F_STATUS_IGNORE
#define CP_F08_STATUSES_IGNORE MPI_F_STATUSES_IGNORE
#else
#define CP_F08_FSTATUS ((int)(sizeof(MPI_F08_status) / sizeof(MPI_Fint)))
#define CP_F08_STATUS_IGNORE ((MPI_Fint *)MPI_F08_STATUS_IGNORE)
#define CP_F08_STATUSES_IGNORE ((MPI_Fint *)MPI_F08_STATUSES_IGNORE)
#endif
const void *cp_f08_buf(const void *buf);
void cp_f08_status(const MPI_Fint *f, MPI_Status *c);
MPI_Fint *cp_f08_statuses_in(MPI_Fint *user, int n);
MPI_Status *cp_f08_statuses_out(const MPI_Fint *f, int n);
#endif
