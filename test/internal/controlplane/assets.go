package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Versions of the components hack/e2e-assets.sh builds; the default asset directory is named
// after them.
const (
	KubernetesVersion = "v1.37.2"
	EtcdVersion       = "v3.6.16"
)

// AssetsEnv names the environment variable that points at the asset directory.
const AssetsEnv = "KUBEDIAGNOSE_ASSETS"

// assetBinaries are the executables a control plane needs (kubectl is built alongside, for tests
// that apply manifests).
var assetBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"}

// DefaultAssetsDir is where hack/e2e-assets.sh puts the binaries unless KUBEDIAGNOSE_ASSETS is set.
func DefaultAssetsDir() (string, error) {
	if dir := os.Getenv(AssetsEnv); dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the user cache dir: %w; set %s", err, AssetsEnv)
	}
	return filepath.Join(cache, "kubectl-diagnose", "e2e-assets",
		"k8s-"+KubernetesVersion+"-etcd-"+EtcdVersion), nil
}

// checkAssets returns an error naming the command to run when a binary is missing.
func checkAssets(dir string) error {
	var missing []string
	for _, b := range assetBinaries {
		info, err := os.Stat(filepath.Join(dir, b))
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("e2e assets missing in %s (%s); run `make e2e-assets` (or set %s to a directory holding them)",
			dir, strings.Join(missing, ", "), AssetsEnv)
	}
	return nil
}
