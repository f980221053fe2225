// Package cpathtest holds what the tests of package cpath and its MPI test
// drivers share: graph and run generators, and the in-process job of
// internal/mpix/mpixtest.
package cpathtest

import (
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
)

// Run runs f on every rank of an in-process job of p ranks (mpix.Single
// for one) and waits for all.
func Run(p int, f func(c mpix.Comm)) { mpixtest.Run(p, f) }
