package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// headerHeight is the number of header lines above every screen.
const headerHeight = 2

// View draws the whole screen. It does no I/O and changes nothing the screen shows; it keeps
// the table and its fitted lines for the next frame (workloadsScreen.drawn, Model.fitted).
func (m *Model) View() string {
	var body string
	switch m.state {
	case stateLoading:
		body = m.loadingView()
		if m.screen == screenHelp {
			// Help is open while the first read runs.
			body = m.help.View()
		}
	case stateError:
		body = m.errorView()
	default:
		switch m.screen {
		case screenDiagnosis:
			body = m.diagnosis.View()
		case screenHelp:
			body = m.help.View()
		default:
			body = m.workloads.View()
		}
	}
	return m.fit(m.headerLines(), body, m.footer())
}

// fit cuts the frame to the terminal, so no line wraps and nothing scrolls off: the footer's
// last line is the screen's last, the lines above it are cut to the height or padded to it.
func (m *Model) fit(header, body, footer string) string {
	if m.height <= 0 {
		return ""
	}
	lines := make([]string, 0, m.height+4)
	lines = append(lines, m.fitWidth(strings.Split(header, "\n"))...)
	lines = append(lines, m.fitBody(body)...)
	foot := m.fitWidth(strings.Split(footer, "\n"))
	lines = append(lines, foot[:len(foot)-1]...)
	lines = lines[:min(len(lines), m.height-1)]
	for len(lines) < m.height-1 {
		lines = append(lines, "")
	}
	return strings.Join(append(lines, foot[len(foot)-1]), "\n")
}

// fitBody is fitWidth of the body's lines, kept for the next frame: the body is most of the
// screen and mostly the same string again (the table between two spinner ticks).
func (m *Model) fitBody(body string) []string {
	if m.fitted.lines == nil || body != m.fitted.body || m.width != m.fitted.width {
		m.fitted.body, m.fitted.width = body, m.width
		m.fitted.lines = m.fitWidth(strings.Split(body, "\n"))
	}
	return m.fitted.lines
}

// fitWidth cuts each line to the terminal's width, in place.
func (m *Model) fitWidth(lines []string) []string {
	for i, l := range lines {
		if ansi.StringWidth(l) > m.width {
			lines[i] = ansi.Truncate(l, m.width, "…")
		}
	}
	return lines
}

