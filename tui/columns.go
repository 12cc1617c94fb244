package tui

// What the workloads table's columns are and how they share the width.

// column is one column of the workloads table.
type column struct {
	title string
	width int
	// value reads the cell of a row.
	value func(*row) string
}

// candidate is a column the table may show: how soon it is dropped when the width is short
// (priority, higher first; 0 never), the width it shrinks to before any is dropped (floor) and
// the width its widest cell takes (natural).
type candidate struct {
	col            column
	priority       int
	floor, natural int
}

// Floors of the columns that shrink: names are what a person scans for, so they keep this
// much before a column is dropped, and shrink to lastFloor only when nothing is left to drop.
var columnFloors = map[string]int{"WORKLOAD": 24, "SUSPECT": 18, "NAMESPACE": 12, "CONTEXT": 12}

const lastFloor = 10

// badgeWidth is the SHAPE column's width: the badge and its padding (layout sets it).
func (s *workloadsScreen) badgeWidth() int {
	switch {
	case s.badgeW > 0:
		return s.badgeW
	case s.shortBadge:
		return shortBadgeWidth
	}
	return badgeFloor
}

// Widths of the SHAPE column: short badges, and the floor of full ones (starts-and-dies), which
// grows to the widest label a row shows (no-eligible-nodes, never-starts,waived).
const (
	shortBadgeWidth = 7
	badgeFloor      = 17
)

// layout chooses the columns for the width. Every column starts at its floor; columns are
// dropped, least telling first, until the floors fit; the width left over goes to SUSPECT and
// WORKLOAD first, a cell each in turn, up to what their widest cells need, then to NAMESPACE
// and CONTEXT. What is still left stays empty at the right: no cell is cut while there is room.
func (s *workloadsScreen) layout() {
	s.layouts++
	s.shortBadge = s.width < 110
	// Plain ints in the loop: it runs over every row at each watch update.
	workloadW, suspectW, causeW, nsW, nameW := len("WORKLOAD"), len("SUSPECT"), len("CAUSE"), len("NAMESPACE"), len("WORKLOAD")
	s.badgeW = shortBadgeWidth
	if !s.shortBadge {
		s.badgeW = badgeFloor
	}
	for i := range s.rows {
		r := &s.rows[i]
		if !s.shortBadge && (r.waived || r.shape.Intended()) {
			label := ShapeLabel(r.shape, false)
			if r.waived {
				label = WaivedLabel(r.shape, false)
			}
			s.badgeW = max(s.badgeW, len(label)+2)
		}
		workloadW = max(workloadW, len(r.workload))
		suspectW = max(suspectW, len(r.suspect))
		causeW = max(causeW, len(r.cause))
		nameW = max(nameW, len(r.name))
		if s.multiNS {
			nsW = max(nsW, len(r.namespace))
		}
	}
	ctxW := len("CONTEXT")
	for _, c := range s.contexts {
		ctxW = max(ctxW, len(c))
	}
	natural := map[string]int{"WORKLOAD": workloadW, "SUSPECT": suspectW, "NAMESPACE": nsW, "CONTEXT": ctxW, "CAUSE": causeW}
	flex := func(title string, value func(*row) string, priority int) candidate {
		n := natural[title]
		return candidate{column{title, n, value}, priority, min(n, columnFloors[title]), n}
	}
	fixed := func(title string, width int, value func(*row) string, priority int) candidate {
		return candidate{column{title, width, value}, priority, width, width}
	}
	cands := []candidate{
		flex("NAMESPACE", func(r *row) string { return r.namespace }, 5),
		flex("WORKLOAD", func(r *row) string { return r.workload }, 0),
		fixed("COPIES", 6, func(r *row) string { return r.copies }, 0),
		fixed("SERVING", 7, func(r *row) string { return r.serving }, 0),
		fixed("YOUNGEST", 8, func(r *row) string { return r.youngest }, 7),
		fixed("RESTARTS", 8, func(r *row) string { return r.restarts }, 6),
		flex("SUSPECT", func(r *row) string { return r.suspect }, 3),
		fixed("CAUSE", natural["CAUSE"], func(r *row) string { return r.cause }, 4),
	}
	if s.throughput {
		// Before CAUSE at the same priority, so it is dropped first.
		tp := fixed("THROUGHPUT", sparkWidth+9, func(r *row) string { return orDash(r.throughput) }, 4)
		cands = append(cands[:len(cands)-1], tp, cands[len(cands)-1])
	}
	if !s.multiNS {
		cands = cands[1:]
	}
	if len(s.contexts) > 0 {
		// Which cluster a row is in matters more than its namespace: dropped after it.
		cands = append([]candidate{flex("CONTEXT", func(r *row) string { return r.context }, 4)}, cands...)
	}

	avail := s.width - 2 - s.badgeWidth() // cursor and badge
	keep := make([]bool, len(cands))
	for i := range keep {
		keep[i] = true
	}
	used := func() int {
		t := 0
		for i, c := range cands {
			if keep[i] {
				t += c.col.width + 1
			}
		}
		return t
	}
	for i := range cands {
		cands[i].col.width = cands[i].floor
	}
	for used() > avail {
		worst := -1
		for i, c := range cands {
			if keep[i] && c.priority > 0 && (worst < 0 || c.priority > cands[worst].priority) {
				worst = i
			}
		}
		if worst < 0 {
			// Nothing left to drop: the names shrink further, and the rows are cut as drawn.
			for i := range cands {
				if _, ok := columnFloors[cands[i].col.title]; ok {
					cands[i].col.width = min(cands[i].col.width, lastFloor)
				}
			}
			break
		}
		keep[worst] = false
	}
	find := func(title string) *candidate {
		for i := range cands {
			if keep[i] && cands[i].col.title == title {
				return &cands[i]
			}
		}
		return nil
	}
	extra := avail - used()
	// share gives the width left over to the named columns, a cell each in turn, until each
	// has its natural width or nothing is left.
	share := func(titles ...string) {
		for extra > 0 {
			grew := false
			for _, t := range titles {
				if c := find(t); c != nil && c.col.width < c.natural && extra > 0 {
					c.col.width++
					extra--
					grew = true
				}
			}
			if !grew {
				return
			}
		}
	}
	share("SUSPECT", "WORKLOAD")
	if w := find("WORKLOAD"); w != nil && w.col.width < w.natural {
		// Too narrow for kind/name: the name alone tells workloads apart sooner, and what it
		// does not need goes to the suspect.
		w.col.value = func(r *row) string { return r.name }
		w.natural = nameW
		if w.col.width > nameW {
			extra += w.col.width - nameW
			w.col.width = nameW
		}
		share("SUSPECT", "WORKLOAD")
	}
	share("NAMESPACE", "CONTEXT")
	s.cols = s.cols[:0]
	for i, c := range cands {
		if keep[i] {
			s.cols = append(s.cols, c.col)
		}
	}
}
