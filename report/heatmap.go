package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"math/bits"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// HeatmapCells is the most cells a heatmap has along each axis: beyond
// that many ranks, cells are blocks of ranks (a power of two), their bytes
// summed, so that every cell stays a few pixels wide.
const HeatmapCells = 256

// HeatmapFormat is the image format of a heatmap file, by its extension:
// "png" or "svg".
func HeatmapFormat(name string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".png", ".svg":
		return ext[1:], nil
	case "":
		return "", fmt.Errorf("no file extension: want .png or .svg")
	default:
		return "", fmt.Errorf("unknown image format %q: want .png or .svg", ext)
	}
}

// HeatmapBlock is the number of ranks in one cell of a heatmap of ranks
// ranks: the least power of two that needs at most HeatmapCells cells.
func HeatmapBlock(ranks int) int {
	b := 1
	for (ranks+b-1)/b > HeatmapCells {
		b *= 2
	}
	return b
}

// WriteHeatmap draws the report's communication matrix as a heatmap, in
// the format of name's extension (HeatmapFormat): bytes from each source
// rank (rows, rank 0 at the top) to each destination rank (columns), on a
// log scale with its colour bar; point-to-point on the left, collective
// (by data flow) on the right when the run has any.
func WriteHeatmap(w io.Writer, r *Report, name string) error {
	format, err := HeatmapFormat(name)
	if err != nil {
		return err
	}
	type panel struct {
		title string
		pairs []Pair
	}
	panels := []panel{{"point-to-point bytes: %d messages, %s", r.CommMatrix.P2P}}
	if len(r.CommMatrix.Collective) > 0 {
		panels = append(panels, panel{"collective bytes (by data flow): %d transfers, %s", r.CommMatrix.Collective})
	}
	if len(r.CommMatrix.OneSided) > 0 {
		panels = append(panels, panel{"one-sided bytes (origin to target): %d transfers, %s", r.CommMatrix.OneSided})
	}
	const width, height, barWidth = 6.5 * vg.Inch, 5.5 * vg.Inch, 1.1 * vg.Inch
	var cw vg.CanvasWriterTo
	W := width * vg.Length(len(panels))
	if format == "png" {
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(W, height), vgimg.UseDPI(110))}
	} else {
		cw = vgsvg.New(W, height)
	}
	dc := draw.New(cw)
	// A white background: PNG viewers show transparency as they like.
	dc.SetColor(color.White)
	var bg vg.Path
	bg.Move(vg.Point{})
	bg.Line(vg.Point{X: W})
	bg.Line(vg.Point{X: W, Y: height})
	bg.Line(vg.Point{Y: height})
	bg.Close()
	dc.Fill(bg)
	for i, pn := range panels {
		var n, bytes int64
		for _, p := range pn.pairs {
			n, bytes = n+p.Count, bytes+p.Bytes
		}
		heat, bar := heatmapPlots(fmt.Sprintf(pn.title, n, sizeStr(bytes)), pn.pairs, r.Run.Ranks)
		col := draw.Crop(dc, width*vg.Length(i), -width*vg.Length(len(panels)-1-i), 0, 0)
		heat.Draw(draw.Crop(col, 0.05*vg.Inch, -barWidth, 0.05*vg.Inch, -0.1*vg.Inch))
		bar.Draw(draw.Crop(col, width-barWidth, 0, 0.45*vg.Inch, -0.3*vg.Inch))
	}
	_, err = cw.WriteTo(w)
	return err
}

