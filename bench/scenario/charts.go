package main

import (
	"bytes"
	"fmt"
	"image/color"
	"os"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

var (
	colRation = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colOther  = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
	colGood   = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colBad    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colRef    = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
)

// barItem is one horizontal bar.
type barItem struct {
	name      string
	value     float64
	lo, hi    float64 // optional range, for the label
	ration    bool
	missing   string // label instead of a value (contender unavailable)
	valueText string // label override
}

// refLine is a vertical reference line on a bar chart (bound, limit).
type refLine struct {
	x     float64
	label string
}

// barPlot builds a horizontal bar chart, top item first, ration's bars in
// blue and the others in grey, each labelled with its value.
func barPlot(title, xlabel string, items []barItem, ref *refLine) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.X.Min = 0
	n := len(items)
	names := make([]string, n)
	var ration, other plotter.Values = make(plotter.Values, n), make(plotter.Values, n)
	var lx plotter.XYLabels
	maxV := 0.0
	for _, it := range items {
		maxV = max(maxV, it.value, it.hi)
	}
	if ref != nil {
		maxV = max(maxV, ref.x)
	}
	for i, it := range items {
		k := n - 1 - i // plot rows bottom-up; list top-down
		names[k] = it.name
		if it.ration {
			ration[k] = it.value
		} else {
			other[k] = it.value
		}
		txt := it.valueText
		if txt == "" {
			txt = fmt.Sprintf("%.3g", it.value)
		}
		if it.missing != "" {
			txt = it.missing
		}
		lx.XYs = append(lx.XYs, plotter.XY{X: it.value + maxV*0.01, Y: float64(k)})
		lx.Labels = append(lx.Labels, txt)
	}
	for _, v := range []struct {
		vals plotter.Values
		col  color.Color
	}{{other, colOther}, {ration, colRation}} {
		bc, err := plotter.NewBarChart(v.vals, vg.Points(14))
		if err != nil {
			return nil, err
		}
		bc.Horizontal = true
		bc.Color = v.col
		bc.LineStyle.Width = 0
		p.Add(bc)
	}
	labels, err := plotter.NewLabels(lx)
	if err != nil {
		return nil, err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].YAlign = draw.YCenter
	}
	p.Add(labels)
	if ref != nil {
		l, err := plotter.NewLine(plotter.XYs{{X: ref.x, Y: -0.6}, {X: ref.x, Y: float64(n) - 0.4}})
		if err != nil {
			return nil, err
		}
		l.Color = colRef
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(ref.label, l)
		p.Legend.Top = true
	}
	p.NominalY(names...)
	p.X.Max = maxV * 1.3 // room for the labels
	p.X.Tick.Marker = plainTicks{}
	return p, nil
}

