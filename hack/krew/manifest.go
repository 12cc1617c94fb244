package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The krew manifest schema (krew.googlecontainertools.github.com/v1alpha2 Plugin), as
// sigs.k8s.io/krew/pkg/index declares it; decoding is strict, so a misspelt key fails.
type plugin struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       pluginSpec        `json:"spec"`
}

type pluginSpec struct {
	Version          string     `json:"version,omitempty"`
	ShortDescription string     `json:"shortDescription,omitempty"`
	Description      string     `json:"description,omitempty"`
	Caveats          string     `json:"caveats,omitempty"`
	Homepage         string     `json:"homepage,omitempty"`
	Platforms        []platform `json:"platforms,omitempty"`
}

type platform struct {
	URI      string                `json:"uri,omitempty"`
	Sha256   string                `json:"sha256,omitempty"`
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	Files    []fileOperation       `json:"files"`
	Bin      string                `json:"bin"`
}

type fileOperation struct {
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// artifact is the part of goreleaser's dist/artifacts.json entry the manifest needs.
type artifact struct {
	Name   string `json:"name"`
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
	Type   string `json:"type"`
	Extra  struct {
		Checksum string `json:"Checksum"`
	} `json:"extra"`
}

// pluginName is the name `kubectl krew install` takes and the plugin's command word. krew-index
// refuses so generic a name (it keeps such names for plugins on their way into kubectl), so the
// plugin is published in an index of its own, indexName at indexURL, where it keeps the name
// its users type: `kubectl krew install kubediagnose/diagnose`, then `kubectl diagnose`.
const pluginName = "diagnose"

// The custom index: what `kubectl krew index add` takes. The release writes its tree
// (plugins/diagnose.yaml) into dist/krew-index, to be committed there.
const (
	indexName = "kubediagnose"
	indexURL  = "https://github.com/kubediagnose/krew-index.git"
)

// completionScript is kubectl's completion of the plugin, beside it in every archive
// (.goreleaser.yaml): a shell script, a .cmd on Windows.
const completionScript = "kubectl_complete-diagnose"

const (
	shortDescription = "Say why a workload serves nothing"
	description      = `kubectl diagnose classifies every workload by what its copies actually do
(never-starts, starts-and-dies, live-but-idle, progressing, healthy), names the
spec field most likely responsible, and whether the fault is in the spec or in
something it depends on. It only reads: get, list and watch.`
	caveats = `Shell completion of "kubectl diagnose" (kubectl 1.26 or later) needs
kubectl_complete-diagnose on PATH; krew installs it beside the plugin but links
only the plugin. Link it too:
  ln -s "$(dirname "$(readlink ~/.krew/bin/kubectl-diagnose)")/kubectl_complete-diagnose" ~/.krew/bin/`
	homepage = "https://github.com/kubediagnose/kubectl-diagnose"
)

// archiveFiles are the files of a platform's archive, as the manifest installs them and the
// release check expects them, exactly: the one binary, the completion script, the license and
// the README.
func archiveFiles(goos string) (bin, script string, all []string) {
	bin, script = "kubectl-diagnose", completionScript
	if goos == "windows" {
		bin, script = bin+".exe", script+".cmd"
	}
	return bin, script, []string{bin, script, "LICENSE", "README.md"}
}

// render builds the manifest of version (e.g. v0.1.0) from goreleaser's artifacts: one
// platform per archive, its sha256 the one goreleaser computed, downloaded from urlBase.
func render(artifactsJSON []byte, version, urlBase string) ([]byte, error) {
	var arts []artifact
	if err := json.Unmarshal(artifactsJSON, &arts); err != nil {
		return nil, fmt.Errorf("read artifacts: %w", err)
	}
	p := plugin{
		APIVersion: "krew.googlecontainertools.github.com/v1alpha2",
		Kind:       "Plugin",
		Metadata:   metav1.ObjectMeta{Name: pluginName},
		Spec: pluginSpec{
			Version: version, ShortDescription: shortDescription, Description: description,
			Caveats: caveats, Homepage: homepage,
		},
	}
	for _, a := range arts {
		if a.Type != "Archive" {
			continue
		}
		bin, _, files := archiveFiles(a.Goos)
		pl := platform{
			URI:    strings.TrimSuffix(urlBase, "/") + "/" + a.Name,
			Sha256: strings.TrimPrefix(a.Extra.Checksum, "sha256:"),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{
				"os": a.Goos, "arch": a.Goarch,
			}},
			Bin: bin,
		}
		for _, f := range files {
			pl.Files = append(pl.Files, fileOperation{From: f, To: "."})
		}
		p.Spec.Platforms = append(p.Spec.Platforms, pl)
	}
	sort.Slice(p.Spec.Platforms, func(i, j int) bool { return p.Spec.Platforms[i].URI < p.Spec.Platforms[j].URI })
	if len(p.Spec.Platforms) == 0 {
		return nil, errors.New("no archives among the artifacts; run goreleaser release --snapshot first")
	}
	out, err := yaml.Marshal(p)
	if err != nil {
		return nil, err
	}
	return out, validate(out)
}

