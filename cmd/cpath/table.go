package main

import (
	"io"
	"strings"
	"unicode/utf8"
)

// table prints aligned columns: text columns left-aligned, the others (those
// marked in right) right-aligned, two spaces apart, no trailing blanks.
type table struct {
	right []bool
	rows  [][]string
}

func newTable(header ...string) *table {
	t := &table{right: make([]bool, len(header))}
	t.rows = append(t.rows, header)
	return t
}

// alignRight marks columns as right-aligned (numbers).
func (t *table) alignRight(cols ...int) *table {
	for _, c := range cols {
		t.right[c] = true
	}
	return t
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	width := make([]int, len(t.right))
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if t.right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