// save writes plots, laid out in rows x cols tiles, to an SVG file.
func save(path string, w, h vg.Length, plots [][]*plot.Plot) error {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	t := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, t, dc)
	for i := range plots {
		for j := range plots[i] {
			if plots[i][j] != nil {
				plots[i][j].Draw(canvases[i][j])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	// gonum lays text out with Liberation's metrics; name the fonts that
	// share them, so a viewer without Liberation keeps the layout.
	svg := strings.NewReplacer(
		"font-family:Liberation Serif;", "font-family:'Liberation Serif','Times New Roman',Times,serif;",
		"font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;",
	).Replace(buf.String())
	return os.WriteFile(path, []byte(svg), 0o644)
}

func isRation(name string) bool { return len(name) >= 6 && name[:6] == "ration" }

func chartAnalyzer(path string, runs []batchRun) error {
	var wall, mem []barItem
	bound := 0.0
	for _, br := range runs {
		w := barItem{name: br.c.short, ration: isRation(br.c.name)}
		m := w
		if br.c.args == nil {
			w.missing, m.missing = "not available", "not available"
		} else {
			w.value = sec(br.r.Wall)
			m.value = mib(br.r.PeakMem)
			w.valueText = fmt.Sprintf("%.1f s (%.2fx bound), %d done", w.value, sec(br.r.Wall)/sec(br.bound), len(br.r.Done))
			m.valueText = fmt.Sprintf("%.0f MiB", m.value)
			if br.r.OOMKills > 0 {
				m.valueText += fmt.Sprintf(", %d OOM kills", br.r.OOMKills)
			}
		}
		if !br.c.python {
			bound = sec(br.bound)
		}
		wall, mem = append(wall, w), append(mem, m)
	}
	pw, err := barPlot("Wall time, 0.5 CPU / 160 MiB cgroup", "seconds", wall, &refLine{x: bound, label: "physical bound (burn jobs)"})
	if err != nil {
		return err
	}
	pm, err := barPlot("Peak cgroup memory", "MiB", mem, &refLine{x: podMem >> 20, label: "memory limit"})
	if err != nil {
		return err
	}
	return save(path, 30*vg.Centimeter, 20*vg.Centimeter, [][]*plot.Plot{{pw}, {pm}})
}

type oomBar struct {
	name       string
	done, lost int
}

func chartOOM(path string, rows []oomBar, normal, every int) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("One job in %d needs 300 MiB: what happens to the other %d jobs", every, normal)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = "normal jobs"
	n := len(rows)
	done, lost := make(plotter.Values, n), make(plotter.Values, n)
	names := make([]string, n)
	var lx plotter.XYLabels
	for i, r := range rows {
		k := n - 1 - i
		names[k] = r.name
		done[k], lost[k] = float64(r.done), float64(r.lost)
		lx.XYs = append(lx.XYs, plotter.XY{X: float64(normal) * 1.01, Y: float64(k)})
		lx.Labels = append(lx.Labels, fmt.Sprintf("%d done, %d lost", r.done, r.lost))
	}
	bd, err := plotter.NewBarChart(done, vg.Points(14))
	if err != nil {
		return err
	}
	bl, err := plotter.NewBarChart(lost, vg.Points(14))
	if err != nil {
		return err
	}
	bd.Horizontal, bl.Horizontal = true, true
	bd.Color, bl.Color = colGood, colBad
	bd.LineStyle.Width, bl.LineStyle.Width = 0, 0
	bl.StackOn(bd)
	p.Add(bd, bl)
	p.Legend.Add("completed", bd)
	p.Legend.Add("lost (need a rerun)", bl)
	labels, err := plotter.NewLabels(lx)
	if err != nil {
		return err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].YAlign = draw.YCenter
	}
	p.Add(labels)
	p.NominalY(names...)
	p.X.Min, p.X.Max = 0, float64(normal)*1.45
	var ticks []plot.Tick
	for v := 0; v < normal; v += 50 {
		ticks = append(ticks, plot.Tick{Value: float64(v), Label: fmt.Sprint(v)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(append(ticks, plot.Tick{Value: float64(normal), Label: fmt.Sprint(normal)}))
	return save(path, 30*vg.Centimeter, 11*vg.Centimeter, [][]*plot.Plot{{p}})
}

func chartBars(path, title, xlabel string, items []barItem, ref *refLine) error {
	for i := range items {
		items[i].ration = isRation(items[i].name)
		if items[i].hi > 0 {
			items[i].valueText = fmt.Sprintf("%.2f s (%.2f-%.2f)", items[i].value, items[i].lo, items[i].hi)
		}
	}
	p, err := barPlot(title, xlabel, items, ref)
	if err != nil {
		return err
	}
	return save(path, 24*vg.Centimeter, 8*vg.Centimeter, [][]*plot.Plot{{p}})
}

func chartFlatMem(path string, series []memSeries) error {
	p := plot.New()
	p.Title.Text = "Peak RSS against number of inputs"
	p.X.Label.Text = "inputs"
	p.Y.Label.Text = "peak RSS (MiB)"
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for v, l := 1e3, 0; l < 5; v, l = v*10, l+1 {
		ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("10^%d", l+3)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min = 0
	// The pool's own curve, its informational twin (dashed), then ration's.
	cols := []color.Color{colGood, colOther, colRation, colRef}
	maxY := 0.0
	for i, s := range series {
		var xy plotter.XYs
		for _, pt := range s.points {
			xy = append(xy, plotter.XY{X: float64(pt.n), Y: mib(pt.maxRSS)})
			maxY = max(maxY, mib(pt.maxRSS))
		}
		if len(xy) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		l.Color, pts.Color = cols[i%len(cols)], cols[i%len(cols)]
		l.Width = vg.Points(2)
		if s.why != "" {
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		pts.Shape = draw.CircleGlyph{}
		pts.Radius = vg.Points(3)
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	p.Y.Max = maxY * 1.25
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return save(path, 20*vg.Centimeter, 12*vg.Centimeter, [][]*plot.Plot{{p}})
}

func chartQuota(path string, samples []quotaSample, cost time.Duration, watch bool) error {
	top := plot.New()
	title := "ration run --watch-limits: quota 2 -> 0.5 -> 2 CPUs"
	if !watch {
		title = "ration run (no --watch-limits in this build): quota 2 -> 0.5 -> 2 CPUs"
	}
	top.Title.Text = title
	top.Y.Label.Text = "jobs running"
	bot := plot.New()
	bot.Y.Label.Text = "jobs finished / s (1 s window)"
	bot.X.Label.Text = "time (s)"
	var run, want, thr, ideal plotter.XYs
	for i, s := range samples {
		t := sec(s.t)
		run = append(run, plotter.XY{X: t, Y: float64(s.running)})
		want = append(want, plotter.XY{X: t, Y: float64(min(max(int(2*s.quota), 1), 8))})
		ideal = append(ideal, plotter.XY{X: t, Y: s.quota / sec(cost)})
		j := i
		for j > 0 && s.t-samples[j-1].t <= time.Second {
			j--
		}
		if dt := sec(s.t - samples[j].t); dt > 0.5 {
			thr = append(thr, plotter.XY{X: t, Y: float64(s.done-samples[j].done) / dt})
		}
	}
	add := func(p *plot.Plot, xy plotter.XYs, col color.Color, dashed bool, name string) error {
		if len(xy) == 0 {
			return nil
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = col
		l.Width = vg.Points(1.5)
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(name, l)
		return nil
	}
	if err := add(top, want, colRef, true, "target min(2 x quota, 8)"); err != nil {
		return err
	}
	if err := add(top, run, colRation, false, "running jobs (burn processes in the cgroup)"); err != nil {
		return err
	}
	if err := add(bot, ideal, colRef, true, "quota / CPU per job"); err != nil {
		return err
	}
	if err := add(bot, thr, colRation, false, "measured throughput"); err != nil {
		return err
	}
	for _, p := range []*plot.Plot{top, bot} {
		p.Y.Min = 0
		p.Y.Tick.Marker = plainTicks{}
		p.X.Tick.Marker = plainTicks{}
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
	}
	top.Y.Max = 6
	// Head room above the data for the legend.
	peak := 0.0
	for _, xy := range append(append(plotter.XYs{}, thr...), ideal...) {
		peak = max(peak, xy.Y)
	}
	bot.Y.Max = peak * 1.4
	return save(path, 24*vg.Centimeter, 16*vg.Centimeter, [][]*plot.Plot{{top}, {bot}})
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// (25, not 25.00).
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}
