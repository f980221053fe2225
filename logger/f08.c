/* f08.c: the mpi_f08 binding. Neither MPI's mpi_f08 procedures reach the
 * logger's C or mpif.h wrappers: Open MPI's (mpi_send_f08_ in
 * libmpi_usempif08) call ompi_send_f, which calls PMPI_Send; MPICH's (in
 * libmpichfort) call PMPI_Barrier, PMPI_Wait, PMPI_Init, … directly, and
 * only those with a choice buffer (mpi_send_f08ts_) reach the C MPI_Send,
 * from inside the library. So the logger wraps the f08 entries themselves
 * (generated, see internal/gen), and a C call made inside one is passed
 * through (cp_depth): each call is recorded once, at the program's call
 * site. Here: the conversions the generated f08 wrappers need, and the
 * lifecycle entries (hand-written like lifecycle.c's). */
#include <stdlib.h>
#include "cpathlog.h"
#include "fortran.h"

void cp_runtime_setup(void);

#if defined(OPEN_MPI)
/* Open MPI's mpi_f08 passes choice buffers as addresses, with the mpif.h
 * sentinels (mpi_fortran_in_place_, …). */
const void *cp_f08_buf(const void *buf) { return cp_f_buf(buf); }

void cp_f08_status(const MPI_Fint *f, MPI_Status *c) { PMPI_Status_f2c(f, c); }

MPI_Fint *cp_f08_statuses_in(MPI_Fint *user, int n) { return cp_f_statuses_in(user, n); }

MPI_Status *cp_f08_statuses_out(const MPI_Fint *f, int n) { return cp_f_statuses_out(f, n); }
#else
/* MPICH's mpi_f08 takes choice buffers as TYPE(*), DIMENSION(..): the
 * argument is an array descriptor, whose first field is the address (in
 * gfortran's descriptor and in ISO_Fortran_binding's CFI_cdesc_t alike).
 * MPI_IN_PLACE and MPI_BOTTOM are the f08 module's own variables. */
extern int MPIR_F08_MPI_IN_PLACE __attribute__((weak));
extern int MPIR_F08_MPI_BOTTOM __attribute__((weak));

const void *cp_f08_buf(const void *desc) {
	if (!desc)
		return NULL;
	const void *buf = *(const void *const *)desc;
	if (&MPIR_F08_MPI_IN_PLACE && buf == &MPIR_F08_MPI_IN_PLACE)
		return MPI_IN_PLACE;
	if (&MPIR_F08_MPI_BOTTOM && buf == &MPIR_F08_MPI_BOTTOM)
		return MPI_BOTTOM;
	return buf;
}

_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPICH's f08 status is its C status");

void cp_f08_status(const MPI_Fint *f, MPI_Status *c) {
	const MPI_F08_status *s = (const MPI_F08_status *)f;
	c->count_lo = s->count_lo;
	c->count_hi_and_cancelled = s->count_hi_and_cancelled;
	c->MPI_SOURCE = s->MPI_SOURCE;
	c->MPI_TAG = s->MPI_TAG;
	c->MPI_ERROR = s->MPI_ERROR;
}

/* Statuses the program ignores are still needed to resolve wildcard sources. */
MPI_Fint *cp_f08_statuses_in(MPI_Fint *user, int n) {
	if (user != CP_F08_STATUSES_IGNORE)
		return user;
	return calloc((size_t)(n > 0 ? n : 1), sizeof(MPI_F08_status));
}

MPI_Status *cp_f08_statuses_out(const MPI_Fint *f, int n) {
	MPI_Status *s = calloc((size_t)(n > 0 ? n : 1), sizeof(MPI_Status));
	for (int i = 0; i < n; i++)
		cp_f08_status(f + (size_t)i * CP_F08_FSTATUS, &s[i]);
	return s;
}
#endif

/* The lifecycle entries: MPI_Init, MPI_Init_thread, MPI_Finalize,
 * MPI_Abort (ierror OPTIONAL) and MPI_Pcontrol (none). */
