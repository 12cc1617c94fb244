package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/viewport"
	"github.com/charmbracelet/x/ansi"
)

// paneLine is one line of a tab. Its gutter (a line number, the ▶ mark) stays at the left
// edge; its body scrolls sideways on a tab that does, unless the line is fixed (a title, prose
// already wrapped to the width).
type paneLine struct {
	gutter, body string
	fixed        bool
	// continued marks the second and later rows of a line wrapped onto several.
	continued bool
}

// fixedLine is a line drawn as it is, never scrolled sideways: a line of a tab that wraps its
// lines to the width, a title.
func fixedLine(s string) paneLine { return paneLine{body: s, fixed: true} }

// fixedLines makes a fixedLine of each line.
func fixedLines(lines []string) []paneLine {
	out := make([]paneLine, len(lines))
	for i, l := range lines {
		out[i] = fixedLine(l)
	}
	return out
}

// pane is a tab's content in a viewport: it scrolls down, and sideways when its lines are wider
// than the screen. It keeps its marked line (the suspect's ▶ line) on screen across a resize
// and a refresh when the line was on screen before.
type pane struct {
	vp    viewport.Model
	lines []paneLine
	// x is how far the bodies are scrolled sideways, in cells.
	x int
	// mark is the index of the line kept on screen, or -1.
	mark int
	// over is how far the widest line that scrolls runs past the screen at no offset (its
	// gutter and body against the width); bodyW is the width of the widest body.
	over, bodyW int
}

func newPane() pane { return pane{vp: viewport.New(1, 1), mark: -1} }

// set shows lines, keeping the scroll position (reset: the top, and the marked line a third of
// the way down, where the eye lands). A marked line on screen before stays on screen.
func (p *pane) set(lines []paneLine, mark int, reset bool) {
	row, onScreen := p.markRow()
	p.lines, p.mark = lines, mark
	p.measure()
	off := p.vp.YOffset
	if reset {
		off, p.x = 0, 0
		if mark >= 0 {
			off = mark - p.vp.Height/3
		}
	}
	p.render()
	p.vp.SetYOffset(off)
	p.keepMark(row, onScreen && !reset)
}

// setSize resizes the pane, keeping the marked line on screen when it was.
func (p *pane) setSize(w, h int) {
	row, onScreen := p.markRow()
	p.vp.Width, p.vp.Height = w, h
	p.measure()
	p.render()
	p.keepMark(row, onScreen)
}

// markRow is the screen row of the marked line, and whether it is on screen.
func (p *pane) markRow() (int, bool) {
	if p.mark < 0 || p.mark >= len(p.lines) {
		return 0, false
	}
	row := p.mark - p.vp.YOffset
	return row, row >= 0 && row < p.vp.Height
}

// keepMark scrolls the marked line back on screen, at the row it had when it fits there, else
// a third of the way down.
func (p *pane) keepMark(row int, onScreen bool) {
	if !onScreen || p.mark < 0 || p.mark >= len(p.lines) {
		return
	}
	if _, still := p.markRow(); still {
		return
	}
	if row >= p.vp.Height {
		row = p.vp.Height / 3
	}
	p.vp.SetYOffset(p.mark - row)
}

// measure finds how far the lines that scroll run past the screen.
func (p *pane) measure() {
	p.over, p.bodyW = 0, 0
	for _, l := range p.lines {
		if !l.fixed {
			bw := ansi.StringWidth(l.body)
			p.bodyW = max(p.bodyW, bw)
			p.over = max(p.over, ansi.StringWidth(l.gutter)+bw-p.vp.Width)
		}
	}
}

// maxX is how far the pane can scroll sideways.
func (p *pane) maxX() int { return p.over }

// scrollX moves the bodies sideways by delta cells, within the lines' width.
func (p *pane) scrollX(delta int) {
	x := min(max(p.x+delta, 0), p.maxX())
	if x != p.x {
		p.x = x
		p.render()
	}
}

// step is how far a key scrolls sideways: half the screen, as less does.
func (p *pane) step() int { return max(p.vp.Width/2, 1) }

// render cuts the lines to the width at the sideways offset and hands them to the viewport.
func (p *pane) render() {
	w := max(p.vp.Width, 1)
	p.x = min(p.x, p.maxX())
	var b strings.Builder
	for i, l := range p.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.gutter)
		room := w - ansi.StringWidth(l.gutter)
		if room <= 0 {
			continue
		}
		body := l.body
		if !l.fixed && p.x > 0 {
			body = ansi.TruncateLeft(body, p.x, "")
		}
		if ansi.StringWidth(body) > room {
			body = ansi.Truncate(body, room, "…")
		}
		b.WriteString(body)
	}
	p.vp.SetContent(b.String())
}

// position says which columns of the lines' bodies are on screen ("←→ 41-116 of 120"), ""
// when they fit the width.
func (p *pane) position() string {
	if p.maxX() == 0 {
		return ""
	}
	// Gutters are of one width in a pane, so the widest body is the line that runs over most.
	room := p.bodyW - p.over
	return fmt.Sprintf("←→ %d-%d of %d", p.x+1, min(p.x+room, p.bodyW), p.bodyW)
}
