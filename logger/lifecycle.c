/* lifecycle.c: the wrappers that start and end logging (MPI_Init,
 * MPI_Init_thread, MPI_Finalize, MPI_Abort) and MPI_Pcontrol, which pauses
 * it. Hand-written: their Fortran forms differ from the C ones. */
#include "cpathlog.h"

void cp_runtime_setup(void);

static int cp_provided(void) {
	int p = MPI_THREAD_SINGLE;
	PMPI_Query_thread(&p);
	return p;
}

/* A Fortran MPI_Init wrapper below may reach these through MPICH's
 * pmpi_init_, which calls MPI_Init: the Fortran one records it (cp_depth). */
int MPI_Init(int *argc, char ***argv) {
	if (cp_depth)
		return PMPI_Init(argc, argv);
	cp_runtime_setup();
	CP_SETFP();
	int64_t t0 = cp_now();
	int rc = PMPI_Init(argc, argv);
	cp_after_init(CP_OP_INIT, t0, CP_CALLSITE(), cp_provided(), rc);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
	if (cp_depth)
		return PMPI_Init_thread(argc, argv, required, provided);
	cp_runtime_setup();
	CP_SETFP();
	int64_t t0 = cp_now();
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	cp_after_init(CP_OP_INIT_THREAD, t0, CP_CALLSITE(), rc == MPI_SUCCESS ? *provided : 0, rc);
	return rc;
}

int MPI_Finalize(void) {
	if (!cp_depth) {
		CP_SETFP();
		cp_before_finalize(cp_now(), CP_CALLSITE());
	}
	return PMPI_Finalize();
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
	if (!cp_depth) {
		CP_SETFP();
		cp_before_abort(cp_now(), CP_CALLSITE(), comm, errorcode);
	}
	return PMPI_Abort(comm, errorcode);
}

int MPI_Pcontrol(const int level, ...) {
	int64_t t0 = cp_now();
	int rc = PMPI_Pcontrol(level);
	if (!cp_depth) {
		CP_SETFP();
		cp_pcontrol(t0, cp_now(), CP_CALLSITE(), level);
	}
	return rc;
}

/* Fortran: Open MPI's entries call PMPI_* directly, so they need wrappers of
 * their own, in the four manglings compilers use. */
extern void pmpi_init_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_finalize_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_abort_(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr) __attribute__((weak));

static void cpf_init(MPI_Fint *ierr, uint64_t cs, void *fp) {
	cp_runtime_setup();
	cp_fp = fp;
	int64_t t0 = cp_now();
	CP_ENTER();
	if (pmpi_init_)
		pmpi_init_(ierr);
	else
		*ierr = PMPI_Init(NULL, NULL);
	CP_LEAVE();
	cp_after_init(CP_OP_INIT, t0, cs, cp_provided(), (int)*ierr);
}

static void cpf_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr, uint64_t cs, void *fp) {
	cp_runtime_setup();
	cp_fp = fp;
	int64_t t0 = cp_now();
	CP_ENTER();
	if (pmpi_init_thread_) {
		pmpi_init_thread_(required, provided, ierr);
	} else {
		int p = 0;
		*ierr = PMPI_Init_thread(NULL, NULL, (int)*required, &p);
		*provided = p;
	}
	CP_LEAVE();
	cp_after_init(CP_OP_INIT_THREAD, t0, cs, (int)*provided, (int)*ierr);
}

static void cpf_finalize(MPI_Fint *ierr, uint64_t cs, void *fp) {
	if (!cp_depth) {
		cp_fp = fp;
		cp_before_finalize(cp_now(), cs);
	}
	if (pmpi_finalize_)
		pmpi_finalize_(ierr);
	else
		*ierr = PMPI_Finalize();
}

static void cpf_abort(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr, uint64_t cs, void *fp) {
	if (!cp_depth) {
		cp_fp = fp;
		cp_before_abort(cp_now(), cs, PMPI_Comm_f2c(*comm), (int)*errorcode);
	}
	if (pmpi_abort_)
		pmpi_abort_(comm, errorcode, ierr);
	else
		*ierr = PMPI_Abort(PMPI_Comm_f2c(*comm), (int)*errorcode);
}

static void cpf_pcontrol(MPI_Fint *level, uint64_t cs, void *fp) {
	int64_t t0 = cp_now();
	PMPI_Pcontrol((int)*level);
	if (!cp_depth) {
		cp_fp = fp;
		cp_pcontrol(t0, cp_now(), cs, (int)*level);
	}
}

#define CP_FORTRAN4(lower, upper, params, args)                                                    \
	void lower##_ params { cpf_##lower args; CP_NOTAIL(); }                                     \
	void lower##__ params { cpf_##lower args; CP_NOTAIL(); }                                    \
	void lower params { cpf_##lower args; CP_NOTAIL(); }                                        \
	void upper params { cpf_##lower args; CP_NOTAIL(); }

#define CS CP_CALLSITE(), __builtin_frame_address(0)
/* cpf_mpi_* names for the macro */
#define cpf_mpi_init cpf_init
#define cpf_mpi_init_thread cpf_init_thread
#define cpf_mpi_finalize cpf_finalize
#define cpf_mpi_abort cpf_abort
#define cpf_mpi_pcontrol cpf_pcontrol
CP_FORTRAN4(mpi_init, MPI_INIT, (MPI_Fint * ierr), (ierr, CS))
CP_FORTRAN4(mpi_init_thread, MPI_INIT_THREAD, (MPI_Fint * required, MPI_Fint * provided, MPI_Fint * ierr),
	    (required, provided, ierr, CS))
CP_FORTRAN4(mpi_finalize, MPI_FINALIZE, (MPI_Fint * ierr), (ierr, CS))
CP_FORTRAN4(mpi_abort, MPI_ABORT, (MPI_Fint * comm, MPI_Fint * errorcode, MPI_Fint * ierr), (comm, errorcode, ierr, CS))
CP_FORTRAN4(mpi_pcontrol, MPI_PCONTROL, (MPI_Fint * level), (level, CS))
