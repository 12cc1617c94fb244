package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// checkRelease checks the archive goreleaser built in dist for this machine's platform, and
// installs it with krew from a custom index of its manifest, as a user would.
func checkRelease(dist, krew string) error {
	arts, err := os.ReadFile(filepath.Join(dist, "artifacts.json"))
	if err != nil {
		return fmt.Errorf("read goreleaser artifacts: %w", err)
	}
	archive, err := archiveFor(arts, runtime.GOOS, runtime.GOARCH)
	if err != nil {
		return err
	}
	if err := checkArchive(archive, runtime.GOOS); err != nil {
		return err
	}
	_, _, files := archiveFiles(runtime.GOOS)
	fmt.Printf("%s holds exactly %s\n", filepath.Base(archive), strings.Join(files, ", "))
	return installWithKrew(dist, krew)
}

// archiveFor finds the path of the archive of goos/goarch among goreleaser's artifacts.
func archiveFor(artifactsJSON []byte, goos, goarch string) (string, error) {
	var arts []struct {
		artifact
		Path string `json:"path"`
	}
	if err := json.Unmarshal(artifactsJSON, &arts); err != nil {
		return "", fmt.Errorf("read artifacts: %w", err)
	}
	for _, a := range arts {
		if a.Type == "Archive" && a.Goos == goos && a.Goarch == goarch {
			return a.Path, nil
		}
	}
	return "", fmt.Errorf("no %s/%s archive among the artifacts", goos, goarch)
}

// entry is a file of an archive: its name and mode.
type entry struct {
	name string
	mode fs.FileMode
}

// checkArchive fails unless the archive holds exactly the files archiveFiles names, at its top,
// the binary and the completion script executable.
func checkArchive(path, goos string) error {
	entries, err := listArchive(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	bin, script, want := archiveFiles(goos)
	var got []string
	for _, e := range entries {
		got = append(got, e.name)
		if (e.name == bin || e.name == script) && goos != "windows" && e.mode&0o111 == 0 {
			return fmt.Errorf("%s: %s is not executable (mode %s)", path, e.name, e.mode)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s holds %s; want exactly %s", path, strings.Join(got, ", "), strings.Join(want, ", "))
	}
	return nil
}

// listArchive lists the files of a .tar.gz or .zip archive.
func listArchive(path string) ([]entry, error) {
	if strings.HasSuffix(path, ".zip") {
		z, err := zip.OpenReader(path)
		if err != nil {
			return nil, err
		}
		defer func() { _ = z.Close() }() // read only
		var out []entry
		for _, f := range z.File {
			if !f.FileInfo().IsDir() {
				out = append(out, entry{f.Name, f.Mode()})
			}
		}
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeDir {
			out = append(out, entry{h.Name, h.FileInfo().Mode()})
		}
	}
}

// installWithKrew serves dist on loopback, writes an index of the manifest of its archives (their
// URLs on that server) into a git repository, and has krew add the index, install the plugin
// from it and answer: the plugin prints its version, and the completion script krew installed
// beside it completes the subcommands.
func installWithKrew(dist, krew string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dist)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }() // ends with Close below
	defer func() { _ = srv.Close() }()

	manifest, err := renderDist(dist, "", "http://"+ln.Addr().String())
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "krew-check-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // scratch space
	index := filepath.Join(tmp, "index")
	if err := writeIndex(index, manifest); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "."},
		{"-c", "user.name=release-check", "-c", "user.email=release-check@localhost", "commit", "-q", "-m", "plugins/diagnose.yaml"},
	} {
		if out, err := run(index, nil, "git", args...); err != nil {
			return fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	root := filepath.Join(tmp, "krew")
	env := []string{"KREW_ROOT=" + root, "KREW_NO_UPGRADE_CHECK=1"}
	for _, args := range [][]string{
		{"index", "add", indexName, index},
		{"install", indexName + "/" + pluginName},
	} {
		if out, err := run(tmp, env, krew, args...); err != nil {
			return fmt.Errorf("krew %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	bin, script, _ := archiveFiles(runtime.GOOS)
	out, err := run(tmp, nil, filepath.Join(root, "bin", bin), "version")
	if err != nil || !strings.HasPrefix(out, "kubectl-diagnose v") {
		return fmt.Errorf("the plugin krew installed: version: %w\n%s", errOr(err, "unexpected output"), out)
	}
	// krew links the plugin into its bin directory; the script is beside the plugin in the store.
	target, err := filepath.EvalSymlinks(filepath.Join(root, "bin", bin))
	if err != nil {
		return err
	}
	out, err = run(tmp, nil, filepath.Join(filepath.Dir(target), script), "")
	// Cobra's answer: a line per word (with its description), then the directive; on stderr, which
	// run keeps too, its note of the directive.
	lines := strings.Split(out, "\n")
	if err != nil || !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "audit\t") }) || !slices.Contains(lines, ":4") {
		return fmt.Errorf("the completion script krew installed: %w\n%s", errOr(err, "no subcommands in its answer"), out)
	}
	fmt.Printf("krew added index %s, installed %s/%s from it, and the plugin and its completion script answer\n", indexName, indexName, pluginName)
	return nil
}

// errOr is err, or an error saying why when there is none.
func errOr(err error, why string) error {
	if err != nil {
		return err
	}
	return errors.New(why)
}

// run runs name with args in dir, with env added to the process's, and returns its output.
func run(dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}
