package main

import (
	"strings"
	"testing"
)

// FuzzParseRecordArgs: record's own argument parser never panics, and what
// it accepts has a program, and passes every argument after "--" to it
// unchanged.
func FuzzParseRecordArgs(f *testing.F) {
	for _, s := range []string{
		"-o logs -np 4 -- ./app 1 2",
		"--output=x --force --mpirun /usr/bin/mpirun -- a",
		"-np 2 --oversubscribe",
		"-o -- app",
		"-- -- --",
		"--help",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, " ")
		o, err := parseRecordArgs(args)
		if err != nil || o.help {
			return
		}
		if len(o.prog) == 0 {
			t.Fatalf("%q: accepted without a program", line)
		}
		dash := -1
		for i, a := range args {
			if a == "--" {
				dash = i
				break
			}
		}
		if dash < 0 || strings.Join(args[dash+1:], "\x00") != strings.Join(o.prog, "\x00") {
			t.Fatalf("%q: program %q", line, o.prog)
		}
	})
}
