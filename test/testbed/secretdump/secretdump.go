package secretdump

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Namespace, Kind and Name are the workload the dump is about.
const (
	Namespace = "fixture-ready-then-fails"
	Kind      = "Deployment"
	Name      = "telemetry-ingester"
)

// The credentials the dump holds. PasswordRev1 is the failing revision's predecessor's.
const (
	PasswordRev1 = "pg-Secret-rev1-4h7"
	PasswordRev2 = "pg-Secret-rev2-9k2"
	URLPassword  = "pgUrlPass-42z"
	APIKey       = "otlp-key-7781-q"
	AdminToken   = "adm-Tok-99x-3e1"
	BearerToken  = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJpbmdlc3QifQ.c2lnbmF0dXJlMTIz"
)

// Secrets lists every credential of the dump.
var Secrets = []string{PasswordRev1, PasswordRev2, URLPassword, APIKey, AdminToken, BearerToken}

// The rev2 ReplicaSet and the revision before it.
const (
	rsRev1 = "telemetry-ingester-796cb9f56b"
	rsRev2 = "telemetry-ingester-c575c6b7c"
)

// Write writes the dump into dir (which must exist) and returns the path to pass to --dump.
func Write(dir string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the fixture")
	}
	src := filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "fixtures", "ready-then-fails", "dump")
	if err := copyDir(src, dir); err != nil {
		return "", err
	}
	ns := filepath.Join(dir, Namespace)
	env := func(password string) []any {
		return []any{
			map[string]any{"name": "DB_PASSWORD", "value": password},
			map[string]any{"name": "DATABASE_URL", "value": "postgres://ingest:" + URLPassword + "@db.internal:5432/telemetry"},
			map[string]any{"name": "OTLP_API_KEY", "value": APIKey},
		}
	}
	args := []any{"--admin-token", AdminToken, "--listen=:4317"}
	edit := func(file string, rev func(item map[string]any) string, spec func(item map[string]any) map[string]any) error {
		return editJSON(filepath.Join(ns, file), func(items []any) error {
			for _, it := range items {
				item := it.(map[string]any)
				password := PasswordRev2
				if rev(item) == rsRev1 {
					password = PasswordRev1
				}
				cs := spec(item)["containers"].([]any)
				c := cs[0].(map[string]any)
				c["env"] = append(c["env"].([]any), env(password)...)
				c["args"] = args
			}
			return nil
		})
	}
	template := func(item map[string]any) map[string]any {
		return item["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	}
	name := func(item map[string]any) string { return item["metadata"].(map[string]any)["name"].(string) }
	owner := func(item map[string]any) string {
		refs, _ := item["metadata"].(map[string]any)["ownerReferences"].([]any)
		if len(refs) == 0 {
			return ""
		}
		return refs[0].(map[string]any)["name"].(string)
	}
	if err := edit("deployments.json", name, template); err != nil {
		return "", err
	}
	if err := edit("replicasets.json", name, template); err != nil {
		return "", err
	}
	if err := edit("pods.json", owner, func(item map[string]any) map[string]any { return item["spec"].(map[string]any) }); err != nil {
		return "", err
	}
	logs, err := filepath.Glob(filepath.Join(ns, rsRev2+"-*", "logs.txt"))
	if err != nil {
		return "", fmt.Errorf("the fixture's logs: %w", err)
	}
	if len(logs) == 0 {
		return "", fmt.Errorf("the fixture has no logs of %s", rsRev2)
	}
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			return "", err
		}
		// The app logs the header it dials with, as a client with debug logging does, and the
		// password its database refuses.
		s := strings.ReplaceAll(string(data), `"error":"dial tcp`, `"authorization":"Bearer `+BearerToken+`","error":"dial tcp`)
		s = strings.Replace(s, `"msg":"upstream dial failed, will retry"`,
			`"msg":"upstream dial failed, will retry","db":"password=`+PasswordRev2+` rejected by postgres://ingest:`+URLPassword+`@db.internal:5432"`, 1)
		if err := os.WriteFile(l, []byte(s), 0o600); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func editJSON(path string, edit func(items []any) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var list map[string]any
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	items, _ := list["items"].([]any)
	if err := edit(items); err != nil {
		return err
	}
	out, err := json.MarshalIndent(list, "", "    ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o600)
	})
}
