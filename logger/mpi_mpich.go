//go:build mpich

package main

// The logger for MPICH, built with -tags mpich: lib/libcpathlog-mpich.so.

// #cgo pkg-config: mpich
import "C"
