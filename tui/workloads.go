package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/sahilm/fuzzy"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

// workloadsScreen lists workloads worst first. Once a person has picked a row it keeps the
// selection by workload, not by position, so a refresh that reorders rows keeps the same
// workload selected; until then the selection stays on the first row, the worst workload.
type workloadsScreen struct {
	common
	width, height int

	rows []row
	// visible indexes rows after the filter and the healthy toggle.
	visible []int
	cursor  int
	offset  int
	// picked says a person has moved the selection or opened a row. Until then no row was
	// chosen: the rows listed while a read runs are in name order, and keeping their first
	// row selected once the diagnosis sorted the worst above it held the screen on healthy
	// rows with every broken one out of sight.
	picked  bool
	multiNS bool
	// throughput shows the THROUGHPUT column: metrics were read.
	throughput bool
	// contexts, with several, show the CONTEXT column; contextFilter, when set, shows one.
	contexts      []string
	contextFilter string

	filtering   bool
	filter      textinput.Model
	hideHealthy bool

	cols       []column
	shortBadge bool
	// badgeW is the SHAPE column's width (badgeWidth).
	badgeW int
	// layouts counts layout's runs: cols is laid out again in place.
	layouts int

	// drawn is the table View drew last and what it drew it from. While a read runs the
	// spinner and the progress line redraw the screen some 20 times a second over the same
	// rows, and the table was three quarters of each frame.
	drawn struct {
		from tableInputs
		view string
	}
}

// tableInputs is everything View reads. rows and visible are replaced, never changed in place,
// so their first elements tell them apart; the key holds them, so no new slice reuses their
// memory while it is kept.
type tableInputs struct {
	rows                          *row
	nRows                         int
	visible                       *int
	nVisible                      int
	cursor, offset, width, height int
	layouts                       int
	filter, contextFilter         string
	hideHealthy                   bool
}

func (s *workloadsScreen) inputs() tableInputs {
	in := tableInputs{
		nRows: len(s.rows), nVisible: len(s.visible), cursor: s.cursor, offset: s.offset,
		width: s.width, height: s.height, layouts: s.layouts, filter: s.filter.Value(),
		contextFilter: s.contextFilter, hideHealthy: s.hideHealthy,
	}
	if len(s.rows) > 0 {
		in.rows = &s.rows[0]
	}
	if len(s.visible) > 0 {
		in.visible = &s.visible[0]
	}
	return in
}

func newWorkloadsScreen(c common) workloadsScreen {
	f := textinput.New()
	f.Prompt = "/"
	f.Placeholder = "name, shape, suspect, cause or field"
	f.CharLimit = 128
	return workloadsScreen{common: c, filter: f}
}

// SetSize sets the body size and lays the columns out for it.
func (s *workloadsScreen) SetSize(w, h int) {
	s.width, s.height = w, h
	s.filter.Width = max(w-3, 1)
	s.layout()
	s.clamp()
}

// SetRows shows a new dataset's rows, keeping the selected workload and the scroll position
// once a row was picked, else showing the first rows with the first selected.
func (s *workloadsScreen) SetRows(ds *dataset) {
	var sel *rowID
	if r := s.Selected(); r != nil {
		k := r.id()
		sel = &k
	}
	prevCursor, prevOffset := s.cursor, s.offset
	s.rows = ds.rows
	s.multiNS = ds.multiNS
	s.contexts = ds.contexts
	if !slices.Contains(s.contexts, s.contextFilter) {
		s.contextFilter = ""
	}
	s.throughput = ds.throughput
	s.layout()
	s.applyFilter()
	if !s.picked {
		s.cursor, s.offset = 0, 0
		s.clamp()
		return
	}
	s.cursor, s.offset = prevCursor, prevOffset
	if sel != nil {
		for i, ri := range s.visible {
			if s.rows[ri].id() == *sel {
				// Keep the row where it was on screen when it moved.
				s.offset += i - s.cursor
				s.cursor = i
				break
			}
		}
	}
	s.clamp()
}

// Selected returns the selected row, or nil.
func (s *workloadsScreen) Selected() *row {
	if s.cursor < 0 || s.cursor >= len(s.visible) {
		return nil
	}
	return &s.rows[s.visible[s.cursor]]
}

