package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/memory"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

// BenchmarkConsoleVsAudit times what the console does from start to the frame of its complete
// diagnosis and what `audit -o json` does from start to the end of its report, on the scalegen
// dump that hack/bench-dump.sh writes (20,000 pods; set KUBEDIAGNOSE_SCALE_DIR as for it). Each
// side runs in a process of its own, this test binary run again (TestMain), as the commands
// do: in one process the second side would start on the first's heap and its collector's pace.
// The console is the real program loop (tea.Program, its renderer writing to io.Discard),
// reading with early rows and progress as in a terminal, under the memory policy the commands set;
// the audit reads with progress, diagnoses and prints JSON. Each op is one of each, their
// order alternating, so a machine whose speed drifts weighs on both. Both are timed in-process, from before the read to the
// end, so no terminal and no polling stand between; hack/bench-console-vs-audit.sh measures
// the commands in tmux, from outside. Issue 12 asks for the console within 1.0x the audit.
func BenchmarkConsoleVsAudit(b *testing.B) {
	path := scalegenDump(b)
	var console, audit, ratio, consoleCPU, auditCPU []float64
	for i := 0; i < b.N; i++ {
		var c, a sideRun
		if i%2 == 0 {
			c, a = side(b, "console", path), side(b, "audit", path)
		} else {
			a, c = side(b, "audit", path), side(b, "console", path)
		}
		console, audit = append(console, c.wall.Seconds()), append(audit, a.wall.Seconds())
		consoleCPU, auditCPU = append(consoleCPU, c.cpu.Seconds()), append(auditCPU, a.cpu.Seconds())
		ratio = append(ratio, c.wall.Seconds()/a.wall.Seconds())
		b.Logf("pair %d: console %.3f s (CPU %.2f s), audit %.3f s (CPU %.2f s), console/audit %.2f",
			i+1, c.wall.Seconds(), c.cpu.Seconds(), a.wall.Seconds(), a.cpu.Seconds(), ratio[i])
	}
	b.ReportMetric(median(console), "console-s")
	b.ReportMetric(median(audit), "audit-s")
	b.ReportMetric(median(consoleCPU), "console-cpu-s")
	b.ReportMetric(median(auditCPU), "audit-cpu-s")
	b.ReportMetric(median(ratio), "console/audit")
}

// sideRun is one side's time to its complete diagnosis and the process's CPU time meanwhile.
type sideRun struct{ wall, cpu time.Duration }

// vsAuditSideEnv names the side a run of this test binary plays for BenchmarkConsoleVsAudit,
// and the dump, as "console=PATH" or "audit=PATH".
const vsAuditSideEnv = "KUBEDIAGNOSE_VSAUDIT_SIDE"

func TestMain(m *testing.M) {
	if v := os.Getenv(vsAuditSideEnv); v != "" {
		os.Exit(playSide(v))
	}
	os.Exit(m.Run())
}

