! fuse.f90: Fortran end-to-end test program for the cpath logger through
! the "use mpi" module binding. Same calls as fmpi.f90 (see fbody.inc).
program fuse
  use mpi
  implicit none
  include 'fbody.inc'
end program fuse
