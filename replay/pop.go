package replay

// Factors are the POP efficiency factors of the run or of one phase
// (https://pop-coe.eu, "POP metrics"), from the useful computation of each
// rank (its time outside MPI in the window) and two run times: the
// window's, and the ideal one, the longest path of the same graph with
// only the useful computation weighing (transfers and the MPI calls' own
// time free: an ideal network).
//
//	load balance             = avg(useful) / max(useful)
//	serialisation efficiency = max(useful) / ideal runtime
//	transfer efficiency      = ideal runtime / runtime
//	communication efficiency = max(useful) / runtime = serialisation × transfer
//	parallel efficiency      = load balance × communication efficiency = avg(useful) / runtime
//
// A ratio whose denominator is 0 is 1 (nothing to lose).
type Factors struct {
	LoadBalance             float64
	CommunicationEfficiency float64
	SerialisationEfficiency float64
	TransferEfficiency      float64
	ParallelEfficiency      float64
	From, To                int64   // the window, ns since the run's start
	RuntimeNs               int64   // To - From
	IdealRuntimeNs          int64   // the longest path of useful computation
	UsefulNs                []int64 // by rank (a rank's threads together)
	AvgUsefulNs             float64 // over the units of work: the ranks, or the threads of a rank of several
	MaxUsefulNs             int64   // the busiest unit's
}

// Phase is one stretch of the run between consecutive MPI_Pcontrol calls
// of each rank: phase 0 before the first, phase k after the k-th.
type Phase struct {
	Index int
	// Level is the level of the MPI_Pcontrol that opened the phase (none
	// for phase 0); 0 means the logger was paused in it, so that MPI calls
	// in it were not recorded and count as computation.
	Level *int32
	Factors
}

// POP is the run's factors, in the window from the end of the ranks'
// MPI_Init to the start of their MPI_Finalize, and its phases'.
type POP struct {
	Factors
	Phases []Phase
	// Window is the factors of Options.Window, clipped to the run's
	// window (nil without one).
	Window *Factors
}

// factors computes the ratios, from the useful computation of each unit
// of work (a rank, or each thread of a rank of several: rankInfo.units);
// useful (by rank, a rank's threads together) is reported.
func factors(useful, units []int64, from, to, ideal int64) Factors {
	f := Factors{From: from, To: to, RuntimeNs: max(0, to-from), IdealRuntimeNs: ideal, UsefulNs: useful}
	var sum int64
	for _, u := range units {
		sum += u
		f.MaxUsefulNs = max(f.MaxUsefulNs, u)
	}
	if len(units) > 0 {
		f.AvgUsefulNs = float64(sum) / float64(len(units))
	}
	maxU, rt, id := float64(f.MaxUsefulNs), float64(f.RuntimeNs), float64(ideal)
	f.LoadBalance = ratio(f.AvgUsefulNs, maxU)
	f.SerialisationEfficiency = ratio(maxU, id)
	f.TransferEfficiency = ratio(id, rt)
	f.CommunicationEfficiency = ratio(maxU, rt)
	f.ParallelEfficiency = f.LoadBalance * f.CommunicationEfficiency
	return f
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 1
	}
	return a / b
}
