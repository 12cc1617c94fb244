// Command krew writes the custom krew index of a release (plugins/diagnose.yaml, the tree of
// indexURL) from the archives goreleaser built, and checks a release build with the real krew.
// The manifest's platforms and sha256 come from dist/artifacts.json, and it is validated against
// krew's manifest rules before it is written.
//
//	go run ./hack/krew -dist dist -index dist/krew-index
//	go run ./hack/krew -validate dist/krew-index/plugins/diagnose.yaml
//	go run ./hack/krew -dist dist -check -krew "$(command -v krew)"
//
// -check is the release check of one archive (hack/release-check.sh): the archive of this
// machine's platform holds exactly the binary, the completion script, LICENSE and README.md,
// and krew adds an index of its manifest (archives served from a loopback server), installs the
// plugin from it, and the installed plugin and completion script answer.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// releases is where the release archives are downloaded from, by tag.
const releases = "https://github.com/kubediagnose/kubectl-diagnose/releases/download/"

func main() {
	dist := flag.String("dist", "dist", "goreleaser's output directory")
	version := flag.String("version", "", "the release tag, e.g. v0.1.0; default: v and the version in dist/metadata.json")
	url := flag.String("url", "", "where the archives are downloaded from; default: the release of the tag")
	index := flag.String("index", "", "write the index tree (plugins/diagnose.yaml) into this directory; default: the manifest to stdout")
	check := flag.String("validate", "", "validate this manifest instead of writing one")
	release := flag.Bool("check", false, "check this machine's archive in dist and install it with krew from an index of its manifest")
	krew := flag.String("krew", "krew", "the krew executable -check runs")
	flag.Parse()
	var err error
	switch {
	case *check != "":
		err = validateFile(*check)
	case *release:
		err = checkRelease(*dist, *krew)
	default:
		err = write(*dist, *version, *url, *index)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func validateFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return validate(b)
}

// write renders the manifest of the archives in dist and writes it to stdout, or as the index
// tree under index.
func write(dist, version, url, index string) error {
	out, err := renderDist(dist, version, url)
	if err != nil {
		return err
	}
	if index == "" {
		_, err = os.Stdout.Write(out)
		return err
	}
	return writeIndex(index, out)
}

// renderDist renders the manifest of the archives in dist, of version (default: the snapshot's or
// tag's in dist/metadata.json), downloaded from url (default: the release of the tag).
func renderDist(dist, version, url string) ([]byte, error) {
	if version == "" {
		b, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
		if err != nil {
			return nil, fmt.Errorf("read goreleaser metadata (or pass -version): %w", err)
		}
		var meta struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			return nil, fmt.Errorf("read goreleaser metadata: %w", err)
		}
		if meta.Version == "" {
			return nil, fmt.Errorf("no version in %s; pass -version", filepath.Join(dist, "metadata.json"))
		}
		version = "v" + meta.Version
	}
	if url == "" {
		url = releases + version
	}
	arts, err := os.ReadFile(filepath.Join(dist, "artifacts.json"))
	if err != nil {
		return nil, fmt.Errorf("read goreleaser artifacts: %w", err)
	}
	return render(arts, version, url)
}

// writeIndex writes a manifest as the tree of a krew index: plugins/NAME.yaml.
func writeIndex(dir string, manifest []byte) error {
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(plugins, pluginName+".yaml"), manifest, 0o644)
}