var (
	// The patterns of krew's internal/index/validation.
	safePluginName = regexp.MustCompile(`^[\w-]+$`)
	validSHA256    = regexp.MustCompile(`^[a-f0-9]{64}$`)
	semver         = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	selectorKeys   = map[string]bool{"os": true, "arch": true}
)

// validate checks a manifest as krew's index validation does (sigs.k8s.io/krew
// internal/index/validation, not importable), plus the index's rule that a short description
// stays under 50 characters, and that each platform's bin is one of the files it installs.
func validate(manifest []byte) error {
	var p plugin
	if err := yaml.UnmarshalStrict(manifest, &p); err != nil {
		return fmt.Errorf("krew manifest: %w", err)
	}
	switch {
	case p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2":
		return fmt.Errorf("krew manifest: apiVersion %q is not krew.googlecontainertools.github.com/v1alpha2", p.APIVersion)
	case p.Kind != "Plugin":
		return fmt.Errorf("krew manifest: kind %q is not Plugin", p.Kind)
	case !safePluginName.MatchString(p.Metadata.Name):
		return fmt.Errorf("krew manifest: plugin name %q must match %s", p.Metadata.Name, safePluginName)
	case p.Spec.ShortDescription == "":
		return errors.New("krew manifest: no shortDescription")
	case len(p.Spec.ShortDescription) >= 50:
		return fmt.Errorf("krew manifest: shortDescription %q is %d characters; keep it under 50", p.Spec.ShortDescription, len(p.Spec.ShortDescription))
	case strings.ContainsAny(p.Spec.ShortDescription, "\r\n"):
		return errors.New("krew manifest: line break in shortDescription")
	case !semver.MatchString(p.Spec.Version):
		return fmt.Errorf("krew manifest: version %q is not a semantic version with a leading v", p.Spec.Version)
	case len(p.Spec.Platforms) == 0:
		return errors.New("krew manifest: no platforms")
	}
	seen := map[string]bool{}
	for i, pl := range p.Spec.Platforms {
		if err := validatePlatform(pl); err != nil {
			return fmt.Errorf("krew manifest: platform %d: %w", i, err)
		}
		key := fmt.Sprint(pl.Selector.MatchLabels)
		if seen[key] {
			return fmt.Errorf("krew manifest: platform %d: selector %v repeats an earlier one", i, pl.Selector.MatchLabels)
		}
		seen[key] = true
	}
	return nil
}

func validatePlatform(p platform) error {
	switch {
	case p.URI == "":
		return errors.New("uri has to be set")
	case !validSHA256.MatchString(p.Sha256):
		return fmt.Errorf("sha256 %q is not 64 lower-case hex digits", p.Sha256)
	case p.Bin == "":
		return errors.New("bin has to be set")
	case p.Selector == nil || (len(p.Selector.MatchLabels) == 0 && len(p.Selector.MatchExpressions) == 0):
		return errors.New("selector has to be set and not empty")
	case p.Files != nil && len(p.Files) == 0:
		return errors.New("files has to be unspecified or non-empty")
	}
	if _, err := metav1.LabelSelectorAsSelector(p.Selector); err != nil {
		return fmt.Errorf("selector: %w", err)
	}
	for k := range p.Selector.MatchLabels {
		if !selectorKeys[k] {
			return fmt.Errorf("selector key %q not supported; use os and arch", k)
		}
	}
	installed := false
	for _, f := range p.Files {
		if f.From == "" || f.To == "" {
			return errors.New("files: from and to have to be set")
		}
		// krew moves files by glob; a bin under a glob is installed too.
		installed = installed || f.From == p.Bin || strings.Contains(f.From, "*")
	}
	if p.Files != nil && !installed {
		return fmt.Errorf("bin %q is not among the files installed", p.Bin)
	}
	return nil
}