#if defined(OPEN_MPI)
#define CPF08_PM(name) pmpi_##name##_f08_
#define CPF08_ENTRY(name) mpi_##name##_f08_
#else
#define CPF08_PM(name) pmpir_##name##_f08_
#define CPF08_ENTRY(name) mpi_##name##_f08_
#endif
extern void CPF08_PM(init)(MPI_Fint *ierr) __attribute__((weak));
extern void CPF08_PM(init_thread)(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) __attribute__((weak));
extern void CPF08_PM(finalize)(MPI_Fint *ierr) __attribute__((weak));
extern void CPF08_PM(abort)(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr) __attribute__((weak));

static void cpf08_init(MPI_Fint *ierr, uint64_t cs, void *fp) {
	MPI_Fint e = MPI_SUCCESS;
	cp_runtime_setup();
	cp_fp = fp;
	int64_t t0 = cp_now();
	CP_ENTER(); /* a C MPI_Init reached from inside is not recorded again */
	if (CPF08_PM(init))
		CPF08_PM(init)(&e);
	else
		e = PMPI_Init(NULL, NULL);
	CP_LEAVE();
	int provided = MPI_THREAD_SINGLE;
	PMPI_Query_thread(&provided);
	cp_after_init(CP_OP_INIT, t0, cs, provided, (int)e);
	if (ierr)
		*ierr = e;
}

static void cpf08_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr, uint64_t cs, void *fp) {
	MPI_Fint e = MPI_SUCCESS;
	cp_runtime_setup();
	cp_fp = fp;
	int64_t t0 = cp_now();
	CP_ENTER();
	if (CPF08_PM(init_thread)) {
		CPF08_PM(init_thread)(required, provided, &e);
	} else {
		int p = 0;
		e = PMPI_Init_thread(NULL, NULL, (int)*required, &p);
		*provided = p;
	}
	CP_LEAVE();
	cp_after_init(CP_OP_INIT_THREAD, t0, cs, e == MPI_SUCCESS ? (int)*provided : 0, (int)e);
	if (ierr)
		*ierr = e;
}

static void cpf08_finalize(MPI_Fint *ierr, uint64_t cs, void *fp) {
	if (!cp_depth) {
		cp_fp = fp;
		cp_before_finalize(cp_now(), cs);
	}
	if (CPF08_PM(finalize)) {
		CPF08_PM(finalize)(ierr);
	} else {
		int e = PMPI_Finalize();
		if (ierr)
			*ierr = e;
	}
}

static void cpf08_abort(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr, uint64_t cs, void *fp) {
	if (!cp_depth) {
		cp_fp = fp;
		cp_before_abort(cp_now(), cs, PMPI_Comm_f2c(*comm), (int)*errorcode);
	}
	if (CPF08_PM(abort)) {
		CPF08_PM(abort)(comm, errorcode, ierr);
	} else {
		int e = PMPI_Abort(PMPI_Comm_f2c(*comm), (int)*errorcode);
		if (ierr)
			*ierr = e;
	}
}

static void cpf08_pcontrol(MPI_Fint *level, uint64_t cs, void *fp) {
	int64_t t0 = cp_now();
	PMPI_Pcontrol((int)*level);
	if (!cp_depth) {
		cp_fp = fp;
		cp_pcontrol(t0, cp_now(), cs, (int)*level);
	}
}

#define CS CP_CALLSITE(), __builtin_frame_address(0)
void CPF08_ENTRY(init)(MPI_Fint *ierr) {
	cpf08_init(ierr, CS);
	CP_NOTAIL();
}
void CPF08_ENTRY(init_thread)(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
	cpf08_init_thread(required, provided, ierr, CS);
	CP_NOTAIL();
}
void CPF08_ENTRY(finalize)(MPI_Fint *ierr) {
	cpf08_finalize(ierr, CS);
	CP_NOTAIL();
}
void CPF08_ENTRY(abort)(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr) {
	cpf08_abort(comm, errorcode, ierr, CS);
	CP_NOTAIL();
}
void CPF08_ENTRY(pcontrol)(MPI_Fint *level) {
	cpf08_pcontrol(level, CS);
	CP_NOTAIL();
}
