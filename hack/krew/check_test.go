package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTarGz writes an archive of files (name to mode) as goreleaser writes one.
func writeTarGz(t *testing.T, files map[string]int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.tar.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for name, mode := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: 1, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, gz, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestCheckArchive(t *testing.T) {
	good := map[string]int64{"kubectl-diagnose": 0o755, "kubectl_complete-diagnose": 0o755, "LICENSE": 0o644, "README.md": 0o644}
	if err := checkArchive(writeTarGz(t, good), "linux"); err != nil {
		t.Errorf("the archive of one binary and the script: %v", err)
	}
	tests := []struct {
		name string
		edit func(map[string]int64)
		want string
	}{
		{
			name: "a second binary",
			edit: func(m map[string]int64) { m["kubectl_complete-diagnose.bin"] = 0o755 },
			want: "holds LICENSE, README.md, kubectl-diagnose, kubectl_complete-diagnose, kubectl_complete-diagnose.bin; want exactly LICENSE, README.md, kubectl-diagnose, kubectl_complete-diagnose",
		},
		{
			name: "no completion script",
			edit: func(m map[string]int64) { delete(m, "kubectl_complete-diagnose") },
			want: "holds LICENSE, README.md, kubectl-diagnose; want exactly",
		},
		{
			name: "a script that does not run",
			edit: func(m map[string]int64) { m["kubectl_complete-diagnose"] = 0o644 },
			want: "kubectl_complete-diagnose is not executable (mode -rw-r--r--)",
		},
		{
			name: "files in a directory",
			edit: func(m map[string]int64) {
				delete(m, "kubectl-diagnose")
				m["kubectl-diagnose_linux_amd64/kubectl-diagnose"] = 0o755
			},
			want: "want exactly",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]int64{}
			for k, v := range good {
				m[k] = v
			}
			tt.edit(m)
			if err := checkArchive(writeTarGz(t, m), "linux"); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("checkArchive = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCheckWindowsArchive(t *testing.T) {
	write := func(names ...string) string {
		path := filepath.Join(t.TempDir(), "a.zip")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(f)
		for _, n := range names {
			if _, err := zw.Create(n); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if err := checkArchive(write("kubectl-diagnose.exe", "kubectl_complete-diagnose.cmd", "LICENSE", "README.md"), "windows"); err != nil {
		t.Errorf("the Windows archive: %v", err)
	}
	if err := checkArchive(write("kubectl-diagnose.exe", "kubectl_complete-diagnose", "LICENSE", "README.md"), "windows"); err == nil {
		t.Error("a Windows archive with the shell script instead of the .cmd passed")
	}
}

func TestArchiveFor(t *testing.T) {
	arts := artifactsOf("v0.2.0")
	arts = strings.ReplaceAll(arts, `"path":"dist/kubectl-diagnose_v0.2.0_linux_arm64.tar.gz"`, `"path":"dist/here.tar.gz"`)
	got, err := archiveFor([]byte(arts), "linux", "arm64")
	if err != nil || got != "dist/here.tar.gz" {
		t.Errorf("archiveFor(linux/arm64) = %q, %v", got, err)
	}
	if _, err := archiveFor([]byte(arts), "plan9", "amd64"); err == nil || err.Error() != "no plan9/amd64 archive among the artifacts" {
		t.Errorf("archiveFor(plan9) = %v", err)
	}
}

func TestWriteIndex(t *testing.T) {
	out, err := render([]byte(artifactsOf("v0.2.0")), "v0.2.0", "https://example.invalid")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writeIndex(dir, out); err != nil {
		t.Fatal(err)
	}
	if err := validateFile(filepath.Join(dir, "plugins", "diagnose.yaml")); err != nil {
		t.Errorf("the index's plugins/diagnose.yaml: %v", err)
	}
}