// playSide runs one side and prints its wall and CPU nanoseconds.
func playSide(v string) int {
	name, path, _ := strings.Cut(v, "=")
	// The process's memory policy, as every command sets it.
	memory.ForReads()
	var (
		r   sideRun
		err error
	)
	switch name {
	case "console":
		r, err = consoleOnce(path)
	case "audit":
		r, err = auditOnce(path)
	default:
		err = fmt.Errorf("no side %q", name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(int64(r.wall), int64(r.cpu))
	return 0
}

// side runs one side in a process of its own.
func side(b *testing.B, name, path string) sideRun {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), vsAuditSideEnv+"="+name+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s: %v: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	var wall, cpu int64
	if _, err := fmt.Sscan(string(out), &wall, &cpu); err != nil {
		b.Fatalf("%s printed %q: %v", name, out, err)
	}
	return sideRun{time.Duration(wall), time.Duration(cpu)}
}

func scalegenDump(b *testing.B) string {
	root := os.Getenv("KUBEDIAGNOSE_SCALE_DIR")
	if root == "" {
		b.Skip("set KUBEDIAGNOSE_SCALE_DIR to the directory hack/bench-dump.sh writes its dumps to")
	}
	path := filepath.Join(root, "scalegen")
	if _, err := os.Stat(path); err != nil {
		b.Fatalf("no scalegen dump (hack/bench-dump.sh writes it): %v", err)
	}
	return path
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// untilDiagnosed is the console's model that says when its complete diagnosis is on screen
// (Update has taken it and View drawn it) or its read failed.
type untilDiagnosed struct {
	*Model
	once *sync.Once
	done chan struct{}
	// at and cpu are when, and the process's CPU time then.
	at  *time.Time
	cpu *time.Duration
}

func (u untilDiagnosed) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := u.Model.Update(msg)
	return u, cmd
}

func (u untilDiagnosed) View() string {
	v := u.Model.View()
	if (u.data != nil && !u.data.partial) || u.state == stateError {
		u.once.Do(func() {
			*u.at, *u.cpu = time.Now(), cpuTime()
			close(u.done)
		})
	}
	return v
}

func consoleOnce(path string) (sideRun, error) {
	start, startCPU := time.Now(), cpuTime()
	var (
		at  time.Time
		cpu time.Duration
	)
	src := dump.Source{Path: path}
	m := New(context.Background(), Options{Source: src, SourceLabel: "dump"}, colourStyles(), time.Now)
	u := untilDiagnosed{Model: m, once: new(sync.Once), done: make(chan struct{}), at: &at, cpu: &cpu}
	p := tea.NewProgram(u, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler(),
		tea.WithFPS(frameRate))
	go func() {
		// The output is no terminal, so the program learns no size of its own.
		p.Send(tea.WindowSizeMsg{Width: 200, Height: 50})
		<-u.done
		p.Quit()
	}()
	if _, err := p.Run(); err != nil {
		return sideRun{}, err
	}
	if m.loadErr != nil {
		return sideRun{}, m.loadErr
	}
	return sideRun{at.Sub(start), cpu - startCPU}, nil
}

func auditOnce(path string) (sideRun, error) {
	start, startCPU := time.Now(), cpuTime()
	progress := func(what string, n int) { _, _ = fmt.Fprintf(io.Discard, "\rreading %s… %d", what, n) }
	snap, err := dump.Source{Path: path}.SnapshotWithProgress(context.Background(), progress)
	if err != nil {
		return sideRun{}, err
	}
	rep := diagnose.Diagnose(snap)
	p, err := report.NewPrinter("json", report.Options{Templates: report.TemplatesOf(snap)})
	if err != nil {
		return sideRun{}, err
	}
	if err := p.PrintReport(io.Discard, rep); err != nil {
		return sideRun{}, err
	}
	return sideRun{time.Since(start), cpuTime() - startCPU}, nil
}

// BenchmarkAuditPhases splits what both sides of BenchmarkConsoleVsAudit do on the scalegen
// dump into its phases, wall and CPU time each: the read (the same reader for both), the
// engine, the audit's JSON report and the console's dataset of its rows. What one side does
// and the other does not (the report, the dataset, the console's program) is all either can
// gain on the other: the read and the engine are the same work. The ops run one after another
// in this process, so each starts on the last one's garbage, unlike a command.
func BenchmarkAuditPhases(b *testing.B) {
	path := scalegenDump(b)
	type phase struct {
		unit      string
		wall, cpu []float64
	}
	phases := []*phase{{unit: "read"}, {unit: "diagnose"}, {unit: "json"}, {unit: "dataset"}}
	for i := 0; i < b.N; i++ {
		type moment struct {
			at  time.Time
			cpu time.Duration
		}
		var marks []moment
		mark := func() { marks = append(marks, moment{time.Now(), cpuTime()}) }
		mark()
		snap, err := dump.Source{Path: path}.SnapshotWithProgress(context.Background(), func(string, int) {})
		if err != nil {
			b.Fatal(err)
		}
		mark()
		rep := diagnose.Diagnose(snap)
		mark()
		p, err := report.NewPrinter("json", report.Options{Templates: report.TemplatesOf(snap)})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.PrintReport(io.Discard, rep); err != nil {
			b.Fatal(err)
		}
		mark()
		if ds := datasetOf(snap, rep); len(ds.rows) != len(rep.Workloads) {
			b.Fatalf("%d rows of %d workloads", len(ds.rows), len(rep.Workloads))
		}
		mark()
		for j, ph := range phases {
			ph.wall = append(ph.wall, marks[j+1].at.Sub(marks[j].at).Seconds())
			ph.cpu = append(ph.cpu, (marks[j+1].cpu - marks[j].cpu).Seconds())
		}
	}
	for _, ph := range phases {
		b.ReportMetric(median(ph.wall), ph.unit+"-s")
		b.ReportMetric(median(ph.cpu), ph.unit+"-cpu-s")
	}
}
