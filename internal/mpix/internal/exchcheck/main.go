//go:build mpi

// Command exchcheck runs mpix's exchanges over MPI_COMM_WORLD under
// mpirun and checks what every rank receives: Alltoallv, ShipFlat,
// GatherWhole, Allgatherv and Gatherv with parts of different sizes
// (empty ones too), Allgatherv and Gather of framed messages of
// structured values, and an Alltoallv whose part is over 2 GiB / P (its
// size flag raised: one more collective, and two rounds within MPI's int
// counts). Then the same exchanges again with the bytes of one MPI call
// lowered to 1500 (mpix.SetRoundLimit): exchanges over MPI's 2 GiB
// limit go in rounds, which these check without GiBs of memory. Each rank
// prints one line per case, "OK rank R: case" or "FAIL rank R: case:
// why"; internal/mpix/world_mpi_test.go counts them.
package main

import (
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/emer/empi/mpi"
)

func main() {
	mpi.Init()
	c := mpix.World()
	failed := false
	report := func(name string, err error) {
		if err != nil {
			failed = true
			fmt.Printf("FAIL rank %d: %s: %v\n", c.Rank(), name, err)
			return
		}
		fmt.Printf("OK rank %d: %s\n", c.Rank(), name)
	}
	for _, k := range cases {
		report(k.name, k.run(c))
	}
	report(huge.name, huge.run(c))
	mpix.SetRoundLimit(1500)
	for _, k := range cases {
		report(k.name+" in rounds of 1500 bytes", k.run(c))
	}
	mpi.Finalize()
	if failed {
		os.Exit(1)
	}
}

// payload is what rank from sends rank to: its size depends on both (zero
// for some pairs), its bytes on both and the position.
func payload(from, to, scale int) []byte {
	n := ((from*7 + to*3) % 5) * scale
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(from*31 + to*17 + i)
	}
	return b
}

func check(what string, got, want []byte) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("%s: byte %d is %d, want %d", what, i, got[i], want[i])
		}
	}
	return nil
}

var cases = []struct {
	name string
	run  func(c mpix.Comm) error
}{
	{"alltoallv", func(c mpix.Comm) error {
		for _, scale := range []int{1, 1000, 100000} {
			send := make([][]byte, c.Size())
			for p := range send {
				send[p] = payload(c.Rank(), p, scale)
			}
			recv, err := c.Alltoallv(send)
			if err != nil {
				return err
			}
			for p, b := range recv {
				if err := check(fmt.Sprintf("scale %d, from rank %d", scale, p), b, payload(p, c.Rank(), scale)); err != nil {
					return err
				}
			}
		}
		return nil
	}},
	{"shipflat", func(c mpix.Comm) error {
		// The parts one after another in one array, of int32s.
		for _, scale := range []int{1, 1000, 100000} {
			var flat []int32
			counts := make([]int, c.Size())
			for p := range counts {
				b := payload(c.Rank(), p, scale)
				for _, x := range b {
					flat = append(flat, int32(x)<<8|int32(p))
				}
				counts[p] = len(b)
			}
			got, from, err := mpix.ShipFlat(c, flat[:len(flat):len(flat)], counts)
			if err != nil {
				return err
			}
			off := 0
			for p, k := range from {
				have := make([]byte, 0, k)
				for _, x := range got[off : off+k] {
					if int(x&0xff) != c.Rank() {
						return fmt.Errorf("shipflat scale %d: rank %d's value for rank %d came here", scale, p, x&0xff)
					}
					have = append(have, byte(x>>8))
				}
				if err := check(fmt.Sprintf("shipflat scale %d, from rank %d", scale, p), have, payload(p, c.Rank(), scale)); err != nil {
					return err
				}
				off += k
			}
			if off != len(got) {
				return fmt.Errorf("shipflat: %d values from the ranks' counts, %d received", off, len(got))
			}
		}
		return nil
	}},
	{"gatherwhole", func(c mpix.Comm) error {
		whole, sizes, err := mpix.GatherWhole(c, payload(c.Rank(), 0, 1000))
		if err != nil || c.Rank() != 0 {
			return err
		}
		off := 0
		for p, k := range sizes {
			if err := check(fmt.Sprintf("gatherwhole from rank %d", p), whole[off:off+k], payload(p, 0, 1000)); err != nil {
				return err
			}
			off += k
		}
		if off != len(whole) {
			return fmt.Errorf("gatherwhole: %d bytes in the sizes, %d gathered", off, len(whole))
		}
		return nil
	}},
	{"allgatherv", func(c mpix.Comm) error {
		return gathered(c.Allgatherv(payload(c.Rank(), 0, 1000)))
	}},
	{"gatherv", func(c mpix.Comm) error {
		return gathered(c.Gatherv(payload(c.Rank(), 0, 1000)))
	}},
	{"framed", func(c mpix.Comm) error {
		v := value(c.Rank())
		e := mpix.NewEncoder(nil)
		v.put(e)
		msgs, err := c.Allgatherv(e.Bytes())
		if err != nil {
			return err
		}
		all := make([]structured, len(msgs))
		for p, b := range msgs {
			d := mpix.NewDecoder(b)
			all[p] = readStructured(d)
			if err := d.Done(); err != nil {
				return fmt.Errorf("allgatherv of framed messages: rank %d's: %v", p, err)
			}
		}
		if err := values("allgatherv of framed messages", all, c.Size()); err != nil {
			return err
		}
		got, err := mpix.Gather(c, v.put, readStructured)
		if err != nil {
			return err
		}
		if c.Rank() != 0 {
			if got != nil {
				return fmt.Errorf("gather: rank %d got %d values, want none", c.Rank(), len(got))
			}
			return nil
		}
		return values("gather", got, c.Size())
	}},
}