// Update handles keys on the workloads screen.
func (s *workloadsScreen) Update(msg tea.KeyMsg) tea.Cmd {
	k := s.keys
	if s.filtering {
		switch msg.String() {
		case "esc":
			s.filtering = false
			s.filter.Blur()
			s.filter.SetValue("")
			s.applyFilter()
			return nil
		case "enter":
			s.filtering = false
			s.filter.Blur()
			return nil
		case "up", "down":
			// Moving while filtering lets a person pick a match without leaving the filter.
			s.move(map[string]int{"up": -1, "down": 1}[msg.String()])
			return nil
		}
		var cmd tea.Cmd
		s.filter, cmd = s.filter.Update(msg)
		s.applyFilter()
		return cmd
	}
	switch {
	case key.Matches(msg, k.Up):
		s.move(-1)
	case key.Matches(msg, k.Down):
		s.move(1)
	case key.Matches(msg, k.PageUp):
		s.move(-s.pageSize())
	case key.Matches(msg, k.PageDown):
		s.move(s.pageSize())
	case key.Matches(msg, k.Top):
		s.move(-len(s.visible))
	case key.Matches(msg, k.Bottom):
		s.move(len(s.visible))
	case key.Matches(msg, k.Filter):
		s.filtering = true
		return s.filter.Focus()
	case key.Matches(msg, k.HideHealthy):
		s.hideHealthy = !s.hideHealthy
		s.applyFilter()
	case key.Matches(msg, k.Context) && len(s.contexts) > 0:
		s.nextContext()
	case key.Matches(msg, k.Back):
		if s.filter.Value() != "" {
			s.filter.SetValue("")
			s.applyFilter()
		}
	}
	return nil
}

// Scroll moves the selection by delta rows (mouse wheel).
func (s *workloadsScreen) Scroll(delta int) { s.move(delta) }

func (s *workloadsScreen) move(delta int) {
	s.picked = true
	s.cursor += delta
	s.clamp()
}

// pageSize is the number of rows on screen.
func (s *workloadsScreen) pageSize() int { return max(s.height-1, 1) }

func (s *workloadsScreen) clamp() {
	n := len(s.visible)
	s.cursor = min(max(s.cursor, 0), max(n-1, 0))
	page := s.pageSize()
	if s.cursor < s.offset {
		s.offset = s.cursor
	}
	if s.cursor >= s.offset+page {
		s.offset = s.cursor - page + 1
	}
	s.offset = min(max(s.offset, 0), max(n-page, 0))
}

// applyFilter recomputes the visible rows: healthy ones hidden on request, then the filter.
// A row matches when every word of the filter is in what the row says (its namespace/name,
// shape, suspect, cause or the suspect's field: /never, /image, /env), or when the filter
// fuzzy-matches its namespace/name; rows of the first kind come first, in the table's order,
// then fuzzy matches, best first.
func (s *workloadsScreen) applyFilter() {
	var sel *rowID
	if r := s.Selected(); r != nil {
		k := r.id()
		sel = &k
	}
	base := make([]int, 0, len(s.rows))
	for i := range s.rows {
		if s.hideHealthy && s.rows[i].shape == diagnose.ShapeHealthy {
			continue
		}
		if s.contextFilter != "" && s.rows[i].context != s.contextFilter {
			continue
		}
		base = append(base, i)
	}
	if q := strings.TrimSpace(s.filter.Value()); q != "" {
		words := strings.Fields(q)
		vis := make([]int, 0, len(base))
		said := make([]bool, len(base))
		for i, ri := range base {
			if s.rows[ri].says(words) {
				vis = append(vis, ri)
				said[i] = true
			}
		}
		for _, mt := range fuzzy.FindFrom(q, filterSource{s.rows, base}) {
			if !said[mt.Index] {
				vis = append(vis, base[mt.Index])
			}
		}
		base = vis
	}
	s.visible = base
	s.cursor = 0
	if sel != nil {
		for i, ri := range s.visible {
			if s.rows[ri].id() == *sel {
				s.cursor = i
				break
			}
		}
	}
	s.clamp()
}

// says reports whether every word is in what the row shows or names: its namespace/name, its
// shape (and its waived mark), suspect and cause, and its top suspect's field path. The path is written out only
// for rows whose other cells do not match, so a filter over many rows stays quick.
func (r *row) says(words []string) bool {
	for _, w := range words {
		if containsFold(r.filterText, w) || containsFold(string(r.shape), w) || containsFold(r.suspect, w) ||
			containsFold(r.cause, w) || r.waived && containsFold(report.WaivedMark, w) {
			continue
		}
		if r.diag == nil || len(r.diag.Suspects) == 0 || r.diag.Suspects[0].Path == nil ||
			!containsFold(r.diag.Suspects[0].Path.String(), w) {
			return false
		}
	}
	return true
}

