package tui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// goldenSizes are the widths the console is shown at in its goldens: a standard terminal, a
// wide one, a whole screen.
var goldenSizes = [][2]int{{80, 24}, {120, 30}, {220, 60}}

// TestGoldenTableWidths: the workloads table at three widths, on the fixture and on the demo,
// whose suspects are long: the columns share the width, SUSPECT and WORKLOAD first.
func TestGoldenTableWidths(t *testing.T) {
	for _, size := range goldenSizes {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("fixture-%dx%d", w, h), func(t *testing.T) {
			golden.RequireEqual(t, []byte(seen(readyModel(w, h))))
		})
		t.Run(fmt.Sprintf("demo-%dx%d", w, h), func(t *testing.T) {
			golden.RequireEqual(t, []byte(seen(demoModel(t, w, h))))
		})
	}
}

// TestGoldenTabWidths: every tab of the ingester's diagnosis at three widths, on the fixture;
// the Logs tab on the demo too, whose diagnosis cites log lines, wrapped and not.
func TestGoldenTabWidths(t *testing.T) {
	for _, size := range goldenSizes {
		w, h := size[0], size[1]
		for i, name := range tabNames {
			t.Run(fmt.Sprintf("%s-%dx%d", name, w, h), func(t *testing.T) {
				m := readyModel(w, h)
				press(m, "down", "down", "enter", itoa(i+1))
				golden.RequireEqual(t, []byte(seen(m)))
			})
		}
		t.Run(fmt.Sprintf("demo-Logs-%dx%d", w, h), func(t *testing.T) {
			m := demoModel(t, w, h)
			open(m, "ingester")
			press(m, "4")
			golden.RequireEqual(t, []byte(seen(m)))
		})
		t.Run(fmt.Sprintf("demo-Logs-unwrapped-%dx%d", w, h), func(t *testing.T) {
			m := demoModel(t, w, h)
			open(m, "ingester")
			press(m, "4", "w")
			golden.RequireEqual(t, []byte(seen(m)))
		})
		t.Run(fmt.Sprintf("demo-Spec-%dx%d", w, h), func(t *testing.T) {
			m := demoModel(t, w, h)
			open(m, "collector")
			press(m, "5")
			golden.RequireEqual(t, []byte(seen(m)))
		})
		t.Run(fmt.Sprintf("dump-Timeline-%dx%d", w, h), func(t *testing.T) {
			golden.RequireEqual(t, []byte(seen(timelineModel(t, w, h))))
		})
	}
}
