// Command krew writes the krew manifest (plugins/diagnose.yaml in a krew index) of a release
// from the archives goreleaser built: their platforms and sha256 come from dist/artifacts.json,
// and the result is validated against krew's manifest rules before it is written.
//
//	go run ./hack/krew -dist dist -version v0.1.0 -url https://.../releases/download/v0.1.0 > dist/krew/diagnose.yaml
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dist := flag.String("dist", "dist", "goreleaser's output directory")
	version := flag.String("version", "", "the release tag, e.g. v0.1.0")
	url := flag.String("url", "", "where the archives are downloaded from")
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
	if version == "" || url == "" {
		return fmt.Errorf("-version and -url are required")
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
