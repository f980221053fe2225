package replay

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ScenarioKind is what a what-if scenario changes.
type ScenarioKind uint8

const (
	// Balance (balance:R) scales rank R's useful computation so that it
	// totals the mean of the ranks' useful computation (POP's, in the
	// window from MPI_Init to MPI_Finalize).
	Balance ScenarioKind = iota
	// RankScale (rank:R=F) scales rank R's computation by F.
	RankScale
	// Callsite (callsite:X=F) scales the computation before the calls at
	// call site X, on every rank, by F: the stretches the report names
	// "before the call at X".
	Callsite
	// Transfers (transfers=F) scales the transfers of messages,
	// collectives and one-sided synchronisations (transferKinds, not the
	// calls' own time) by F.
	Transfers
	// MPITime (mpi=F) scales the MPI calls' own time (what a call did
	// that was not waiting or a transfer: copies, protocol) by F. With
	// transfers=0 as well, the network is about POP's ideal one (which
	// also leaves out the sends held by their receivers' progress).
	MPITime
)

// Scenario is one what-if question.
type Scenario struct {
	Text   string // as the report shows it
	Kind   ScenarioKind
	Rank   int
	Site   string
	Factor float64
}

// ScenarioSyntax is the what-if scenarios' syntax, for help and errors.
const ScenarioSyntax = "balance:RANK, rank:RANK=FACTOR, callsite:SITE=FACTOR, transfers=FACTOR or mpi=FACTOR"

// Parse reads a scenario: balance:R, rank:R=F, callsite:X=F (X a call
// site as the report names it, "file.c:42", a function, or its hex
// address "0x4011d6"), transfers=F, mpi=F. Factors are non-negative
// numbers.
func Parse(s string) (Scenario, error) {
	bad := func(why string) (Scenario, error) {
		return Scenario{}, fmt.Errorf("--what-if %q: %s (want %s)", s, why, ScenarioSyntax)
	}
	factor := func(f string) (float64, bool) {
		x, err := strconv.ParseFloat(f, 64)
		return x, err == nil && x >= 0 && !math.IsInf(x, 0) && !math.IsNaN(x)
	}
	rank := func(r string) (int, bool) {
		x, err := strconv.Atoi(r)
		return x, err == nil && x >= 0
	}
	head, rest, _ := strings.Cut(s, ":")
	switch {
	case head == "balance":
		r, ok := rank(rest)
		if !ok {
			return bad("RANK is not a rank number")
		}
		return Scenario{Text: s, Kind: Balance, Rank: r, Factor: 1}, nil
	case head == "rank":
		rs, fs, ok := strings.Cut(rest, "=")
		if !ok {
			return bad("no =FACTOR")
		}
		r, ok := rank(rs)
		if !ok {
			return bad("RANK is not a rank number")
		}
		f, ok := factor(fs)
		if !ok {
			return bad("FACTOR is not a non-negative number")
		}
		return Scenario{Text: s, Kind: RankScale, Rank: r, Factor: f}, nil
	case head == "callsite":
		i := strings.LastIndexByte(rest, '=')
		if i <= 0 {
			return bad("no SITE=FACTOR")
		}
		f, ok := factor(rest[i+1:])
		if !ok {
			return bad("FACTOR is not a non-negative number")
		}
		return Scenario{Text: s, Kind: Callsite, Site: rest[:i], Factor: f}, nil
	case strings.HasPrefix(s, "transfers="):
		f, ok := factor(strings.TrimPrefix(s, "transfers="))
		if !ok {
			return bad("FACTOR is not a non-negative number")
		}
		return Scenario{Text: s, Kind: Transfers, Factor: f}, nil
	case strings.HasPrefix(s, "mpi="):
		f, ok := factor(strings.TrimPrefix(s, "mpi="))
		if !ok {
			return bad("FACTOR is not a non-negative number")
		}
		return Scenario{Text: s, Kind: MPITime, Factor: f}, nil
	}
	return bad("unknown scenario")
}

// describe says what the scenario asks, for people.
func (s *Scenario) describe() string {
	switch s.Kind {
	case Balance:
		return fmt.Sprintf("rank %d's computation balanced (scaled by %.3g to the ranks' mean)", s.Rank, s.Factor)
	case RankScale:
		return fmt.Sprintf("rank %d's computation × %g", s.Rank, s.Factor)
	case Callsite:
		return fmt.Sprintf("the computation before the calls at %s × %g", s.Site, s.Factor)
	case MPITime:
		if s.Factor == 0 {
			return "MPI calls' own time free (transfers and waits unchanged)"
		}
		return fmt.Sprintf("MPI calls' own time × %g", s.Factor)
	}
	if s.Factor == 0 {
		return "transfers free (MPI calls' own time unchanged)"
	}
	return fmt.Sprintf("transfers × %g", s.Factor)
}

// matchSite reports whether scenario site x names the call site the report
// names name, in function (if known; hex is its hexadecimal offset form,
// "0x4011d6"): the same name, the same address, a name's last path
// elements ("src/a.c:42" for "/home/u/src/a.c:42"), the function (every
// call site in it), or a function name before its "+0x…" offset.
func matchSite(x, name, function, hex string) bool {
	if x == name || x == hex || function != "" && x == function {
		return true
	}
	if strings.HasPrefix(x, "0x") || strings.HasPrefix(x, "0X") {
		a, err1 := strconv.ParseUint(x[2:], 16, 64)
		b, err2 := strconv.ParseUint(strings.TrimPrefix(hex, "0x"), 16, 64)
		return err1 == nil && err2 == nil && a == b
	}
	if strings.HasSuffix(name, "/"+x) {
		return true
	}
	if f, _, ok := strings.Cut(name, "+0x"); ok && f == x {
		return true
	}
	return false
}
