package tui

import (
	"testing"
	"unsafe"
)

// freshView is the frame drawn with nothing kept from the frames before.
func freshView(m *Model) string {
	kept, fitted := m.workloads.drawn, m.fitted
	m.workloads.drawn.view, m.fitted.lines = "", nil
	v := m.View()
	m.workloads.drawn, m.fitted = kept, fitted
	return v
}

// TestAFrameKeptIsTheFrameDrawnAfresh drives the workloads screen through everything that
// changes what it shows and checks after each step that the frame, drawn from what was kept
// of the frames before, is the one drawn from nothing.
func TestAFrameKeptIsTheFrameDrawnAfresh(t *testing.T) {
	m := bigModel(t, 300, 160, 30)
	other := bigModel(t, 300, 160, 30)
	// Rows of the same count in another order: the same lengths, other content.
	other.data.rows[0], other.data.rows[1] = other.data.rows[1], other.data.rows[0]
	steps := []struct {
		name string
		do   func()
	}{
		{"j", func() { press(m, "j") }},
		{"pgdown", func() { press(m, " ") }},
		{"G", func() { press(m, "G") }},
		{"g", func() { press(m, "g") }},
		{"h hides the healthy", func() { press(m, "h") }},
		{"h shows them", func() { press(m, "h") }},
		{"/ opens the filter", func() { press(m, "/") }},
		{"a filter typed", func() { press(m, "0", "1") }},
		{"a letter erased", func() { press(m, "backspace") }},
		{"esc", func() { press(m, "esc") }},
		{"narrower", func() { m.Update(windowSize(90, 30)) }},
		{"shorter", func() { m.Update(windowSize(90, 12)) }},
		{"wider", func() { m.Update(windowSize(220, 40)) }},
		{"new rows", func() { m.setData(other.data) }},
		{"the same rows again", func() { m.setData(other.data) }},
		{"k", func() { press(m, "k") }},
		{"enter", func() { press(m, "enter") }},
		{"esc back", func() { press(m, "esc") }},
		{"?", func() { press(m, "?") }},
		{"? closes help", func() { press(m, "?") }},
	}
	for _, st := range steps {
		st.do()
		if got, want := m.View(), freshView(m); got != want {
			t.Fatalf("after %s the frame kept differs from the frame drawn afresh:\n%s\n---\n%s", st.name, got, want)
		}
	}
}

// TestATickRedrawsNoTable checks that a frame that changes only the header, as the spinner's
// do while a read runs, reuses the table and its fitted lines instead of drawing them again.
func TestATickRedrawsNoTable(t *testing.T) {
	m := readingModel(t)
	first := m.View()
	table := m.workloads.drawn.view
	lines := m.fitted.lines
	m.Update(m.spinner.Tick())
	m.counted("pods", 4000, map[string]int{"Deployment": 2000, "Pod": 4000})
	second := m.View()
	if first == second {
		t.Fatal("the spinner and the progress line did not move the frame")
	}
	if unsafe.StringData(m.workloads.drawn.view) != unsafe.StringData(table) {
		t.Error("the table was drawn again for a frame that changed only the header")
	}
	if &m.fitted.lines[0] != &lines[0] {
		t.Error("the body was fitted again for a frame that changed only the header")
	}
	press(m, "j")
	if m.View() != freshView(m) {
		t.Error("after j the frame kept differs from the frame drawn afresh")
	}
	if unsafe.StringData(m.workloads.drawn.view) == unsafe.StringData(table) {
		t.Error("j moved the cursor and the table was not drawn again")
	}
}