// containsFold is strings.Contains ignoring case, without allocating.
func containsFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], sub) {
			return true
		}
	}
	return false
}

type filterSource struct {
	rows []row
	idx  []int
}

func (f filterSource) String(i int) string { return f.rows[f.idx[i]].filterText }
func (f filterSource) Len() int            { return len(f.idx) }

// View draws the table: a header line and the visible rows only.
func (s *workloadsScreen) View() string {
	in := s.inputs()
	if s.drawn.view != "" && s.drawn.from == in {
		return s.drawn.view
	}
	s.drawn.from, s.drawn.view = in, s.draw()
	return s.drawn.view
}

func (s *workloadsScreen) draw() string {
	var b strings.Builder
	b.Grow((s.height + 1) * (s.width + 32))
	badgeW := s.badgeWidth()
	head := "  " + pad("SHAPE", badgeW)
	for _, c := range s.cols {
		head += " " + pad(c.title, c.width)
	}
	b.WriteString(s.styles.Dim.Render(ansi.Truncate(head, s.width, "…")))
	lines := 1
	if len(s.visible) == 0 {
		b.WriteString("\n")
		msg := "no workloads"
		if s.filter.Value() != "" || s.hideHealthy {
			msg = "no workloads match (esc clears the filter, h shows healthy)"
		}
		if s.contextFilter != "" {
			msg = "no workloads in context " + s.contextFilter + " match (c shows the next context)"
		}
		b.WriteString(s.styles.Dim.Render(ansi.Truncate("  "+msg, s.width, "…")))
		lines++
	}
	end := min(s.offset+s.pageSize(), len(s.visible))
	var line strings.Builder
	for i := s.offset; i < end; i++ {
		r := &s.rows[s.visible[i]]
		line.Reset()
		for _, c := range s.cols {
			line.WriteByte(' ')
			line.WriteString(pad(c.value(r), c.width))
		}
		rest := line.String()
		if room := s.width - 2 - badgeW; ansi.StringWidth(rest) > room {
			rest = ansi.Truncate(rest, max(room, 0), "…")
		}
		b.WriteByte('\n')
		badge := s.styles.BadgeOf(r.shape, r.waived, s.shortBadge)
		if r.diag == nil {
			// Listed before its copies were read: no shape yet.
			badge = s.styles.Dim.Render(pad(" reading…", badgeW))
		}
		badge += strings.Repeat(" ", max(badgeW-ansi.StringWidth(badge), 0))
		if i == s.cursor {
			b.WriteString(s.styles.Cursor.Render("›") + " " + badge + s.styles.Selected.Render(rest))
		} else {
			b.WriteString("  " + badge + rest)
		}
		lines++
	}
	for ; lines < s.height; lines++ {
		b.WriteByte('\n')
	}
	return b.String()
}

// Position describes where the selection is, e.g. "3/120".
func (s *workloadsScreen) Position() string {
	if len(s.visible) == 0 {
		return "0/0"
	}
	return itoa(s.cursor+1) + "/" + itoa(len(s.visible))
}

// ShortHelp implements help.KeyMap for the footer.
func (s *workloadsScreen) ShortHelp() []key.Binding {
	k := s.keys
	return []key.Binding{k.Enter, k.Filter, k.HideHealthy, k.Context, k.Refresh, k.Help, k.Quit}
}

// nextContext steps the context filter: every context, then each in turn, then every one again.
func (s *workloadsScreen) nextContext() {
	i := slices.Index(s.contexts, s.contextFilter)
	switch {
	case s.contextFilter == "":
		s.contextFilter = s.contexts[0]
	case i+1 < len(s.contexts):
		s.contextFilter = s.contexts[i+1]
	default:
		s.contextFilter = ""
	}
	s.applyFilter()
}

// FullHelp implements help.KeyMap.
func (s *workloadsScreen) FullHelp() [][]key.Binding { return s.keys.FullHelp() }

// pad cuts s to w cells with an ellipsis, or pads it with spaces to w cells.
func pad(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	if sw == w {
		return s
	}
	return s + strings.Repeat(" ", w-sw)
}

// Init implements screen; the screen starts nothing of its own.
func (s *workloadsScreen) Init() tea.Cmd { return nil }
