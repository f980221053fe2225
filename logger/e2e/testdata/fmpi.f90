! fmpi.f90: Fortran end-to-end test program for the cpath logger through
! the mpif.h binding (the mpi_*_ symbols in libmpi_mpifh).
program fmpi
  implicit none
  include 'mpif.h'
  include 'fbody.inc'
end program fmpi