// heatmapPlots makes one panel: the heatmap of pairs over ranks ranks and
// its colour bar.
func heatmapPlots(title string, pairs []Pair, ranks int) (heat, bar *plot.Plot) {
	ranks = max(ranks, 1)
	b := HeatmapBlock(ranks)
	g := &heatGrid{n: (ranks + b - 1) / b}
	g.bytes = make([]float64, g.n*g.n)
	for _, p := range pairs {
		if p.Src < ranks && p.Dst < ranks {
			g.bytes[(p.Src/b)*g.n+p.Dst/b] += float64(p.Bytes)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range g.bytes {
		if v > 0 {
			lo, hi = math.Min(lo, math.Log2(v)), math.Max(hi, math.Log2(v))
		}
	}
	if lo > hi { // nothing sent
		lo, hi = 0, 1
	}
	lo, hi = math.Floor(lo), math.Ceil(hi)
	if hi == lo {
		hi = lo + 1
	}
	cm := colourMap()
	cm.SetMin(lo)
	cm.SetMax(hi)

	heat = plot.New()
	heat.Title.Text = title
	unit := "rank"
	if b > 1 {
		unit = "rank (cells of " + strconv.Itoa(b) + " ranks)"
	}
	heat.X.Label.Text = "destination " + unit
	heat.Y.Label.Text = "source " + unit
	hm := plotter.NewHeatMap(g, cm.Palette(255))
	hm.Min, hm.Max = lo, hi
	hm.NaN = color.RGBA{0xf2, 0xf2, 0xf2, 0xff} // pairs that exchanged nothing
	hm.Rasterized = g.n > 64                    // a vector cell each would make a large SVG
	heat.Add(hm)
	heat.X.Tick.Marker = rankTicks{n: g.n, block: b, ranks: ranks}
	heat.Y.Tick.Marker = rankTicks{n: g.n, block: b, ranks: ranks, flip: true}
	heat.X.Min, heat.X.Max = -0.5, float64(g.n)-0.5
	heat.Y.Min, heat.Y.Max = -0.5, float64(g.n)-0.5

	bar = plot.New()
	bar.HideX()
	bar.Y.Label.Text = "bytes per cell"
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	bar.Y.Tick.Marker = byteTicks{}
	return heat, bar
}

// colourMap is the heatmap's colours: viridis's control colours, dark for
// few bytes, bright for many, with luminance rising evenly (readable in
// grey too); black body if that cannot be made.
func colourMap() palette.ColorMap {
	cm, err := moreland.NewLuminance([]color.Color{
		color.NRGBA{0x44, 0x01, 0x54, 0xff}, color.NRGBA{0x3b, 0x52, 0x8b, 0xff}, color.NRGBA{0x21, 0x91, 0x8c, 0xff},
		color.NRGBA{0x5e, 0xc9, 0x62, 0xff}, color.NRGBA{0xfd, 0xe7, 0x25, 0xff}})
	if err != nil {
		return moreland.ExtendedBlackBody()
	}
	return cm
}

// heatGrid is the matrix as plotter.GridXYZ: column c is destination cell
// c, row r source cell n-1-r (source 0 at the top), the value log2 of the
// bytes (NaN for none).
type heatGrid struct {
	n     int
	bytes []float64 // by source cell × n + destination cell
}

func (g *heatGrid) Dims() (c, r int) { return g.n, g.n }
func (g *heatGrid) X(c int) float64  { return float64(c) }
func (g *heatGrid) Y(r int) float64  { return float64(r) }
func (g *heatGrid) Z(c, r int) float64 {
	v := g.bytes[(g.n-1-r)*g.n+c]
	if v <= 0 {
		return math.NaN()
	}
	return math.Log2(v)
}

// rankTicks labels cells with the first rank they hold, at a power-of-two
// step of ranks that gives at most about ten labels.
type rankTicks struct {
	n, block, ranks int
	flip            bool // rows: cell n-1-y holds the ranks of y
}

func (t rankTicks) Ticks(min, max float64) []plot.Tick {
	step := t.block
	for t.ranks/step > 10 {
		step *= 2
	}
	var ts []plot.Tick
	for rank := 0; rank < t.ranks; rank += step {
		pos := float64(rank / t.block)
		if t.flip {
			pos = float64(t.n-1) - pos
		}
		ts = append(ts, plot.Tick{Value: pos, Label: strconv.Itoa(rank)})
	}
	return ts
}

// byteTicks labels a log2 scale of bytes at powers of two, every few.
type byteTicks struct{}

func (byteTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := int(math.Ceil(min)), int(math.Floor(max))
	step := 1
	for (hi-lo)/step > 8 {
		step++
	}
	var ts []plot.Tick
	for k := lo; k <= hi; k++ {
		t := plot.Tick{Value: float64(k)}
		if (k-lo)%step == 0 {
			t.Label = pow2Bytes(k)
		}
		ts = append(ts, t)
	}
	return ts
}

// pow2Bytes names 2^k bytes: "512 B", "4 KiB", "1 GiB".
func pow2Bytes(k int) string {
	if k < 0 {
		return "<1 B"
	}
	u := min(k/10, 6)
	v := uint64(1) << (k - 10*u)
	if k-10*u >= 64 || bits.Len64(v) > 20 {
		return "2^" + strconv.Itoa(k) + " B"
	}
	return strconv.FormatUint(v, 10) + " " + [...]string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}[u]
}