// structured is a value of the kind that crosses ranks in the framed
// form: a string, lists of lists, a map as records of key and value, bytes.
type structured struct {
	Name  string
	Lists [][]int32
	Count map[string]int64
	Big   []byte
}

func (v *structured) put(e *mpix.Encoder) {
	e.PutString(v.Name)
	mpix.PutList(e, v.Lists, func(e *mpix.Encoder, l *[]int32) { mpix.PutRecords(e, *l) })
	keys := slices.Sorted(maps.Keys(v.Count))
	mpix.PutList(e, keys, func(e *mpix.Encoder, k *string) {
		e.PutString(*k)
		mpix.PutRecord(e, v.Count[*k])
	})
	e.PutBytes(v.Big)
}

func readStructured(d *mpix.Decoder) structured {
	var v structured
	v.Name = d.ReadString()
	v.Lists = mpix.ReadList(d, func(d *mpix.Decoder, l *[]int32) { *l = mpix.ReadRecords[int32](d) })
	v.Count = map[string]int64{}
	mpix.ReadList(d, func(d *mpix.Decoder, k *string) {
		*k = d.ReadString()
		v.Count[*k] = mpix.ReadRecord[int64](d)
	})
	v.Big = d.ReadBytes()
	return v
}

// value is what rank r sends: its size depends on r (rank 0's lists are
// empty, and so is its Big at some sizes).
func value(r int) structured {
	v := structured{Name: fmt.Sprintf("rank %d", r), Count: map[string]int64{"r": int64(r), "neg": -int64(r) << 40},
		Big: payload(r, 1, 1000)}
	for i := 0; i < r; i++ {
		v.Lists = append(v.Lists, []int32{int32(i), int32(r), -1})
	}
	if len(v.Big) == 0 {
		v.Big = nil // empty bytes read back as nil
	}
	return v
}

// values checks that got holds every rank's value, by rank.
func values(what string, got []structured, size int) error {
	if len(got) != size {
		return fmt.Errorf("%s: %d values, want %d", what, len(got), size)
	}
	for p, v := range got {
		if want := value(p); !reflect.DeepEqual(v, want) {
			return fmt.Errorf("%s: rank %d's value is %+v, want %+v", what, p, v, want)
		}
	}
	return nil
}

// gathered checks what a gather of every rank's payload(rank, 0, 1000)
// returned here (nothing on the ranks a Gatherv leaves out).
func gathered(recv [][]byte, err error) error {
	if err != nil {
		return err
	}
	for p, b := range recv {
		if err := check(fmt.Sprintf("from rank %d", p), b, payload(p, 0, 1000)); err != nil {
			return err
		}
	}
	return nil
}

// huge is the case at MPI's real limit, run once: in rounds, it moves a
// GiB.
var huge = struct {
	name string
	run  func(c mpix.Comm) error
}{"alltoallv with a part over 2 GiB / P", func(c mpix.Comm) error {
	// Rank 0 sends the last rank one part just over the flag's bound.
	n := math.MaxInt32/c.Size() + 1
	last := c.Size() - 1
	send := make([][]byte, c.Size())
	if c.Rank() == 0 {
		send[last] = make([]byte, n)
		send[last][n-1] = 42
	}
	recv, err := c.Alltoallv(send)
	if err != nil {
		return err
	}
	for p, b := range recv {
		want := 0
		if p == 0 && c.Rank() == last {
			want = n
		}
		if len(b) != want {
			return fmt.Errorf("%d bytes from rank %d, want %d", len(b), p, want)
		}
		if want > 0 && b[n-1] != 42 {
			return fmt.Errorf("the last byte from rank 0 is %d, want 42", b[n-1])
		}
	}
	return nil
}}
