//go:build !mpich

package main

// The logger for Open MPI (the default): lib/libcpathlog.so. The flags of
// a package's cgo directives apply to all its C files.

// #cgo pkg-config: ompi
import "C"
