// Command krew writes the krew manifest (plugins/diagnose.yaml in a krew index) of a release
// from the archives goreleaser built: their platforms and sha256 come from dist/artifacts.json,
// and the result is validated against krew's manifest rules before it is written.
//
//	go run ./hack/krew -dist dist > dist/krew/diagnose.yaml
//	go run ./hack/krew -validate dist/krew/diagnose.yaml
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
	check := flag.String("validate", "", "validate this manifest instead of writing one")
	flag.Parse()
	if err := run(*dist, *version, *url, *check); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(dist, version, url, check string) error {
	if check != "" {
		b, err := os.ReadFile(check)
		if err != nil {
			return err
		}
		return validate(b)
	}
	if version == "" {
		b, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
		if err != nil {
			return fmt.Errorf("read goreleaser metadata (or pass -version): %w", err)
		}
		var meta struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			return fmt.Errorf("read goreleaser metadata: %w", err)
		}
		if meta.Version == "" {
			return fmt.Errorf("no version in %s; pass -version", filepath.Join(dist, "metadata.json"))
		}
		version = "v" + meta.Version
	}
	if url == "" {
		url = releases + version
	}
	arts, err := os.ReadFile(filepath.Join(dist, "artifacts.json"))
	if err != nil {
		return fmt.Errorf("read goreleaser artifacts: %w", err)
	}
	out, err := render(arts, version, url)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