func (m *Model) headerLines() string {
	st := m.styles
	parts := []string{st.Title.Render("kubectl-diagnose")}
	switch {
	case m.workloads.contextFilter != "":
		// Where the c key has got to in its round of the contexts.
		i := slices.Index(m.workloads.contexts, m.workloads.contextFilter)
		parts = append(parts, fmt.Sprintf("ctx %s (%d of %d)", m.workloads.contextFilter, i+1, len(m.workloads.contexts)))
	case m.opts.Context != "":
		parts = append(parts, "ctx "+Sanitize(m.opts.Context))
	}
	parts = append(parts, "ns "+m.namespaceLabel())
	if m.opts.Selector != "" {
		parts = append(parts, Sanitize(m.opts.Selector))
	}
	switch {
	case m.opts.SourceLabel != "":
		parts = append(parts, Sanitize(m.opts.SourceLabel))
	case m.data != nil && m.data.snap.Source.Type != "":
		parts = append(parts, sourceLabel(m.data.snap))
	}
	switch {
	case m.fleetw != nil:
		parts = append(parts, m.fleetHeader())
	case m.live.watching && m.live.err != nil && m.live.updatedAt.IsZero():
		// Nothing was ever read, so nothing on screen is stale: say what fails instead.
		parts = append(parts, st.Error.Render("✕ nothing read yet")+" "+st.Dim.Render(Sanitize(m.live.err.Error())))
	case m.live.watching && m.live.err != nil:
		parts = append(parts, st.Stale.Render("▲ stale "+since(m.clock, m.live.updatedAt))+" "+
			st.Dim.Render(Sanitize(m.live.err.Error())))
	case m.live.watching && !m.live.updatedAt.IsZero():
		parts = append(parts, st.Live.Render("● live")+st.Dim.Render(" updated "+since(m.clock, m.live.updatedAt)+" ago"))
	case m.live.watching && m.data != nil && m.data.partial:
		// The workloads are listed, the rest of the first read is under way.
		parts = append(parts, st.Dim.Render("○")+" "+m.spinner.View()+" "+m.readingLine())
	case m.live.watching && m.progress != "":
		// The first read is under way; the console follows nothing yet.
		parts = append(parts, st.Dim.Render("○ reading…"))
	case m.live.watching:
		parts = append(parts, st.Dim.Render("○ connecting…"))
	case m.data != nil:
		parts = append(parts, "at "+m.data.snap.ReferenceTime.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if m.refreshing {
		parts = append(parts, m.spinner.View()+" refreshing")
	}
	if !m.live.watching && m.data != nil && m.data.partial {
		parts = append(parts, m.spinner.View()+" "+m.readingLine())
	}
	line1 := ansi.Truncate(strings.Join(parts, st.Dim.Render(" · ")), m.width, "…")
	return line1 + "\n" + ansi.Truncate(m.totalsLine(), m.width, "…")
}

func (m *Model) namespaceLabel() string {
	switch {
	case !m.opts.AllNamespaces && len(m.opts.Namespaces) > 0:
		return Sanitize(strings.Join(m.opts.Namespaces, ","))
	case m.data != nil && len(m.data.namespaces) > 0 && len(m.data.namespaces) <= 3:
		// All namespaces of a dump are often one or two: name them.
		return Sanitize(strings.Join(m.data.namespaces, ","))
	case m.data != nil && len(m.data.namespaces) > 3:
		return fmt.Sprintf("all (%d)", len(m.data.namespaces))
	case m.opts.AllNamespaces:
		return "all"
	}
	return "-"
}

// totalsLine counts workloads per shape as coloured badges, worst first.
func (m *Model) totalsLine() string {
	if m.data == nil {
		return ""
	}
	st := m.styles
	counts := m.data.counts
	short := m.width < 100
	var parts []string
	if m.data.partial {
		parts = append(parts, st.Dim.Render(fmt.Sprintf("%s listed · shapes follow their copies", plural(len(m.data.rows), "workload", "workloads"))))
	}
	for _, sh := range diagnose.Shapes {
		if counts[sh] == 0 {
			continue
		}
		parts = append(parts, st.Badge(sh, short)+fmt.Sprintf(" %d", counts[sh]))
	}
	if n := m.data.waived; n > 0 {
		parts = append(parts, st.Dim.Render(fmt.Sprintf("%d waived", n)))
	}
	if len(parts) == 0 {
		parts = append(parts, st.Dim.Render("no workloads"))
	}
	line := strings.Join(parts, "  ")
	if n := len(m.data.snap.Visibility); n > 0 {
		// What the source could not read: the counts are not the whole picture.
		line += "  " + st.Warn.Render(fmt.Sprintf("⚠ %d not readable", n))
	}
	if f := m.data.shared; len(f) > 0 {
		// Many rows failing on one dependency are one finding: the dependency, not each row.
		what := "shared dependency "
		if len(f) > 1 {
			what = fmt.Sprintf("%d shared dependencies: ", len(f))
		}
		line += "  " + st.Warn.Render("⚑ "+what+strings.Join(f, "; "))
	}
	if m.screen == screenWorkloads && m.state == stateReady {
		line += st.Dim.Render("  " + m.workloads.Position())
		if m.workloads.hideHealthy {
			line += st.Dim.Render(" · healthy hidden")
		}
	}
	return line
}

func (m *Model) loadingView() string {
	lines := []string{"", "  " + m.spinner.View() + " " + m.readingLine()}
	return strings.Join(lines, "\n")
}

// readingLine says how far the read has got: the kind counted last, what has been read in all,
// and for how long ("reading pods… 12,400 · 14,210 objects of 5 kinds · 3s").
func (m *Model) readingLine() string {
	elapsed := duration.HumanDuration(max(m.clock.Sub(m.reading.start), 0))
	if len(m.reading.counts) == 0 {
		if m.reading.diagnosing {
			return "diagnosing… · " + elapsed
		}
		return "reading… · " + elapsed
	}
	// A kind whose list is opened and not read yet is named, not counted.
	total, kinds := 0, 0
	for _, n := range m.reading.counts {
		total += n
		if n > 0 {
			kinds++
		}
	}
	if m.reading.diagnosing {
		return fmt.Sprintf("diagnosing… · %s of %s read · %s", plural(total, "object", "objects"),
			plural(kinds, "kind", "kinds"), elapsed)
	}
	return fmt.Sprintf("reading %s… %s · %s of %s · %s", m.reading.what, report.Thousands(m.reading.n),
		plural(total, "object", "objects"), plural(kinds, "kind", "kinds"), elapsed)
}

func (m *Model) errorView() string {
	st := m.styles
	lines := []string{"", st.Error.Render("  could not read the snapshot")}
	if m.loadErr != nil {
		lines = append(lines, wrap(Sanitize(m.loadErr.Error()), m.width, "  ")...)
	}
	hint := "r retry · q quit"
	if m.data != nil {
		hint = "esc back to the last snapshot · r retry · q quit"
	}
	lines = append(lines, "", st.Dim.Render("  "+hint))
	return strings.Join(lines, "\n")
}

func (m *Model) footer() string {
	st := m.styles
	switch {
	case m.toast != "":
		return st.Toast.Render(ansi.Truncate(m.toast, m.width, "…"))
	case m.nsPrompt:
		return m.nsInput.View()
	case m.state != stateError && m.screen == screenWorkloads && (m.workloads.filtering || m.workloads.filter.Value() != ""):
		return m.workloads.filter.View()
	}
	// On a live cluster with metrics the throughput is read on its own interval, not with each
	// watch event: say how old it may be.
	note := ""
	if m.opts.Watch != nil && m.opts.MetricsRefresh > 0 {
		note = "throughput every " + duration.HumanDuration(m.opts.MetricsRefresh)
		if ansi.StringWidth(note)+20 > m.width {
			note = ""
		}
	}
	h := help.New()
	h.Width = m.width
	if note != "" {
		h.Width -= ansi.StringWidth(note) + 3
	}
	h.Styles.ShortKey = st.HelpKey
	h.Styles.ShortDesc = st.HelpDesc
	h.Styles.ShortSeparator = st.Dim
	h.Styles.Ellipsis = st.Dim
	var bindings []key.Binding
	switch {
	case m.state != stateReady:
		bindings = []key.Binding{m.keys.Refresh, m.keys.Quit}
	case m.screen == screenDiagnosis:
		bindings = m.diagnosis.ShortHelp()
	case m.screen == screenHelp:
		bindings = m.help.ShortHelp()
	default:
		bindings = m.workloads.ShortHelp()
	}
	bindings = fitBindings(bindings, h.Width, ansi.StringWidth(h.ShortSeparator))
	if note == "" {
		return h.ShortHelpView(bindings)
	}
	return h.ShortHelpView(bindings) + st.Dim.Render(" · "+note)
}

// fitBindings keeps the footer's bindings that fit the width, in order, leaving out the later
// ones that do not rather than cutting the line: the last two (help and quit, or back and
// quit) always stay, and ? lists every key.
func fitBindings(bindings []key.Binding, width, sepW int) []key.Binding {
	entry := func(b key.Binding) int {
		h := b.Help()
		return ansi.StringWidth(h.Key) + 1 + ansi.StringWidth(h.Desc)
	}
	used := 0
	for _, b := range bindings {
		if shown(b) {
			used += entry(b) + sepW
		}
	}
	if used-sepW <= width || len(bindings) <= 2 {
		return bindings
	}
	keep := bindings[len(bindings)-2:]
	used = 0
	for _, b := range keep {
		used += entry(b) + sepW
	}
	var out []key.Binding
	for _, b := range bindings[:len(bindings)-2] {
		if !shown(b) {
			continue
		}
		// used counts a separator after each entry; the line has one fewer.
		if used+entry(b) <= width {
			out = append(out, b)
			used += entry(b) + sepW
		}
	}
	return append(out, keep...)
}

// sourceLabel names a snapshot's source for the header when the options do not.
func sourceLabel(s *snapshot.Snapshot) string { return Sanitize(string(s.Source.Type)) }

// plural counts n things with thousands separators: "1 kind", "14,210 objects".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return report.Thousands(n) + " " + many
}
