package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
)

// BenchmarkAuditMemory runs the built `audit --dump PATH -o json` on each dump hack/bench-dump.sh
// writes (set KUBEDIAGNOSE_SCALE_DIR as for it) and measures its peak memory against the bytes
// of the objects the audit keeps (issue 12: RSS at most 1.5 times those). The peak is sampled
// from /proc every millisecond, in two parts: anonymous memory (heap, stacks, the runtime's own:
// what the read and the diagnosis take) and file-backed pages (the binary's code and read-only
// data, resident whatever the input; the "version" case measures them alone). The bytes kept
// are what the same read and diagnosis leave live in this process (the snapshot and the
// report, after a collection). Linux only.
func BenchmarkAuditMemory(b *testing.B) {
	root := os.Getenv("KUBEDIAGNOSE_SCALE_DIR")
	if root == "" {
		b.Skip("set KUBEDIAGNOSE_SCALE_DIR to the directory hack/bench-dump.sh writes its dumps to")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("no /proc to sample: ", err)
	}
	bin := binary(b)
	b.Run("version", func(b *testing.B) {
		var anon, file []float64
		for b.Loop() {
			p := peakOf(b, exec.Command(bin, "version"))
			anon, file = append(anon, p.anon), append(file, p.file)
		}
		b.ReportMetric(medianOf(anon)/(1<<20), "anon-MiB")
		b.ReportMetric(medianOf(file)/(1<<20), "file-MiB")
	})
	for _, name := range []string{"scalegen", "dir", "cluster-info-dump.json"} {
		path := filepath.Join(root, name)
		if _, err := os.Stat(path); err != nil {
			b.Fatalf("no %s dump (hack/bench-dump.sh writes it): %v", name, err)
		}
		b.Run(name, func(b *testing.B) {
			kept := keptBy(b, path)
			var anon, file []float64
			for b.Loop() {
				p := peakOf(b, exec.Command(bin, "audit", "--dump", path, "-o", "json"))
				anon, file = append(anon, p.anon), append(file, p.file)
			}
			a, f := medianOf(anon), medianOf(file)
			b.ReportMetric(kept/(1<<20), "kept-MiB")
			b.ReportMetric(a/(1<<20), "anon-MiB")
			b.ReportMetric(f/(1<<20), "file-MiB")
			b.ReportMetric(a/kept, "anon/kept")
			b.ReportMetric((a+f)/kept, "rss/kept")
		})
	}
}

// keptBy reads and diagnoses the dump at path as the audit does and returns the heap they leave
// live, in bytes.
func keptBy(b *testing.B, path string) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := dump.Read(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	r := diagnose.Diagnose(s)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	runtime.KeepAlive(r)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// peak is the most anonymous and file-backed resident memory a process was seen to hold, in
// bytes.
type peak struct{ anon, file float64 }

// peakOf runs c to its end, sampling its /proc status every millisecond.
func peakOf(b *testing.B, c *exec.Cmd) peak {
	var stderr bytes.Buffer
	c.Stdout, c.Stderr = io.Discard, &stderr
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", c.Process.Pid)
	var p peak
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		// Until reaped, an exited process reads as a zombie without Rss lines.
		if anon, file, ok := residentParts(status); ok {
			p.anon, p.file = max(p.anon, anon), max(p.file, file)
		}
		select {
		case err := <-done:
			if err != nil {
				b.Fatalf("%s: %v: %s", strings.Join(c.Args, " "), err, bytes.TrimSpace(stderr.Bytes()))
			}
			if p.anon == 0 {
				b.Fatalf("%s: ended before a sample of its memory", strings.Join(c.Args, " "))
			}
			return p
		case <-tick.C:
		}
	}
}

// residentParts reads RssAnon and RssFile, in bytes, from a /proc status file.
func residentParts(status string) (anon, file float64, ok bool) {
	f, err := os.Open(status)
	if err != nil {
		return 0, 0, false
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	seen := 0
	for sc.Scan() {
		var kb float64
		if rest, found := strings.CutPrefix(sc.Text(), "RssAnon:"); found {
			if _, err := fmt.Sscan(rest, &kb); err == nil {
				anon, seen = kb*1024, seen+1
			}
		} else if rest, found := strings.CutPrefix(sc.Text(), "RssFile:"); found {
			if _, err := fmt.Sscan(rest, &kb); err == nil {
				file, seen = kb*1024, seen+1
			}
		}
	}
	return anon, file, seen == 2
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
