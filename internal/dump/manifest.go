package dump

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// manifestFile is the record of a dump Write made: written first as unfinished, and last with
// every file and its size. Its name is hidden, so a read of the directory does not take it for
// a file of objects; a read checks the dump against it.
const manifestFile = ".kubectl-diagnose-dump.json"

// manifest is what manifestFile holds.
type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Complete is false while Write runs: a dump whose manifest stays so was cut short.
	Complete bool            `json:"complete"`
	Files    []manifestEntry `json:"files"`
}

// manifestEntry is one file of the dump, by its slash-separated path in the dump's directory.
type manifestEntry struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

func newManifest(complete bool, files []manifestEntry) manifest {
	if files == nil {
		files = []manifestEntry{}
	}
	return manifest{APIVersion: "kubediagnose.dev/v1alpha1", Kind: "DumpManifest", Complete: complete, Files: files}
}

// maxManifest bounds the manifest a read accepts: a dump of a 200,000 files lists them in
// about 15 MB.
const maxManifest = 64 << 20

// checkManifest compares the dump Write made in root with its manifest: a dump cut short, a
// file it lists that is missing or of another size, and files it does not list are noted.
// walked holds the files the read will open, by path; skipped are directories it leaves out
// (namespaces not asked for), whose files are not checked.
func checkManifest(root string, walked map[string]bool, skipped map[string]bool) []snapshot.Visibility {
	p := filepath.Join(root, manifestFile)
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	if info.Size() > maxManifest {
		return []snapshot.Visibility{{Reason: fmt.Sprintf("the manifest %q is larger than %s; the dump was read without checking it", p, mib(maxManifest))}}
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return []snapshot.Visibility{{Reason: fmt.Sprintf("cannot read the manifest of the dump: %v", err)}}
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil || m.Kind != "DumpManifest" {
		return []snapshot.Visibility{{Reason: fmt.Sprintf("%q is not a dump manifest; the dump was read without checking it", p)}}
	}
	if !m.Complete {
		return []snapshot.Visibility{{Reason: fmt.Sprintf(
			"the dump in %q was cut short: its writer stopped before it finished, so objects and logs may be missing", root)}}
	}
	var out []snapshot.Visibility
	listed := make(map[string]bool, len(m.Files))
	var short []string
	for _, f := range m.Files {
		name := filepath.Join(root, filepath.FromSlash(f.Name))
		listed[name] = true
		if !filepath.IsLocal(filepath.FromSlash(f.Name)) || skippedIn(name, skipped) {
			continue
		}
		info, err := os.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, missingFile(f.Name, fmt.Sprintf("%q is missing from the dump (its manifest lists it)", name)))
		case err != nil:
			out = append(out, missingFile(f.Name, fmt.Sprintf("%q: %v", name, err)))
		case !info.Mode().IsRegular():
			out = append(out, missingFile(f.Name, fmt.Sprintf("%q is no longer a regular file (its manifest lists one)", name)))
		case info.Size() != f.Bytes:
			short = append(short, fmt.Sprintf("%q is %d bytes, written as %d", name, info.Size(), f.Bytes))
		}
	}
	if len(short) > 0 {
		out = append(out, snapshot.Visibility{Reason: fmt.Sprintf(
			"%d files of the dump changed size since it was written (%s): cut short or edited, they may hold less than was dumped", len(short), short[0])})
	}
	var extra []string
	for name := range walked {
		if !listed[name] && strings.HasPrefix(name, root+string(filepath.Separator)) {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		out = append(out, snapshot.Visibility{Reason: fmt.Sprintf(
			"%d files in the dump's directory are not part of it (%q first): they are read too, though its manifest does not list them", len(extra), extra[0])})
	}
	return out
}

func skippedIn(name string, skipped map[string]bool) bool {
	for dir := range skipped {
		if strings.HasPrefix(name, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// missingFile is the note on a file of the dump that is not there to read: as visibility of its
// kind in its namespace where the name says which, so that the engine does not read the gap
// as objects that do not exist.
func missingFile(name, reason string) snapshot.Visibility {
	parts := strings.Split(name, "/")
	switch {
	case len(parts) == 3 && parts[2] == "logs.txt":
		return snapshot.Visibility{Kind: "pods/log", Namespace: parts[0], Reason: reason}
	case len(parts) == 2 || len(parts) == 1:
		for i := range snapshot.Kinds {
			k := &snapshot.Kinds[i]
			if k.File == parts[len(parts)-1] && k.Cluster == (len(parts) == 1) {
				ns := ""
				if len(parts) == 2 {
					ns = parts[0]
				}
				return snapshot.Visibility{Kind: k.Kind, Namespace: ns, Reason: reason}
			}
		}
	}
	return snapshot.Visibility{Reason: reason}
}
